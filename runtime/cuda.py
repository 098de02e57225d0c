"""The CUDA runtime: load a program lowered by gpu-pipeline on an NVIDIA GPU, bind device
memory once, execute.

    exe = CudaExecutable(lowered)                # PTX, load, allocate device arenas once
    outs = exe(x, w)                             # copy in, launch every kernel, copy out

(`strata.compile(module, target="cuda")` lowers the module and builds one: targets/cuda.py.)

Compilation: gpu-pipeline (… lower-graph-to-tile, token-dce, lower-tile-to-gpu,
plan-memory, verify-memory-plan), then the NVVM translation → PTX for the current device's
architecture (sm_90 on H100/H200; sm_80-class cards take sm_80), loaded with Numba
(`current_context().create_module_ptx`).

Binding allocates one device array per arena of the memory plan and one per input, and
writes constants (the params arena) once. A call copies the numpy inputs to the device,
launches each kernel with grid = the tile grid (one block per tile; a `gpu.persistent`
matmul gets as many blocks as the device holds at once, each looping over tiles) and the
kernel's block size (gpu.block_size: 256 threads, 128 for mma kernels), and copies the results back
(synchronous, on the default stream).
`launch()` runs only the kernels, on the inputs already on the device (benchmarks). With
cuda-bindings, a program of several kernels is captured into a CUDA graph at its first
launch and replayed after (one driver call per call instead of one per kernel; the graph is
captured again when an input's device pointer changes; `STRATA_CUDA_GRAPHS=0` turns it off).

Inputs may also be device arrays: any object with `__cuda_array_interface__` (torch CUDA
tensors, CuPy, Numba device arrays) or DLPack on a CUDA device (JAX, ...; through
cuda-core's StridedMemoryView), C-contiguous, of the argument's shape and dtype, is read
in place (zero copy: its pointer goes into the launch arguments) when it is 16-byte aligned,
else copied into the input's buffer on the device first. `run_on_device`
returns the results as Numba device arrays (views of the arenas, valid until the next call).

Kernels with range checks (embedding ids, cross-entropy labels) write 1 into the
executable's status word on failure; after the kernels finish, a set status raises
ExecutionError with the checked kernels' messages (and is cleared, so the executable stays
usable).

Launching: Numba's `driver.launch_kernel` where it exists (numba's bundled CUDA target),
else `cuda.bindings.driver.cuLaunchKernel` on the function handle (numba-cuda), else
`cuda.core.launch`: the first of them the installed Numba / CUDA Python packages provide.

Without a usable GPU/driver the constructor raises a StrataError
(`numba.cuda.is_available()` is False).
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import threading
import weakref
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from strata.dialects import tile
from strata.lowering.tile_builder import contiguous_strides
from strata.support.errors import ExecutionError, InputError, StrataError, TargetUnavailableError
from strata.lowering.nvvm.translate import ARCHES, module_to_ptx
from strata.lowering.tile_to_gpu.kernel import gpu_kernels
from strata.lowering.tile_to_gpu.persistent_matmul import PERSISTENT
from strata.lowering.tile_to_gpu.tensor_maps import TENSOR_MAPS, maps_of
from strata.runtime.program import LoweredProgram, check_kernel_abi, planned_view
from strata.runtime.tensor_maps import TensorMapTable
from strata.support.dtypes import NUMPY_DTYPES, tensor_dtype

_MODULES: dict[tuple[int, str], object] = {}
"""Loaded CUDA modules by (context handle, PTX hash)."""
_MODULES_LOCK = threading.Lock()


def copied_as(dtype: np.dtype) -> np.dtype:
    """The dtype device memory holds and is copied as: bf16 as its uint16 bits, since
    Numba's host/device copies go through the buffer protocol, which has no bf16."""
    return np.dtype(np.uint16) if dtype == NUMPY_DTYPES["bf16"] else np.dtype(dtype)


def cuda_available() -> bool:
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


def require_cuda():
    """numba.cuda, or a StrataError saying why the GPU cannot be used."""
    try:
        from numba import cuda
    except Exception as e:
        raise StrataError(f"target 'cuda' needs numba with CUDA support (pip install -e '.[cuda]'): {e}") from None
    if not cuda.is_available():
        raise TargetUnavailableError(
            "target 'cuda' is not available yet on this machine: no usable NVIDIA GPU or driver "
            "(numba.cuda.is_available() is False); use target='cpu', or strata-translate --emit=ptx "
            "to see the kernels"
        )
    return cuda


def device_arch(cuda) -> str:
    major, minor = cuda.get_current_device().compute_capability
    arch = f"sm_{major}{minor}"
    if arch in ARCHES:
        return arch
    if (major, minor) > (9, 0):
        return "sm_90"  # PTX for compute_90 is JIT-compiled forward by the driver
    raise StrataError(f"target 'cuda': compute capability {major}.{minor} is older than sm_80")


def warpgroup_mma_available(cuda) -> bool:
    """Whether the device runs sm_90a PTX (the warpgroup mma): compute capability 9.0
    exactly, since architecture-specific PTX does not carry forward to newer cards."""
    return tuple(cuda.get_current_device().compute_capability) == (9, 0)


DLPACK_CUDA_DEVICES = (2, 13)
"""DLPack device types whose memory kernels can read: kDLCUDA, kDLCUDAManaged."""


def is_device_array(value: object) -> bool:
    """A CUDA device array: `__cuda_array_interface__`, or DLPack on a CUDA device."""
    if hasattr(value, "__cuda_array_interface__"):
        return True
    device = getattr(value, "__dlpack_device__", None)
    return device is not None and device()[0] in DLPACK_CUDA_DEVICES


STATIC_SHARED_BYTES = 48 * 1024
"""Shared memory a block may use without opting in."""
DEVICE_ALIGNMENT = 16
"""Device-array inputs at an address not a multiple of this are copied into the bound
input buffer: tensor-core kernels read 16-byte chunks (cp.async)."""


def same_dtype(given: np.dtype, expected: np.dtype) -> bool:
    """Whether a device array of `given` dtype holds `expected` elements. A bf16 argument
    takes torch's bf16 CUDA tensors (2-byte void, '<V2', in __cuda_array_interface__) and
    uint16 device arrays of the bits (Numba has no bf16; the runtime copies bf16 so too)."""
    if expected == np.dtype(ml_dtypes.bfloat16):
        return (given.kind == "V" and given.itemsize == 2) or given == np.dtype(np.uint16) or given == expected
    return given == expected


@dataclass
class DeviceInput:
    """What the runtime needs of a device array: its `__cuda_array_interface__` (made from
    DLPack through cuda-core where it has none), read once."""

    interface: dict
    owner: object
    """What keeps the memory alive (the array, or its DLPack view)."""

    @staticmethod
    def of(value: object) -> DeviceInput:
        if hasattr(value, "__cuda_array_interface__"):
            return DeviceInput(value.__cuda_array_interface__, value)
        view = strided_memory_view(value)
        interface = {"shape": tuple(view.shape), "typestr": np.dtype(view.dtype).str, "data": (int(view.ptr), False),
                     "strides": None if view.strides is None else tuple(s * np.dtype(view.dtype).itemsize for s in view.strides),
                     "version": 3}  # fmt: skip
        return DeviceInput(interface, view)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.interface["shape"])

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.interface["typestr"])

    @property
    def pointer(self) -> int:
        return int(self.interface["data"][0])

    @property
    def strides(self) -> tuple[int, ...] | None:
        """In elements (the interface gives bytes), None when C-contiguous."""
        strides = self.interface.get("strides")
        return None if strides is None else tuple(s // self.dtype.itemsize for s in strides)


def strided_memory_view(value: object):
    """cuda.core's view of a DLPack array (no stream ordering: the default stream is used)."""
    try:
        from cuda.core.utils import StridedMemoryView
    except ImportError:
        try:
            from cuda.core.experimental.utils import StridedMemoryView
        except ImportError:
            raise InputError("DLPack inputs need cuda-core (pip install cuda-core)") from None
    return StridedMemoryView(value, stream_ptr=-1)


class _Launcher:
    """Launches a kernel of a Numba-loaded module with raw pointer arguments. The launch
    API is picked once; each launch's argument list is built once, at bind (`arguments`)."""

    def __init__(self):
        from numba.cuda.cudadrv import driver

        self.numba_launch = getattr(driver, "launch_kernel", None)
        self.cu = None
        if self.numba_launch is None:
            try:
                from cuda.bindings import driver as cu
            except ImportError:
                cu = None
            self.cu = cu

    def arguments(self, pointers: list[int], begin: int, end: int, status: int | None = None):
        values = [*pointers, begin, end]
        types = [ctypes.c_void_p] * len(pointers) + [ctypes.c_int64, ctypes.c_int64]
        if status is not None:
            values.append(status)
            types.append(ctypes.c_void_p)
        if self.numba_launch is not None:
            return [t(v) for t, v in zip(types, values)]
        if self.cu is not None:
            return (tuple(values), tuple(types))
        return [np.uint64(v) if t is ctypes.c_void_p else np.int64(v) for t, v in zip(types, values)]  # pragma: no cover

    def allow_shared(self, function, size: int) -> None:
        """Lets `function` launch with `size` bytes of dynamic shared memory (past 48 KiB a
        kernel must opt in)."""
        if self.numba_launch is not None:
            from numba.cuda.cudadrv import driver, enums

            driver.driver.cuFuncSetAttribute(function.handle, enums.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, size)
            return
        if self.cu is not None:
            cu = self.cu
            attribute = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

            def set_on_kernel():
                """numba-cuda loads modules as libraries: the handle is a CUkernel, set per device."""
                err, device = cu.cuCtxGetDevice()
                if err != cu.CUresult.CUDA_SUCCESS:
                    return err
                return cu.cuKernelSetAttribute(attribute, size, cu.CUkernel(int(function.handle)), device)[0]

            # A CUkernel by its type is set as one directly: a failed driver call is an
            # error to compute-sanitizer even when it is only a probe.
            if isinstance(function.handle, getattr(cu, "CUkernel", ())):
                err = set_on_kernel()
            else:
                (err,) = cu.cuFuncSetAttribute(function.handle, attribute, size)
                if err == cu.CUresult.CUDA_ERROR_INVALID_HANDLE:
                    err = set_on_kernel()
            if err != cu.CUresult.CUDA_SUCCESS:
                raise StrataError(f"cuFuncSetAttribute (dynamic shared memory {size} bytes) failed: {err}")
            return
        raise StrataError("kernels with more than 48 KiB of shared memory need cuda-bindings or numba's launch_kernel")  # pragma: no cover

    def capture(self, launches) -> object | None:
        """`launches` ((function, grid, block, shared, arguments) each) captured once into an
        instantiated CUDA graph, replayed by `replay` with one driver call; None where the
        driver API (cuda-bindings) is not there or capture fails (launch one by one)."""
        cu = self.cu
        if cu is None or not launches:
            return None
        success = cu.CUresult.CUDA_SUCCESS
        err, stream = cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING)
        if err != success:
            return None
        try:
            (err,) = cu.cuStreamBeginCapture(stream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            if err != success:
                return None
            for function, grid, block, shared, arguments in launches:
                (err,) = cu.cuLaunchKernel(function.handle, grid, 1, 1, block, 1, 1, shared, stream, arguments, 0)
                if err != success:
                    break
            end, graph = cu.cuStreamEndCapture(stream)
            if end != success:
                return None
            if err == success:
                err, executable = cu.cuGraphInstantiate(graph, 0)
            cu.cuGraphDestroy(graph)
            return executable if err == success else None
        finally:
            cu.cuStreamDestroy(stream)

    def replay(self, graph) -> None:
        (err,) = self.cu.cuGraphLaunch(graph, 0)
        if err != self.cu.CUresult.CUDA_SUCCESS:
            raise StrataError(f"cuGraphLaunch failed: {err}")

    def release(self, graph) -> None:
        self.cu.cuGraphExecDestroy(graph)

    def __call__(self, function, grid: int, block: int, shared: int, arguments) -> None:
        if self.numba_launch is not None:
            self.numba_launch(function.handle, grid, 1, 1, block, 1, 1, shared, 0, arguments)
            return
        if self.cu is not None:
            (err,) = self.cu.cuLaunchKernel(function.handle, grid, 1, 1, block, 1, 1, shared, 0, arguments, 0)
            if err != self.cu.CUresult.CUDA_SUCCESS:
                raise StrataError(f"cuLaunchKernel failed: {err}")
            return
        from cuda.core.experimental import LaunchConfig, Stream, launch  # pragma: no cover

        launch(Stream.from_handle(0), LaunchConfig(grid=grid, block=block, shmem_size=shared), function.kernel, *arguments)


class CudaExecutable:
    """A program lowered for the GPU; device memory is bound once at construction."""

    def __init__(self, lowered: LoweredProgram):
        cuda = require_cuda()
        self.cuda = cuda
        self.lowered = lowered
        self.signature, self.module, self.plan = self.lowered.signature, self.lowered.module, self.lowered.plan
        self.arch = device_arch(cuda)
        kernels = {k.sym_name.data: k for k in gpu_kernels(self.module)}
        self.ptx = module_to_ptx(self.module, self.arch)[1]
        self.cuda_module = self._load(self.ptx) if self.ptx else None
        self.launcher = _Launcher()
        self.use_graphs = os.environ.get("STRATA_CUDA_GRAPHS", "1") != "0"
        self.graph = None
        self.lock = threading.Lock()
        """Held by a call from binding the inputs to copying the results out: the arenas,
        the input slots and the status word are the executable's, one call at a time."""
        self._bind(kernels)

    def _load(self, ptx: str):
        context = self.cuda.current_context()
        key = (id(context), hashlib.sha256(ptx.encode()).hexdigest())
        with _MODULES_LOCK:
            if key not in _MODULES:
                _MODULES[key] = context.create_module_ptx(ptx)
            return _MODULES[key]

    def _bind(self, kernels) -> None:
        cuda = self.cuda
        self.arenas = {
            name: cuda.device_array(size, dtype=np.uint8) for name, size in self.plan["arenas"].items() if size
        }
        inputs = self.lowered.inputs
        self.inputs = [
            cuda.device_array(max(1, math.prod(shape)), dtype=copied_as(dtype)) for shape, dtype in zip(inputs.shapes, inputs.dtypes)
        ]
        self.status = cuda.to_device(np.zeros(1, np.int32))
        self.checks: list[str] = []
        buffers, bound, self.results = self.lowered.bind(self._planned_view)
        self.storage = [*self.inputs, *buffers]
        self.result_dtypes = [tensor_dtype(t) for t in self.lowered.signature.function_type.outputs.data]
        launches = []
        self.tensor_map_tables: list[TensorMapTable] = []
        """The tables of the launches whose kernels copy through tensor maps."""
        for op, slots in bound:
            name = op.kernel.string_value()
            kernel = kernels[name]
            grid = math.prod(kernel.attributes["tile.grid"].get_values())
            threads = kernel.attributes["gpu.block_size"].value.data
            checked = "gpu.status" in kernel.attributes
            check_kernel_abi(kernel, len(slots), status=checked, result=False)
            if checked:
                self.checks.append(kernel.attributes["tile.error"].data)
            function = self.cuda_module.get_function(name)
            shared = kernel.attributes["gpu.dynamic_shared_bytes"].value.data if "gpu.dynamic_shared_bytes" in kernel.attributes else 0
            static = kernel.attributes["gpu.shared_bytes"].value.data
            if static + shared > STATIC_SHARED_BYTES:  # the default dynamic limit is 48 KiB less the static
                self.launcher.allow_shared(function, shared)
            blocks = min(grid, self.resident_blocks(function, threads, shared)) if PERSISTENT in kernel.attributes else grid
            launches.append((name, function, grid, blocks, threads, shared, slots, checked))
            if TENSOR_MAPS in kernel.attributes:
                self.tensor_map_tables.append(TensorMapTable(self.cuda_module, name, maps_of(kernel.attributes[TENSOR_MAPS]), slots))
        self.pointers = [a.device_ctypes_pointer.value or 0 for a in self.storage]
        self.input_pointers = self.pointers[: len(self.inputs)]
        self.bound_launches = launches
        self._build_arguments()

    def _build_arguments(self) -> None:
        status = self.status.device_ctypes_pointer.value
        self._drop_graph()
        for table in self.tensor_map_tables:
            table.update(self.cuda, self.pointers)
        self.launches = [
            (name, function, blocks, threads, shared,
             self.launcher.arguments([self.pointers[b] for b in buffers], 0, grid, status if checked else None))
            for name, function, grid, blocks, threads, shared, buffers, checked in self.bound_launches
        ]  # fmt: skip

    def resident_blocks(self, function, threads: int, shared: int) -> int:
        """How many blocks of `function` the device holds at once: a persistent kernel's
        launch (each block loops over tiles; a block that waited for a free multiprocessor
        would start its tiles a whole block's work late). One per multiprocessor where the
        driver's occupancy query is not there."""
        device = self.cuda.get_current_device()
        try:
            per_multiprocessor = int(self.cuda.current_context().get_active_blocks_per_multiprocessor(function, threads, shared))
        except Exception:  # noqa: BLE001 - a binding without the query: one block each is always resident
            per_multiprocessor = 1
        return max(1, per_multiprocessor) * device.MULTIPROCESSOR_COUNT

    def _planned_view(self, op: tile.BufferOp):
        view, init = planned_view(op, self.arenas, copied_as)
        if init is not None:
            view.copy_to_device(init)
        return view

    def set_inputs(self, *args: object) -> None:
        on_device = [is_device_array(a) for a in args]
        arrays = self.lowered.inputs.check(args, elsewhere=on_device)
        self.held_views = []  # device inputs of this call stay alive until the next
        pointers = list(self.pointers)
        for i, (arg, array) in enumerate(zip(args, arrays)):
            if not on_device[i]:
                pointers[i] = self.input_pointers[i]
                flat = np.ascontiguousarray(array).reshape(-1)
                if flat.size:
                    self.inputs[i].copy_to_device(flat.view(copied_as(flat.dtype)))
                continue
            device = self._device_input(i, arg)
            pointers[i] = device.pointer
            if i in self.results or device.pointer % DEVICE_ALIGNMENT:
                # The program returns this input as it is (its result is read from the bound
                # input buffer), or the array is not aligned for the kernels' 16-byte copies
                # (a view at an odd offset): it is copied there (device to device).
                source = self.cuda.from_cuda_array_interface(device.interface, owner=device.owner)
                if math.prod(device.shape):
                    self.inputs[i].copy_to_device(source.reshape(math.prod(device.shape)).view(copied_as(device.dtype)))
                pointers[i] = self.input_pointers[i]
        if pointers != self.pointers:
            self.pointers = pointers
            self._build_arguments()

    def _device_input(self, index: int, arg) -> DeviceInput:
        """A device-array argument, checked against the signature's argument `index`."""
        device = DeviceInput.of(arg)
        self.held_views.append(device.owner)
        specs = self.lowered.inputs
        # The stride of a size-1 axis is never used (torch views often leave any value there).
        contiguous = device.strides is None or all(
            size == 1 or stride == dense
            for size, stride, dense in zip(device.shape, device.strides, contiguous_strides(device.shape))
        )
        if device.shape != specs.shapes[index] or not same_dtype(device.dtype, specs.dtypes[index]) or not contiguous:
            raise InputError(
                f"@{specs.function} argument {index}: expected a C-contiguous device array of {specs.types[index]}, "
                f"got shape {device.shape}, dtype {device.dtype}{'' if contiguous else ', strided'}"
            )
        if device.dtype.kind == "V":  # bf16 from torch: copied as its bits, like every bf16
            device.interface = {**device.interface, "typestr": "<u2"}
        return device

    def launch(self) -> None:
        """Run every kernel on the inputs already on the device (no copies, no sync): the
        first launch with these pointers captures the kernels into a CUDA graph, later ones
        replay it with one driver call (STRATA_CUDA_GRAPHS=0: one launch per kernel)."""
        if self.graph is None and self.use_graphs and len(self.launches) > 1:
            # A failed capture is not tried again until the arguments change (False).
            self.graph = self.launcher.capture([launch[1:] for launch in self.launches]) or False
            if self.graph:
                self.graph_release = weakref.finalize(self, self.launcher.release, self.graph)
        if self.graph:
            self.launcher.replay(self.graph)
            return
        for _, function, grid, threads, shared, arguments in self.launches:
            self.launcher(function, grid, threads, shared, arguments)

    def _drop_graph(self) -> None:
        """The launch arguments change: a captured graph is stale."""
        release = getattr(self, "graph_release", None)
        if release is not None:
            release()
        self.graph, self.graph_release = None, None

    def check_status(self) -> None:
        """Synchronize; raise ExecutionError if a range check failed (and clear it)."""
        self.cuda.synchronize()
        if self.checks and self.status.copy_to_host()[0]:
            self.status.copy_to_device(np.zeros(1, np.int32))
            raise ExecutionError("; ".join(dict.fromkeys(self.checks)))

    def run_on_device(self, *args: object) -> tuple:
        """Run on inputs (numpy or device arrays); the results stay on the device (views
        of the arenas: a later call, from any thread, overwrites them)."""
        with self.lock:
            self.set_inputs(*args)
            self.launch()
            self.check_status()
            return tuple(
                self.storage[slot][: max(1, math.prod(shape))].reshape(shape).view(dtype)
                for slot, shape, dtype in zip(self.results, self.lowered.result_shapes, self.result_dtypes)
            )

    def get_results(self) -> tuple[np.ndarray, ...]:
        self.check_status()
        outputs = []
        for slot, shape, dtype in zip(self.results, self.lowered.result_shapes, self.result_dtypes):
            host = self.storage[slot].copy_to_host().view(dtype)
            outputs.append(host[: math.prod(shape)].reshape(shape))
        return tuple(outputs)

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]:
        with self.lock:  # safe to call from several threads (one call at a time)
            self.set_inputs(*args)
            self.launch()
            return self.get_results()

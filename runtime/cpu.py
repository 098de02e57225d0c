"""The CPU runtime: JIT-compile a program lowered by cpu-pipeline, bind once, execute.

    exe = CpuExecutable(lowered)                 # JIT, allocate every buffer once
    outs = exe(x, w)                             # launches kernels; allocates nothing

(`strata.compile(module, target="cpu")` lowers the module and builds one: targets/cpu.py.)

Binding allocates each arena of the memory plan (plan-memory) once, 64-byte aligned, and
views every `tile.buffer` at its planned offset. Executing walks the program's
launch list and calls each kernel's JIT-compiled function on buffer pointers. A launch
whose grid has several points and enough bytes runs on all cores: the runtime splits the
grid range [0, G) into one chunk per worker and calls the kernel from a thread pool
(ctypes releases the GIL during the call) — the runtime, not the generated code, owns
threads so kernels stay plain loops that LLVM vectorizes.

Inputs are used in place when already contiguous with the right dtype. Results are
returned as copies, so a later call never changes arrays the caller holds.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import math
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from strata.dialects import tile
from strata.support.errors import ExecutionError, InputError
from strata.support.timing import timed
from strata.lowering.llvm.translate import translate_module
from strata.lowering.tile_to_loops.kernel import kernel_functions
from strata.lowering.llvm.jit import JitModule
from strata.runtime.program import LoweredProgram, check_kernel_abi, planned_view
from strata.transforms.plan_memory import buffer_bytes

ALIGNMENT = 64
PARALLEL_MIN_BYTES = 1 << 18
"""Launches touching fewer bytes run on one thread: a pool round trip costs more."""

WORKER_COUNT = os.cpu_count() or 1
_WORKERS = ThreadPoolExecutor(max_workers=WORKER_COUNT)
"""Shared by every executable (a call blocks until its chunks finish)."""

JIT_CACHE_SIZE = 64
_JIT_CACHE: OrderedDict[str, JitModule] = OrderedDict()
"""Compiled kernel modules by the hash of their loops-level IR (in-process), least
recently used first; at most JIT_CACHE_SIZE are kept (an executable holds its own
JitModule, so evicting one never invalidates a live executable)."""
_JIT_CACHE_LOCK = threading.Lock()


def aligned_empty(count: int, dtype: np.dtype) -> np.ndarray:
    raw = np.empty(count * dtype.itemsize + ALIGNMENT, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start : start + count * dtype.itemsize].view(dtype)


def jit_kernels(module: ModuleOp) -> JitModule:
    with timed("JIT cache key (kernels printed)"):
        kernels = ModuleOp([k.clone() for k in kernel_functions(module)])
        key = hashlib.sha256(str(kernels).encode()).hexdigest()
    with _JIT_CACHE_LOCK:
        cached = _JIT_CACHE.get(key)
        if cached is not None:
            _JIT_CACHE.move_to_end(key)
            return cached
    with timed("translate to LLVM IR"):
        llvm_ir = str(translate_module(kernels))
    jit = JitModule(llvm_ir)
    with _JIT_CACHE_LOCK:
        jit = _JIT_CACHE.setdefault(key, jit)  # another thread may have compiled it too
        _JIT_CACHE.move_to_end(key)
        while len(_JIT_CACHE) > JIT_CACHE_SIZE:
            _JIT_CACHE.popitem(last=False)
    return jit


@functools.cache
def kernel_prototype(buffer_count: int) -> type:
    """i32 kernel(ptr * buffer_count, i64 begin, i64 end)."""
    return ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.c_void_p] * buffer_count), ctypes.c_int64, ctypes.c_int64)


@dataclass
class Launch:
    function: ctypes._CFuncPtr
    buffers: list[int]
    """Indices into the executable's slot table (inputs first, then bound buffers)."""
    chunks: list[tuple[int, int]]
    """The [begin, end) grid ranges, one per worker (a single one runs on the caller's thread)."""
    error: str
    """What a nonzero status means (the kernel's tile.check messages)."""


def allocate_arenas(sizes: dict[str, int]) -> dict[str, np.ndarray]:
    """One 64-byte-aligned byte array per non-empty arena."""
    return {name: aligned_empty(size, np.dtype(np.uint8)) for name, size in sizes.items() if size}


class CpuExecutable:
    """A program lowered through cpu-pipeline and JIT-compiled; `bind` (done at
    construction unless `bind=False`) gives it arenas, after which calls allocate nothing."""

    def __init__(self, lowered: LoweredProgram, bind: bool = True):
        self.lowered = lowered
        self.signature, self.module, self.plan = self.lowered.signature, self.lowered.module, self.lowered.plan
        self.jit = jit_kernels(self.module)
        self.lock = threading.Lock()
        """Held by a call from binding the inputs to copying the results out (see bind)."""
        if bind:
            self.bind(allocate_arenas(self.plan["arenas"]))

    def bind(self, arenas: dict[str, np.ndarray], lock: threading.Lock | None = None) -> None:
        """View every buffer at its planned offset in `arenas` (each at least the plan's
        size) and resolve every launch to a function pointer. Executables sharing arenas
        must share `lock` too, so that they never run at the same time."""
        if lock is not None:
            self.lock = lock
        self.arenas = arenas
        buffers, launches, self.results = self.lowered.bind(self._planned_view)
        inputs = len(self.lowered.inputs.types)
        self.storage: list[np.ndarray | None] = [None] * inputs + buffers
        kernels = {f.sym_name.data: f for f in kernel_functions(self.module)}
        self.launches = [self._launch(op, kernels[op.kernel.string_value()], slots) for op, slots in launches]
        self.pointers = [0] * inputs + [a.ctypes.data for a in buffers]

    def _planned_view(self, op: tile.BufferOp) -> np.ndarray:
        view, init = planned_view(op, self.arenas)
        if init is not None:
            view[...] = init
        return view

    def _launch(self, op: tile.LaunchOp, kernel: func.FuncOp, buffers: list[int]) -> Launch:
        name = kernel.sym_name.data
        grid_size = math.prod(kernel.attributes["tile.grid"].get_values())
        touched = sum(buffer_bytes(a) for a in op.args)
        check_kernel_abi(kernel, len(buffers), status=False, result=True)
        function = kernel_prototype(len(buffers))(self.jit.function_address(name))
        error = kernel.attributes.get("tile.error")
        message = error.data if error is not None else f"kernel @{name} failed"
        workers = min(WORKER_COUNT, grid_size) if grid_size > 1 and touched >= PARALLEL_MIN_BYTES else 1
        bounds = [grid_size * w // workers for w in range(workers + 1)]
        return Launch(function, buffers, list(zip(bounds, bounds[1:])), message)

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]:
        inputs = self.lowered.inputs.check(args)
        # One call at a time: the input slots and the arenas belong to the executable
        # (and to every executable bound to the same arenas, which shares this lock).
        with self.lock:
            storage, pointers = self.storage, self.pointers
            for i, array in enumerate(inputs):
                storage[i] = np.ascontiguousarray(array)
                pointers[i] = storage[i].ctypes.data
            for launch in self.launches:
                self._run(launch, [pointers[b] for b in launch.buffers])
            # A zero-size result has a (never written) one-element buffer: keep none of it.
            return tuple(
                storage[slot].reshape(-1)[: math.prod(shape)].reshape(shape).copy()
                for slot, shape in zip(self.results, self.lowered.result_shapes)
            )

    def _run(self, launch: Launch, pointers: list[int]) -> None:
        if len(launch.chunks) == 1:
            statuses = [launch.function(*pointers, *launch.chunks[0])]
        else:
            futures = [_WORKERS.submit(launch.function, *pointers, lo, hi) for lo, hi in launch.chunks]
            statuses = [f.result() for f in futures]
        if any(statuses):
            raise ExecutionError(launch.error)


OWN_ARENAS = ("params",)
"""Arenas each bucket keeps to itself: its constants are written once, at bind time."""


class CpuProfiles:
    """One program compiled for several shape buckets (e.g. sequence lengths), sharing one
    set of arenas sized for the largest: a call goes to the bucket matching its input
    shapes, with no re-planning and no allocation when buckets switch.
    Constants (the params arena) stay per bucket."""

    def __init__(self, executables: list[CpuExecutable]):
        sizes: dict[str, int] = {}
        for exe in executables:
            for name, size in exe.plan["arenas"].items():
                if name not in OWN_ARENAS:
                    sizes[name] = max(sizes.get(name, 0), size)
        self.arenas = allocate_arenas(sizes)
        self.lock = threading.Lock()  # the buckets share arenas: one call at a time
        self.buckets = {}
        for exe in executables:
            own = allocate_arenas({name: exe.plan["arenas"][name] for name in OWN_ARENAS})
            exe.bind({**self.arenas, **own}, self.lock)
            self.buckets[exe.lowered.inputs.shapes] = exe

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]:
        shapes = tuple(np.shape(a) for a in args)
        bucket = self.buckets.get(shapes)
        if bucket is None:
            known = "; ".join(str(list(map(list, k))) for k in self.buckets)
            raise InputError(f"no profile for input shapes {[list(s) for s in shapes]} (profiles: {known})")
        return bucket(*args)

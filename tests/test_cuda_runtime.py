"""The CUDA runtime's bookkeeping (runtime/cuda.py) without a GPU: a stand-in for numba.cuda
backed by host memory, real PTX from libNVVM, and a launcher that records its launches
instead of running them. What it checks: arenas and inputs bound once, launch arguments
(buffer pointers, grid range, status word), zero-copy device inputs, input validation,
range-check errors through the status word, and a program that returns its input.
Kernel numerics are tested on a GPU (test_gpu.py, the suites with STRATA_TEST_TARGET=cuda)."""

from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np
import pytest

import strata
from strata.runtime import cuda as runtime

from programs import single_op, ttype
from test_gpu import needs_ptx_tools


def no_buffer_format(dtype: np.dtype) -> None:
    if dtype == ml_dtypes.bfloat16:
        raise ValueError("cannot include dtype 'E' in a buffer")


class HostDeviceArray:
    """A 'device' array in host memory, with the parts of Numba's DeviceNDArray the runtime uses."""

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(self.array.ctypes.data)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.array.shape, "typestr": self.array.dtype.str, "strides": None,
                "data": (self.array.ctypes.data, False), "version": 3}

    def copy_to_device(self, source) -> None:
        # As strict as numba-cuda 0.2x: same shape, and no bf16 (host copies go through the
        # buffer protocol, which has no bf16 format).
        source = source.array if isinstance(source, HostDeviceArray) else np.asarray(source)
        if source.shape != self.array.shape:
            raise ValueError(f"incompatible shape: {source.shape} vs. {self.array.shape}")
        no_buffer_format(source.dtype)
        self.array[...] = source

    def copy_to_host(self) -> np.ndarray:
        no_buffer_format(self.array.dtype)
        return self.array.copy()

    def __getitem__(self, index):
        return HostDeviceArray(self.array[index])

    def view(self, dtype):
        return HostDeviceArray(self.array.view(dtype))

    def reshape(self, shape):
        return HostDeviceArray(self.array.reshape(shape))


class HostCuda:
    """Stands in for numba.cuda: an sm_90 device whose memory is host memory."""

    class Module:
        def get_function(self, name: str):
            return name

    class Context:
        def create_module_ptx(self, ptx: str):
            assert ".entry" in ptx
            return HostCuda.Module()

    class Device:
        compute_capability = (9, 0)
        MULTIPROCESSOR_COUNT = 132

    def get_current_device(self):
        return self.Device()

    def current_context(self):
        return self.Context()

    def device_array(self, count: int, dtype) -> HostDeviceArray:
        return HostDeviceArray(np.zeros(count, dtype))

    def to_device(self, array) -> HostDeviceArray:
        return HostDeviceArray(np.array(array))

    def synchronize(self) -> None:
        pass

    def from_cuda_array_interface(self, interface, owner=None) -> HostDeviceArray:
        return owner


class RecordingLauncher:
    launches: list = []
    opted_in: dict = {}

    def arguments(self, pointers, begin, end, status=None):
        return (tuple(pointers), begin, end, status)

    def allow_shared(self, function, size) -> None:
        RecordingLauncher.opted_in[function] = size

    def capture(self, launches) -> None:
        return None  # no driver here: one launch per kernel

    def __call__(self, function, grid, block, shared, arguments) -> None:
        RecordingLauncher.launches.append((function, grid, block, arguments))


@pytest.fixture
def host_cuda(monkeypatch):
    monkeypatch.setattr(runtime, "require_cuda", lambda: HostCuda())
    monkeypatch.setattr(runtime, "_Launcher", RecordingLauncher)
    RecordingLauncher.launches = []
    RecordingLauncher.opted_in = {}
    return RecordingLauncher.launches


@needs_ptx_tools
def test_launches_take_bound_pointers_and_device_inputs_are_zero_copy(host_cuda):
    text = single_op("graph.add", [((17, 33), "f32"), ((33,), "f32")], ((17, 33), "f32"))
    exe = strata.compile(text, target="cuda").run
    (name, function, grid, threads, shared, _), = exe.launches
    assert function == name and grid >= 1 and threads == 256 and shared == 0
    x = np.arange(17 * 33, dtype=np.float32).reshape(17, 33)
    b = np.ones(33, np.float32)
    (result,) = exe(x, b)
    assert result.shape == (17, 33) and result.dtype == np.float32
    np.testing.assert_array_equal(exe.inputs[0].array, x.reshape(-1))  # copied in
    (_, _, _, (pointers, begin, end, status)), = host_cuda
    assert pointers[:2] == (exe.inputs[0].array.ctypes.data, exe.inputs[1].array.ctypes.data)
    assert (begin, end, status) == (0, grid, None)
    device_x = HostDeviceArray(x.copy())
    exe(device_x, b)
    assert host_cuda[-1][3][0][0] == device_x.array.ctypes.data  # read in place
    with pytest.raises(strata.InputError, match="arg0"):
        exe(np.zeros((17, 32), np.float32), b)
    with pytest.raises(strata.InputError, match="argument 0: expected a C-contiguous device array"):
        exe(HostDeviceArray(x.astype(np.float64)), b)


@needs_ptx_tools
def test_range_check_failure_is_an_execution_error_and_is_cleared(host_cuda):
    text = single_op("graph.embedding", [((11, 4), "f32"), ((5,), "i64")], ((5, 4), "f32"))
    exe = strata.compile(text, target="cuda").run
    status_pointer = exe.status.array.ctypes.data
    assert any(arguments[3] == status_pointer for *_, arguments in exe.launches)
    table, ids = np.zeros((11, 4), np.float32), np.arange(5)
    exe(table, ids)  # status 0: fine
    exe.status.array[0] = 1  # what a failing tile.check stores
    with pytest.raises(strata.ExecutionError, match=r"an id is outside \[0, 11\)"):
        exe(table, ids)
    assert exe.status.array[0] == 0
    exe(table, ids)


@needs_ptx_tools
def test_a_returned_device_input_is_copied_into_its_bound_buffer(host_cuda):
    t = ttype((3, 4), "f32")
    exe = strata.compile(f"func.func @main(%x: {t}) -> {t} {{\n  func.return %x : {t}\n}}", target="cuda").run
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (on_device,) = exe.run_on_device(HostDeviceArray(x.copy()))
    np.testing.assert_array_equal(on_device.copy_to_host(), x)


@needs_ptx_tools
def test_bf16_inputs_constants_and_results_travel_as_their_bits(host_cuda):
    bf16 = ml_dtypes.bfloat16
    t = ttype((5, 3), "bf16")
    text = f"""func.func @main(%x: {t}) -> ({t}, {t}) {{
  %c = "graph.constant"() <{{value = dense<1.5> : {t}}}> : () -> {t}
  %y = "graph.add"(%x, %c) : ({t}, {t}) -> {t}
  func.return %x, %y : {t}, {t}
}}"""
    exe = strata.compile(text, target="cuda").run
    x = np.linspace(-2, 2, 15).astype(bf16).reshape(5, 3)
    returned, _ = exe(x)  # the kernels are recorded, not run: only the returned input is known
    assert returned.dtype == bf16
    np.testing.assert_array_equal(returned, x)
    (on_device, _) = exe.run_on_device(x)
    assert on_device.array.dtype == bf16
    np.testing.assert_array_equal(on_device.array, x)
    constant = next(view for view in exe.storage[1:] if (view.array.view(np.uint16) == np.uint16(0x3FC0)).all())
    assert constant.array.dtype == np.uint16  # 1.5 as bf16 bits, written at bind time


@needs_ptx_tools
@pytest.mark.parametrize("capability", [(8, 0), (9, 0)])
def test_pipelined_matmul_launches_with_dynamic_shared_memory(host_cuda, monkeypatch, capability):
    """A tensor-core matmul's cp.async stages live in dynamic shared memory: the launch
    passes their size, and past 48 KiB the kernel opts in once, at bind. sm_80: mma.sync,
    four stages of padded 128 x 32 and 32 x 128 tiles; sm_90: the warpgroup mma, 256
    threads, four swizzled stages of 128 x 64 and 64 x 128 plus 1008 bytes of alignment
    and the staged epilogue tile."""
    monkeypatch.setattr(HostCuda.Device, "compute_capability", capability)
    text = single_op("graph.matmul", [((2048, 256), "bf16"), ((256, 2048), "bf16")], ((2048, 2048), "bf16"))
    exe = strata.compile(text, target="cuda").run
    (name, _, blocks, threads, shared, (_, begin, end, _)), = exe.launches
    if capability == (8, 0):
        assert threads == 128 and shared == 4 * (128 * (32 + 8) + 32 * (128 + 8)) * 2
        assert blocks == end == 16 * 16
    else:
        # ... plus the epilogue's staged tile: 128 rows of 64 words and 16 bytes (row_stores.py).
        assert threads == 256 and shared == 4 * (128 * 64 + 64 * 128) * 2 + 1008 + 128 * 68 * 4
        # Persistent blocks: one per multiprocessor (this stand-in has no occupancy query)
        # loop over the 256 tiles.
        assert (blocks, begin, end) == (132, 0, 16 * 16)
    assert RecordingLauncher.opted_in == {name: shared}

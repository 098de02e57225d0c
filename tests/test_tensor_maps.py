"""Tensor maps (runtime/tensor_maps.py): what the runtime hands cuTensorMapEncodeTiled for a
kernel's gpu.tensor_maps, without a GPU; with one, copies through transposed views and maps
encoded again for inputs read in place (every flash test of a 128-query block on sm_90 runs
through them too)."""

from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np
import pytest

import strata
from strata.lowering.tile_to_gpu.tensor_maps import maps_attribute, maps_of
from strata.runtime.tensor_maps import map_layout
from strata.targets.cuda import GpuPipelinePass
from strata.targets.passes import run_pipeline
from test_flash_attention import CASES, attention
from test_gpu import needs_gpu


def test_a_contiguous_view_maps_innermost_first():
    sizes, strides = map_layout((2, 4, 100, 96), (38400, 9600, 96, 1), 2)
    assert sizes == [96, 100, 4, 2] and strides == [192, 19200, 76800]


@pytest.mark.parametrize("shape, strides, expected", [
    ((1, 100, 64), (0, 64, 1), [128, 12800]),  # a broadcast batch of one: its own extent
    ((3, 1, 7, 16), (112, 0, 16, 1), [32, 224, 224]),
])  # fmt: skip
def test_an_axis_of_one_takes_a_stride_the_driver_accepts(shape, strides, expected):
    _, byte_strides = map_layout(shape, strides, 2)
    assert byte_strides == expected and all(s % 16 == 0 and s > 0 for s in byte_strides)


def test_the_lowered_kernel_lists_its_maps():
    module = strata.parse_module(attention(*CASES["head-96-long-causal-f16"]))
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=True, tensor_maps=True).steps())
    kernel = next(op for op in module.ops if "gpu.tensor_maps" in op.attributes)
    maps = maps_of(kernel.attributes["gpu.tensor_maps"])
    assert [m.argument for m in maps] == [0, 1, 2] and [m.box_rows for m in maps] == [128, 128, 128]
    assert all(tuple(m.view.get_shape()) == (1, 2, 300, 96) and m.view.get_strides()[-1] == 1
               and str(m.view.element_type) == "f16" for m in maps)
    assert maps_attribute(maps) == kernel.attributes["gpu.tensor_maps"]


PACKED = """func.func @packed(%x: tensor<2x100x3x4x128xbf16>) -> tensor<2x4x100x128xbf16> {
  %q5 = graph.slice %x {starts = array<i64: 0, 0, 0, 0, 0>, limits = array<i64: 2, 100, 1, 4, 128>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<2x100x3x4x128xbf16>) -> tensor<2x100x1x4x128xbf16>
  %k5 = graph.slice %x {starts = array<i64: 0, 0, 1, 0, 0>, limits = array<i64: 2, 100, 2, 4, 128>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<2x100x3x4x128xbf16>) -> tensor<2x100x1x4x128xbf16>
  %v5 = graph.slice %x {starts = array<i64: 0, 0, 2, 0, 0>, limits = array<i64: 2, 100, 3, 4, 128>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<2x100x3x4x128xbf16>) -> tensor<2x100x1x4x128xbf16>
  %q4 = graph.reshape %q5 : (tensor<2x100x1x4x128xbf16>) -> tensor<2x100x4x128xbf16>
  %k4 = graph.reshape %k5 : (tensor<2x100x1x4x128xbf16>) -> tensor<2x100x4x128xbf16>
  %v4 = graph.reshape %v5 : (tensor<2x100x1x4x128xbf16>) -> tensor<2x100x4x128xbf16>
  %q = graph.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x100x4x128xbf16>) -> tensor<2x4x100x128xbf16>
  %k = graph.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x100x4x128xbf16>) -> tensor<2x4x100x128xbf16>
  %v = graph.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x100x4x128xbf16>) -> tensor<2x4x100x128xbf16>
  %o = graph.attention %q, %k, %v {scale = 0.088 : f64, causal = true} : (tensor<2x4x100x128xbf16>, tensor<2x4x100x128xbf16>, tensor<2x4x100x128xbf16>) -> tensor<2x4x100x128xbf16>
  func.return %o : tensor<2x4x100x128xbf16>
}
"""
"""q, k and v as heads of one packed [batch, tokens, 3, heads, head] tensor: the flash kernel
reads them through transposed views (rows 512 elements apart, heads 128)."""


def test_transposed_views_are_mapped_with_their_strides():
    module = strata.parse_module(PACKED)
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=True, tensor_maps=True).steps())
    kernel = next(op for op in module.ops if "gpu.tensor_maps" in op.attributes)
    maps = maps_of(kernel.attributes["gpu.tensor_maps"])
    assert all(tuple(m.view.get_strides()) == (51200, 128, 512, 1) for m in maps)
    assert map_layout(maps[0].view.get_shape(), maps[0].view.get_strides(), 2)[1] == [1024, 256, 102400]


def mapped(executable) -> bool:
    return bool(getattr(executable.run, "tensor_map_tables", None))


@needs_gpu
def test_transposed_views_through_tensor_maps_on_gpu():
    x = np.random.default_rng(5).standard_normal((2, 100, 3, 4, 128), dtype=np.float32).astype(ml_dtypes.bfloat16)
    executable = strata.compile(PACKED, target="cuda")
    if not mapped(executable):
        pytest.skip("tensor maps are for sm_90 (warpgroup mma)")
    (want,) = strata.interpret(PACKED, x)
    (got,) = executable(x)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), atol=2e-2, rtol=2e-2)


@needs_gpu
def test_tensor_maps_follow_inputs_passed_in_place():
    """Device arrays read in place bring new addresses: the maps are encoded again (and the
    CUDA graph captured again), so each call reads its own inputs."""
    torch = pytest.importorskip("torch")
    text = attention((1, 2, 200, 128), (1, 2, 200, 128), (1, 2, 200, 128), "bf16", False)
    executable = strata.compile(text, target="cuda")
    if not mapped(executable):
        pytest.skip("tensor maps are for sm_90 (warpgroup mma)")
    rng = np.random.default_rng(6)
    inputs = [rng.standard_normal((1, 2, 200, 128), dtype=np.float32).astype(ml_dtypes.bfloat16) for _ in range(3)]
    (from_host,) = executable(*inputs)
    (table,) = executable.run.tensor_map_tables
    encoded = table.written
    on_device = [torch.from_numpy(a.astype(np.float32)).cuda().to(torch.bfloat16) for a in inputs]
    (in_place,) = executable(*on_device)
    assert table.written != encoded
    np.testing.assert_array_equal(in_place, from_host)
    doubled = [a * 2 for a in on_device]
    (twice,) = executable(*doubled)
    (twice_from_host,) = executable(*[(a.astype(np.float32) * 2).astype(ml_dtypes.bfloat16) for a in inputs])
    np.testing.assert_array_equal(twice, twice_from_host)


@pytest.mark.parametrize("shape, strides, offset, rows, expected", [
    ((2, 100, 128), (12800, 128, 1), 0, 128, True),
    ((2, 100, 128), (0, 128, 1), 0, 128, False),  # a batch repeated in place
    ((1, 100, 128), (0, 128, 1), 0, 128, True),  # one batch: its stride is never used
    ((2, 0, 128), (0, 128, 1), 0, 64, False),  # no rows
    ((2, 100, 128), (12800, 128, 1), 4, 64, False),  # 8 bytes past a 16-byte boundary
    ((2, 100, 128), (12800, 136, 1), 0, 64, True),  # padded rows
    ((2, 100, 128), (12800, 132, 1), 0, 64, False),  # rows 264 bytes apart
    ((2, 100, 128), (12800, 1, 100), 0, 64, False),  # columns apart: not rows
    ((2, 100, 128), (12800, 128, 1), 0, 512, False),  # a box past 256 rows
])  # fmt: skip
def test_which_views_a_tensor_map_describes(shape, strides, offset, rows, expected):
    from xdsl.dialects.builtin import bf16

    from strata.dialects.tile_types import TensorViewType
    from strata.lowering.tile_to_gpu.tensor_maps import mappable

    assert mappable(TensorViewType(shape, bf16, strides, offset), rows) == expected


class RecordingDriver:
    """cuTensorMapEncodeTiled's stand-in: records what it was asked to encode and writes the
    map's base address into it, so that tests without a GPU see what the runtime hands over."""

    def __init__(self):
        self.calls = []

    def __call__(self, target, data_type, rank, address, sizes, strides, box, element_strides, *modes):
        self.calls.append({"data_type": data_type, "rank": rank, "address": address.value, "sizes": list(sizes)[:rank],
                           "strides": list(strides)[: rank - 1], "box": list(box)[:rank], "modes": modes})
        ctypes.memmove(target.value, address.value.to_bytes(8, "little"), 8)
        return 0


def test_the_runtime_encodes_each_map_over_its_argument(monkeypatch):
    from strata.runtime import tensor_maps as runtime_maps

    driver = RecordingDriver()
    monkeypatch.setattr(runtime_maps._Driver, "_encode", driver)
    module = strata.parse_module(PACKED)
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=True, tensor_maps=True).steps())
    kernel = next(op for op in module.ops if "gpu.tensor_maps" in op.attributes)
    maps = maps_of(kernel.attributes["gpu.tensor_maps"])
    encoded = [runtime_maps.encode_map(m, 0x10000 * (n + 1)) for n, m in enumerate(maps)]
    assert [int.from_bytes(e[:8], "little") for e in encoded] == [0x10000, 0x20000, 0x30000]
    first = driver.calls[0]
    assert first["data_type"] == runtime_maps.DATA_TYPES["bf16"] and first["rank"] == 4
    assert first["sizes"] == [128, 100, 4, 2] and first["strides"] == [1024, 256, 102400]
    assert first["box"] == [64, 128, 1, 1] and [c["box"][1] for c in driver.calls[1:]] == [128, 128]
    assert first["modes"] == (runtime_maps.INTERLEAVE_NONE, runtime_maps.SWIZZLE_128B, runtime_maps.L2_PROMOTION_256B,
                              runtime_maps.OOB_FILL_ZEROS)


def test_a_table_is_written_again_only_when_an_address_changes(monkeypatch):
    """The launch's slots pick its buffers' addresses; a new address is written after the
    work in flight (which may read the old maps), the same ones not at all."""
    from numba.cuda.cudadrv import driver as numba_driver

    from strata.runtime import tensor_maps as runtime_maps

    monkeypatch.setattr(runtime_maps._Driver, "_encode", RecordingDriver())
    writes, synchronized = [], []
    monkeypatch.setattr(numba_driver, "host_to_device", lambda symbol, data, size: writes.append(bytes(data[:size])))

    class Module:
        def get_global_symbol(self, name):
            assert name == "main_attention_0_tensor_maps"
            return "table", 384

    class Cuda:
        def synchronize(self):
            synchronized.append(len(writes))

    module = strata.parse_module(attention(*CASES["head-96-long-causal-f16"]))
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=True, tensor_maps=True).steps())
    kernel = next(op for op in module.ops if "gpu.tensor_maps" in op.attributes)
    table = runtime_maps.TensorMapTable(Module(), kernel.sym_name.data, maps_of(kernel.attributes["gpu.tensor_maps"]),
                                        slots=[5, 6, 7, 8])
    pointers = [0] * 5 + [0x1000, 0x2000, 0x3000, 0x4000]
    table.update(Cuda(), pointers)
    table.update(Cuda(), pointers)
    assert len(writes) == 1 and synchronized == []
    bases = [int.from_bytes(writes[0][n * 128: n * 128 + 8], "little") for n in range(3)]
    assert bases == [0x1000, 0x2000, 0x3000]
    table.update(Cuda(), pointers[:6] + [0x9000] + pointers[7:])
    assert len(writes) == 2 and synchronized == [1]
    assert int.from_bytes(writes[1][128:136], "little") == 0x9000

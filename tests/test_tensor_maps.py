"""Tensor maps (runtime/tensor_maps.py): what the runtime hands cuTensorMapEncodeTiled for a
kernel's gpu.tensor_maps, without a GPU; the copies through them run in the GPU flash tests."""

from __future__ import annotations

import pytest

import strata
from strata.runtime.tensor_maps import map_layout, map_specs
from strata.targets.cuda import GpuPipelinePass
from strata.targets.passes import run_pipeline
from test_flash_attention import CASES, attention


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
    specs = map_specs(kernel.attributes["gpu.tensor_maps"])
    assert [s["argument"] for s in specs] == [0, 1, 2] and [s["box_rows"] for s in specs] == [128, 64, 64]
    assert all(s["shape"] == [1, 2, 300, 96] and s["strides"][-1] == 1 and str(s["element"]) == "f16" for s in specs)

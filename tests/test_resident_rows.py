"""Softmax rows held in shared memory on sm_90 (`tile.resident_softmax`): lower-graph-to-tile
marks a softmax / log_softmax whose rows are longer than one column tile and at most
resident_row_bytes long, and lower-tile-to-gpu replaces the marked kernel by one that copies
each row into shared memory once. Its PTX passes ptxas for sm_90a, and on an sm_90 GPU its
results match the reference: odd row lengths (rows starting anywhere in a 16-byte chunk),
every float type, rows of -inf, large values, log_softmax, a softmax run in place.
"""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata.check import compare
from strata.support.dtypes import NUMPY_DTYPES
from strata.targets.cuda import RESIDENT_ROW_BYTES, GpuPipelinePass
from strata.targets.passes import run_pipeline
from test_gpu import needs_gpu, needs_ptx_tools

CASES = {
    # (shape, dtype, log)
    "bf16-odd": ((7, 5001), "bf16", False),
    "bf16-gpt2-vocabulary": ((5, 50257), "bf16", False),
    "f16-rank-3-log": ((2, 3, 4099), "f16", True),
    "f32-log": ((33, 3000), "f32", True),
    "f32-longest": ((3, RESIDENT_ROW_BYTES // 4), "f32", False),
    "bf16-one-row": ((1, 2049), "bf16", False),
    "f16-rank-1": ((5001,), "f16", False),
}


def softmax_text(shape, dtype: str, log: bool) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{dtype}>"
    op = "log_softmax" if log else "softmax"
    return (f"func.func @main(%x: {t}) -> {t} {{\n  %y = graph.{op} %x {{axis = -1 : i64}} : ({t}) -> {t}\n"
            f"  func.return %y : {t}\n}}\n")


def softmax_of_product_text(rows: int, depth: int, length: int, dtype: str) -> str:
    """softmax(a @ b): the softmax reads an intermediate, whose memory the plan may give it."""
    a, b, t = (f"tensor<{m}x{n}x{dtype}>" for m, n in ((rows, depth), (depth, length), (rows, length)))
    return (f"func.func @main(%a: {a}, %b: {b}) -> {t} {{\n  %m = graph.matmul %a, %b : ({a}, {b}) -> {t}\n"
            f"  %y = graph.softmax %m {{axis = -1 : i64}} : ({t}) -> {t}\n  func.return %y : {t}\n}}\n")


def rows(shape, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape, dtype=np.float32) * 4
    flat = x.reshape(-1, shape[-1])
    flat[0, : shape[-1] // 2] = -np.inf  # half a row of -inf: its maximum is in the other half
    flat[-1, 17] = 80.0  # an outlier that dominates its row
    return x.astype(NUMPY_DTYPES[dtype])


def lowered(text: str):
    module = strata.parse_module(text)
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=True).steps())
    return module


@pytest.mark.parametrize("case", CASES)
def test_long_rows_are_marked_on_sm_90(case):
    kernels = [op for op in lowered(softmax_text(*CASES[case])).ops if "gpu.kernel" in op.attributes]
    assert [k.attributes["gpu.block_size"].value.data for k in kernels] == [512]
    assert kernels[0].attributes["gpu.barriers"].value.data == 3


def test_rows_past_the_limit_or_of_one_tile_are_not_marked():
    for shape in [(3, RESIDENT_ROW_BYTES // 4 + 1), (64, 2048)]:
        kernels = [op for op in lowered(softmax_text(shape, "f32", False)).ops if "gpu.kernel" in op.attributes]
        assert [k.attributes["gpu.block_size"].value.data for k in kernels] == [256]


@needs_ptx_tools
@pytest.mark.parametrize("case", ["bf16-odd", "f16-rank-3-log", "f32-longest"])
def test_ptx_is_accepted_by_ptxas(case):
    from strata.lowering.nvvm.translate import module_to_ptx
    from targets import ptxas

    ptx = module_to_ptx(lowered(softmax_text(*CASES[case])), "sm_90a")[1]
    assert "cp.async.cg.shared.global" in ptx
    ptxas(ptx, "sm_90a")


@needs_gpu
@pytest.mark.parametrize("case", CASES)
def test_gpu_matches_the_reference(case):
    shape, dtype, log = CASES[case]
    text = softmax_text(shape, dtype, log)
    x = rows(shape, dtype)
    want = strata.interpret(text, x)
    for comparison in compare(strata.compile(text, target="cuda")(x), want):
        assert comparison.ok, comparison


@needs_gpu
@pytest.mark.parametrize("dtype", ["bf16", "f32"])
def test_gpu_softmax_of_an_intermediate_matches_the_reference(dtype):
    text = softmax_of_product_text(9, 5, 6007, dtype)
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(shape, dtype=np.float32).astype(NUMPY_DTYPES[dtype]) for shape in ((9, 5), (5, 6007)))
    want = strata.interpret(text, a, b)
    for comparison in compare(strata.compile(text, target="cuda")(a, b), want):
        assert comparison.ok, comparison

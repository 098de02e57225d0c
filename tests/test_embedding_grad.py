"""graph.embedding_grad: the table's cotangent of graph.embedding, rows added by id.

The reference (np.add.at) against an f64 sum written out here; the CPU (a zeroing kernel,
checked atomic scatter-adds, a rounding kernel for 16-bit tables) against the reference
at odd sizes, ids that repeat within a tile and across instances, rank-2 ids, i32 ids, no
ids and every float type; an id out of range is a run-time error; the embedding's VJP
is this op; the GPU's PTX passes ptxas, and on a GPU its results match the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata.check import compare
from strata.support.dtypes import NUMPY_DTYPES
from strata.support.errors import ExecutionError
from test_gpu import needs_gpu, needs_ptx_tools

CASES = {
    # (ids shape, width, vocabulary, dtype, ids dtype)
    "odd-f32": ((33,), 17, 7, "f32", "i64"),
    "one-f64": ((1,), 1, 1, "f64", "i64"),
    "rank-2-ids-bf16": ((20, 25), 64, 50, "bf16", "i64"),
    "i32-ids-f16": ((1000,), 33, 1000, "f16", "i32"),
    "no-ids": ((0,), 5, 3, "f32", "i64"),
    "many-repeats-f32": ((4096,), 96, 3, "f32", "i64"),
    "wide-rows-bf16": ((257,), 768, 129, "bf16", "i64"),
}


def embedding_grad(ids_shape, width, vocabulary, dtype, ids_dtype, padding: int | None = None) -> str:
    ids = f"tensor<{'x'.join(map(str, ids_shape))}x{ids_dtype}>"
    grad = f"tensor<{'x'.join(map(str, (*ids_shape, width)))}x{dtype}>"
    out = f"tensor<{vocabulary}x{width}x{dtype}>"
    padding_idx = "" if padding is None else f", padding_idx = {padding} : i64"
    return (
        f"func.func @f(%g: {grad}, %ids: {ids}) -> {out} {{\n"
        f"  %0 = graph.embedding_grad %g, %ids {{vocabulary = {vocabulary} : i64{padding_idx}}} : ({grad}, {ids}) -> {out}\n"
        f"  func.return %0 : {out}\n}}\n"
    )


def arguments(case: str, seed: int = 0):
    ids_shape, width, vocabulary, dtype, ids_dtype = CASES[case]
    rng = np.random.default_rng(seed)
    grad = rng.standard_normal((*ids_shape, width), dtype=np.float32).astype(NUMPY_DTYPES[dtype])
    ids = rng.integers(0, vocabulary, ids_shape).astype(NUMPY_DTYPES[ids_dtype])
    return grad, ids


def summed(grad: np.ndarray, ids: np.ndarray, vocabulary: int) -> np.ndarray:
    """The rows of grad added by id in f64."""
    table = np.zeros((vocabulary, grad.shape[-1]))
    for row, index in zip(grad.reshape(-1, grad.shape[-1]).astype(np.float64), ids.reshape(-1)):
        table[index] += row
    return table


@pytest.mark.parametrize("case", CASES)
def test_reference_adds_the_rows_by_id(case):
    grad, ids = arguments(case)
    vocabulary = CASES[case][2]
    (got,) = strata.interpret(embedding_grad(*CASES[case]), grad, ids)
    assert got.dtype == grad.dtype and got.shape == (vocabulary, grad.shape[-1])
    exact = summed(grad, ids, vocabulary)
    # f32 sums of 16-bit rows rounded once; f32 and f64 in their own precision.
    mantissa = {"bf16": 7, "f16": 10, "f32": 23, "f64": 52}[CASES[case][3]]
    terms = summed(np.abs(grad.astype(np.float64)), ids, vocabulary)
    assert np.all(np.abs(got.astype(np.float64) - exact) <= 2.0**-mantissa * (np.abs(exact) + terms) + 1e-300)


@pytest.mark.parametrize("case", CASES)
def test_cpu_matches_the_reference(case):
    text = embedding_grad(*CASES[case])
    grad, ids = arguments(case)
    want = strata.interpret(text, grad, ids)
    got = strata.compile(text, target="cpu")(grad, ids)
    for comparison in compare(got, want):
        assert comparison.ok, comparison


PADDED = ["many-repeats-f32", "rank-2-ids-bf16", "odd-f32"]


@pytest.mark.parametrize("case", PADDED)
def test_the_padding_row_gets_nothing(case):
    """With padding_idx, the ids of that row add nothing (the row stays 0, as PyTorch's
    padding_idx leaves it): the reference and the CPU agree with the sums without it."""
    grad, ids = arguments(case)
    padding = int(ids.reshape(-1)[0])  # an id that occurs
    text = embedding_grad(*CASES[case], padding=padding)
    (want,) = strata.interpret(text, grad, ids)
    (unpadded,) = strata.interpret(embedding_grad(*CASES[case]), grad, ids)
    assert not want[padding].any() and unpadded[padding].any()
    others = np.arange(want.shape[0]) != padding
    np.testing.assert_array_equal(want[others], unpadded[others])
    for comparison in compare(strata.compile(text, target="cpu")(grad, ids), [want]):
        assert comparison.ok, comparison


@pytest.mark.parametrize("target", ["reference", "cpu"])
def test_an_id_out_of_range_is_a_run_time_error(target):
    text = embedding_grad((4,), 3, 5, "f32", "i64")
    grad = np.ones((4, 3), np.float32)
    run = strata.interpret if target == "reference" else strata.compile(text, target="cpu")
    args = (text, grad) if target == "reference" else (grad,)
    for bad in (7, -1):
        with pytest.raises(ExecutionError, match=r"'graph.embedding_grad': (an )?id .*outside \[0, 5\)"):
            run(*args, np.array([0, 1, bad, 2]))


def test_training_a_lookup_adds_each_row_by_id():
    """strata.grad of sum(embedding(table, ids) * w): the table's gradient holds, per row,
    the sum of w over the positions that read it (repeats add up; unread rows are 0)."""
    text = """func.func @f(%table: tensor<10x4xf32>, %ids: tensor<6xi64>, %w: tensor<6x4xf32>) -> tensor<f32> attributes {graph.differentiate} {
  %e = graph.embedding %table, %ids : (tensor<10x4xf32>, tensor<6xi64>) -> tensor<6x4xf32>
  %p = graph.mul %e, %w : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %s = graph.reduce_sum %p {axes = array<i64: 0, 1>} : (tensor<6x4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
"""
    rng = np.random.default_rng(1)
    table = rng.standard_normal((10, 4)).astype(np.float32)
    ids = np.array([3, 0, 3, 9, 3, 0])
    w = rng.standard_normal((6, 4)).astype(np.float32)
    (d_table,) = strata.grad(text, argnums=(0,), target="cpu")(table, ids, w)
    np.testing.assert_allclose(d_table, summed(w, ids, 10), rtol=1e-6, atol=1e-6)


@needs_ptx_tools
@pytest.mark.parametrize("case", ["rank-2-ids-bf16", "odd-f32", "one-f64"])
def test_gpu_ptx_is_accepted_by_ptxas(case):
    from strata.lowering.nvvm.translate import module_to_ptx
    from targets import ptxas
    from test_gpu import lower

    ptx = module_to_ptx(lower(embedding_grad(*CASES[case], padding=0)), "sm_90")[1]
    assert "atom.global.add.f" in ptx
    ptxas(ptx, "sm_90")


@needs_gpu
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("padded", [False, True])
def test_gpu_matches_the_reference(case, padded):
    """Atomic adds in no fixed order: a second call agrees within the tolerances, not
    necessarily to the bit. `padded`: row 0 is the padding row."""
    text = embedding_grad(*CASES[case], padding=0 if padded else None)
    grad, ids = arguments(case)
    want = strata.interpret(text, grad, ids)
    exe = strata.compile(text, target="cuda")
    for _ in range(2):
        for comparison in compare(exe(grad, ids), want):
            assert comparison.ok, comparison

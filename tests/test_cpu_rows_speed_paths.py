"""The row kernels' fast paths against the reference interpreter, where the suite's shapes
do not reach them: softmax storing exp(x - max) in its sum pass and scaling it in place
(rows of several column tiles, a partial last tile, in place on a dead input, fused with a
prologue), NaN and infinities in rows, layernorm/rmsnorm's one reciprocal per row, and
expand-math's exp at the edges of its range."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from programs import single_op
from targets import compile_for_test, compile_with_steps


def close_to_reference(text: str, inputs, fusion: bool = True, rtol: float = 2e-6, atol: float = 1e-7) -> None:
    got = compile_for_test(text, fusion=fusion)(*inputs)
    want = strata.interpret(text, *inputs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("shape", [(2, 4097), (3, 9000), (5, 8192), (33, 129)], ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_long_rows(name, shape):
    """Rows of one or more column tiles (4096 columns at most), the last one partial."""
    x = (np.random.default_rng(3).standard_normal(shape) * 20).astype(np.float32)
    close_to_reference(single_op(f"graph.{name}", [(shape, "f32")], (shape, "f32"), "axis = 1 : i64"), [x],
                       rtol=2e-6 if name == "softmax" else 1e-5, atol=1e-6)


def test_softmax_in_place_and_fused_prologue():
    """softmax(2x): fused, the prologue is evaluated in the max and sum passes only;
    unfused, the softmax may run in place on the dead 2x buffer."""
    x = np.random.default_rng(4).standard_normal((6, 5000)).astype(np.float32)
    t = "tensor<6x5000xf32>"
    text = "\n".join([
        f"func.func @main(%x: {t}) -> {t} {{",
        f'  %0 = "graph.scale"(%x) <{{value = 2.0 : f64}}> : ({t}) -> {t}',
        f'  %1 = "graph.softmax"(%0) <{{axis = 1 : i64}}> : ({t}) -> {t}',
        f"  func.return %1 : {t}",
        "}",
    ])  # fmt: skip
    for fusion in (True, False):
        close_to_reference(text, [x], fusion=fusion)


@pytest.mark.parametrize("columns", [4500, 100], ids=["long", "short"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_special_rows(name, columns):
    """A NaN or +inf anywhere in a row makes the whole row NaN; a row of -inf is NaN; -inf
    entries beside finite ones are probability 0 (log-probability -inf), also where a
    whole first column tile is -inf (the online pass's maximum is still -inf there).
    Short rows: the GPU's row lanes (a row on 16 lanes of a warp)."""
    x = np.random.default_rng(5).standard_normal((6, columns)).astype(np.float32)
    x[0, columns - 100] = np.nan
    x[1, 7] = np.inf
    x[2, :] = -np.inf
    x[3, ::3] = -np.inf
    x[5, : columns - 300 if columns > 300 else columns - 10] = -np.inf
    got = compile_for_test(single_op(f"graph.{name}", [(x.shape, "f32")], (x.shape, "f32"), "axis = 1 : i64"))(x)[0]
    assert np.isnan(got[:3]).all()
    assert (got[3, ::3] == (0 if name == "softmax" else -np.inf)).all()
    assert np.isfinite(got[3, 1::3]).all() and np.isfinite(got[4]).all()
    cut = columns - 300 if columns > 300 else columns - 10
    assert (got[5, :cut] == (0 if name == "softmax" else -np.inf)).all() and np.isfinite(got[5, cut:]).all()
    want = strata.interpret(single_op(f"graph.{name}", [(x.shape, "f32")], (x.shape, "f32"), "axis = 1 : i64"), x)[0]
    np.testing.assert_allclose(got[3:], want[3:], rtol=1e-5, atol=1e-7)
    if name == "softmax":
        np.testing.assert_allclose(got[3:].sum(axis=1), 1, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("shape", [(5, 9000), (7, 4097), (3, 50)], ids=str)
def test_cross_entropy_rows_of_several_tiles(shape, dtype):
    """logsumexp - the label's logit in one online pass over rows of several column tiles
    (and the three passes of a one-tile row), labels at the row's ends and in a late tile."""
    from strata.support.dtypes import NUMPY_DTYPES

    n, classes = shape
    rng = np.random.default_rng(6)
    logits = (rng.standard_normal(shape) * 8).astype(NUMPY_DTYPES[dtype])
    labels = np.array([0, classes - 1, *rng.integers(0, classes, n - 2)], dtype=np.int64)
    text = single_op("graph.cross_entropy", [(shape, dtype), ((n,), "i64")], ((), dtype))
    close_to_reference(text, [logits, labels], rtol=1e-5 if dtype == "f32" else 2**-7, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 4097), (64, 128)], ids=str)
def test_normalize_long_rows(shape):
    rng = np.random.default_rng(6)
    c = shape[-1]
    x = (rng.standard_normal(shape) * 3 + 5).astype(np.float32)
    gamma, beta = rng.standard_normal((2, c)).astype(np.float32)
    close_to_reference(single_op("graph.layernorm", [(shape, "f32"), ((c,), "f32"), ((c,), "f32")], (shape, "f32"),
                                 "epsilon = 1.0e-05 : f64"), [x, gamma, beta], rtol=1e-5, atol=1e-5)
    close_to_reference(single_op("graph.rmsnorm", [(shape, "f32"), ((c,), "f32")], (shape, "f32")), [x, gamma],
                       rtol=1e-5, atol=1e-5)


SHORT_ROWS = {
    "softmax-17x33-f32": ("graph.softmax", (17, 33), "f32"),
    "softmax-1x128-f64": ("graph.softmax", (1, 128), "f64"),
    "softmax-3x5x40-f16": ("graph.softmax", (3, 5, 40), "f16"),
    "log_softmax-33x64-bf16": ("graph.log_softmax", (33, 64), "bf16"),
    "log_softmax-2049x128-f32": ("graph.log_softmax", (2049, 128), "f32"),
    "layernorm-33x100-f32": ("graph.layernorm", (33, 100), "f32"),
    "layernorm-7x64-bf16": ("graph.layernorm", (7, 64), "bf16"),
    "rmsnorm-17x48-f64": ("graph.rmsnorm", (17, 48), "f64"),
    "reduce_sum-65x33-f32": ("graph.reduce_sum", (65, 33), "f32"),
    "reduce_max-9x40-i32": ("graph.reduce_max", (9, 40), "i32"),
    "reduce_mean-3x7x60-f64": ("graph.reduce_mean", (3, 7, 60), "f64"),
    "cross_entropy-33x100-f32": ("graph.cross_entropy", (33, 100), "f32"),
}
"""Rows shorter than the GPU's block (256 threads) but at least 8 lanes' worth: each row on
8-32 lanes of one warp, reduced by shuffles into registers (reductions whose result is
stored read it from a shared row instead)."""


@pytest.mark.parametrize("case", list(SHORT_ROWS))
def test_rows_shorter_than_the_block(case):
    from strata.support.dtypes import NUMPY_DTYPES

    name, shape, dtype = SHORT_ROWS[case]
    rng = np.random.default_rng(len(case))
    c, rows = shape[-1], shape[:-1]
    x = (rng.standard_normal(shape) * 4 + 1).astype(NUMPY_DTYPES[dtype])
    tight = dtype in ("f32", "f64", "i32")
    if name in ("graph.softmax", "graph.log_softmax"):
        text, inputs = single_op(name, [(shape, dtype)], (shape, dtype), "axis = -1 : i64"), [x]
    elif name == "graph.layernorm":
        gamma, beta = rng.standard_normal((2, c)).astype(NUMPY_DTYPES[dtype])
        text = single_op(name, [(shape, dtype), ((c,), dtype), ((c,), dtype)], (shape, dtype), "epsilon = 1.0e-05 : f64")
        inputs = [x, gamma, beta]
    elif name == "graph.rmsnorm":
        gamma = rng.standard_normal(c).astype(NUMPY_DTYPES[dtype])
        text, inputs = single_op(name, [(shape, dtype), ((c,), dtype)], (shape, dtype)), [x, gamma]
    elif name == "graph.cross_entropy":
        labels = np.array([0, c - 1, *rng.integers(0, c, rows[0] - 2)], dtype=np.int64)
        text, inputs = single_op(name, [(shape, dtype), ((rows[0],), "i64")], ((), dtype)), [x, labels]
    else:
        axis = len(shape) - 1
        text = single_op(name, [(shape, dtype)], (rows, dtype), f"axes = array<i64: {axis}>")
        inputs = [x if dtype != "i32" else (x * 100).astype(np.int32)]
    close_to_reference(text, inputs, rtol=1e-5 if tight else 2**-7, atol=1e-6 if tight else 2**-7)


def test_exp_range_edges():
    """Around the overflow (88.72) and flush-to-zero (-86.5) thresholds, where the
    rounding-constant trick puts n at 128 and -125, and at the special values."""
    edges = np.array([88.72283, 88.7228, 88.72284, 88.5, 88.0, 87.9, -86.5, -86.49, -86.51, -87.0, -0.0, 0.0,
                      1e-30, -1e-30, 0.34657359, -0.34657359, 0.5, -0.5, np.inf, -np.inf, np.nan], np.float32)
    x = np.concatenate([edges, np.linspace(-86.5, 88.72, 4000, dtype=np.float32)])
    got = compile_for_test(single_op("graph.exp", [(x.shape, "f32")], (x.shape, "f32")))(x)[0]
    want = np.exp(x.astype(np.float64))
    finite = np.isfinite(want) & (x >= -86.5) & (want < np.finfo(np.float32).max)
    ulps = np.abs(got[finite] - want[finite]) / np.spacing(want[finite].astype(np.float32))
    assert ulps.max() <= 1.5
    assert np.isnan(got[np.isnan(x)]).all()
    assert (got[x > 88.72283] == np.inf).all() and (got[x < -86.5] == 0).all()


def gpu_tiles_on_the_cpu(text: str):
    """The program with the GPU's tile choices (lower-graph-to-tile{matmul_min_tiles=132}),
    run by the CPU: the row kernels' GPU-only paths, checked without a GPU."""
    from strata.targets.cpu import CpuPipelinePass

    tiles = "lower-graph-to-tile{matmul_min_tiles=132 tile_elements=2048}"
    return compile_with_steps(text, CpuPipelinePass.STEPS.replace("lower-graph-to-tile", tiles))


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f64"])
@pytest.mark.parametrize("classes", [4096, 5001, 2049], ids=lambda c: f"{c}-classes")
def test_cross_entropy_column_partials(classes, dtype):
    """The GPU's cross-entropy over rows of several column tiles keeps a maximum and a sum
    per column of the tile, reduced once (RowKernel.column_partial_max_sum), the partial
    last tile taken per row: whole tiles only, a partial last one, a last one of one
    column; rows with -inf logits (one all -inf but the label's, one starting with a long
    -inf run), a large outlier, f32/bf16/f64."""
    from strata.support.dtypes import NUMPY_DTYPES

    rows = 9
    rng = np.random.default_rng(5)
    logits = (rng.standard_normal((rows, classes)) * 4).astype(NUMPY_DTYPES[dtype])
    labels = rng.integers(0, classes, rows)
    logits[1, :] = -np.inf
    logits[1, labels[1]] = 0
    logits[2, : classes - 5] = -np.inf
    labels[2] = classes - 1
    logits[3, classes // 2] = 60
    t, lt = f"tensor<{rows}x{classes}x{dtype}>", f"tensor<{rows}xi64>"
    text = (f"func.func @f(%x: {t}, %l: {lt}) -> tensor<{dtype}> {{\n"
            f"  %0 = graph.cross_entropy %x, %l : ({t}, {lt}) -> tensor<{dtype}>\n  func.return %0 : tensor<{dtype}>\n}}\n")
    got = gpu_tiles_on_the_cpu(text)(logits, labels)
    want = strata.interpret(text, logits, labels)
    tolerance = {"f32": 1e-6, "bf16": 1e-2, "f64": 1e-12}[dtype]
    np.testing.assert_allclose(np.asarray(got[0], np.float64), np.asarray(want[0], np.float64), rtol=tolerance)

"""Reductions over axes that are not the last (reductions.py): merged neighbouring axes
and column kernels, against the reference interpreter. Shapes put edge tiles on both tile
axes (columns past the 256-wide tile, rows past a step), reduced axes apart, and size-1
and zero-size axes among the merged ones."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata.check import compare
from strata.support.dtypes import NUMPY_DTYPES

from targets import compile_for_test
from programs import random_array, single_op

CASES = [
    ((4, 6, 300), (0, 1)),
    ((37, 515), (0,)),
    ((3, 1, 5, 7, 9), (0, 1, 2)),
    ((5, 6, 7, 8), (0, 2)),
    ((5, 6, 7, 8), (1, 3)),
    ((2, 70, 1, 3), (1, 2)),
    ((1, 9, 1), (0, 2)),
    ((0, 5, 3), (0, 1)),
    ((4, 0, 3), (1,)),
]


def check(name: str, dtype: str, shape, axes, x=None) -> None:
    out = tuple(d for a, d in enumerate(shape) if a not in axes)
    listed = ", ".join(map(str, axes))
    text = single_op(f"graph.{name}", [(shape, dtype)], (out, dtype), f"axes = array<i64: {listed}>")
    x = random_array(np.random.default_rng(3), shape, dtype) if x is None else x
    got, want = compile_for_test(text)(x), strata.interpret(text, x)
    for comparison, g, w in zip(compare(got, want), got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert comparison.ok, f"{comparison}\n{text}"


@pytest.mark.parametrize("shape, axes", CASES, ids=str)
@pytest.mark.parametrize("name, dtype", [("reduce_sum", "f32"), ("reduce_mean", "f64"), ("reduce_max", "f32"),
                                         ("reduce_sum", "i64"), ("reduce_mean", "f16")], ids=str)
def test_column_reductions(name, dtype, shape, axes):
    check(name, dtype, shape, axes)


def test_column_max_propagates_nan():
    x = random_array(np.random.default_rng(4), (40, 300), "f32")
    x[17, 5] = x[39, 299] = np.nan
    check("reduce_max", "f32", (40, 300), (0,), x)


def test_column_sum_accumulates_in_f64():
    """2^20 rows of one column: ones after a 1e8 sum exactly in f64 (not in f32)."""
    x = np.ones((2**20, 2), NUMPY_DTYPES["f32"])
    x[0] = 1e8
    text = single_op("graph.reduce_sum", [((2**20, 2), "f32")], ((2,), "f32"), "axes = array<i64: 0>")
    np.testing.assert_array_equal(compile_for_test(text)(x)[0], np.float32(1e8 + 2**20 - 1))

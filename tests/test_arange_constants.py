"""An integer constant counting 0, 1, 2, ... along one axis (a one-hot's column ids) is
computed by elementwise kernels (tile.iota plus the tile's origin) instead of loaded: the
results match the reference for ids along the last and a middle axis, across several
tiles (origins past 0), for i32 and i64 ids, and a constant that only starts like a count
is still read as it is. On the GPU (STRATA_TEST_TARGET=cuda) the same programs run there."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata.check import compare
from strata.support.dtypes import NUMPY_DTYPES
from targets import compile_for_test


def one_hot_text(rows: int, width: int, ids: str, data: str, counted: list[int], axis: int = -1) -> str:
    """(labels, x) -> x - one_hot(labels) * 2 with the column ids `counted` as a constant."""
    if axis == -1:
        label_shape, id_shape, shape = (rows, 1), (1, width), (rows, width)
        ids_literal = f"[{counted}]"
    else:  # ids along the middle axis of [2, width, rows]
        label_shape, id_shape, shape = (2, 1, rows), (1, width, 1), (2, width, rows)
        ids_literal = "[" + ", ".join(f"[{c}]" for c in counted) + "]"
        ids_literal = f"[{ids_literal}]"
    t = lambda s, e: f"tensor<{'x'.join(map(str, s))}x{e}>"  # noqa: E731
    return (
        f"func.func @main(%l: {t(label_shape, ids)}, %x: {t(shape, data)}) -> {t(shape, data)} {{\n"
        f"  %ids = graph.constant dense<{ids_literal}> : {t(id_shape, ids)}\n"
        f"  %c = graph.compare %l, %ids {{predicate = \"eq\"}} : ({t(label_shape, ids)}, {t(id_shape, ids)}) -> {t(shape, 'i1')}\n"
        f"  %f = graph.cast %c : ({t(shape, 'i1')}) -> {t(shape, data)}\n"
        f"  %s = graph.scale %f {{value = 2.0 : f64}} : ({t(shape, data)}) -> {t(shape, data)}\n"
        f"  %y = graph.sub %x, %s : ({t(shape, data)}, {t(shape, data)}) -> {t(shape, data)}\n"
        f"  func.return %y : {t(shape, data)}\n}}\n"
    )


CASES = {
    # rows, width, ids, data, axis
    "odd-i32-f32": (7, 17, "i32", "f32", -1),
    "several-tiles-i64-bf16": (3, 5001, "i64", "bf16", -1),
    "middle-axis-i32-f64": (33, 9, "i32", "f64", 1),
    "one-row-i32-f16": (1, 2049, "i32", "f16", -1),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("counting", [True, False])
def test_one_hot_of_counted_ids_matches_the_reference(case, counting):
    rows, width, ids, data, axis = CASES[case]
    counted = list(range(width)) if counting else [0, *range(2, width + 1)]  # 0, 2, 3, ...: no count
    text = one_hot_text(rows, width, ids, data, counted, axis)
    rng = np.random.default_rng(0)
    label_shape, shape = ((rows, 1), (rows, width)) if axis == -1 else ((2, 1, rows), (2, width, rows))
    labels = rng.integers(0, width + 1, label_shape).astype(NUMPY_DTYPES[ids])
    x = rng.standard_normal(shape).astype(NUMPY_DTYPES[data])
    want = strata.interpret(text, labels, x)
    for comparison in compare(compile_for_test(text)(labels, x), want):
        assert comparison.ok, comparison

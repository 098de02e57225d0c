"""Splat constants stay one stored element (support.dtypes.is_compact_splat) from the
parser through the passes, the lowering and both runtimes; xDSL 0.74 alone would fill
`dense<1.0> : tensor<50000000xf32>` out to every element (gigabytes, seconds)."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata.dialects import graph, tile
from strata.dialects.context import parse_module
from strata.support.dtypes import dense_to_numpy, is_compact_splat, numpy_to_dense, splat_value
from strata.targets.passes import run_pipeline
from xdsl.dialects.builtin import TensorType, f32, i1

HUGE = """func.func @f() -> tensor<1000000000xf32> {
  %c = "graph.constant"() <{value = dense<1.0> : tensor<1000000000xf32>}> : () -> tensor<1000000000xf32>
  func.return %c : tensor<1000000000xf32>
}
"""


def constants(module, op_type=graph.ConstantOp):
    return [op for op in module.walk() if isinstance(op, op_type)]


def test_a_billion_element_splat_parses_prints_and_lowers_as_one_element():
    module = parse_module(HUGE)
    (c,) = constants(module)
    assert is_compact_splat(c.value) and len(c.value.data.data) == 4
    assert "dense<1.000000e+00> : tensor<1000000000xf32>" in str(module)
    run_pipeline(module, "canonicalize,cse,fuse-patterns,fuse-elementwise,lower-graph-to-tile")
    (buffer,) = constants(module, tile.BufferOp)
    assert is_compact_splat(buffer.init) and len(buffer.init.data.data) == 4


@pytest.mark.parametrize(
    "literal, expected",
    [
        ("dense<-2.5> : tensor<3x4xf32>", np.full((3, 4), -2.5, np.float32)),
        ("dense<true> : tensor<5xi1>", np.ones(5, bool)),
        ("dense<-7> : tensor<6xi64>", np.full(6, -7, np.int64)),
        ('dense<"0x0000803F"> : tensor<4xf32>', np.ones(4, np.float32)),
        ("dense<[1.0, 2.0]> : tensor<2xf32>", np.array([1, 2], np.float32)),  # not a splat
        ("dense<3.0> : tensor<f32>", np.array(3, np.float32)),  # one element: stored as is
    ],
)  # fmt: skip
def test_splat_literals_mean_what_they_say(literal, expected):
    text = f"""func.func @f() -> {literal.split(' : ')[1]} {{
  %c = graph.constant {literal}
  func.return %c : {literal.split(' : ')[1]}
}}"""
    module = parse_module(text)
    (c,) = constants(module)
    assert is_compact_splat(c.value) == (expected.size > 1 and len(set(expected.reshape(-1).tolist())) == 1)
    value = dense_to_numpy(c.value)
    assert value.dtype == expected.dtype and value.shape == expected.shape and np.array_equal(value, expected)
    assert value.flags.writeable
    (reparsed,) = constants(parse_module(str(module)))
    assert reparsed.value == c.value


def test_numpy_to_dense_stores_a_splat_compactly_and_keeps_signed_zeros_apart():
    t = TensorType(f32, [4, 4])
    assert is_compact_splat(numpy_to_dense(np.float32(2), t))
    assert is_compact_splat(numpy_to_dense(np.full((4, 4), 2, np.float32), t))
    assert splat_value(numpy_to_dense(np.full((4, 4), 2, np.float32), t)) == 2
    mixed = np.zeros((4, 4), np.float32)
    mixed[1, 1] = -0.0
    assert not is_compact_splat(numpy_to_dense(mixed, t))
    assert np.array_equal(np.signbit(dense_to_numpy(numpy_to_dense(mixed, t))), np.signbit(mixed))
    assert dense_to_numpy(numpy_to_dense(np.array(True), TensorType(i1, [3]))).tolist() == [True] * 3


@pytest.mark.parametrize("target", ["reference", "cpu"])
def test_a_splat_constant_runs(target):
    n = 1 << 20
    text = f"""func.func @f(%x: tensor<{n}xf32>) -> (tensor<{n}xf32>, tensor<{n}xf32>) {{
  %c = graph.constant dense<1.5> : tensor<{n}xf32>
  %y = graph.add %x, %c : (tensor<{n}xf32>, tensor<{n}xf32>) -> tensor<{n}xf32>
  func.return %y, %c : tensor<{n}xf32>, tensor<{n}xf32>
}}"""
    x = np.arange(n, dtype=np.float32)
    run = strata.interpret if target == "reference" else strata.compile(text, target=target)
    y, c = run(text, x) if target == "reference" else run(x)
    assert np.array_equal(y, x + np.float32(1.5)) and np.array_equal(c, np.full(n, 1.5, np.float32))

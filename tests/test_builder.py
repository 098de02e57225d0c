"""The builder API: shapes inferred, verified modules out, clear errors in user code."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata import ops
from strata.support.dtypes import NUMPY_DTYPES


def rand(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def test_mlp_builds_verified_module_with_named_args():
    g = strata.Graph("mlp")
    x = g.input("x", (7, 16))
    w = g.param("w", (33, 16))
    b = g.param("b", (33,))
    g.output(ops.relu(ops.matmul(x, w, transpose_b=True) + b))
    module = g.build()
    text = str(module)
    assert 'graph.name = "w", graph.role = "param"' in text
    assert 'graph.name = "x", graph.role = "input"' in text
    rng = np.random.default_rng(0)
    args = [rand(rng, (7, 16)), rand(rng, (33, 16)), rand(rng, (33,))]
    (out,) = strata.interpret(module, *args)
    np.testing.assert_allclose(out, np.maximum(args[0] @ args[1].T + args[2], 0), rtol=1e-5)


def test_operators_and_scalars_match_numpy():
    g = strata.Graph("f")
    x = g.input("x", (5, 7), "f64")
    y = g.input("y", (7, 3), "f64")
    g.output(
        -x + 1.0,
        2.0 - x,
        x * 3.0,
        3.0 * x,
        x / 4.0,
        1.0 / (x * x + 1.0),
        x @ y,
        x.T,
        x[1:4, ::2],
        x.reshape(7, 5),
        x.transpose(1, 0),
    )
    rng = np.random.default_rng(1)
    xv, yv = rand(rng, (5, 7), np.float64), rand(rng, (7, 3), np.float64)
    outs = strata.interpret(g.build(), xv, yv)
    expected = [
        -xv + 1, 2 - xv, xv * 3, 3 * xv, xv / 4, 1 / (xv * xv + 1), xv @ yv, xv.T,
        xv[1:4, ::2], xv.reshape(7, 5), xv.T,
    ]  # fmt: skip
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_every_op_function_builds():
    g = strata.Graph("all")
    x = g.input("x", (2, 3, 8))
    gamma = g.param("gamma", (8,))
    ids = g.input("ids", (4,), "i64")
    labels = g.input("labels", (3,), "i32")
    table = g.param("table", (10, 8))
    logits = g.input("logits", (3, 10))
    unary = [ops.neg, ops.abs, ops.exp, ops.log, ops.sqrt, ops.rsqrt, ops.tanh,
             ops.sigmoid, ops.relu, ops.silu, ops.erf, ops.gelu]  # fmt: skip
    binary = [ops.add, ops.sub, ops.mul, ops.div, ops.maximum, ops.minimum, ops.pow]
    outs = [f(x) for f in unary] + [f(x, gamma) for f in binary]
    outs += [
        ops.gelu(x, "tanh"),
        ops.scale(x, 0.5),
        ops.select(ops.compare(x, gamma, "lt"), x, gamma),
        ops.cast(x, "i32"),
        ops.dropout(x, 0.1, 7),
        ops.reduce_sum(x, -1, keepdims=True),
        ops.reduce_mean(x, (0, 2)),
        ops.reduce_max(x, 1),
        ops.matmul(x, x, transpose_b=True, alpha=0.5),
        ops.softmax(x, axis=1),
        ops.log_softmax(x),
        ops.layernorm(x, gamma, gamma),
        ops.rmsnorm(x, gamma),
        ops.attention(x, x, x, scale=0.25, causal=True),
        ops.embedding(table, ids),
        ops.cross_entropy(logits, labels),
        ops.broadcast_to(gamma, (5, 8)),
        ops.concat([x, x], axis=-1),
        ops.slice_(x, (0, 1, 0), (2, 3, 8), (1, 1, 4)),
        ops.reshape(x, (6, 8)),
        ops.transpose(x, (2, 0, 1)),
        g.constant(np.arange(3), "i64"),
    ]
    g.output(*outs)
    module = g.build()
    names = {op.name for op in module.walk() if op.name.startswith("graph.")}
    from strata.dialects.graph import GRAPH_OPS

    assert names == {op.name for op in GRAPH_OPS}


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda g: ops.matmul(g.input("a", (4, 8)), g.input("b", (9, 3))),
         r"graph.matmul: contraction sizes differ.*tensor<4x8xf32>, tensor<9x3xf32>"),
        (lambda g: g.input("a", (4, 8)) + g.input("b", (3, 8)),
         r"graph.add: shapes \[4, 8\] and \[3, 8\] do not broadcast"),
        (lambda g: g.input("a", (4, 8)) + g.input("b", (4, 8), "f64"),
         r"graph.add: rhs has element type f64, expected f32"),
        (lambda g: g.input("a", (4, 8)).reshape(5, 7),
         r"graph.reshape: element count changes"),
        (lambda g: ops.reduce_sum(g.input("a", (4, 8)), 2),
         r"graph.reduce_sum: axis 2 is out of range for rank 2"),
        (lambda g: ops.exp(g.input("a", (4,), "i32")),
         r"graph.exp: x must have a float element type"),
        (lambda g: g.input("a", (4, 8))[::-1],
         r"graph.slice: step -1 on axis 0 must be >= 1"),
    ],
)  # fmt: skip
def test_shape_errors_name_op_and_types(make, message):
    with pytest.raises(strata.BuildError, match=message):
        make(strata.Graph("bad"))


def test_mixing_graphs_is_an_error():
    a, b = strata.Graph("a"), strata.Graph("b")
    with pytest.raises(strata.BuildError, match="not a tensor of graph @a"):
        ops.add(a.input("x", (2,)), b.input("y", (2,)))


def test_graph_without_outputs_and_built_graph_are_errors():
    g = strata.Graph("g")
    x = g.input("x", (2,))
    with pytest.raises(strata.BuildError, match="no outputs"):
        g.build()
    g.output(ops.exp(x))
    g.build()
    with pytest.raises(strata.BuildError, match="already built"):
        ops.exp(x)


def test_unknown_dtype_is_rejected():
    with pytest.raises(strata.BuildError, match="input 'x' of graph @g: unknown element type 'f8'"):
        strata.Graph("g").input("x", (2,), "f8")


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda g: ops.cast(g.input("x", (4,)), "q7"), r"graph.cast: unknown element type 'q7'"),
        (lambda g: g.input("x", (-4, 8)), r"input 'x' of graph @bad: shape must be non-negative ints"),
        (lambda g: g.input("x", (4.5, 8)), r"input 'x' of graph @bad: shape must be ints"),
        (lambda g: g.input(3, (4,)), r"input of graph @bad: the name must be a string"),
        (lambda g: ops.softmax(g.input("x", (4, 8)), axis=5), r"graph.softmax: axis 5 is out of range"),
        (lambda g: ops.softmax(g.input("x", (4, 8)), axis="a"), r"graph.softmax: axis must be a number"),
        (lambda g: ops.reduce_sum(g.input("x", (4,)), axes="a"), r"graph.reduce_sum: axes must be ints"),
        (lambda g: g.input("x", (4, 8)).transpose(0, 0), r"graph.transpose: permutation \[0, 0\]"),
        (lambda g: g.input("x", (4, 8)).transpose(1.5, 0), r"graph.transpose: permutation must be ints"),
        (lambda g: g.input("x", (4, 8)).reshape(5, 4), r"graph.reshape: element count changes"),
        (lambda g: g.input("x", (4, 8)).reshape(-1, 5), r"graph.reshape: cannot infer the -1"),
        (lambda g: g.input("x", (4, 8)).reshape(-2, 4), r"graph.reshape of tensor<4x8xf32>: shape must be"),
        (lambda g: ops.broadcast_to(g.input("x", (4, 8)), (3, 8)), r"graph.broadcast_to: .* does not broadcast"),
        (lambda g: ops.broadcast_to(g.input("x", (8,)), ("a", 8)), r"graph.broadcast_to of .*: shape must be"),
        (lambda g: g.input("x", (4, 8)) + g.input("y", (3, 8)), r"graph.add: shapes \[4, 8\] and \[3, 8\]"),
        (lambda g: g.input("x", (4,)) + "a", r"graph.add: an operand must be a strata.Tensor or a Python number"),
        (lambda g: g.constant("abc"), r"graph.constant: the value must be numeric"),
        (lambda g: g.constant([1, [2]]), r"graph.constant: "),
        (lambda g: ops.exp(3.0), r"graph.exp: 3.0 is not a strata.Tensor"),
        (lambda g: ops.attention(*(g.input(n, (4, 8)) for n in "qkv"), scale="x"), r"graph.attention: scale must be a number"),
        (lambda g: ops.dropout(g.input("x", (4,)), None, 0), r"graph.dropout: p must be a number"),
        (lambda g: ops.concat(g.input("x", (4,)), 0), r"graph.concat: needs a non-empty list"),
        (lambda g: ops.concat([g.input("x", (4, 8)), g.input("y", (4, 7))], axis=0), r"graph.concat: operand #1"),
        (lambda g: ops.slice_(g.input("x", (4,)), ["a"], [2]), r"graph.slice: starts must be ints"),
    ],
)  # fmt: skip
def test_builder_mistakes_are_build_errors_naming_the_op(make, message):
    with pytest.raises(strata.BuildError, match=message):
        make(strata.Graph("bad"))


def test_reshape_takes_a_shape_tuple_or_sizes_and_infers_minus_one():
    g = strata.Graph("r")
    x = g.input("x", (4, 8))
    assert x.reshape((8, 4)).shape == (8, 4)
    assert x.reshape([2, 16]).shape == (2, 16)
    assert x.reshape(8, 4).shape == (8, 4)
    assert x.reshape(-1, 2).shape == (16, 2)
    assert x.transpose((1, 0)).shape == (8, 4)
    g.output(x.reshape((8, 4)))
    data = np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(strata.interpret(g.build(), data)[0], data.reshape(8, 4))


def test_build_is_idempotent_and_a_built_graph_joins_other_modules():
    g, h = strata.Graph("g"), strata.Graph("h")
    g.output(ops.exp(g.input("x", (3,))))
    h.output(ops.tanh(h.input("x", (3,))))
    first = g.build()
    assert g.build() is first
    both = strata.build_module(g, h)  # g's function is copied, `first` keeps its own
    assert len(list(first.ops)) == 1 and len(list(both.ops)) == 2
    x = np.linspace(-1, 1, 3, dtype=np.float32)
    np.testing.assert_allclose(strata.interpret(both, x, entry="h")[0], np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(strata.interpret(first, x)[0], np.exp(x), rtol=1e-6)


def test_build_module_with_two_functions_and_entry_selection():
    f, h = strata.Graph("f"), strata.Graph("h")
    f.output(ops.exp(f.input("x", (3,))))
    h.output(ops.tanh(h.input("x", (3,))))
    module = strata.build_module(f, h)
    x = np.linspace(-1, 1, 3, dtype=np.float32)
    np.testing.assert_allclose(strata.interpret(module, x)[0], np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(strata.interpret(module, x, entry="h")[0], np.tanh(x), rtol=1e-6)


def test_constant_of_a_bf16_array():
    """A bf16 numpy array (ml_dtypes) is a constant like any other (found by strata-fuzz)."""
    value = np.array([[1.5, -2.25], [0.0, 3.0]], NUMPY_DTYPES["bf16"])
    g = strata.Graph("c")
    x = g.input("x", (2, 2), "bf16")
    g.output(x + g.constant(value, "bf16"))
    module = g.build()
    x_value = np.ones((2, 2), NUMPY_DTYPES["bf16"])
    (got,) = strata.compile(module)(x_value)
    np.testing.assert_array_equal(got, (x_value.astype(np.float32) + value.astype(np.float32)).astype(value.dtype))

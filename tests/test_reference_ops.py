"""Tests of the numpy reference interpreter (`strata.interpret`) for every `graph` op.

Every test writes a program in the generic MLIR form of the op catalogue
(docs/graph-dialect.md), runs it with `strata.interpret` and compares the
results against an independent numpy formula written here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

import strata
from strata.support.dtypes import NUMPY_DTYPES

# ---------------------------------------------------------------------------
# Element types and tolerances
# ---------------------------------------------------------------------------

DTYPES = NUMPY_DTYPES
ELEMENT_TYPES = {dtype: name for name, dtype in DTYPES.items()}

FLOATS = ["f32", "f64"]
INTS = ["i32", "i64"]


def tolerance(dtype: np.dtype, loose: bool = False) -> dict[str, float]:
    """assert_allclose tolerances; empty for types compared exactly.

    `loose` is for transcendental chains and accumulations (sums, matmuls, norms).
    """
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return {"rtol": 1e-12, "atol": 1e-12}
    if dtype == np.float32:
        return {"rtol": 1e-4, "atol": 1e-5} if loose else {"rtol": 1e-5, "atol": 1e-6}
    if dtype == np.float16:  # one f16 ulp
        return {"rtol": 2.0**-10, "atol": 2.0**-14}
    if dtype == DTYPES["bf16"]:  # one bf16 ulp
        return {"rtol": 2.0**-7, "atol": 2.0**-14}
    return {}


def check(actual, expected, loose: bool = False, exact: bool = False) -> None:
    """`actual` must be an ndarray of exactly `expected`'s dtype and shape, with close values."""
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray), f"expected an ndarray, got {type(actual)}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    tol = {} if exact else tolerance(expected.dtype, loose)
    if tol:
        np.testing.assert_allclose(
            actual.astype(np.float64), expected.astype(np.float64), **tol
        )
    else:
        np.testing.assert_array_equal(actual, expected)


# ---------------------------------------------------------------------------
# Writing programs in generic MLIR form
# ---------------------------------------------------------------------------


def tensor_type(shape, dtype) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{ELEMENT_TYPES[np.dtype(dtype)]}>"


class Raw(str):
    """A property value written verbatim (e.g. a dense elements attribute)."""


def float_literal(value: float) -> str:
    text = repr(float(value))
    if "." not in text:  # MLIR float literals need a decimal point: 1e-05 -> 1.0e-05
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0e{exponent}" if exponent else f"{mantissa}.0"
    return text


def dense_attr(array, splat: bool = False) -> Raw:
    """`dense<...> : tensor<...>` holding `array` (only its first element when `splat`)."""
    array = np.asarray(array)

    def element(value) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        return float_literal(value)

    def nested(a: np.ndarray) -> str:
        if a.ndim == 0:
            return element(a.item())
        return "[" + ", ".join(nested(sub) for sub in a) + "]"

    body = element(array.flat[0].item()) if splat else nested(array)
    return Raw(f"dense<{body}> : {tensor_type(array.shape, array.dtype)}")


def format_property(value) -> str:
    if isinstance(value, Raw):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{float_literal(value)} : f64"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "array<i64: " + ", ".join(str(int(v)) for v in value) + ">"
    raise TypeError(f"unsupported property value {value!r}")


def format_properties(properties: dict) -> str:
    if not properties:
        return ""
    items = ", ".join(f"{key} = {format_property(v)}" for key, v in properties.items())
    return f" <{{{items}}}>"


@dataclass(frozen=True)
class Value:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.dtype)


class Function:
    """Builds one `func.func` whose body is a sequence of generic `graph.*` ops."""

    def __init__(self, *arg_types, name: str = "main"):
        self.name = name
        self.args = [
            Value(f"%arg{i}", tuple(shape), np.dtype(dtype))
            for i, (shape, dtype) in enumerate(arg_types)
        ]
        self._lines: list[str] = []

    def op(self, name: str, operands, shape, dtype, **properties) -> Value:
        result = Value(f"%{len(self._lines)}", tuple(shape), np.dtype(dtype))
        names = ", ".join(v.name for v in operands)
        types = ", ".join(v.type for v in operands)
        self._lines.append(
            f'{result.name} = "graph.{name}"({names}){format_properties(properties)}'
            f" : ({types}) -> {result.type}"
        )
        return result

    def text(self, *results: Value) -> str:
        args = ", ".join(f"{a.name}: {a.type}" for a in self.args)
        result_types = ", ".join(r.type for r in results)
        signature = result_types if len(results) == 1 else f"({result_types})"
        body = "".join(f"    {line}\n" for line in self._lines)
        returned = ", ".join(r.name for r in results)
        return (
            f"  func.func @{self.name}({args}) -> {signature} {{\n{body}"
            f"    func.return {returned} : {result_types}\n  }}"
        )


def module(*functions: str) -> str:
    return "builtin.module {\n" + "\n".join(functions) + "\n}\n"


def interpret(text: str, *inputs, entry=None) -> tuple:
    outs = strata.interpret(text, *inputs, entry=entry)
    assert isinstance(outs, tuple), f"interpret must return a tuple, got {type(outs)}"
    return outs


def single_op_program(name: str, inputs, shape, dtype, **properties) -> str:
    """A module with `@main(inputs...)` returning the result of one `graph.<name>` op."""
    func = Function(*[(x.shape, x.dtype) for x in inputs])
    return module(func.text(func.op(name, func.args, shape, dtype, **properties)))


def run_op(name: str, inputs, shape, dtype, **properties) -> np.ndarray:
    outs = interpret(single_op_program(name, inputs, shape, dtype, **properties), *inputs)
    assert len(outs) == 1
    return outs[0]


# ---------------------------------------------------------------------------
# Random inputs and numpy reference formulas
# ---------------------------------------------------------------------------


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def normal(rng, shape, dtype, scale: float = 1.0) -> np.ndarray:
    return np.asarray(scale * rng.standard_normal(shape)).astype(dtype)


def uniform(rng, shape, dtype, low: float, high: float) -> np.ndarray:
    return np.asarray(rng.uniform(low, high, shape)).astype(dtype)


def integers(rng, shape, dtype, low: int = -100, high: int = 100) -> np.ndarray:
    return np.asarray(rng.integers(low, high, shape)).astype(dtype)


def nonzero(rng, shape, dtype) -> np.ndarray:
    """Values with magnitude in [0.5, 2) and a random sign (safe divisors)."""
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return np.asarray(sign * rng.uniform(0.5, 2.0, shape)).astype(dtype)


erf = np.vectorize(math.erf, otypes=[np.float64])


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gelu_none(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def logsumexp(x, axis=-1, keepdims=False):
    m = x.max(axis=axis, keepdims=True)
    out = m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def layernorm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def rmsnorm(x, gamma, eps=1e-6):
    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps) * gamma


def swap_last(x):
    return np.swapaxes(x, -1, -2)


def attention(q, k, v, scale, causal):
    scores = scale * (q @ swap_last(k))
    if causal:
        sq, sk = scores.shape[-2:]
        above = np.arange(sk)[None, :] > np.arange(sq)[:, None]
        scores = np.where(above, -np.inf, scores)
    return softmax(scores, axis=-1) @ v


def cross_entropy(logits, labels):
    picked = np.take_along_axis(logits, labels[:, None].astype(np.int64), axis=1)[:, 0]
    return np.mean(logsumexp(logits, axis=-1) - picked)


def dropout(x: np.ndarray, p: float, seed: int) -> np.ndarray:
    """SplitMix64 keyed by (seed, flat row-major index), all arithmetic mod 2**64."""
    index = np.arange(x.size, dtype=np.uint64)
    z = np.uint64(seed % 2**64) + (index + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float64) * 2.0**-24
    keep = (u >= p).reshape(x.shape)
    factor = x.dtype.type(1.0 / (1.0 - p))
    return np.where(keep, x * factor, x.dtype.type(0))


def float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Truncate toward zero, saturate to the integer range, NaN -> 0."""
    info = np.iinfo(dtype)

    def convert(v: float) -> int:
        if math.isnan(v):
            return 0
        if v >= info.max:
            return int(info.max)
        if v <= info.min:
            return int(info.min)
        return int(v)

    flat = [convert(float(v)) for v in x.astype(np.float64).flat]
    return np.array(flat, dtype=dtype).reshape(x.shape)


def broadcast_shape(*shapes) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))


def reduced_shape(shape, axes, keepdims) -> tuple[int, ...]:
    axes = {a % len(shape) for a in axes}
    return tuple(
        1 if i in axes else d for i, d in enumerate(shape) if keepdims or i not in axes
    )


# ---------------------------------------------------------------------------
# Elementwise ops
# ---------------------------------------------------------------------------

# op -> (numpy formula on float64, input sampler, loose tolerance)
UNARY_FLOAT_OPS = {
    "neg": (np.negative, "normal", False),
    "abs": (np.abs, "normal", False),
    "relu": (lambda x: np.maximum(x, 0.0), "normal", False),
    "exp": (np.exp, "normal", True),
    "log": (np.log, "positive", True),
    "sqrt": (np.sqrt, "positive", True),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), "positive", True),
    "tanh": (np.tanh, "normal", True),
    "sigmoid": (sigmoid, "normal", True),
    "silu": (lambda x: x * sigmoid(x), "normal", True),
    "erf": (erf, "normal", True),
}
UNARY_SHAPES = [(), (1,), (7,), (17, 33), (3, 1, 5)]


def sample_unary(rng, kind, shape, dtype):
    if kind == "positive":
        return uniform(rng, shape, dtype, 0.1, 10.0)
    return normal(rng, shape, dtype, scale=3.0)


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
@pytest.mark.parametrize("op", sorted(UNARY_FLOAT_OPS))
def test_unary_float(rng, op, elem, shape):
    formula, kind, loose = UNARY_FLOAT_OPS[op]
    dtype = DTYPES[elem]
    x = sample_unary(rng, kind, shape, dtype)
    out = run_op(op, [x], shape, dtype)
    check(out, formula(x.astype(np.float64)).astype(dtype), loose=loose)


UNARY_INT_OPS = {
    "neg": np.negative,
    "abs": np.abs,
    "relu": lambda x: np.maximum(x, 0),
}


@pytest.mark.parametrize("shape", [(7,), (17, 33)], ids=str)
@pytest.mark.parametrize("elem", INTS)
@pytest.mark.parametrize("op", sorted(UNARY_INT_OPS))
def test_unary_int(rng, op, elem, shape):
    dtype = DTYPES[elem]
    x = integers(rng, shape, dtype)
    out = run_op(op, [x], shape, dtype)
    check(out, UNARY_INT_OPS[op](x).astype(dtype))


@pytest.mark.parametrize("shape", [(7,), (17, 33), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("elem", FLOATS)
@pytest.mark.parametrize("approximate", [None, "none", "tanh"])
def test_gelu(rng, approximate, elem, shape):
    dtype = DTYPES[elem]
    x = normal(rng, shape, dtype, scale=3.0)
    properties = {} if approximate is None else {"approximate": approximate}
    out = run_op("gelu", [x], shape, dtype, **properties)
    formula = gelu_tanh if approximate == "tanh" else gelu_none
    check(out, formula(x.astype(np.float64)).astype(dtype), loose=True)


BINARY_SHAPES = [
    ((7, 17), (7, 17)),
    ((7, 1, 5), (4, 1)),
    ((4, 1), (7, 1, 5)),
    ((1,), (33,)),
    ((), (4,)),
    ((17, 1), (1, 33)),
    ((2, 3, 4, 5), (5,)),
]

# op -> (numpy formula, lhs sampler, rhs sampler, loose tolerance)
BINARY_FLOAT_OPS = {
    "add": (np.add, "normal", "normal", False),
    "sub": (np.subtract, "normal", "normal", False),
    "mul": (np.multiply, "normal", "normal", False),
    "div": (np.divide, "normal", "nonzero", False),
    "maximum": (np.maximum, "normal", "normal", False),
    "minimum": (np.minimum, "normal", "normal", False),
    "pow": (np.power, "base", "exponent", True),
}


def sample_binary(rng, kind, shape, dtype):
    if kind == "nonzero":
        return nonzero(rng, shape, dtype)
    if kind == "base":
        return uniform(rng, shape, dtype, 0.5, 2.0)
    if kind == "exponent":
        return uniform(rng, shape, dtype, -2.0, 2.0)
    return normal(rng, shape, dtype)


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
@pytest.mark.parametrize("op", sorted(BINARY_FLOAT_OPS))
def test_binary_float(rng, op, elem, shapes):
    formula, lhs_kind, rhs_kind, loose = BINARY_FLOAT_OPS[op]
    dtype = DTYPES[elem]
    lhs = sample_binary(rng, lhs_kind, shapes[0], dtype)
    rhs = sample_binary(rng, rhs_kind, shapes[1], dtype)
    out = run_op(op, [lhs, rhs], broadcast_shape(*shapes), dtype)
    expected = formula(lhs.astype(np.float64), rhs.astype(np.float64)).astype(dtype)
    check(out, expected, loose=loose)


BINARY_INT_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@pytest.mark.parametrize("shapes", BINARY_SHAPES[:3], ids=str)
@pytest.mark.parametrize("elem", INTS)
@pytest.mark.parametrize("op", sorted(BINARY_INT_OPS))
def test_binary_int(rng, op, elem, shapes):
    dtype = DTYPES[elem]
    lhs = integers(rng, shapes[0], dtype)
    rhs = integers(rng, shapes[1], dtype)
    out = run_op(op, [lhs, rhs], broadcast_shape(*shapes), dtype)
    check(out, BINARY_INT_OPS[op](lhs, rhs).astype(dtype))


@pytest.mark.parametrize("op", ["div", "pow"])
@pytest.mark.parametrize("elem", INTS)
def test_div_and_pow_reject_integers(rng, op, elem):
    dtype = DTYPES[elem]
    lhs = integers(rng, (4,), dtype, 1, 9)
    rhs = integers(rng, (4,), dtype, 1, 9)
    with pytest.raises(strata.IRError, match=rf"graph\.{op}"):
        interpret(single_op_program(op, [lhs, rhs], (4,), dtype), lhs, rhs)


@pytest.mark.parametrize("value", [0.5, -2.0, 1e-3, 0.0])
@pytest.mark.parametrize("shape", [(), (7,), (17, 33)], ids=str)
@pytest.mark.parametrize("elem", FLOATS)
def test_scale(rng, elem, shape, value):
    dtype = DTYPES[elem]
    x = normal(rng, shape, dtype)
    out = run_op("scale", [x], shape, dtype, value=value)
    check(out, (x.astype(np.float64) * value).astype(dtype))


COMPARE_PREDICATES = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
@pytest.mark.parametrize("predicate", sorted(COMPARE_PREDICATES))
def test_compare(rng, predicate, elem, shapes):
    dtype = DTYPES[elem]
    # Small integral values so that ties (eq/le/ge) occur often.
    lhs = integers(rng, shapes[0], dtype, -3, 3)
    rhs = integers(rng, shapes[1], dtype, -3, 3)
    out = run_op("compare", [lhs, rhs], broadcast_shape(*shapes), np.bool_, predicate=predicate)
    check(out, COMPARE_PREDICATES[predicate](lhs, rhs))


SELECT_SHAPES = [
    ((7, 17), (7, 17), (7, 17)),
    ((7, 1, 5), (4, 1), (5,)),
    ((), (3, 4), (3, 4)),
    ((4, 1), (1, 7), ()),
]


@pytest.mark.parametrize("shapes", SELECT_SHAPES, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
def test_select(rng, elem, shapes):
    dtype = DTYPES[elem]
    cond = np.asarray(rng.random(shapes[0]) < 0.5)
    a = normal(rng, shapes[1], dtype)
    b = normal(rng, shapes[2], dtype)
    out = run_op("select", [cond, a, b], broadcast_shape(*shapes), dtype)
    check(out, np.where(cond, a, b), exact=True)


# ---------------------------------------------------------------------------
# graph.cast
# ---------------------------------------------------------------------------

SPECIAL_FLOATS = [
    0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.9, -2.9, 7.99, -7.99,
    1e10, -1e10, 1e30, -1e30, np.inf, -np.inf, np.nan,
]


@pytest.mark.parametrize("dst", INTS)
@pytest.mark.parametrize("src", FLOATS)
def test_cast_float_to_int_truncates_and_saturates(rng, src, dst):
    x = np.concatenate(
        [np.array(SPECIAL_FLOATS), rng.uniform(-1000.0, 1000.0, 33)]
    ).astype(DTYPES[src])
    out = run_op("cast", [x], x.shape, DTYPES[dst])
    check(out, float_to_int(x, DTYPES[dst]))


@pytest.mark.parametrize("dst", INTS)
@pytest.mark.parametrize("src", [*FLOATS, "f16", "bf16"])
@pytest.mark.parametrize("value", [-2.7, 6e4, np.inf, np.nan])
def test_cast_rank0_float_to_int(src, dst, value):
    x = np.array(value).astype(DTYPES[src])
    out = run_op("cast", [x], (), DTYPES[dst])
    check(out, float_to_int(x, DTYPES[dst]))


@pytest.mark.parametrize("src", ["f32", "f64", "i32", "i64"])
def test_cast_to_i1_is_nonzero(src):
    dtype = DTYPES[src]
    if dtype.kind == "f":
        x = np.array([0.0, -0.0, 0.5, -1e-30, 3.0, np.nan, -np.inf], dtype=dtype)
    else:
        x = np.array([0, 1, -1, 5, 0, np.iinfo(dtype).min], dtype=dtype)
    out = run_op("cast", [x], x.shape, np.bool_)
    check(out, x != 0)


@pytest.mark.parametrize("dst", ["f32", "f64", "i32", "i64"])
def test_cast_from_i1_gives_zero_or_one(rng, dst):
    x = np.asarray(rng.random((7, 5)) < 0.5)
    out = run_op("cast", [x], x.shape, DTYPES[dst])
    check(out, np.where(x, 1, 0).astype(DTYPES[dst]), exact=True)


INT_TO_FLOAT_VALUES = {
    "i32": [0, 1, -1, 16777217, -16777219, 2**31 - 1, -(2**31), 123456789],
    "i64": [0, -7, 16777217, 2**53 + 1, -(2**53) - 3, 2**63 - 1, -(2**63), 2**40 + 5],
}


@pytest.mark.parametrize("dst", ["f32", "f64", "f16"])
@pytest.mark.parametrize("src", INTS)
def test_cast_int_to_float_rounds_to_nearest_even(src, dst):
    values = INT_TO_FLOAT_VALUES[src] if dst != "f16" else [0, 1, -3, 2049, 2051, 65504, -4097]
    x = np.array(values, dtype=DTYPES[src])
    out = run_op("cast", [x], x.shape, DTYPES[dst])
    check(out, x.astype(DTYPES[dst]), exact=True)


@pytest.mark.parametrize(
    "src,dst", [("f64", "f32"), ("f32", "f64"), ("f32", "f16"), ("f64", "f16"), ("f32", "bf16")]
)
def test_cast_float_to_float_rounds_to_nearest_even(rng, src, dst):
    x = np.concatenate(
        [normal(rng, (33,), np.float64, scale=10.0), [0.0, -0.0, np.inf, -np.inf, 1.0 + 2.0**-11]]
    ).astype(DTYPES[src])
    out = run_op("cast", [x], x.shape, DTYPES[dst])
    check(out, x.astype(DTYPES[dst]), exact=True)


def test_cast_int_to_int(rng):
    x = integers(rng, (7, 17), np.int32, -(2**31), 2**31 - 1)
    out = run_op("cast", [x], x.shape, np.int64)
    check(out, x.astype(np.int64))


# ---------------------------------------------------------------------------
# graph.constant
# ---------------------------------------------------------------------------

CONSTANTS = [
    pytest.param(np.full((3, 4), 2.5, np.float32), True, id="splat-f32"),
    pytest.param(np.array(-0.125, np.float64), True, id="splat-f64-scalar"),
    pytest.param(np.full((7,), -3, np.int64), True, id="splat-i64"),
    pytest.param(np.full((2, 2), True), True, id="splat-i1"),
    pytest.param(
        np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32), False, id="f32"
    ),
    pytest.param(np.random.default_rng(6).standard_normal((5,)), False, id="f64"),
    pytest.param(np.array([[1, -2, 3], [2**31 - 1, -(2**31), 0]], np.int32), False, id="i32"),
    pytest.param(np.array([True, False, True]), False, id="i1"),
]


@pytest.mark.parametrize("value,splat", CONSTANTS)
def test_constant(value, splat):
    func = Function()
    result = func.op("constant", [], value.shape, value.dtype, value=dense_attr(value, splat))
    (out,) = interpret(module(func.text(result)))
    check(out, value, exact=True)


def test_constant_used_by_other_ops(rng):
    x = normal(rng, (4, 3), np.float32)
    bias = np.array([0.5, -1.0, 2.0], np.float32)
    func = Function((x.shape, x.dtype))
    c = func.op("constant", [], bias.shape, bias.dtype, value=dense_attr(bias))
    result = func.op("add", [func.args[0], c], x.shape, x.dtype)
    (out,) = interpret(module(func.text(result)), x)
    check(out, x + bias)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

REDUCTIONS = [
    ((7, 17), [1], False),
    ((7, 17), [-1], True),
    ((7, 17), [0, 1], False),
    ((33,), [0], False),
    ((33,), [-1], True),
    ((3, 7, 5), [0, 2], False),
    ((3, 7, 5), [-3, -1], True),
    ((2, 3, 4, 5), [1, -2], True),
    ((1, 17, 1), [0], False),
]
REDUCE_FORMULAS = {"reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max}


@pytest.mark.parametrize("shape,axes,keepdims", REDUCTIONS, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
@pytest.mark.parametrize("op", sorted(REDUCE_FORMULAS))
def test_reduce_float(rng, op, elem, shape, axes, keepdims):
    dtype = DTYPES[elem]
    x = normal(rng, shape, dtype)
    out = run_op(
        op, [x], reduced_shape(shape, axes, keepdims), dtype, axes=axes, keepdims=keepdims
    )
    axis = tuple(a % len(shape) for a in axes)
    expected = REDUCE_FORMULAS[op](x.astype(np.float64), axis=axis, keepdims=keepdims)
    check(out, np.asarray(expected).astype(dtype), loose=True)


@pytest.mark.parametrize("shape,axes", [((7, 17), [1]), ((3, 7, 5), [0, -1])], ids=str)
@pytest.mark.parametrize("elem", FLOATS)
@pytest.mark.parametrize("op", sorted(REDUCE_FORMULAS))
def test_reduce_keepdims_defaults_to_false(rng, op, elem, shape, axes):
    dtype = DTYPES[elem]
    x = normal(rng, shape, dtype)
    out = run_op(op, [x], reduced_shape(shape, axes, False), dtype, axes=axes)
    axis = tuple(a % len(shape) for a in axes)
    expected = REDUCE_FORMULAS[op](x.astype(np.float64), axis=axis)
    check(out, np.asarray(expected).astype(dtype), loose=True)


@pytest.mark.parametrize("shape,axes,keepdims", REDUCTIONS, ids=str)
@pytest.mark.parametrize("elem", INTS)
def test_reduce_max_int(rng, elem, shape, axes, keepdims):
    dtype = DTYPES[elem]
    x = integers(rng, shape, dtype, -(2**30), 2**30)
    out = run_op(
        "reduce_max", [x], reduced_shape(shape, axes, keepdims), dtype,
        axes=axes, keepdims=keepdims,
    )
    axis = tuple(a % len(shape) for a in axes)
    check(out, np.asarray(np.max(x, axis=axis, keepdims=keepdims)))


# ---------------------------------------------------------------------------
# graph.matmul
# ---------------------------------------------------------------------------

# (logical a shape, logical b shape, transpose_a, transpose_b, alpha or None for the default)
MATMULS = [
    ((7, 17), (17, 33), False, False, None),
    ((7, 17), (17, 33), True, False, None),
    ((7, 17), (17, 33), False, True, 0.5),
    ((7, 17), (17, 33), True, True, -2.0),
    ((1, 1), (1, 1), False, False, None),
    ((1, 7), (7, 1), False, True, None),
    ((3, 7, 17), (17, 5), False, False, None),
    ((17, 5), (3, 5, 7), True, False, 0.125),
    ((2, 1, 4, 5), (3, 5, 6), False, False, None),
    ((2, 1, 4, 5), (3, 5, 6), True, True, 0.25),
]


@pytest.mark.parametrize("a_shape,b_shape,transpose_a,transpose_b,alpha", MATMULS, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
def test_matmul(rng, elem, a_shape, b_shape, transpose_a, transpose_b, alpha):
    dtype = DTYPES[elem]
    a_logical = normal(rng, a_shape, np.float64)
    b_logical = normal(rng, b_shape, np.float64)
    a = (swap_last(a_logical) if transpose_a else a_logical).astype(dtype)
    b = (swap_last(b_logical) if transpose_b else b_logical).astype(dtype)
    shape = broadcast_shape(a_shape[:-2], b_shape[:-2]) + (a_shape[-2], b_shape[-1])
    properties = {"transpose_a": transpose_a, "transpose_b": transpose_b}
    if alpha is not None:
        properties["alpha"] = alpha
    out = run_op("matmul", [a, b], shape, dtype, **properties)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    op_a = swap_last(a64) if transpose_a else a64
    op_b = swap_last(b64) if transpose_b else b64
    expected = (1.0 if alpha is None else alpha) * np.matmul(op_a, op_b)
    check(out, expected.astype(dtype), loose=True)


def test_matmul_flags_default_to_false(rng):
    a = normal(rng, (7, 17), np.float64)
    b = normal(rng, (17, 5), np.float64)
    out = run_op("matmul", [a, b], (7, 5), np.float64)
    check(out, a @ b)


# ---------------------------------------------------------------------------
# Softmax family and normalisations
# ---------------------------------------------------------------------------

SOFTMAX_CASES = [
    ((17,), None),
    ((7, 17), -1),
    ((7, 17), 0),
    ((3, 7, 5), 1),
    ((3, 7, 5), -3),
    ((2, 1, 33), -1),
    ((4, 1), -1),
]


def log_softmax(x, axis=-1):
    return x - logsumexp(x, axis=axis, keepdims=True)


SOFTMAX_FORMULAS = {"softmax": softmax, "log_softmax": log_softmax}


@pytest.mark.parametrize("shape,axis", SOFTMAX_CASES, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
@pytest.mark.parametrize("op", sorted(SOFTMAX_FORMULAS))
def test_softmax(rng, op, elem, shape, axis):
    dtype = DTYPES[elem]
    x = normal(rng, shape, dtype, scale=3.0)
    properties = {} if axis is None else {"axis": axis}
    out = run_op(op, [x], shape, dtype, **properties)
    expected = SOFTMAX_FORMULAS[op](x.astype(np.float64), axis=-1 if axis is None else axis)
    check(out, expected.astype(dtype), loose=True)


@pytest.mark.parametrize("elem", FLOATS)
@pytest.mark.parametrize("op", sorted(SOFTMAX_FORMULAS))
def test_softmax_is_numerically_stable(op, elem):
    dtype = DTYPES[elem]
    rows = [[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1000.5], [0.0, 1000.0, -1000.0]]
    x = np.array(rows, dtype=dtype)
    out = run_op(op, [x], x.shape, dtype, axis=-1)
    assert np.all(np.isfinite(out))
    check(out, SOFTMAX_FORMULAS[op](x.astype(np.float64)).astype(dtype), loose=True)


NORM_SHAPES = [(17,), (7, 17), (2, 3, 33), (5, 1), (4, 7)]


@pytest.mark.parametrize("epsilon", [None, 1e-3])
@pytest.mark.parametrize("shape", NORM_SHAPES, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
def test_layernorm(rng, elem, shape, epsilon):
    dtype = DTYPES[elem]
    x = normal(rng, shape, dtype, scale=2.0) + dtype.type(0.5)
    gamma = normal(rng, shape[-1:], dtype)
    beta = normal(rng, shape[-1:], dtype)
    properties = {} if epsilon is None else {"epsilon": epsilon}
    out = run_op("layernorm", [x, gamma, beta], shape, dtype, **properties)
    f64 = [t.astype(np.float64) for t in (x, gamma, beta)]
    expected = layernorm(*f64, eps=1e-5 if epsilon is None else epsilon)
    check(out, expected.astype(dtype), loose=True)


@pytest.mark.parametrize("epsilon", [None, 1e-2])
@pytest.mark.parametrize("shape", NORM_SHAPES, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
def test_rmsnorm(rng, elem, shape, epsilon):
    dtype = DTYPES[elem]
    x = normal(rng, shape, dtype, scale=0.1)
    gamma = normal(rng, shape[-1:], dtype)
    properties = {} if epsilon is None else {"epsilon": epsilon}
    out = run_op("rmsnorm", [x, gamma], shape, dtype, **properties)
    expected = rmsnorm(
        x.astype(np.float64), gamma.astype(np.float64), eps=1e-6 if epsilon is None else epsilon
    )
    check(out, expected.astype(dtype), loose=True)


# ---------------------------------------------------------------------------
# graph.attention
# ---------------------------------------------------------------------------

# (batch dims, Sq, Sk, D, Dv)
ATTENTION_SHAPES = [
    ((), 7, 7, 5, 5),
    ((2,), 7, 7, 5, 3),
    ((2,), 5, 7, 4, 4),
    ((2,), 7, 5, 4, 6),
    ((2, 3), 1, 17, 8, 8),
    ((1,), 17, 1, 3, 2),
]


@pytest.mark.parametrize("causal", [None, False, True])
@pytest.mark.parametrize("batch,sq,sk,d,dv", ATTENTION_SHAPES, ids=str)
@pytest.mark.parametrize("elem", FLOATS)
def test_attention(rng, elem, batch, sq, sk, d, dv, causal):
    dtype = DTYPES[elem]
    q = normal(rng, batch + (sq, d), dtype)
    k = normal(rng, batch + (sk, d), dtype)
    v = normal(rng, batch + (sk, dv), dtype)
    scale = 1.0 / math.sqrt(d)
    properties = {"scale": scale}
    if causal is not None:
        properties["causal"] = causal
    out = run_op("attention", [q, k, v], batch + (sq, dv), dtype, **properties)
    expected = attention(*(t.astype(np.float64) for t in (q, k, v)), scale, bool(causal))
    check(out, expected.astype(dtype), loose=True)


# ---------------------------------------------------------------------------
# graph.embedding and graph.cross_entropy
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("ids_shape", [(), (7,), (3, 4), (2, 1, 5)], ids=str)
@pytest.mark.parametrize("vocab,dim", [(17, 5), (1, 3), (33, 1)], ids=str)
@pytest.mark.parametrize("id_elem", INTS)
@pytest.mark.parametrize("elem", FLOATS)
def test_embedding(rng, elem, id_elem, vocab, dim, ids_shape):
    table = normal(rng, (vocab, dim), DTYPES[elem])
    ids = integers(rng, ids_shape, DTYPES[id_elem], 0, vocab)
    out = run_op("embedding", [table, ids], ids_shape + (dim,), table.dtype)
    check(out, table[ids], exact=True)


@pytest.mark.parametrize("bad_id", [17, -1, 1000])
@pytest.mark.parametrize("id_elem", INTS)
def test_embedding_out_of_range_id_raises(rng, id_elem, bad_id):
    table = normal(rng, (17, 5), np.float32)
    ids = np.array([0, 3, bad_id, 16], dtype=DTYPES[id_elem])
    text = single_op_program("embedding", [table, ids], (4, 5), np.float32)
    with pytest.raises(strata.ExecutionError, match=r"graph\.embedding"):
        interpret(text, table, ids)


@pytest.mark.parametrize("logit_scale", [1.0, 100.0])
@pytest.mark.parametrize("n,c", [(7, 17), (1, 5), (33, 3), (4, 1)], ids=str)
@pytest.mark.parametrize("label_elem", INTS)
@pytest.mark.parametrize("elem", FLOATS)
def test_cross_entropy(rng, elem, label_elem, n, c, logit_scale):
    dtype = DTYPES[elem]
    logits = normal(rng, (n, c), dtype, scale=logit_scale)
    labels = integers(rng, (n,), DTYPES[label_elem], 0, c)
    out = run_op("cross_entropy", [logits, labels], (), dtype)
    expected = cross_entropy(logits.astype(np.float64), labels)
    check(out, np.asarray(expected).astype(dtype), loose=True)


@pytest.mark.parametrize("bad_label", [17, -1])
@pytest.mark.parametrize("label_elem", INTS)
def test_cross_entropy_out_of_range_label_raises(rng, label_elem, bad_label):
    logits = normal(rng, (4, 17), np.float32)
    labels = np.array([1, bad_label, 0, 16], dtype=DTYPES[label_elem])
    text = single_op_program("cross_entropy", [logits, labels], (), np.float32)
    with pytest.raises(strata.ExecutionError):
        interpret(text, logits, labels)


# ---------------------------------------------------------------------------
# graph.dropout
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 42, -7, 2**62 + 12345])
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("shape", [(33,), (7, 17), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("elem", FLOATS)
def test_dropout(rng, elem, shape, p, seed):
    x = normal(rng, shape, DTYPES[elem])
    out = run_op("dropout", [x], shape, x.dtype, p=p, seed=seed)
    check(out, dropout(x, p, seed), exact=True)


def test_dropout_is_deterministic_and_keyed_by_seed(rng):
    x = np.ones((64, 64), np.float32)
    text = single_op_program("dropout", [x], x.shape, x.dtype, p=0.5, seed=3)
    (first,) = interpret(text, x)
    (second,) = interpret(text, x)
    check(second, first, exact=True)
    other = single_op_program("dropout", [x], x.shape, x.dtype, p=0.5, seed=4)
    (other_seed,) = interpret(other, x)
    assert not np.array_equal(first, other_seed)
    assert 0.4 < np.mean(first != 0) < 0.6


# ---------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------

SHAPE_OP_TYPES = ["f32", "f64", "i32"]


def sample(rng, shape, dtype):
    return integers(rng, shape, dtype) if dtype.kind == "i" else normal(rng, shape, dtype)


@pytest.mark.parametrize(
    "shape,new_shape",
    [((7, 17), (17, 7)), ((2, 3, 4), (24,)), ((6,), (1, 6, 1)), ((1,), ()), ((3, 7, 5), (5, 21))],
    ids=str,
)
@pytest.mark.parametrize("elem", SHAPE_OP_TYPES)
def test_reshape(rng, elem, shape, new_shape):
    x = sample(rng, shape, DTYPES[elem])
    out = run_op("reshape", [x], new_shape, x.dtype)
    check(out, x.reshape(new_shape), exact=True)


@pytest.mark.parametrize(
    "shape,permutation",
    [((7, 17), [1, 0]), ((3, 7, 5), [2, 0, 1]), ((2, 3, 4, 5), [0, 2, 1, 3]), ((33,), [0])],
    ids=str,
)
@pytest.mark.parametrize("elem", SHAPE_OP_TYPES)
def test_transpose(rng, elem, shape, permutation):
    x = sample(rng, shape, DTYPES[elem])
    expected = np.transpose(x, permutation)
    out = run_op("transpose", [x], expected.shape, x.dtype, permutation=permutation)
    check(out, expected, exact=True)


@pytest.mark.parametrize(
    "shape,target",
    [((7, 1, 5), (3, 7, 4, 5)), ((5,), (4, 5)), ((), (2, 3)), ((1,), (17,)), ((7, 17), (7, 17))],
    ids=str,
)
@pytest.mark.parametrize("elem", SHAPE_OP_TYPES)
def test_broadcast_to(rng, elem, shape, target):
    x = sample(rng, shape, DTYPES[elem])
    out = run_op("broadcast_to", [x], target, x.dtype)
    check(out, np.broadcast_to(x, target), exact=True)


SLICES = [
    ((17, 33), (1, 0), (16, 33), (3, 5)),
    ((7,), (0,), (7,), (1,)),
    ((7,), (2,), (7,), (2,)),
    ((3, 7, 5), (1, 2, 0), (3, 7, 5), (1, 2, 4)),
    ((7, 17), (3, 5), (4, 6), (1, 1)),
    ((2, 3, 4, 5), (0, 1, 1, 0), (2, 3, 4, 5), (2, 1, 2, 3)),
]


@pytest.mark.parametrize("shape,starts,limits,steps", SLICES, ids=str)
@pytest.mark.parametrize("elem", SHAPE_OP_TYPES)
def test_slice(rng, elem, shape, starts, limits, steps):
    x = sample(rng, shape, DTYPES[elem])
    expected = x[tuple(slice(s, l, st) for s, l, st in zip(starts, limits, steps))]
    out = run_op(
        "slice", [x], expected.shape, x.dtype,
        starts=list(starts), limits=list(limits), steps=list(steps),
    )
    check(out, expected, exact=True)


CONCATS = [
    ([(7, 3), (7, 5), (7, 1)], -1),
    ([(2, 3, 4), (1, 3, 4)], 0),
    ([(5,), (17,), (1,)], 0),
    ([(2, 3, 4), (2, 7, 4)], -2),
    ([(4, 5)], 1),
    ([(3, 2), (3, 2), (3, 2), (3, 2)], 1),
]


@pytest.mark.parametrize("shapes,axis", CONCATS, ids=str)
@pytest.mark.parametrize("elem", SHAPE_OP_TYPES)
def test_concat(rng, elem, shapes, axis):
    parts = [sample(rng, s, DTYPES[elem]) for s in shapes]
    expected = np.concatenate(parts, axis=axis)
    out = run_op("concat", parts, expected.shape, expected.dtype, axis=axis)
    check(out, expected, exact=True)


# ---------------------------------------------------------------------------
# Half precision: compute in f32, round to the element type once per op
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("elem", ["f16", "bf16"])
def test_half_rounds_once_per_op(rng, elem):
    dtype = DTYPES[elem]
    a, b, c = (normal(rng, (33, 17), dtype) for _ in range(3))
    func = Function(*[(t.shape, dtype) for t in (a, b, c)])
    prod = func.op("mul", func.args[:2], a.shape, dtype)
    total = func.op("add", [prod, func.args[2]], a.shape, dtype)
    quotient = func.op("div", [total, func.args[1]], a.shape, dtype)
    outs = interpret(module(func.text(prod, total, quotient)), a, b, c)
    f32 = np.float32
    expected_prod = (a.astype(f32) * b.astype(f32)).astype(dtype)
    expected_total = (expected_prod.astype(f32) + c.astype(f32)).astype(dtype)
    expected_quotient = (expected_total.astype(f32) / b.astype(f32)).astype(dtype)
    for out, expected in zip(outs, [expected_prod, expected_total, expected_quotient]):
        check(out, expected, exact=True)


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "gelu"])
def test_f16_unary(rng, op):
    formulas = {"exp": np.exp, "tanh": np.tanh, "sigmoid": sigmoid, "gelu": gelu_none}
    x = normal(rng, (7, 17), np.float16, scale=2.0)
    out = run_op(op, [x], x.shape, np.float16)
    check(out, formulas[op](x.astype(np.float64)).astype(np.float32).astype(np.float16))


def test_f16_reduce_sum_accumulates_in_f32(rng):
    x = uniform(rng, (3, 1000), np.float16, 0.0, 1.0)
    out = run_op("reduce_sum", [x], (3,), np.float16, axes=[1])
    check(out, x.astype(np.float32).sum(axis=1).astype(np.float16))


def test_f16_matmul_softmax_layernorm(rng):
    a = normal(rng, (7, 33), np.float16)
    b = normal(rng, (33, 17), np.float16)
    gamma = normal(rng, (17,), np.float16)
    beta = normal(rng, (17,), np.float16)
    func = Function(*[(t.shape, np.float16) for t in (a, b, gamma, beta)])
    mm = func.op("matmul", func.args[:2], (7, 17), np.float16)
    sm = func.op("softmax", [mm], (7, 17), np.float16, axis=-1)
    ln = func.op("layernorm", [mm, func.args[2], func.args[3]], (7, 17), np.float16)
    outs = interpret(module(func.text(mm, sm, ln)), a, b, gamma, beta)
    f32 = np.float32
    expected_mm = (a.astype(f32) @ b.astype(f32)).astype(np.float16)
    expected_sm = softmax(expected_mm.astype(f32)).astype(np.float16)
    expected_ln = layernorm(expected_mm.astype(f32), gamma.astype(f32), beta.astype(f32))
    check(outs[0], expected_mm)
    check(outs[1], expected_sm)
    check(outs[2], expected_ln.astype(np.float16))


# ---------------------------------------------------------------------------
# Composite programs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("elem", FLOATS)
def test_two_layer_mlp(rng, elem):
    dtype = DTYPES[elem]
    batch, d_in, hidden, d_out = 8, 33, 17, 5
    x = normal(rng, (batch, d_in), dtype)
    w1 = normal(rng, (hidden, d_in), dtype, scale=d_in**-0.5)
    b1 = normal(rng, (hidden,), dtype)
    w2 = normal(rng, (hidden, d_out), dtype, scale=hidden**-0.5)

    func = Function(*[(t.shape, dtype) for t in (x, w1, b1, w2)])
    arg_x, arg_w1, arg_b1, arg_w2 = func.args
    h = func.op("matmul", [arg_x, arg_w1], (batch, hidden), dtype,
                transpose_a=False, transpose_b=True, alpha=1.0)
    h = func.op("add", [h, arg_b1], (batch, hidden), dtype)
    h = func.op("relu", [h], (batch, hidden), dtype)
    y = func.op("matmul", [h, arg_w2], (batch, d_out), dtype)
    (out,) = interpret(module(func.text(y)), x, w1, b1, w2)

    x64, w164, b164, w264 = (t.astype(np.float64) for t in (x, w1, b1, w2))
    expected = np.maximum(x64 @ w164.T + b164, 0.0) @ w264
    check(out, expected.astype(dtype), loose=True)


@pytest.mark.parametrize("elem", FLOATS)
def test_pre_layernorm_transformer_block(rng, elem):
    dtype = DTYPES[elem]
    batch, seq, d, ff = 2, 7, 16, 33
    x = normal(rng, (batch, seq, d), dtype)
    g1, b1, g2, b2 = (normal(rng, (d,), dtype) for _ in range(4))
    wq, wk, wv = (normal(rng, (d, d), dtype, scale=d**-0.5) for _ in range(3))
    w1 = normal(rng, (d, ff), dtype, scale=d**-0.5)
    w2 = normal(rng, (ff, d), dtype, scale=ff**-0.5)
    inputs = [x, g1, b1, wq, wk, wv, g2, b2, w1, w2]

    func = Function(*[(t.shape, dtype) for t in inputs])
    ax, ag1, ab1, awq, awk, awv, ag2, ab2, aw1, aw2 = func.args
    act = (batch, seq, d)
    h = func.op("layernorm", [ax, ag1, ab1], act, dtype)
    q = func.op("matmul", [h, awq], act, dtype)
    k = func.op("matmul", [h, awk], act, dtype)
    v = func.op("matmul", [h, awv], act, dtype)
    scores = func.op("matmul", [q, k], (batch, seq, seq), dtype,
                     transpose_b=True, alpha=1.0 / math.sqrt(d))
    probs = func.op("softmax", [scores], (batch, seq, seq), dtype, axis=-1)
    attended = func.op("matmul", [probs, v], act, dtype)
    r = func.op("add", [ax, attended], act, dtype)
    h2 = func.op("layernorm", [r, ag2, ab2], act, dtype, epsilon=1e-5)
    f = func.op("matmul", [h2, aw1], (batch, seq, ff), dtype)
    f = func.op("gelu", [f], (batch, seq, ff), dtype, approximate="none")
    f = func.op("matmul", [f, aw2], act, dtype)
    y = func.op("add", [r, f], act, dtype)
    (out,) = interpret(module(func.text(y)), *inputs)

    x, g1, b1, wq, wk, wv, g2, b2, w1, w2 = (t.astype(np.float64) for t in inputs)
    h = layernorm(x, g1, b1)
    q, k, v = h @ wq, h @ wk, h @ wv
    r = x + softmax(q @ swap_last(k) / math.sqrt(d)) @ v
    expected = r + gelu_none(layernorm(r, g2, b2) @ w1) @ w2
    check(out, expected.astype(dtype), loose=True)


def test_multiple_results_and_entry_selection(rng):
    x = normal(rng, (7, 5), np.float32)
    first = Function(((7, 5), np.float32), name="first")
    first_result = first.op("neg", first.args, (7, 5), np.float32)
    second = Function(((7, 5), np.float32), name="second")
    doubled = second.op("scale", second.args, (7, 5), np.float32, value=2.0)
    total = second.op("reduce_sum", [doubled], (), np.float32, axes=[0, 1])
    text = module(first.text(first_result), second.text(doubled, total))

    outs = interpret(text, x, entry="second")
    assert len(outs) == 2
    check(outs[0], 2 * x)
    check(outs[1], np.asarray(2 * x.astype(np.float64).sum()).astype(np.float32), loose=True)
    (neg,) = interpret(text, x, entry="first")
    check(neg, -x)


# ---------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------


@pytest.fixture
def add_program() -> str:
    return single_op_program(
        "add", [np.zeros((4, 5), np.float32), np.zeros((5,), np.float32)], (4, 5), np.float32
    )


@pytest.mark.parametrize("count", [0, 1, 3])
def test_wrong_argument_count_raises(add_program, count):
    args = [np.zeros((4, 5), np.float32), np.zeros((5,), np.float32), np.zeros((5,), np.float32)]
    with pytest.raises(strata.InputError):
        interpret(add_program, *args[:count])


@pytest.mark.parametrize(
    "args,position",
    [
        ([np.zeros((5, 4), np.float32), np.zeros((5,), np.float32)], 0),
        ([np.zeros((4, 5), np.float32), np.zeros((4,), np.float32)], 1),
        ([np.zeros((4, 5), np.float32), np.zeros((1, 5), np.float32)], 1),
        ([np.zeros((4, 5), np.float64), np.zeros((5,), np.float32)], 0),
        ([np.zeros((4, 5), np.float32), np.zeros((5,), np.int32)], 1),
        ([np.zeros((4, 5), np.float32), np.zeros((5,), np.float16)], 1),
    ],
    ids=["shape-arg0", "shape-arg1", "rank-arg1", "dtype-arg0", "int-arg1", "f16-arg1"],
)
def test_wrong_argument_shape_or_dtype_names_the_argument(add_program, args, position):
    with pytest.raises(strata.InputError, match=f"arg{position}"):
        interpret(add_program, *args)


def test_wrong_integer_width_names_the_argument(rng):
    table = normal(rng, (17, 5), np.float32)
    ids = np.array([1, 2, 3], np.int32)
    text = single_op_program("embedding", [table, ids], (3, 5), np.float32)
    with pytest.raises(strata.InputError, match="arg1"):
        interpret(text, table, ids.astype(np.int64))

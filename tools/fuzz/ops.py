"""One random instance of each graph op: operands chosen (or created) where the op is
well-defined and well-conditioned, the result's bounds and exactness derived.

Every builder takes the `Generator` and returns the new `Value`, or None when it found
no suitable operands this time (the caller draws another op)."""

from __future__ import annotations

import math

import numpy as np

from strata.frontends import builder as ops
from strata.support.dtypes import element_type_for, numpy_dtype
from strata.tools.fuzz.values import FLOATS, INTEGERS, Generator, Value, fits, own_error, within

NUMERIC = FLOATS + INTEGERS
ANY = NUMERIC + ("i1",)
# f32 bounds of the bounded unary functions.
SILU_MIN, GELU_MIN = -0.2785, -0.1700


def unary(name: str, lo_of, hi_of, slope, domain=lambda v: True, dtypes=FLOATS, rounding="approximate"):
    """A unary op whose bounds on x's interval are `lo_of(x)`, `hi_of(x)` and whose
    derivative there is at most `slope(x)` in magnitude."""

    def build(g: Generator) -> Value | None:
        x = g.operand(dtypes, domain, positive=True)
        if not domain(x):
            return None
        lo, hi = lo_of(x), hi_of(x)
        if not fits(lo, hi, x.dtype):
            return None
        return g.result(getattr(ops, name)(x.tensor), lo, hi, slope(x) * x.error, rounding)

    return build


def corners(f, a: Value, b: Value) -> tuple[float, float]:
    values = [f(p, q) for p in (a.lo, a.hi) for q in (b.lo, b.hi)]
    return min(values), max(values)


def binary(name: str, bounds, error, dtypes=NUMERIC, rounding="rounded", divisor=False, power=False):
    """A binary op: `bounds(a, b)` its result's interval, `error(a, b)` what the operands'
    errors become."""

    def build(g: Generator) -> Value | None:
        if power:
            a = g.operand(FLOATS, lambda v: v.lo >= 0.5, positive=True)
            b = g.partner(a, lambda v: within(v, -3, 3))
            if a.lo < 0.5 or not within(b, -3, 3):
                return None
        elif divisor:
            a = g.operand(FLOATS)
            b = g.partner(a, lambda v: v.lo >= 0.5 or v.hi <= -0.5, positive=True)
            if not (b.lo >= 0.5 or b.hi <= -0.5):
                return None
        else:
            a = g.operand(dtypes)
            b = g.partner(a)
            if g.chance(0.5):
                a, b = b, a
        lo, hi = bounds(a, b)
        if not fits(lo, hi, a.dtype):
            return None
        t = getattr(ops, name)(a.tensor, b.tensor)
        return g.result(t, lo, hi, error(a, b), rounding)

    return build


def build_scale(g: Generator) -> Value | None:
    x = g.operand(FLOATS)
    value = float(g.pick([-2.0, -0.5, 0.0, 0.75, 1.0, 3.0]))
    lo, hi = sorted((x.lo * value, x.hi * value))
    if not fits(lo, hi, x.dtype):
        return None
    return g.result(ops.scale(x.tensor, value), lo, hi, abs(value) * x.error, "rounded")


def build_gelu(g: Generator) -> Value | None:
    x = g.operand(FLOATS)
    approximate = g.pick(["none", "tanh"])
    # 1 + erf(x/sqrt 2) (or 1 + tanh) cancels for negative x: an error of an ulp of 1 in
    # erf, times x/2.
    error = 1.2 * x.error + own_error(x.dtype) * x.magnitude
    return g.result(ops.gelu(x.tensor, approximate), GELU_MIN, max(x.hi, 0.0), error, "approximate")


def build_compare(g: Generator) -> Value | None:
    a = g.operand(ANY, lambda v: v.exact)
    if not a.exact:
        return None
    b = g.partner(a, lambda v: v.exact)
    if not b.exact:
        return None
    if g.chance(0.5):
        a, b = b, a
    predicate = g.pick(["lt", "le", "gt", "ge", "eq", "ne"])
    return g.result(ops.compare(a.tensor, b.tensor, predicate), 0, 1, 0.0, "exact")


def build_select(g: Generator) -> Value | None:
    cond = g.operand(("i1",), lambda v: v.exact)
    if not cond.exact:
        return None
    a = g.operand(ANY, lambda v: v.dtype != "i1" or g.chance(0.2))
    b = g.partner(a)
    if not _broadcast_ok(cond.shape, a.shape, b.shape):
        return None
    t = ops.select(cond.tensor, a.tensor, b.tensor)
    return g.result(t, min(a.lo, b.lo), max(a.hi, b.hi), max(a.error, b.error), "exact")


def _broadcast_ok(*shapes) -> bool:
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


def build_cast(g: Generator) -> Value | None:
    x = g.operand(ANY)
    to = g.dtype()
    if x.dtype in FLOATS and to in INTEGERS + ("i1",) and not x.exact:
        return None  # truncation would turn a last-bit difference into a different integer
    if to != "i1" and not fits(x.lo, x.hi, to):
        return None
    if to == "i1":
        lo, hi = 0, 1
    elif to in INTEGERS and x.dtype in FLOATS:
        lo, hi = math.trunc(x.lo), math.trunc(x.hi)
    else:
        lo, hi = x.lo, x.hi
    return g.result(ops.cast(x.tensor, to), lo, hi, x.error, "rounded")


def build_constant(g: Generator) -> Value | None:
    dtype = g.dtype()
    shape = g.shape(rank=int(g.pick([0, 1, 1, 2])))
    if math.prod(shape) > 64:
        return None
    np_dtype = numpy_dtype(element_type_for(dtype))
    if dtype == "i1":
        value, lo, hi = g.rng.random(shape) < 0.5, 0, 1
    elif dtype in INTEGERS:
        value, lo, hi = g.rng.integers(0, 8, shape), 0, 7
    else:
        value, lo, hi = np.round(g.rng.uniform(-4, 4, shape), 2), -4, 4
    if g.chance(0.3):  # a splat
        value = np.full(shape, np.asarray(value).flat[0] if np.asarray(value).size else 0)
    t = g.graph.constant(np.asarray(value).astype(np_dtype), dtype)
    return g.result(t, lo, hi, 0.0, "exact")


def build_reduction(name: str):
    def build(g: Generator) -> Value | None:
        dtypes = FLOATS if name == "reduce_mean" else NUMERIC
        x = g.operand(dtypes, lambda v: len(v.shape) >= 1)
        rank = len(x.shape)
        if rank == 0:
            return None
        axes = [a for a in range(rank) if g.chance(0.4)]
        axes = [a - rank if g.chance(0.3) else a for a in axes]
        reduced = math.prod(x.shape[a] for a in axes)
        keepdims = g.chance(0.4)
        count = max(reduced, 1)
        if name == "reduce_max" and reduced == 0:
            return None  # -inf or the integer minimum: outside any bounds (tested on its own)
        if name == "reduce_sum":
            lo, hi = (min(x.lo * count, 0.0), max(x.hi * count, 0.0))
        elif name == "reduce_mean":
            lo, hi = min(x.lo, 0.0), max(x.hi, 0.0)
        else:
            lo, hi = x.lo, x.hi
        if not fits(lo, hi, x.dtype):
            return None
        exact = name == "reduce_max" or x.dtype in INTEGERS
        t = getattr(ops, name)(x.tensor, axes, keepdims)
        error = x.error * (count if name == "reduce_sum" else 1)
        return g.result(t, lo, hi, error, "exact" if exact else "cancelling")

    return build


def build_matmul(g: Generator) -> Value | None:
    a = g.operand(FLOATS, lambda v: len(v.shape) >= 2)
    if len(a.shape) < 2:
        return None
    transpose_a, transpose_b = g.chance(0.3), g.chance(0.3)
    k = a.shape[-2] if transpose_a else a.shape[-1]
    n = int(g.pick([1, 3, 8, 17, 33]))
    batch = a.shape[:-2]
    if batch and g.chance(0.3):
        batch = tuple(1 if g.chance(0.5) else d for d in batch)
    b_shape = batch + ((n, k) if transpose_b else (k, n))
    b = g.existing(lambda v: v.dtype == a.dtype and v.shape == b_shape)
    b = b or g.new_input(b_shape, a.dtype)
    alpha = float(g.pick([1.0, 1.0, 0.5, -2.0]))
    bound = max(k, 1) * a.magnitude * b.magnitude * abs(alpha)
    if not fits(-bound, bound, a.dtype):
        return None
    t = ops.matmul(a.tensor, b.tensor, transpose_a, transpose_b, alpha)
    error = max(k, 1) * abs(alpha) * (a.magnitude * b.error + b.magnitude * a.error)
    return g.result(t, -bound, bound, error, "cancelling")


def build_row(name: str):
    def build(g: Generator) -> Value | None:
        x = g.operand(FLOATS, lambda v: len(v.shape) >= 1)
        if not x.shape:
            return None
        axis = int(g.rng.integers(-len(x.shape), len(x.shape)))
        n = max(x.shape[axis], 1)
        if name == "softmax":
            lo, hi = 0.0, 1.0
        else:
            lo, hi = -(x.hi - x.lo) - math.log(n), 0.0
        rounding = "approximate" if name == "softmax" else "cancelling"
        return g.result(getattr(ops, name)(x.tensor, axis), lo, hi, 2 * x.error, rounding)

    return build


def build_norm(name: str):
    def build(g: Generator) -> Value | None:
        x = g.operand(FLOATS, lambda v: len(v.shape) >= 1)
        if not x.shape:
            return None
        n = x.shape[-1]
        gamma = g.new_input((n,), x.dtype)
        bound = math.sqrt(max(n, 1)) * gamma.magnitude
        # Rows of a computed value may be nearly constant: a tiny epsilon would divide its
        # rounding noise by sqrt(epsilon).
        epsilon = float(g.pick([1e-5, 1e-3])) if x.exact else float(g.pick([0.1, 1.0]))
        # d/dx of x / sqrt(mean(x^2) + eps) (or of the centred form) is at most
        # 2 / sqrt(eps) per element (a row of zeros is the worst case).
        error = 2 * gamma.magnitude / math.sqrt(epsilon) * x.error
        if name == "layernorm":
            beta = g.new_input((n,), x.dtype)
            t = ops.layernorm(x.tensor, gamma.tensor, beta.tensor, epsilon)
            bound += beta.magnitude
            return g.result(t, -bound, bound, error, "cancelling")
        t = ops.rmsnorm(x.tensor, gamma.tensor, epsilon)
        return g.result(t, -bound, bound, error, "cancelling")

    return build


def build_attention(g: Generator) -> Value | None:
    q = g.operand(FLOATS, lambda v: len(v.shape) >= 2 and v.shape[-2] > 0)
    if len(q.shape) < 2:
        return None
    batch, d = q.shape[:-2], q.shape[-1]
    # v heads of 16 and 32 beside q's of 16 (SIZES) make 16-bit attention the GPU's flash kernel.
    sk, dv = int(g.pick([0, 1, 2, 7, 16, 33] if g.zero_sizes else [1, 2, 7, 16, 33])), int(g.pick([1, 4, 8, 16, 17, 32]))
    k = g.new_input(batch + (sk, d), q.dtype)
    v = g.new_input(batch + (sk, dv), q.dtype)
    scale = 1.0 / math.sqrt(max(d, 1))
    t = ops.attention(q.tensor, k.tensor, v.tensor, scale, g.chance(0.5))
    score_error = scale * max(d, 1) * (q.magnitude * k.error + k.magnitude * q.error)
    return g.result(t, v.lo, v.hi, v.error + 2 * score_error * v.magnitude, "cancelling")


def build_embedding(g: Generator) -> Value | None:
    table = g.operand(ANY, lambda v: len(v.shape) == 2 and v.shape[0] >= 8)
    if len(table.shape) != 2 or table.shape[0] < 8:
        table = g.new_input((int(g.pick([8, 9, 33])), int(g.pick([1, 4, 7, 16]))), g.dtype(FLOATS))
    vocabulary = table.shape[0]
    ids = g.operand(INTEGERS, lambda v: within(v, 0, vocabulary - 1) and v.exact)
    if not (within(ids, 0, vocabulary - 1) and ids.exact):
        return None
    if len(ids.shape) + 1 > 8 or math.prod(ids.shape) * table.shape[1] > 4 * 4096:
        return None
    return g.result(ops.embedding(table.tensor, ids.tensor), table.lo, table.hi, table.error, "exact")


def build_cross_entropy(g: Generator) -> Value | None:
    logits = g.operand(FLOATS, lambda v: len(v.shape) == 2 and v.shape[1] >= 1)
    if len(logits.shape) != 2 or logits.shape[1] < 1:
        return None
    n, c = logits.shape
    labels = g.existing(lambda v: v.dtype in INTEGERS and v.shape == (n,) and within(v, 0, c - 1) and v.exact)
    labels = labels or g.new_input((n,), g.pick(INTEGERS), below=c)
    hi = (logits.hi - logits.lo) + math.log(c)
    t = ops.cross_entropy(logits.tensor, labels.tensor)
    return g.result(t, 0.0, hi, 2 * logits.error, "cancelling")


def build_dropout(g: Generator) -> Value | None:
    x = g.operand(FLOATS)
    p = float(g.pick([0.0, 0.1, 0.5, 0.9]))
    keep = 1 / (1 - p)
    t = ops.dropout(x.tensor, p, int(g.rng.integers(0, 2**31)))
    return g.result(t, min(x.lo * keep, 0.0), max(x.hi * keep, 0.0), keep * x.error, "approximate")


def build_reshape(g: Generator) -> Value | None:
    x = g.operand(ANY)
    count = math.prod(x.shape)
    dims: list[int] = []
    rest = count
    for _ in range(int(g.rng.integers(0, 4))):
        divisors = [d for d in (1, 2, 3, 4, 5, 7, 8, 16, 17) if rest % d == 0] if rest else [0, 1, 3]
        d = int(g.pick(divisors))
        dims.append(d)
        rest = rest // d if d else rest
    if count and math.prod(dims) and count % math.prod(dims) == 0:
        dims.append(count // math.prod(dims))
    elif count == 0 and 0 not in dims:
        dims.append(0)
    if math.prod(dims) != count or len(dims) > 8:
        return None
    g.rng.shuffle(dims)
    return g.result(ops.reshape(x.tensor, dims), x.lo, x.hi, x.error, "exact")


def build_transpose(g: Generator) -> Value | None:
    x = g.operand(ANY, lambda v: len(v.shape) >= 2)
    permutation = [int(a) for a in g.rng.permutation(len(x.shape))]
    return g.result(ops.transpose(x.tensor, permutation), x.lo, x.hi, x.error, "exact")


def build_broadcast_to(g: Generator) -> Value | None:
    x = g.operand(ANY)
    dims = [int(g.pick([2, 3, 5])) if d == 1 and g.chance(0.6) else d for d in x.shape]
    lead = [int(g.pick([1, 2, 3])) for _ in range(int(g.rng.integers(0, 3)))]
    shape = tuple(lead + dims)
    if math.prod(shape) > 4 * 4096 or len(shape) > 8:
        return None
    return g.result(ops.broadcast_to(x.tensor, shape), x.lo, x.hi, x.error, "exact")


def build_slice(g: Generator) -> Value | None:
    x = g.operand(ANY, lambda v: len(v.shape) >= 1)
    starts, limits, steps = [], [], []
    for size in x.shape:
        start = int(g.rng.integers(0, size + 1))
        limit = int(g.rng.integers(start, size + 1))
        starts.append(start)
        limits.append(limit)
        steps.append(int(g.pick([1, 1, 2, 3])))
    return g.result(ops.slice_(x.tensor, starts, limits, steps), x.lo, x.hi, x.error, "exact")


def build_concat(g: Generator) -> Value | None:
    x = g.operand(ANY, lambda v: len(v.shape) >= 1)
    if not x.shape:
        return None
    axis = int(g.rng.integers(len(x.shape)))
    parts = [x]
    for _ in range(int(g.rng.integers(1, 3))):
        shape = list(x.shape)
        shape[axis] = int(g.pick([0, 1, 2, 5])) if g.chance(0.5) else shape[axis]
        same = g.existing(lambda v: v.dtype == x.dtype and v.shape == tuple(shape))
        parts.append(same or g.new_input(tuple(shape), x.dtype))
    axis = axis - len(x.shape) if g.chance(0.3) else axis
    t = ops.concat([p.tensor for p in parts], axis)
    lo, hi = min(p.lo for p in parts), max(p.hi for p in parts)
    return g.result(t, lo, hi, max(p.error for p in parts), "exact")


def _sum_error(a: Value, b: Value) -> float:
    return a.error + b.error


def _product_error(a: Value, b: Value) -> float:
    return a.magnitude * b.error + b.magnitude * a.error


def _quotient_error(a: Value, b: Value) -> float:
    smallest = min(abs(b.lo), abs(b.hi))
    return a.error / smallest + a.magnitude * b.error / smallest**2


def _power_error(a: Value, b: Value) -> float:
    # d(a^b)/da = b a^(b-1), d(a^b)/db = a^b ln a, on a >= 0.5, |b| <= 3.
    largest = max(abs(p**q) for p in (a.lo, a.hi) for q in (b.lo, b.hi))
    return largest * (3 / a.lo * a.error + max(abs(math.log(a.lo)), abs(math.log(a.hi))) * b.error)


def _bigger_error(a: Value, b: Value) -> float:
    return max(a.error, b.error)


OP_BUILDERS = {
    "neg": unary("neg", lambda v: -v.hi, lambda v: -v.lo, lambda v: 1, dtypes=NUMERIC, rounding="exact"),
    "abs": unary("abs", lambda v: 0.0 if v.lo < 0 < v.hi else min(abs(v.lo), abs(v.hi)),
                 lambda v: v.magnitude, lambda v: 1, dtypes=NUMERIC, rounding="exact"),
    "relu": unary("relu", lambda v: max(v.lo, 0.0), lambda v: max(v.hi, 0.0), lambda v: 1,
                  dtypes=NUMERIC, rounding="exact"),
    "exp": unary("exp", lambda v: math.exp(v.lo), lambda v: math.exp(v.hi), lambda v: math.exp(v.hi),
                 domain=lambda v: v.hi <= 8),
    "log": unary("log", lambda v: math.log(v.lo), lambda v: math.log(v.hi), lambda v: 1 / v.lo,
                 domain=lambda v: v.lo >= 0.25),
    "sqrt": unary("sqrt", lambda v: math.sqrt(v.lo), lambda v: math.sqrt(v.hi), lambda v: 0.5 / math.sqrt(v.lo),
                  domain=lambda v: v.lo >= 0.25),
    "rsqrt": unary("rsqrt", lambda v: 1 / math.sqrt(v.hi), lambda v: 1 / math.sqrt(v.lo),
                   lambda v: 0.5 * v.lo**-1.5, domain=lambda v: v.lo >= 0.25),
    "tanh": unary("tanh", lambda v: -1.0, lambda v: 1.0, lambda v: 1),
    "sigmoid": unary("sigmoid", lambda v: 0.0, lambda v: 1.0, lambda v: 0.25),
    "silu": unary("silu", lambda v: SILU_MIN, lambda v: max(v.hi, 0.0), lambda v: 1.1),
    "erf": unary("erf", lambda v: -1.0, lambda v: 1.0, lambda v: 1.13),
    "gelu": build_gelu,
    "scale": build_scale,
    "add": binary("add", lambda a, b: (a.lo + b.lo, a.hi + b.hi), _sum_error),
    "sub": binary("sub", lambda a, b: (a.lo - b.hi, a.hi - b.lo), _sum_error),
    "mul": binary("mul", lambda a, b: corners(lambda p, q: p * q, a, b), _product_error),
    "div": binary("div", lambda a, b: corners(lambda p, q: p / q, a, b), _quotient_error,
                  rounding="approximate", divisor=True),
    "maximum": binary("maximum", lambda a, b: (max(a.lo, b.lo), max(a.hi, b.hi)), _bigger_error, rounding="exact"),
    "minimum": binary("minimum", lambda a, b: (min(a.lo, b.lo), min(a.hi, b.hi)), _bigger_error, rounding="exact"),
    "pow": binary("pow", lambda a, b: corners(lambda p, q: p**q, a, b), _power_error,
                  rounding="approximate", power=True),
    "compare": build_compare,
    "select": build_select,
    "cast": build_cast,
    "constant": build_constant,
    "reduce_sum": build_reduction("reduce_sum"),
    "reduce_mean": build_reduction("reduce_mean"),
    "reduce_max": build_reduction("reduce_max"),
    "matmul": build_matmul,
    "softmax": build_row("softmax"),
    "log_softmax": build_row("log_softmax"),
    "layernorm": build_norm("layernorm"),
    "rmsnorm": build_norm("rmsnorm"),
    "attention": build_attention,
    "embedding": build_embedding,
    "cross_entropy": build_cross_entropy,
    "dropout": build_dropout,
    "reshape": build_reshape,
    "transpose": build_transpose,
    "broadcast_to": build_broadcast_to,
    "slice": build_slice,
    "concat": build_concat,
}  # fmt: skip
"""Every graph op of the catalogue (`GRAPH_OPS`), by its name without `graph.`."""


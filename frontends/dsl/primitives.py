"""The DSL's primitives, each built from graph ops through the builder (frontends/builder.py).

A primitive has tensor operands (the values flowing in, then positional tensor arguments)
and attributes (positional constants after the tensors, or keywords). One table entry per
primitive: its operands, its attributes with defaults, and a function building it.

    x -> matmul(weight, transpose=NT) -> y      # matmul(x, weight): x @ weightᵀ
    (q, k) -> rope(theta=10000.0) -> (q_rot, k_rot)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from strata.frontends import builder as ops
from strata.frontends.builder import Tensor

REQUIRED = object()
"""The default of an attribute that must be given."""


@dataclass(frozen=True)
class Primitive:
    name: str
    operands: tuple[str, ...]  # a trailing "?" marks an optional operand, "*" a list
    attributes: tuple[tuple[str, object], ...]
    build: Callable[..., Tensor | tuple[Tensor, ...]]
    doc: str


PRIMITIVES: dict[str, Primitive] = {}


def primitive(operands: str, **attributes: object):
    """Register `build(*operands, **attributes)` under its name (without a trailing `_`)."""

    def register(build: Callable[..., Tensor | tuple[Tensor, ...]]):
        name = build.__name__.rstrip("_")
        PRIMITIVES[name] = Primitive(name, tuple(operands.split()), tuple(attributes.items()), build,
                                     (build.__doc__ or "").strip())
        return build

    return register


ALIASES = {"batched_matmul": "matmul", "reshape": "view", "sum": "reduce_sum", "mean": "reduce_mean",
           "max": "reduce_max", "attention": "flash_attention"}
"""Other names of primitives; a CamelCase name (`RMSNorm`, `ReLU`, `Linear`) finds the
primitive of its lower-case spelling."""


def lookup(name: str) -> Primitive | None:
    key = ALIASES.get(name, name)
    return PRIMITIVES.get(key) or PRIMITIVES.get(ALIASES.get(key.lower(), key.lower()))


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# ------------------------------------------------------------------ linear algebra


@primitive("a b", transpose="NN", alpha=1.0, accumulate=False)
def matmul(a, b, transpose, alpha, accumulate):
    """alpha · op(a) @ op(b); transpose NN, NT, TN or TT says which of (a, b) is
    transposed (its last two axes swapped); batch axes broadcast. `accumulate=true` adds
    the product to the destination when the destination is already defined."""
    if transpose not in ("NN", "NT", "TN", "TT"):
        raise ValueError(f"transpose must be NN, NT, TN or TT, got {transpose!r}")
    return ops.matmul(a, b, transpose[0] == "T", transpose[1] == "T", float(alpha))


@primitive("x weight bias?")
def linear(x, weight, bias):
    """x @ weightᵀ (+ bias): weight is [out, in], as in PyTorch."""
    y = ops.matmul(x, weight, transpose_b=True)
    return y if bias is None else y + bias


# ------------------------------------------------------------------ elementwise


@primitive("a b")
def add(a, b):
    """a + b (broadcast)."""
    return a + b


@primitive("a b")
def sub(a, b):
    """a - b (broadcast)."""
    return a - b


@primitive("a b")
def mul(a, b):
    """a * b (broadcast)."""
    return a * b


@primitive("a b")
def div(a, b):
    """a / b (broadcast)."""
    return a / b


@primitive("x", factor=REQUIRED)
def scale(x, factor):
    """x * factor (a compile-time number)."""
    return ops.scale(x, float(factor))


def _unary(name: str, build: Callable[[Tensor], Tensor], doc: str) -> None:
    def apply(x):
        return build(x)

    apply.__name__, apply.__doc__ = name, doc
    primitive("x")(apply)


for _name, _doc in [("neg", "-x"), ("exp", "e**x"), ("log", "natural log"), ("sqrt", "square root"),
                    ("rsqrt", "1 / sqrt(x)"), ("tanh", "tanh"), ("sigmoid", "1 / (1 + e**-x)"), ("relu", "max(x, 0)"),
                    ("silu", "x * sigmoid(x)"), ("abs", "|x|")]:
    _unary(_name, getattr(ops, _name), _doc)
_unary("relu2", lambda x: ops.relu(x) * ops.relu(x), "relu(x)²")
_unary("contiguous", lambda x: x, "x (tensors are values; layout is the compiler's business)")
_unary("copy", lambda x: x, "x (a value, never an alias)")


@primitive("x", approximate=True)
def gelu(x, approximate):
    """GELU; approximate=true is the tanh form (GPT-2's), false the exact erf form."""
    return ops.gelu(x, "tanh" if approximate else "none")


@primitive("gate up", approximate=True)
def geglu(gate, up, approximate):
    """gelu(gate) * up."""
    return ops.gelu(gate, "tanh" if approximate else "none") * up


@primitive("gate up")
def swiglu(gate, up):
    """silu(gate) * up."""
    return ops.silu(gate) * up


# ------------------------------------------------------------------ normalization and softmax


@primitive("x", dim=-1)
def softmax(x, dim):
    """softmax along dim."""
    return ops.softmax(x, int(dim))


@primitive("x", dim=-1)
def log_softmax(x, dim):
    """log(softmax(x)) along dim."""
    return ops.log_softmax(x, int(dim))


@primitive("x weight", eps=1e-6)
def rmsnorm(x, weight, eps):
    """x / sqrt(mean(x², last axis) + eps) * weight."""
    return ops.rmsnorm(x, weight, float(eps))


@primitive("x weight bias?", eps=1e-5)
def layernorm(x, weight, bias, eps):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis."""
    if bias is None:
        bias = ops.broadcast_to(x.graph.constant(0.0, x.dtype), weight.shape)
    return ops.layernorm(x, weight, bias, float(eps))


@primitive("residual x weight", eps=1e-6)
def fused_residual_rmsnorm(residual, x, weight, eps):
    """(residual + x, rmsnorm(residual + x)): the new residual and its normalized value."""
    total = residual + x
    return total, ops.rmsnorm(total, weight, float(eps))


# ------------------------------------------------------------------ attention


@primitive("q k v", causal=True, softmax_scale=None)
def flash_attention(q, k, v, causal, softmax_scale):
    """softmax(q @ kᵀ · scale, causal mask) @ v over [B, H, T, D] (any leading axes);
    fewer key/value heads than query heads (grouped-query attention) repeat each kv head
    for H / Hkv consecutive query heads."""
    k, v = _repeat_heads(k, q.shape[-3] if q.ndim >= 3 else 1), _repeat_heads(v, q.shape[-3] if q.ndim >= 3 else 1)
    scale_ = 1.0 / math.sqrt(q.shape[-1]) if softmax_scale is None else float(softmax_scale)
    return ops.attention(q, k, v, scale_, bool(causal))


def _repeat_heads(x: Tensor, heads: int) -> Tensor:
    if x.ndim < 3 or x.shape[-3] == heads:
        return x
    kv_heads = x.shape[-3]
    if heads % kv_heads:
        raise ValueError(f"{heads} query heads are not a multiple of {kv_heads} key/value heads")
    lead, rest = x.shape[:-3], x.shape[-2:]
    widened = ops.broadcast_to(ops.reshape(x, (*lead, kv_heads, 1, *rest)), (*lead, kv_heads, heads // kv_heads, *rest))
    return ops.reshape(widened, (*lead, heads, *rest))


@primitive("q k?", theta=10000.0, interleaved=False)
def rope(q, k, theta, interleaved):
    """Rotary position embedding of [..., T, D] tensors at positions 0..T-1: each pair of
    dims (i, i + D/2) — (2i, 2i+1) when interleaved — rotated by t · theta^(-2i/D)."""
    rotated = tuple(_rotate(x, float(theta), bool(interleaved)) for x in (q, k) if x is not None)
    return rotated if len(rotated) > 1 else rotated[0]


def _rotate(x: Tensor, theta: float, interleaved: bool) -> Tensor:
    length, dim = x.shape[-2], x.shape[-1]
    if dim % 2:
        raise ValueError(f"rope needs an even head dim, got {dim}")
    half = dim // 2
    angles = np.outer(np.arange(length, dtype=np.float64), theta ** (-np.arange(half, dtype=np.float64) * 2 / dim))
    cos, sin = (x.graph.constant(f(angles), x.dtype) for f in (np.cos, np.sin))
    if interleaved:
        pairs = ops.reshape(x, (*x.shape[:-1], half, 2))
        even, odd = (_take(pairs, -1, i, i + 1) for i in (0, 1))
        cos, sin = ops.reshape(cos, (length, half, 1)), ops.reshape(sin, (length, half, 1))
        out = ops.concat([even * cos - odd * sin, odd * cos + even * sin], -1)
        return ops.reshape(out, x.shape)
    first, second = _take(x, -1, 0, half), _take(x, -1, half, dim)
    return ops.concat([first * cos - second * sin, second * cos + first * sin], -1)


def _take(x: Tensor, axis: int, start: int, stop: int) -> Tensor:
    axis = _axis(axis, x.ndim)
    starts = [0] * x.ndim
    limits = list(x.shape)
    starts[axis], limits[axis] = start, stop
    return ops.slice_(x, starts, limits)


# ------------------------------------------------------------------ shapes


@primitive("x", sizes=REQUIRED, dim=-1)
def split(x, sizes, dim):
    """x cut along dim into pieces of `sizes` (which must add up to that dim)."""
    axis = _axis(int(dim), x.ndim)
    if sum(sizes) != x.shape[axis]:
        raise ValueError(f"split sizes {list(sizes)} add up to {sum(sizes)}, not dim {dim}'s size {x.shape[axis]}")
    bounds = np.cumsum([0, *sizes])
    return tuple(_take(x, axis, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]))


@primitive("inputs*", dim=-1)
def concat(inputs, dim):
    """The inputs joined along dim."""
    return ops.concat(inputs, _axis(int(dim), inputs[0].ndim))


@primitive("x", shape=REQUIRED)
def view(x, shape):
    """x with a new shape (same element count; one dim may be -1)."""
    return ops.reshape(x, [int(d) for d in shape])


@primitive("x", dim0=-2, dim1=-1)
def transpose(x, dim0, dim1):
    """x with two axes swapped."""
    permutation = list(range(x.ndim))
    a, b = _axis(int(dim0), x.ndim), _axis(int(dim1), x.ndim)
    permutation[a], permutation[b] = permutation[b], permutation[a]
    return ops.transpose(x, permutation)


@primitive("x", dims=REQUIRED)
def permute(x, dims):
    """x with its axes in the order `dims`."""
    return ops.transpose(x, [_axis(int(d), x.ndim) for d in dims])


def _reduction(name: str, build: Callable[..., Tensor], doc: str) -> None:
    def apply(x, dims, keepdim):
        axes = range(x.ndim) if dims is None else [_axis(int(d), x.ndim) for d in (dims if isinstance(dims, list) else [dims])]
        return build(x, tuple(axes), bool(keepdim))

    apply.__name__, apply.__doc__ = name, doc
    primitive("x", dims=None, keepdim=False)(apply)


_reduction("reduce_sum", ops.reduce_sum, "sum over dims (every axis when dims is None)")
_reduction("reduce_mean", ops.reduce_mean, "mean over dims (every axis when dims is None)")
_reduction("reduce_max", ops.reduce_max, "max over dims (every axis when dims is None)")


# ------------------------------------------------------------------ embeddings, losses, constants


@primitive("ids table")
def embedding(ids, table):
    """table[ids]: ids (int32/int64) flow in, the table is the argument."""
    return ops.embedding(table, ids)


@primitive("logits labels")
def cross_entropy(logits, labels):
    """Mean over rows of -log_softmax(logits)[row, label]; logits [N, C], labels [N]."""
    return ops.cross_entropy(logits, labels)


@primitive("x", p=REQUIRED, seed=0)
def dropout(x, p, seed):
    """x with elements zeroed with probability p and the rest scaled by 1/(1-p)."""
    return ops.dropout(x, float(p), int(seed))


@primitive("x", dtype=REQUIRED)
def cast(x, dtype):
    """x converted to dtype."""
    return ops.cast(x, dtype)

"""The translation table: ATen op (overload packet name) -> a function building graph ops.

Every function is called as `translate(importer, node, *args, **kwargs)` with the node's
arguments already translated: graph `Tensor`s, `Const`s (tensors known at import time),
and plain Python values. It returns the node's value (a Tensor, a Const, a tuple of them
for ops with several results, or None for assertions).

Decompositions (no graph op of their own): addmm/linear/mm/bmm/matmul → graph.matmul (+
add), batch-norm inference → sub/mul/add with rsqrt, clamp → maximum/minimum,
masked_fill/where → select, logical ops on bools → select/compare, pow with a small
integer or ±0.5 exponent → mul/sqrt/rsqrt, activations (leaky_relu, elu, softplus, mish,
hard*) → compare/select/exp/log/tanh, statistics (var, std, logsumexp, norms, amin) →
reductions, index with constant indices → embedding, stack → reshape + concat, split/chunk/unbind →
slices, scaled_dot_product_attention with a mask that is neither empty nor causal →
matmul + select/add + softmax + matmul. Recognized patterns: attention written out
(softmax(scale·q@kᵀ + a constant empty or causal mask) @ v, transformers' eager
attention) → graph.attention; the tanh form of GELU
written out with pow/tanh (transformers' "gelu_new") → graph.gelu(approximate="tanh"),
and RMSNorm written out as x * rsqrt(mean(x²) + eps) * w → graph.rmsnorm.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from itertools import permutations

import torch
import torch.fx

from strata.frontends import builder as ops
from strata.frontends.builder import Tensor
from strata.frontends.torch.values import Const, packet_name, strata_dtype

TRANSLATIONS: dict[str, Callable] = {}


def translates(*names: str):
    def register(function: Callable) -> Callable:
        for name in names:
            TRANSLATIONS[name] = function
        return function

    return register


# --- helpers ---------------------------------------------------------------------


def val(node: torch.fx.Node):
    return node.meta["val"]


def out_dtype(cx, node: torch.fx.Node) -> str:
    """The element type of the node's (first) result."""
    v = val(node)
    return strata_dtype((v[0] if isinstance(v, (tuple, list)) else v).dtype, cx.where())


def out_shape(node: torch.fx.Node) -> tuple[int, ...]:
    return tuple(int(d) for d in val(node).shape)


def meta_of(arg: object) -> object:
    """An fx argument as something torch.result_type takes."""
    if isinstance(arg, torch.fx.Node):
        v = val(arg)
        return torch.empty(tuple(v.shape), dtype=v.dtype, device="meta")
    return arg


def common_dtype(cx, a: object, b: object) -> str:
    """The promoted element type of two fx arguments (PyTorch's rule)."""
    if not isinstance(a, torch.fx.Node) and not isinstance(b, torch.fx.Node):
        return cx.tensor(a).dtype
    return strata_dtype(torch.result_type(meta_of(a), meta_of(b)), cx.where())


def axis(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


def is_float(dtype: str) -> bool:
    return dtype in ("f16", "bf16", "f32", "f64")


def reshaped(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    return x if x.shape == tuple(shape) else ops.reshape(x, shape)


def is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def call_of(n: object, *names: str) -> bool:
    return isinstance(n, torch.fx.Node) and n.op == "call_function" and packet_name(n.target) in names


def scalar_operand(n: object, name: str) -> tuple[torch.fx.Node, float] | None:
    """(tensor operand, number) when `n` is `name(tensor, number)` in either order."""
    if not call_of(n, name) or len(n.args) != 2 or n.kwargs.get("alpha", 1) != 1:
        return None
    a, b = n.args
    if isinstance(a, torch.fx.Node) and is_number(b):
        return a, b
    if isinstance(b, torch.fx.Node) and is_number(a):
        return b, a
    return None


# --- elementwise -----------------------------------------------------------------


def _unary(function: Callable[[Tensor], Tensor]):
    def translate(cx, node, x):
        return function(cx.tensor(x, out_dtype(cx, node)))

    return translate


for _name, _function in {
    "neg": ops.neg, "abs": ops.abs, "exp": ops.exp, "log": ops.log, "sqrt": ops.sqrt,
    "rsqrt": ops.rsqrt, "tanh": ops.tanh, "sigmoid": ops.sigmoid, "relu": ops.relu,
    "silu": ops.silu, "erf": ops.erf,
}.items():  # fmt: skip
    translates(_name)(_unary(_function))


@translates("leaky_relu")
def _leaky_relu(cx, node, x, negative_slope=0.01):
    x = cx.tensor(x, out_dtype(cx, node))
    return ops.select(ops.compare(x, cx.tensor(0.0, x.dtype), "gt"), x, ops.scale(x, float(negative_slope)))


@translates("hardtanh", "relu6")
def _hardtanh(cx, node, x, min_val=-1.0, max_val=1.0):
    if packet_name(node.target) == "relu6":
        min_val, max_val = 0.0, 6.0
    return _clamp(cx, node, x, min_val, max_val)


@translates("elu", "celu", "selu")
def _elu(cx, node, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """scale · (x if x > 0 else alpha · (exp(input_scale · x) − 1))."""
    name = packet_name(node.target)
    if name == "celu":  # celu(x, alpha) = elu with input_scale 1/alpha
        alpha, scale, input_scale = alpha, 1.0, 1.0 / alpha
    elif name == "selu":
        alpha, scale, input_scale = 1.6732632423543772, 1.0507009873554805, 1.0
    x = cx.tensor(x, out_dtype(cx, node))
    one = cx.tensor(1.0, x.dtype)
    negative = ops.scale(ops.sub(ops.exp(ops.scale(x, float(input_scale))), one), float(alpha))
    y = ops.select(ops.compare(x, cx.tensor(0.0, x.dtype), "gt"), x, negative)
    return y if scale == 1 else ops.scale(y, float(scale))


def _softplus_of(cx, x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta·x)) / beta, and x itself where beta·x > threshold (PyTorch's rule)."""
    bx = ops.scale(x, float(beta)) if beta != 1 else x
    soft = ops.log(ops.add(ops.exp(bx), cx.tensor(1.0, x.dtype)))
    soft = ops.scale(soft, 1.0 / beta) if beta != 1 else soft
    return ops.select(ops.compare(bx, cx.tensor(float(threshold), x.dtype), "gt"), x, soft)


@translates("softplus")
def _softplus(cx, node, x, beta=1.0, threshold=20.0):
    return _softplus_of(cx, cx.tensor(x, out_dtype(cx, node)), float(beta), float(threshold))


@translates("mish")
def _mish(cx, node, x):
    x = cx.tensor(x, out_dtype(cx, node))
    return ops.mul(x, ops.tanh(_softplus_of(cx, x)))


@translates("hardsigmoid", "hardswish")
def _hardsigmoid(cx, node, x):
    """clamp(x/6 + 1/2, 0, 1); hardswish multiplies it by x."""
    x = cx.tensor(x, out_dtype(cx, node))
    gate = ops.add(ops.scale(x, 1.0 / 6.0), cx.tensor(0.5, x.dtype))
    gate = ops.minimum(ops.maximum(gate, cx.tensor(0.0, x.dtype)), cx.tensor(1.0, x.dtype))
    return gate if packet_name(node.target) == "hardsigmoid" else ops.mul(x, gate)


@translates("log1p", "expm1")
def _log1p_expm1(cx, node, x):
    """log(1 + x) and exp(x) − 1 (computed plainly: less accurate than PyTorch's near 0)."""
    x = cx.tensor(x, out_dtype(cx, node))
    one = cx.tensor(1.0, x.dtype)
    return ops.log(ops.add(x, one)) if packet_name(node.target) == "log1p" else ops.sub(ops.exp(x), one)


@translates("sign")
def _sign(cx, node, x):
    x = cx.tensor(x, out_dtype(cx, node))
    zero, one, minus_one = (cx.tensor(v, x.dtype) for v in (0, 1, -1))
    return ops.select(ops.compare(x, zero, "gt"), one, ops.select(ops.compare(x, zero, "lt"), minus_one, zero))


@translates("reciprocal")
def _reciprocal(cx, node, x):
    dtype = out_dtype(cx, node)
    return ops.div(cx.tensor(1.0, dtype), cx.tensor(x, dtype))


@translates("square")
def _square(cx, node, x):
    x = cx.tensor(x, out_dtype(cx, node))
    return ops.mul(x, x)


@translates("gelu")
def _gelu(cx, node, x, approximate="none"):
    return ops.gelu(cx.tensor(x, out_dtype(cx, node)), approximate)


def _scaled(cx, value, factor, dtype):
    if factor == 1:
        return cx.tensor(value, dtype)
    if is_float(dtype) and isinstance(value, Tensor):
        return ops.scale(cx.tensor(value, dtype), float(factor))
    return ops.mul(cx.tensor(value, dtype), cx.tensor(factor, dtype))


@translates("add")
def _add(cx, node, a, b, alpha=1):
    dtype = out_dtype(cx, node)
    return ops.add(cx.tensor(a, dtype), _scaled(cx, b, alpha, dtype))


@translates("sub")
def _sub(cx, node, a, b, alpha=1):
    dtype = out_dtype(cx, node)
    return ops.sub(cx.tensor(a, dtype), _scaled(cx, b, alpha, dtype))


@translates("rsub")
def _rsub(cx, node, a, b, alpha=1):
    dtype = out_dtype(cx, node)
    return ops.sub(cx.tensor(b, dtype), _scaled(cx, a, alpha, dtype))


@translates("mul")
def _mul(cx, node, a, b):
    x = match_gelu_tanh(node)
    if x is not None:
        return ops.gelu(cx.tensor(cx.values[x], out_dtype(cx, node)), "tanh")
    matched = match_rmsnorm(node)
    if matched is not None:
        x, w, eps = matched
        return ops.rmsnorm(cx.tensor(cx.values[x]), cx.tensor(cx.values[w]), eps)
    dtype = out_dtype(cx, node)
    if is_float(dtype) and is_number(b) and not isinstance(a, (int, float)):
        return ops.scale(cx.tensor(a, dtype), float(b))
    if is_float(dtype) and is_number(a) and not isinstance(b, (int, float)):
        return ops.scale(cx.tensor(b, dtype), float(a))
    return ops.mul(cx.tensor(a, dtype), cx.tensor(b, dtype))


@translates("div")
def _div(cx, node, a, b, rounding_mode=None):
    if rounding_mode is not None:
        raise cx.error(f"division with rounding_mode={rounding_mode!r} is not supported")
    dtype = out_dtype(cx, node)
    return ops.div(cx.tensor(a, dtype), cx.tensor(b, dtype))


@translates("maximum")
def _maximum(cx, node, a, b):
    dtype = out_dtype(cx, node)
    return ops.maximum(cx.tensor(a, dtype), cx.tensor(b, dtype))


@translates("max")
def _max(cx, node, x, other=None, *rest):
    if other is None:  # max(x): the largest element
        return _reduction(ops.reduce_max)(cx, node, x)
    if isinstance(other, int):
        raise cx.error("max along a dimension returns indices too: use amax")
    return _maximum(cx, node, x, other)


@translates("minimum")
def _minimum(cx, node, a, b):
    dtype = out_dtype(cx, node)
    return ops.minimum(cx.tensor(a, dtype), cx.tensor(b, dtype))


@translates("pow")
def _pow(cx, node, a, b):
    dtype = out_dtype(cx, node)
    if is_number(b):
        x = cx.tensor(a, dtype)
        if b == 1:
            return x
        if b == 2:
            return ops.mul(x, x)
        if b == 3:
            return ops.mul(ops.mul(x, x), x)
        if b == 0.5:
            return ops.sqrt(x)
        if b == -0.5:
            return ops.rsqrt(x)
        if b == -1:
            return ops.div(cx.tensor(1.0, dtype), x)
    return ops.pow(cx.tensor(a, dtype), cx.tensor(b, dtype))


@translates("clamp", "clip")
def _clamp(cx, node, x, min=None, max=None):  # noqa: A002 - PyTorch's names
    dtype = out_dtype(cx, node)
    x = cx.tensor(x, dtype)
    if min is not None:
        x = ops.maximum(x, cx.tensor(min, dtype))
    if max is not None:
        x = ops.minimum(x, cx.tensor(max, dtype))
    return x


@translates("clamp_min")
def _clamp_min(cx, node, x, min):  # noqa: A002
    return _clamp(cx, node, x, min=min)


@translates("clamp_max")
def _clamp_max(cx, node, x, max):  # noqa: A002
    return _clamp(cx, node, x, max=max)


def _compare(predicate: str):
    def translate(cx, node, a, b):
        dtype = common_dtype(cx, node.args[0], node.args[1])
        return ops.compare(cx.tensor(a, dtype), cx.tensor(b, dtype), predicate)

    return translate


for _name, _predicate in {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}.items():
    translates(_name)(_compare(_predicate))


@translates("where")
def _where(cx, node, cond, a=None, b=None):
    if a is None:
        raise cx.error("where(cond) with one operand (nonzero) has a data-dependent shape")
    dtype = out_dtype(cx, node)
    return ops.select(cx.tensor(cond, "i1"), cx.tensor(a, dtype), cx.tensor(b, dtype))


@translates("masked_fill")
def _masked_fill(cx, node, x, mask, value):
    dtype = out_dtype(cx, node)
    return ops.select(cx.tensor(mask, "i1"), cx.tensor(value, dtype), cx.tensor(x, dtype))


def _booleans(cx, node, *operands) -> list[Tensor]:
    if out_dtype(cx, node) != "i1":
        raise cx.error("logical and bitwise ops are supported on bool tensors only")
    return [cx.tensor(x, "i1") for x in operands]


@translates("logical_not", "bitwise_not")
def _not(cx, node, x):
    (x,) = _booleans(cx, node, x)
    return ops.compare(x, cx.tensor(False, "i1"), "eq")


@translates("logical_and", "bitwise_and", "__and__")
def _and(cx, node, a, b):
    a, b = _booleans(cx, node, a, b)
    return ops.select(a, b, cx.tensor(False, "i1"))


@translates("logical_or", "bitwise_or", "__or__")
def _or(cx, node, a, b):
    a, b = _booleans(cx, node, a, b)
    return ops.select(a, cx.tensor(True, "i1"), b)


# --- patterns ----------------------------------------------------------------------


def match_gelu_tanh(node: torch.fx.Node) -> torch.fx.Node | None:
    """x when `node` is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (in PyTorch's order)."""
    for half, rest in permutations(node.args):
        h = scalar_operand(half, "mul")
        plus_one = scalar_operand(rest, "add")
        if not h or h[1] != 0.5 or not plus_one or plus_one[1] != 1.0 or not call_of(plus_one[0], "tanh"):
            continue
        x = h[0]
        inner = scalar_operand(plus_one[0].args[0], "mul")
        if not inner or abs(inner[1] - math.sqrt(2 / math.pi)) > 1e-6 or not call_of(inner[0], "add"):
            continue
        total = inner[0]
        if total.kwargs.get("alpha", 1) != 1 or len(total.args) != 2:
            continue
        for same, cubic in permutations(total.args):
            term = scalar_operand(cubic, "mul")
            if same is x and term and abs(term[1] - 0.044715) < 1e-9:
                cube = scalar_operand(term[0], "pow")
                if cube and cube[0] is x and cube[1] == 3:
                    return x
    return None


def match_rmsnorm(node: torch.fx.Node) -> tuple[torch.fx.Node, torch.fx.Node, float] | None:
    """(x, weight, eps) when `node` is w · (x · rsqrt(mean(x², -1, keepdim) + eps)) with a
    weight of x's last size, all in one element type (a cast to the same type is fine)."""

    def through_casts(n):
        while call_of(n, "to", "_to_copy", "type_as") and val(n).dtype == val(n.args[0]).dtype:
            n = n.args[0]
        return n

    for weight, normed in permutations(node.args):
        normed = through_casts(normed)
        if not isinstance(weight, torch.fx.Node) or not call_of(normed, "mul") or len(normed.args) != 2:
            continue
        for x, root in permutations(normed.args):
            if not call_of(root, "rsqrt") or not isinstance(x, torch.fx.Node):
                continue
            plus = scalar_operand(root.args[0], "add")
            if not plus or not call_of(plus[0], "mean"):
                continue
            mean = plus[0]
            dims = mean.args[1] if len(mean.args) > 1 else mean.kwargs.get("dim")
            keepdim = mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)
            square = scalar_operand(mean.args[0], "pow")
            rank = len(val(x).shape)
            if not square or square[0] is not x or square[1] != 2 or not keepdim:
                continue
            if list(dims or []) not in ([-1], [rank - 1]) or rank == 0:
                continue
            size = val(x).shape[-1]
            dtype = val(x).dtype
            if tuple(val(weight).shape) != (size,) or val(weight).dtype != dtype or val(node).dtype != dtype:
                continue
            if not dtype.is_floating_point:
                continue
            return x, weight, float(plus[1])
    return None


def through_identities(n: object) -> object:
    """`n` past ops that do not change its values: same-type casts, eval-mode dropout, copies."""
    while isinstance(n, torch.fx.Node):
        if call_of(n, "to", "_to_copy", "type_as", "clone", "contiguous", "alias", "detach") and (
            isinstance(n.args[0], torch.fx.Node) and val(n).dtype == val(n.args[0]).dtype
        ):
            n = n.args[0]
        elif call_of(n, "dropout") and (len(n.args) < 3 or not n.args[2] or not n.args[1]):
            n = n.args[0]
        else:
            break
    return n


def match_attention(cx, node: torch.fx.Node):
    """(q, k, v, scale, causal) when `node` is attention written out — softmax(s·q@kᵀ [+ a
    constant mask that masks nothing or is causal]) @ v, as transformers' eager attention
    computes it — else None."""
    if len(node.args) != 2:
        return None
    probs, v = through_identities(node.args[0]), node.args[1]
    if not call_of(probs, "softmax", "_softmax") or not isinstance(v, torch.fx.Node):
        return None
    scores = probs.args[0]
    rank = len(val(probs).shape)
    if rank < 2 or axis(probs.args[1], rank) != rank - 1 or val(probs).dtype != val(scores).dtype:
        return None
    mask = None
    if call_of(scores, "add"):
        if len(scores.args) != 2 or scores.kwargs.get("alpha", 1) != 1:
            return None
        for a, b in permutations(scores.args):
            if isinstance(b, torch.fx.Node) and isinstance(cx.values.get(b), Const) and isinstance(a, torch.fx.Node):
                if tuple(val(a).shape) == tuple(val(scores).shape):
                    scores, mask = a, cx.values[b].value
                    break
        else:
            return None
    scale = 1.0
    if call_of(scores, "mul", "div") and len(scores.args) == 2:
        a, b = scores.args
        if call_of(scores, "mul") and not isinstance(a, torch.fx.Node):
            a, b = b, a
        factor = cx.values[b].value if isinstance(b, torch.fx.Node) and isinstance(cx.values.get(b), Const) else b
        if isinstance(factor, torch.Tensor) and factor.numel() == 1:
            factor = float(factor)
        if not is_number(factor) or not isinstance(a, torch.fx.Node) or factor == 0:
            return None
        scores, scale = a, float(factor) if call_of(scores, "mul") else 1.0 / float(factor)
    if not call_of(scores, "matmul", "bmm") or len(scores.args) != 2:
        return None
    q, key_t = scores.args
    if not call_of(key_t, "transpose") or not isinstance(q, torch.fx.Node):
        return None
    k = key_t.args[0]
    r = len(val(key_t).shape)
    if r < 2 or {axis(key_t.args[1], r), axis(key_t.args[2], r)} != {r - 2, r - 1}:
        return None
    shapes = [tuple(val(x).shape) for x in (q, k, v)]
    if len({s[:-2] for s in shapes}) != 1 or min(len(s) for s in shapes) < 2 or shapes[1][-2] != shapes[2][-2]:
        return None
    if not val(q).dtype.is_floating_point:
        return None
    kind = "none" if mask is None else mask_kind(mask, shapes[0][-2], shapes[1][-2])
    if kind is None:
        return None
    return q, k, v, scale, kind == "causal"


# --- reductions and row ops ----------------------------------------------------------


def _reduction(function):
    def translate(cx, node, x, dim=None, keepdim=False, *, dtype=None):
        out = out_dtype(cx, node)
        x = cx.tensor(x, out)
        if dim is None or dim == []:
            axes = list(range(x.ndim))
        else:
            axes = [axis(d, x.ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        return reshaped(function(x, axes, bool(keepdim)), out_shape(node))

    return translate


def _axes_of(x: Tensor, dim) -> list[int]:
    if dim is None or dim == []:
        return list(range(x.ndim))
    return [axis(d, x.ndim) for d in ([dim] if isinstance(dim, int) else dim)]


@translates("amin", "min")
def _amin(cx, node, x, dim=None, keepdim=False, *rest):
    """−max(−x) (`min(x)` over everything; `min(a, b)` is minimum)."""
    if packet_name(node.target) == "min" and dim is not None:
        if isinstance(dim, int):
            raise cx.error("min along a dimension returns indices too: use amin")
        return _minimum(cx, node, x, dim)
    x = cx.tensor(x, out_dtype(cx, node))
    return reshaped(ops.neg(ops.reduce_max(ops.neg(x), _axes_of(x, dim), bool(keepdim))), out_shape(node))


@translates("logsumexp")
def _logsumexp(cx, node, x, dim, keepdim=False):
    """max + log Σ exp(x − max) over `dim`."""
    x = cx.tensor(x, out_dtype(cx, node))
    axes = _axes_of(x, dim)
    top = ops.reduce_max(x, axes, True)
    total = ops.log(ops.reduce_sum(ops.exp(ops.sub(x, top)), axes, True))
    return reshaped(ops.add(total, top), out_shape(node))


@translates("var", "std")
def _var(cx, node, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Σ (x − mean)² / (N − correction) over `dim` (the square root of it for std)."""
    if isinstance(unbiased, bool):  # var(x, unbiased) or var(x, dim, unbiased, keepdim)
        correction = 1 if unbiased else 0
    elif isinstance(unbiased, (int, float)) and correction is None:
        correction = unbiased
    correction = 1 if correction is None else correction
    x = cx.tensor(x, out_dtype(cx, node))
    axes = _axes_of(x, dim)
    count = math.prod(x.shape[a] for a in axes)
    centered = ops.sub(x, ops.reduce_mean(x, axes, True))
    total = ops.reduce_sum(ops.mul(centered, centered), axes, bool(keepdim))
    y = ops.scale(total, 1.0 / max(count - correction, 0)) if count - correction > 0 else ops.div(total, cx.tensor(0.0, x.dtype))
    y = ops.sqrt(y) if packet_name(node.target) == "std" else y
    return reshaped(y, out_shape(node))


@translates("linalg_vector_norm", "norm")
def _norm(cx, node, x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 - PyTorch's name
    """The 2-norm (√Σx²) or 1-norm (Σ|x|) over `dim`."""
    if packet_name(node.target) == "norm" and isinstance(ord, (list, tuple)):  # norm(x, dim) forms
        ord, dim = 2, ord
    x = cx.tensor(x, out_dtype(cx, node))
    axes = _axes_of(x, dim)
    if ord in (2, 2.0, None):
        y = ops.sqrt(ops.reduce_sum(ops.mul(x, x), axes, bool(keepdim)))
    elif ord in (1, 1.0):
        y = ops.reduce_sum(ops.abs(x), axes, bool(keepdim))
    else:
        raise cx.error(f"norms of order {ord!r} are not supported (1 and 2 are)")
    return reshaped(y, out_shape(node))


translates("sum")(_reduction(ops.reduce_sum))
translates("mean")(_reduction(ops.reduce_mean))
translates("amax")(_reduction(ops.reduce_max))


@translates("any", "all")
def _any_all(cx, node, x, dim=None, keepdim=False):
    """any: max over the axes of x ≠ 0 (as i32) ≠ 0; all(x) = not any(not x)."""
    x = cx.tensor(x)
    truth = ops.compare(x, cx.tensor(0, x.dtype), "ne") if x.dtype != "i1" else x
    if packet_name(node.target) == "all":
        truth = ops.compare(truth, cx.tensor(False, "i1"), "eq")
    if dim is None or dim == []:
        axes = list(range(x.ndim))
    else:
        axes = [axis(d, x.ndim) for d in ([dim] if isinstance(dim, int) else dim)]
    found = ops.compare(ops.reduce_max(ops.cast(truth, "i32"), axes, bool(keepdim)), cx.tensor(0, "i32"), "ne")
    if packet_name(node.target) == "all":
        found = ops.compare(found, cx.tensor(False, "i1"), "eq")
    return reshaped(found, out_shape(node))


def _row(function):
    def translate(cx, node, x, dim, *rest, **kwargs):
        return function(cx.tensor(x, out_dtype(cx, node)), dim)

    return translate


translates("softmax", "_softmax")(_row(ops.softmax))
translates("log_softmax", "_log_softmax")(_row(ops.log_softmax))


def _normalized(cx, x: Tensor, normalized_shape, *params):
    """x flattened over the normalized axes, and the params flattened to match."""
    count = math.prod(normalized_shape)
    lead = x.shape[: x.ndim - len(normalized_shape)]
    flat = reshaped(x, (*lead, count))
    return flat, [None if p is None else reshaped(cx.tensor(p, x.dtype), (count,)) for p in params]


@translates("layer_norm")
def _layer_norm(cx, node, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    x = cx.tensor(x, out_dtype(cx, node))
    flat, (w, b) = _normalized(cx, x, normalized_shape, weight, bias)
    size = flat.shape[-1]
    w = w if w is not None else cx.tensor(Const(torch.ones(size)), x.dtype)
    b = b if b is not None else cx.tensor(Const(torch.zeros(size)), x.dtype)
    return reshaped(ops.layernorm(flat, w, b, float(eps)), x.shape)


@translates("native_layer_norm")
def _native_layer_norm(cx, node, x, normalized_shape, weight, bias, eps):
    out = _layer_norm(cx, node, x, normalized_shape, weight, bias, eps)
    x = cx.tensor(x)
    axes = list(range(x.ndim - len(normalized_shape), x.ndim))
    mean = ops.reduce_mean(x, axes, keepdims=True)
    centered = ops.sub(x, mean)
    variance = ops.reduce_mean(ops.mul(centered, centered), axes, keepdims=True)
    rstd = ops.rsqrt(ops.add(variance, cx.tensor(float(eps), x.dtype)))
    return out, mean, rstd


@translates("rms_norm")
def _rms_norm(cx, node, x, normalized_shape, weight=None, eps=None):
    x = cx.tensor(x, out_dtype(cx, node))
    flat, (w,) = _normalized(cx, x, normalized_shape, weight)
    size = flat.shape[-1]
    w = w if w is not None else cx.tensor(Const(torch.ones(size)), x.dtype)
    if eps is None:
        eps = torch.finfo(val(node).dtype).eps
    return reshaped(ops.rmsnorm(flat, w, float(eps)), x.shape)


@translates("_native_batch_norm_legit_no_training", "batch_norm")
def _batch_norm(cx, node, x, weight, bias, running_mean, running_var, *rest):
    """Inference batch norm over axis 1: (x − mean) · rsqrt(var + eps) · w + b."""
    if packet_name(node.target) == "batch_norm":  # (…, training, momentum, eps, cudnn_enabled)
        training, _, eps = rest[0], rest[1], rest[2]
        if training:
            raise cx.error("batch norm in training mode is not supported (call model.eval())")
    else:
        _, eps = rest[0], rest[1]
    x = cx.tensor(x)
    shape = (x.shape[1],) + (1,) * (x.ndim - 2)

    def channel(p, default):
        return reshaped(cx.tensor(p if p is not None else Const(torch.full((x.shape[1],), default)), x.dtype), shape)

    y = ops.mul(ops.sub(x, channel(running_mean, 0.0)), ops.rsqrt(ops.add(channel(running_var, 1.0), cx.tensor(float(eps), x.dtype))))
    y = ops.add(ops.mul(y, channel(weight, 1.0)), channel(bias, 0.0))
    if packet_name(node.target) == "batch_norm":
        return y
    empty = Const(torch.empty(0))
    return y, empty, empty


# --- shapes --------------------------------------------------------------------------


@translates("view", "reshape", "_unsafe_view", "view_copy", "unsqueeze", "squeeze", "flatten",
            "unflatten", "_reshape_alias")  # fmt: skip
def _reshape(cx, node, x, *args, **kwargs):
    return reshaped(cx.tensor(x), out_shape(node))


@translates("permute", "permute_copy")
def _permute(cx, node, x, dims):
    x = cx.tensor(x)
    permutation = [axis(d, x.ndim) for d in dims]
    return x if permutation == list(range(x.ndim)) else ops.transpose(x, permutation)


@translates("transpose", "swapaxes")
def _transpose(cx, node, x, dim0, dim1):
    x = cx.tensor(x)
    permutation = list(range(x.ndim))
    d0, d1 = axis(dim0, x.ndim), axis(dim1, x.ndim)
    permutation[d0], permutation[d1] = permutation[d1], permutation[d0]
    return x if d0 == d1 else ops.transpose(x, permutation)


@translates("t")
def _t(cx, node, x):
    x = cx.tensor(x)
    return x if x.ndim < 2 else ops.transpose(x, list(range(x.ndim))[::-1])


@translates("expand", "expand_copy", "expand_as", "broadcast_to")
def _expand(cx, node, x, *args, **kwargs):
    x = cx.tensor(x)
    shape = out_shape(node)
    return x if x.shape == shape else ops.broadcast_to(x, shape)


@translates("contiguous", "clone", "alias", "detach", "lift_fresh_copy", "_to_copy", "to",
            "type_as")  # fmt: skip
def _identity_or_cast(cx, node, x, *args, **kwargs):
    return cx.tensor(x, out_dtype(cx, node))


@translates("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")
def _dropout(cx, node, x, p=0.5, train=False):
    if train and p:
        raise cx.error("dropout in training mode is not supported (call model.eval() before exporting)")
    return cx.tensor(x)


@translates("native_dropout")
def _native_dropout(cx, node, x, p, train):
    if train and p:
        raise cx.error("dropout in training mode is not supported (call model.eval() before exporting)")
    x = cx.tensor(x)
    return x, Const(torch.ones(x.shape, dtype=torch.bool))


def _slice(x: Tensor, dim: int, start: int, limit: int, step: int = 1) -> Tensor:
    starts, limits, steps = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[dim], limits[dim], steps[dim] = start, limit, step
    if (start, limit, step) == (0, x.shape[dim], 1):
        return x
    return ops.slice_(x, starts, limits, steps)


@translates("slice", "slice_copy")
def _slice_tensor(cx, node, x, dim=0, start=None, end=None, step=1):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    start, end, step = slice(start, end, step).indices(x.shape[d])
    end = max(end, start)
    return _slice(x, d, start, end, step)


@translates("narrow")
def _narrow(cx, node, x, dim, start, length):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    start = axis(start, x.shape[d])
    return _slice(x, d, start, start + length)


@translates("select", "select_copy")
def _select(cx, node, x, dim, index):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    index = axis(index, x.shape[d])
    return reshaped(_slice(x, d, index, index + 1), out_shape(node))


def _pieces(cx, x: Tensor, dim: int, sizes: list[int]) -> tuple[Tensor, ...]:
    d = axis(dim, x.ndim)
    pieces, start = [], 0
    for size in sizes:
        pieces.append(_slice(x, d, start, start + size))
        start += size
    return tuple(pieces)


@translates("split", "split_with_sizes", "chunk", "tensor_split", "split_copy", "unsafe_split")
def _split(cx, node, x, _sizes, dim=0):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    return _pieces(cx, x, d, [int(v.shape[d]) for v in val(node)])


@translates("unbind")
def _unbind(cx, node, x, dim=0):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    return tuple(reshaped(p, tuple(int(s) for s in v.shape)) for p, v in zip(_pieces(cx, x, d, [1] * x.shape[d]), val(node)))


@translates("cat", "concat", "concatenate")
def _cat(cx, node, tensors, dim=0):
    dtype = out_dtype(cx, node)
    inputs = [cx.tensor(t, dtype) for t in tensors]
    inputs = [t for t in inputs if not (t.ndim == 1 and t.shape[0] == 0)] or inputs[:1]
    if len(inputs) == 1:
        return inputs[0]
    return ops.concat(inputs, axis(dim, inputs[0].ndim))


@translates("stack")
def _stack(cx, node, tensors, dim=0):
    dtype = out_dtype(cx, node)
    inputs = [cx.tensor(t, dtype) for t in tensors]
    d = axis(dim, inputs[0].ndim + 1)
    inputs = [reshaped(t, t.shape[:d] + (1,) + t.shape[d:]) for t in inputs]
    return inputs[0] if len(inputs) == 1 else ops.concat(inputs, d)


# --- linear algebra and nn -------------------------------------------------------------


def _as_2d(x: Tensor) -> Tensor:
    return reshaped(x, (math.prod(x.shape[:-1]), x.shape[-1]))


@translates("linear")
def _linear(cx, node, x, weight, bias=None):
    dtype = out_dtype(cx, node)
    x, weight = cx.tensor(x, dtype), cx.tensor(weight, dtype)
    if weight.ndim == 1:
        return _matmul(cx, node, x, weight)
    y = ops.matmul(_as_2d(x), weight, transpose_b=True)
    if bias is not None:
        y = ops.add(y, cx.tensor(bias, dtype))
    return reshaped(y, out_shape(node))


@translates("addmm")
def _addmm(cx, node, bias, a, b, beta=1, alpha=1):
    dtype = out_dtype(cx, node)
    y = ops.matmul(cx.tensor(a, dtype), cx.tensor(b, dtype), alpha=float(alpha))
    if beta:
        y = ops.add(y, _scaled(cx, bias, beta, dtype))
    return y


@translates("baddbmm")
def _baddbmm(cx, node, bias, a, b, beta=1, alpha=1):
    return _addmm(cx, node, bias, a, b, beta, alpha)


@translates("mm", "bmm", "matmul", "dot", "mv")
def _matmul(cx, node, a, b):
    dtype = out_dtype(cx, node)
    matched = match_attention(cx, node) if packet_name(node.target) in ("matmul", "bmm") else None
    if matched is not None:
        q, k, v, scale, causal = matched
        return ops.attention(*(cx.tensor(cx.values[n], dtype) for n in (q, k, v)), scale, causal)
    a, b = cx.tensor(a, dtype), cx.tensor(b, dtype)
    if a.ndim == 1:
        a = reshaped(a, (1, a.shape[0]))
    if b.ndim == 1:
        b = reshaped(b, (b.shape[0], 1))
    if b.ndim == 2 and a.ndim > 2:  # one GEMM over all rows of a
        return reshaped(ops.matmul(_as_2d(a), b), out_shape(node))
    return reshaped(ops.matmul(a, b), out_shape(node))


def _per_axis(value, count: int, name: str, cx) -> list[int]:
    values = list(value) if isinstance(value, (list, tuple)) else [value] * count
    if len(values) == 1:
        values *= count
    if len(values) != count or not all(isinstance(v, int) for v in values):
        raise cx.error(f"{name} {value!r} does not give one int per spatial axis")
    return values


def _padded(cx, x: Tensor, pads: list[tuple[int, int]], value: float) -> Tensor:
    """x with `value` added before and after each of its last len(pads) axes."""
    for i, (low, high) in enumerate(pads):
        a = x.ndim - len(pads) + i
        parts = []
        for size in (low, None, high):
            if size is None:
                parts.append(x)
            elif size:
                shape = list(x.shape)
                shape[a] = size
                parts.append(cx.tensor(Const(torch.full(shape, value)), x.dtype))
        x = ops.concat(parts, a) if len(parts) > 1 else x
    return x


def _windows(x: Tensor, kernel, stride, dilation, out_sizes):
    """For each kernel offset (row-major), the strided slice of x's last axes that the
    offset meets in every output position: [..., *out_sizes]."""
    count = len(kernel)
    lead = x.ndim - count
    for offset in itertools.product(*(range(k) for k in kernel)):
        starts = [0] * lead + [o * d for o, d in zip(offset, dilation)]
        limits = list(x.shape[:lead]) + [o * d + (n - 1) * s + 1 for o, d, n, s in zip(offset, dilation, out_sizes, stride)]
        yield ops.slice_(x, starts, limits, [1] * lead + list(stride))


def _same_padding(kernel, dilation) -> list[tuple[int, int]]:
    return [((d * (k - 1)) // 2, d * (k - 1) - (d * (k - 1)) // 2) for k, d in zip(kernel, dilation)]


@translates("conv1d", "conv2d", "conv3d", "convolution", "_convolution")
def _convolution(cx, node, x, weight, bias=None, stride=1, padding=0, dilation=1, *rest):
    """Convolution as one matmul over patches (im2col): the kernel's shifted strided
    slices of the padded input are concatenated along the channels, then multiplied by
    the weight reshaped to [out channels, kernel positions × in channels]."""
    if packet_name(node.target) in ("convolution", "_convolution"):
        transposed, groups = rest[0], rest[2]
        if transposed:
            raise cx.error("transposed convolutions are not supported")
    else:
        groups = rest[0] if rest else 1
    dtype = out_dtype(cx, node)
    x, w = cx.tensor(x, dtype), cx.tensor(weight, dtype)
    count = w.ndim - 2
    kernel = list(w.shape[2:])
    stride, dilation = _per_axis(stride, count, "stride", cx), _per_axis(dilation, count, "dilation", cx)
    if padding == "valid":
        pads = [(0, 0)] * count
    elif padding == "same":
        pads = _same_padding(kernel, dilation)
    else:
        pads = [(p, p) for p in _per_axis(padding, count, "padding", cx)]
    if x.ndim == count + 1:  # unbatched
        x = reshaped(x, (1, *x.shape))
    out_sizes = list(out_shape(node)[-count:])
    x = _padded(cx, x, pads, 0.0)
    b = cx.tensor(bias, dtype) if bias is not None else None
    if groups == 1:
        y = _conv_matmul(cx, x, w, b, kernel, stride, dilation, out_sizes)
    else:  # one convolution per group of channels, concatenated
        c, o = x.shape[1] // groups, w.shape[0] // groups
        parts = []
        for g in range(groups):
            xg = ops.slice_(x, [0, g * c] + [0] * count, [x.shape[0], (g + 1) * c, *x.shape[2:]])
            wg = ops.slice_(w, [g * o] + [0] * (count + 1), [(g + 1) * o, *w.shape[1:]])
            bg = ops.slice_(b, [g * o], [(g + 1) * o]) if b is not None else None
            parts.append(_conv_matmul(cx, xg, wg, bg, kernel, stride, dilation, out_sizes))
        y = ops.concat(parts, 1)
    return reshaped(y, out_shape(node))


def _conv_matmul(cx, x: Tensor, w: Tensor, bias, kernel, stride, dilation, out_sizes) -> Tensor:
    """One convolution of padded x [N, C, *] with w [O, C, *kernel] (+ bias [O]):
    [N, O, *out_sizes]; the bias is added to the matmul's result (its fused epilogue)."""
    count = len(kernel)
    n, c = x.shape[0], x.shape[1]
    channels_last = [0, *range(2, count + 2), 1]
    columns = [ops.transpose(window, channels_last) for window in _windows(x, kernel, stride, dilation, out_sizes)]
    patches = ops.concat(columns, count + 1) if len(columns) > 1 else columns[0]  # [N, *out, K·C]
    width = math.prod(kernel) * c
    rows = reshaped(patches, (n * math.prod(out_sizes), width))
    matrix = reshaped(ops.transpose(w, channels_last), (w.shape[0], width))  # [O, K·C], offset-major
    y = ops.matmul(rows, matrix, transpose_b=True)
    if bias is not None:
        y = ops.add(y, bias)
    y = reshaped(y, (n, *out_sizes, w.shape[0]))
    return ops.transpose(y, [0, count + 1, *range(1, count + 1)])


@translates("max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "avg_pool1d", "avg_pool2d", "avg_pool3d")  # fmt: skip
def _pool(cx, node, x, kernel_size, stride=None, padding=0, *rest):
    """The maximum (or mean) of the kernel's shifted strided slices of the padded input."""
    name = packet_name(node.target)
    maximum = name.startswith("max")
    shape = out_shape(node) if not isinstance(val(node), (tuple, list)) else tuple(int(d) for d in val(node)[0].shape)
    x = cx.tensor(x, out_dtype(cx, node))
    count = int(name.split("pool")[1][0])
    kernel = _per_axis(kernel_size, count, "kernel_size", cx)
    stride = _per_axis(stride or kernel, count, "stride", cx)
    pads = [(p, p) for p in _per_axis(padding, count, "padding", cx)]
    if maximum:
        dilation = _per_axis(rest[0] if rest else 1, count, "dilation", cx)
    else:
        dilation = [1] * count
        count_include_pad = rest[1] if len(rest) > 1 else True
        divisor = rest[2] if len(rest) > 2 else None
        if any(p for p, _ in pads) and not count_include_pad and divisor is None:
            raise cx.error("average pooling that excludes padding from the count is not supported")
    out_sizes = list(shape[-count:])
    # ceil_mode: the last windows may run past the padded input
    sizes = [size + low + high for size, (low, high) in zip(x.shape[-count:], pads)]
    extents = [(n - 1) * s + d * (k - 1) + 1 for n, s, d, k in zip(out_sizes, stride, dilation, kernel)]
    if any(e > size for e, size in zip(extents, sizes)):
        if not maximum:
            raise cx.error("average pooling with ceil_mode windows past the input is not supported")
        pads = [(low, high + max(0, e - size)) for (low, high), e, size in zip(pads, extents, sizes)]
    x = _padded(cx, x, pads, float("-inf") if maximum else 0.0)
    result = None
    for window in _windows(x, kernel, stride, dilation, out_sizes):
        result = window if result is None else (ops.maximum if maximum else ops.add)(result, window)
    if not maximum:
        result = ops.scale(result, 1.0 / (divisor or math.prod(kernel)))
    result = reshaped(result, shape)
    if name.endswith("with_indices"):
        return result, None
    return result


@translates("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "_adaptive_avg_pool2d",
            "_adaptive_avg_pool3d")  # fmt: skip
def _adaptive_avg_pool(cx, node, x, output_size):
    """Means over equal windows: the input's spatial sizes must be multiples of the output's."""
    x = cx.tensor(x, out_dtype(cx, node))
    out = out_shape(node)
    count = len(output_size) if isinstance(output_size, (list, tuple)) else 1
    sizes, targets = x.shape[-count:], out[-count:]
    if any(s % t for s, t in zip(sizes, targets)):
        raise cx.error(f"adaptive pooling from {sizes} to {targets} has unequal windows (not supported)")
    if all(t == 1 for t in targets):
        return reshaped(ops.reduce_mean(x, list(range(x.ndim - count, x.ndim)), True), out)
    kernel = [s // t for s, t in zip(sizes, targets)]
    result = None
    for window in _windows(x, kernel, kernel, [1] * count, list(targets)):
        result = window if result is None else ops.add(result, window)
    return reshaped(ops.scale(result, 1.0 / math.prod(kernel)), out)


@translates("embedding")
def _embedding(cx, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return ops.embedding(cx.tensor(weight), cx.tensor(indices))


@translates("index_select")
def _index_select(cx, node, x, dim, index):
    x = cx.tensor(x)
    if x.ndim != 2 or axis(dim, 2) != 0:
        raise cx.error("index_select is supported along axis 0 of a rank-2 tensor only (as an embedding)")
    return ops.embedding(x, cx.tensor(index))


@translates("index")
def _index(cx, node, x, indices):
    """x[i0, i1, …] with constant index tensors on leading axes (as transformers' masks
    index a runtime attention mask): one embedding lookup of the flattened leading axes,
    at linear indices computed at import time."""
    x = cx.tensor(x)
    count = len(indices)
    if count == 0 or count > x.ndim or not all(isinstance(i, Const) for i in indices):
        raise cx.error("indexing is supported with constant index tensors on leading axes only")
    values = [i.value for i in indices]
    if any(v.dtype == torch.bool or v.is_floating_point() for v in values):
        raise cx.error("indexing with boolean or float tensors is not supported")
    lead, rest = x.shape[:count], x.shape[count:]
    linear = torch.zeros((), dtype=torch.int64)
    for v, size in zip(values, lead):
        if v.numel() and (bool((v < -size).any()) or bool((v >= size).any())):
            raise cx.error(f"index out of range for an axis of size {size}")
        linear = linear * size + torch.remainder(v.to(torch.int64), size)
    width = math.prod(rest)
    table = reshaped(x, (math.prod(lead), width))
    picked = ops.embedding(table, cx.tensor(Const(linear)))
    return reshaped(picked, out_shape(node))


def _gather(cx, x: Tensor, dim: int, index: Tensor) -> Tensor:
    """torch.gather(x, dim, index) as a one-hot selection: out[…j…] = Σₖ x[…k…]·(k = index[…j…])
    along `dim` (an index out of range picks 0 where PyTorch would raise)."""
    d = axis(dim, x.ndim)
    if index.ndim != x.ndim:
        raise cx.error("gather needs an index of the operand's rank")
    limits = [index.shape[a] if a != d else x.shape[a] for a in range(x.ndim)]
    if list(x.shape) != limits:
        x = ops.slice_(x, [0] * x.ndim, limits)
    last = [a for a in range(x.ndim) if a != d] + [d]
    xt, it = ops.transpose(x, last) if d != x.ndim - 1 else x, ops.transpose(index, last) if d != x.ndim - 1 else index
    k, j = x.shape[d], index.shape[d]
    lead = xt.shape[:-1]
    positions = cx.tensor(Const(torch.arange(k)), it.dtype)
    onehot = ops.compare(reshaped(it, (*lead, j, 1)), positions, "eq")
    picked = ops.reduce_sum(ops.select(onehot, reshaped(xt, (*lead, 1, k)), cx.tensor(0, x.dtype)), [x.ndim])
    if d == x.ndim - 1:
        return picked
    back = [last.index(a) for a in range(x.ndim)]
    return ops.transpose(picked, back)


@translates("gather", "take_along_dim")
def _gather_op(cx, node, x, dim, index, *rest, **kwargs):
    if packet_name(node.target) == "take_along_dim":
        x, index, dim = x, dim, index  # take_along_dim(x, indices, dim)
    if dim is None:
        raise cx.error("take_along_dim without a dim is not supported")
    return _gather(cx, cx.tensor(x, out_dtype(cx, node)), dim, cx.tensor(index))


def _nll(cx, log_probs: Tensor, labels: Tensor, reduction: int, ignore_index: int) -> tuple[Tensor, Tensor]:
    """(loss, the number of counted labels) of −log_probs[n, labels[n]], labels equal to
    ignore_index left out, as PyTorch's nll_loss (reduction 0 none, 1 mean, 2 sum)."""
    if log_probs.ndim == 1:
        log_probs, labels = reshaped(log_probs, (1, log_probs.shape[0])), reshaped(labels, (1,))
    if log_probs.ndim != 2 or labels.ndim != 1:
        raise cx.error(f"the loss needs inputs [N, C] and labels [N], got {log_probs.shape} and {labels.shape}")
    n = labels.shape[0]
    picked = reshaped(_gather(cx, log_probs, 1, reshaped(labels, (n, 1))), (n,))
    keep = ops.compare(labels, cx.tensor(ignore_index, labels.dtype), "ne")
    losses = ops.select(keep, ops.neg(picked), cx.tensor(0.0, log_probs.dtype))
    counted = ops.reduce_sum(ops.cast(keep, log_probs.dtype), [0])
    if reduction == 0:
        return losses, counted
    total = ops.reduce_sum(losses, [0])
    return (ops.div(total, counted) if reduction == 1 else total), counted


@translates("nll_loss", "nll_loss_forward", "nll_loss_nd")
def _nll_loss(cx, node, log_probs, labels, weight=None, reduction=1, ignore_index=-100):
    if weight is not None:
        raise cx.error("losses with class weights are not supported")
    loss, counted = _nll(cx, cx.tensor(log_probs, out_dtype(cx, node)), cx.tensor(labels), reduction, ignore_index)
    return (loss, counted) if packet_name(node.target).endswith("_forward") else loss


@translates("cross_entropy_loss")
def _cross_entropy(cx, node, logits, labels, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    """graph.cross_entropy, with PyTorch's ignore_index: an ignored row's logits become
    (0, −10⁴, …) and its label 0, so its loss is exactly 0, and the mean is rescaled from
    all rows to the counted ones. reduction="none" is log_softmax and a pick, written out."""
    if weight is not None or label_smoothing:
        raise cx.error("cross_entropy with class weights or label smoothing is not supported")
    logits, labels = cx.tensor(logits, out_dtype(cx, node)), cx.tensor(labels)
    if not labels.dtype.startswith("i") or labels.dtype == "i1":
        raise cx.error("cross_entropy with class probabilities (float targets) is not supported")
    if logits.ndim not in (1, 2):
        raise cx.error(f"cross_entropy needs logits [N, C] or [C], got {logits.shape}")
    if logits.ndim == 1:
        logits, labels = reshaped(logits, (1, logits.shape[0])), reshaped(labels, (1,))
    n, classes = logits.shape
    if reduction == 0:
        top = ops.reduce_max(logits, [1], True)
        shifted = ops.sub(logits, top)
        log_probs = ops.sub(shifted, ops.log(ops.reduce_sum(ops.exp(shifted), [1], True)))
        return reshaped(_nll(cx, log_probs, labels, 0, ignore_index)[0], out_shape(node))
    keep = ops.compare(labels, cx.tensor(ignore_index, labels.dtype), "ne")
    neutral = torch.full((classes,), -1e4)
    neutral[0] = 0.0
    rows = ops.select(reshaped(keep, (n, 1)), logits, cx.tensor(Const(neutral), logits.dtype))
    loss = ops.cross_entropy(rows, ops.select(keep, labels, cx.tensor(0, labels.dtype)))
    counted = ops.reduce_sum(ops.cast(keep, logits.dtype), [0])
    total = ops.scale(loss, float(n))
    return total if reduction == 2 else ops.div(total, counted)


@translates("constant_pad_nd", "pad")
def _pad(cx, node, x, pad, *rest, **kwargs):
    """Constant padding (negative amounts crop): pad = (last low, last high, next low, …)."""
    if packet_name(node.target) == "constant_pad_nd":  # (x, pad, value=0)
        mode, value = "constant", rest[0] if rest else kwargs.get("value", 0)
    else:  # pad(x, pad, mode="constant", value=None)
        mode = rest[0] if rest else kwargs.get("mode", "constant")
        value = rest[1] if len(rest) > 1 else kwargs.get("value")
    if mode != "constant":
        raise cx.error(f"padding mode {mode!r} is not supported (only 'constant')")
    x = cx.tensor(x, out_dtype(cx, node))
    count = len(pad) // 2
    pads = [(pad[2 * (count - 1 - i)], pad[2 * (count - 1 - i) + 1]) for i in range(count)]  # first axis first
    crops = [(max(-low, 0), max(-high, 0)) for low, high in pads]
    if any(a or b for a, b in crops):
        lead = x.ndim - count
        starts = [0] * lead + [a for a, _ in crops]
        limits = list(x.shape[:lead]) + [size - b for size, (_, b) in zip(x.shape[lead:], crops)]
        x = ops.slice_(x, starts, limits)
    return _padded(cx, x, [(max(low, 0), max(high, 0)) for low, high in pads], float(value or 0))


def mask_kind(mask: torch.Tensor, sq: int, sk: int) -> str | None:
    """"none" (masks nothing), "causal" (exactly the top-left causal mask, for every
    batch entry), or None (anything else), for an attention mask known at import time."""
    if mask.dtype == torch.bool:
        keep = mask
    elif mask.dtype.is_floating_point:  # additive: 0 keeps, −∞ (or a huge negative) drops
        keep = mask == 0
        dropped = mask[~keep]
        if not bool(((dropped == float("-inf")) | (dropped <= torch.finfo(mask.dtype).min / 2)).all()):
            return None
    else:
        return None
    try:
        keep = torch.broadcast_to(keep, (*keep.shape[:-2], sq, sk))
    except RuntimeError:
        return None
    if bool(keep.all()):
        return "none"
    causal = torch.ones(sq, sk, dtype=torch.bool).tril()
    return "causal" if bool((keep == causal).all()) else None


@translates("scaled_dot_product_attention")
def _attention(cx, node, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False):
    if dropout_p:
        raise cx.error("attention dropout is not supported (call model.eval() before exporting)")
    dtype = out_dtype(cx, node)
    q, k, v = cx.tensor(q, dtype), cx.tensor(k, dtype), cx.tensor(v, dtype)
    sq, sk = q.shape[-2], k.shape[-2]
    scale = float(scale) if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        k, v = _repeat_heads(k, q.shape[-3]), _repeat_heads(v, q.shape[-3])
    batch = q.shape[:-2]
    k = k if k.shape[:-2] == batch else ops.broadcast_to(k, batch + k.shape[-2:])
    v = v if v.shape[:-2] == batch else ops.broadcast_to(v, batch + v.shape[-2:])
    causal = bool(is_causal)
    if isinstance(attn_mask, Const):
        kind = mask_kind(attn_mask.value, sq, sk)
        if kind == "none" or (kind == "causal" and not causal):
            attn_mask, causal = None, causal or kind == "causal"
    if attn_mask is None:
        return ops.attention(q, k, v, scale, causal)
    scores = ops.matmul(q, k, transpose_b=True, alpha=scale)
    if causal:
        tril = torch.ones(sq, sk, dtype=torch.bool).tril()
        scores = ops.select(cx.tensor(Const(tril)), scores, cx.tensor(float("-inf"), dtype))
    mask_value = attn_mask.value if isinstance(attn_mask, Const) else None
    if (mask_value is not None and mask_value.dtype == torch.bool) or (isinstance(attn_mask, Tensor) and attn_mask.dtype == "i1"):
        scores = ops.select(cx.tensor(attn_mask, "i1"), scores, cx.tensor(float("-inf"), dtype))
    else:
        scores = ops.add(scores, cx.tensor(attn_mask, dtype))
    # As PyTorch defines it, a row whose keys are all masked attends to nothing: its
    # output is 0 (not the NaN of a softmax over −∞ alone).
    minus_infinity = cx.tensor(float("-inf"), dtype)
    alive = ops.cast(ops.compare(scores, minus_infinity, "ne"), "i32")
    any_alive = ops.compare(ops.reduce_max(alive, [scores.ndim - 1], True), cx.tensor(0, "i32"), "ne")
    probs = ops.select(any_alive, ops.softmax(scores, -1), cx.tensor(0.0, dtype))
    return ops.matmul(probs, v)


def _repeat_heads(x: Tensor, heads: int) -> Tensor:
    """[..., H, S, D] → [..., heads, S, D], each head repeated heads/H times in place."""
    h, s, d = x.shape[-3:]
    lead = x.shape[:-3]
    x = ops.reshape(x, (*lead, h, 1, s, d))
    x = ops.broadcast_to(x, (*lead, h, heads // h, s, d))
    return ops.reshape(x, (*lead, heads, s, d))


# --- constants and assertions ---------------------------------------------------------


@translates("zeros_like", "ones_like", "full_like", "new_zeros", "new_ones", "new_full",
            "scalar_tensor", "full", "zeros", "ones", "arange", "eye", "linspace")  # fmt: skip
def _factory(cx, node, *args, **kwargs):
    """Ops whose result does not depend on a graph operand's values: evaluated by PyTorch
    on stand-ins of the operand's shape and type (folded when all operands are known)."""

    def stand_in(n: torch.fx.Node):
        value = cx.values[n]
        if isinstance(value, Const):
            return value.value
        meta = val(n)
        return torch.zeros(tuple(meta.shape), dtype=meta.dtype)

    args = torch.fx.node.map_arg(node.args, stand_in)
    kwargs = torch.fx.node.map_arg(node.kwargs, stand_in)
    return Const(node.target(*args, **kwargs))


@translates("_assert_tensor_metadata", "_assert_scalar", "_assert_async", "sym_constrain_range",
            "sym_constrain_range_for_size", "_functional_assert_async")  # fmt: skip
def _assertion(cx, node, *args, **kwargs):
    return None


SUPPORTED_OPS: tuple[str, ...] = tuple(sorted(TRANSLATIONS))
"""Every ATen op (overload packet) with a translation."""

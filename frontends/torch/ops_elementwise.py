"""Translations of elementwise ops: arithmetic, activations, comparisons, selection, logic
on bools, casts and copies.

Decompositions: clamp → maximum/minimum, masked_fill/where → select, logical ops on
bools → select/compare, pow with a small integer or ±0.5 exponent → mul/sqrt/rsqrt,
activations (leaky_relu, elu, softplus, mish, hard*) → compare/select/exp/log/tanh.
Patterns recognized at their final `mul`: the tanh form of GELU written out with pow/tanh
(transformers' "gelu_new") → graph.gelu(approximate="tanh"), and RMSNorm written out as
x * rsqrt(mean(x²) + eps) * w → graph.rmsnorm.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import permutations

import torch
import torch.fx

from strata.frontends import builder as ops
from strata.frontends.builder import Tensor
from strata.frontends.torch.ops_common import (
    call_of, common_dtype, is_float, is_number, out_dtype, registrar, scalar_operand, val,
)  # fmt: skip
from strata.frontends.torch.values import packet_name

TRANSLATIONS: dict[str, Callable] = {}
"""This module's part of the translation table (ops.py joins the parts)."""
translates = registrar(TRANSLATIONS)


# --- unary ops and activations ----------------------------------------------------


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


# --- arithmetic -------------------------------------------------------------------


def scaled(cx, value, factor, dtype):
    if factor == 1:
        return cx.tensor(value, dtype)
    if is_float(dtype) and isinstance(value, Tensor):
        return ops.scale(cx.tensor(value, dtype), float(factor))
    return ops.mul(cx.tensor(value, dtype), cx.tensor(factor, dtype))


@translates("add")
def _add(cx, node, a, b, alpha=1):
    dtype = out_dtype(cx, node)
    return ops.add(cx.tensor(a, dtype), scaled(cx, b, alpha, dtype))


@translates("sub")
def _sub(cx, node, a, b, alpha=1):
    dtype = out_dtype(cx, node)
    return ops.sub(cx.tensor(a, dtype), scaled(cx, b, alpha, dtype))


@translates("rsub")
def _rsub(cx, node, a, b, alpha=1):
    dtype = out_dtype(cx, node)
    return ops.sub(cx.tensor(b, dtype), scaled(cx, a, alpha, dtype))


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
def elementwise_maximum(cx, node, a, b):
    dtype = out_dtype(cx, node)
    return ops.maximum(cx.tensor(a, dtype), cx.tensor(b, dtype))


@translates("minimum")
def elementwise_minimum(cx, node, a, b):
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


# --- comparisons, selection and logic ---------------------------------------------


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


# --- casts and copies -------------------------------------------------------------


@translates("contiguous", "clone", "alias", "detach", "lift_fresh_copy", "_to_copy", "to",
            "type_as")  # fmt: skip
def _identity_or_cast(cx, node, x, *args, **kwargs):
    return cx.tensor(x, out_dtype(cx, node))


# --- patterns ---------------------------------------------------------------------


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

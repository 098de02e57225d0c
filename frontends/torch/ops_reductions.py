"""Translations of reductions: sum, mean, amax and max, amin and min (−max(−x)), any and
all, and statistics written as reductions: logsumexp, var, std, vector norms."""

from __future__ import annotations

import math
from collections.abc import Callable

from strata.frontends import builder as ops
from strata.frontends.builder import Tensor
from strata.frontends.torch.ops_common import axis, out_dtype, out_shape, registrar, reshaped
from strata.frontends.torch.ops_elementwise import elementwise_maximum, elementwise_minimum
from strata.frontends.torch.values import packet_name

TRANSLATIONS: dict[str, Callable] = {}
"""This module's part of the translation table (ops.py joins the parts)."""
translates = registrar(TRANSLATIONS)


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


translates("sum")(_reduction(ops.reduce_sum))
translates("mean")(_reduction(ops.reduce_mean))
translates("amax")(_reduction(ops.reduce_max))


@translates("max")
def _max(cx, node, x, other=None, *rest):
    if other is None:  # max(x): the largest element
        return _reduction(ops.reduce_max)(cx, node, x)
    if isinstance(other, int):
        raise cx.error("max along a dimension returns indices too: use amax")
    return elementwise_maximum(cx, node, x, other)


@translates("amin", "min")
def _amin(cx, node, x, dim=None, keepdim=False, *rest):
    """−max(−x) (`min(x)` over everything; `min(a, b)` is minimum)."""
    if packet_name(node.target) == "min" and dim is not None:
        if isinstance(dim, int):
            raise cx.error("min along a dimension returns indices too: use amin")
        return elementwise_minimum(cx, node, x, dim)
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

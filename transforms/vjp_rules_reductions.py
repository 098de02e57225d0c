"""VJP rules of the reductions (the cotangent broadcast back over the reduced axes) and of
matmul (a contraction: products summed over k). The context the rules see is in
vjp_context.py."""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import normalize_axes, shape_of
from strata.dialects.opinfo import register_vjp
from strata.transforms.vjp_context import Cotangents, VjpContext, element, unbroadcast_all


# ---------------------------------------------------------------------------------------
# Reductions: the cotangent reshaped to keep the reduced axes, broadcast back over them.


def reduced_axes(ctx: VjpContext) -> tuple[int, ...]:
    return normalize_axes(ctx.params["axes"], len(shape_of(ctx.operand_type(0))))


def with_kept_axes(ctx: VjpContext, value: SSAValue) -> SSAValue:
    """A reduction's result (or cotangent) in keepdims form: broadcastable against x."""
    axes = reduced_axes(ctx)
    kept = [1 if i in axes else d for i, d in enumerate(shape_of(ctx.operand_type(0)))]
    return ctx.reshape(value, kept)


def spread(ctx: VjpContext, value: SSAValue) -> SSAValue:
    return ctx.emit(graph.BroadcastToOp, [with_kept_axes(ctx, value)], ctx.operand_type(0))


@register_vjp(graph.ReduceSumOp)
def reduce_sum(ctx: VjpContext) -> Cotangents:
    return [spread(ctx, ctx.cotangent)]


@register_vjp(graph.ReduceMeanOp)
def reduce_mean(ctx: VjpContext) -> Cotangents:
    shape = shape_of(ctx.operand_type(0))
    count = math.prod(shape[a] for a in reduced_axes(ctx))
    # A mean over no elements: x has no elements either, so any factor gives its (empty)
    # cotangent.
    return [ctx.scale(spread(ctx, ctx.cotangent), 1.0 / max(count, 1))]


@register_vjp(graph.ReduceMaxOp)
def reduce_max(ctx: VjpContext) -> Cotangents:
    """The cotangent goes to the positions equal to the max, split evenly among ties."""
    x, element_type = ctx.operand(0), element(ctx.operand_type(0))
    is_max = ctx.compare(x, with_kept_axes(ctx, ctx.result), "eq")
    ties = ctx.emit(
        graph.ReduceSumOp, [ctx.mask_float(is_max, element_type)], axes=reduced_axes(ctx), keepdims=True
    )
    share = ctx.div(with_kept_axes(ctx, ctx.cotangent), ties)
    return [ctx.where(is_max, share, ctx.scalar(0.0, element_type))]


# ---------------------------------------------------------------------------------------
# Linear algebra.


@register_vjp(graph.MatmulOp)
def matmul(ctx: VjpContext) -> Cotangents:
    """y = α op(a) op(b). With A = op(a), B = op(b): dA = α dy Bᵀ, dB = α Aᵀ dy; a
    transposed operand gets the transpose of that, folded into the matmul's flags:

        da = α dy op(b)ᵀ     -> matmul(dy, b, tb = !tb)         if not ta
        da = α op(b) dyᵀ     -> matmul(b, dy, ta = tb, tb = 1)  if ta
        db = α op(a)ᵀ dy     -> matmul(a, dy, ta = !ta)         if not tb
        db = α dyᵀ op(a)     -> matmul(dy, a, ta = 1, tb = ta)  if tb

    Batch axes broadcast: each product has the full batch shape and is summed back
    over the axes its operand was broadcast along. The common case of a 2-D b (a weight)
    under a batched, untransposed a (activations [..., M, K]) skips that: the batch axes
    merge into the rows (a reshape, free), so db is one matmul contracting over every
    row of the batch instead of a batch of products and a sum over them."""
    a, b, g = ctx.operand(0), ctx.operand(1), ctx.cotangent
    ta, tb, alpha = ctx.params["transpose_a"], ctx.params["transpose_b"], ctx.params["alpha"]
    if ta:
        da = ctx.matmul(b, g, transpose_a=tb, transpose_b=True, alpha=alpha)
    else:
        da = ctx.matmul(g, b, transpose_b=not tb, alpha=alpha)
    a_shape, g_shape = shape_of(a.type), shape_of(g.type)
    if not ta and len(shape_of(b.type)) == 2 and len(a_shape) > 2:
        rows = math.prod(a_shape[:-1])
        a_rows, g_rows = ctx.reshape(a, (rows, a_shape[-1])), ctx.reshape(g, (rows, g_shape[-1]))
        if tb:
            db = ctx.matmul(g_rows, a_rows, transpose_a=True, alpha=alpha)
        else:
            db = ctx.matmul(a_rows, g_rows, transpose_a=True, alpha=alpha)
        return unbroadcast_all(ctx, [da, db])
    if tb:
        db = ctx.matmul(g, a, transpose_a=True, transpose_b=ta, alpha=alpha)
    else:
        db = ctx.matmul(a, g, transpose_a=not ta, alpha=alpha)
    return unbroadcast_all(ctx, [da, db])

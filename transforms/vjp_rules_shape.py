"""VJP rules of the shape ops: the inverse data movement (reshape back, the inverse
permutation, sums over broadcast axes, slices of a concat, a slice scattered back into
zeros). The context the rules see is in vjp_context.py."""

from __future__ import annotations

from xdsl.ir import SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import normalize_axis, shape_of, tensor
from strata.dialects.opinfo import register_vjp
from strata.transforms.vjp_context import Cotangents, VjpContext


# ---------------------------------------------------------------------------------------
# Shape ops: the inverse data movement.


@register_vjp(graph.ReshapeOp)
def reshape(ctx: VjpContext) -> Cotangents:
    return [ctx.reshape(ctx.cotangent, shape_of(ctx.operand_type(0)))]


@register_vjp(graph.TransposeOp)
def transpose(ctx: VjpContext) -> Cotangents:
    permutation = ctx.params["permutation"]
    inverse = [permutation.index(axis) for axis in range(len(permutation))]
    return [ctx.emit(graph.TransposeOp, [ctx.cotangent], permutation=tuple(inverse))]


@register_vjp(graph.BroadcastToOp)
def broadcast_to(ctx: VjpContext) -> Cotangents:
    return [ctx.unbroadcast(ctx.cotangent, ctx.operand_type(0))]


@register_vjp(graph.ConcatOp)
def concat(ctx: VjpContext) -> Cotangents:
    """Each input gets its own slice of the cotangent along the axis."""
    shape = shape_of(ctx.result_type)
    axis = normalize_axis(ctx.params["axis"], len(shape))
    cotangents, offset = [], 0
    for i in range(len(ctx.op.operands)):
        size = shape_of(ctx.operand_type(i))[axis]
        starts = [offset if a == axis else 0 for a in range(len(shape))]
        limits = [offset + size if a == axis else d for a, d in enumerate(shape)]
        cotangents.append(
            ctx.emit(graph.SliceOp, [ctx.cotangent], starts=starts, limits=limits, steps=[1] * len(shape))
        )
        offset += size
    return cotangents


@register_vjp(graph.SliceOp)
def slice_(ctx: VjpContext) -> Cotangents:
    """The cotangent scattered back into zeros, one axis at a time (pure data movement
    with concat/reshape/slice: no scatter op is needed)."""
    p = ctx.params
    g = ctx.cotangent
    if 0 in shape_of(g.type):
        return [ctx.full(0.0, ctx.operand_type(0))]
    for axis, size in enumerate(shape_of(ctx.operand_type(0))):
        g = unslice_axis(ctx, g, axis, p["starts"][axis], p["steps"][axis], size)
    return [g]


def unslice_axis(ctx: VjpContext, g: SSAValue, axis: int, start: int, step: int, size: int) -> SSAValue:
    """Place g's entries j at start + j·step of a zero axis of length `size`."""
    if step > 1:
        g = interleave_zeros(ctx, g, axis, step)
    covered = shape_of(g.type)[axis]
    if start + covered > size:
        shape = shape_of(g.type)
        limits = [size - start if a == axis else d for a, d in enumerate(shape)]
        g = ctx.emit(graph.SliceOp, [g], starts=[0] * len(shape), limits=limits, steps=[1] * len(shape))
    return pad_axis(ctx, g, axis, start, size - start - shape_of(g.type)[axis])


def interleave_zeros(ctx: VjpContext, g: SSAValue, axis: int, step: int) -> SSAValue:
    """[.., n, ..] -> [.., n·step, ..] with g's entries at multiples of step, zeros between."""
    shape = shape_of(g.type)
    split = (*shape[: axis + 1], 1, *shape[axis + 1 :])
    gap = ctx.full(0.0, tensor((*shape[: axis + 1], step - 1, *shape[axis + 1 :]), g.type.element_type))
    spaced = ctx.emit(graph.ConcatOp, [ctx.reshape(g, split), gap], axis=axis + 1)
    return ctx.reshape(spaced, (*shape[:axis], shape[axis] * step, *shape[axis + 1 :]))


def pad_axis(ctx: VjpContext, g: SSAValue, axis: int, before: int, after: int) -> SSAValue:
    """g with `before` and `after` zeros along axis (concat; nothing when both are 0)."""
    shape = shape_of(g.type)
    pieces = []
    for width in (before, None, after):
        if width is None:
            pieces.append(g)
        elif width > 0:
            zeros_type = tensor((*shape[:axis], width, *shape[axis + 1 :]), g.type.element_type)
            pieces.append(ctx.full(0.0, zeros_type))
    return g if len(pieces) == 1 else ctx.emit(graph.ConcatOp, pieces, axis=axis)

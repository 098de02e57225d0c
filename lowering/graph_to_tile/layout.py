"""Tile lowerings of the ops that move data without computing: constants, reshape (the
same buffer), transpose (a permuted view, absorbed into matmul operands where it can be),
broadcast_to, slice and concat (copy kernels through strided views)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import TensorViewType
from strata.lowering.graph_to_tile.program import ProgramLowering, copy_kernel, into_new_buffer, logical_shape
from strata.lowering.tile_builder import broadcast_strides, contiguous_strides


@register_tile_lowering(graph.ConstantOp)
def lower_constant(op: graph.ConstantOp, p: ProgramLowering) -> None:
    p.bind(op.result, p.new_buffer(op.result.type, init=op.value))


@register_tile_lowering(graph.ReshapeOp)
def lower_reshape(op: graph.ReshapeOp, p: ProgramLowering) -> None:
    """Row-major buffers are flat: a reshape is the same buffer (zero copy)."""
    p.bind(op.result, p.buffer_of(op.x))


def read_only_as_matmul_operand(value: SSAValue) -> bool:
    """Every use of `value` is a matmul operand (directly, as q/k/v of an attention, or as
    an operand of the matmul heading a graph.fused): those read through any strided view."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, graph.AttentionOp):
            continue
        if isinstance(user, graph.FusedOp):
            arg = user.body.block.args[use.index]
            head = user.body.block.first_op
            if not isinstance(head, graph.MatmulOp) or any(u.operation is not head for u in arg.uses):
                return False
        elif not isinstance(user, graph.MatmulOp):
            return False
    return True


@register_tile_lowering(graph.TransposeOp)
def lower_transpose(op: graph.TransposeOp, p: ProgramLowering) -> None:
    """A copy through a permuted view, or none at all when only matmuls read the result:
    they take the permuted strides directly (transpose absorption)."""
    permutation = op.params()["permutation"]
    if op.result.uses and read_only_as_matmul_operand(op.result) and len(permutation) >= 2:
        _, _, source_strides = p.operand(op.x)
        p.bind(op.result, p.buffer_of(op.x))
        p.strides[op.result] = tuple(source_strides[a] for a in permutation)
        return
    strides = contiguous_strides(shape_of(op.x.type))
    shape = logical_shape(op.result.type)
    permuted = tuple(strides[a] for a in permutation) or (0,)
    into_new_buffer(op, p, TensorViewType(shape, op.x.type.element_type, permuted))


@register_tile_lowering(graph.BroadcastToOp)
def lower_broadcast_to(op: graph.BroadcastToOp, p: ProgramLowering) -> None:
    shape = logical_shape(op.result.type)
    strides = broadcast_strides(shape_of(op.x.type), shape)
    into_new_buffer(op, p, TensorViewType(shape, op.x.type.element_type, strides))


@register_tile_lowering(graph.SliceOp)
def lower_slice(op: graph.SliceOp, p: ProgramLowering) -> None:
    params = op.params()
    strides = contiguous_strides(shape_of(op.x.type))
    offset = sum(s * st for s, st in zip(params["starts"], strides))
    view_strides = tuple(step * st for step, st in zip(params["steps"], strides)) or (0,)
    view = TensorViewType(logical_shape(op.result.type), op.x.type.element_type, view_strides, offset)
    into_new_buffer(op, p, view)


@register_tile_lowering(graph.ConcatOp)
def lower_concat(op: graph.ConcatOp, p: ProgramLowering) -> None:
    out_type = op.result.type
    out_shape = shape_of(out_type)
    axis = op.params()["axis"] % len(out_shape)
    out_strides = contiguous_strides(out_shape)
    out = p.new_buffer(out_type)
    start = 0
    for value in op.inputs:
        shape = shape_of(value.type)
        if shape[axis]:
            source_view = TensorViewType(shape, value.type.element_type, contiguous_strides(shape))
            target_view = TensorViewType(shape, out_type.element_type, out_strides, start * out_strides[axis])
            copy_kernel(op, p, p.buffer_of(value), source_view, out, target_view)
        start += shape[axis]
    p.bind(op.result, out)

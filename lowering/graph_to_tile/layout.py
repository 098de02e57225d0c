"""Tile lowerings of the ops that move data without computing: constants, reshape (the
same buffer), transpose (a permuted view, absorbed into matmul operands where it can be),
slice (a view of its operand's buffer, absorbed into the loads of elementwise kernels,
concat and further slices where every reader takes views: `reads_views`), broadcast_to
and concat (copy kernels through strided views). Copies read their sources through the
views too, so a slice of a slice or the concat of slices never copies twice. A concat
input that a kernel computes for the concat alone is computed into its region of the
concat's output (`place_concat_inputs`), and the concat copies only the others."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import TensorViewType
from strata.lowering.graph_to_tile.elementwise import ELEMENTWISE_OPS, elementwise_group
from strata.lowering.graph_to_tile.program import ProgramLowering, copy_kernel, into_new_buffer, logical_shape
from strata.lowering.tile_builder import broadcast_strides, contiguous_strides


@register_tile_lowering(graph.ConstantOp)
def lower_constant(op: graph.ConstantOp, p: ProgramLowering) -> None:
    p.bind(op.result, p.new_buffer(op.result.type, init=op.value))


def reads_views(value: SSAValue) -> bool:
    """Whether every use of `value` reads it through a strided view, so that a slice (or a
    reshape of one) need not be copied: elementwise ops and groups of them (their loads
    take any strides and offset), concat and slice (copies through views) and reshape
    (which keeps the view where it can, else copies)."""
    return all(
        elementwise_group(use.operation) if isinstance(use.operation, graph.FusedOp)
        else isinstance(use.operation, (*ELEMENTWISE_OPS, graph.ConcatOp, graph.SliceOp, graph.ReshapeOp))
        for use in value.uses
    )


def reshaped_strides(view: TensorViewType, shape: Sequence[int]) -> tuple[int, ...] | None:
    """Strides reading `view`'s elements in row-major order as `shape`, where one view does:
    a contiguous view, or one whose reshape only adds or drops axes of size 1."""
    if view.get_strides() == contiguous_strides(view.get_shape()):
        return contiguous_strides(shape)
    kept = [(d, st) for d, st in zip(view.get_shape(), view.get_strides()) if d != 1]
    if [d for d, _ in kept] != [d for d in shape if d != 1]:
        return None
    strides = iter(st for _, st in kept)
    return tuple(0 if d == 1 else next(strides) for d in shape)


@register_tile_lowering(graph.ReshapeOp)
def lower_reshape(op: graph.ReshapeOp, p: ProgramLowering) -> None:
    """Row-major buffers are flat: a reshape is the same buffer (zero copy). A reshape of
    a view (an absorbed slice) is a view too where reshaped_strides finds one and the
    result's readers take views; otherwise the view is copied out first."""
    if not p.is_view(op.x):
        p.bind(op.result, p.buffer_of(op.x))
        return
    view = p.view_of(op.x)
    shape = logical_shape(op.result.type)
    strides = reshaped_strides(view, shape)
    if strides is not None and reads_views(op.result):
        p.bind_view(op.result, p.buffer_of(op.x), strides, view.offset.data)
        return
    copied = p.new_buffer(op.x.type)
    contiguous = TensorViewType(view.get_shape(), view.element_type, contiguous_strides(view.get_shape()))
    copy_kernel(op, p, p.buffer_of(op.x), view, copied, contiguous)
    p.bind(op.result, copied)


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
    source = p.view_of(op.x)
    shape = logical_shape(op.result.type)
    permuted = tuple(source.get_strides()[a] for a in permutation) or (0,)
    into_new_buffer(op, p, TensorViewType(shape, op.x.type.element_type, permuted, source.offset.data))


@register_tile_lowering(graph.BroadcastToOp)
def lower_broadcast_to(op: graph.BroadcastToOp, p: ProgramLowering) -> None:
    shape = logical_shape(op.result.type)
    source = p.view_of(op.x)
    strides = broadcast_strides(shape_of(op.x.type), shape, source.get_strides() if shape_of(op.x.type) else None)
    into_new_buffer(op, p, TensorViewType(shape, op.x.type.element_type, strides, source.offset.data))


@register_tile_lowering(graph.SliceOp)
def lower_slice(op: graph.SliceOp, p: ProgramLowering) -> None:
    """A view of x's buffer (no copy) when every reader of the result takes views, else a
    copy through that view."""
    params = op.params()
    source = p.view_of(op.x)
    strides = source.get_strides() if shape_of(op.x.type) else ()
    offset = source.offset.data + sum(s * st for s, st in zip(params["starts"], strides))
    view_strides = tuple(step * st for step, st in zip(params["steps"], strides)) or (0,)
    if shape_of(op.result.type) and reads_views(op.result):
        p.bind_view(op.result, p.buffer_of(op.x), view_strides, offset)
        return
    view = TensorViewType(logical_shape(op.result.type), op.x.type.element_type, view_strides, offset)
    into_new_buffer(op, p, view)


def input_regions(op: graph.ConcatOp, output: TensorViewType):
    """(input, its region of the concat's output as a view) per input, the output laid
    out as `output`."""
    axis = op.params()["axis"] % len(output.get_shape())
    strides, start = output.get_strides(), output.offset.data
    for value in op.inputs:
        shape = shape_of(value.type)
        yield value, TensorViewType(shape, op.result.type.element_type, strides, start)
        start += shape[axis] * strides[axis]


def computes_into_buffers(value: SSAValue) -> bool:
    """Whether `value` is the result of kernels that write it through any view: an
    elementwise op or group, a copy (transpose, broadcast_to) or a concat's copies."""
    owner = value.owner
    if isinstance(owner, graph.FusedOp):
        return elementwise_group(owner)
    return isinstance(owner, (*ELEMENTWISE_OPS, graph.TransposeOp, graph.BroadcastToOp, graph.ConcatOp))


def concat_output(op: graph.ConcatOp, p: ProgramLowering) -> tuple[graph.ConcatOp, TensorViewType]:
    """(the concat whose buffer holds the output, the output's view of it): its own
    buffer, contiguous, or its region of an outer concat's where it is placed there."""
    shape = shape_of(op.result.type)
    owner, strides, offset = p.placements.get(op.result, (op, contiguous_strides(shape), 0))
    return owner, TensorViewType(shape, op.result.type.element_type, strides, offset)


def place_concat_inputs(function, p: ProgramLowering) -> None:
    """Concat inputs computed by a kernel for the concat alone (directly, or through a
    reshape that keeps their layout) are computed straight into their region of its
    output, so the concat copies nothing for them (ProgramLowering.placements). A concat
    placed in another one places its own inputs in the outer output: the concats are
    visited last first."""
    for op in reversed([o for o in function.body.block.ops if isinstance(o, graph.ConcatOp)]):
        owner, output = concat_output(op, p)
        for value, region in input_regions(op, output):
            if not region.get_shape() or 0 in region.get_shape() or not value.has_one_use():
                continue
            producer, strides = value, region.get_strides()
            if isinstance(value.owner, graph.ReshapeOp) and value.owner.x.has_one_use():
                producer = value.owner.x
                strides = reshaped_strides(region, logical_shape(producer.type))
            if strides is not None and producer not in p.placements and computes_into_buffers(producer):
                p.placements[producer] = (owner, tuple(strides), region.offset.data)


def same_region(a: TensorViewType, b: TensorViewType) -> bool:
    """Whether two views of one buffer cover the same elements in the same order (strides
    of size-1 axes do not matter)."""
    return a.get_shape() == b.get_shape() and a.offset.data == b.offset.data and all(
        d == 1 or x == y for d, x, y in zip(a.get_shape(), a.get_strides(), b.get_strides())
    )


@register_tile_lowering(graph.ConcatOp)
def lower_concat(op: graph.ConcatOp, p: ProgramLowering) -> None:
    """Copies of the inputs into their regions of the output, except those computed there
    already (place_concat_inputs)."""
    owner, output = concat_output(op, p)
    out = p.concat_buffer(owner)
    if owner is op:
        p.bind(op.result, out)
    else:
        p.bind_view(op.result, out, output.get_strides(), output.offset.data)
    for value, region in input_regions(op, output):
        if 0 in region.get_shape() or (p.buffer_of(value) is out and same_region(p.view_of(value), region)):
            continue
        copy_kernel(op, p, p.buffer_of(value), p.view_of(value), out, region)

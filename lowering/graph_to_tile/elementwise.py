"""Tile kernels of elementwise ops and of fused groups (graph.fused): one kernel loads each
input once per tile and computes every result with one tile.map whose body chains the
members' scalar rules. Groups headed by a matmul or holding row ops go to matmul.py and
rows.py."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue

from strata.dialects import graph
from strata.dialects.graph_fused import fusible
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import element_bytes
from strata.lowering.graph_to_tile.matmul import lower_matmul_epilogue
from strata.lowering.graph_to_tile.program import ProgramLowering, load_broadcast, logical_shape, same_layout_inputs
from strata.lowering.graph_to_tile.rows import lower_row_fused
from strata.lowering.scalar_rules import emit_members, emit_scalar
from strata.lowering.tile_builder import KernelBuilder, grid_of


ELEMENTWISE_OPS = tuple(op for op in graph.GRAPH_OPS if fusible(op))
"""Ops whose element is a function of their operands' elements (dropout also of its index)."""


def elementwise_group(op: graph.FusedOp) -> bool:
    """Whether a fused group holds elementwise members only (lower_fused's own kernel,
    which loads and stores through any view; matmul epilogues and row groups go elsewhere)."""
    return all(isinstance(member, graph.ElementwiseOp | graph.YieldOp) for member in op.body.block.ops)


@register_tile_lowering(*ELEMENTWISE_OPS)
def lower_elementwise(op: Operation, p: ProgramLowering) -> None:
    out_type = op.results[0].type
    shape = logical_shape(out_type)
    tile_shape = p.cost.elementwise_tile(shape, out_type.element_type)
    inputs = [p.buffer_of(v) for v in op.operands]
    out, out_view = p.result_buffer(op.results[0])
    k = KernelBuilder(p.kernel_name(op), [*inputs, out], grid_of(shape, tile_shape))
    tiles = load_broadcast(p, k, op.operands, shape, tile_shape)
    result = k.map(tiles, out_type.element_type, lambda block, elements: emit_scalar(op, block, elements))
    k.store(result, k.partition(len(inputs), out_view, tile_shape), k.program_ids)
    p.launch(k, [*inputs, out], same_layout_inputs(op.operands, out_type, p, op.results))


@register_tile_lowering(graph.FusedOp)
def lower_fused(op: graph.FusedOp, p: ProgramLowering) -> None:
    """One kernel for the whole group: each input is loaded once per tile, each result is
    one tile.map whose body chains the members' scalar rules (LLVM drops what a result
    does not need), and every result is stored from the same loop nest position."""
    body = op.body.block
    if isinstance(body.first_op, graph.MatmulOp):
        from strata.lowering.graph_to_tile.matmul import lower_matmul_epilogue

        lower_matmul_epilogue(op, p)
        return
    if not elementwise_group(op):
        from strata.lowering.graph_to_tile.rows import lower_row_fused

        lower_row_fused(op, p)
        return
    first = op.outputs[0].type
    shape = logical_shape(first)
    widest = max((v.type.element_type for v in (*op.inputs, *op.outputs)), key=element_bytes)
    tile_shape = p.cost.elementwise_tile(shape, widest, tiles=len(op.inputs) + len(op.outputs))
    inputs = [p.buffer_of(v) for v in op.inputs]
    outputs, views = zip(*(p.result_buffer(r) for r in op.outputs))
    k = KernelBuilder(p.kernel_name(op), [*inputs, *outputs], grid_of(shape, tile_shape))
    tiles = load_broadcast(p, k, op.inputs, shape, tile_shape)
    for index, (yielded, result) in enumerate(zip(body.last_op.operands, op.outputs)):

        def scalar_body(block: Block, elements, yielded=yielded) -> SSAValue:
            members = list(body.ops)[:-1]  # up to graph.yield
            return emit_members(members, block, dict(zip(body.args, elements)))[yielded]

        value = k.map(tiles, result.type.element_type, scalar_body)
        k.store(value, k.partition(len(inputs) + index, views[index], tile_shape), k.program_ids)
    p.launch(k, [*inputs, *outputs], same_layout_inputs(op.inputs, op.outputs[-1].type, p, op.outputs))

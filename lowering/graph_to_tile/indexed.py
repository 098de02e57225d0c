"""Index-driven kernels of `lower-graph-to-tile`: embedding (checked gathers), its gradient
(checked scatter-adds) and dropout (a mask from each element's flat index)."""

from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, Float16Type, TensorType, f32, f64, i1, i64
from xdsl.ir import Block, SSAValue

from strata.dialects import graph, tile
from strata.dialects.graph_base import shape_of
from strata.dialects.graph_elementwise import DROPOUT_STEP_GAMMA
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import MAX_TILE_DIM, TensorViewType, TileType
from strata.support.locations import location_prefix
from strata.lowering.graph_to_tile.program import ProgramLowering, logical_shape
from strata.lowering.scalar_rules import Emitter
from strata.lowering.tile_builder import KernelBuilder, contiguous_strides, grid_of, next_power_of_two


@register_tile_lowering(graph.EmbeddingOp)
def lower_embedding(op: graph.EmbeddingOp, p: ProgramLowering) -> None:
    """Rows of the table gathered by id: a tile.check of the ids (run-time error, never a
    wild read), then tile.gather per (id tile, column tile)."""
    vocabulary, width = shape_of(op.table.type)
    count = math.prod(shape_of(op.ids.type))  # 0 ids: an empty grid, nothing launched
    element = op.table.type.element_type
    rows, columns = row_tiles(p, count, width)
    table, ids, out = p.buffer_of(op.table), p.buffer_of(op.ids), p.new_buffer(op.result.type)
    k = KernelBuilder(p.kernel_name(op), [table, ids, out], grid_of((count, width), (rows, columns)))
    row, column = k.program_ids
    id_tile = checked_ids(k, op, 1, rows, vocabulary)
    table_view = k.add(tile.MakeTensorViewOp(k.block.args[0], TensorViewType((vocabulary, width), element, (width, 1)))).results[0]
    gathered = k.add(tile.GatherOp(table_view, id_tile, column, TileType((rows, columns), element))).results[0]
    out_view = TensorViewType((count, width), element, (width, 1))
    k.store(gathered, k.partition(2, out_view, (rows, columns)), [row, column])
    p.launch(k, [table, ids, out])
    p.bind(op.result, out)


@register_tile_lowering(graph.EmbeddingGradOp)
def lower_embedding_grad(op: graph.EmbeddingGradOp, p: ProgramLowering) -> None:
    """The table's sums zeroed, then one instance per (id tile, column tile) adds its rows
    of grad into the rows its ids pick: a tile.check of the ids (as the embedding's), then
    tile.scatter_add_tko (atomic: ids repeat, within a tile and across instances), zeros
    for the padding_idx row's ids. A 16-bit table is summed in an f32 workspace and
    rounded by a third kernel."""
    vocabulary, width = shape_of(op.result.type)
    count = math.prod(shape_of(op.ids.type))  # 0 ids: only the zeroing runs
    element = op.result.type.element_type
    wide = f32 if isinstance(element, (BFloat16Type, Float16Type)) else element
    out = p.new_buffer(op.result.type)
    sums = out if wide == element else p.mark_workspace(p.new_buffer(TensorType(wide, [vocabulary, width])))
    table = TensorViewType((vocabulary, width), wide, (width, 1))
    elementwise_tile = p.cost.elementwise_tile((vocabulary, width), wide)

    zero = KernelBuilder(p.kernel_name("embedding_grad_zero"), [sums], grid_of((vocabulary, width), elementwise_tile))
    zero.store(zero.fill(0.0, elementwise_tile, wide), zero.partition(0, table, elementwise_tile), zero.program_ids)
    p.launch(zero, [sums])

    rows, columns = row_tiles(p, count, width)
    grad, ids = p.buffer_of(op.grad), p.buffer_of(op.ids)
    k = KernelBuilder(p.kernel_name(op), [grad, ids, sums], grid_of((count, width), (rows, columns)))
    row, column = k.program_ids
    id_tile = checked_ids(k, op, 1, rows, vocabulary)
    grad_view = TensorViewType((count, width), element, (width, 1))
    grad_tile = k.extend(k.load(k.partition(0, grad_view, (rows, columns)), [row, column]), wide)
    padding = op.params().get("padding_idx")
    if padding is not None:  # the padding row's ids add zeros
        grad_tile = k.map([grad_tile, k.broadcast(id_tile, (rows, columns))], wide,
                          lambda block, a: without_padding(Emitter(block), a, padding))
    table_view = k.add(tile.MakeTensorViewOp(k.block.args[2], table)).results[0]
    k.scatter_add(grad_tile, table_view, id_tile, column)
    p.launch(k, [grad, ids, sums])

    if sums is not out:
        rounding = KernelBuilder(p.kernel_name("embedding_grad_round"), [sums, out], grid_of((vocabulary, width), elementwise_tile))
        summed = rounding.load(rounding.partition(0, table, elementwise_tile), rounding.program_ids)
        rounded = rounding.map([summed], element, lambda block, a: Emitter(block)(arith.TruncFOp(a[0], element)))
        out_view = TensorViewType((vocabulary, width), element, (width, 1))
        rounding.store(rounded, rounding.partition(1, out_view, elementwise_tile), rounding.program_ids)
        p.launch(rounding, [sums, out])
    p.bind(op.result, out)


def without_padding(e: Emitter, elements, padding: int) -> SSAValue:
    """grad's element, or 0 where its id is the padding row."""
    value, row_id = elements
    padded = e(arith.CmpiOp(row_id, e.const(padding, i64), "eq"))
    return e(arith.SelectOp(padded, e.const(0.0, value.type), value))


def row_tiles(p: ProgramLowering, count: int, width: int) -> tuple[int, int]:
    """(rows, columns) of the tiles of a kernel over `count` rows of `width` picked by id."""
    rows = min(next_power_of_two(count), max(1, p.cost.elements // min(next_power_of_two(width), MAX_TILE_DIM)))
    return rows, min(next_power_of_two(width), MAX_TILE_DIM, p.cost.elements)


def checked_ids(k: KernelBuilder, op: graph.EmbeddingOp | graph.EmbeddingGradOp, argument: int, rows: int,
                vocabulary: int) -> SSAValue:
    """This instance's [rows, 1] tile of op's ids (kernel argument `argument`, flat), as
    i64, after a tile.check that each lies in [0, vocabulary) (a run-time error naming op)."""
    count = math.prod(shape_of(op.ids.type))
    id_view = TensorViewType((count, 1), op.ids.type.element_type, (1, 0))
    ids = k.extend(k.load(k.partition(argument, id_view, (rows, 1)), [k.program_ids[0], k.index(0)]), i64, arith.ExtSIOp)
    message = f"{location_prefix(op)}'{op.name}': an id is outside [0, {vocabulary})"
    k.add(tile.CheckOp(out_of_range(k, ids, vocabulary), message))
    return ids


def out_of_range(k: KernelBuilder, ids: SSAValue, bound: int) -> SSAValue:
    """An i1 tile: id < 0 or id >= bound."""

    def body(block: Block, elements) -> SSAValue:
        e = Emitter(block)
        (value,) = elements
        below = e(arith.CmpiOp(value, e.const(0, i64), "slt"))
        above = e(arith.CmpiOp(value, e.const(bound, i64), "sge"))
        return e(arith.OrIOp(below, above))

    return k.map([ids], i1, body)


@register_tile_lowering(graph.DropoutOp)
def lower_dropout(op: graph.DropoutOp, p: ProgramLowering) -> None:
    """The keyed counter-based mask (docs/dropout-rng.md) computed from each element's
    flat index (and the run-time step, if any), so it matches the reference bit for bit
    and is never stored."""
    params = op.params()
    out_type = op.result.type
    shape = logical_shape(out_type)
    element = out_type.element_type
    tile_shape = p.cost.elementwise_tile(shape, element)
    source, out = p.buffer_of(op.x), p.new_buffer(out_type)
    steps = [p.buffer_of(op.step)] if op.step is not None else []
    buffers = [source, *steps, out]
    k = KernelBuilder(p.kernel_name(op), buffers, grid_of(shape, tile_shape))
    view = TensorViewType(shape, element, contiguous_strides(shape))
    x = k.load(k.partition(0, view, tile_shape), k.program_ids)
    step = [k.load(k.partition(1, TensorViewType(shape, i64, (0,) * len(shape)), tile_shape), k.program_ids)] if steps else []
    indices = [k.iota(axis, tile_shape) for axis in range(len(shape))]
    origins = [
        k.add(arith.IndexCastOp(k.add(arith.MuliOp(pid, k.index(t))).results[0], i64)).results[0]
        for pid, t in zip(k.program_ids, tile_shape)
    ]
    p_keep, scale = params["p"], 1.0 / (1.0 - params["p"])
    seed = params["seed"] & 0xFFFFFFFFFFFFFFFF

    def body(block: Block, elements) -> SSAValue:
        e = Emitter(block)
        value, *rest = elements
        local = rest[len(step):]
        key = e.const(_signed(seed), i64)
        if step:
            key = e(arith.AddiOp(key, e(arith.MuliOp(rest[0], e.const(_signed(DROPOUT_STEP_GAMMA), i64)))))
        flat = e.const(1, i64)
        for origin, index, stride in zip(origins, local, contiguous_strides(shape)):
            position = e(arith.AddiOp(origin, index))
            flat = e(arith.AddiOp(flat, e(arith.MuliOp(position, e.const(stride, i64)))))
        z = e(arith.AddiOp(key, e(arith.MuliOp(flat, e.const(_signed(0x9E3779B97F4A7C15), i64)))))
        for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            z = e(arith.MuliOp(e(arith.XOrIOp(z, e(arith.ShRUIOp(z, e.const(shift, i64))))), e.const(_signed(multiplier), i64)))
        z = e(arith.XOrIOp(z, e(arith.ShRUIOp(z, e.const(31, i64)))))
        bits = e(arith.ShRUIOp(z, e.const(40, i64)))
        uniform = e(arith.MulfOp(e(arith.UIToFPOp(bits, f64)), e.const(2.0**-24, f64)))
        keep = e(arith.CmpfOp(uniform, e.const(p_keep, f64), "oge"))
        compute = f32 if isinstance(element, (Float16Type, BFloat16Type)) else element
        wide = value if compute == element else e(arith.ExtFOp(value, compute))
        kept = e(arith.MulfOp(wide, e.const(scale, compute)))
        result = e(arith.SelectOp(keep, kept, e.const(0.0, compute)))
        return result if compute == element else e(arith.TruncFOp(result, element))

    result = k.map([x, *step, *indices], element, body)
    k.store(result, k.partition(len(buffers) - 1, view, tile_shape), k.program_ids)
    p.launch(k, buffers)
    p.bind(op.result, out)


def _signed(value: int) -> int:
    """A 64-bit pattern as the signed integer an i64 attribute holds."""
    return value - (1 << 64) if value >= 1 << 63 else value

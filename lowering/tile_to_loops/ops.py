"""The CPU's own per-op lowerings, added to LOWERINGS (lower-tile-to-gpu has its own for
these ops): a store evaluates its tile element by element in one loop nest, a map used
more than once is materialized, a reduction accumulates into a stack buffer and an
scf.for carries its tiles in stack buffers.
"""

from __future__ import annotations

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Region, SSAValue

from strata.dialects import tile, token
from strata.dialects.graph_base import is_float
from strata.lowering.tile_to_loops.kernel import (
    LOWERINGS,
    REASSOCIATE,
    REDUCTION_COMBINERS,
    BufferTile,
    KernelLowering,
    Partition,
    atomic_add,
    mapped_tile,
    reduction_identity,
    stable_copies,
)
from strata.support.errors import StrataError


def _store(k: KernelLowering, op: tile.StoreViewTkoOp) -> None:
    partition: Partition = k.values[op.view]
    origin = k.origin(partition, op.indices)
    value = k.tile_of(op.tile)

    def store_element(indices: list[SSAValue]) -> None:
        element = k.read(value, indices)
        offset = k.element_offset(partition.view, origin, indices)
        k.emit(memref.StoreOp.get(element, partition.buffer, [offset]))

    k.loop_nest(k.valid_extents(partition, origin), store_element)
    k.values[op.result_token] = None


def _scatter_add(k: KernelLowering, op: tile.ScatterAddTkoOp) -> None:
    """Each element of the valid extent added into its picked row by one atomic
    read-add-write (rows repeat, and kernel instances run on several cores)."""
    buffer, extents, added = k.scatter_target(op)

    def add_element(indices: list[SSAValue]) -> None:
        element, offset = added(indices)
        k.emit(atomic_add(element, buffer, offset))

    k.loop_nest(extents, add_element)
    k.values[op.result_token] = None


def _map(k: KernelLowering, op: tile.MapOp) -> None:
    mapped = mapped_tile(k, op)
    if op.result.has_more_than_one_use():
        mapped = k.materialize(mapped, op.result.type.get_shape(), op.result.type.element_type)
    k.values[op.result] = mapped


def _reduce(k: KernelLowering, op: tile.ReduceOp) -> None:
    source = k.tile_of(op.input)
    element_type = op.result.type.element_type
    axes = set(op.axes.get_values())
    float_op, int_op = REDUCTION_COMBINERS[op.kind.data]
    init = reduction_identity(element_type, op.kind.data)
    shape = op.result.type.get_shape()
    buffer = k.emit_alloca(shape, element_type)
    one = k.index(1)
    out_extents = [one if a in axes else e for a, e in enumerate(source.extents)]
    # The whole buffer, not only the valid extent: loop-carried copies read all of it.
    full = [k.index(d) for d in shape]
    k.loop_nest(full, lambda idx: k.emit(memref.StoreOp.get(k.emit(arith.ConstantOp(init)), buffer, idx)))

    def accumulate(indices: list[SSAValue]) -> None:
        zero = k.index(0)
        target = [zero if a in axes else i for a, i in enumerate(indices)]
        current = k.emit(memref.LoadOp.get(buffer, target))
        element = k.read(source, indices)
        combined = k.emit(float_op(current, element, REASSOCIATE) if is_float(element_type) else int_op(current, element))
        k.emit(memref.StoreOp.get(combined, buffer, target))

    k.loop_nest(source.extents, accumulate)
    k.values[op.result] = BufferTile(buffer, out_extents)


def _for(k: KernelLowering, op: scf.ForOp) -> None:
    """Loop-carried tiles live in stack buffers; carried tokens vanish (no CPU order)."""
    for v in op.iter_args:
        if not isinstance(v.type, tile.TileType | token.TokenType):
            raise StrataError(
                f"lower-tile-to-loops: @{k.kernel.sym_name.data}: scf.for may only carry tiles "
                f"and tokens, not {v.type}"
            )
    body = op.body.block
    carried = []
    for init, arg, result in zip(op.iter_args, body.args[1:], op.results):
        t = arg.type
        if isinstance(t, token.TokenType):
            k.values[arg] = k.values[result] = None
            carried.append(None)
            continue
        buffer = k.materialize(k.tile_of(init), t.get_shape(), t.element_type)
        k.values[arg] = buffer
        k.iter_buffers[arg] = buffer
        carried.append(buffer)
    block = Block(arg_types=[IndexType()])
    k.values[body.args[0]] = block.args[0]
    outer, k.cursor = k.cursor, block
    for inner in body.ops:
        if isinstance(inner, scf.YieldOp):
            copies = [
                (value, k.tile_of(value), buffer) for value, buffer in zip(inner.arguments, carried)
                if buffer is not None and not (isinstance(k.tile_of(value), BufferTile) and k.tile_of(value).buffer is buffer.buffer)
            ]  # fmt: skip
            for produced, buffer in stable_copies(k, copies):
                k.copy_into(produced, buffer.buffer, buffer.extents)
            k.emit(scf.YieldOp())
        else:
            k.lower_op(inner)
    k.cursor = outer
    k.emit(scf.ForOp(k.values[op.lb], k.values[op.ub], k.values[op.step], [], Region(block)))
    for result, buffer in zip(op.results, carried):
        if buffer is not None:
            k.values[result] = buffer


LOWERINGS.update({
    tile.StoreViewTkoOp: _store,
    tile.ScatterAddTkoOp: _scatter_add,
    tile.MapOp: _map,
    tile.ReduceOp: _reduce,
    scf.ForOp: _for,
})

"""The CPU kernel lowering: the tiles of a kernel (loaded, mapped, broadcast, …), the
`KernelLowering` that turns one tile.kernel into a loop-nest function, and the per-op
lowerings in LOWERINGS that lower-tile-to-gpu shares (views, loads, broadcasts, iotas,
checks, gathers, tokens). ops.py adds the CPU's own (store, map, reduce, scf.for: the GPU
lowering has its own for these), mma.py tile.mma's. lower.py is the pass and says how
tiles become loops (lazily, evaluated element by element where they are stored).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue

from strata.dialects import tile, token
from strata.dialects.graph_base import is_float
from strata.dialects.tile_types import TensorViewType
from strata.support.errors import StrataError

REDUCTION_COMBINERS = {
    "sum": (arith.AddfOp, arith.AddiOp),
    "max": (arith.MaximumfOp, arith.MaxSIOp),
    "min": (arith.MinimumfOp, arith.MinSIOp),
}
REASSOCIATE = arith.FastMathFlagsAttr([arith.FastMathFlag.REASSOC])
"""Reductions may be reassociated so LLVM vectorizes them (the order differs from a
sequential sum, like numpy's pairwise sum does; documented numerics)."""
class Tile:
    """A tile value during lowering: how to read its element at tile-local indices."""

    extents: list[SSAValue]


@dataclass
class LoadedTile(Tile):
    buffer: SSAValue
    view: TensorViewType
    origin: list[SSAValue]
    extents: list[SSAValue]


@dataclass
class MappedTile(Tile):
    op: tile.MapOp
    inputs: list[Tile]
    extents: list[SSAValue]


@dataclass
class BroadcastTile(Tile):
    input: Tile
    broadcast_axes: list[int]
    extents: list[SSAValue]


@dataclass
class IotaTile(Tile):
    axis: int
    extents: list[SSAValue]


@dataclass
class GatherTile(Tile):
    buffer: SSAValue
    view: TensorViewType
    rows: Tile
    column_origin: SSAValue
    extents: list[SSAValue]


@dataclass
class BufferTile(Tile):
    buffer: SSAValue
    extents: list[SSAValue]


def buffers_read(value: Tile) -> set[SSAValue] | None:
    """The buffers a tile reads where it is read (a lazy map reads its inputs'), or None
    for a kind of tile not known here (read as if it read any). A tile kind of a lowering
    built on this one tells its own by a `read_buffers()` method."""
    if hasattr(value, "read_buffers"):
        return value.read_buffers()
    if isinstance(value, BufferTile | LoadedTile):
        return {value.buffer}
    if isinstance(value, IotaTile):
        return set()
    inner = {MappedTile: lambda t: t.inputs, BroadcastTile: lambda t: [t.input], GatherTile: lambda t: [t.rows]}
    for kind, inputs in inner.items():
        if isinstance(value, kind):
            read = {value.buffer} if isinstance(value, GatherTile) else set()
            for tile_input in inputs(value):
                more = buffers_read(tile_input)
                if more is None:
                    return None
                read |= more
            return read
    return None


def stable_copies(k, copies: list[tuple[SSAValue, Tile, BufferTile]]) -> list[tuple[Tile, BufferTile]]:
    """A loop's yield as copies into its carried buffers, in order: a copy must not change
    what a later one reads, so a produced tile that reads a buffer an earlier copy writes
    (or might: a tile of unknown reads) is materialized into a buffer of its own first."""
    stable = []
    for index, (value, produced, slot) in enumerate(copies):
        written = {earlier.buffer for _, _, earlier in copies[:index]}
        read = buffers_read(produced)
        if written and (read is None or read & written):
            produced = k.materialize(produced, value.type.get_shape(), value.type.element_type)
        stable.append((produced, slot))
    return stable


@dataclass
class Partition:
    buffer: SSAValue
    view: TensorViewType
    tile_shape: tuple[int, ...]


class KernelLowering:
    """Lowers one tile.kernel; `cursor` is the block new ops are appended to."""

    def __init__(self, kernel: tile.KernelOp):
        self.kernel = kernel
        arg_types = [*kernel.function_type.inputs.data, IndexType(), IndexType()]
        self.entry = Block(arg_types=arg_types)
        self.cursor = self.entry
        self.values: dict[SSAValue, object] = {}
        self.iter_buffers: dict[SSAValue, BufferTile] = {}
        self.status: SSAValue | None = None
        self.error_messages: list[str] = []

    # -- emission helpers ---------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue | None:
        self.cursor.add_op(op)
        return op.results[0] if op.results else None

    def index(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.AddiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.MuliOp(a, b))

    def loop(self, upper: SSAValue, body: Callable[[SSAValue], None], step: int = 1) -> None:
        """scf.for %i = 0 to upper step `step`: body(%i)."""
        block = Block(arg_types=[IndexType()])
        lower, step = self.index(0), self.index(step)
        outer, self.cursor = self.cursor, block
        body(block.args[0])
        self.emit(scf.YieldOp())
        self.cursor = outer
        self.emit(scf.ForOp(lower, upper, step, [], Region(block)))

    def loop_carrying(
        self, upper: SSAValue, inits: Sequence[SSAValue],
        body: Callable[[SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
    ) -> Sequence[SSAValue]:
        """scf.for %i = 0 to upper carrying scalars: body(%i, carried) -> next carried."""
        block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
        lower, step = self.index(0), self.index(1)
        outer, self.cursor = self.cursor, block
        self.emit(scf.YieldOp(*body(block.args[0], block.args[1:])))
        self.cursor = outer
        return self.emit(scf.ForOp(lower, upper, step, list(inits), Region(block))).owner.results

    def loop_nest(self, extents: Sequence[SSAValue], body: Callable[[list[SSAValue]], None]) -> None:
        def level(depth: int, indices: list[SSAValue]) -> None:
            if depth == len(extents):
                body(indices)
            else:
                self.loop(extents[depth], lambda i: level(depth + 1, [*indices, i]))

        level(0, [])

    # -- kernel structure ---------------------------------------------------------------

    def bind_arguments(self) -> tuple[SSAValue, SSAValue]:
        """Map the kernel's block arguments to the function's; return its (begin, end)
        program range, the two trailing arguments."""
        for old, new in zip(self.kernel.body.block.args, self.entry.args):
            new.name_hint = old.name_hint
            self.values[old] = new
        begin, end = self.entry.args[-2], self.entry.args[-1]
        begin.name_hint, end.name_hint = "begin", "end"
        return begin, end

    def carry_kernel_attributes(self, function: func.FuncOp) -> None:
        """The grid (and in-place marking) the runtime launches the function with."""
        function.attributes["tile.grid"] = DenseArrayBase.from_list(
            self.kernel.grid.elt_type, list(self.kernel.grid_shape())
        )
        if "tile.in_place" in self.kernel.attributes:
            function.attributes["tile.in_place"] = self.kernel.attributes["tile.in_place"]

    def lower(self) -> func.FuncOp:
        kernel = self.kernel
        body = kernel.body.block
        begin, end = self.bind_arguments()
        grid_block = Block(arg_types=[IndexType()])
        self.cursor = grid_block
        self.bind_program_ids(grid_block.args[0])
        for op in body.ops:
            self.lower_op(op)
        self.emit(scf.YieldOp())
        self.cursor = self.entry
        self.emit(scf.ForOp(begin, end, self.index(1), [], Region(grid_block)))
        if self.status is None:
            status = self.emit(arith.ConstantOp(IntegerAttr(0, i32)))
        else:
            status = self.emit(memref.LoadOp.get(self.status, [self.index(0)]))
        self.emit(func.ReturnOp(status))
        function = func.FuncOp(
            kernel.sym_name.data, (list(self.entry.arg_types), [i32]), Region(self.entry)
        )
        self.carry_kernel_attributes(function)
        if self.error_messages:
            function.attributes["tile.error"] = StringAttr("; ".join(self.error_messages))
        return function

    def fail_status(self) -> SSAValue:
        """The kernel's status cell (0 = ok), created and zeroed on first use."""
        if self.status is None:
            self.status = self.emit_alloca([1], i32)
            zero = arith.ConstantOp(IntegerAttr(0, i32))
            first = arith.ConstantOp(IntegerAttr(0, IndexType()))
            anchor = self.status.owner
            for op in (zero, first, memref.StoreOp.get(zero, self.status, [first])):
                self.entry.insert_op_after(op, anchor)
                anchor = op
        return self.status

    def guarded(self, condition: SSAValue, body: Callable[[], object]) -> None:
        """scf.if condition { body }."""
        block = Block()
        self.emit(scf.IfOp(condition, [], Region(block)))
        outer, self.cursor = self.cursor, block
        body()
        self.emit(scf.YieldOp())
        self.cursor = outer

    def effect(self, emit: Callable[[], object]) -> None:
        """A side effect of the current element (the GPU guards elements outside the tile)."""
        emit()

    def each_element(self, shape: Sequence[int], extents: Sequence[SSAValue], body: Callable[[list[SSAValue]], None]) -> None:
        """body(indices) for every element of a tile of static `shape` within `extents`."""
        self.loop_nest(extents, body)

    def bind_program_ids(self, flat: SSAValue) -> None:
        """The program ids of the flat grid index."""
        self.program_ids = self.delinearize(flat, self.kernel.grid_shape(), wrap=True)

    def delinearize(self, flat: SSAValue, shape: Sequence[int], wrap: bool = False) -> list[SSAValue]:
        """Row-major indices of a flat index into `shape` (last axis fastest). The first
        index is what remains unless `wrap` takes it modulo its size too."""
        indices: list[SSAValue] = []
        rest = flat
        for axis in reversed(range(len(shape))):
            size = self.index(shape[axis])
            if axis == 0 and not wrap:
                indices.insert(0, rest)
            else:
                indices.insert(0, self.emit(arith.RemUIOp(rest, size)))
                rest = self.emit(arith.DivUIOp(rest, size))
        return indices

    def lower_op(self, op: Operation) -> None:
        handler = LOWERINGS.get(type(op))
        if handler is not None:
            handler(self, op)
        elif op.dialect_name() in ("arith", "math"):
            cloned = self.clone(op)
            self.emit(cloned)
            self.values.update(zip(op.results, cloned.results))
        else:
            raise StrataError(f"lower-tile-to-loops: '{op.name}' is not supported inside a tile.kernel")

    def clone(self, op: Operation) -> Operation:
        mapping = {v: self.values[v] for v in op.operands}
        return op.clone(value_mapper=mapping)

    # -- tiles ----------------------------------------------------------------------------

    def valid_extents(self, partition: Partition, origin: Sequence[SSAValue]) -> list[SSAValue]:
        """min(tile, size - origin) per axis: the part of the tile inside the view."""
        extents = []
        for t, size, start in zip(partition.tile_shape, partition.view.get_shape(), origin):
            if size % t == 0:
                extents.append(self.index(t))
            else:
                remaining = self.emit(arith.SubiOp(self.index(size), start))
                extents.append(self.emit(arith.MinSIOp(remaining, self.index(t))))
        return extents

    def origin(self, partition: Partition, indices: Sequence[SSAValue]) -> list[SSAValue]:
        return [self.mul(self.values[i], self.index(t)) for i, t in zip(indices, partition.tile_shape)]

    def element_offset(self, view: TensorViewType, origin: Sequence[SSAValue], indices: Sequence[SSAValue]) -> SSAValue:
        offset = self.index(view.offset.data)
        for start, i, stride in zip(origin, indices, view.get_strides()):
            if stride:
                offset = self.add(offset, self.mul(self.add(start, i), self.index(stride)))
        return offset

    def picked_row(self, rows: Tile, index: SSAValue, count: int) -> SSAValue:
        """Row `index` of an index tile ([R, 1] i64) as an index clamped into [0, count): the
        row tile.gather reads and tile.scatter_add_tko adds into (a tile.check before them
        reports ids outside)."""
        row = self.read(rows, [index, self.index(0)])
        low, high = arith.ConstantOp(IntegerAttr(0, i64)), arith.ConstantOp(IntegerAttr(count - 1, i64))
        clamped = self.emit(arith.MinSIOp(self.emit(arith.MaxSIOp(row, self.emit(low))), self.emit(high)))
        return self.emit(arith.IndexCastOp(clamped, IndexType()))

    def scatter_target(self, op: tile.ScatterAddTkoOp) -> tuple[SSAValue, list[SSAValue], Callable]:
        """(the view's buffer, the extents tile.scatter_add_tko adds over: the tile's rows and
        its columns inside the view, added(indices) -> (the tile's element there, its offset
        in the buffer at the picked row))."""
        buffer, view = self.values[op.view]
        columns = op.tile.type.get_shape()[1]
        origin = self.mul(self.values[op.column], self.index(columns))
        remaining = self.emit(arith.SubiOp(self.index(view.get_shape()[1]), origin))
        value, rows = self.tile_of(op.tile), self.tile_of(op.rows)
        extents = [value.extents[0], self.emit(arith.MinSIOp(remaining, value.extents[1]))]

        def added(indices: list[SSAValue]) -> tuple[SSAValue, SSAValue]:
            row = self.picked_row(rows, indices[0], view.get_shape()[0])
            return self.read(value, indices), self.element_offset(view, [row, origin], [self.index(0), indices[1]])

        return buffer, extents, added

    def read(self, value: Tile, indices: Sequence[SSAValue]) -> SSAValue:
        match value:
            case LoadedTile():
                offset = self.element_offset(value.view, value.origin, indices)
                return self.emit(memref.LoadOp.get(value.buffer, [offset]))
            case BufferTile():
                return self.emit(memref.LoadOp.get(value.buffer, list(indices)))
            case IotaTile():
                return self.emit(arith.IndexCastOp(indices[value.axis], i64))
            case GatherTile():
                origin = [self.picked_row(value.rows, indices[0], value.view.get_shape()[0]), value.column_origin]
                offset = self.element_offset(value.view, origin, [self.index(0), indices[1]])
                return self.emit(memref.LoadOp.get(value.buffer, [offset]))
            case BroadcastTile():
                zero = self.index(0)
                inner = [zero if a in value.broadcast_axes else i for a, i in enumerate(indices)]
                return self.read(value.input, inner)
            case MappedTile():
                block = value.op.body.block
                mapping = {arg: self.read(t, indices) for arg, t in zip(block.args, value.inputs)}
                for op in block.ops:
                    # Values defined outside the map (kernel scalars) are already lowered.
                    for operand in op.operands:
                        if operand not in mapping and operand in self.values:
                            mapping[operand] = self.values[operand]
                    if isinstance(op, tile.YieldOp):
                        return mapping.get(op.values[0], op.values[0])
                    cloned = op.clone(value_mapper=mapping)
                    self.emit(cloned)
                    mapping.update(zip(op.results, cloned.results))
        raise StrataError(f"lower-tile-to-loops: cannot read {value}")

    def materialize(self, value: Tile, shape: Sequence[int], element_type) -> BufferTile:
        buffer = self.emit_alloca(shape, element_type)
        self.copy_into(value, buffer, value.extents)
        return BufferTile(buffer, value.extents)

    def copy_into(self, value: Tile, buffer: SSAValue, extents: Sequence[SSAValue]) -> None:
        """buffer[idx] = value[idx] for every idx within `extents`."""
        self.loop_nest(extents, lambda idx: self.emit(memref.StoreOp.get(self.read(value, idx), buffer, idx)))

    def emit_alloca(self, shape: Sequence[int], element_type) -> SSAValue:
        """A stack buffer in the entry block (once per call, not per grid point)."""
        return self.at_entry(memref.AllocaOp.get(element_type, 64, list(shape)))

    def at_entry(self, op: Operation) -> SSAValue:
        """`op` first in the kernel's entry block (its result dominates every use)."""
        if self.entry.first_op is None:
            self.entry.add_op(op)
        else:
            self.entry.insert_op_before(op, self.entry.first_op)
        return op.results[0]

    def tile_of(self, value: SSAValue) -> Tile:
        return self.values[value]


def _program_id(k: KernelLowering, op: tile.ProgramIdOp) -> None:
    k.values[op.result] = k.program_ids[op.dim.value.data]


def _tensor_view(k: KernelLowering, op: tile.MakeTensorViewOp) -> None:
    k.values[op.result] = (k.values[op.buffer], op.result.type)


def _partition_view(k: KernelLowering, op: tile.MakePartitionViewOp) -> None:
    buffer, view = k.values[op.view]
    k.values[op.result] = Partition(buffer, view, op.result.type.get_tile_shape())


def _no_runtime_value(k: KernelLowering, op: Operation) -> None:
    for r in op.results:
        k.values[r] = None


def _load(k: KernelLowering, op: tile.LoadViewTkoOp) -> None:
    partition: Partition = k.values[op.view]
    origin = k.origin(partition, op.indices)
    k.values[op.result] = LoadedTile(partition.buffer, partition.view, origin, k.valid_extents(partition, origin))
    k.values[op.result_token] = None


def mapped_tile(k: KernelLowering, op: tile.MapOp) -> MappedTile:
    """The lazy tile of a map: its extent is where all of its inputs are valid."""
    inputs = [k.tile_of(v) for v in op.inputs]
    if inputs:
        extents = inputs[0].extents
        for other in inputs[1:]:
            extents = [a if same_extent(a, b) else k.emit(arith.MinSIOp(a, b)) for a, b in zip(extents, other.extents)]
    else:
        extents = [k.index(d) for d in op.result.type.get_shape()]
    return MappedTile(op, inputs, extents)


def _iota(k: KernelLowering, op: tile.IotaOp) -> None:
    k.values[op.result] = IotaTile(op.axis.value.data, [k.index(d) for d in op.result.type.get_shape()])


def _check(k: KernelLowering, op: tile.CheckOp) -> None:
    """A failed element sets the kernel's status to 1 (the runtime reports the message)."""
    failed = k.tile_of(op.failed)
    status = k.fail_status()
    k.error_messages.append(op.message.data)

    def fail() -> None:
        k.emit(memref.StoreOp.get(k.emit(arith.ConstantOp(IntegerAttr(1, i32))), status, [k.index(0)]))

    def check(indices: list[SSAValue]) -> None:
        flag = k.read(failed, indices)
        k.effect(lambda: k.guarded(flag, fail))

    k.each_element(op.failed.type.get_shape(), failed.extents, check)


def _gather(k: KernelLowering, op: tile.GatherOp) -> None:
    rows = k.tile_of(op.rows)
    columns = op.result.type.get_shape()[1]
    origin = k.mul(k.values[op.column], k.index(columns))
    width = op.view.type.get_shape()[1]
    remaining = k.emit(arith.SubiOp(k.index(width), origin))
    extents = [rows.extents[0], k.emit(arith.MinSIOp(remaining, k.index(columns)))]
    buffer, view = k.values[op.view]
    k.values[op.result] = GatherTile(buffer, view, rows, origin, extents)


def _broadcast(k: KernelLowering, op: tile.BroadcastOp) -> None:
    source = k.tile_of(op.input)
    src_shape, dst_shape = op.input.type.get_shape(), op.result.type.get_shape()
    axes = [a for a, (s, d) in enumerate(zip(src_shape, dst_shape)) if s == 1 and d != 1]
    extents = [k.index(dst_shape[a]) if a in axes else e for a, e in enumerate(source.extents)]
    k.values[op.result] = BroadcastTile(source, axes, extents)


def reduction_identity(element_type, kind: str) -> FloatAttr | IntegerAttr:
    """The value a `kind` reduction starts from (the identity of its combiner)."""
    if is_float(element_type):
        return FloatAttr({"sum": 0.0, "max": float("-inf"), "min": float("inf")}[kind], element_type)
    width = element_type.width.data
    return IntegerAttr({"sum": 0, "max": -(2 ** (width - 1)), "min": 2 ** (width - 1) - 1}[kind], element_type)


def static_value(value: SSAValue) -> int | None:
    """The value of an index constant, or None if it is computed at run time."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def same_extent(a: SSAValue, b: SSAValue) -> bool:
    return a is b or (static_value(a) is not None and static_value(a) == static_value(b))


ATOMIC_ADDF = 0
"""memref.atomic_rmw's kind for a float add (MLIR's AtomicRMWKind::addf)."""


def atomic_add(value: SSAValue, buffer: SSAValue, offset: SSAValue) -> memref.AtomicRMWOp:
    """buffer[offset] += value, atomically (an element of tile.scatter_add_tko)."""
    return memref.AtomicRMWOp(operands=[value, buffer, [offset]], result_types=[value.type],
                              properties={"kind": IntegerAttr(ATOMIC_ADDF, i64)})


LOWERINGS: dict[type[Operation], Callable[[KernelLowering, Operation], None]] = {
    tile.ProgramIdOp: _program_id,
    tile.MakeTensorViewOp: _tensor_view,
    tile.MakePartitionViewOp: _partition_view,
    tile.LoadViewTkoOp: _load,
    tile.BroadcastOp: _broadcast,
    tile.IotaOp: _iota,
    tile.CheckOp: _check,
    tile.GatherOp: _gather,
    tile.ReturnOp: lambda k, op: None,
    token.MakeOp: _no_runtime_value,
    token.JoinOp: _no_runtime_value,
}


def kernel_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The loops-level kernel functions (they carry tile.grid)."""
    return [f for f in module.ops if isinstance(f, func.FuncOp) and "tile.grid" in f.attributes]

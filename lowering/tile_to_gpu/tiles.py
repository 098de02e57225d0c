"""Tile values of lower-tile-to-gpu beyond the CPU lowering's (tile_to_loops): where a
tile lives when its elements are spread over a block's threads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import arith, memref
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.lowering.tile_builder import contiguous_strides
from strata.lowering.tile_to_loops.kernel import MappedTile, Tile
from strata.lowering.tile_to_loops.mma import yielded_in_place

if TYPE_CHECKING:
    from strata.lowering.tile_to_gpu.kernel import GpuKernelLowering

MMA_VECTOR = 4
"""Elements of a micro-tile row read together (one 16-byte shared load of f32)."""

@dataclass
class PartialsTile(Tile):
    """A reduction result held as per-warp partials in shared memory (`parts` per output,
    output-major): an element is combined from its partials where it is read."""

    scratch: SSAValue
    parts: int
    out_shape: tuple[int, ...]
    combine: Callable[[SSAValue, SSAValue], SSAValue]
    extents: list[SSAValue]

    def combine_partials(self, k: GpuKernelLowering, indices: Sequence[SSAValue]) -> SSAValue:
        k.note_read(self.scratch, (), None)
        output = k.index(0)
        for index, stride in zip(indices, contiguous_strides(self.out_shape)):
            output = k.add(output, k.mul(index, k.index(stride)))
        first = k.mul(output, k.index(self.parts))
        total = k.emit(memref.LoadOp.get(self.scratch, [first]))
        for part in range(1, self.parts):
            slot = k.add(first, k.index(part))
            total = self.combine(total, k.emit(memref.LoadOp.get(self.scratch, [slot])))
        return total


@dataclass(frozen=True)
class MicroTiles:
    """An accumulator tile of `shape` ([1.., rows, columns]) spread over a block: thread t
    owns rows per_row * (t // thread_columns) + r and columns per_column * (t % thread_columns) + c
    (threads past `active` own nothing)."""

    shape: tuple[int, ...]
    per_row: int
    per_column: int

    @staticmethod
    def of(shape: Sequence[int], threads: int) -> MicroTiles:
        rows, columns = shape[-2], shape[-1]
        per_thread = max(1, (rows * columns) // threads)
        per_column = min(columns, 2 * MMA_VECTOR if per_thread >= 64 else MMA_VECTOR, per_thread)
        per_row = min(rows, max(1, per_thread // per_column))
        return MicroTiles(tuple(shape), per_row, min(columns, per_thread // per_row))

    @property
    def thread_columns(self) -> int:
        return self.shape[-1] // self.per_column

    @property
    def active(self) -> int:
        """Threads that own a micro-tile (all of them unless the tile is small)."""
        return (self.shape[-2] // self.per_row) * self.thread_columns

    def cells(self, k: GpuKernelLowering) -> list[list[SSAValue]]:
        """This thread's cells as tile indices, row-major."""
        ti = k.emit(arith.DivUIOp(k.thread, k.index(self.thread_columns)))
        tj = k.emit(arith.RemUIOp(k.thread, k.index(self.thread_columns)))
        first_row, first_column = k.mul(ti, k.index(self.per_row)), k.mul(tj, k.index(self.per_column))
        zeros = [k.index(0)] * (len(self.shape) - 2)
        rows = [k.add(first_row, k.index(r)) for r in range(self.per_row)]
        columns = [k.add(first_column, k.index(c)) for c in range(self.per_column)]
        return [[*zeros, r, c] for r in rows for c in columns]


@dataclass
class RegisterTile(Tile):
    """An accumulator in registers: the values of this thread's cells of `layout`."""

    values: list[SSAValue]
    layout: MicroTiles
    extents: list[SSAValue]


def register_tile_in(value: Tile) -> RegisterTile | None:
    """The register tile an elementwise expression reads, if any (not through a broadcast)."""
    match value:
        case RegisterTile():
            return value
        case MappedTile():
            for source in value.inputs:
                found = register_tile_in(source)
                if found is not None:
                    return found
    return None


def cell_values(k: GpuKernelLowering, value: Tile, layout: MicroTiles) -> list[SSAValue]:
    """This thread's cells of `value` (read in bounds; cells outside its extent are junk
    that no store will keep)."""
    if isinstance(value, RegisterTile) and value.layout == layout:
        return value.values
    values: list[SSAValue] = []
    code, accesses = k.block_code(
        lambda: k.for_each_cell(layout, value.extents, lambda indices: values.append(k.read(value, indices)))
    )
    k.place_inline(code, accesses)
    return values


def carried_in_registers(k: GpuKernelLowering, arg: SSAValue) -> MicroTiles | None:
    """The layout a loop-carried tile keeps in registers: when its one use is the
    accumulator of an mma yielded back in its place, and the tile has a cell per thread."""
    uses = list(arg.uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, tile.MmaOp):
        return None
    mma = uses[0].operation
    if mma.acc is not arg or not yielded_in_place(mma):
        return None
    layout = MicroTiles.of(arg.type.get_shape(), k.block_size)
    return layout if layout.active == k.block_size else None

"""Tile values of lower-tile-to-gpu beyond the CPU lowering's (tile_to_loops): where a
tile lives when its elements are spread over a block's threads (threads.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.dialects.tile_types import element_bytes
from strata.lowering.tile_builder import contiguous_strides
from strata.lowering.tile_to_gpu.fragments import AccumulatorLayout, accumulator_layout
from strata.lowering.tile_to_gpu.threads import ThreadMappedLowering
from strata.lowering.tile_to_loops.kernel import MappedTile, Tile
from strata.lowering.tile_to_loops.mma import yielded_in_place


@dataclass
class PartialsTile(Tile):
    """A reduction result held as per-warp partials in shared memory (`parts` per output,
    output-major): an element is combined from its partials where it is read."""

    scratch: SSAValue
    parts: int
    out_shape: tuple[int, ...]
    combine: Callable[[SSAValue, SSAValue], SSAValue]
    extents: list[SSAValue]

    def read_buffers(self) -> set[SSAValue]:
        """What it reads (tile_to_loops.kernel.buffers_read): its scratch row."""
        return {self.scratch}

    def output(self, k: ThreadMappedLowering, indices: Sequence[SSAValue]) -> SSAValue:
        """The flat position of the output element at `indices` (row-major in out_shape)."""
        output = k.index(0)
        for index, stride in zip(indices, contiguous_strides(self.out_shape)):
            output = k.add(output, k.mul(index, k.index(stride)))
        return output

    def combine_partials(self, k: ThreadMappedLowering, indices: Sequence[SSAValue]) -> SSAValue:
        k.note_read(self.scratch, (), None)
        first = k.mul(self.output(k, indices), k.index(self.parts))
        total = k.emit(memref.LoadOp.get(self.scratch, [first]))
        for part in range(1, self.parts):
            slot = k.add(first, k.index(part))
            total = self.combine(total, k.emit(memref.LoadOp.get(self.scratch, [slot])))
        return total


@dataclass
class RegisterTile(Tile):
    """An accumulator in registers: the values of this thread's cells of `layout`."""

    values: list[SSAValue]
    layout: AccumulatorLayout
    extents: list[SSAValue]

    def read_buffers(self) -> set[SSAValue]:
        """What it reads (tile_to_loops.kernel.buffers_read): registers, no buffer."""
        return set()


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


def cell_values(k: ThreadMappedLowering, value: Tile, layout: AccumulatorLayout) -> list[SSAValue]:
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


def carried_in_registers(k: ThreadMappedLowering, arg: SSAValue) -> AccumulatorLayout | None:
    """The layout a loop-carried tile keeps in registers: when its one use is the
    accumulator of an mma yielded back in its place, and the tile has a cell per thread."""
    uses = list(arg.uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, tile.MmaOp):
        return None
    mma = uses[0].operation
    if mma.acc is not arg or not yielded_in_place(mma):
        return None
    layout = accumulator_layout(mma, k.block_size, k.tf32)
    return layout if layout.active == k.block_size else None


def address(k: ThreadMappedLowering, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    """The address of buffer[indices] (row-major) for inline PTX: i32 for a shared buffer,
    index for a global one."""
    shape = buffer.type.get_shape()
    offset = indices[0]
    for index, size in zip(indices[1:], shape[1:]):
        offset = k.add(k.mul(offset, k.index(size)), index)
    element = element_bytes(buffer.type.element_type)
    at = k.add(k.emit(memref.ExtractAlignedPointerAsIndexOp.get(buffer)), k.mul(offset, k.index(element)))
    return k.emit(arith.IndexCastOp(at, i32)) if k.is_shared(buffer) else at

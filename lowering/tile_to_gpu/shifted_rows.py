"""16-bit accumulator epilogues whose destination rows do not start 16 bytes aligned.

GPT-2's logits are [tokens, 50257]: row r starts 50257 · r elements in, anywhere within a
16-byte chunk, so row_stores.py's chunks do not apply, and from the fragment layout a lane
could only store lone 2-byte elements. Here the tile is staged in shared memory as there
(row_stores.stage_pairs: packed pairs of the tile's own columns) and each row is stored in
the 16-byte chunks of *global* memory it covers. A row whose first element lies s elements
past a 16-byte boundary covers chunks j = 0 .. columns / 8, chunk j holding the tile's
columns 8j - s .. 8j - s + 7:

- a whole chunk inside the row's extent is five 32-bit words of the staged row realigned
  by `shf.r.clamp.b32` (a shift of 16 bits where s is odd, none where it is even) and one
  `st.global.v4.b32`;
- the partial chunks at the row's two ends are stored element by element.

Thread t takes the slots t, t + block, ... of the tile's rows x (columns / 8 + 1) chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import BFloat16Type, Float16Type, IntAttr, i16, i32
from xdsl.ir import Block, Region, SSAValue

from strata.lowering.tile_to_gpu.fragments import MmaFragments
from strata.lowering.tile_to_gpu.row_stores import block_slots, guarded_if, staged_words, stage_pairs
from strata.lowering.tile_to_gpu.tiles import address

CHUNK = 8
"""16-bit elements per 16-byte chunk."""


def shifted_rows_apply(layout: object, stores: Sequence[tuple], is_shared) -> bool:
    """Whether an epilogue over `layout` can store its 16-bit rows in global 16-byte chunks:
    one matrix tile, global row-major destinations at static offsets."""
    return isinstance(layout, MmaFragments) and prod(layout.shape[:-2]) == 1 and all(
        isinstance(op.tile.type.element_type, BFloat16Type | Float16Type) and not is_shared(part.buffer)
        and part.view.get_strides()[-1] == 1 and isinstance(part.view.offset, IntAttr)
        for op, part, _ in stores
    )  # fmt: skip


def store_shifted_rows(k, layout: MmaFragments, stores: Sequence[tuple], extents: Sequence[SSAValue], origins) -> None:
    """The epilogue's stores through shared memory in global 16-byte chunks (module docstring)."""
    rows, columns = layout.shape[-2:]
    staged = [k.shared_alloca([rows, staged_words(layout, stores)], i32, dynamic=True) for _ in stores]
    stage_pairs(k, layout, stores, staged, extents)
    k.barriers.barrier()
    zeros = [k.index(0)] * (len(layout.shape) - 2)
    for row, chunk, checks in block_slots(k, rows, columns // CHUNK + 1, extents[-2]):
        inside = k.all_of(checks)
        for (_, part, _), tile, origin in zip(stores, staged, origins):
            def store_row_chunk(tile=tile, part=part, origin=origin) -> None:
                start = k.element_offset(part.view, origin, [*zeros, row, k.index(0)])
                shift = k.emit(arith.RemUIOp(start, k.index(CHUNK)))
                first_column = k.emit(arith.SubiOp(k.mul(chunk, k.index(CHUNK)), shift))
                whole = k.all_of([
                    k.emit(arith.CmpiOp(first_column, k.index(0), "sge")),
                    k.emit(arith.CmpiOp(k.add(first_column, k.index(CHUNK)), extents[-1], "sle")),
                ])  # fmt: skip
                if_else(k, whole, lambda: store_chunk(k, tile, part.buffer, row, start, first_column, shift),
                        lambda: store_elements(k, tile, part, row, start, first_column, extents[-1]))

            guarded_if(k, inside, store_row_chunk)


def if_else(k, condition: SSAValue, then: Callable[[], None], otherwise: Callable[[], None]) -> None:
    """scf.if condition { then } else { otherwise }."""
    blocks = Block(), Block()
    k.emit(scf.IfOp(condition, [], Region(blocks[0]), Region(blocks[1])))
    outer = k.cursor
    for block, body in zip(blocks, (then, otherwise)):
        k.cursor = block
        body()
        k.emit(scf.YieldOp())
    k.cursor = outer


def store_chunk(k, tile: SSAValue, buffer: SSAValue, row: SSAValue, start: SSAValue, first_column: SSAValue,
                shift: SSAValue) -> None:
    """The whole chunk from tile column `first_column` on: five staged words from the one
    holding that column, realigned by 16 bits where the column is odd, one 16-byte store."""
    odd = k.emit(arith.AndIOp(shift, k.index(1)))
    word = k.emit(arith.DivUIOp(k.emit(arith.SubiOp(first_column, odd)), k.index(2)))
    words = [k.emit(memref.LoadOp.get(tile, [row, k.add(word, k.index(i))])) for i in range(5)]
    bits = k.emit(arith.IndexCastOp(k.mul(odd, k.index(16)), i32))
    aligned = [k.inline_ptx("shf.r.clamp.b32", [low, high, bits], 1)[0] for low, high in zip(words, words[1:])]
    k.inline_ptx("st.global.v4.b32", [address(k, buffer, [k.add(start, first_column)]), *aligned])


def store_elements(k, tile: SSAValue, part, row: SSAValue, start: SSAValue, first_column: SSAValue,
                   width: SSAValue) -> None:
    """A partial chunk at a row's end: each of its columns inside [0, width) on its own."""
    element = part.view.element_type
    for offset in range(CHUNK):
        column = k.add(first_column, k.index(offset))
        inside = k.all_of([k.emit(arith.CmpiOp(column, k.index(0), "sge")), k.emit(arith.CmpiOp(column, width, "slt"))])

        def store(column=column) -> None:
            word = k.emit(memref.LoadOp.get(tile, [row, k.emit(arith.DivUIOp(column, k.index(2)))]))
            bits = k.emit(arith.IndexCastOp(k.mul(k.emit(arith.RemUIOp(column, k.index(2))), k.index(16)), i32))
            half = k.emit(arith.TruncIOp(k.emit(arith.ShRUIOp(word, bits)), i16))
            value = k.emit(arith.BitcastOp(half, element))
            k.emit(memref.StoreOp.get(value, part.buffer, [k.add(start, column)]))

        k.guarded(inside, store)

"""An accumulator epilogue staged through shared memory and stored in 16-byte chunks.

From the fragment layout (epilogue.py) a warp's `st.global.b32` writes 4 bytes a lane, 16
bytes in each of eight rows: every store instruction touches eight lines, each half a
sector. Measured on an H200, warpgroup matmuls with those stores left out ran 0.62 -> 0.95
of cuBLAS at 8192 x 768 x 3072 and 0.72 -> 0.81 at 4096^3: the stores, not the products,
bounded the epilogue. Here, where every destination row starts 16 bytes aligned:

- each thread packs its cell pairs as epilogue.py does (one `cvt.rn.bf16x2.f32` each) and
  writes the words into a shared tile whose rows are padded by 16 bytes (a store
  instruction's eight rows then fall in different banks); f32 results (TF32 matmuls) are
  written a cell at a time;
- one barrier;
- the block copies the tile out in 16-byte chunks, consecutive threads on consecutive
  chunks of a row: `ld.shared.v4.b32`, then `st.global.v4.b32` where the chunk lies inside
  the tile's extent (a row's length and the tile's origin are multiples of 8 elements, so
  a chunk is wholly inside or wholly outside).

Values of cells outside the extent are staged too (they are never stored); reads of the
epilogue's other inputs stay clamped into the extent as in every epilogue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from math import prod

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import Float32Type, IntAttr, f32, i32
from xdsl.ir import SSAValue

from strata.dialects.tile_types import TensorViewType, element_bytes
from strata.lowering.tile_to_gpu.epilogue import pack, pairs_apply
from strata.lowering.tile_to_gpu.fragments import MmaFragments
from strata.lowering.tile_to_gpu.tiles import address
from strata.lowering.tile_to_loops.kernel import static_value

CHUNK_BYTES = 16
PAD_WORDS = CHUNK_BYTES // 4
"""A staged row's padding, in 32-bit words."""


def rows_apply(layout: object, stores: Sequence[tuple], is_shared) -> bool:
    """Whether an epilogue over `layout` can go through shared memory in 16-byte chunks:
    it can store pairs (epilogue.py) or its results are all f32 in global memory, the tile
    is one matrix of whole chunks per row, and every destination row starts 16 bytes
    aligned."""
    f32_results = isinstance(layout, MmaFragments) and all(
        isinstance(op.tile.type.element_type, Float32Type) and not is_shared(part.buffer) for op, part, _ in stores
    )
    if not (f32_results or pairs_apply(layout, stores, is_shared)):
        return False
    chunk = CHUNK_BYTES // element_bytes(stores[0][0].tile.type.element_type)
    return prod(layout.shape[:-2]) == 1 and layout.shape[-1] % chunk == 0 and all(
        _chunked_view(part.view, chunk) for _, part, _ in stores
    )


def _chunked_view(view: TensorViewType, chunk: int) -> bool:
    *outer, last = view.get_strides()
    offset = view.offset.data if isinstance(view.offset, IntAttr) else None
    return (
        last == 1 and view.get_shape()[-1] % chunk == 0 and offset is not None and offset % chunk == 0
        and all(isinstance(s, int) and s % chunk == 0 for s in outer)
    )  # fmt: skip


def staged_words(layout: MmaFragments, stores: Sequence[tuple]) -> int:
    """32-bit words per staged row: the tile's row and the padding."""
    return layout.shape[-1] * element_bytes(stores[0][0].tile.type.element_type) // 4 + PAD_WORDS


def staging_bytes(layout: MmaFragments, stores: Sequence[tuple]) -> int:
    """Shared memory the staged tiles of `stores` take."""
    return len(stores) * layout.shape[-2] * staged_words(layout, stores) * 4


def store_rows(k, layout: MmaFragments, stores: Sequence[tuple], extents: Sequence[SSAValue], origins) -> None:
    """The epilogue's stores through shared memory (module docstring)."""
    f32_results = isinstance(stores[0][0].tile.type.element_type, Float32Type)
    words = staged_words(layout, stores)
    staged = [k.shared_alloca([layout.shape[-2], words], f32 if f32_results else i32, dynamic=True) for _ in stores]
    (stage_cells if f32_results else stage_pairs)(k, layout, stores, staged, extents)
    k.barriers.barrier()
    copy_out(k, layout, stores, staged, extents, origins)


def stage_cells(k, layout: MmaFragments, stores: Sequence[tuple], staged: list[SSAValue], extents) -> None:
    """Each of this thread's cells of f32 results into its place in the staged tiles."""
    for position, indices in enumerate(layout.cells(k)):
        row, column = indices[-2:]
        k.inside, k.cell = k.clamp(indices, extents, layout.shape), (layout, position)
        for (_, _, value), tile in zip(stores, staged):
            k.emit(memref.StoreOp.get(k.read(value, indices), tile, [row, column]))
    k.inside, k.cell = None, None


def stage_pairs(k, layout: MmaFragments, stores: Sequence[tuple], staged: list[SSAValue], extents) -> None:
    """Each of this thread's cell pairs of 16-bit results, packed, into its word of the
    staged tiles."""
    cells = layout.cells(k)
    for position in range(0, len(cells), 2):
        row, column = cells[position][-2:]
        values = []
        for cell in (position + 1, position):  # the first cell last: `inside` stays its own
            k.inside, k.cell = k.clamp(cells[cell], extents, layout.shape), (layout, cell)
            values.append([k.read(value, cells[cell]) for _, _, value in stores])
        second, first = values
        word_column = k.emit(arith.DivUIOp(column, k.index(2)))
        for (op, _, _), tile, low, high in zip(stores, staged, first, second):
            k.emit(memref.StoreOp.get(pack(k, op.tile.type.element_type, low, high), tile, [row, word_column]))
    k.inside, k.cell = None, None


def copy_out(k, layout: MmaFragments, stores: Sequence[tuple], staged: list[SSAValue], extents: Sequence[SSAValue],
             origins) -> None:
    """16-byte chunks from the staged tiles to the destinations, chunk c of the tile by
    thread c mod block; a chunk outside the extent is not stored."""
    rows, columns = layout.shape[-2:]
    chunk = CHUNK_BYTES // element_bytes(stores[0][0].tile.type.element_type)
    zeros = [k.index(0)] * (len(layout.shape) - 2)
    for row, index, checks in block_slots(k, rows, columns // chunk, extents[-2]):
        column = k.mul(index, k.index(chunk))
        if static_value(extents[-1]) != columns:
            checks.append(k.emit(arith.CmpiOp(column, extents[-1], "ult")))
        word_column = k.emit(arith.DivUIOp(column, k.index(chunk // 4)))  # elements per 32-bit word
        inside = k.all_of(checks)
        for (_, part, _), tile, origin in zip(stores, staged, origins):
            def store(tile=tile, part=part, origin=origin) -> None:
                words = k.inline_ptx("ld.shared.v4.b32", [address(k, tile, [row, word_column])], 4)
                offset = k.element_offset(part.view, origin, [*zeros, row, column])
                k.inline_ptx("st.global.v4.b32", [address(k, part.buffer, [offset]), *words])

            guarded_if(k, inside, store)


def block_slots(k, rows: int, per_row: int, row_extent: SSAValue) -> Iterator[tuple[SSAValue, SSAValue, list[SSAValue]]]:
    """The slots of a rows x per_row grid this thread takes (t, t + block, ...): (row, slot
    in the row, conditions that the slot exists and its row lies inside `row_extent`)."""
    slots = rows * per_row
    for first in range(0, slots, k.block_size):
        at = k.add(k.thread, k.index(first))
        row = k.emit(arith.DivUIOp(at, k.index(per_row)))
        checks = [] if slots - first >= k.block_size else [k.emit(arith.CmpiOp(at, k.index(slots), "ult"))]
        if static_value(row_extent) != rows:
            checks.append(k.emit(arith.CmpiOp(row, row_extent, "ult")))
        yield row, k.emit(arith.RemUIOp(at, k.index(per_row))), checks


def guarded_if(k, condition: SSAValue | None, body: Callable[[], object]) -> None:
    """body() under scf.if `condition`, or as it is where there is none (always true)."""
    if condition is None:
        body()
    else:
        k.guarded(condition, body)

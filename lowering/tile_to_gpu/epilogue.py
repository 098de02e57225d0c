"""Stores of an mma accumulator's epilogue two elements at a time.

In an mma.sync (or wgmma) accumulator fragment a lane holds pairs of horizontally adjacent
cells: registers c0, c1 are (row, column) and (row, column + 1), c2, c3 the same eight rows
down, with even columns. A 16-bit result (bf16/f16) of such a pair is one 32-bit word:
packed with one `cvt.rn.{bf16x2,f16x2}.f32` (the f32s they were rounded from, rounded the same way) and
written with one `st.global.b32`, half the store instructions of element-wise stores and
whole 4-byte words per lane. That needs every pair's first element at an even offset and
the second inside the tile whenever the first is: a row-major destination (last stride 1),
even other strides and offset, an even last dimension (so every extent is even).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import BFloat16Type, Float16Type, IntAttr, f32
from xdsl.ir import SSAValue

from strata.dialects.tile_types import TensorViewType, element_bytes
from strata.lowering.tile_to_gpu.fragments import MmaFragments


def pairs_apply(layout: object, stores: Sequence[tuple], is_shared) -> bool:
    """Whether every store of an epilogue over `layout` can write cell pairs as words."""
    return isinstance(layout, MmaFragments) and all(
        _paired_view(part.view) and not is_shared(part.buffer) and isinstance(op.tile.type.element_type, BFloat16Type | Float16Type)
        for op, part, _ in stores
    )


def _paired_view(view: TensorViewType) -> bool:
    *outer, last = view.get_strides()
    offset = view.offset.data if isinstance(view.offset, IntAttr) else None
    return (
        last == 1 and view.get_shape()[-1] % 2 == 0 and offset is not None and offset % 2 == 0
        and all(isinstance(s, int) and s % 2 == 0 for s in outer)
    )  # fmt: skip


def store_pairs(k, layout: MmaFragments, stores: Sequence[tuple], extents: Sequence[SSAValue], origins) -> None:
    """The epilogue's stores, one 32-bit word per cell pair (see the module docstring)."""
    cells = layout.cells(k)
    bases = [k.emit(memref.ExtractAlignedPointerAsIndexOp.get(part.buffer)) for _, part, _ in stores]
    for position in range(0, len(cells), 2):
        values = []
        for cell in (position + 1, position):  # the first cell last: `inside` stays its own
            k.inside, k.cell = k.clamp(cells[cell], extents, layout.shape), (layout, cell)
            values.append([k.read(value, cells[cell]) for _, _, value in stores])
        second, first = values
        for (op, part, _), base, origin, low, high in zip(stores, bases, origins, first, second):
            offset = k.element_offset(part.view, origin, cells[position])
            if part.buffer in k.barriers.ordered_buffers:
                for cell in (position, position + 1):
                    k.note_write(part.buffer, cells[cell], None)
            word = pack(k, op.tile.type.element_type, low, high)
            at = k.add(base, k.mul(offset, k.index(element_bytes(op.tile.type.element_type))))
            k.effect(lambda at=at, word=word: k.inline_ptx("st.global.b32", [at, word]))
    k.inside, k.cell = None, None


def pack(k, element, low: SSAValue, high: SSAValue) -> SSAValue:
    """Two 16-bit values as one 32-bit word, `low` in the low half. A value rounded from an
    f32 is packed from that f32: the packing rounds it the same way (to nearest, ties to
    even), and a separate f16 rounding (`cvt.rn.f16.f32`) of a wgmma accumulator register
    makes ptxas serialize the kernel's wgmma instructions (its warning C7514: f16 matmuls
    ran 15-25% slower than bf16 ones)."""
    widened = [_unrounded(k, v) for v in (high, low)]
    instruction = "cvt.rn.bf16x2.f32" if isinstance(element, BFloat16Type) else "cvt.rn.f16x2.f32"
    return k.inline_ptx(instruction, widened, 1)[0]


def _unrounded(k, value: SSAValue) -> SSAValue:
    """The f32 that `value` was rounded from, else `value` widened to f32 (exact)."""
    owner = value.owner
    if isinstance(owner, arith.TruncFOp) and owner.input.type == f32:
        return owner.input
    return k.emit(arith.ExtFOp(value, f32))

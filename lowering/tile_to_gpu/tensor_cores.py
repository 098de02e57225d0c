"""tile.mma on tensor cores (see fragments.py for which mma qualifies and the accumulator's
layout): bf16/f16 operands staged in shared memory as 32-bit words of two elements adjacent
along k, an f32 accumulator in registers, `mma.sync.aligned.m16n8k16` per 16 x 8 x 16 step.

Staging. a ([1.., m, kt]) becomes words a_words[i][w] = (a[i][2w], a[i][2w + 1]) and b
([1.., kt, n]) words b_words[w][j] = (b[2w][j], b[2w + 1][j]), the lower k in the low
half: exactly the pairs a fragment register holds. Elements outside the tile's extent are
staged as zero, so the last, partial k tile multiplies whole 16-deep steps. Rows are
padded so that a warp's fragment loads hit 32 different banks: a row of a_words is
4 x (odd) words long, a row of b_words 8 x (odd). The copy walks the source's contiguous
axis fastest, so global reads coalesce for transposed operands too.

Per 16-deep step each warp loads the a fragments of its instruction rows (four words:
rows g and g + 8, words t and t + 4 of the step, g = lane // 4, t = lane % 4) and the b
fragments of its instruction columns (words t and t + 4 at column g), then runs one
mma.sync per instruction tile. The instruction is inline PTX (`func.call @ptx.mma...`, see
the NVVM translation). Products of 16-bit values are exact in f32, but the instruction's
f32 sum of its 16 products is not IEEE round-to-nearest (the hardware aligns and truncates):
results differ from the fma path by a few f32 ulps of the sum (docs/gpu-backend.md).

TF32 (f32 operands, `lower-tile-to-gpu{tf32=true}`): one element per word, rounded to
TF32 (`cvt.rna.tf32.f32`: 10 mantissa bits, to nearest, ties away from zero) as it is
staged, and `mma.sync.aligned.m16n8k8.tf32` per 8-deep step: the same words t and t + 4.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr, f32, i16, i32
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.lowering.tile_to_gpu.fragments import MmaFragments, TensorCoreKind, tensor_core_operands
from strata.lowering.tile_to_gpu.kernel import GpuKernelLowering
from strata.lowering.tile_to_gpu.tiles import RegisterTile, cell_values, register_tile_in
from strata.lowering.tile_to_loops.kernel import LoadedTile, Tile

WORDS_PER_STEP = 8
"""32-bit words along k per instruction step (16 elements of 16 bits, or 8 of TF32)."""


def to_tf32(k: GpuKernelLowering, bits: SSAValue) -> SSAValue:
    """The f32 whose bits are the i32 `bits` rounded to TF32 (nearest, ties away), as an i32."""
    return k.inline_ptx("cvt.rna.tf32.f32", [bits], 1)[0]


def a_padding(words: int) -> int:
    """Pad a row of a_words to 4 x (odd) words: the eight rows g of a fragment load start
    in eight different groups of four banks."""
    return 4 if (words // 4) % 2 == 0 else 0


def b_padding(columns: int) -> int:
    """Pad a row of b_words to 8 x (odd) words: the four rows t start in different groups of eight banks."""
    return 8 if (columns // 8) % 2 == 0 else 0


def element_bits(k: GpuKernelLowering, value: Tile, indices: list[SSAValue], shape: Sequence[int], element) -> SSAValue:
    """The bits of value[indices] (16-bit: in the low half of an i32; f32: rounded to
    TF32): zero outside the extent."""
    clamped = list(indices)
    inside = k.clamp(clamped, value.extents, shape)
    x = k.read(value, clamped)
    if inside is not None:
        zero = k.emit(arith.ConstantOp(FloatAttr(0.0, element)))
        x = k.emit(arith.SelectOp(inside, x, zero))
    if isinstance(element, Float32Type):
        return to_tf32(k, k.emit(arith.BitcastOp(x, i32)))
    return k.emit(arith.ExtUIOp(k.emit(arith.BitcastOp(x, i16)), i32))


def stage_words(k: GpuKernelLowering, value: Tile, shape: Sequence[int], kind: TensorCoreKind, k_axis: int) -> SSAValue:
    """The matrix tile `value` ([1.., rows, cols]) in shared memory as fragment words:
    two 16-bit elements adjacent along `k_axis` (0 for b, 1 for a; see the module
    docstring), or one TF32 element."""
    *lead, rows, cols = shape
    element, pair = kind.element, kind.per_word == 2
    words = [rows, cols // kind.per_word] if k_axis == 1 else [rows // kind.per_word, cols]
    padding = a_padding(words[1]) if k_axis == 1 else b_padding(words[1])
    staged = k.shared_alloca([words[0], words[1] + padding], i32)
    strides = value.view.get_strides() if isinstance(value, LoadedTile) else None
    transposed = strides is not None and strides[-1] != 1 and strides[-2] == 1
    order = [1, 0] if transposed else [0, 1]
    zeros = [k.index(0)] * len(lead)

    def copy(walked: list[SSAValue]) -> None:
        word = [None, None]
        for position, axis in enumerate(order):
            word[axis] = walked[position]
        if pair:
            low = list(word)
            low[k_axis] = k.mul(word[k_axis], k.index(2))
            high = list(low)
            high[k_axis] = k.add(low[k_axis], k.index(1))
            low_bits, high_bits = (element_bits(k, value, [*zeros, *at], shape, element) for at in (low, high))
            sixteen = k.emit(arith.ConstantOp(IntegerAttr(16, i32)))
            packed = k.emit(arith.OrIOp(low_bits, k.emit(arith.ShLIOp(high_bits, sixteen))))
        else:
            packed = element_bits(k, value, [*zeros, *word], shape, element)
        k.note_write(staged, word, None)
        k.effect(lambda: k.emit(memref.StoreOp.get(packed, staged, word)))

    walked_shape = [words[axis] for axis in order]
    k.thread_loop(walked_shape, [k.index(size) for size in walked_shape], copy)
    return staged


def multiply_fragments(k: GpuKernelLowering, layout: MmaFragments, kind: TensorCoreKind, a_fragments: list[list[SSAValue]],
                       b_fragments: list[list[SSAValue]], sums: list[SSAValue]) -> None:
    """One mma of `kind` per instruction tile of the warp (four a and two b words, four f32
    accumulators in and out), updating its four registers of `sums`."""
    for tm in range(layout.tiles_m):
        for tn in range(layout.tiles_n):
            at = 4 * (tm * layout.tiles_n + tn)
            sums[at:at + 4] = k.inline_ptx(kind.instruction, [*a_fragments[tm], *b_fragments[tn], *sums[at:at + 4]], 4, f32)


def warp_steps(k: GpuKernelLowering, layout: MmaFragments, a_words: SSAValue, b_words: SSAValue,
               depth: int, kind: TensorCoreKind, start: list[SSAValue]) -> list[SSAValue]:
    """This thread's accumulator registers after `depth` (a multiple of 8) words of k."""
    k.note_read(a_words, (), None)
    k.note_read(b_words, (), None)
    warp_row, warp_column, group, thread_in_group = layout.lane_origin(k)
    row = k.add(warp_row, group)
    column = k.add(warp_column, group)
    sums = list(start)
    for step in range(depth // WORDS_PER_STEP):
        first = k.add(thread_in_group, k.index(step * WORDS_PER_STEP))
        second = k.add(first, k.index(4))
        a_fragments = [
            [k.emit(memref.LoadOp.get(a_words, [k.add(row, k.index(16 * tm + rows)), w]))
             for rows, w in ((0, first), (8, first), (0, second), (8, second))]
            for tm in range(layout.tiles_m)
        ]  # fmt: skip
        b_fragments = [
            [k.emit(memref.LoadOp.get(b_words, [w, k.add(column, k.index(8 * tn))])) for w in (first, second)]
            for tn in range(layout.tiles_n)
        ]
        multiply_fragments(k, layout, kind, a_fragments, b_fragments, sums)
    return sums


def tensor_core_mma(k: GpuKernelLowering, op: tile.MmaOp, layout: MmaFragments) -> None:
    """acc += a @ b on tensor cores (see the module docstring)."""
    kind, *operands = tensor_core_operands(op, k.tf32)
    sources = []
    for operand in operands:
        value = k.tile_of(operand)
        if register_tile_in(value) is not None:
            value = k.spill(value, operand.type.get_shape(), kind.element)
        sources.append((value, operand.type.get_shape()))
    (a, a_shape), (b, b_shape) = sources
    acc = k.tile_of(op.acc)
    lead = len(layout.shape) - 2
    extents = [*acc.extents[:lead], a.extents[-2], b.extents[-1]]
    start = cell_values(k, acc, layout)
    a_words = stage_words(k, a, a_shape, kind, k_axis=1)
    b_words = stage_words(k, b, b_shape, kind, k_axis=0)
    sums: list[SSAValue] = []
    depth = a_shape[-1] // kind.per_word
    code, accesses = k.block_code(
        lambda: sums.extend(warp_steps(k, layout, a_words, b_words, depth, kind, start))
    )
    k.place_inline(code, accesses)
    k.values[op.result] = RegisterTile(sums, layout, extents)

"""tile.mma in `lower-tile-to-loops`: the accumulator is a stack buffer updated in place.

Three loop orders. When the tile's columns are a whole number of 512-bit vectors and its
element is f32 or f64, a whole tile takes the register-blocked micro-kernel
(register_blocked.py: blocks of the accumulator held in vector registers through the k
loop, b packed and read as vectors, a broadcast); a partial edge tile of the same kernel
is detected at run time and takes the scalar loops. Otherwise the usual scalar order (rows of the
accumulator blocked by 4, each loaded row of b feeding 4 FMAs, left to LLVM's vectorizer)
or, when both operands are contiguous along k (b transposed), dot products carried
through the k loop and vectorized along k.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Block, Region, SSAValue

from strata.dialects import tile
from strata.lowering.tile_to_loops.kernel import (
    LOWERINGS,
    BufferTile,
    KernelLowering,
    LoadedTile,
    Tile,
    static_value,
)
from strata.lowering.tile_to_loops.register_blocked import consecutive, fits_micro_kernel, register_blocked


CONTRACT = arith.FastMathFlagsAttr([arith.FastMathFlag.ALLOW_CONTRACT])
"""tile.mma's multiply-add may become one FMA (one rounding instead of two), as BLAS
does; documented numerics."""
DOT = arith.FastMathFlagsAttr([arith.FastMathFlag.REASSOC, arith.FastMathFlag.ALLOW_CONTRACT])
"""Dot products may also be reassociated (vectorized along k), like BLAS kernels."""


def product_depth(k: KernelLowering, a: Tile, b: Tile) -> SSAValue:
    """The k extent the product runs over: the shorter of a's columns and b's rows (one
    operand's k may be padded with zeros past the other's, lower-graph-to-tile's
    tensor-core copies: the other one's rows there hold nothing to read)."""
    a_k, b_k = a.extents[-1], b.extents[-2]
    if static_value(a_k) is not None and static_value(a_k) == static_value(b_k):
        return a_k
    return k.emit(arith.MinUIOp(a_k, b_k))


def _mma(k: KernelLowering, op: tile.MmaOp) -> None:
    a, b, acc = k.tile_of(op.a), k.tile_of(op.b), k.tile_of(op.acc)
    acc_type = op.acc.type
    lead = len(acc_type.get_shape()) - 2
    in_place = isinstance(acc, BufferTile) and acc is k.iter_buffers.get(op.acc) and yielded_in_place(op)
    target = acc if in_place else k.materialize(acc, acc_type.get_shape(), acc_type.element_type)
    zeros = [k.index(0)] * lead
    m, kk, n = a.extents[-2], product_depth(k, a, b), b.extents[-1]
    k.values[op.result] = BufferTile(target.buffer, [*target.extents[:lead], m, n])
    full = (*op.a.type.get_shape()[-2:], op.b.type.get_shape()[-1])
    if not fits_micro_kernel(target, full[-1]):
        _mma_loops(k, op, a, b, target, zeros, m, kk, n)
        return
    partial = [(extent, size) for extent, size in zip((m, kk, n), full) if static_value(extent) != size]
    if not partial:
        register_blocked(k, a, b, target, zeros, *full)
        return
    # Edge tiles of a matrix whose sizes the tile does not divide: whole tiles (most of
    # them) take the micro-kernel, the rest the scalar loops, decided per tile at run time.
    conditions = [k.emit(arith.CmpiOp(extent, k.index(size), "eq")) for extent, size in partial]
    whole = functools.reduce(lambda x, y: k.emit(arith.AndIOp(x, y)), conditions)
    branches = [Block(), Block()]
    k.emit(scf.IfOp(whole, [], Region(branches[0]), Region(branches[1])))
    outer = k.cursor
    for block, emit in zip(branches, (
        lambda: register_blocked(k, a, b, target, zeros, *full),
        lambda: _mma_loops(k, op, a, b, target, zeros, m, kk, n),
    )):  # fmt: skip
        k.cursor = block
        emit()
        k.emit(scf.YieldOp())
    k.cursor = outer


def _mma_loops(k: KernelLowering, op: tile.MmaOp, a: Tile, b: Tile, target: BufferTile, zeros, m, kk, n) -> None:
    """The scalar loop orders (LLVM vectorizes them): any extents, any element type."""
    if contiguous_along_k(a, -1) and contiguous_along_k(b, -2) and not contiguous_along_k(b, -1):
        _mma_dot_products(k, a, b, target, zeros, m, kk, n)
        return
    if isinstance(b, LoadedTile) and b.view.get_strides()[-1] != 1:
        b = k.materialize(b, op.b.type.get_shape(), op.b.type.element_type)

    rows = block_size(m, MMA_ROW_BLOCK)

    def row_block(i: SSAValue) -> None:
        row_indices = consecutive(k, i, rows)

        def step(kidx: SSAValue) -> None:
            a_values = [k.read(a, [*zeros, r, kidx]) for r in row_indices]

            def column(j: SSAValue) -> None:
                b_value = k.read(b, [*zeros, kidx, j])
                for r, a_value in zip(row_indices, a_values):
                    index = [*zeros, r, j]
                    current = k.emit(memref.LoadOp.get(target.buffer, index))
                    product = k.emit(arith.MulfOp(a_value, b_value, CONTRACT))
                    k.emit(memref.StoreOp.get(k.emit(arith.AddfOp(current, product, CONTRACT)), target.buffer, index))

            k.loop(n, column)

        k.loop(kk, step)

    k.loop(m, row_block, step=rows)


def block_size(extent: SSAValue, preferred: int) -> int:
    """`preferred` rows (or columns) at a time when the extent is a static multiple of it,
    else 1: a partial block would need a remainder loop, and an extent known only at run
    time (an edge tile's) may be any size: blocks of `preferred` would read past it."""
    size = static_value(extent)
    return preferred if size is not None and size % preferred == 0 else 1


def contiguous_along_k(value: Tile, axis: int) -> bool:
    return isinstance(value, LoadedTile) and value.view.get_strides()[axis] == 1


DOT_BLOCK = (2, 4)
"""Rows x columns of the accumulator computed together in the dot-product form."""


def _mma_dot_products(k: KernelLowering, a, b, target: BufferTile, zeros, m, kk, n) -> None:
    """acc[i, j] += Σ_k a[i, k] · b[k, j] when both operands are contiguous along k (b
    transposed, as in x @ wᵀ): each (row block, column block) runs one k loop carrying
    scalar sums that LLVM vectorizes along k (reassoc) with FMAs (contract) — no packing."""
    rows, columns = block_size(m, DOT_BLOCK[0]), block_size(n, DOT_BLOCK[1])
    element = target.buffer.type.element_type

    def row_block(i: SSAValue) -> None:
        row_indices = consecutive(k, i, rows)

        def column_block(j: SSAValue) -> None:
            column_indices = consecutive(k, j, columns)

            def step(kidx: SSAValue, sums: Sequence[SSAValue]) -> list[SSAValue]:
                a_values = [k.read(a, [*zeros, r, kidx]) for r in row_indices]
                b_values = [k.read(b, [*zeros, kidx, c]) for c in column_indices]
                products = (k.emit(arith.MulfOp(x, y, DOT)) for x in a_values for y in b_values)
                return [k.emit(arith.AddfOp(total, p, DOT)) for total, p in zip(sums, products)]

            zero = k.emit(arith.ConstantOp(FloatAttr(0.0, element)))
            sums = k.loop_carrying(kk, [zero] * (rows * columns), step)
            for (r, c), total in zip(((r, c) for r in row_indices for c in column_indices), sums):
                index = [*zeros, r, c]
                current = k.emit(memref.LoadOp.get(target.buffer, index))
                k.emit(memref.StoreOp.get(k.emit(arith.AddfOp(current, total)), target.buffer, index))

        k.loop(n, column_block, step=columns)

    k.loop(m, row_block, step=rows)


MMA_ROW_BLOCK = 4
"""Rows of the accumulator updated together when the tile is full: each loaded row of b
feeds four FMAs, so the kernel is bound by FMA throughput, not by loads."""


def yielded_in_place(op: tile.MmaOp) -> bool:
    """acc is a loop-carried tile and this mma's only use yields it back to the same slot."""
    uses = list(op.result.uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, scf.YieldOp):
        return False
    block = uses[0].operation.parent_block()
    slot = uses[0].index
    return block.args[1 + slot] is op.acc


LOWERINGS[tile.MmaOp] = _mma

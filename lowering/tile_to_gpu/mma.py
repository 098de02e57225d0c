"""tile.mma in lower-tile-to-gpu: operands staged in shared memory, the accumulator in
registers, spread over the block in micro-tiles.

Each thread owns an RM x RN micro-tile of the accumulator (`MicroTiles`: contiguous columns,
so a row of b is one 16-byte `ld.shared.v4` load; rows of a likewise from the k-major
staging). The k loop runs on registers with `fma` (one rounding per multiply-add, like
BLAS). The accumulator stays in registers (`RegisterTile`) across the kernel's k loop — the
scf.for carries the thread's cells — and through the epilogue: a store of an expression
over it (bias, activation, residual) runs over the thread's own cells. Any other consumer
gets it spilled to shared memory. A tile smaller than one cell per thread keeps its
accumulator in shared memory instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, math, memref
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.dialects.graph_base import is_float
from strata.lowering.tile_to_gpu.fragments import MmaFragments, accumulator_layout
from strata.lowering.tile_to_gpu.kernel import GPU_LOWERINGS, GpuKernelLowering
from strata.lowering.tile_to_gpu.tensor_cores import tensor_core_mma
from strata.lowering.tile_to_gpu.threads import MicroTiles
from strata.lowering.tile_to_gpu.tiles import RegisterTile, cell_values, register_tile_in
from strata.lowering.tile_to_loops.kernel import BufferTile, LoadedTile, Tile
from strata.lowering.tile_to_loops.mma import product_depth, yielded_in_place

STAGE_PADDING = 4
"""Extra elements per staged row: transposed staging writes hit 8 banks, not 1, and rows
stay 16-byte aligned for vector loads."""


def stage(k: GpuKernelLowering, value: Tile, shape: Sequence[int], element, k_axis: int) -> SSAValue:
    """The matrix tile `value` ([1.., rows, cols]) copied into shared memory k-major:
    staged[kk][x] for the (row or column) x, padded rows. The copy walks the source's
    contiguous axis fastest, so global reads coalesce for transposed operands too."""
    *_, rows, cols = shape
    other = cols if k_axis == 0 else rows
    depth = rows if k_axis == 0 else cols
    staged = k.shared_alloca([depth, other + STAGE_PADDING], element)
    lead = len(shape) - 2
    extents = value.extents
    strides = value.view.get_strides() if isinstance(value, LoadedTile) else None
    transposed = strides is not None and strides[-1] != 1 and strides[-2] == 1
    order = [*range(lead), lead + 1, lead] if transposed else list(range(lead + 2))

    def copy(walked: list[SSAValue]) -> None:
        indices = [None] * len(order)
        for position, axis in enumerate(order):
            indices[axis] = walked[position]
        row, col = indices[-2], indices[-1]
        target = [row, col] if k_axis == 0 else [col, row]
        element_value = k.read(value, indices)
        k.note_write(staged, target, None)
        k.effect(lambda: k.emit(memref.StoreOp.get(element_value, staged, target)))

    k.thread_loop([shape[a] for a in order], [extents[a] for a in order], copy)
    return staged


def multiply_add(k: GpuKernelLowering, x: SSAValue, y: SSAValue, total: SSAValue) -> SSAValue:
    if is_float(total.type):
        return k.emit(math.FmaOp(x, y, total))
    return k.emit(arith.AddiOp(total, k.emit(arith.MuliOp(x, y))))


def accumulate(k: GpuKernelLowering, layout: MicroTiles, a_staged: SSAValue, b_staged: SSAValue,
               k_extent: SSAValue, start: Sequence[SSAValue]) -> list[SSAValue]:
    """This thread's cells after the k loop over the staged operands, from `start`."""
    cells = layout.cells(k)
    rows = [cell[-2] for cell in cells[:: layout.per_column]]
    columns = [cell[-1] for cell in cells[: layout.per_column]]
    k.note_read(a_staged, (), None)
    k.note_read(b_staged, (), None)

    def step(k_index: SSAValue, sums: Sequence[SSAValue]) -> list[SSAValue]:
        a_values = [k.emit(memref.LoadOp.get(a_staged, [k_index, r])) for r in rows]
        b_values = [k.emit(memref.LoadOp.get(b_staged, [k_index, c])) for c in columns]
        products = ((x, y) for x in a_values for y in b_values)
        return [multiply_add(k, x, y, total) for (x, y), total in zip(products, sums)]

    return list(k.loop_carrying(k_extent, list(start), step))


def _mma(k: GpuKernelLowering, op: tile.MmaOp) -> None:
    """acc += a @ b (see the module docstring; tensor_cores.py where the mma qualifies)."""
    a, b, acc = (k.tile_of(v) for v in (op.a, op.b, op.acc))
    a, b = (k.spill(t, v.type.get_shape(), v.type.element_type) if register_tile_in(t) else t
            for t, v in ((a, op.a), (b, op.b)))  # fmt: skip
    shape = op.acc.type.get_shape()
    lead = len(shape) - 2
    element = op.acc.type.element_type
    layout = accumulator_layout(op, k.block_size, k.tf32)
    if isinstance(layout, MmaFragments):
        tensor_core_mma(k, op, layout)
        return
    m, k_extent, n = a.extents[-2], product_depth(k, a, b), b.extents[-1]
    extents = [*acc.extents[:lead], m, n]
    if layout.active < k.block_size:
        _mma_in_shared_memory(k, op, a, b, acc, layout, extents)
        return
    start = cell_values(k, acc, layout)
    a_staged = stage(k, a, op.a.type.get_shape(), element, k_axis=1)
    b_staged = stage(k, b, op.b.type.get_shape(), element, k_axis=0)
    sums: list[SSAValue] = []
    code, accesses = k.block_code(lambda: sums.extend(accumulate(k, layout, a_staged, b_staged, k_extent, start)))
    k.place_inline(code, accesses)
    k.values[op.result] = RegisterTile(sums, layout, extents)


def _mma_in_shared_memory(k: GpuKernelLowering, op: tile.MmaOp, a: Tile, b: Tile, acc: Tile,
                          layout: MicroTiles, extents: list[SSAValue]) -> None:
    """A tile with fewer cells than threads: the accumulator lives in shared memory, the
    threads with a micro-tile load, accumulate and store their cells."""
    shape = op.acc.type.get_shape()
    element = op.acc.type.element_type
    in_place = isinstance(acc, BufferTile) and acc is k.iter_buffers.get(op.acc) and yielded_in_place(op)
    target = acc if in_place else k.materialize(acc, shape, element)
    a_staged = stage(k, a, op.a.type.get_shape(), element, k_axis=1)
    b_staged = stage(k, b, op.b.type.get_shape(), element, k_axis=0)
    owner = ("micro-tiles", layout)
    k_extent = product_depth(k, a, b)

    def compute() -> None:
        cells = layout.cells(k)
        for cell in cells:
            k.note_read(target.buffer, cell, owner)
        start = [k.emit(memref.LoadOp.get(target.buffer, cell)) for cell in cells]
        for cell, total in zip(cells, accumulate(k, layout, a_staged, b_staged, k_extent, start)):
            k.note_write(target.buffer, cell, owner)
            k.emit(memref.StoreOp.get(total, target.buffer, cell))

    code, accesses = k.block_code(lambda: k.guarded(k.emit(arith.CmpiOp(k.thread, k.index(layout.active), "ult")), compute))
    k.place_inline(code, accesses)
    k.forget_region_values()
    k.values[op.result] = BufferTile(target.buffer, extents)


GPU_LOWERINGS[tile.MmaOp] = _mma

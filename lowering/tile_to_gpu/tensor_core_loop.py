"""A matmul's k loop on tensor cores as a multi-stage asynchronous pipeline.

The tile IR of a matmul kernel (lower-graph-to-tile) is a loop

    %acc = scf.for %kt = 0 to %steps iter_args(%c = %zero) {
      %a = tile.load_view_tko %pa[.., %row, %kt]   %wa = tile.map %a { arith.extf }
      %b = tile.load_view_tko %pb[.., %kt, %col]   %wb = tile.map %b { arith.extf }
      scf.yield (tile.mma %wa, %wb, %c)
    }

When the mma runs on tensor cores (fragments.py) and both operands are 16-byte aligned
rows (a contiguous along k, b along n or along k; every stride, offset and row length a
multiple of 16 bytes), the loop is lowered here instead of element by element
(tensor_cores.py):

- a and b tiles are copied global -> shared with `cp.async.cg` 16-byte chunks (8 16-bit
  or 4 f32 elements; a chunk outside the matrix copies 0 bytes and zero-fills) into S stages
  (`mma_stages`, 4 by default, fewer where they would not fit) of dynamic shared memory:
  the copies of the next S - 1 steps are in flight while the warps multiply one;
- shared tiles keep their layout, rows padded by 16 bytes (an odd number of 16-byte units,
  so the eight row addresses of an `ldmatrix` hit different banks; 32 bytes for TF32's b
  along n, read 4 bytes at a time from rows of 8 x (odd) words); fragments are
  read with `ldmatrix.x4` (a) and `ldmatrix.x4.trans` (b, two instruction columns). A b
  read along k (`x @ wᵀ`) is staged as w's rows, n x k, and read like a, with plain
  `ldmatrix` (`k_major_fragments`). TF32 reads a 32-bit element where 16-bit reads a pair
  (b along n then one f32 at a time: ldmatrix.trans moves 16-bit elements);
- S - 1 steps are issued before the loop (one commit group each); each step waits until
  its own group has landed (`cp.async.wait_group S-2`), passes one barrier (every thread's
  copies are visible, and every warp is done with the stage read a step ago), issues step
  kt + S - 1 into that stage, and multiplies step kt.

The accumulator is the loop's carried registers in the fragment layout, as in
tensor_cores.py, and the epilogue reads them the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, i32
from xdsl.ir import Block, Region, SSAValue

from strata.dialects import tile
from strata.dialects.tile_types import TensorViewType, element_bytes
from strata.lowering.tile_to_gpu.fragments import (
    MmaFragments,
    TensorCoreKind,
    accumulator_layout,
    ldmatrix_lanes,
    tensor_core_operands,
)
from strata.lowering.tile_to_gpu.kernel import DYNAMIC_SHARED_LIMIT, GpuKernelLowering
from strata.lowering.tile_to_gpu.tensor_cores import multiply_fragments, to_tf32
from strata.lowering.tile_to_gpu.tiles import RegisterTile, address, cell_values
from strata.lowering.tile_to_loops.kernel import Partition, static_value

CHUNK_BYTES = 16
"""Bytes per cp.async copy and per ldmatrix row."""


@dataclass
class Operand:
    """One operand of the pipelined loop: its partition (rows: m for a; k, or n when
    `k_major`, for b), the tile indices of its load (None where the loop index goes),
    elements per 16-byte chunk, elements of padding per shared row, and its shared stages."""

    partition: Partition
    indices: list[SSAValue | None]
    chunk: int
    padding: int
    shared: SSAValue | None = None
    k_major: bool = False
    """b staged as the rows of wᵀ's w (n x k): its fragments by plain ldmatrix, as a's."""
    m_major: bool = False
    """a read along m (the a of aᵀ @ b) staged as the rows of aᵀ (k x m): only the
    warpgroup mma reads it (its M-major mode, warpgroup_loop.py)."""

    @property
    def rows(self) -> int:
        return self.partition.tile_shape[-2]

    @property
    def columns(self) -> int:
        return self.partition.tile_shape[-1]


def aligned_rows(partition: Partition, chunk: int) -> bool:
    """Whether every `chunk`-element piece of the view's rows starts 16 bytes after an aligned base."""
    view = partition.view
    *outer, inner = view.get_strides()
    return (
        inner == 1 and view.offset.data % chunk == 0 and view.get_shape()[-1] % chunk == 0
        and all(s % chunk == 0 for s in outer) and partition.tile_shape[-1] % chunk == 0
    )  # fmt: skip


def pipelined_operands(
    k: GpuKernelLowering, op: scf.ForOp
) -> tuple[TensorCoreKind, MmaFragments, Operand, Operand, int] | None:
    """The tensor-core kind, the accumulator's layout, the two operands and the stages that
    fit when `op` is a k loop this file lowers, else None."""
    matched = loop_operands(k, op)
    if matched is None:
        return None
    kind, mma, a, b = matched
    layout = accumulator_layout(mma, k.block_size, k.tf32)
    if not isinstance(layout, MmaFragments) or a.m_major:
        return None
    size = element_bytes(kind.element)
    per_stage = (a.rows * (a.columns + a.padding) + b.rows * (b.columns + b.padding)) * size
    stages = min(k.mma_stages, (DYNAMIC_SHARED_LIMIT - k.shared_bytes - k.dynamic_shared_bytes) // per_stage)
    return (kind, layout, a, b, stages) if stages >= 2 else None


def loop_operands(k: GpuKernelLowering, op: scf.ForOp) -> tuple[TensorCoreKind, tile.MmaOp, Operand, Operand] | None:
    """(kind, the mma, a, b) when `op` is a k loop of one tensor-core mma on two loads of
    16-byte aligned rows (module docstring), else None."""
    body = op.body.block
    index = body.args[0]
    ops = list(body.ops)
    if len(op.iter_args) != 1 or len(ops) < 2 or static_value(k.values[op.lb]) != 0 or static_value(k.values[op.step]) != 1:
        return None
    mma, yielded = ops[-2], ops[-1]
    if not isinstance(mma, tile.MmaOp) or yielded.operands[0] is not mma.result or mma.acc is not body.args[1]:
        return None
    matched = tensor_core_operands(mma, k.tf32)
    if matched is None:
        return None
    kind, *sources = matched
    if len(ops) != (6 if kind.per_word == 2 else 4):  # two loads (and two widening maps), the mma, the yield
        return None
    size = element_bytes(kind.element)
    chunk = CHUNK_BYTES // size
    operands = []
    for source, k_axis in zip(sources, (-1, -2)):
        load = source.owner
        if not isinstance(load, tile.LoadViewTkoOp) or load.parent_block() is not body:
            return None
        indices = list(load.indices)
        if indices[k_axis] is not index or any(i is index for n, i in enumerate(indices) if n != len(indices) + k_axis):
            return None
        partition = k.values[load.view]
        tile_indices = [None if i is index else k.values[i] for i in indices]
        # b = wᵀ read along k: stage w's rows (n x k), like a's; a read along m: aᵀ's rows (k x m).
        swapped = partition.view.get_strides()[-1] != 1
        k_major, m_major = swapped and k_axis == -2, swapped and k_axis == -1
        if swapped:
            partition, tile_indices = transposed(partition), [*tile_indices[:-2], tile_indices[-1], tile_indices[-2]]
        if not aligned_rows(partition, chunk):
            return None
        # b of TF32 along n is read 4 bytes at a time (no ldmatrix.trans): rows of 8 x (odd) words.
        padding = 2 * chunk if kind.tf32 and k_axis == -2 and not k_major else chunk
        operands.append(Operand(partition, tile_indices, chunk, padding, k_major=k_major, m_major=m_major))
    return kind, mma, *operands


def transposed(partition: Partition) -> Partition:
    """The partition of the same tiles with the last two axes swapped (a view, no copy)."""
    view = partition.view
    *outer_shape, rows, columns = view.get_shape()
    *outer_strides, row_stride, column_stride = view.get_strides()
    swapped = TensorViewType((*outer_shape, columns, rows), view.element_type, (*outer_strides, column_stride, row_stride),
                             view.offset.data)  # fmt: skip
    *lead, tile_rows, tile_columns = partition.tile_shape
    return Partition(partition.buffer, swapped, (*lead, tile_columns, tile_rows))


def tile_origin(k: GpuKernelLowering, operand: Operand, step: SSAValue) -> list[SSAValue]:
    """The first element of the operand's tile at k step `step`."""
    indices = [step if i is None else i for i in operand.indices]
    return [k.mul(i, k.index(t)) for i, t in zip(indices, operand.partition.tile_shape)]


def issue_copies(k: GpuKernelLowering, operand: Operand, step: SSAValue,
                 target: Callable[[SSAValue, SSAValue], SSAValue]) -> None:
    """cp.async of the operand's tile at k step `step`: the chunk at (row, column) of the
    tile to the shared address target(row, column). A chunk outside the view copies 0 bytes
    (cp.async reads nothing of it and zero-fills), so every address is the chunk's own and
    a thread's copies differ by constants where its column is the same in each: rows
    block_size / per_row apart, which the addressing folds into immediates."""
    partition = operand.partition
    origin = tile_origin(k, operand, step)
    extents = k.valid_extents(partition, origin)
    zeros = [k.index(0)] * (len(partition.tile_shape) - 2)
    per_row = operand.columns // operand.chunk
    chunks = operand.rows * per_row
    full, empty = (k.emit(arith.ConstantOp(IntegerAttr(n, i32))) for n in (16, 0))
    same_column = k.block_size % per_row == 0
    if same_column:
        first_row = k.emit(arith.DivUIOp(k.thread, k.index(per_row)))
        first_column = k.mul(k.emit(arith.RemUIOp(k.thread, k.index(per_row))), k.index(operand.chunk))
        first_offset = k.element_offset(partition.view, origin, [*zeros, first_row, first_column])
        row_stride = partition.view.get_strides()[-2]
    for first in range(0, chunks, k.block_size):
        if same_column:
            rows_on = first // per_row
            row, column = k.add(first_row, k.index(rows_on)), first_column
            offset = k.add(first_offset, k.index(rows_on * row_stride))
        else:
            chunk = k.add(k.thread, k.index(first))
            row = k.emit(arith.DivUIOp(chunk, k.index(per_row)))
            column = k.mul(k.emit(arith.RemUIOp(chunk, k.index(per_row))), k.index(operand.chunk))
            offset = k.element_offset(partition.view, origin, [*zeros, row, column])
        inside = k.all_of([k.emit(arith.CmpiOp(row, extents[-2], "ult")), k.emit(arith.CmpiOp(column, extents[-1], "ult"))])
        size = k.emit(arith.SelectOp(inside, full, empty))

        def copy(row=row, column=column, offset=offset, size=size) -> None:
            k.inline_ptx("cp.async.cg.shared.global.16", [target(row, column), address(k, partition.buffer, [offset]), size])

        if chunks - first < k.block_size:
            k.guarded(k.emit(arith.CmpiOp(k.add(k.thread, k.index(first)), k.index(chunks), "ult")), copy)
        else:
            copy()


def stage_target(k: GpuKernelLowering, operand: Operand, stage: SSAValue) -> Callable[[SSAValue, SSAValue], SSAValue]:
    """Shared addresses of the operand's tile in stage `stage` of its padded rows."""
    first_row = k.mul(stage, k.index(operand.rows))
    return lambda row, column: address(k, operand.shared, [k.add(first_row, row), column])


def multiply_stage(k: GpuKernelLowering, layout: MmaFragments, kind: TensorCoreKind, a: Operand, b: Operand,
                   stage: SSAValue, sums: list[SSAValue]) -> list[SSAValue]:
    """The accumulator registers after the k steps of the tiles in shared stage `stage`."""
    warp_row, warp_column, group, thread_in_group = layout.lane_origin(k)
    lane, lane_row, lane_column = ldmatrix_lanes(k, a.chunk)
    a_rows = k.add(k.mul(stage, k.index(a.rows)), k.add(warp_row, lane_row))
    b_first = k.mul(stage, k.index(b.rows))
    sums = list(sums)
    for step in range(a.columns // kind.depth):
        depth = step * kind.depth
        a_fragments = [
            k.inline_ptx("ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                [address(k, a.shared, [k.add(a_rows, k.index(16 * tm)), k.add(lane_column, k.index(depth))])], 4)
            for tm in range(layout.tiles_m)
        ]  # fmt: skip
        if b.k_major:
            b_fragments = k_major_fragments(k, b, layout.tiles_n, k.add(b_first, warp_column), lane, depth)
        elif kind.tf32:
            b_fragments = tf32_b_fragments(k, layout, b, k.add(b_first, k.index(depth)), warp_column, group, thread_in_group)
        else:
            b_fragments = b16_b_fragments(k, layout, b, k.add(k.add(b_first, lane_row), k.index(depth)), warp_column, lane_column)
        if kind.tf32:
            a_fragments = [[to_tf32(k, word) for word in fragment] for fragment in a_fragments]
            b_fragments = [[to_tf32(k, word) for word in fragment] for fragment in b_fragments] if b.k_major else b_fragments
        multiply_fragments(k, layout, kind, a_fragments, b_fragments, sums)
    return sums


def k_major_fragments(k: GpuKernelLowering, b: Operand, tiles: int, first_row: SSAValue, lane: SSAValue,
                      depth: int) -> list[list[SSAValue]]:
    """The b fragments of one instruction step for `tiles` instruction columns from shared
    rows of n (k contiguous, from `first_row`): plain ldmatrix, two columns per x4. Lanes
    0-7 and 16-23 address rows n 0-7 and 8-15 at the step's first k chunk, lanes 8-15 and
    24-31 the same rows at the next chunk (16-bit: k 8-15; TF32: k 4-7)."""
    row = k.add(k.emit(arith.RemUIOp(lane, k.index(8))), k.mul(k.emit(arith.DivUIOp(lane, k.index(16))), k.index(8)))
    half = k.emit(arith.RemUIOp(k.emit(arith.DivUIOp(lane, k.index(8))), k.index(2)))
    column = k.add(k.mul(half, k.index(b.chunk)), k.index(depth))
    fragments = []
    for pair in range(0, tiles, 2):
        at = address(k, b.shared, [k.add(k.add(first_row, row), k.index(8 * pair)), column])
        if pair + 1 < tiles:
            loaded = k.inline_ptx("ldmatrix.sync.aligned.m8n8.x4.shared.b16", [at], 4)
            fragments += [loaded[:2], loaded[2:]]
        else:
            fragments.append(k.inline_ptx("ldmatrix.sync.aligned.m8n8.x2.shared.b16", [at], 2))
    return fragments


def b16_b_fragments(k: GpuKernelLowering, layout: MmaFragments, b: Operand, row: SSAValue, warp_column: SSAValue,
                    lane_column: SSAValue) -> list[list[SSAValue]]:
    """The b fragments of a 16-deep step of 16-bit elements: ldmatrix.trans, two
    instruction columns at a time (lane l gives the address of k row l % 16)."""
    fragments: list[list[SSAValue]] = []
    for tn in range(0, layout.tiles_n, 2):
        column = k.add(warp_column, k.index(8 * tn))
        if tn + 1 < layout.tiles_n:
            at = address(k, b.shared, [row, k.add(column, lane_column)])
            loaded = k.inline_ptx("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", [at], 4)
            fragments += [loaded[:2], loaded[2:]]
        else:
            at = address(k, b.shared, [row, column])
            fragments.append(k.inline_ptx("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", [at], 2))
    return fragments


def tf32_b_fragments(k: GpuKernelLowering, layout: MmaFragments, b: Operand, row: SSAValue, warp_column: SSAValue,
                     group: SSAValue, thread_in_group: SSAValue) -> list[list[SSAValue]]:
    """The b fragments of an 8-deep TF32 step: k rows t and t + 4 at column g of each
    instruction column, read one f32 at a time and rounded to TF32."""
    rows = [k.add(row, thread_in_group), k.add(k.add(row, thread_in_group), k.index(4))]
    fragments = []
    for tn in range(layout.tiles_n):
        column = k.add(k.add(warp_column, group), k.index(8 * tn))
        words = [k.emit(arith.BitcastOp(k.emit(memref.LoadOp.get(b.shared, [r, column])), i32)) for r in rows]
        fragments.append([to_tf32(k, w) for w in words])
    return fragments


def pipelined_loop(k: GpuKernelLowering, op: scf.ForOp) -> bool:
    """Lowers `op` as the pipeline of the module docstring; False (nothing emitted) when it
    is not such a loop."""
    matched = pipelined_operands(k, op)
    if matched is None:
        return False
    kind, layout, a, b, stages = matched
    for operand in (a, b):
        operand.shared = k.shared_alloca([stages * operand.rows, operand.columns + operand.padding], kind.element, dynamic=True)
    start = cell_values(k, k.tile_of(op.iter_args[0]), layout)
    steps = k.values[op.ub]

    def issue(step: SSAValue, stage: SSAValue) -> None:
        def copies() -> None:
            for operand in (a, b):
                issue_copies(k, operand, step, stage_target(k, operand, stage))

        commit_step(k, step, steps, copies)

    for ahead in range(stages - 1):
        issue(k.index(ahead), k.index(ahead))
    block = Block(arg_types=[IndexType(), *(v.type for v in start)])
    outer, k.cursor = k.cursor, block
    step = block.args[0]
    k.inline_ptx(f"cp.async.wait_group.{stages - 2}", [])
    k.barriers.barrier()
    ahead = k.add(step, k.index(stages - 1))
    issue(ahead, k.emit(arith.RemUIOp(ahead, k.index(stages))))
    stage = k.emit(arith.RemUIOp(step, k.index(stages)))
    k.emit(scf.YieldOp(*multiply_stage(k, layout, kind, a, b, stage, list(block.args[1:]))))
    k.cursor = outer
    loop = k.emit(scf.ForOp(k.index(0), steps, k.index(1), start, Region(block)))
    bind_accumulator(k, op, a, b, layout, list(loop.owner.results))
    return True


def commit_step(k: GpuKernelLowering, step: SSAValue, steps: SSAValue, copies: Callable[[], object]) -> None:
    """The copies of k step `step` where there is such a step, then a commit (an empty
    group past the last step keeps the count of groups per step fixed)."""
    k.guarded(k.emit(arith.CmpiOp(step, steps, "ult")), copies)
    k.inline_ptx("cp.async.commit_group", [])


def bind_accumulator(k: GpuKernelLowering, op: scf.ForOp, a: Operand, b: Operand, layout: MmaFragments,
                     registers: list[SSAValue]) -> None:
    """The k loop's result: `registers` in the fragment layout, extents those of a's rows
    and b's columns (n) at the tile's position."""
    rows = k.valid_extents(a.partition, tile_origin(k, a, k.index(0)))[-1 if a.m_major else -2]
    columns = k.valid_extents(b.partition, tile_origin(k, b, k.index(0)))[-2 if b.k_major else -1]
    lead = k.tile_of(op.iter_args[0]).extents[:-2]
    k.values[op.results[0]] = RegisterTile(registers, layout, [*lead, rows, columns])
    k.forget_region_values()

"""A 16-bit matmul's k loop on sm_90's warpgroup tensor cores (`wgmma.mma_async`).

`lower-tile-to-gpu{warpgroup_mma=true}` (the GPU pipeline sets it on sm_90 devices) lowers
the k loop of tensor_core_loop.py here instead when its tiles fit the instruction: bf16 or
f16 operands, a k tile of 64 elements (one 128-byte row), 64 or 128 output rows and at most
256 columns, a contiguous along k, b along n or along k. The kernel then has two threads per
output row: one warpgroup (4 warps, 128 threads) per 64 rows, each warp owning 16 of them.

    %acc = scf.for %kt = 0 to %steps iter_args(%c = %zero) {       (one block of 128 x 128)
      a 128 x 64 and b 64 x 128 tiles -> tile.mma
    }
  becomes, per k step (S stages of shared memory, S - 2 steps of copies in flight):
    cp.async.wait_group S-3; fence.proxy.async.shared::cta; bar.sync
    cp.async copies of step kt + S - 2 into stage (kt + S - 2) % S
    wgmma.fence; 4 x wgmma.mma_async.m64n128k16 (descriptors of stage kt % S); commit
    wgmma.wait_group 1                                (step kt - 1's products are done)

In a persistent matmul (persistent_matmul.py: each block loops over output tiles) the
stages are counted over the block's tiles and the last S - 2 steps of a tile copy the next
tile's first steps instead of nothing: two loops, the steps that copy this tile's and
those that copy the next tile's (cross_tile.py).

The accumulator is `MmaFragments` with every warp on its own 16 rows (the instruction's
register layout is mma.sync's, repeated along n), so the epilogue is tensor_core_loop's.
wgmma reads both operands from shared memory through 64-bit descriptors (start address,
two strides, the swizzle mode), in the 128-byte swizzled layout: a shared row of 128 bytes
holds its eight 16-byte chunks at chunk ^ (row % 8), so the eight rows of an 8 x 128-byte
atom (1024 bytes, 1024-aligned) spread over all banks. K-major tiles (a; b read along k,
`x @ wᵀ`) are rows of 64 k (stride between 8-row groups: 1024 bytes); b along n is N-major:
atoms of 64 n x 8 k, 64-column strips one after the other (LBO, the stride along n) and
8-row groups of k 1024 bytes apart (SBO). An a read along m (the a of aᵀ @ b, every weight
gradient xᵀ @ dy) is M-major the same way (64-row strips of k rows, one per warpgroup): the
instruction's transpose-a bit, no transposed copy of a. cp.async writes through the
generic proxy and wgmma reads through the async one: each thread fences its landed
copies before the barrier.

A warp's wgmma must not read a stage until every thread's copies into it have landed (the
barrier), and a stage is refilled only two steps after its products were issued: the
barrier of step kt follows every warpgroup's `wait_group 1` of step kt - 1, so the products
of step kt - 2 are done. The last wait (0) follows the loop. Measured on an H200 and left
out: the flash kernel's mbarrier stages (stage_barriers.py) in place of the barrier per
step ran 2-10% slower (bf16 3072^3 / 4096^3 / 8192^3: 430 / 667 / 715 TFLOP/s against
478 / 683 / 731): the two warpgroups do the same work in step anyway.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, f32, i32, i64
from xdsl.ir import Block, Region, SSAValue

from strata.dialects import tile
from strata.dialects.tile_types import element_bytes
from strata.lowering.tile_to_gpu.cross_tile import usable_prefetch
from strata.lowering.tile_to_gpu.fragments import MmaFragments, tensor_core_operands
from strata.lowering.tile_to_gpu.kernel import WARPGROUP_SHARED_LIMIT, GpuKernelLowering
from strata.lowering.tile_to_gpu.threads import WARP
from strata.lowering.tile_to_gpu.tensor_core_loop import Operand, bind_accumulator, commit_step, issue_copies, loop_operands
from strata.lowering.tile_to_gpu.tiles import cell_values

K_TILE = 64
"""k elements of a step: one 128-byte swizzled row of 16-bit elements."""
ROW_BYTES = 128
ATOM_BYTES = 8 * ROW_BYTES
"""An 8 x 128-byte swizzle atom: the swizzle's repeat and its alignment."""
ATOM_SLACK = ATOM_BYTES - 16
"""Bytes a 16-aligned buffer may need to skip to its first 1024-aligned atom."""
INSTRUCTION_K = 16
WARPGROUP_ROWS = 64
MAX_COLUMNS = 256
SWIZZLE_128B = 1 << 62
"""The descriptor's swizzle mode field (bits 62-63) for the 128-byte swizzle."""
FRESH_WGMMA = ".fresh"
"""The suffix of a warpgroup mma that starts a sum, d = a @ b, instead of
adding to one: its accumulators are results only, so no zeros are moved into them first
(ptxas reads such moves, between the products of one group and the next, as a use of
registers in flight and injects a wait, C7517)."""


def warpgroup_threads(kernel: tile.KernelOp, tf32: bool = False) -> int | None:
    """The block size of `kernel` if its tile.mma can run as the warpgroup mma (two threads
    per accumulator row; f32 operands as TF32 when `tf32`), else None."""
    mmas = [op for op in kernel.walk() if isinstance(op, tile.MmaOp)]
    if len(mmas) != 1 or not fits(mmas[0], tf32):
        return None
    return 2 * mmas[0].acc.type.get_shape()[-2]


def fits(mma: tile.MmaOp, tf32: bool = False) -> bool:
    """Whether the mma's tiles fit the instruction (module docstring): k tiles of one
    128-byte row (64 16-bit elements, or 32 f32 ones as TF32 where `tf32`)."""
    matched = tensor_core_operands(mma, tf32)
    if matched is None:
        return False
    rows, columns = mma.acc.type.get_shape()[-2:]
    depth = mma.a.type.get_shape()[-1]
    return (rows in (WARPGROUP_ROWS, 2 * WARPGROUP_ROWS) and columns % 8 == 0 and columns <= MAX_COLUMNS
            and depth == ROW_BYTES // element_bytes(matched[0].element))  # fmt: skip


def warpgroup_loop(k: GpuKernelLowering, op: scf.ForOp) -> bool:
    """Lowers `op` as the module docstring says; False (nothing emitted) when it is not
    such a loop or the kernel was not lowered for the warpgroup mma."""
    if not k.warpgroup_mma:
        return False
    matched = loop_operands(k, op)
    if matched is None:
        return False
    kind, mma, a, b = matched
    shape = tuple(mma.acc.type.get_shape())
    rows, columns = shape[-2:]
    if not fits(mma, kind.tf32) or k.block_size != 2 * rows or not (b.k_major or columns % K_TILE == 0):
        return False
    if kind.tf32 and (a.m_major or not b.k_major):  # TF32 operands are read K-major only
        return False
    a_bytes, b_bytes = rows * ROW_BYTES, columns * ROW_BYTES
    stage_bytes = a_bytes + b_bytes
    stages = min(k.mma_stages, (WARPGROUP_SHARED_LIMIT - k.shared_bytes - k.dynamic_shared_bytes - ATOM_SLACK) // stage_bytes)
    if stages < 3:
        return False
    k.warpgroup_mma_used = True
    layout = MmaFragments(shape, k.block_size // WARP, 1)
    steps = k.values[op.ub]
    prefetch = usable_prefetch(k, (a, b), steps, stages)
    if prefetch is None:
        base = atom_aligned_buffer(k, stages * stage_bytes, kind.element)
    else:  # the first tile's copies, before the tile loop, address the stages too
        base = prefetch.before_tile_loop(k, lambda: atom_aligned_buffer(k, stages * stage_bytes, kind.element))

    def stage_base(stage: SSAValue, offset: int) -> SSAValue:
        return k.add(base, k.add(k.mul(stage, k.index(stage_bytes)), k.index(offset)))

    def copies(operands: tuple[Operand, Operand], step: SSAValue, stage: SSAValue) -> Callable[[], None]:
        def issue() -> None:
            tile_a, tile_b = operands
            a_base = stage_base(stage, 0)
            issue_copies(k, tile_a, step, n_major_target(k, a_base, a.rows) if a.m_major else k_major_target(k, a_base, a.chunk))
            b_base = stage_base(stage, a_bytes)
            issue_copies(k, tile_b, step, k_major_target(k, b_base, b.chunk) if b.k_major else n_major_target(k, b_base, b.rows))

        return issue

    if prefetch is None:
        for ahead in range(stages - 2):
            commit_step(k, k.index(ahead), steps, copies((a, b), k.index(ahead), k.index(ahead)))

        def copy_ahead(step: SSAValue) -> None:
            ahead = k.add(step, k.index(stages - 2))
            commit_step(k, ahead, steps, copies((a, b), ahead, k.emit(arith.RemUIOp(ahead, k.index(stages)))))

        segments = [(k.index(0), steps, copy_ahead)]
    else:
        prefetch.issue_first_steps(k, (a, b), stages - 2, copies)
        segments = prefetch.segments(k, (a, b), stages, copies)

    def stage_of(step: SSAValue) -> SSAValue:
        if prefetch is None:
            return k.emit(arith.RemUIOp(step, k.index(stages)))
        return prefetch.stage_of(k, step, stages)

    sums = cell_values(k, k.tile_of(op.iter_args[0]), layout)
    for first, last, copy_ahead in segments:
        block = Block(arg_types=[IndexType(), *(v.type for v in sums)])
        outer, k.cursor = k.cursor, block
        step = block.args[0]
        k.inline_ptx(f"cp.async.wait_group.{stages - 3}", [])
        k.inline_ptx("fence.proxy.async.shared::cta", [])
        k.barriers.barrier()
        copy_ahead(step)
        stage = stage_of(step)
        products = issue_products(k, kind.element, a, b, columns, stage_base(stage, 0), stage_base(stage, a_bytes), list(block.args[1:]))
        k.emit(scf.YieldOp(*wait_for_products(k, 1, products)))
        k.cursor = outer
        sums = list(k.emit(scf.ForOp(first, last, k.index(1), sums, Region(block))).owner.results)
    bind_accumulator(k, op, a, b, layout, wait_for_products(k, 0, sums))
    return True


def atom_aligned_buffer(k: GpuKernelLowering, size: int, element) -> SSAValue:
    """The shared address (index) of `size` bytes of dynamic shared memory from a 1024-aligned
    start (a swizzle atom's alignment), taken from a buffer ATOM_SLACK bytes longer."""
    buffer = k.shared_alloca([(size + ATOM_SLACK) // element_bytes(element)], element, dynamic=True)
    start = k.emit(memref.ExtractAlignedPointerAsIndexOp.get(buffer))
    return k.mul(k.emit(arith.DivUIOp(k.add(start, k.index(ATOM_SLACK)), k.index(ATOM_BYTES))), k.index(ATOM_BYTES))


def k_major_target(k: GpuKernelLowering, tile_base: SSAValue, chunk: int = 8) -> Callable[[SSAValue, SSAValue], SSAValue]:
    """Shared addresses of a K-major tile (rows of 128 bytes of k, `chunk` elements per 16
    bytes): row r at r * 128 bytes, its 16-byte chunk c at c ^ (r % 8)."""

    def target(row: SSAValue, column: SSAValue) -> SSAValue:
        return shared_address(k, k.add(tile_base, swizzled(k, row, column, chunk)))

    return target


def n_major_target(k: GpuKernelLowering, tile_base: SSAValue, rows: int) -> Callable[[SSAValue, SSAValue], SSAValue]:
    """Shared addresses of an N-major b tile (`rows` k rows x n columns): strips of 64
    columns, each k rows of 128 bytes swizzled as in k_major_target."""
    strip_bytes = rows * ROW_BYTES

    def target(row: SSAValue, column: SSAValue) -> SSAValue:
        strip = k.emit(arith.DivUIOp(column, k.index(K_TILE)))
        inside = k.emit(arith.RemUIOp(column, k.index(K_TILE)))
        offset = k.add(k.mul(strip, k.index(strip_bytes)), swizzled(k, row, inside))
        return shared_address(k, k.add(tile_base, offset))

    return target


def swizzled(k: GpuKernelLowering, row: SSAValue, column: SSAValue, per_chunk: int = 8) -> SSAValue:
    """The byte offset of element `column` (a multiple of `per_chunk`, the elements of 16
    bytes) of `row` in 128-byte swizzled rows."""
    chunk = k.emit(arith.DivUIOp(column, k.index(per_chunk)))
    chunk = k.emit(arith.XOrIOp(chunk, k.emit(arith.RemUIOp(row, k.index(8)))))
    return k.add(k.mul(row, k.index(ROW_BYTES)), k.mul(chunk, k.index(16)))


def shared_address(k: GpuKernelLowering, at: SSAValue) -> SSAValue:
    return k.emit(arith.IndexCastOp(at, i32))


def descriptor(k: GpuKernelLowering, at: SSAValue, leading: int, stride: int) -> SSAValue:
    """The wgmma matrix descriptor (i64) of a swizzled tile at shared address `at` (index)."""
    fields = SWIZZLE_128B | (stride >> 4) << 32 | (leading >> 4) << 16
    encoded = k.emit(arith.AndIOp(k.emit(arith.DivUIOp(at, k.index(16))), k.index(0x3FFF)))
    return k.emit(arith.IndexCastOp(k.emit(arith.OrIOp(encoded, k.index(fields))), i64))


def moved_descriptor(k: GpuKernelLowering, base: SSAValue, offset: int) -> SSAValue:
    """The descriptor `base` of a tile `offset` bytes further: one add to its address field
    (address / 16 in bits 0-13), which cannot carry out as every shared address is below
    2^18 bytes; the per-instruction descriptors of a stage then cost an add each instead of
    a divide, a mask and an or."""
    return k.emit(arith.AddiOp(base, k.emit(arith.ConstantOp.from_int_and_width(offset >> 4, i64)))) if offset else base


def stepped_descriptor(k: GpuKernelLowering, at: SSAValue, k_major: bool, rows: int) -> tuple[SSAValue, int]:
    """The descriptor of a swizzled operand's first k16 step at shared address `at`, and the
    bytes from one step to the next (moved_descriptor): K-major, 16 elements (32 bytes)
    along its 128-byte rows; MN-major, 16 k rows further, its strips of 64 columns `rows`
    rows apart."""
    if k_major:
        return descriptor(k, at, 16, ATOM_BYTES), INSTRUCTION_K * 2
    return descriptor(k, at, rows * ROW_BYTES, ATOM_BYTES), INSTRUCTION_K * ROW_BYTES


def issue_products(k: GpuKernelLowering, element, a: Operand, b: Operand, columns: int, a_base: SSAValue,
                   b_base: SSAValue, sums: list[SSAValue]) -> list[SSAValue]:
    """Issues the stage's four k16 products of this thread's warpgroup (64 rows of a) into
    `sums`, one commit group: the accumulator registers they write (wait_for_products)."""
    a_rows = warpgroup_rows(k, a_base)
    instruction = wgmma_instruction(columns, element, a.m_major, not b.k_major)
    a_first, a_step = stepped_descriptor(k, a_rows, not a.m_major, a.rows)  # M-major: the warpgroup's 64 rows are one strip
    b_first, b_step = stepped_descriptor(k, b_base, b.k_major, b.rows)
    k.inline_ptx("wgmma.fence.sync.aligned", [])
    for step in range(K_TILE // INSTRUCTION_K):
        a_descriptor, b_descriptor = moved_descriptor(k, a_first, step * a_step), moved_descriptor(k, b_first, step * b_step)
        sums = k.inline_ptx(instruction, [a_descriptor, b_descriptor, *sums], len(sums), f32)
    k.inline_ptx("wgmma.commit_group.sync.aligned", [])
    return sums


def warpgroup_rows(k: GpuKernelLowering, base: SSAValue) -> SSAValue:
    """The shared address of this thread's warpgroup's 64 rows in a strip of 128-byte rows
    at `base` (warpgroup w's from row 64 w)."""
    warpgroup = k.emit(arith.DivUIOp(k.thread, k.index(4 * WARP)))
    return k.add(base, k.mul(warpgroup, k.index(WARPGROUP_ROWS * ROW_BYTES)))


def wgmma_instruction(columns: int, element, m_major: bool, n_major: bool) -> str:
    """The name of the m64n`columns`k16 product with a M-major and b N-major as asked, or
    for f32 (`tf32`) operands the m64n`columns`k8 TF32 product, K-major both (the NVVM
    translation's INLINE_PTX spells each out)."""
    if str(element) in ("f32", "tf32"):
        return f"wgmma.mma_async.sync.aligned.m64n{columns}k8.f32.tf32.tf32"
    suffix = "".join(name for name, wanted in ((".m_major", m_major), (".n_major", n_major)) if wanted)
    return f"wgmma.mma_async.sync.aligned.m64n{columns}k16.f32.{element}.{element}{suffix}"


def wait_for_products(k: GpuKernelLowering, pending: int, sums: list[SSAValue]) -> list[SSAValue]:
    """wgmma.wait_group `pending` with the accumulators tied through it: their values after
    every product but the newest `pending` groups. The name carries the register count
    (`.x64`), one declaration per arity."""
    return k.inline_ptx(f"wgmma.wait_group.sync.aligned.{pending}.x{len(sums)}", sums, len(sums), f32)


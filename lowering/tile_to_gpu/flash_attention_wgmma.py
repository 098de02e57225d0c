"""graph.attention's flash kernel on sm_90's warpgroup tensor cores (`wgmma.mma_async`).

`lower-tile-to-gpu{warpgroup_mma=true}` lowers every kernel marked `tile.flash_attention`
(flash_attention.py: q/k and v heads of 16 to 256 in steps of 16) here: the same online
softmax in the same registers, with the products on the warpgroup instruction instead of
mma.sync. Heads live in shared memory in whole strips of 64 columns (strips): q kᵀ steps
over q's and k's own columns, p v multiplies whole strips of v, whose padding the copies
write as zeros.
A block of one warpgroup (4 warps, 128 threads) takes 64 queries, or, where the larger head
takes 128 columns or more, two warpgroups take 128, sharing the copies of every k and v
block (half the k and v traffic of 64-query blocks; query_rows); each warpgroup runs the
products of its 64 rows.
The wgmma accumulator repeats mma.sync's fragment layout along n (warp w owns rows
16w .. 16w + 15), so the masking, the online softmax and the output stores are the
mma.sync kernel's own functions. A block's q kᵀ and the previous block's p v are issued
together, one wait each:

    q (64 or 128 x D), k and v blocks (N x D, N x Dv: N = 64 keys in four stages, with
    128 queries and p16 or a producer 128 in three, past strips of 128 64 in three, at 256
    and 256 in two; KeyBlocking) -> shared memory in the 128-byte swizzled layout
    (warpgroup_loop.py): strips of 64 columns, each of rows of 128 bytes, chunk c of row r
    at c ^ (r % 8);
    s = q kᵀ: D / 16 x wgmma m64nNk16 with q's a fragments from registers (read once by
    ldmatrix; past D = 128, and with split p beside a producer, q from a descriptor too,
    K-major) and k from a descriptor (K-major);
    p v: N / 16 x wgmma m64nVk16 per p fragment (V: Dv in strips), p from registers (its
    accumulator fragments are the instruction's a fragments), v from a descriptor
    (N-major: the transpose bit).

    before the blocks: the copies of q and blocks 0, 1, 2 (0, 1 at 256 and 256) are issued
    block 0 (peeled):  wait until block 0 (and q) landed; q -> registers; s0; masked
                       online softmax -> p0
    block j:           wait until block j landed
                       issue s_j = q k_jᵀ, then o += p_{j-1} v_{j-1}
                       wgmma.wait_group 1: s_j done
                       online softmax of s_j -> p_j, corrections
                       wgmma.wait_group 0 (p v done); p_j packed to 16 bits (carried);
                       release block j - 1's stage
                       issue block j + 2's copies (once its stage is released;
                       j + 1 at 256 and 256: two stages)
                       o *= 2^(m - m')
    after the blocks:  o += p v of the last; o / l stored

With tensor maps (lower-tile-to-gpu{tensor_maps=true}, which strata.compile sets on sm_90)
the 128-query blocks of heads in strips of up to 128 take a third warpgroup, the producer:
its first thread copies every block through the maps (tensor_maps.py: one
cp.async.bulk.tensor per strip of q, k or v, already in the swizzled layout, padding and
rows past the keys as zeros) as soon as the block's stage is released, and the two
consumer warpgroups only compute. The producer gives its registers to them (setmaxnreg 24
and 240 from the 168 a thread of three warpgroups starts with). Measured on an H200 (ms at
2 x 8 x 4096, bf16, every thread's copies against the producer's): head 128 p16 0.258 /
0.239, split p 0.330 / 0.310; causal p16 0.159 / 0.151; head 96 causal p16 0.147 / 0.137,
split p 0.180 / 0.164. Left out: the copying thread among the consumers (no producer)
ran slower everywhere (head 128 p16 0.286), a producer beside 64-query blocks (one
warpgroup: a multiprocessor then holds one block instead of three; head 64 causal p16
0.099 / 0.147; 128-query blocks of head 64 with the producer instead: causal p16 0.098 /
0.107, not causal 0.178 / 0.177), more stages beside the producer (five or six of 64 keys
instead of 128-key blocks in three or 64 in four: head 128 p16 0.236 / 0.272, split p
0.310 / 0.344), and past heads of 128 (at 112 / 240 the products are serialized for want of
registers; at 256 causal no change). The maps sit in the kernel's global table; in
constant memory they ran the same.

The stages pass between the threads through mbarriers (stage_barriers.py), not block-wide
barriers: a thread waits only for the copies of the block it uses and for the release of
the stage it refills, so the two warpgroups of a block need not run in step. No product is
in flight across a loop iteration (ptxas would otherwise serialize the wgmma: the tests'
ptxas rejects its C75xx notices). cp.async writes through the generic proxy and wgmma
reads through the async one: each thread fences the landed copies after its wait.

The softmax does not overlap its own warpgroup's p v, although the PTX puts wait_group 0
after it: ptxas schedules that wait (an instruction without register operands) right after
wait_group 1, before the exponentials, so a warpgroup runs its products, then its softmax,
and the overlap is between warpgroups (the other one of a 128-query block, other blocks on
the SM). Forcing the PTX order (a branch on the row sums before the wait, which ptxas does
not move it across) ran slower on an H200: head 128 at 4096 keys 0.251 -> 0.283 ms (p16)
and 0.332 -> 0.345 (split p), causal 0.159 -> 0.169, head 64 causal 0.099 -> 0.102.

Measured on an H200 and left out: FlashAttention-3's ping-pong of the two warpgroups
(named barriers that take turns at issuing the products) ran up to 6% slower at 4096 keys
(with the producer warpgroup too: head 128 p16 0.238 -> 0.243 ms, split p 0.312 -> 0.326,
8192 keys 0.860 -> 0.873; causal heads 96 and 128 within 2%),
deeper pipelines (five or six stages, copies three or four blocks ahead) within ±3%;
copies only one block ahead ran 30% slower. q in registers rather than read by every score
product (with both operands from shared memory a m64n64k16 reads 4 KB in its 32 cycles, all
of shared memory's 128 bytes per cycle, beside the copies and the p v products' v), together
with copy addresses that differ by constants (tensor_core_loop.issue_copies), took head 128
at 4096 keys from 487 to 514 TFLOP/s (p16) and 400 to 417 (split p); carrying p packed
(half its registers with p16) to 536 (p16), and head 64 with causal masks from 255 to 277
(split p). Also left out: o's rescale before the copies' branch rather than after (ptxas
could interleave it with the softmax) ran 549 -> 528 (p16); the copies issued between the
products and their wait (in the shadow of the products; with 128-key blocks then only one
block ahead) 546 -> 517 (p16) and split p within 1%; balanced trees for the row maxima and
sums instead of chains, no change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.lowering.tile_to_gpu.flash_attention import (
    CHUNK,
    KEYS,
    QUERIES,
    Flash,
    FlashAttentionLowering,
    key_rows_view,
    operand,
    rescaled,
    softmax_block,
    store_output,
)
from strata.lowering.tile_to_gpu.flash_blocks import a_fragments, block_loop, constant
from strata.lowering.tile_to_gpu.flash_wgmma_products import packed_p, score_products, value_products, wait_for_older
from strata.lowering.tile_to_gpu.fragments import MmaFragments, ldmatrix_lanes
from strata.lowering.tile_to_gpu.kernel import WARPGROUP_SHARED_LIMIT, GpuKernelLowering, argument_views
from strata.lowering.tile_to_gpu.ops import butterfly
from strata.lowering.tile_to_gpu.stage_barriers import BulkStagePipeline, StagePipeline, barrier_bytes
from strata.lowering.tile_to_gpu.tensor_core_loop import issue_copies
from strata.lowering.tile_to_gpu.tensor_maps import TENSOR_MAPS, BulkCopies, mappable, maps_attribute
from strata.lowering.tile_to_gpu.warpgroup_loop import (
    ATOM_SLACK,
    K_TILE,
    atom_aligned_buffer,
    n_major_target,
    wait_for_products,
    warpgroup_rows,
)

REGISTER_Q_DEPTH = 128
"""The deepest q read into registers once (a_fragments). Deeper q stays in shared memory (its
fragments would take 48 or 64 registers beside o's) and the score products read each
warpgroup's 64 rows of it through descriptors."""
WARPGROUP = 128
PRODUCER_REGISTERS = 24
CONSUMER_REGISTERS = 240
"""Registers a thread of the producer and of the consumer warpgroups keeps (setmaxnreg): the
kernel starts with 168 (a quarter of a multiprocessor has 16384 registers for its three
warps); 2 x 128 x 240 + 128 x 24 fit the 65536."""
SMALLEST_HEAD = 32
"""Heads of 16 keep the mma.sync kernel: in a strip of 64 p v does four times their work
(H200, 2 x 8 x 4096 x 16 causal, split p: 0.089 ms there against 0.100 here)."""


@dataclass(frozen=True)
class KeyBlocking:
    """Keys per block and the shared stages of their k and v (a block's k and v share one).
    `ahead`: blocks between the one whose copies are issued and the one in use: block j's
    copies go into the stage of block j + ahead - stages, which this thread released in
    the step before (ahead ≤ stages - 1); with ahead ≤ stages - 2 the other warpgroup has
    too even when it runs a block behind, otherwise the copies wait for it (no deadlock:
    what either warpgroup waits for, the other issued a block earlier)."""

    keys: int
    stages: int
    ahead: int
    q_in_registers: bool = True
    """q's a fragments read into registers once (a_fragments), else the score products read
    it from shared memory through descriptors, as the k tile."""


NARROW = KeyBlocking(KEYS, stages=4, ahead=2)
WIDE = KeyBlocking(2 * KEYS, stages=3, ahead=2)
WIDE_SHARED_Q = KeyBlocking(2 * KEYS, stages=3, ahead=2, q_in_registers=False)
DEEP_STAGES = 3
"""Past heads of 128 (in strips), as many stages of 64 keys as fit up to three, copies a
block ahead less (key_blocking)."""


class WarpgroupFlashLowering(FlashAttentionLowering):
    """The flash kernel on the warpgroup mma, one warpgroup per 64 queries of a block."""

    bulk: BulkCopies | None = None
    """The tensor maps q, k and v are copied through, where they are (tensor_maps.py)."""

    def __init__(self, kernel, *options, p16: bool = False, tensor_maps: bool = False):
        self.query_rows = query_rows(kernel)
        self.consumers = WARPGROUP * self.query_rows // QUERIES
        head_strips = tuple(map(strips, heads(kernel)))
        # The maps' boxes are the key blocks the kernel takes beside a producer.
        with_producer = key_blocking(self.query_rows, p16, *head_strips, producer=True)
        self.use_tensor_maps = (tensor_maps and self.query_rows == 2 * QUERIES and max(head_strips) <= REGISTER_Q_DEPTH
                                and mappable_operands(kernel, self.query_rows, with_producer.keys))
        self.blocking = with_producer if self.use_tensor_maps else key_blocking(self.query_rows, p16, *head_strips)
        self.block_threads = self.consumers + WARPGROUP * self.use_tensor_maps
        super().__init__(kernel, *options, p16=p16)

    def lower_body(self) -> None:
        self.warpgroup_mma_used = True
        flash, rows = self.flash, self.blocking.keys
        if self.use_tensor_maps:
            self.bulk = BulkCopies(self)
            for (buffer, view), box_rows in ((flash.q, self.query_rows), (flash.k, rows), (flash.v, rows)):
                self.bulk.add(buffer, view, box_rows)
        warpgroup_flash_kernel(self, flash, self.blocking)

    def carry_kernel_attributes(self, function) -> None:
        super().carry_kernel_attributes(function)
        if self.bulk is not None:
            function.attributes[TENSOR_MAPS] = maps_attribute(self.bulk.maps)


def mappable_operands(kernel: tile.KernelOp, query_rows: int, key_rows: int) -> bool:
    """Whether q, k and v can be copied through tensor maps (tensor_maps.mappable) in boxes of
    a block's queries and keys."""
    views = argument_views(kernel)
    q, k_transposed, v = (views.get(a) for a in kernel.body.block.args[:3])
    return None not in (q, k_transposed, v) and all(
        mappable(view, rows) for view, rows in ((q, query_rows), (key_rows_view(k_transposed), key_rows), (v, key_rows))
    )


def heads(kernel: tile.KernelOp) -> tuple[int, int] | None:
    """The q/k and v heads of a marked kernel (None: not as lower-graph-to-tile writes it;
    the mma.sync lowering then says why)."""
    views = argument_views(kernel)
    args = kernel.body.block.args
    if len(args) not in (4, 5) or args[0] not in views or args[2] not in views:
        return None
    return views[args[0]].get_shape()[-1], views[args[2]].get_shape()[-1]


def takes(kernel: tile.KernelOp) -> bool:
    """Whether the marked kernel is this kernel's: the flash kernel's heads (up to 256 in
    steps of 16; Flash.of checks them) from SMALLEST_HEAD, padded to strips."""
    found = heads(kernel)
    return found is not None and min(found) >= SMALLEST_HEAD


def strips(head: int) -> int:
    """A head's columns in shared memory: whole strips of 64 (a head of 80 takes 128). The
    score products step over q's and k's own columns only; p v multiplies v's padding too,
    into accumulator columns that are not stored.

    The copies take whole strips: a chunk past the head copies 0 bytes and zero-fills
    (tensor_core_loop.issue_copies), and a thread's column is the same in each of its
    copies (16 or 8 chunks a row divide the block's threads), so their addresses differ by
    constants. Against copies of the head's own chunks (10 a row at 80: an address per
    copy; dkv spilled 56-136 bytes at heads 80-112) with the padding zeroed once, on an
    H200 (ms at 2 x 8 x 4096, bf16): forward head 48 causal split p 0.134 / 0.118, 112
    causal 0.194 / 0.186 (p16 0.151 / 0.157), 160 causal p16 0.214 / 0.224; backward with
    L head 96 causal 0.577 / 0.552 (p16 0.474 / 0.450), 112 1.131 / 1.083 (p16 0.938 /
    0.876), heads 48 and 80 within 1%.

    Against the mma.sync kernel (H200, 2 x 8 x 4096 causal, bf16, p16, ms): head 32 0.098 /
    0.082, 48 0.122 / 0.096, 80 0.201 / 0.143, 96 0.223 / 0.142, 112 0.283 / 0.151, 240
    0.581 / 0.359; 160 0.408 / 0.213, 192 0.489 / 0.238, q/k 192 with v 128 0.410 / 0.206
    (these three with key_blocking's three stages, in another run)."""
    return -(-head // K_TILE) * K_TILE


def query_rows(kernel: tile.KernelOp) -> int:
    """Queries per block: 128 (two warpgroups sharing every k and v block's copies) where the
    larger head takes 128 columns or more (strips), else 64. Measured on an H200 (TFLOP/s,
    64 against 128 rows): head 64, 1024 keys 193 / 189, 4096 keys 296 / 270, causal 263 /
    242; head 128 (with a block barrier per key block), 4096 keys 233 / 273, causal 209 /
    237; head 256 (two stages of 64 keys) 4096 keys 280 / 351, causal 254 / 328."""
    return 2 * QUERIES if max(map(strips, heads(kernel))) >= 128 else QUERIES


def key_blocking(rows: int, p16: bool, depth: int, width: int, producer: bool = False) -> KeyBlocking:
    """WIDE (128 keys a block) for 128-query blocks with p rounded to 16 bits: half the loop's
    per-block work (o's rescale, the row maxima's shuffles, the waits) per key, 18% fewer
    instructions per key. Measured on an H200 at 4096 keys, head 128 (TFLOP/s, NARROW
    against WIDE): 536 / 549, causal 428 / 442; WIDE with copies one block ahead ran 374.
    p split high + low would not fit beside it in 255 registers with q's 32 (NARROW), but
    does with q read from shared memory beside a producer warpgroup (`producer`: the
    consumers keep 240; WIDE_SHARED_Q). Measured on an H200 with split p (ms, NARROW with
    q in registers against WIDE_SHARED_Q, one run): 2 x 8 x 4096 x 128 0.318 / 0.306,
    causal 0.186 / 0.180, head 96 causal 0.164 / 0.161, 2 x 8 x 8192 x 128 1.176 / 1.161,
    4 x 16 x 2048 x 128 0.343 / 0.330; 1024 keys causal 0.0288 / 0.0297 (the diagonal
    block's masked half is larger). With p16, q from shared memory ran as fast as from
    registers (0.238 / 0.240 ms at 4096 x 128), and 160 or 176 keys a block (q from shared
    memory, two stages of 80 or 88 KiB) slower (0.285 / 0.284).
    Past heads of 128 (depth and width in strips), 64 keys a block in up to DEEP_STAGES
    stages beside q's 128 rows in the 227 KiB of shared memory a block may have: three but
    at 256 and 256 (a 64 KiB stage), two. Measured on an H200 at 2 x 8 x 4096 keys, bf16
    (ms, two stages against three; p16): 160 causal 0.266 / 0.213, 192 causal 0.296 /
    0.238, 192 0.523 / 0.396, q/k 192 v 128 causal 0.267 / 0.206, q/k 256 v 64 causal 0.253
    / 0.199, q/k 64 v 256 0.504 / 0.365. At 256 and 256, 128 queries in two stages against
    64 in three: causal 0.451 / 0.348 ms, not causal 0.824 / 0.639 (p16)."""
    if max(depth, width) > REGISTER_Q_DEPTH:
        stage_bytes = KEYS * (depth + width) * 2
        room = WARPGROUP_SHARED_LIMIT - ATOM_SLACK - barrier_bytes(DEEP_STAGES) - rows * depth * 2
        stages = min(DEEP_STAGES, room // stage_bytes)
        return KeyBlocking(KEYS, stages, stages - 1, q_in_registers=depth <= REGISTER_Q_DEPTH)
    if rows != 2 * QUERIES:
        return NARROW
    return WIDE if p16 else WIDE_SHARED_Q if producer else NARROW


class SwizzledTiles:
    """The kernel's shared memory: q (a block's rows), then the stages of k and v (a key
    block's rows each), each in strips of 64 swizzled columns, from a 1024-aligned base;
    then the stages' mbarriers (StagePipeline)."""

    def __init__(self, k: GpuKernelLowering, element, rows: int, depth: int, width: int, blocking: KeyBlocking):
        self.k = k
        self.q_bytes = rows * depth * 2
        self.k_bytes = blocking.keys * depth * 2
        self.stage_bytes = self.k_bytes + blocking.keys * width * 2
        self.stages = blocking.stages
        barriers_at = self.q_bytes + self.stages * self.stage_bytes
        self.q = atom_aligned_buffer(k, barriers_at + barrier_bytes(self.stages), element)
        self.barriers = k.add(self.q, k.index(barriers_at))

    def keys(self, stage: SSAValue) -> SSAValue:
        return self.k.add(self.q, self.k.add(self.k.index(self.q_bytes), self.k.mul(stage, self.k.index(self.stage_bytes))))

    def values(self, stage: SSAValue) -> SSAValue:
        return self.k.add(self.keys(stage), self.k.index(self.k_bytes))


@dataclass(frozen=True)
class Lanes:
    """What a consumer thread's fragments are at: its warp's first row, its place in its
    quad, its ldmatrix row and column, and its two query rows."""

    warp_row: SSAValue
    thread_in_group: SSAValue
    lane_row: SSAValue
    lane_column: SSAValue
    rows: list[SSAValue]

    @staticmethod
    def of(k: GpuKernelLowering, rows_per_block: int, key_rows: int) -> Lanes:
        query_block = k.program_ids[-1]
        scores = MmaFragments((rows_per_block, key_rows), rows_per_block // 16, 1)
        warp_row, _, group, thread_in_group = scores.lane_origin(k)
        first_row = k.add(k.mul(query_block, k.index(rows_per_block)), k.add(warp_row, group))
        _, lane_row, lane_column = ldmatrix_lanes(k, CHUNK)
        return Lanes(warp_row, thread_in_group, lane_row, lane_column, [first_row, k.add(first_row, k.index(8))])


def warpgroup_flash_kernel(k: GpuKernelLowering, flash: Flash, blocking: KeyBlocking) -> None:
    *batch_ids, query_block = k.program_ids
    element = flash.q[1].element_type
    depth, (keys, width) = flash.q[1].get_shape()[-1], flash.v[1].get_shape()[-2:]
    zero, one = k.index(0), k.index(1)
    key_rows, rows_per_block = blocking.keys, k.query_rows
    tiles = SwizzledTiles(k, element, rows_per_block, strips(depth), strips(width), blocking)
    bulk = k.bulk
    pipeline = (StagePipeline if bulk is None else BulkStagePipeline)(k, tiles.barriers, tiles.stages, k.consumers)

    blocks = k.index(-(-keys // key_rows))
    per_block = rows_per_block // key_rows
    if flash.causal:  # query block b sees key blocks 0 .. (b + 1) per_block - 1
        blocks = k.emit(arith.MinUIOp(k.mul(k.add(query_block, one), k.index(per_block)), blocks))

    def fill(block: SSAValue, copies: Callable[[SSAValue, SSAValue], None], size: int = 0) -> None:
        k.guarded(k.emit(arith.CmpiOp(block, blocks, "ult")), lambda: pipeline.fill(block, copies, size))

    if bulk is None:
        # Every thread copies its chunks; q's copies land with block 0's stage.
        q = operand(k, flash.q, rows_per_block, [*batch_ids, query_block, zero], strips(depth))
        streams = [(operand(k, flash.k, key_rows, [*batch_ids, None, zero], strips(depth)), tiles.keys),
                   (operand(k, flash.v, key_rows, [*batch_ids, None, zero], strips(width)), tiles.values)]

        def copies_of(block: SSAValue) -> Callable[[SSAValue, SSAValue], None]:
            def issue(stage: SSAValue, _full: SSAValue) -> None:
                for stream, stage_base in streams:
                    issue_copies(k, stream, block, n_major_target(k, stage_base(stage), key_rows))

            return issue

        def refill(block: SSAValue) -> None:
            fill(block, copies_of(block))

        lanes = Lanes.of(k, rows_per_block, key_rows)
        pipeline.initialize()
        issue_copies(k, q, zero, n_major_target(k, tiles.q, rows_per_block))
        for block in range(blocking.ahead + 1):  # block j fills j + ahead from j = 1 on
            refill(k.index(block))
        consume(k, flash, blocking, tiles, pipeline, blocks, per_block, refill, lanes)
        return

    pipeline.initialize()
    outer = list(reversed(batch_ids))

    def bulk_copies(block: SSAValue, with_q: bool) -> Callable[[SSAValue, SSAValue], None]:
        def issue(stage: SSAValue, full: SSAValue) -> None:
            if with_q:
                bulk.copy(0, tiles.q, [k.mul(query_block, k.index(rows_per_block)), *outer], depth, full)
            first_key = k.mul(block, k.index(key_rows))
            bulk.copy(1, tiles.keys(stage), [first_key, *outer], depth, full)
            bulk.copy(2, tiles.values(stage), [first_key, *outer], width, full)

        return issue

    def produce() -> None:
        """The producer's copying thread: every block, each once its stage is released."""
        bulk.acquire()
        fill(zero, bulk_copies(zero, True), tiles.stage_bytes + tiles.q_bytes)
        k.loop(k.emit(arith.SubiOp(blocks, one)),
               lambda block: fill(k.add(block, one), bulk_copies(k.add(block, one), False), tiles.stage_bytes))

    def producer() -> None:
        k.inline_ptx(f"setmaxnreg.dec.sync.aligned.u32.{PRODUCER_REGISTERS}", [])
        k.guarded(k.emit(arith.CmpiOp(k.thread, k.index(k.consumers), "eq")), produce)

    def consumer() -> None:
        k.inline_ptx(f"setmaxnreg.inc.sync.aligned.u32.{CONSUMER_REGISTERS}", [])
        consume(k, flash, blocking, tiles, pipeline, blocks, per_block, None, Lanes.of(k, rows_per_block, key_rows))

    # Whole warpgroups take either way (the thread index against a warpgroup boundary).
    k.guarded(k.emit(arith.CmpiOp(k.thread, k.index(k.consumers), "uge")), producer)
    k.guarded(k.emit(arith.CmpiOp(k.thread, k.index(k.consumers), "ult")), consumer)


def consume(k: GpuKernelLowering, flash: Flash, blocking: KeyBlocking, tiles: SwizzledTiles, pipeline: StagePipeline,
            blocks: SSAValue, per_block: int, refill: Callable[[SSAValue], None] | None, lanes: Lanes) -> None:
    """The warpgroups' part of the kernel: the key blocks' products and online softmax
    (module docstring), and where they copy too, refill(block) for the block `ahead`."""
    *batch_ids, query_block = k.program_ids
    element = flash.q[1].element_type
    queries, depth = flash.q[1].get_shape()[-2:]
    keys, width = flash.v[1].get_shape()[-2:]
    zero, one = k.index(0), k.index(1)
    key_rows = blocking.keys
    rows_per_block = k.query_rows
    warp_row, thread_in_group, lane_row, lane_column, rows = (
        lanes.warp_row, lanes.thread_in_group, lanes.lane_row, lanes.lane_column, lanes.rows)
    output = MmaFragments((rows_per_block, strips(width)), rows_per_block // 16, 1)

    def softmax(block: SSAValue, s: list[SSAValue], largest: list[SSAValue], totals: list[SSAValue], masked: bool):
        return softmax_block(k, flash, s, block, rows, thread_in_group, largest, totals, masked, key_rows)

    def scores_of(block: SSAValue) -> list[SSAValue]:
        return score_products(k, element, q_fragments, tiles.keys(pipeline.stage(block)), depth, key_rows, rows_per_block)

    def values_of(block: SSAValue, p: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
        return value_products(k, element, p, tiles.values(pipeline.stage(block)), strips(width), key_rows, acc)

    pipeline.acquire(zero)
    # q read into registers once: with q from a descriptor every score product would read
    # both operands from shared memory, at the limit of its bandwidth (KeyBlocking).
    if blocking.q_in_registers:
        q_fragments = a_fragments(k, n_major_target(k, tiles.q, rows_per_block), k.add(warp_row, lane_row), lane_column, depth)
    else:  # q stays there: this warpgroup's 64 rows of each of its 128-row strips
        q_fragments = warpgroup_rows(k, tiles.q)
    s = wait_for_products(k, 0, scores_of(zero))
    minus_infinity, nothing = constant(k, float("-inf")), constant(k, 0.0)
    largest, totals, p, _ = softmax(zero, s, [minus_infinity] * 2, [nothing] * 2, masked=True)
    p = packed_p(k, element, flash.p16, p)

    def step(block: SSAValue, carried: list[SSAValue], masked: bool) -> list[SSAValue]:
        """Key block `block` (module docstring): carried (m, l, o, p of the block before)."""
        largest, totals, acc, p = carried[:2], carried[2:4], carried[4:-p_words], carried[-p_words:]
        before = k.emit(arith.SubiOp(block, one))
        pipeline.acquire(block)
        s = scores_of(block)
        s, acc = wait_for_older(k, s, values_of(before, p, acc))  # s done; p v runs on beside the softmax
        new_largest, new_totals, p, corrections = softmax(block, s, largest, totals, masked)
        acc = wait_for_products(k, 0, acc)
        # Packed once the products reading the previous p are done: a register a wgmma in
        # flight reads may not be written (ptxas would serialize the products).
        p = packed_p(k, element, flash.p16, p)
        pipeline.release(before)
        if refill is not None:
            refill(k.add(block, k.index(blocking.ahead)))
        return [*new_largest, *new_totals, *rescaled(k, acc, corrections), *p]

    p_words = len(p)
    state = [*largest, *totals] + [nothing] * (4 * output.tiles_n) + p
    unmasked = k.index(keys // key_rows)
    if flash.causal:  # key blocks wholly left of the block's first query
        unmasked = k.emit(arith.MinUIOp(k.mul(query_block, k.index(per_block)), unmasked))
    unmasked = k.emit(arith.MaxUIOp(unmasked, one))
    for lower, upper, masked in ((one, unmasked, False), (unmasked, blocks, True)):
        state = block_loop(k, lower, upper, state, lambda block, carried, masked=masked: step(block, carried, masked))
    last = k.emit(arith.SubiOp(blocks, one))
    p, acc = state[-p_words:], state[4:-p_words]
    acc = wait_for_products(k, 0, values_of(last, p, acc))
    totals = [butterfly(k, total, 4, lambda a, b: k.emit(arith.AddfOp(a, b))) for total in state[2:4]]
    # The accumulator's first width / 2 registers are its columns up to the head (8 a 4).
    store_output(k, flash, acc[: width // 2], state[:2], totals, rows, thread_in_group, batch_ids, queries)

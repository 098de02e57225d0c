"""graph.attention_grad's kernels on sm_90's warpgroup tensor cores (`wgmma.mma_async`).

`lower-tile-to-gpu{warpgroup_mma=true}` lowers the marked stats, dq and dkv kernels
(flash_attention_grad.py) here when every head is the same, 32 to 128, or any up to 256
past 128 (takes): the same blocks
(one warpgroup of 4 warps per 64 resident rows, warp w owning rows 16w .. 16w + 15), the
same score arithmetic and stores, with each product a warpgroup instruction over the
block's 64 rows instead of four warps' mma.sync. dq and dkv have the forward's shape (its
wgmma kernel, flash_attention_wgmma.py): two resident operands, two streamed ones whose
64-row blocks pass through shared stages handed over by mbarriers (stage_barriers.py),
every tile in the 128-byte swizzled layout (whole strips of 64 columns, as the forward):

    dq  (resident q, dout; streamed k, v blocks):
        s = q kᵀ, dp = dout vᵀ        wgmma m64n64k16, b K-major
        ds = p (dp - D)               p = 2^(t - L log2 e), t = scale · log2(e) · s
        dq += ds k                    ds packed as a fragments, k N-major (transpose bit)
    dkv (resident k, v; streamed q, dout blocks, from the diagonal when causal):
        sᵀ = k qᵀ, dpᵀ = v doutᵀ      as above, L and D of each query column
        dv += pᵀ dout, dk += dsᵀ q    pᵀ and dsᵀ packed, dout and q N-major

    per streamed block j:  wait for block j's copies; issue block j + ahead's (into the
                           stage block j - 1 released); the two score products, waited
                           for; p and ds; the sums' products, waited for; release j

In one strip (heads up to 64) the residents' a fragments are read into registers once
(ldmatrix) and the score products take a from them; in two both operands of a score
product come from shared memory (descriptors), as dkv's two [64 x 128] sums hold 128
registers a thread. Each block's products are waited for within the block: overlapping
block j's score products with block j - 1's sums (FlashAttention-3's overlap within a
warpgroup, as the forward does) was measured on an H200 and left out (dq 0.173 -> 0.161
ms, dkv with p16 0.209 -> 0.220 at 2 x 8 x 4096 x 64 causal: a wash, in 40 more
registers). p and ds enter as one 16-bit fragment with `attention_p16`, else as high +
low fragments (flash_blocks.p_fragments). The stats kernel (L and D, where the forward's L is not
shared) runs its score products here too, s = q kᵀ through the online softmax without
p v; the dots kernel and other heads keep the mma.sync kernels.

Heads past 128 keep tiles of 256 columns (tile_columns) and one block an SM (dq: two
resident and two stages of two streamed [64 x 256] tiles, 192 KiB). dq's [64 x 256] sum
takes 128 registers a thread, s and dp 64, which fits; dk's and dv's together would take
256, so dkv is two kernels (graph_to_tile/attention_grad.py): dk, as dkv without dv, and dv
(resident k; streamed q and dout): pᵀ from sᵀ = k qᵀ and L alone, dv += pᵀ dout. There q/k
and v may have different heads (q/k 192 and v 128, as multi-head latent attention has):
each score product steps over its operands' own head, the sums run over whole tiles (the
zeros past a smaller head included) and each output stores its own columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.lowering.tile_to_gpu.flash_attention_grad import (
    BLOCK,
    MAX_HEAD,
    FlashAttentionGradLowering,
    Kernel,
    marked_arguments,
)
from strata.lowering.tile_to_gpu.flash_attention_wgmma import SMALLEST_HEAD, strips
from strata.lowering.tile_to_gpu.flash_blocks import a_fragments, block_loop, constant, online_softmax_rows
from strata.lowering.tile_to_gpu.flash_wgmma_products import packed_p, score_products, value_products
from strata.lowering.tile_to_gpu.stage_barriers import StagePipeline, barrier_bytes
from strata.lowering.tile_to_gpu.tensor_core_loop import Operand, issue_copies
from strata.lowering.tile_to_gpu.warpgroup_loop import atom_aligned_buffer, n_major_target, wait_for_products
from strata.transforms.expand_attention_grad import DEEPEST_FLASH_GRAD_HEAD

HELD_HEAD = 64
"""The largest head whose resident operands' a fragments are held in registers; past it the
score products read them from shared memory (descriptors): dkv's two [64 x 128] sums
take 128 registers a thread already. Measured on an H200 and left out: dq at head 128 with
its fragments held (249 registers) ran 0.266 ms against 0.252 (2 x 8 x 4096 causal)."""


@dataclass(frozen=True)
class Staging:
    """Shared stages of the streamed blocks and how many blocks ahead of the one in use
    their copies are issued (at its start: ahead = stages - 1, into the stage the block
    before released): four stages for heads of 64 (80 KiB with the residents: two blocks
    an SM), two for 128 (96 KiB, two blocks an SM, where four stages would leave one
    warpgroup an SM, its tensor cores idle through every block's score arithmetic).
    Measured on an H200 (2 x 8 x 4096 x 64 causal, split p): copies issued at a block's
    start three ahead rather than at its end two ahead took dq from 0.173 to 0.152 ms and
    dkv from 0.276 to 0.261."""

    stages: int
    ahead: int


STAGING = {64: Staging(4, 3), 128: Staging(2, 1), 256: Staging(2, 1)}
"""The staging of a head's strips (64, 128 or 256 columns; 256: one block an SM)."""
ResidentA = list[list[SSAValue]] | SSAValue
"""A resident tile as the a operand of score products: its a fragments, or its shared address."""
Step = Callable[[SSAValue, list[SSAValue], list[ResidentA], list[SSAValue], bool], list[SSAValue]]
"""body(block, its stage's tile addresses, the residents as a operands, state, masked) -> state."""


def takes(kernel: tile.KernelOp) -> bool:
    """Whether a marked kernel is a stats, dq, dkv, dk or dv kernel whose heads are all the
    same, from the forward's SMALLEST_HEAD to 128, or any up to 256 past 128 (in strips of 64
    to 256 columns, as the forward
    keeps them: the score products step over the head's own columns, the sums' products
    run on whole strips of their b operand, whose padding the copies write as zeros).
    Measured on an H200 (2 x 8 x 4096 causal with L, ms, the mma.sync kernels against
    these; p16): head 48 0.369 / 0.281, 80 0.597 / 0.426, 96 0.698 / 0.450, 112 not causal
    1.559 / 0.876."""
    marked = marked_arguments(kernel)
    if marked is None or marked[0] not in ("stats", "dq", "dkv", "dk", "dv"):
        return False
    heads = {view.get_shape()[-1] for name, (_, view) in marked[1].items() if name not in ("lse", "dots")}
    if max(heads) > MAX_HEAD:  # the mma.sync kernels' limit: any heads, in tiles of the largest
        return max(heads) <= DEEPEST_FLASH_GRAD_HEAD
    return len(heads) == 1 and SMALLEST_HEAD <= min(heads)


class WarpgroupFlashGradLowering(FlashAttentionGradLowering):
    """A marked stats, dq, dkv, dk or dv kernel (takes) lowered as the module docstring's kernel."""

    deepest_head = DEEPEST_FLASH_GRAD_HEAD
    parts = (*FlashAttentionGradLowering.parts, "dk", "dv")

    def lower_body(self) -> None:
        self.warpgroup_mma_used = True
        WarpgroupKernel(self, self.grad).emit()


class WarpgroupKernel(Kernel):
    """The stats, dq and dkv parts on the warpgroup mma; the lanes' layout and the score
    arithmetic are the mma.sync kernel's (a wgmma accumulator repeats its fragments)."""

    def emit(self) -> None:
        {"stats": self.stats, "dq": self.dq}.get(self.grad.part, self.keys_part)()  # dkv, dk, dv

    def tile_columns(self) -> int:
        """The largest head in whole strips (the copies write the chunks past an operand's own
        head as zeros); past 128, four. Measured with ptxas (dkv, 2 x 90 x 192 causal):
        three-strip tiles, whose copies take 24 chunks a row, left the kernel spilling 436
        bytes, in its loop; four, 88."""
        return strips(self.head) if self.head <= MAX_HEAD else DEEPEST_FLASH_GRAD_HEAD

    def streamed_rows(self) -> int:
        """Streamed blocks of BLOCK rows at every head (the stages fit sm_90's shared memory)."""
        return BLOCK

    def pipelined(self, resident_names: tuple[str, ...], stream_names: tuple[str, ...], first: SSAValue,
                  end: SSAValue, ranges: list[tuple[SSAValue, SSAValue, bool]], state: list[SSAValue],
                  body: Step) -> list[SSAValue]:
        """Copies the resident tiles, then streams the blocks first .. end (of the streamed
        operands' `blocks`) through the stages over `ranges` (lower, upper, masked) of them,
        carrying `state` through body. Block `first` is copied even when no block is
        streamed (first = end: a causal dkv block past the queries), clamped to the last
        block, so that the residents' copies land on a barrier."""
        k = self.k
        residents = [self.operand(name, True) for name in resident_names]
        streams = [self.operand(name, False) for name in stream_names]
        staging = STAGING[self.tile_columns()]
        tile_bytes = BLOCK * self.tile_columns() * 2
        stage_bytes = len(streams) * tile_bytes
        barriers_at = (len(residents) + staging.stages * len(streams)) * tile_bytes
        base = atom_aligned_buffer(k, barriers_at + barrier_bytes(staging.stages), self.element)
        pipeline = StagePipeline(k, k.add(base, k.index(barriers_at)), staging.stages)
        count = k.emit(arith.SubiOp(end, first))

        def stage_tiles(stage: SSAValue) -> list[SSAValue]:
            start = k.add(base, k.add(k.index(len(residents) * tile_bytes), k.mul(stage, k.index(stage_bytes))))
            return [k.add(start, k.index(n * tile_bytes)) for n in range(len(streams))]

        def copies(block: SSAValue) -> Callable[[SSAValue, SSAValue], None]:
            def issue(stage: SSAValue, _full: SSAValue) -> None:
                for stream, tile_base in zip(streams, stage_tiles(stage)):
                    issue_copies(k, stream, block, n_major_target(k, tile_base, BLOCK))

            return issue

        def fill(step: SSAValue) -> None:
            k.guarded(k.emit(arith.CmpiOp(step, count, "ult")), lambda: pipeline.fill(step, copies(k.add(first, step))))

        pipeline.initialize()
        resident_tiles = [k.add(base, k.index(n * tile_bytes)) for n in range(len(residents))]
        for resident, tile_base in zip(residents, resident_tiles):
            issue_copies(k, resident, k.index(0), n_major_target(k, tile_base, BLOCK))
        last = k.emit(arith.SubiOp(self.blocks(operand_rows(streams[0])), k.index(1)))
        pipeline.fill(k.index(0), copies(k.emit(arith.MinUIOp(first, last))))
        for ahead in range(1, staging.ahead):
            fill(k.index(ahead))
        pipeline.acquire(k.index(0))
        residents_a = self.resident_a(resident_tiles)

        def streamed(masked: bool) -> Callable[[SSAValue, list[SSAValue]], list[SSAValue]]:
            def step(block: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
                relative = k.emit(arith.SubiOp(block, first))
                pipeline.acquire(relative)
                fill(k.add(relative, k.index(staging.ahead)))
                carried = body(block, stage_tiles(pipeline.stage(relative)), residents_a, carried, masked)
                pipeline.release(relative)
                return carried

            return step

        for lower, upper, masked in ranges:
            state = block_loop(k, lower, upper, state, streamed(masked))
        return state

    def resident_a(self, tiles: list[SSAValue]) -> list[ResidentA]:
        """Per resident tile, the a operand of its score products: its a fragments, read
        into registers once (heads up to HELD_HEAD), or the tile's shared address."""
        if self.tile_columns() > HELD_HEAD:
            return tiles
        return [a_fragments(self.k, n_major_target(self.k, tile_base, BLOCK), self.k.add(self.warp_row, self.lane_row),
                            self.lane_column, self.head) for tile_base in tiles]  # fmt: skip

    def own_head(self, name: str) -> int:
        """The head (row length) of an argument."""
        return self.grad.buffers[name][1].get_shape()[-1]

    def square_products(self, residents_a: list[ResidentA], tiles: list[SSAValue],
                        residents: tuple[str, ...]) -> list[list[SSAValue]]:
        """The [64 x 64] score-like products of each resident (resident_a; `residents` by name)
        with the stage's tile of the same place (resident n with streamed n, transposed), over
        the resident's own head, done."""
        k = self.k
        issued = [score_products(k, self.element, a, tile_base, self.own_head(name), BLOCK)
                  for a, tile_base, name in zip(residents_a, tiles, residents)]  # fmt: skip
        done = wait_for_products(k, 0, [value for products in issued for value in products])
        return [done[n * BLOCK // 2: (n + 1) * BLOCK // 2] for n in range(len(issued))]

    def stats(self) -> None:
        k = self.k
        key_blocks, unmasked = self.key_blocks()
        zero = k.index(0)

        def step(block: SSAValue, tiles: list[SSAValue], q_a, state: list[SSAValue], masked: bool) -> list[SSAValue]:
            t = self.query_scores(self.square_products(q_a, tiles, ("q",))[0], block, masked)
            largest, totals, _, _ = online_softmax_rows(k, t, state[:2], state[2:])
            return [*largest, *totals]

        minus_infinity, nothing = constant(k, float("-inf")), constant(k, 0.0)
        ranges = [(zero, unmasked, False), (unmasked, key_blocks, True)]
        state = [minus_infinity, minus_infinity, nothing, nothing]
        self.store_stats(self.pipelined(("q",), ("k",), zero, key_blocks, ranges, state, step))

    def dq(self) -> None:
        k, grad = self.k, self.grad
        key_blocks, unmasked = self.key_blocks()
        lse, dots = self.row_stats()
        zero = k.index(0)

        def step(block: SSAValue, tiles: list[SSAValue], fragments, sums: list[SSAValue], masked: bool) -> list[SSAValue]:
            s, dp = self.square_products(fragments, tiles, ("q", "dout"))
            ds = packed_p(k, self.element, grad.p16, self.query_terms(s, dp, block, masked, lse, dots)[1])
            return wait_for_products(k, 0, value_products(k, self.element, ds, tiles[0], self.tile_columns(), BLOCK, sums))

        sums = [constant(k, 0.0)] * (self.tile_columns() // 2)
        ranges = [(zero, unmasked, False), (unmasked, key_blocks, True)]
        sums = self.pipelined(("q", "dout"), ("k", "v"), zero, key_blocks, ranges, sums, step)
        self.store("dq", sums[: self.own_head("dq") // 2], grad.scale, grad.queries)

    def keys_part(self) -> None:
        """dkv, dk or dv: the sums of this block's keys over the query blocks (from the
        diagonal when causal), dk += dsᵀ q and dv += pᵀ dout, or one of them."""
        k, grad = self.k, self.grad
        query_blocks = self.blocks(grad.queries)
        first, diagonal_end = k.index(0), None
        if grad.causal:  # from the first query block that sees this block's first key
            first = k.emit(arith.MinUIOp(self.block, query_blocks))
            diagonal_end = k.emit(arith.MinUIOp(k.add(first, k.index(1)), query_blocks))
        summed = {"dkv": ("dk", "dv"), "dk": ("dk",), "dv": ("dv",)}[grad.part]
        columns = self.tile_columns()
        per_sum = columns // 2  # a sum's registers: two columns each

        def step(block: SSAValue, tiles: list[SSAValue], fragments, sums: list[SSAValue], masked: bool) -> list[SSAValue]:
            scores = self.square_products(fragments, tiles, ("k", "v"))
            terms = self.key_terms(scores[0], scores[1] if "dk" in summed else None, block, masked)
            p, ds = (packed_p(k, self.element, grad.p16, values) for values in terms)
            a_words, b_tiles = {"dk": ds, "dv": p}, {"dk": tiles[0], "dv": tiles[1]}
            issued = [value_products(k, self.element, a_words[name], b_tiles[name], columns, BLOCK,
                                     sums[n * per_sum: (n + 1) * per_sum]) for n, name in enumerate(summed)]
            return wait_for_products(k, 0, [value for products in issued for value in products])

        sums = [constant(k, 0.0)] * (len(summed) * per_sum)
        ranges = self.ranges(first, diagonal_end, grad.queries)
        residents = ("k", "v") if "dk" in summed else ("k",)
        sums = self.pipelined(residents, ("q", "dout"), first, query_blocks, ranges, sums, step)
        for n, name in enumerate(summed):  # each sum's first head / 2 registers are its output's columns
            start = n * per_sum
            self.store(name, sums[start: start + self.own_head(name) // 2], grad.scale if name == "dk" else 1.0, grad.keys)


def operand_rows(operand: Operand) -> int:
    """The rows of the view an operand streams blocks of."""
    return operand.partition.view.get_shape()[-2]

"""graph.attention_grad's dq and dkv kernels on sm_90's warpgroup tensor cores (`wgmma.mma_async`).

`lower-tile-to-gpu{warpgroup_mma=true}` lowers the marked dq and dkv kernels
(flash_attention_grad.py) here when every head is 64: the same blocks (one warpgroup of
4 warps per 64 resident rows, warp w owning rows 16w .. 16w + 15), the same score
arithmetic and stores, with each product a warpgroup instruction over the block's 64 rows
instead of four warps' mma.sync. Both kernels have the forward's shape (its wgmma kernel,
flash_attention_wgmma.py): two resident operands read once into a fragments, two streamed
ones whose 64-row blocks pass through four shared stages handed over by mbarriers
(stage_barriers.py), copies two blocks ahead, every tile in the 128-byte swizzled layout:

    dq  (resident q, dout; streamed k, v blocks):
        s = q kᵀ, dp = dout vᵀ        wgmma m64n64k16, a from registers, b K-major
        ds = p (dp - D)               p = 2^(t - L log2 e), t = scale · log2(e) · s
        dq += ds k                    ds packed as a fragments, k N-major (transpose bit)
    dkv (resident k, v; streamed q, dout blocks, from the diagonal when causal):
        sᵀ = k qᵀ, dpᵀ = v doutᵀ      as above, L and D of each query column
        dv += pᵀ dout, dk += dsᵀ q    pᵀ and dsᵀ packed, dout and q N-major

Each block's products are waited for within the block (no product in flight across a loop
iteration: ptxas would serialize the wgmma otherwise). p and ds enter as one 16-bit
fragment with `attention_p16`, else as high + low fragments (flash_blocks.p_fragments).
The stats / dots kernel and heads other than 64 keep the mma.sync kernels.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import DictionaryAttr, StringAttr
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.lowering.tile_to_gpu.flash_attention_grad import (
    ARGUMENTS,
    BLOCK,
    MARK,
    FlashAttentionGradLowering,
    Kernel,
    row_view,
)
from strata.lowering.tile_to_gpu.flash_attention_wgmma import packed_p, score_products, value_products
from strata.lowering.tile_to_gpu.flash_blocks import a_fragments, block_loop, constant
from strata.lowering.tile_to_gpu.stage_barriers import StagePipeline, barrier_bytes
from strata.lowering.tile_to_gpu.tensor_core_loop import Operand, issue_copies
from strata.lowering.tile_to_gpu.warpgroup_loop import atom_aligned_buffer, n_major_target, wait_for_products

HEAD = 64
"""Every head of a kernel taken here: one 128-byte swizzled row of 16-bit elements."""
STAGES = 4
AHEAD = 2
"""Streamed blocks between the one in use and the one whose copies are issued."""
TILE_BYTES = BLOCK * HEAD * 2
Step = Callable[[SSAValue, list[SSAValue], list[list[list[SSAValue]]], list[SSAValue], bool], list[SSAValue]]
"""body(block, its stage's tile addresses, the residents' a fragments, state, masked) -> state."""


def takes(kernel: tile.KernelOp) -> bool:
    """Whether a marked kernel is a dq or dkv kernel whose heads are all HEAD."""
    mark = kernel.attributes[MARK]
    part = mark.data.get("part") if isinstance(mark, DictionaryAttr) else None
    if not (isinstance(part, StringAttr) and part.data in ("dq", "dkv")):
        return False
    views = {op.buffer: row_view(op.result.type) for op in kernel.body.block.ops if isinstance(op, tile.MakeTensorViewOp)}
    args = kernel.body.block.args
    names = ARGUMENTS[part.data]
    return len(args) == len(names) and all(
        arg in views and (name in ("lse", "dots") or views[arg].get_shape()[-1] == HEAD) for name, arg in zip(names, args)
    )


class WarpgroupFlashGradLowering(FlashAttentionGradLowering):
    """A marked dq or dkv kernel (takes) lowered as the module docstring's kernel."""

    def lower_body(self) -> None:
        self.warpgroup_mma_used = True
        WarpgroupKernel(self, self.grad).emit()


class WarpgroupKernel(Kernel):
    """The dq and dkv parts on the warpgroup mma; the lanes' layout and the score
    arithmetic are the mma.sync kernel's (a wgmma accumulator repeats its fragments)."""

    def emit(self) -> None:
        {"dq": self.dq, "dkv": self.dkv}[self.grad.part]()

    def pipelined(self, resident_names: tuple[str, str], stream_names: tuple[str, str], first: SSAValue,
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
        stage_bytes = len(streams) * TILE_BYTES
        barriers_at = (len(residents) + STAGES * len(streams)) * TILE_BYTES
        base = atom_aligned_buffer(k, barriers_at + barrier_bytes(STAGES), self.element)
        pipeline = StagePipeline(k, k.add(base, k.index(barriers_at)), STAGES)
        count = k.emit(arith.SubiOp(end, first))

        def stage_tiles(stage: SSAValue) -> list[SSAValue]:
            start = k.add(base, k.add(k.index(len(residents) * TILE_BYTES), k.mul(stage, k.index(stage_bytes))))
            return [k.add(start, k.index(n * TILE_BYTES)) for n in range(len(streams))]

        def copies(block: SSAValue) -> Callable[[SSAValue], None]:
            def issue(stage: SSAValue) -> None:
                for stream, tile_base in zip(streams, stage_tiles(stage)):
                    issue_copies(k, stream, block, n_major_target(k, tile_base, BLOCK))

            return issue

        def fill(step: SSAValue) -> None:
            k.guarded(k.emit(arith.CmpiOp(step, count, "ult")), lambda: pipeline.fill(step, copies(k.add(first, step))))

        pipeline.initialize()
        resident_tiles = [k.add(base, k.index(n * TILE_BYTES)) for n in range(len(residents))]
        for resident, tile_base in zip(residents, resident_tiles):
            issue_copies(k, resident, k.index(0), n_major_target(k, tile_base, BLOCK))
        last = k.emit(arith.SubiOp(self.blocks(operand_rows(streams[0])), k.index(1)))
        pipeline.fill(k.index(0), copies(k.emit(arith.MinUIOp(first, last))))
        for ahead in range(1, AHEAD):
            fill(k.index(ahead))
        pipeline.acquire(k.index(0))
        fragments = [a_fragments(k, n_major_target(k, tile_base, BLOCK), k.add(self.warp_row, self.lane_row),
                                 self.lane_column, HEAD) for tile_base in resident_tiles]  # fmt: skip

        def streamed(masked: bool) -> Callable[[SSAValue, list[SSAValue]], list[SSAValue]]:
            def step(block: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
                relative = k.emit(arith.SubiOp(block, first))
                pipeline.acquire(relative)
                carried = body(block, stage_tiles(pipeline.stage(relative)), fragments, carried, masked)
                pipeline.release(relative)
                fill(k.add(relative, k.index(AHEAD)))
                return carried

            return step

        for lower, upper, masked in ranges:
            state = block_loop(k, lower, upper, state, streamed(masked))
        # Every product is waited for in its block, but ptxas does not see that through three
        # loops' merged results and would inject a wait of its own (C7517): an empty one here.
        return wait_for_products(k, 0, state)

    def square_products(self, fragments: list[list[list[SSAValue]]], tiles: list[SSAValue]) -> tuple[list[SSAValue], ...]:
        """The two [64 x 64] score-like products of the residents' fragments with the
        stage's tiles (resident n with streamed n, transposed), done."""
        k = self.k
        issued = [score_products(k, self.element, a, tile_base, HEAD, BLOCK) for a, tile_base in zip(fragments, tiles)]
        done = wait_for_products(k, 0, [value for products in issued for value in products])
        return done[: len(issued[0])], done[len(issued[0]):]

    def dq(self) -> None:
        k, grad = self.k, self.grad
        key_blocks, unmasked = self.key_blocks()
        lse, dots = self.row_stats()
        zero = k.index(0)

        def step(block: SSAValue, tiles: list[SSAValue], fragments, sums: list[SSAValue], masked: bool) -> list[SSAValue]:
            s, dp = self.square_products(fragments, tiles)
            ds = packed_p(k, self.element, grad.p16, self.query_terms(s, dp, block, masked, lse, dots)[1])
            return wait_for_products(k, 0, value_products(k, self.element, ds, tiles[0], HEAD, BLOCK, sums))

        sums = [constant(k, 0.0)] * (HEAD // 2)
        ranges = [(zero, unmasked, False), (unmasked, key_blocks, True)]
        sums = self.pipelined(("q", "dout"), ("k", "v"), zero, key_blocks, ranges, sums, step)
        self.store("dq", sums, grad.scale, grad.queries)

    def dkv(self) -> None:
        k, grad = self.k, self.grad
        query_blocks = self.blocks(grad.queries)
        first, diagonal_end = k.index(0), None
        if grad.causal:  # from the first query block that sees this block's first key
            first = k.emit(arith.MinUIOp(self.block, query_blocks))
            diagonal_end = k.emit(arith.MinUIOp(k.add(first, k.index(1)), query_blocks))
        half = HEAD // 2

        def step(block: SSAValue, tiles: list[SSAValue], fragments, sums: list[SSAValue], masked: bool) -> list[SSAValue]:
            s, dp = self.square_products(fragments, tiles)
            p, ds = (packed_p(k, self.element, grad.p16, terms) for terms in self.key_terms(s, dp, block, masked))
            dk = value_products(k, self.element, ds, tiles[0], HEAD, BLOCK, sums[:half])
            dv = value_products(k, self.element, p, tiles[1], HEAD, BLOCK, sums[half:])
            return wait_for_products(k, 0, [*dk, *dv])

        sums = [constant(k, 0.0)] * (2 * half)
        ranges = self.ranges(first, diagonal_end, grad.queries)
        sums = self.pipelined(("k", "v"), ("q", "dout"), first, query_blocks, ranges, sums, step)
        self.store("dk", sums[:half], grad.scale, grad.keys)
        self.store("dv", sums[half:], 1.0, grad.keys)


def operand_rows(operand: Operand) -> int:
    """The rows of the view an operand streams blocks of."""
    return operand.partition.view.get_shape()[-2]

"""Persistent warpgroup matmuls: each block runs output tiles one after another.

A block that runs one output tile starts by waiting for its first copies and ends with
its epilogue, the tensor cores idle in both. GPT-2's matmuls have k = 768, 12 steps of 64,
so these weigh: 8192 x 768 x 3072 ran at 0.60 of cuBLAS. Here the runtime launches as
many blocks as are resident at once (at most one per tile) and each loops over the tiles
t = first, first + blocks, ... (the same grouped order as one block per tile), its k loop
issuing the next tile's first copies during this tile's last steps (cross_tile.py):

    func.func @mm(..., %begin: index, %end: index) attributes {gpu.persistent, ...} {
      %first = %begin + ctaid.x
      <program ids of %first; cp.async of its k steps 0 .. S - 3>
      scf.for %t = %first to %end step %nctaid iter_args(%done = %c0) {
        <program ids of %t and of %t + %nctaid>
        <k loop: stage (%done + kt) % S; past the last step, the next tile's copies>
        <epilogue>
        bar.sync
        scf.yield %done + steps
      }
    }

The barrier that ends each tile lets no warp issue copies for the next tile while another
still reads a stage of this one, whatever path the k loop took (cross_tile.py's schedule
needs none: its step barriers order the stages). Where the k loop could not take the
schedule (one k step; operands the warpgroup mma does not read, which go to mma.sync) the
function is not marked: launched with a block per tile, its tile loop runs once.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, UnitAttr
from xdsl.ir import Block, Region, SSAValue

from strata.dialects import tile
from strata.lowering.tile_to_gpu.cross_tile import CrossTilePrefetch
from strata.lowering.tile_to_gpu.kernel import GpuKernelLowering
from strata.lowering.tile_to_gpu.threads import RegionValues

PERSISTENT = "gpu.persistent"
"""A kernel function attribute: launch at most as many blocks as are resident at once;
the kernel loops over the tile grid (begin + ctaid.x, step nctaid.x)."""


def takes(kernel: tile.KernelOp) -> bool:
    """Whether `kernel` is a matmul whose tiles can run persistently: one mma in a k loop
    at the top of the body whose loads are indexed by the loop, program ids and constants
    (the next tile's copies are addressed with its program ids)."""
    loops = [op for op in kernel.body.block.ops if isinstance(op, scf.ForOp)]
    mmas = [op for op in kernel.walk() if isinstance(op, tile.MmaOp)]
    if len(loops) != 1 or len(mmas) != 1 or mmas[0].parent_op() is not loops[0]:
        return False
    step = loops[0].body.block.args[0]
    loads = [op for op in loops[0].body.block.ops if isinstance(op, tile.LoadViewTkoOp)]
    return all(i is step or isinstance(i.owner, tile.ProgramIdOp | arith.ConstantOp) for load in loads for i in load.indices)


class PersistentMatmulLowering(GpuKernelLowering):
    """A warpgroup matmul kernel whose blocks loop over its tiles (module docstring)."""

    def lower(self) -> func.FuncOp:
        """The function, marked persistent where its k loop took the cross-tile schedule;
        otherwise it is launched with a block per tile and its tile loop runs once."""
        function = super().lower()
        if self.cross_tile.steps:
            function.attributes[PERSISTENT] = UnitAttr()
        return function

    def lower_tiles(self, block: SSAValue, end: SSAValue) -> None:
        blocks = self.special_register("nctaid.x")
        first_ids = self.program_ids_at(block)
        first_valid = self.emit(arith.CmpiOp(block, end, "ult"))
        before_loop = self.cursor
        body = Block(arg_types=[IndexType(), IndexType()])
        position, done = body.args
        outer, self.cursor = self.cursor, body
        outer_region, self.region = self.region, RegionValues()
        entry = self.barriers.enter_loop()
        self.bind_program_ids(position)
        following = self.add(position, blocks)
        self.cross_tile = CrossTilePrefetch(
            done, self.program_ids, self.program_ids_at(following), self.emit(arith.CmpiOp(following, end, "ult")),
            before_loop, first_ids, first_valid,
        )  # fmt: skip
        self.lower_body()
        self.barriers.barrier()
        self.barriers.end_loop_body()
        self.emit(scf.YieldOp(self.add(done, self.index(self.cross_tile.steps))))
        self.cursor, self.region = outer, outer_region
        self.emit(scf.ForOp(block, end, blocks, [self.index(0)], Region(body)))
        self.barriers.leave_loop(entry, always_runs=False)

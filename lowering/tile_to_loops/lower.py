"""`lower-tile-to-loops` (CPU): every tile.kernel becomes a func.func of scf loop nests.

Before:

    tile.kernel @k(%a: memref<35xf32>, %c: memref<35xf32>) attributes {grid = array<i64: 2, 1>} {
      ... %x = tile.load_view_tko ... %y = tile.map %x {...} ... tile.store_view_tko %y ...
    }

After: one function per kernel, called by the runtime on a range [begin, end) of the
flattened grid (the runtime splits the grid across threads: see runtime/cpu.py):

    func.func @k(%a: memref<35xf32>, %c: memref<35xf32>, %begin: index, %end: index) -> i32
        attributes {tile.grid = array<i64: 2, 1>} {
      scf.for %g = %begin to %end step %c1 {
        // grid position from %g; valid extent of the edge tile: min(tile, size - origin)
        scf.for %i = %c0 to %rows step %c1 {
          scf.for %j = %c0 to %cols step %c1 {
            %e = memref.load %a[...] ... <map body> ... memref.store %r, %c[...]
      ...
      func.return %c0_i32 : i32
    }

Tiles are not materialized unless they must be: a store evaluates the tile expression
(loads, map bodies, broadcasts) element by element inside one loop nest, so a fused
elementwise kernel reads each input once. Reductions, mma accumulators and tiles used
twice live in stack buffers (`memref.alloca`, no heap allocation). Loops run over each
tile's valid extent, so edge tiles need no masks. Tokens impose no extra order on the CPU:
loops execute in program order, which every token order respects.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from strata.dialects import tile
# ops and mma are imported for their registrations in LOWERINGS.
from strata.lowering.tile_to_loops import mma, ops  # noqa: F401
from strata.lowering.tile_to_loops.kernel import KernelLowering


@dataclass(frozen=True)
class LowerTileToLoopsPass(ModulePass):
    """Replace every tile.kernel by a loop-nest function (see module docstring)."""

    name = "lower-tile-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.ops if isinstance(k, tile.KernelOp)]:
            function = KernelLowering(kernel).lower()
            op.body.block.insert_op_after(function, kernel)
            op.body.block.erase_op(kernel)

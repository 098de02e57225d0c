"""`lower-graph-to-tile`: every graph function becomes a program of tile kernels.

Before (graph):

    func.func @f(%x: tensor<7x5xf32>, %b: tensor<5xf32>) -> tensor<7x5xf32> {
      %0 = graph.add %x, %b : (tensor<7x5xf32>, tensor<5xf32>) -> tensor<7x5xf32>
      func.return %0 : tensor<7x5xf32>
    }

After (tile): the function takes and returns flat buffers, declares one `tile.buffer`
per intermediate and launches one kernel per op; broadcasting is a stride-0 view:

    tile.kernel @f_add_0(%a: memref<35xf32>, %b: memref<5xf32>, %c: memref<35xf32>)
        attributes {grid = array<i64: 1, 1>} { ... tile.load_view_tko / tile.map / tile.store_view_tko ... }
    func.func @f(%x: memref<35xf32>, %b: memref<5xf32>) -> memref<35xf32> {
      %0 = tile.buffer : memref<35xf32>
      tile.launch @f_add_0(%x, %b, %0) : memref<35xf32>, memref<5xf32>, memref<35xf32>
      func.return %0 : memref<35xf32>
    }

Each op's lowering is registered in the per-op registry (`op_info(op).tile_lowering`) by
its family's module, imported here: elementwise ops and fused groups (elementwise.py),
constants and shape ops (layout.py), matmul (matmul.py), embedding and dropout
(indexed.py), reductions (reductions.py), row ops (rows.py), cross-entropy
(cross_entropy.py), attention (attention.py) and its gradient (attention_grad.py). An op
without one is reported, never skipped. Tile shapes come from `TileCostModel`,
overridable by the pass options.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

# Imported for their registrations in the op registry.
from strata.lowering.graph_to_tile import (  # noqa: F401
    attention,
    attention_grad,
    cross_entropy,
    elementwise,
    indexed,
    layout,
    matmul,
    reductions,
    rows,
)
from strata.lowering.graph_to_tile.layout import place_concat_inputs
from strata.lowering.graph_to_tile.program import is_graph_function, lower_function
from strata.lowering.tile_builder import TileCostModel


@dataclass(frozen=True)
class LowerGraphToTilePass(ModulePass):
    """Lower every graph function to a program of tile kernels (see module docstring)."""

    name = "lower-graph-to-tile"

    tile_elements: int = TileCostModel.elements
    matmul_m: int = TileCostModel.matmul_m
    matmul_n: int = TileCostModel.matmul_n
    matmul_k: int = TileCostModel.matmul_k
    dot_k: int = TileCostModel.dot_k
    matmul_bytes: int = TileCostModel.matmul_bytes
    matmul_min_tiles: int = TileCostModel.matmul_min_tiles
    pretranspose_rows: int = TileCostModel.pretranspose_rows
    matmul_16bit_scale: int = TileCostModel.matmul_16bit_scale
    matmul_16bit_k: int = TileCostModel.matmul_16bit_k
    matmul_16bit_n: int = TileCostModel.matmul_16bit_n
    flash_attention: bool = TileCostModel.flash_attention
    fused_attention: bool = TileCostModel.fused_attention
    resident_row_bytes: int = TileCostModel.resident_row_bytes
    matmul_tf32: bool = TileCostModel.matmul_tf32
    flash_grad_head: int = TileCostModel.flash_grad_head

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cost = TileCostModel(
            self.tile_elements, self.matmul_m, self.matmul_n, self.matmul_k, self.dot_k, self.matmul_bytes,
            self.matmul_min_tiles, self.pretranspose_rows, self.matmul_16bit_scale, self.matmul_16bit_k,
            self.matmul_16bit_n, self.flash_attention, self.fused_attention, self.resident_row_bytes, self.matmul_tf32,
            self.flash_grad_head,
        )
        for function in [f for f in op.ops if is_graph_function(f)]:
            program = lower_function(function, op, cost, place_concat_inputs)
            op.body.block.insert_op_after(program, function)
            op.body.block.erase_op(function)

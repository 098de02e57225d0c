"""The `tile` dialect: kernels over a grid of tiles, modelled on NVIDIA CUDA Tile IR.

A program-level `func.func` declares buffers (`tile.buffer`) and runs kernels on them
(`tile.launch`). A `tile.kernel` runs once per point of its grid; each instance reads its
position (`tile.program_id`), views buffers as strided tensors cut into tiles
(`tile.make_tensor_view`, `tile.make_partition_view`), loads and stores tiles in token
order (`tile.load_view_tko`, `tile.store_view_tko`), gathers rows (`tile.gather`) and
adds into rows (`tile.scatter_add_tko`), and computes on whole tiles (`tile.map`,
`tile.reduce`, `tile.broadcast`, `tile.mma`).

Edge tiles are partial: a tile loaded at the edge of its view holds only the elements
inside the view (its *valid extent*); every tile op computes over the valid extent and a
store writes exactly it, so no padding value is ever observed.

    tile.kernel @add(%a: memref<32xf32>, %b: memref<32xf32>) attributes {grid = array<i64: 4>} {
      %i = tile.program_id 0 : index
      %v = tile.make_tensor_view %a : memref<32xf32> -> !tile.tensor_view<32xf32, strides [1], offset 0>
      %p = tile.make_partition_view %v : ... -> !tile.partition_view<8, !tile.tensor_view<...>>
      %t0 = token.make : !token.token
      %x, %t1 = tile.load_view_tko %p[%i] token %t0 : ... -> !tile.tile<8xf32>
      %y = tile.map %x : (!tile.tile<8xf32>) -> !tile.tile<8xf32> {
      ^bb0(%e: f32):
        %r = arith.addf %e, %e : f32
        tile.yield %r : f32
      }
      %t2 = tile.store_view_tko %y, %p[%i] token %t1 : ...
      tile.return
    }
"""

from xdsl.ir import Dialect

from strata.dialects.tile_compute import (
    REDUCTION_KINDS,
    BroadcastOp,
    CheckOp,
    IotaOp,
    MapOp,
    MmaOp,
    ReduceOp,
    YieldOp,
)
from strata.dialects.tile_memory import (
    GatherOp,
    LoadViewTkoOp,
    MakePartitionViewOp,
    MakeTensorViewOp,
    ScatterAddTkoOp,
    StoreViewTkoOp,
    TokenOrderedAccess,
)
from strata.dialects.tile_program import BufferOp, KernelOp, LaunchOp, ProgramIdOp, ReturnOp
from strata.dialects.tile_types import KERNEL_BYTE_BUDGET, PartitionViewType, TensorViewType, TileType


Tile = Dialect(
    "tile",
    [KernelOp, ReturnOp, ProgramIdOp, MakeTensorViewOp, MakePartitionViewOp, LoadViewTkoOp,
     StoreViewTkoOp, ScatterAddTkoOp, MapOp, YieldOp, IotaOp, CheckOp, GatherOp, ReduceOp, BroadcastOp, MmaOp, BufferOp, LaunchOp],
    [TileType, TensorViewType, PartitionViewType],
)  # fmt: skip

__all__ = [
    "KERNEL_BYTE_BUDGET",
    "REDUCTION_KINDS",
    "BroadcastOp",
    "BufferOp",
    "CheckOp",
    "GatherOp",
    "IotaOp",
    "KernelOp",
    "LaunchOp",
    "LoadViewTkoOp",
    "MakePartitionViewOp",
    "MakeTensorViewOp",
    "MapOp",
    "MmaOp",
    "PartitionViewType",
    "ProgramIdOp",
    "ReduceOp",
    "ReturnOp",
    "ScatterAddTkoOp",
    "StoreViewTkoOp",
    "TensorViewType",
    "Tile",
    "TileType",
    "TokenOrderedAccess",
    "YieldOp",
]

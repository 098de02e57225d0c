// RUN: strata-opt %s --split-input-file --verify-diagnostics | filecheck %s
//
// Invalid tile- and token-dialect IR: one split-input-file chunk per verifier rule of
// dialects/tile_types.py (TileType / TensorViewType / PartitionViewType.verify),
// dialects/tile_{program,memory,compute}.py (each op's verify_ and constraints) and dialects/token.py. Every chunk
// must produce exactly the diagnostic its CHECK line names; each CHECK matches only its
// own chunk's diagnostic. Type errors are raised while the type is parsed, so their
// diagnostic is the bare message (no location, no op name).

// ============================================================================================
// !tile.tile (TileType.verify): rank 1..8, power-of-two dims up to 4096, at most 64 KiB.
// ============================================================================================

// TileType: rank 0 (a scalar) is not a tile.
// CHECK: tile rank must be 1..8, got 0: use a rank-1 tile of size 1 for scalars
func.func @tile_rank0(%t: !tile.tile<f32>) {
  func.return
}

// -----

// TileType: rank over MAX_TILE_RANK (8, the graph level's limit).
// CHECK: tile rank must be 1..8, got 9: use a rank-1 tile of size 1 for scalars
func.func @tile_rank9(%t: !tile.tile<1x1x2x1x1x1x1x1x1xf32>) {
  func.return
}

// -----

// TileType: a dimension that is not a power of two; the advice is to round it up (a 7x5
// tensor takes 8x8 tiles, loads pad and stores mask the edge).
// CHECK: tile dimension 5 in [8, 5] is not a power of two: round it up and let loads pad / stores mask the edge
func.func @tile_not_pow2(%t: !tile.tile<8x5xf32>) {
  func.return
}

// -----

// TileType: a zero dimension is not a power of two either.
// CHECK: tile dimension 0 in [0, 16] is not a power of two: round it up
func.func @tile_zero_dim(%t: !tile.tile<0x16xf32>) {
  func.return
}

// -----

// TileType: a dimension over MAX_TILE_DIM (4096), even though the tile fits in 64 KiB.
// CHECK: tile dimension 8192 exceeds 4096: loop over several tiles instead
func.func @tile_dim_too_big(%t: !tile.tile<8192xi8>) {
  func.return
}

// -----

// TileType: over MAX_TILE_BYTES (131072): 256 * 256 f32 elements take 262144 bytes.
// CHECK: tile [256, 256] of f32 takes 262144 bytes, over the 131072-byte limit: use smaller tile dimensions
func.func @tile_too_many_bytes(%t: !tile.tile<256x256xf32>) {
  func.return
}

// -----

// ============================================================================================
// !tile.tensor_view (TensorViewType.verify): one stride per dim, no negative strides/offset.
// ============================================================================================

// TensorViewType: stride count differs from the rank.
// CHECK: tensor_view has 2 dims but 1 strides
func.func @view_stride_count(%v: !tile.tensor_view<4x8xf32, strides [1], offset 0>) {
  func.return
}

// -----

// TensorViewType: a negative stride.
// CHECK: tensor_view strides [-8, 1] must be non-negative
func.func @view_negative_stride(%v: !tile.tensor_view<4x8xf32, strides [-8, 1], offset 0>) {
  func.return
}

// -----

// TensorViewType: a negative offset.
// CHECK: tensor_view offset -4 must be non-negative
func.func @view_negative_offset(%v: !tile.tensor_view<4x8xf32, strides [8, 1], offset -4>) {
  func.return
}

// -----

// ============================================================================================
// !tile.partition_view (PartitionViewType.verify): tile rank = view rank, tile shape valid.
// ============================================================================================

// PartitionViewType: a rank-1 tile shape over a rank-2 tensor_view.
// CHECK: partition_view tile rank 1 differs from its tensor_view rank 2
func.func @partition_rank(%p: !tile.partition_view<16, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>) {
  func.return
}

// -----

// PartitionViewType: its tile shape must itself be a valid tile (4x6 is not a power of two).
// CHECK: tile dimension 6 in [4, 6] is not a power of two
func.func @partition_tile_shape(%p: !tile.partition_view<4x6, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>) {
  func.return
}

// -----

// ============================================================================================
// tile.kernel (KernelOp.verify_): non-empty positive grid, block arguments = function_type
// inputs with no results, all tiles of one instance within the 1 MiB on-chip budget.
// ============================================================================================

// KernelOp: an empty grid.
// CHECK: error: 'tile.kernel' @empty_grid: grid [] must be non-empty and positive
tile.kernel @empty_grid(%a: memref<64xf32>) attributes {grid = array<i64>} {
  tile.return
}

// -----

// KernelOp: a grid with a zero extent.
// CHECK: error: 'tile.kernel' @zero_grid: grid [4, 0] must be non-empty and positive
tile.kernel @zero_grid(%a: memref<64xf32>) attributes {grid = array<i64: 4, 0>} {
  tile.return
}

// -----

// KernelOp: block arguments differ from function_type's inputs (generic form; the custom
// form derives function_type from the arguments).
// (The message lists the block argument types as Python reprs, not IR syntax; only the
// rest is pinned.)
// CHECK: error: 'tile.kernel' @args_mismatch: block arguments
// CHECK-SAME: must match function_type (memref<64xf32>) -> ()
"tile.kernel"() <{sym_name = "args_mismatch", function_type = (memref<64xf32>) -> (), grid = array<i64: 1>}> ({
^bb0(%a: memref<32xf32>):
  "tile.return"() : () -> ()
}) : () -> ()

// -----

// KernelOp: function_type with a result (a kernel writes its buffers instead).
// CHECK: error: 'tile.kernel' @has_result: a kernel has no results
"tile.kernel"() <{sym_name = "has_result", function_type = (memref<64xf32>) -> f32, grid = array<i64: 1>}> ({
^bb0(%a: memref<64xf32>):
  "tile.return"() : () -> ()
}) : () -> ()

// -----

// KernelOp: seventeen 64 KiB tiles (each within MAX_TILE_BYTES) take 1114112 bytes, over
// the 1048576-byte kernel budget.
// CHECK: error: 'tile.kernel' @over_budget: its tiles take 1114112 bytes, over the 1048576-byte on-chip budget: use smaller tiles
tile.kernel @over_budget(%a: memref<64xf32>) attributes {grid = array<i64: 1>} {
  %t0 = tile.map : () -> !tile.tile<128x128xf32> {
    %z = arith.constant 0.000000e+00 : f32
    tile.yield %z : f32
  }
  %t1 = tile.map %t0 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t2 = tile.map %t1 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t3 = tile.map %t2 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t4 = tile.map %t3 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t5 = tile.map %t4 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t6 = tile.map %t5 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t7 = tile.map %t6 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t8 = tile.map %t7 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t9 = tile.map %t8 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t10 = tile.map %t9 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t11 = tile.map %t10 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t12 = tile.map %t11 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t13 = tile.map %t12 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t14 = tile.map %t13 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t15 = tile.map %t14 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  %t16 = tile.map %t15 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xf32> {
  ^bb0(%e: f32):
    tile.yield %e : f32
  }
  tile.return
}

// -----

// ReturnOp (HasParent): tile.return only ends a tile.kernel body.
// CHECK: error: 'tile.return' expects parent op 'tile.kernel'
func.func @return_outside() {
  tile.return
}

// -----

// ============================================================================================
// tile.program_id (ProgramIdOp.verify_): inside a tile.kernel, dim within its grid rank.
// ============================================================================================

// ProgramIdOp: outside any tile.kernel.
// CHECK: error: 'tile.program_id' must be inside a tile.kernel
func.func @program_id_outside() -> index {
  %i = tile.program_id 0 : index
  func.return %i : index
}

// -----

// ProgramIdOp: dim 2 of a 2-d grid.
// CHECK: error: 'tile.program_id': dim 2 is outside the kernel's 2-d grid
tile.kernel @program_id_dim(%a: memref<64xf32>) attributes {grid = array<i64: 2, 2>} {
  %i = tile.program_id 2 : index
  tile.return
}

// -----

// ProgramIdOp: a negative dim (nested in an scf.for: the enclosing kernel is still found).
// CHECK: error: 'tile.program_id': dim -1 is outside the kernel's 1-d grid
tile.kernel @program_id_negative(%a: memref<64xf32>) attributes {grid = array<i64: 4>} {
  %lb = arith.constant 0 : index
  %ub = arith.constant 2 : index
  %st = arith.constant 1 : index
  scf.for %k = %lb to %ub step %st {
    %i = tile.program_id -1 : index
  }
  tile.return
}

// -----

// ============================================================================================
// tile.make_tensor_view / tile.make_partition_view.
// ============================================================================================

// MakeTensorViewOp: buffer element type differs from the view's.
// CHECK: error: 'tile.make_tensor_view': buffer element type f16 differs from the view's f32
tile.kernel @view_elem(%a: memref<64xf16>) attributes {grid = array<i64: 1>} {
  %v = tile.make_tensor_view %a : memref<64xf16> -> !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>
  tile.return
}

// -----

// MakeTensorViewOp: a view reaching past the end of its buffer (offset 8 + 7 * 8 + 7 = 71
// in a 64-element buffer).
// CHECK: error: 'tile.make_tensor_view': the view reaches element 71 of a 64-element buffer
tile.kernel @view_oob(%a: memref<64xf32>) attributes {grid = array<i64: 1>} {
  %v = tile.make_tensor_view %a : memref<64xf32> -> !tile.tensor_view<8x8xf32, strides [8, 1], offset 8>
  tile.return
}

// -----

// MakePartitionViewOp: the result partitions a different tensor_view than its operand.
// CHECK: error: 'tile.make_partition_view': partitions !tile.tensor_view<8x8xf32, strides [1, 8], offset 0>, but its operand is !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>
tile.kernel @partition_other_view(%a: memref<64xf32>) attributes {grid = array<i64: 1>} {
  %v = tile.make_tensor_view %a : memref<64xf32> -> !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>
  %p = tile.make_partition_view %v : !tile.tensor_view<8x8xf32, strides [8, 1], offset 0> -> !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [1, 8], offset 0>>
  tile.return
}

// -----

// ============================================================================================
// tile.load_view_tko / tile.store_view_tko (TokenOrderedAccess.check_access): one index per
// partition axis, the tile type is the partition's, ordering and scope are known names.
// ============================================================================================

// LoadViewTkoOp: one grid index for a rank-2 partition_view.
// CHECK: error: 'tile.load_view_tko': 1 grid indices for a rank-2 partition_view
tile.kernel @load_indices(%a: memref<64xf32>) attributes {grid = array<i64: 2, 2>} {
  %i = tile.program_id 0 : index
  %v = tile.make_tensor_view %a : memref<64xf32> -> !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>
  %p = tile.make_partition_view %v : !tile.tensor_view<8x8xf32, strides [8, 1], offset 0> -> !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %p[%i] token %t0 : !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>> -> !tile.tile<4x4xf32>
  tile.return
}

// -----

// StoreViewTkoOp: three grid indices for a rank-2 partition_view.
// CHECK: error: 'tile.store_view_tko': 3 grid indices for a rank-2 partition_view
tile.kernel @store_indices(%a: memref<64xf32>) attributes {grid = array<i64: 2, 2>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %v = tile.make_tensor_view %a : memref<64xf32> -> !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>
  %p = tile.make_partition_view %v : !tile.tensor_view<8x8xf32, strides [8, 1], offset 0> -> !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %p[%i, %j] token %t0 : !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>> -> !tile.tile<4x4xf32>
  %t2 = tile.store_view_tko %x, %p[%i, %j, %j] token %t1 : !tile.tile<4x4xf32>, !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>>
  tile.return
}

// -----

// LoadViewTkoOp: a result tile shaped unlike the partition's tiles (generic form: the
// custom form takes the result type from the trailing type only).
// CHECK: error: 'tile.load_view_tko': tile type !tile.tile<4x8xf32> differs from the partition's !tile.tile<4x4xf32>
tile.kernel @load_tile_type(%a: memref<64xf32>) attributes {grid = array<i64: 2, 2>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %v = tile.make_tensor_view %a : memref<64xf32> -> !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>
  %p = tile.make_partition_view %v : !tile.tensor_view<8x8xf32, strides [8, 1], offset 0> -> !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %p[%i, %j] token %t0 : !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>> -> !tile.tile<4x8xf32>
  tile.return
}

// -----

// StoreViewTkoOp: an f16 tile stored through an f32 partition_view.
// CHECK: error: 'tile.store_view_tko': tile type !tile.tile<4x4xf16> differs from the partition's !tile.tile<4x4xf32>
tile.kernel @store_tile_type(%a: memref<64xf32>) attributes {grid = array<i64: 2, 2>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %v = tile.make_tensor_view %a : memref<64xf32> -> !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>
  %p = tile.make_partition_view %v : !tile.tensor_view<8x8xf32, strides [8, 1], offset 0> -> !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>>
  %t0 = token.make : !token.token
  %h = tile.map : () -> !tile.tile<4x4xf16> {
    %z = arith.constant 0.000000e+00 : f16
    tile.yield %z : f16
  }
  %t1 = tile.store_view_tko %h, %p[%i, %j] token %t0 : !tile.tile<4x4xf16>, !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>>
  tile.return
}

// -----

// LoadViewTkoOp: an unknown memory_ordering (seq_cst is not one of the four orderings).
// CHECK: error: 'tile.load_view_tko': memory_ordering must be one of weak, relaxed, acquire, release, got "seq_cst"
tile.kernel @load_ordering(%a: memref<64xf32>) attributes {grid = array<i64: 2, 2>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %v = tile.make_tensor_view %a : memref<64xf32> -> !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>
  %p = tile.make_partition_view %v : !tile.tensor_view<8x8xf32, strides [8, 1], offset 0> -> !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %p[%i, %j] token %t0 {memory_ordering = "seq_cst"} : !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>> -> !tile.tile<4x4xf32>
  tile.return
}

// -----

// StoreViewTkoOp: an unknown memory_scope.
// CHECK: error: 'tile.store_view_tko': memory_scope must be one of block, device, system, got "cluster"
tile.kernel @store_scope(%a: memref<64xf32>) attributes {grid = array<i64: 2, 2>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %v = tile.make_tensor_view %a : memref<64xf32> -> !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>
  %p = tile.make_partition_view %v : !tile.tensor_view<8x8xf32, strides [8, 1], offset 0> -> !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %p[%i, %j] token %t0 : !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>> -> !tile.tile<4x4xf32>
  %t2 = tile.store_view_tko %x, %p[%i, %j] token %t1 {memory_ordering = "release", memory_scope = "cluster"} : !tile.tile<4x4xf32>, !tile.partition_view<4x4, !tile.tensor_view<8x8xf32, strides [8, 1], offset 0>>
  tile.return
}

// -----

// ============================================================================================
// tile.map (MapOp.verify_): inputs shaped like the result, body arguments are the input
// element types, the body yields one result element.
// ============================================================================================

// MapOp: an input shaped unlike the result.
// CHECK: error: 'tile.map': input #1 is !tile.tile<4x8xf32>, the result is !tile.tile<4x4xf32>
func.func @map_shape(%x: !tile.tile<4x4xf32>, %y: !tile.tile<4x8xf32>) {
  %s = tile.map %x, %y : (!tile.tile<4x4xf32>, !tile.tile<4x8xf32>) -> !tile.tile<4x4xf32> {
  ^bb0(%e: f32, %f: f32):
    %r = arith.addf %e, %f : f32
    tile.yield %r : f32
  }
  func.return
}

// -----

// MapOp: a body argument typed unlike its input's elements.
// (The message lists the expected types as Python reprs, not IR syntax; only the prefix is
// pinned.)
// CHECK: error: 'tile.map': body arguments must be the input element types
func.func @map_body_args(%x: !tile.tile<4x4xf32>, %y: !tile.tile<4x4xi32>) {
  %s = tile.map %x, %y : (!tile.tile<4x4xf32>, !tile.tile<4x4xi32>) -> !tile.tile<4x4xf32> {
  ^bb0(%e: f32, %f: f32):
    %r = arith.addf %e, %f : f32
    tile.yield %r : f32
  }
  func.return
}

// -----

// MapOp: the body yields an f16 for an f32 result.
// CHECK: error: 'tile.map': the body must yield one f32
func.func @map_yield_type(%x: !tile.tile<4x4xf16>) {
  %s = tile.map %x : (!tile.tile<4x4xf16>) -> !tile.tile<4x4xf32> {
  ^bb0(%e: f16):
    tile.yield %e : f16
  }
  func.return
}

// -----

// MapOp: the body yields two values.
// CHECK: error: 'tile.map': the body must yield one i32
func.func @map_yield_count(%x: !tile.tile<8xi32>) {
  %s = tile.map %x : (!tile.tile<8xi32>) -> !tile.tile<8xi32> {
  ^bb0(%e: i32):
    tile.yield %e, %e : i32, i32
  }
  func.return
}

// -----

// YieldOp (HasParent): tile.yield only ends a tile.map body.
// CHECK: error: 'tile.yield' expects parent op 'tile.map'
func.func @yield_outside(%e: f32) {
  tile.yield %e : f32
}

// -----

// ============================================================================================
// tile.reduce (ReduceOp.verify_): kind sum/max/min, unique in-range axes, the result keeps
// the reduced axes with size 1.
// ============================================================================================

// ReduceOp: an unknown kind.
// CHECK: error: 'tile.reduce': kind must be one of sum, max, min, got "prod"
func.func @reduce_kind(%x: !tile.tile<16x32xf32>) {
  %r = tile.reduce %x {axes = array<i64: 1>, kind = "prod"} : !tile.tile<16x32xf32> -> !tile.tile<16x1xf32>
  func.return
}

// -----

// ReduceOp: an axis out of range.
// CHECK: error: 'tile.reduce': axes [2] must be unique axes of !tile.tile<16x32xf32>
func.func @reduce_axis_range(%x: !tile.tile<16x32xf32>) {
  %r = tile.reduce %x {axes = array<i64: 2>, kind = "sum"} : !tile.tile<16x32xf32> -> !tile.tile<16x32xf32>
  func.return
}

// -----

// ReduceOp: a repeated axis.
// CHECK: error: 'tile.reduce': axes [1, 1] must be unique axes of !tile.tile<16x32xf32>
func.func @reduce_axis_repeat(%x: !tile.tile<16x32xf32>) {
  %r = tile.reduce %x {axes = array<i64: 1, 1>, kind = "max"} : !tile.tile<16x32xf32> -> !tile.tile<16x1xf32>
  func.return
}

// -----

// ReduceOp: a result that drops the reduced axis instead of keeping it with size 1.
// CHECK: error: 'tile.reduce': result must be !tile.tile<16x1xf32>, got !tile.tile<16xf32>
func.func @reduce_result(%x: !tile.tile<16x32xf32>) {
  %r = tile.reduce %x {axes = array<i64: 1>, kind = "min"} : !tile.tile<16x32xf32> -> !tile.tile<16xf32>
  func.return
}

// -----

// ============================================================================================
// tile.broadcast (BroadcastOp.verify_): same element type and rank, only size-1 axes grow.
// ============================================================================================

// BroadcastOp: a size-2 axis cannot grow to 32.
// CHECK: error: 'tile.broadcast': !tile.tile<16x2xf32> does not broadcast to !tile.tile<16x32xf32>
func.func @broadcast_shape(%x: !tile.tile<16x2xf32>) {
  %b = tile.broadcast %x : !tile.tile<16x2xf32> -> !tile.tile<16x32xf32>
  func.return
}

// -----

// BroadcastOp: rank changes are not broadcasts (reshape to 16x1 first).
// CHECK: error: 'tile.broadcast': !tile.tile<16xf32> does not broadcast to !tile.tile<16x32xf32>
func.func @broadcast_rank(%x: !tile.tile<16xf32>) {
  %b = tile.broadcast %x : !tile.tile<16xf32> -> !tile.tile<16x32xf32>
  func.return
}

// -----

// BroadcastOp: the element type must not change.
// CHECK: error: 'tile.broadcast': !tile.tile<16x1xf16> does not broadcast to !tile.tile<16x32xf32>
func.func @broadcast_elem(%x: !tile.tile<16x1xf16>) {
  %b = tile.broadcast %x : !tile.tile<16x1xf16> -> !tile.tile<16x32xf32>
  func.return
}

// -----

// ============================================================================================
// tile.mma (MmaOp.verify_ and its ACC constraint): [..., M, K] x [..., K, N] + [..., M, N]
// with one rank >= 2 and leading (batch) dims all 1, one element type, result typed like acc.
// The three shape-rank rules share one message; the CHECK-NEXT chains pin each to its chunk.
// ============================================================================================

// MmaOp: a rank-1 operand.
// CHECK: error: 'tile.mma': operands must have one rank >= 2 whose leading dims are all 1
func.func @mma_rank(%a: !tile.tile<16xf32>, %b: !tile.tile<16x16xf32>, %c: !tile.tile<16x16xf32>) {
  %r = tile.mma %a, %b, %c : !tile.tile<16xf32>, !tile.tile<16x16xf32>, !tile.tile<16x16xf32>
  func.return
}

// -----

// MmaOp: operands of different ranks (a batched a with unbatched b and acc).
// CHECK-NEXT: {{//[ ]-----}}
// CHECK-NEXT: error: 'tile.mma': operands must have one rank >= 2 whose leading dims are all 1
func.func @mma_rank_mismatch(%a: !tile.tile<1x16x8xf32>, %b: !tile.tile<8x16xf32>, %c: !tile.tile<16x16xf32>) {
  %r = tile.mma %a, %b, %c : !tile.tile<1x16x8xf32>, !tile.tile<8x16xf32>, !tile.tile<16x16xf32>
  func.return
}

// -----

// MmaOp: a leading (batch) dim other than 1 (the grid, not the tile, runs over the batch).
// CHECK-NEXT: {{//[ ]-----}}
// CHECK-NEXT: error: 'tile.mma': operands must have one rank >= 2 whose leading dims are all 1
func.func @mma_batch_dim(%a: !tile.tile<2x16x8xf32>, %b: !tile.tile<2x8x16xf32>, %c: !tile.tile<2x16x16xf32>) {
  %r = tile.mma %a, %b, %c : !tile.tile<2x16x8xf32>, !tile.tile<2x8x16xf32>, !tile.tile<2x16x16xf32>
  func.return
}

// -----

// MmaOp: K of a (8) differs from K of b (16).
// CHECK: error: 'tile.mma': !tile.tile<16x8xf32> x !tile.tile<16x16xf32> does not accumulate into !tile.tile<16x16xf32>
func.func @mma_k(%a: !tile.tile<16x8xf32>, %b: !tile.tile<16x16xf32>, %c: !tile.tile<16x16xf32>) {
  %r = tile.mma %a, %b, %c : !tile.tile<16x8xf32>, !tile.tile<16x16xf32>, !tile.tile<16x16xf32>
  func.return
}

// -----

// MmaOp: acc is not [M, N].
// CHECK: error: 'tile.mma': !tile.tile<16x8xf32> x !tile.tile<8x16xf32> does not accumulate into !tile.tile<16x32xf32>
func.func @mma_acc(%a: !tile.tile<16x8xf32>, %b: !tile.tile<8x16xf32>, %c: !tile.tile<16x32xf32>) {
  %r = tile.mma %a, %b, %c : !tile.tile<16x8xf32>, !tile.tile<8x16xf32>, !tile.tile<16x32xf32>
  func.return
}

// -----

// MmaOp: mixed element types (f16 inputs, f32 accumulator) are not supported.
// CHECK: error: 'tile.mma': a, b and acc must share an element type
func.func @mma_elem(%a: !tile.tile<16x8xf16>, %b: !tile.tile<8x16xf16>, %c: !tile.tile<16x16xf32>) {
  %r = tile.mma %a, %b, %c : !tile.tile<16x8xf16>, !tile.tile<8x16xf16>, !tile.tile<16x16xf32>
  func.return
}

// -----

// MmaOp: the result must be typed like acc (generic form; the ACC constraint).
// CHECK: error: 'tile.mma': result 'result' at position 0 does not verify:
// CHECK-NEXT: attribute !tile.tile<16x16xf32> expected from variable 'ACC', but got !tile.tile<16x8xf32>
func.func @mma_result(%a: !tile.tile<16x8xf32>, %b: !tile.tile<8x16xf32>, %c: !tile.tile<16x16xf32>) {
  %r = "tile.mma"(%a, %b, %c) : (!tile.tile<16x8xf32>, !tile.tile<8x16xf32>, !tile.tile<16x16xf32>) -> !tile.tile<16x8xf32>
  func.return
}

// -----

// ============================================================================================
// tile.launch (LaunchOp.verify_): the symbol is a tile.kernel, the arguments its inputs.
// ============================================================================================

// LaunchOp: an unknown symbol.
// CHECK: error: 'tile.launch': no symbol @missing
func.func @main() {
  %a = tile.buffer : memref<64xf32>
  tile.launch @missing(%a) : memref<64xf32>
  func.return
}

// -----

// LaunchOp: the symbol names a func.func, not a tile.kernel.
// CHECK: error: 'tile.launch': @helper is not a tile.kernel
func.func @helper(%a: memref<64xf32>) {
  func.return
}
func.func @main() {
  %a = tile.buffer : memref<64xf32>
  tile.launch @helper(%a) : memref<64xf32>
  func.return
}

// -----

// LaunchOp: argument types differ from the kernel's inputs.
// CHECK: error: 'tile.launch': arguments ['memref<32xf32>'] do not match @scale's ['memref<64xf32>']
tile.kernel @scale(%a: memref<64xf32>) attributes {grid = array<i64: 8>} {
  tile.return
}
func.func @main() {
  %a = tile.buffer : memref<32xf32>
  tile.launch @scale(%a) : memref<32xf32>
  func.return
}

// -----

// LaunchOp: too few arguments.
// CHECK: error: 'tile.launch': arguments ['memref<64xf32>'] do not match @copy's ['memref<64xf32>', 'memref<64xf32>']
tile.kernel @copy(%a: memref<64xf32>, %b: memref<64xf32>) attributes {grid = array<i64: 8>} {
  tile.return
}
func.func @main() {
  %a = tile.buffer : memref<64xf32>
  tile.launch @copy(%a) : memref<64xf32>
  func.return
}

// -----

// LaunchOp: a kernel lowered to a func.func (marked tile.grid) takes two trailing index
// arguments for its grid range, which the launch does not pass; the rest must still match.
// CHECK: error: 'tile.launch': arguments ['memref<64xf16>'] do not match @lowered's ['memref<64xf32>']
func.func @lowered(%a: memref<64xf32>, %lo: index, %hi: index) attributes {tile.grid = array<i64: 8>} {
  func.return
}
func.func @main() {
  %a = tile.buffer : memref<64xf16>
  tile.launch @lowered(%a) : memref<64xf16>
  func.return
}

// -----

// ============================================================================================
// token.join (JoinOp.verify_): at least one token.
// ============================================================================================

// JoinOp: no operands.
// CHECK: error: 'token.join' needs at least one token
func.func @join_empty() -> !token.token {
  %t = token.join : !token.token
  func.return %t : !token.token
}

// -----

// KernelOp: arguments must be static memrefs (the runtime passes buffer pointers).
// CHECK: error: 'tile.kernel' @scalar_arg: arguments must be static memrefs, got f32
"tile.kernel"() <{sym_name = "scalar_arg", function_type = (f32) -> (), grid = array<i64: 1>}> ({
^bb0(%a: f32):
  "tile.return"() : () -> ()
}) : () -> ()

// -----

// TileType: the element type must be a scalar float or integer.
// CHECK: tile element type must be a float or integer type, got index
func.func @index_tile(%t: !tile.tile<4xindex>) {
  func.return
}

// -----

// TensorViewType: the shape must be static.
// CHECK: tensor_view shape must be static (no ? dimensions)
func.func @dynamic_view(%v: !tile.tensor_view<?xf32, strides [1], offset 0>) {
  func.return
}

// -----

// ============================================================================================
// Memory safety: every tile index of a load, store or gather is proven inside its
// partition's tile grid (dialects/tile_bounds.py), and a launch never writes the program's
// arguments (the caller's arrays).
// ============================================================================================

// A grid of 100 over a partition of 4 tiles: instances 4..99 would load past the buffer.
// CHECK: invalid.mlir:[[# @LINE + 8]]:3: error: 'tile.load_view_tko': tile index 0..99 along axis 0 is outside the partition's 4 tiles there (valid 0..3)
tile.kernel @grid_past_partition(%a: memref<16xf32>, %c: memref<16xf32>) attributes {grid = array<i64: 100>} {
  %i = tile.program_id 0 : index
  %va = tile.make_tensor_view %a : memref<16xf32> -> !tile.tensor_view<16xf32, strides [1], offset 0>
  %vc = tile.make_tensor_view %c : memref<16xf32> -> !tile.tensor_view<16xf32, strides [1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<16xf32, strides [1], offset 0> -> !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<16xf32, strides [1], offset 0> -> !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %pa[%i] token %t0 : !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>> -> !tile.tile<4xf32>
  %t2 = tile.store_view_tko %x, %pc[%i] token %t1 : !tile.tile<4xf32>, !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  tile.return
}

// -----

// A constant store index far past the partition.
// CHECK: invalid.mlir:[[# @LINE + 7]]:3: error: 'tile.store_view_tko': tile index 100000 along axis 0 is outside the partition's 4 tiles there (valid 0..3)
tile.kernel @store_index_too_big(%c: memref<16xf32>) attributes {grid = array<i64: 1>} {
  %far = arith.constant 100000 : index
  %vc = tile.make_tensor_view %c : memref<16xf32> -> !tile.tensor_view<16xf32, strides [1], offset 0>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<16xf32, strides [1], offset 0> -> !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  %x = tile.map : () -> !tile.tile<4xf32> { %z = arith.constant 1.0 : f32  tile.yield %z : f32 }
  %t0 = token.make : !token.token
  %t1 = tile.store_view_tko %x, %pc[%far] token %t0 : !tile.tile<4xf32>, !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  tile.return
}

// -----

// A negative constant store index (before the buffer).
// CHECK: invalid.mlir:[[# @LINE + 7]]:3: error: 'tile.store_view_tko': tile index -5 along axis 0 is outside the partition's 4 tiles there (valid 0..3)
tile.kernel @store_index_negative(%c: memref<16xf32>) attributes {grid = array<i64: 1>} {
  %neg = arith.constant -5 : index
  %vc = tile.make_tensor_view %c : memref<16xf32> -> !tile.tensor_view<16xf32, strides [1], offset 0>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<16xf32, strides [1], offset 0> -> !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  %x = tile.map : () -> !tile.tile<4xf32> { %z = arith.constant 1.0 : f32  tile.yield %z : f32 }
  %t0 = token.make : !token.token
  %t1 = tile.store_view_tko %x, %pc[%neg] token %t0 : !tile.tile<4xf32>, !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  tile.return
}

// -----

// Arithmetic on the program id is bounded too: 2 * i + 1 reaches tile 7 of 4.
// CHECK: error: 'tile.load_view_tko': tile index 1..7 along axis 0 is outside the partition's 4 tiles there (valid 0..3)
tile.kernel @scaled_program_id(%a: memref<16xf32>) attributes {grid = array<i64: 4>} {
  %i = tile.program_id 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d = arith.muli %i, %c2 : index
  %j = arith.addi %d, %c1 : index
  %va = tile.make_tensor_view %a : memref<16xf32> -> !tile.tensor_view<16xf32, strides [1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<16xf32, strides [1], offset 0> -> !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %pa[%j] token %t0 : !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>> -> !tile.tile<4xf32>
  tile.return
}

// -----

// A K loop whose bounds run past the partition: k = 0..4 over 4 tiles.
// CHECK: error: 'tile.load_view_tko': tile index 0..4 along axis 0 is outside the partition's 4 tiles there (valid 0..3)
tile.kernel @k_loop_past_partition(%a: memref<16xf32>) attributes {grid = array<i64: 1>} {
  %va = tile.make_tensor_view %a : memref<16xf32> -> !tile.tensor_view<16xf32, strides [1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<16xf32, strides [1], offset 0> -> !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  %t0 = token.make : !token.token
  %lb = arith.constant 0 : index
  %ub = arith.constant 5 : index
  %step = arith.constant 1 : index
  %tk = scf.for %k = %lb to %ub step %step iter_args(%t_in = %t0) -> (!token.token) {
    %x, %t1 = tile.load_view_tko %pa[%k] token %t_in : !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>> -> !tile.tile<4xf32>
    scf.yield %t1 : !token.token
  }
  tile.return
}

// -----

// An index that cannot be bounded (here a kernel's grid range is unknown to a dynamic
// loop bound) is rejected: no lowering emits one.
// CHECK: error: 'tile.load_view_tko': tile index along axis 0 cannot be bounded statically
tile.kernel @unbounded_index(%a: memref<16xf32>) attributes {grid = array<i64: 1>} {
  %va = tile.make_tensor_view %a : memref<16xf32> -> !tile.tensor_view<16xf32, strides [1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<16xf32, strides [1], offset 0> -> !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  %t0 = token.make : !token.token
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %ub = tile.program_id 0 : index
  %m = arith.constant 3 : index
  %tk = scf.for %k = %lb to %ub step %step iter_args(%t_in = %t0) -> (!token.token) {
    %q = arith.shli %k, %m : index
    %x, %t1 = tile.load_view_tko %pa[%q] token %t_in : !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>> -> !tile.tile<4xf32>
    scf.yield %t1 : !token.token
  }
  tile.return
}

// -----

// A gather's column tile past the view: column 2 of a 16-wide view cut 8 wide.
// CHECK: error: 'tile.gather': tile index 2 along axis 1 is outside the partition's 2 tiles there (valid 0..1)
tile.kernel @gather_column_past_view(%table: memref<1600xf32>) attributes {grid = array<i64: 1>} {
  %v = tile.make_tensor_view %table : memref<1600xf32> -> !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>
  %ids = tile.map : () -> !tile.tile<8x1xi64> { %z = arith.constant 0 : i64  tile.yield %z : i64 }
  %c2 = arith.constant 2 : index
  %e = tile.gather %v[%ids], %c2 : !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>, !tile.tile<8x1xi64> -> !tile.tile<8x8xf32>
  tile.return
}

// -----

// A launch that writes a program argument would change the caller's (possibly read-only)
// array: kernels write only tile.buffers.
// CHECK: error: 'tile.launch': @copy_into writes its argument 1, which is the program's argument 0 (the caller's input, read-only): write into a tile.buffer instead
tile.kernel @copy_into(%a: memref<16xf32>, %c: memref<16xf32>) attributes {grid = array<i64: 4>} {
  %i = tile.program_id 0 : index
  %va = tile.make_tensor_view %a : memref<16xf32> -> !tile.tensor_view<16xf32, strides [1], offset 0>
  %vc = tile.make_tensor_view %c : memref<16xf32> -> !tile.tensor_view<16xf32, strides [1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<16xf32, strides [1], offset 0> -> !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<16xf32, strides [1], offset 0> -> !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %pa[%i] token %t0 : !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>> -> !tile.tile<4xf32>
  %t2 = tile.store_view_tko %x, %pc[%i] token %t1 : !tile.tile<4xf32>, !tile.partition_view<4, !tile.tensor_view<16xf32, strides [1], offset 0>>
  tile.return
}
func.func @writes_input(%a: memref<16xf32>) -> memref<16xf32> {
  %c = tile.buffer : memref<16xf32>
  tile.launch @copy_into(%c, %a) : memref<16xf32>, memref<16xf32>
  func.return %c : memref<16xf32>
}

// -----

// tile.scatter_add_tko adds f32 or f64 elements: a 16-bit sum would round at every add.
// CHECK: error: 'tile.scatter_add_tko': adds f32 or f64 elements of the view's type, not bf16 into bf16
tile.kernel @scatter_add_bf16(%t: memref<160xbf16>) attributes {grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %vt = tile.make_tensor_view %t : memref<160xbf16> -> !tile.tensor_view<10x16xbf16, strides [16, 1], offset 0>
  %x = tile.map : () -> !tile.tile<4x16xbf16> { %one = arith.constant 1.0 : bf16  tile.yield %one : bf16 }
  %ids = tile.map : () -> !tile.tile<4x1xi64> { %z = arith.constant 0 : i64  tile.yield %z : i64 }
  %t0 = token.make : !token.token
  %t1 = tile.scatter_add_tko %x, %vt[%ids], %c0 token %t0 : !tile.tile<4x16xbf16>, !tile.tensor_view<10x16xbf16, strides [16, 1], offset 0>, !tile.tile<4x1xi64>
  tile.return
}

// -----

// An atomic add is relaxed: a stronger ordering would not be lowered as asked.
// CHECK: error: 'tile.scatter_add_tko': adds relaxed within the device (memory_ordering "relaxed", memory_scope "block" or "device"), not release at device scope
tile.kernel @scatter_add_release(%t: memref<160xf32>) attributes {grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %vt = tile.make_tensor_view %t : memref<160xf32> -> !tile.tensor_view<10x16xf32, strides [16, 1], offset 0>
  %x = tile.map : () -> !tile.tile<4x16xf32> { %one = arith.constant 1.0 : f32  tile.yield %one : f32 }
  %ids = tile.map : () -> !tile.tile<4x1xi64> { %z = arith.constant 0 : i64  tile.yield %z : i64 }
  %t0 = token.make : !token.token
  %t1 = tile.scatter_add_tko %x, %vt[%ids], %c0 token %t0 {memory_ordering = "release"} : !tile.tile<4x16xf32>, !tile.tensor_view<10x16xf32, strides [16, 1], offset 0>, !tile.tile<4x1xi64>
  tile.return
}

// -----

// One row index per row of the tile.
// CHECK: error: 'tile.scatter_add_tko': rows must be a 4x1 i64 tile, got !tile.tile<8x1xi64>
tile.kernel @scatter_add_row_count(%t: memref<160xf32>) attributes {grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %vt = tile.make_tensor_view %t : memref<160xf32> -> !tile.tensor_view<10x16xf32, strides [16, 1], offset 0>
  %x = tile.map : () -> !tile.tile<4x16xf32> { %one = arith.constant 1.0 : f32  tile.yield %one : f32 }
  %ids = tile.map : () -> !tile.tile<8x1xi64> { %z = arith.constant 0 : i64  tile.yield %z : i64 }
  %t0 = token.make : !token.token
  %t1 = tile.scatter_add_tko %x, %vt[%ids], %c0 token %t0 : !tile.tile<4x16xf32>, !tile.tensor_view<10x16xf32, strides [16, 1], offset 0>, !tile.tile<8x1xi64>
  tile.return
}

// -----

// The column tile index is checked against the view, as tile.gather's (16 columns: one tile).
// CHECK: error: 'tile.scatter_add_tko': tile index 1 along axis 1 is outside the partition's 1 tile there (valid 0..0)
tile.kernel @scatter_add_column_past_view(%t: memref<160xf32>) attributes {grid = array<i64: 1>} {
  %c1 = arith.constant 1 : index
  %vt = tile.make_tensor_view %t : memref<160xf32> -> !tile.tensor_view<10x16xf32, strides [16, 1], offset 0>
  %x = tile.map : () -> !tile.tile<4x16xf32> { %one = arith.constant 1.0 : f32  tile.yield %one : f32 }
  %ids = tile.map : () -> !tile.tile<4x1xi64> { %z = arith.constant 0 : i64  tile.yield %z : i64 }
  %t0 = token.make : !token.token
  %t1 = tile.scatter_add_tko %x, %vt[%ids], %c1 token %t0 : !tile.tile<4x16xf32>, !tile.tensor_view<10x16xf32, strides [16, 1], offset 0>, !tile.tile<4x1xi64>
  tile.return
}

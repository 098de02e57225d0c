// lower-tile-to-gpu{warpgroup_mma=true} makes a warpgroup matmul persistent
// (persistent_matmul.py, cross_tile.py): the function is marked gpu.persistent (the runtime
// launches as many blocks as the device holds at once) and loops over the tile grid from
// begin + ctaid.x in steps of nctaid.x. @persistent: 4 k steps of 64 and 4 stages; the
// first tile's steps 0 and 1 are copied before the tile loop; the k loop is two loops, steps
// 0-1 copying this tile's step two ahead and steps 2-3 the next tile's steps 0-1 (where
// there is a next tile), each into the stage of its step counted over the block's tiles. @one_step: a single k step is fewer than the two
// copied ahead: each tile copies its own first steps (no next-tile copies) and the function
// is not marked, so it is launched with a block per tile and its tile loop runs once.
// @shifted_rows: a's tile row is computed from the program id, not the id itself,
// so the next tile's copies could not be addressed: one tile per block, as before.
// RUN: strata-opt %s -p "lower-tile-to-gpu{warpgroup_mma=true}" | filecheck %s

// CHECK-LABEL: func.func @persistent(
// CHECK-SAME:    gpu.warpgroup_mma, tile.grid = array<i64: 4, 4>, gpu.persistent
// CHECK:         %[[BLOCKS:.*]] = arith.index_cast %nctaid : i32 to index
// CHECK-COUNT-2: func.call @ptx.cp.async.commit_group()
// CHECK-NOT:     ptx.cp.async
// CHECK:         scf.for %[[TILE:.*]] = %{{.*}} to %end step %[[BLOCKS]] iter_args(%[[DONE:.*]] = %{{.*}}) -> (index) {
// CHECK-NOT:       ptx.cp.async
// CHECK:           scf.for
// CHECK-NEXT:        func.call @ptx.cp.async.wait_group.1()
// CHECK:             arith.addi %[[DONE]], %{{.*}} : index
// CHECK-NOT:         scf.if
// CHECK:             func.call @ptx.cp.async.commit_group()
// CHECK:             func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major(
// CHECK:           scf.for
// CHECK-NEXT:        func.call @ptx.cp.async.wait_group.1()
// CHECK:             scf.if
// CHECK:             func.call @ptx.cp.async.commit_group()
// CHECK:             func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major(
// CHECK:           func.call @ptx.wgmma.wait_group.sync.aligned.0.x64(
// CHECK:           func.call @ptx.st.global.v4.b32(
// CHECK:           func.call @llvm.nvvm.barrier0()
// CHECK-NEXT:      %[[STEPS:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[DONE_NEXT:.*]] = arith.addi %[[DONE]], %[[STEPS]] : index
// CHECK-NEXT:      scf.yield %[[DONE_NEXT]] : index
// CHECK:         func.return

// CHECK-LABEL: func.func @one_step(
// CHECK-SAME:    gpu.warpgroup_mma, tile.grid = array<i64: 4, 4>}
// CHECK-NOT:     ptx.cp.async
// CHECK:         scf.for %{{.*}} = %{{.*}} to %end step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (index) {
// CHECK-COUNT-2:   func.call @ptx.cp.async.commit_group()
// CHECK:           scf.for
// CHECK:             func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major(
// CHECK-NOT:       scf.for
// CHECK:           func.call @llvm.nvvm.barrier0()
// CHECK-NEXT:      %[[NONE:.*]] = arith.constant 0 : index
// CHECK:           scf.yield

// CHECK-LABEL: func.func @shifted_rows(
// CHECK-SAME:    gpu.warpgroup_mma, tile.grid = array<i64: 4, 4>}
// CHECK-NOT:     nctaid
// CHECK:         func.call @ptx.wgmma.mma_async
// CHECK:         func.return

builtin.module {
  tile.kernel @persistent(%0: memref<131072xbf16>, %1: memref<131072xbf16>, %2: memref<262144xbf16>) attributes {grid = array<i64: 4, 4>} {
    %3 = arith.constant 1 : index
    %4 = arith.constant 0 : index
    %5 = arith.constant 4 : index
    %6 = tile.program_id 0 : index
    %7 = tile.program_id 1 : index
    %8 = token.make : !token.token
    %9 = tile.make_tensor_view %0 : memref<131072xbf16> -> !tile.tensor_view<512x256xbf16, strides [256, 1], offset 0>
    %10 = tile.make_partition_view %9 : !tile.tensor_view<512x256xbf16, strides [256, 1], offset 0> -> !tile.partition_view<128x64, !tile.tensor_view<512x256xbf16, strides [256, 1], offset 0>>
    %11 = tile.make_tensor_view %1 : memref<131072xbf16> -> !tile.tensor_view<256x512xbf16, strides [512, 1], offset 0>
    %12 = tile.make_partition_view %11 : !tile.tensor_view<256x512xbf16, strides [512, 1], offset 0> -> !tile.partition_view<64x128, !tile.tensor_view<256x512xbf16, strides [512, 1], offset 0>>
    %13 = tile.map : () -> !tile.tile<128x128xf32> {
      %14 = arith.constant 0.000000e+00 : f32
      tile.yield %14 : f32
    }
    %15 = scf.for %16 = %4 to %5 step %3 iter_args(%17 = %13) -> (!tile.tile<128x128xf32>) {
      %18, %19 = tile.load_view_tko %10[%6, %16] token %8 : !tile.partition_view<128x64, !tile.tensor_view<512x256xbf16, strides [256, 1], offset 0>> -> !tile.tile<128x64xbf16>
      %20 = tile.map %18 : (!tile.tile<128x64xbf16>) -> !tile.tile<128x64xf32> {
      ^bb0(%21: bf16):
        %22 = arith.extf %21 : bf16 to f32
        tile.yield %22 : f32
      }
      %23, %24 = tile.load_view_tko %12[%16, %7] token %8 : !tile.partition_view<64x128, !tile.tensor_view<256x512xbf16, strides [512, 1], offset 0>> -> !tile.tile<64x128xbf16>
      %25 = tile.map %23 : (!tile.tile<64x128xbf16>) -> !tile.tile<64x128xf32> {
      ^bb0(%26: bf16):
        %27 = arith.extf %26 : bf16 to f32
        tile.yield %27 : f32
      }
      %28 = tile.mma %20, %25, %17 : !tile.tile<128x64xf32>, !tile.tile<64x128xf32>, !tile.tile<128x128xf32>
      scf.yield %28 : !tile.tile<128x128xf32>
    }
    %29 = tile.map %15 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xbf16> {
    ^bb0(%30: f32):
      %31 = arith.truncf %30 : f32 to bf16
      tile.yield %31 : bf16
    }
    %32 = tile.make_tensor_view %2 : memref<262144xbf16> -> !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0>
    %33 = tile.make_partition_view %32 : !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0> -> !tile.partition_view<128x128, !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0>>
    %34 = tile.store_view_tko %29, %33[%6, %7] token %8 : !tile.tile<128x128xbf16>, !tile.partition_view<128x128, !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0>>
    tile.return
  }
  tile.kernel @one_step(%0: memref<32768xbf16>, %1: memref<32768xbf16>, %2: memref<262144xbf16>) attributes {grid = array<i64: 4, 4>} {
    %3 = arith.constant 1 : index
    %4 = arith.constant 0 : index
    %6 = tile.program_id 0 : index
    %7 = tile.program_id 1 : index
    %8 = token.make : !token.token
    %9 = tile.make_tensor_view %0 : memref<32768xbf16> -> !tile.tensor_view<512x64xbf16, strides [64, 1], offset 0>
    %10 = tile.make_partition_view %9 : !tile.tensor_view<512x64xbf16, strides [64, 1], offset 0> -> !tile.partition_view<128x64, !tile.tensor_view<512x64xbf16, strides [64, 1], offset 0>>
    %11 = tile.make_tensor_view %1 : memref<32768xbf16> -> !tile.tensor_view<64x512xbf16, strides [512, 1], offset 0>
    %12 = tile.make_partition_view %11 : !tile.tensor_view<64x512xbf16, strides [512, 1], offset 0> -> !tile.partition_view<64x128, !tile.tensor_view<64x512xbf16, strides [512, 1], offset 0>>
    %13 = tile.map : () -> !tile.tile<128x128xf32> {
      %14 = arith.constant 0.000000e+00 : f32
      tile.yield %14 : f32
    }
    %15 = scf.for %16 = %4 to %3 step %3 iter_args(%17 = %13) -> (!tile.tile<128x128xf32>) {
      %18, %19 = tile.load_view_tko %10[%6, %16] token %8 : !tile.partition_view<128x64, !tile.tensor_view<512x64xbf16, strides [64, 1], offset 0>> -> !tile.tile<128x64xbf16>
      %20 = tile.map %18 : (!tile.tile<128x64xbf16>) -> !tile.tile<128x64xf32> {
      ^bb0(%21: bf16):
        %22 = arith.extf %21 : bf16 to f32
        tile.yield %22 : f32
      }
      %23, %24 = tile.load_view_tko %12[%16, %7] token %8 : !tile.partition_view<64x128, !tile.tensor_view<64x512xbf16, strides [512, 1], offset 0>> -> !tile.tile<64x128xbf16>
      %25 = tile.map %23 : (!tile.tile<64x128xbf16>) -> !tile.tile<64x128xf32> {
      ^bb0(%26: bf16):
        %27 = arith.extf %26 : bf16 to f32
        tile.yield %27 : f32
      }
      %28 = tile.mma %20, %25, %17 : !tile.tile<128x64xf32>, !tile.tile<64x128xf32>, !tile.tile<128x128xf32>
      scf.yield %28 : !tile.tile<128x128xf32>
    }
    %29 = tile.map %15 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xbf16> {
    ^bb0(%30: f32):
      %31 = arith.truncf %30 : f32 to bf16
      tile.yield %31 : bf16
    }
    %32 = tile.make_tensor_view %2 : memref<262144xbf16> -> !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0>
    %33 = tile.make_partition_view %32 : !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0> -> !tile.partition_view<128x128, !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0>>
    %34 = tile.store_view_tko %29, %33[%6, %7] token %8 : !tile.tile<128x128xbf16>, !tile.partition_view<128x128, !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0>>
    tile.return
  }
  tile.kernel @shifted_rows(%0: memref<131072xbf16>, %1: memref<131072xbf16>, %2: memref<262144xbf16>) attributes {grid = array<i64: 4, 4>} {
    %3 = arith.constant 1 : index
    %4 = arith.constant 0 : index
    %5 = arith.constant 4 : index
    %6 = tile.program_id 0 : index
    %7 = tile.program_id 1 : index
    %rows = arith.remui %6, %5 : index
    %8 = token.make : !token.token
    %9 = tile.make_tensor_view %0 : memref<131072xbf16> -> !tile.tensor_view<512x256xbf16, strides [256, 1], offset 0>
    %10 = tile.make_partition_view %9 : !tile.tensor_view<512x256xbf16, strides [256, 1], offset 0> -> !tile.partition_view<128x64, !tile.tensor_view<512x256xbf16, strides [256, 1], offset 0>>
    %11 = tile.make_tensor_view %1 : memref<131072xbf16> -> !tile.tensor_view<256x512xbf16, strides [512, 1], offset 0>
    %12 = tile.make_partition_view %11 : !tile.tensor_view<256x512xbf16, strides [512, 1], offset 0> -> !tile.partition_view<64x128, !tile.tensor_view<256x512xbf16, strides [512, 1], offset 0>>
    %13 = tile.map : () -> !tile.tile<128x128xf32> {
      %14 = arith.constant 0.000000e+00 : f32
      tile.yield %14 : f32
    }
    %15 = scf.for %16 = %4 to %5 step %3 iter_args(%17 = %13) -> (!tile.tile<128x128xf32>) {
      %18, %19 = tile.load_view_tko %10[%rows, %16] token %8 : !tile.partition_view<128x64, !tile.tensor_view<512x256xbf16, strides [256, 1], offset 0>> -> !tile.tile<128x64xbf16>
      %20 = tile.map %18 : (!tile.tile<128x64xbf16>) -> !tile.tile<128x64xf32> {
      ^bb0(%21: bf16):
        %22 = arith.extf %21 : bf16 to f32
        tile.yield %22 : f32
      }
      %23, %24 = tile.load_view_tko %12[%16, %7] token %8 : !tile.partition_view<64x128, !tile.tensor_view<256x512xbf16, strides [512, 1], offset 0>> -> !tile.tile<64x128xbf16>
      %25 = tile.map %23 : (!tile.tile<64x128xbf16>) -> !tile.tile<64x128xf32> {
      ^bb0(%26: bf16):
        %27 = arith.extf %26 : bf16 to f32
        tile.yield %27 : f32
      }
      %28 = tile.mma %20, %25, %17 : !tile.tile<128x64xf32>, !tile.tile<64x128xf32>, !tile.tile<128x128xf32>
      scf.yield %28 : !tile.tile<128x128xf32>
    }
    %29 = tile.map %15 : (!tile.tile<128x128xf32>) -> !tile.tile<128x128xbf16> {
    ^bb0(%30: f32):
      %31 = arith.truncf %30 : f32 to bf16
      tile.yield %31 : bf16
    }
    %32 = tile.make_tensor_view %2 : memref<262144xbf16> -> !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0>
    %33 = tile.make_partition_view %32 : !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0> -> !tile.partition_view<128x128, !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0>>
    %34 = tile.store_view_tko %29, %33[%6, %7] token %8 : !tile.tile<128x128xbf16>, !tile.partition_view<128x128, !tile.tensor_view<512x512xbf16, strides [512, 1], offset 0>>
    tile.return
  }
}

// Reductions over axes that are not the last (lower-graph-to-tile, reductions.py): the
// input's neighbouring reduced axes merge into one, and a column kernel reduces it: tiles
// [R, C] with C wide along the contiguous kept axis, reduced along the tile's axis 0 (not
// the last), an scf.for over the R tiles carrying the [1, C] accumulator.
// RUN: strata-opt %s -p lower-graph-to-tile --split-input-file | filecheck %s

// A bias gradient: axes (0, 1) of a contiguous [4, 128, 1024] are one axis of 512, so one
// kernel reads x as [512, 1024]; the f32 sum accumulates in f64, rounded once.
func.func @bias_grad(%dy: tensor<4x128x1024xf32>) -> tensor<1024xf32> {
  %0 = "graph.reduce_sum"(%dy) <{axes = array<i64: 0, 1>}> : (tensor<4x128x1024xf32>) -> tensor<1024xf32>
  func.return %0 : tensor<1024xf32>
}

// CHECK-LABEL: func.func @bias_grad(
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<1024xf32>
// CHECK-NEXT:    tile.launch @bias_grad_reduce_sum_0(%dy, [[OUT]])
// CHECK-NEXT:    func.return [[OUT]]
// CHECK:       tile.kernel @bias_grad_reduce_sum_0({{.*}}) attributes {grid = array<i64: 4>} {
// CHECK:         tile.make_partition_view {{.*}} -> !tile.partition_view<16x256, !tile.tensor_view<512x1024xf32, strides [1024, 1], offset 0>>
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (!tile.tile<1x256xf64>) {
// CHECK:           arith.extf {{.*}} : f32 to f64
// CHECK:           tile.reduce {{.*}} {axes = array<i64: 0>, kind = "sum"} : !tile.tile<16x256xf64> -> !tile.tile<1x256xf64>
// CHECK:           arith.addf
// CHECK:           scf.yield
// CHECK:         arith.truncf {{.*}} : f64 to f32
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x256xf32>
// CHECK-NOT:   tile.kernel

// -----

// The middle axis of [6, 512, 64]: the kept axes stay apart (a reduced one lies between),
// the grid runs over both, and the mean's scale follows the loop.
func.func @middle(%x: tensor<6x512x64xf32>) -> tensor<6x64xf32> {
  %0 = "graph.reduce_mean"(%x) <{axes = array<i64: 1>}> : (tensor<6x512x64xf32>) -> tensor<6x64xf32>
  func.return %0 : tensor<6x64xf32>
}

// CHECK-LABEL: tile.kernel @middle_reduce_mean_0({{.*}}) attributes {grid = array<i64: 6, 1>} {
// CHECK:         tile.make_partition_view {{.*}} -> !tile.partition_view<1x64x64, !tile.tensor_view<6x512x64xf32, strides [32768, 64, 1], offset 0>>
// CHECK:         tile.reduce {{.*}} {axes = array<i64: 1>, kind = "sum"} : !tile.tile<1x64x64xf64> -> !tile.tile<1x1x64xf64>
// CHECK:         arith.constant 0.001953125 : f64
// CHECK:         tile.make_tensor_view {{.*}} -> !tile.tensor_view<6x1x64xf32, strides [64, 0, 1], offset 0>

// -----

// Two reduced axes apart, (0, 2) of [8, 16, 32] with reduce_max: the last by a row kernel,
// then the first by a column kernel over the [8, 16] intermediate (kept in f32: a max
// needs no wider accumulator).
func.func @apart(%x: tensor<8x16x32xf32>) -> tensor<16xf32> {
  %0 = "graph.reduce_max"(%x) <{axes = array<i64: 0, 2>}> : (tensor<8x16x32xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// CHECK-LABEL: func.func @apart(
// CHECK:         tile.buffer {tile.workspace} : memref<128xf32>
// CHECK:       tile.kernel @apart_reduce_max_0(
// CHECK:         tile.reduce {{.*}} {axes = array<i64: 2>, kind = "max"}
// CHECK:       tile.kernel @apart_reduce_max_1(
// CHECK:         tile.make_tensor_view {{.*}} -> !tile.tensor_view<8x16xf32, strides [16, 1], offset 0>
// CHECK:         tile.reduce {{.*}} {axes = array<i64: 0>, kind = "max"} : !tile.tile<8x16xf32> -> !tile.tile<1x16xf32>

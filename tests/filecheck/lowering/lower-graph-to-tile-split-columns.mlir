// Column reductions on the GPU (matmul_min_tiles=132): where the kept columns alone give
// too few instances, the reduced axis splits into chunks of at least 128 rows reduced side
// by side into an f32 partials workspace, then a small kernel reduces the chunks and
// rounds once. The CPU (no matmul_min_tiles) and reductions with enough columns keep one
// kernel.
// RUN: strata-opt %s -p "lower-graph-to-tile{tile_elements=2048 matmul_min_tiles=132}" --split-input-file | filecheck %s
// RUN: strata-opt %s -p lower-graph-to-tile --split-input-file | filecheck %s --check-prefix=CPU

// A GPT-2 bias gradient: [8, 1024, 768] over (0, 1), one axis of 8192 rows, as 64 chunks
// of 128 rows (grid 64 x 3 of 256 columns), then the 64 partial rows.
func.func @bias_grad(%dy: tensor<8x1024x768xbf16>) -> tensor<768xbf16> {
  %0 = "graph.reduce_sum"(%dy) <{axes = array<i64: 0, 1>}> : (tensor<8x1024x768xbf16>) -> tensor<768xbf16>
  func.return %0 : tensor<768xbf16>
}

// CHECK-LABEL: func.func @bias_grad(
// CHECK-NEXT:    [[PARTIALS:%[0-9]+]] = tile.buffer {tile.workspace} : memref<49152xf32>
// CHECK-NEXT:    tile.launch @bias_grad_reduce_sum_0(%dy, [[PARTIALS]])
// CHECK-NEXT:    [[OUT:%[0-9]+]] = tile.buffer : memref<768xbf16>
// CHECK-NEXT:    tile.launch @bias_grad_reduce_sum_1([[PARTIALS]], [[OUT]])
// CHECK:       tile.kernel @bias_grad_reduce_sum_0({{.*}}) attributes {grid = array<i64: 64, 3>} {
// CHECK:         tile.make_partition_view {{.*}} -> !tile.partition_view<1x8x256, !tile.tensor_view<64x128x768xbf16, strides [98304, 768, 1], offset 0>>
// CHECK:         scf.for {{.*}} -> (!tile.tile<1x1x256xf32>) {
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x1x256xf32>
// CHECK:       tile.kernel @bias_grad_reduce_sum_1({{.*}}) attributes {grid = array<i64: 24>} {
// CHECK:         tile.make_partition_view {{.*}} !tile.tensor_view<64x768xf32, strides [768, 1], offset 0>>
// CHECK:         arith.truncf {{.*}} : f32 to bf16

// CPU-LABEL: func.func @bias_grad(
// CPU-NEXT:    tile.buffer : memref<768xbf16>
// CPU-NEXT:    tile.launch @bias_grad_reduce_sum_0
// CPU-NEXT:    func.return

// -----

// 8192 columns are 256 tiles 32 wide: the grid fills without a split.
func.func @wide(%x: tensor<512x8192xf32>) -> tensor<8192xf32> {
  %0 = "graph.reduce_max"(%x) <{axes = array<i64: 0>}> : (tensor<512x8192xf32>) -> tensor<8192xf32>
  func.return %0 : tensor<8192xf32>
}

// CHECK-LABEL: func.func @wide(
// CHECK-NEXT:    tile.buffer : memref<8192xf32>
// CHECK-NEXT:    tile.launch @wide_reduce_max_0
// CHECK-NEXT:    func.return

// -----

// 200 rows cannot make two chunks of 128: one kernel.
func.func @short(%x: tensor<200x64xf32>) -> tensor<64xf32> {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 0>}> : (tensor<200x64xf32>) -> tensor<64xf32>
  func.return %0 : tensor<64xf32>
}

// CHECK-LABEL: func.func @short(
// CHECK-NEXT:    tile.buffer : memref<64xf32>
// CHECK-NEXT:    tile.launch @short_reduce_sum_0
// CHECK-NEXT:    func.return

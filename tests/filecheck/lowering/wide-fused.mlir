// A fused group with many inputs and results gets tiles small enough that all of them
// fit the kernel's on-chip budget (the tile verifier would reject the kernel otherwise):
// 8 inputs + 8 results share 1 MiB, i.e. 16384 f32 each (also the 64 KiB tile limit).
// By default tiles hold 4096 elements (16x256); asking for more gives 64x256, no more.
// RUN: strata-opt %s -p fuse-elementwise,lower-graph-to-tile | filecheck %s
// RUN: strata-opt %s -p 'fuse-elementwise,lower-graph-to-tile{tile_elements=65536}' | filecheck %s --check-prefix=BIG
// CHECK: tile.kernel @wide_fused_0
// CHECK-SAME: grid = array<i64: 4, 1>
// CHECK: !tile.partition_view<16x256, !tile.tensor_view<64x256xf32
// BIG: tile.kernel @wide_fused_0
// BIG-SAME: grid = array<i64: 1, 1>
// BIG: !tile.partition_view<64x256, !tile.tensor_view<64x256xf32
func.func @wide(%a: tensor<64x256xf32>, %b: tensor<64x256xf32>, %c: tensor<64x256xf32>, %d: tensor<64x256xf32>, %e: tensor<64x256xf32>, %f: tensor<64x256xf32>, %g: tensor<64x256xf32>, %h: tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>) {
  %0 = "graph.add"(%a, %b) : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %2 = "graph.sub"(%1, %d) : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %3 = "graph.add"(%2, %e) : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %4 = "graph.mul"(%3, %f) : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %5 = "graph.sub"(%4, %g) : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %6 = "graph.add"(%5, %h) : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %7 = "graph.exp"(%6) : (tensor<64x256xf32>) -> tensor<64x256xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>
}

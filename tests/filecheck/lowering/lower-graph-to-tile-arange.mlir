// An integer constant that counts 0, 1, 2, ... along one axis (the column ids a one-hot
// compares with: cross-entropy's and the embedding's gradients) is not loaded by an
// elementwise kernel (@one_hot, a fused group; @rows, one op): tile.iota plus the tile's origin, narrowed to the constant's type.
// Any other constant (@not_counting: 0, 2, 4, ...) and a float one are loaded as before.
// RUN: strata-opt %s -p "fuse-elementwise,lower-graph-to-tile{tile_elements=2048}" | filecheck %s

// CHECK-LABEL: tile.kernel @one_hot_fused_0
// CHECK-NOT:     tensor_view<5x9xi32, strides [0, 1]
// CHECK:         %[[IOTA:.*]] = tile.iota {axis = 1 : i64} : !tile.tile<{{.*}}xi64>
// CHECK:         tile.map %[[IOTA]]
// CHECK:           arith.addi
// CHECK:           arith.trunci %{{.*}} : i64 to i32
// CHECK:         tile.return
func.func @one_hot(%labels: tensor<5x1xi32>) -> tensor<5x9xf32> {
  %ids = graph.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8]]> : tensor<1x9xi32>
  %c = graph.compare %labels, %ids {predicate = "eq"} : (tensor<5x1xi32>, tensor<1x9xi32>) -> tensor<5x9xi1>
  %f = graph.cast %c : (tensor<5x9xi1>) -> tensor<5x9xf32>
  func.return %f : tensor<5x9xf32>
}

// CHECK-LABEL: tile.kernel @rows_compare_0
// CHECK:         tile.iota {axis = 0 : i64} : !tile.tile<{{.*}}xi64>
// CHECK-NOT:     arith.trunci
// CHECK:         tile.return
func.func @rows(%x: tensor<6x4xi64>) -> tensor<6x4xi1> {
  %ids = graph.constant dense<[[0], [1], [2], [3], [4], [5]]> : tensor<6x1xi64>
  %c = graph.compare %x, %ids {predicate = "eq"} : (tensor<6x4xi64>, tensor<6x1xi64>) -> tensor<6x4xi1>
  func.return %c : tensor<6x4xi1>
}

// CHECK-LABEL: tile.kernel @not_counting_compare_0
// CHECK-NOT:     tile.iota
// CHECK:         tensor_view<5x4xi32, strides [0, 1]
// CHECK-NOT:     tile.iota
// CHECK-LABEL: tile.kernel @not_counting_add_1
// CHECK-NOT:     tile.iota
// CHECK:         tensor_view<5x4xf32, strides [0, 1]
// CHECK-NOT:     tile.iota
// CHECK:         tile.return
func.func @not_counting(%labels: tensor<5x1xi32>, %x: tensor<5x4xf32>) -> (tensor<5x4xi1>, tensor<5x4xf32>) {
  %ids = graph.constant dense<[[0, 2, 4, 6]]> : tensor<1x4xi32>
  %w = graph.constant dense<[[0.0, 1.0, 2.0, 3.0]]> : tensor<1x4xf32>
  %c = graph.compare %labels, %ids {predicate = "eq"} : (tensor<5x1xi32>, tensor<1x4xi32>) -> tensor<5x4xi1>
  %s = graph.add %x, %w : (tensor<5x4xf32>, tensor<1x4xf32>) -> tensor<5x4xf32>
  func.return %c, %s : tensor<5x4xi1>, tensor<5x4xf32>
}

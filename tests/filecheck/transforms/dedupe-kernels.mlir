// RUN: strata-opt %s -p 'lower-graph-to-tile,dedupe-kernels' --split-input-file | filecheck %s
// RUN: strata-opt %s -p 'lower-graph-to-tile,dedupe-kernels,lower-tile-to-loops' --split-input-file | filecheck %s --check-prefix=LOOPS

// Two relu kernels of the same shape are one kernel: the first is kept under its name and
// both launches go to it. A relu of another shape, and scales by different constants,
// stay separate kernels.
// CHECK-LABEL: func.func @f
// CHECK:         tile.launch @f_relu_0(%x, %{{.*}})
// CHECK-NEXT:    %{{.*}} = tile.buffer
// CHECK-NEXT:    tile.launch @f_relu_0(%y, %{{.*}})
// CHECK-NEXT:    %{{.*}} = tile.buffer
// CHECK-NEXT:    tile.launch @f_relu_2(%z, %{{.*}})
// CHECK-NEXT:    %{{.*}} = tile.buffer
// CHECK-NEXT:    tile.launch @f_scale_3(%x, %{{.*}})
// CHECK-NEXT:    %{{.*}} = tile.buffer
// CHECK-NEXT:    tile.launch @f_scale_4(%y, %{{.*}})
// CHECK:       tile.kernel @f_relu_0(
// CHECK-NOT:   tile.kernel @f_relu_1
// CHECK:       tile.kernel @f_relu_2(%{{.*}}: memref<32xf32>
// CHECK:       tile.kernel @f_scale_3(
// CHECK:         arith.constant 2.000000e+00 : f32
// CHECK:       tile.kernel @f_scale_4(
// CHECK:         arith.constant 3.000000e+00 : f32

// Lowered afterwards, only the kept kernels become functions.
// LOOPS-LABEL: func.func @f
// LOOPS-COUNT-2: tile.launch @f_relu_0(
// LOOPS:       func.func @f_relu_0(
// LOOPS-NOT:   func.func @f_relu_1(
// LOOPS:       func.func @f_relu_2(
func.func @f(%x: tensor<64xf32>, %y: tensor<64xf32>, %z: tensor<32xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>) {
  %0 = "graph.relu"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %1 = "graph.relu"(%y) : (tensor<64xf32>) -> tensor<64xf32>
  %2 = "graph.relu"(%z) : (tensor<32xf32>) -> tensor<32xf32>
  %3 = "graph.scale"(%x) <{value = 2.0 : f64}> : (tensor<64xf32>) -> tensor<64xf32>
  %4 = "graph.scale"(%y) <{value = 3.0 : f64}> : (tensor<64xf32>) -> tensor<64xf32>
  func.return %0, %1, %2, %3, %4 : tensor<64xf32>, tensor<64xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>
}

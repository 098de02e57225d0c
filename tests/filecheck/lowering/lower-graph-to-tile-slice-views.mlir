// lower-graph-to-tile: a slice whose readers all take strided views (elementwise kernels,
// concat, slice, reshape) is a view of its operand's buffer, not a copy. @absorbed: the
// add reads x through strides [6, 1] at offset 3 and may run in place on y only (never on
// the shared x). @returned: a returned slice is copied out (one slice kernel). @squeezed:
// the reshape dropping the slice's size-1 axis keeps the view ([10, 1], offset 5).
// RUN: strata-opt %s -p lower-graph-to-tile | filecheck %s

// CHECK-LABEL: func.func @absorbed(
// CHECK-NOT:     tile.launch @absorbed_slice
// CHECK:         tile.launch @absorbed_add_0(%x, %y, %{{.*}})
// CHECK-LABEL: func.func @returned(
// CHECK:         tile.launch @returned_slice_0(%x, %{{.*}})
// CHECK-LABEL: func.func @squeezed(
// CHECK-NOT:     tile.launch @squeezed_slice
// CHECK:         tile.launch @squeezed_exp_0(%x, %{{.*}})
// CHECK-LABEL: tile.kernel @absorbed_add_0(
// CHECK-SAME:    tile.in_place = array<i64: 1>
// CHECK:         tile.make_tensor_view %0 : memref<24xf32> -> !tile.tensor_view<4x2xf32, strides [6, 1], offset 3>
// CHECK-LABEL: tile.kernel @returned_slice_0(
// CHECK:         tile.make_tensor_view %0 : memref<24xf32> -> !tile.tensor_view<4x2xf32, strides [6, 1], offset 3>
// CHECK-LABEL: tile.kernel @squeezed_exp_0(
// CHECK:         tile.make_tensor_view %0 : memref<30xf32> -> !tile.tensor_view<3x5xf32, strides [10, 1], offset 5>

func.func @absorbed(%x: tensor<4x6xf32>, %y: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 3>, limits = array<i64: 4, 5>, steps = array<i64: 1, 1>}> : (tensor<4x6xf32>) -> tensor<4x2xf32>
  %1 = "graph.add"(%0, %y) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %1 : tensor<4x2xf32>
}

func.func @returned(%x: tensor<4x6xf32>) -> tensor<4x2xf32> {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 3>, limits = array<i64: 4, 5>, steps = array<i64: 1, 1>}> : (tensor<4x6xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

func.func @squeezed(%x: tensor<3x2x5xf32>) -> tensor<3x5xf32> {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 1, 0>, limits = array<i64: 3, 2, 5>, steps = array<i64: 1, 1, 1>}> : (tensor<3x2x5xf32>) -> tensor<3x1x5xf32>
  %1 = "graph.reshape"(%0) : (tensor<3x1x5xf32>) -> tensor<3x5xf32>
  %2 = "graph.exp"(%1) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %2 : tensor<3x5xf32>
}

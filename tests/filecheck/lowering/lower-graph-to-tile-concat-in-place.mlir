// lower-graph-to-tile: a concat input computed by a kernel for the concat alone (directly
// or through a layout-keeping reshape) is computed straight into its region of the
// concat's output. @placed: the add and the exp store into the 4x6 output through strides
// [6, 1] at offsets 0 and 3; no concat kernel. @mixed: an argument (x) and a result the
// function also returns (the add's) are copied in: two concat kernels. @interleaved: the
// FFT's interleave, rows of add and sub alternating through [4, 1, 3] reshapes.
// RUN: strata-opt %s -p lower-graph-to-tile | filecheck %s

// CHECK-LABEL: func.func @placed(
// CHECK-NEXT:    %[[OUT:.*]] = tile.buffer : memref<24xf32>
// CHECK-NEXT:    tile.launch @placed_add_0(%x, %y, %[[OUT]])
// CHECK-NEXT:    tile.launch @placed_exp_1(%x, %[[OUT]])
// CHECK-NOT:     tile.launch
// CHECK:         func.return %[[OUT]]
// CHECK-LABEL: func.func @mixed(
// CHECK:         tile.launch @mixed_add_0
// CHECK:         tile.launch @mixed_concat_1(%x,
// CHECK:         tile.launch @mixed_concat_2(
// CHECK-LABEL: func.func @interleaved(
// CHECK-NEXT:    %[[ROWS:.*]] = tile.buffer : memref<24xf32>
// CHECK-NEXT:    tile.launch @interleaved_add_0(%x, %y, %[[ROWS]])
// CHECK-NEXT:    tile.launch @interleaved_sub_1(%x, %y, %[[ROWS]])
// CHECK-NOT:     tile.launch
// CHECK-LABEL: tile.kernel @placed_add_0(
// CHECK-NOT:     tile.in_place
// CHECK:         tile.store_view_tko {{.*}} !tile.tensor_view<4x3xf32, strides [6, 1], offset 0>
// CHECK-LABEL: tile.kernel @placed_exp_1(
// CHECK:         tile.store_view_tko {{.*}} !tile.tensor_view<4x3xf32, strides [6, 1], offset 3>
// CHECK-LABEL: tile.kernel @interleaved_sub_1(
// CHECK:         tile.store_view_tko {{.*}} !tile.tensor_view<4x3xf32, strides [6, 1], offset 3>

func.func @placed(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %0 = "graph.add"(%x, %y) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = "graph.exp"(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = "graph.concat"(%0, %1) <{axis = 1 : i64}> : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  func.return %2 : tensor<4x6xf32>
}

func.func @mixed(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> (tensor<8x3xf32>, tensor<4x3xf32>) {
  %0 = "graph.add"(%x, %y) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = "graph.concat"(%x, %0) <{axis = 0 : i64}> : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  func.return %1, %0 : tensor<8x3xf32>, tensor<4x3xf32>
}

func.func @interleaved(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %0 = "graph.add"(%x, %y) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = "graph.sub"(%x, %y) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = "graph.reshape"(%0) : (tensor<4x3xf32>) -> tensor<4x1x3xf32>
  %3 = "graph.reshape"(%1) : (tensor<4x3xf32>) -> tensor<4x1x3xf32>
  %4 = "graph.concat"(%2, %3) <{axis = 1 : i64}> : (tensor<4x1x3xf32>, tensor<4x1x3xf32>) -> tensor<4x2x3xf32>
  %5 = "graph.reshape"(%4) : (tensor<4x2x3xf32>) -> tensor<8x3xf32>
  func.return %5 : tensor<8x3xf32>
}

// Ambient promotion pads no operand, down to the kernels (lower-vsla-to-graph, then
// lower-graph-to-tile with its slice views and concats computed in place): each operand
// element is read once and each result element written once. @add: the add of the common
// part writes the output's first two elements, a copy of a's tail the last; b is read by
// the add alone. @sub2d ([2, 5] - [4, 3] -> [4, 5]): the difference of the common [2, 3],
// a's tail columns, -b's tail rows and the zeros where neither reaches, all into the one
// output buffer.
// RUN: strata-opt %s -p 'lower-vsla-to-graph,canonicalize,cse,lower-graph-to-tile' | filecheck %s

// CHECK-LABEL: func.func @add(
// CHECK-NEXT:    %[[OUT:.*]] = tile.buffer : memref<3xf32>
// CHECK-NEXT:    tile.launch @add_add_0(%a, %b, %[[OUT]])
// CHECK-NEXT:    tile.launch @add_concat_1(%a, %[[OUT]])
// CHECK-NEXT:    func.return %[[OUT]]
func.func @add(%a: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {
  %0 = vsla.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @sub2d(
// CHECK-NEXT:    %[[OUT:.*]] = tile.buffer : memref<20xf32>
// CHECK-NEXT:    tile.launch @sub2d_sub_0(%a, %b, %[[OUT]])
// CHECK-NEXT:    tile.launch @sub2d_concat_1(%a, %[[OUT]])
// CHECK-NEXT:    tile.launch @sub2d_neg_2(%b, %[[OUT]])
// CHECK-NEXT:    %[[ZEROS:.*]] = tile.buffer {init = dense<0.000000e+00> : tensor<2x2xf32>} : memref<4xf32>
// CHECK-NEXT:    tile.launch @sub2d_concat_3(%[[ZEROS]], %[[OUT]])
// CHECK-NEXT:    func.return %[[OUT]]
func.func @sub2d(%a: tensor<2x5xf32>, %b: tensor<4x3xf32>) -> tensor<4x5xf32> {
  %0 = vsla.sub %a, %b : (tensor<2x5xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// RUN: strata-opt %s -p fuse-patterns,dce --split-input-file | filecheck %s

// A transpose of the last two axes becomes transpose_b; a scale of the result becomes alpha.
// CHECK-LABEL: func.func @transpose_and_scale
// CHECK-NEXT:    %[[M:.*]] = graph.matmul %x, %w {transpose_b = true, alpha = 1.250000e-01 : f64}
// CHECK-NEXT:    func.return %[[M]]
func.func @transpose_and_scale(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %t = "graph.transpose"(%w) <{permutation = array<i64: 1, 0>}> : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %m = "graph.matmul"(%x, %t) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y = "graph.scale"(%m) <{value = 0.125 : f64}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// An already transposed operand flips back; a batched transpose of the last two axes is
// absorbed too; a transpose of other axes is not.
// CHECK-LABEL: func.func @flags
// CHECK-NEXT:    %[[A:.*]] = graph.matmul %x, %x : (tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK-NEXT:    %[[P:.*]] = graph.transpose %y {permutation = array<i64: 1, 0, 2>}
// CHECK-NEXT:    %[[B:.*]] = graph.matmul %[[P]], %y
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @flags(%x: tensor<2x4x4xf32>, %y: tensor<4x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<4x4x4xf32>) {
  %t = "graph.transpose"(%x) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %a = "graph.matmul"(%t, %x) <{transpose_a = true}> : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p = "graph.transpose"(%y) <{permutation = array<i64: 1, 0, 2>}> : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %b = "graph.matmul"(%p, %y) : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  func.return %a, %b : tensor<2x4x4xf32>, tensor<4x4x4xf32>
}

// -----

// Division by a scalar constant and a scaled operand fold into alpha; a scale of a
// matmul result that is also used elsewhere is left alone.
// CHECK-LABEL: func.func @alpha
// CHECK-NEXT:    %[[D:.*]] = graph.matmul %x, %x {alpha = 1.250000e-01 : f64}
// CHECK-NEXT:    %[[M:.*]] = graph.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT:    %[[S:.*]] = graph.scale %[[M]] {value = 3.000000e+00 : f64}
// CHECK-NEXT:    func.return %[[D]], %[[M]], %[[S]]
func.func @alpha(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %c = "graph.constant"() <{value = dense<4.0> : tensor<f32>}> : () -> tensor<f32>
  %h = "graph.scale"(%x) <{value = 0.5 : f64}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %0 = "graph.matmul"(%h, %x) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "graph.div"(%0, %c) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %m = "graph.matmul"(%x, %x) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = "graph.scale"(%m) <{value = 3.0 : f64}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %1, %m, %s : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

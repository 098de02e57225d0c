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

// -----

// Explicit attention with a causal select mask becomes graph.attention {causal = true}.
// CHECK-LABEL: func.func @attention_causal
// CHECK-NEXT:    %[[A:.*]] = graph.attention %q, %k, %v {scale = 2.500000e-01 : f64, causal = true}
// CHECK-NEXT:    func.return %[[A]]
func.func @attention_causal(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = "graph.matmul"(%q, %k) <{transpose_b = true, alpha = 0.25 : f64}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %mask = "graph.constant"() <{value = dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>}> : () -> tensor<4x4xi1>
  %big = "graph.constant"() <{value = dense<-1.0e9> : tensor<f32>}> : () -> tensor<f32>
  %m = "graph.select"(%mask, %big, %s) : (tensor<4x4xi1>, tensor<f32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p = "graph.softmax"(%m) <{axis = -1 : i64}> : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = "graph.matmul"(%p, %v) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %o : tensor<2x4x8xf32>
}

// -----

// Not attention: the softmax is over a non-last axis; and a probability matrix that is
// also returned (used twice) must stay.
// CHECK-LABEL: func.func @not_attention
// CHECK-NOT:     graph.attention
// CHECK:         graph.softmax {{.*}} {axis = 1 : i64}
// CHECK:         graph.softmax
// CHECK-NOT:     graph.attention
func.func @not_attention(%q: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %s = "graph.matmul"(%q, %q) <{transpose_b = true}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %p = "graph.softmax"(%s) <{axis = 1 : i64}> : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = "graph.matmul"(%p, %v) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s2 = "graph.matmul"(%q, %q) <{transpose_b = true}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %p2 = "graph.softmax"(%s2) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o2 = "graph.matmul"(%p2, %v) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %o, %o2, %p2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// The 8-op tanh GELU becomes one graph.gelu; a variant with the wrong constant does not.
// CHECK-LABEL: func.func @gelu
// CHECK:         %[[G:.*]] = graph.gelu %x {approximate = "tanh"}
// CHECK:         graph.tanh
// CHECK:         func.return %[[G]]
func.func @gelu(%x: tensor<7xf32>) -> (tensor<7xf32>, tensor<7xf32>) {
  %one = "graph.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "graph.mul"(%x, %x) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  %1 = "graph.mul"(%0, %x) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  %2 = "graph.scale"(%1) <{value = 0.044715 : f64}> : (tensor<7xf32>) -> tensor<7xf32>
  %3 = "graph.add"(%x, %2) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  %4 = "graph.scale"(%3) <{value = 0.79788456080286541 : f64}> : (tensor<7xf32>) -> tensor<7xf32>
  %5 = "graph.tanh"(%4) : (tensor<7xf32>) -> tensor<7xf32>
  %6 = "graph.add"(%5, %one) : (tensor<7xf32>, tensor<f32>) -> tensor<7xf32>
  %7 = "graph.mul"(%x, %6) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  %8 = "graph.scale"(%7) <{value = 0.5 : f64}> : (tensor<7xf32>) -> tensor<7xf32>
  %w = "graph.scale"(%1) <{value = 0.05 : f64}> : (tensor<7xf32>) -> tensor<7xf32>
  %a = "graph.add"(%x, %w) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  %b = "graph.scale"(%a) <{value = 0.79788456080286541 : f64}> : (tensor<7xf32>) -> tensor<7xf32>
  %c = "graph.tanh"(%b) : (tensor<7xf32>) -> tensor<7xf32>
  %d = "graph.add"(%c, %one) : (tensor<7xf32>, tensor<f32>) -> tensor<7xf32>
  %e = "graph.mul"(%x, %d) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  %f = "graph.scale"(%e) <{value = 0.5 : f64}> : (tensor<7xf32>) -> tensor<7xf32>
  func.return %8, %f : tensor<7xf32>, tensor<7xf32>
}

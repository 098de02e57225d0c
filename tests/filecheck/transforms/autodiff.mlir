// RUN: strata-opt %s -p autodiff --split-input-file | filecheck %s
// RUN: strata-opt %s -p 'autodiff{checkpoint=none}' --split-input-file | filecheck %s --check-prefix=RECOMPUTE

// matmul (transpose_b): da = dy @ w, db = dyᵀ @ x: two matmuls with the transposes folded
// into their flags. The forward is cloned first; @matmul itself is left as it was.
// CHECK-LABEL: func.func @matmul(
// CHECK:         func.return
// CHECK-LABEL: func.func @matmul_grad(%x: tensor<4x8xf32>, %w: tensor<3x8xf32>, %d_result0: tensor<4x3xf32> {graph.name = "d_result0"}) -> (tensor<4x3xf32>, tensor<4x8xf32>, tensor<3x8xf32>)
// CHECK-NEXT:    %[[Y:.*]] = graph.matmul %x, %w {transpose_b = true} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = graph.matmul %d_result0, %w : (tensor<4x3xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[DW:.*]] = graph.matmul %d_result0, %x {transpose_a = true} : (tensor<4x3xf32>, tensor<4x8xf32>) -> tensor<3x8xf32>
// CHECK-NEXT:    func.return %[[Y]], %[[DX]], %[[DW]]
func.func @matmul(%x: tensor<4x8xf32>, %w: tensor<3x8xf32>) -> tensor<4x3xf32> attributes {graph.differentiate} {
  %0 = "graph.matmul"(%x, %w) <{transpose_b = true}> : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

// add with a broadcast [1, 8] operand: its cotangent is summed over the broadcast axis and
// reshaped back; the other operand takes the cotangent as it is.
// CHECK-LABEL: func.func @bias_grad(
// CHECK:         %[[SUM:.*]] = graph.reduce_sum %d_result0 {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[DB:.*]] = graph.reshape %[[SUM]] : (tensor<8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    func.return %{{.*}}, %d_result0, %[[DB]]
func.func @bias(%x: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> attributes {graph.differentiate} {
  %0 = "graph.add"(%x, %b) : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// -----

// relu: the cotangent where x > 0, else 0: a compare mask and a select.
// CHECK-LABEL: func.func @relu_grad(
// CHECK:         %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[MASK:.*]] = graph.compare %x, %[[ZERO]] {predicate = "gt"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %[[DX:.*]] = graph.select %[[MASK]], %d_result0, %[[ZERO]]
// CHECK-NEXT:    func.return %{{.*}}, %[[DX]]
func.func @relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {graph.differentiate} {
  %0 = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// -----

// Fan-out: %e feeds both the neg and the mul, so its two cotangents are summed by one
// graph.add before exp's rule (dx = d%e · e^x) runs.
// CHECK-LABEL: func.func @fan_out_grad(
// CHECK:         %[[E:.*]] = graph.exp %x
// CHECK-NEXT:    %[[N:.*]] = graph.neg %[[E]]
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %[[E]], %[[N]]
// CHECK-NEXT:    %[[FROM_MUL:.*]] = graph.mul %d_result0, %[[N]]
// CHECK-NEXT:    %[[DN:.*]] = graph.mul %d_result0, %[[E]]
// CHECK-NEXT:    %[[FROM_NEG:.*]] = graph.neg %[[DN]]
// CHECK-NEXT:    %[[DE:.*]] = graph.add %[[FROM_MUL]], %[[FROM_NEG]]
// CHECK-NEXT:    %[[DX:.*]] = graph.mul %[[DE]], %[[E]]
// CHECK-NEXT:    func.return %[[Y]], %[[DX]]
func.func @fan_out(%x: tensor<4xf32>) -> tensor<4xf32> attributes {graph.differentiate} {
  %e = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %n = "graph.neg"(%e) : (tensor<4xf32>) -> tensor<4xf32>
  %0 = "graph.mul"(%e, %n) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Dead gradients: the constant weight gets no matmul (no dyᵀ-style product), the select's
// constant branch nothing, and %y, which only reaches the result through a compare, gets
// zeros without any backward computation.
// CHECK-LABEL: func.func @dead_grad(
// CHECK:         %[[Y:.*]] = graph.matmul %s, %c :
// CHECK-NEXT:    %[[DS:.*]] = graph.matmul %d_result0, %c {transpose_b = true}
// CHECK-NOT:     graph.matmul
// CHECK:         %[[DX:.*]] = graph.select %m, %[[DS]], %{{.*}}
// CHECK-NEXT:    %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[DY:.*]] = graph.broadcast_to %[[ZERO]] : (tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[Y]], %[[DX]], %[[DY]]
func.func @dead(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x3xf32> attributes {graph.differentiate} {
  %c = "graph.constant"() <{value = dense<0.5> : tensor<8x3xf32>}> : () -> tensor<8x3xf32>
  %m = "graph.compare"(%y, %x) <{predicate = "lt"}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %z = "graph.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %s = "graph.select"(%m, %x, %z) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %0 = "graph.matmul"(%s, %c) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

// checkpoint=none: the cheap tanh is recomputed inside the backward part (so only its
// input %h, a matmul result, stays live across); the graph.checkpoint-marked sigmoid is
// read from the forward part. %w's two cotangents meet in a graph.add.
// RECOMPUTE-LABEL: func.func @policy_grad(
// RECOMPUTE:         %[[H:.*]] = graph.matmul %x, %w
// RECOMPUTE-NEXT:    %[[T:.*]] = graph.tanh %[[H]]
// RECOMPUTE-NEXT:    %[[S:.*]] = graph.sigmoid %[[T]] {graph.checkpoint}
// RECOMPUTE-NEXT:    %[[Y:.*]] = graph.matmul %[[S]], %w
// RECOMPUTE:         graph.sub %{{.*}}, %[[S]]
// RECOMPUTE:         %[[T2:.*]] = graph.tanh %[[H]]
// RECOMPUTE-NEXT:    graph.constant
// RECOMPUTE-NEXT:    graph.mul %[[T2]], %[[T2]]
// RECOMPUTE:         %[[DW:.*]] = graph.add
// RECOMPUTE-NEXT:    func.return %[[Y]], %{{.*}}, %[[DW]]
func.func @policy(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {graph.differentiate} {
  %h = "graph.matmul"(%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = "graph.tanh"(%h) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = "graph.sigmoid"(%t) {graph.checkpoint} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %0 = "graph.matmul"(%s, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}

// -----

// attention: one graph.attention_grad of q, k, v, the forward's output and its cotangent
// (the probabilities are recomputed by whatever computes it, never saved); no softmax or
// matmul is added for the backward.
// CHECK-LABEL: func.func @attention_grad(
// CHECK:         %[[O:.*]] = graph.attention %q, %k, %v {scale = 5.000000e-01 : f64, causal = true}
// CHECK-NEXT:    %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = graph.attention_grad %q, %k, %v, %[[O]], %d_result0 {scale = 5.000000e-01 : f64, causal = true} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>)
// CHECK-NEXT:    func.return %[[O]], %[[DQ]], %[[DK]], %[[DV]]
func.func @attention(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> attributes {graph.differentiate} {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 0.5 : f64, causal = true}> : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  func.return %0 : tensor<2x8x4xf32>
}

// -----

// embedding: the table's cotangent is one graph.embedding_grad of the result's cotangent and
// the ids (rows added by id), not a one-hot of the ids and a matmul; the ids get none.
// CHECK-LABEL: func.func @embed_grad(
// CHECK:         %[[E:.*]] = graph.embedding %table, %ids
// CHECK-NEXT:    %[[DT:.*]] = graph.embedding_grad %d_result0, %ids {vocabulary = 50 : i64} : (tensor<2x3x16xf32>, tensor<2x3xi64>) -> tensor<50x16xf32>
// CHECK-NEXT:    func.return %[[E]], %[[DT]] : tensor<2x3x16xf32>, tensor<50x16xf32>
// CHECK-NOT:     graph.compare
// CHECK-NOT:     graph.matmul
func.func @embed(%table: tensor<50x16xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x16xf32> attributes {graph.differentiate} {
  %0 = "graph.embedding"(%table, %ids) : (tensor<50x16xf32>, tensor<2x3xi64>) -> tensor<2x3x16xf32>
  func.return %0 : tensor<2x3x16xf32>
}

// -----

// embedding with a padding_idx: its embedding_grad carries it (that row gets no gradient).
// CHECK-LABEL: func.func @embed_padded_grad(
// CHECK:         graph.embedding %table, %ids {padding_idx = 3 : i64}
// CHECK-NEXT:    graph.embedding_grad %d_result0, %ids {vocabulary = 50 : i64, padding_idx = 3 : i64} : (tensor<2x3x16xf32>, tensor<2x3xi64>) -> tensor<50x16xf32>
func.func @embed_padded(%table: tensor<50x16xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x16xf32> attributes {graph.differentiate} {
  %0 = "graph.embedding"(%table, %ids) <{padding_idx = 3 : i64}> : (tensor<50x16xf32>, tensor<2x3xi64>) -> tensor<2x3x16xf32>
  func.return %0 : tensor<2x3x16xf32>
}

// RUN: strata-opt %s -p add-dropout-step | filecheck %s
// RUN: strata-opt %s -p add-dropout-step,autodiff | filecheck %s --check-prefix=GRAD
//
// add-dropout-step: a function with step-less dropouts gets a trailing rank-0 i64 input
// `dropout_step`, which becomes the step of each of them; a dropout that has a step keeps
// it, and a function without dropouts is unchanged. After autodiff, the gradient
// recomputes the mask with the same step.

func.func @train(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {graph.name = "w", graph.role = "param"}, %mine: tensor<i64>) -> tensor<f32> attributes {graph.differentiate} {
  %0 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = graph.dropout %0 {p = 1.000000e-01 : f64, seed = 7 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = graph.dropout %1, %mine {p = 2.000000e-01 : f64, seed = 9 : i64} : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
  %3 = graph.reduce_sum %2 {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  func.return %3 : tensor<f32>
}

func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @train(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {graph.name = "w", graph.role = "param"}, %mine: tensor<i64>, %dropout_step: tensor<i64> {graph.name = "dropout_step", graph.role = "input"}) -> tensor<f32>
// CHECK:         graph.dropout %{{.*}}, %dropout_step {p = 1.000000e-01 : f64, seed = 7 : i64}
// CHECK:         graph.dropout %{{.*}}, %mine {p = 2.000000e-01 : f64, seed = 9 : i64}
// CHECK-LABEL: func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32>

// GRAD-LABEL: func.func @train_grad(
// GRAD-SAME:     %dropout_step: tensor<i64>
// GRAD:          graph.dropout %{{.*}}, %dropout_step {p = 1.000000e-01 : f64, seed = 7 : i64}
// GRAD:          graph.dropout %{{.*}}, %mine {p = 2.000000e-01 : f64, seed = 9 : i64}
// GRAD:          graph.dropout %{{.*}}, %{{.*}} {p = 2.000000e-01 : f64, seed = 9 : i64}
// GRAD:          graph.dropout %{{.*}}, %{{.*}} {p = 1.000000e-01 : f64, seed = 7 : i64}

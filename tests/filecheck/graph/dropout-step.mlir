// RUN: strata-opt %s | strata-opt | filecheck %s
// RUN: strata-opt %s --print-op-generic | strata-opt --print-op-generic | filecheck %s --check-prefix=GENERIC
//
// graph.dropout with and without its optional run-time step (a rank-0 i64 tensor that
// re-keys the mask: docs/dropout-rng.md) prints and parses back unchanged.

func.func @dropouts(%x: tensor<4x8xf32>, %step: tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = graph.dropout %x {p = 1.000000e-01 : f64, seed = 7 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = graph.dropout %x, %step {p = 2.500000e-01 : f64, seed = -3 : i64} : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
  func.return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @dropouts(%x: tensor<4x8xf32>, %step: tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %0 = graph.dropout %x {p = 1.000000e-01 : f64, seed = 7 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %1 = graph.dropout %x, %step {p = 2.500000e-01 : f64, seed = -3 : i64} : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>

// GENERIC: "graph.dropout"(%x) <{p = 1.000000e-01 : f64, seed = 7 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: "graph.dropout"(%x, %step) <{p = 2.500000e-01 : f64, seed = -3 : i64}> : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>

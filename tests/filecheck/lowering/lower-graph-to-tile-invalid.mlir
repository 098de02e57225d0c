// An op in a graph function without a registered tile lowering is reported (naming the
// op and its location) and the pass fails; it is never skipped, and no partial program
// is printed.
// RUN: not strata-opt %s -p lower-graph-to-tile 2>&1 | filecheck %s

// (graph.dropout was the example here until it got a CPU lowering; a tensor-valued
// arith.constant has no entry in the per-op registry either.)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = arith.constant dense<1.000000e+00> : tensor<4xf32>
  %1 = "graph.add"(%0, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// CHECK-NOT:   builtin.module
// CHECK:       strata-opt: {{.*}}lower-graph-to-tile-invalid.mlir:[[# @LINE - 6]]:3: error: 'arith.constant' cannot be lowered to tile kernels yet (no CPU lowering registered); run it with --target reference
// CHECK-NOT:   builtin.module
// CHECK-NOT:   tile.

// lower-vsla-to-graph{capacity=true}: the shapes are capacities. The function gains one
// argument per thing that depends on a call's logical shapes, named in
// vsla.runtime_inputs ("kind:op", op = position among the function's vsla ops): the
// Kronecker product gathers from the outer product through a runtime index (the logical
// n sets its layout), exp (e^0 = 1) selects through a mask so its slack stays zero, relu
// (relu(0) = 0) needs nothing, and mean sums and multiplies by 1 / the logical extent.
// RUN: strata-opt %s -p 'lower-vsla-to-graph{capacity=true}' | filecheck %s

// CHECK:      func.func @f(%a: tensor<4xf32>, %b: tensor<3xf32>, %[[INDEX:.*]]: tensor<12xi64>, %[[MASK:.*]]: tensor<4xi1>, %[[COUNT:.*]]: tensor<f64>)
// CHECK-SAME:   attributes {vsla.runtime_inputs = ["kron_index:0", "mask:1", "inverse_count:4"]}
// CHECK:        graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<12xf32>, tensor<1xf32>) -> tensor<13xf32>
// CHECK:        graph.embedding %{{.*}}, %[[INDEX]] : (tensor<13x1xf32>, tensor<12xi64>) -> tensor<12x1xf32>
// CHECK:        %[[EXP:.*]] = graph.exp %a
// CHECK:        graph.select %[[MASK]], %[[EXP]], %{{.*}} : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:   graph.relu %b : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NOT:    graph.select
// CHECK-NOT:    graph.reduce_mean
// CHECK:        graph.reduce_sum %{{.*}} {axes = array<i64: 0>} : (tensor<2x4xf64>) -> tensor<4xf64>
// CHECK-NEXT:   graph.mul %{{.*}}, %[[COUNT]] : (tensor<4xf64>, tensor<f64>) -> tensor<4xf64>

func.func @f(%a: tensor<4xf32>, %b: tensor<3xf32>) -> (tensor<12xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) {
  %0 = vsla.kron %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<12xf32>
  %1 = vsla.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  %2 = vsla.relu %b : (tensor<3xf32>) -> tensor<3xf32>
  %3 = vsla.stack %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  %4 = vsla.mean %3 {axis = 0 : i64} : (tensor<2x4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2, %4 : tensor<12xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>
}

// RUN: strata-opt %s -p fuse-elementwise | filecheck %s
// RUN: strata-opt %s -p fuse-elementwise,lower-graph-to-tile | filecheck %s --check-prefix=TILE

// The shape of a log_softmax loss's gradient: the compare group {%c, %1} reads the
// log_softmax result (through %1), so the group also depends on it once %2 joins, although
// %2 itself does not. %5 may not join the log_softmax's group as its epilogue: it reads
// %3, the reduce_sum of %2, which would make that group consume its own result. Two fused
// ops remain, {log_softmax, exp} and {compare, select, select}, then the reduce_sum and
// the mul, each defined before its uses (lowering to tile kernels, in that order, works).
// CHECK-LABEL: func.func @row_epilogue_cycle
// CHECK-NEXT:    %z = graph.constant
// CHECK-NEXT:    %[[R:[0-9a-z_]+]], %[[E:[0-9a-z_]+]] = graph.fused %x : (tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<4x5xf32>):
// CHECK-NEXT:      %[[L:.*]] = graph.log_softmax %[[X]]
// CHECK-NEXT:      %[[X2:.*]] = graph.exp %[[L]]
// CHECK-NEXT:      graph.yield %[[L]], %[[X2]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S:[0-9a-z_]+]], %[[B:[0-9a-z_]+]] = graph.fused %a, %b, %[[R]], %z, %g : {{.*}} -> (tensor<4x5xf32>, tensor<4x5xf32>) {
// CHECK-NEXT:    ^{{.*}}:
// CHECK-NEXT:      graph.compare
// CHECK-NEXT:      graph.select
// CHECK-NEXT:      graph.select
// CHECK-NEXT:      graph.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUM:.*]] = graph.reduce_sum %[[B]]
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[E]], %[[SUM]]
// CHECK-NEXT:    func.return %[[S]], %[[M]]
// TILE-LABEL: func.func @row_epilogue_cycle
// TILE:          tile.launch @row_epilogue_cycle_log_softmax_0(%x, %[[L:[0-9]+]], %[[E:[0-9]+]])
// TILE:          tile.launch @row_epilogue_cycle_fused_1(%a, %b, %[[L]], %{{[0-9]+}}, %g, %[[S:[0-9]+]], %[[B:[0-9]+]])
// TILE:          tile.launch @row_epilogue_cycle_reduce_sum_2(%[[B]], %[[SUM:[0-9]+]])
// TILE:          tile.launch @row_epilogue_cycle_mul_3(%[[E]], %[[SUM]], %[[M:[0-9]+]])
// TILE-NEXT:     func.return %[[S]], %[[M]]
func.func @row_epilogue_cycle(%x: tensor<4x5xf32>, %a: tensor<4x1xi64>, %b: tensor<5xi64>, %g: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %z = "graph.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "graph.log_softmax"(%x) : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %c = "graph.compare"(%a, %b) {predicate = "eq"} : (tensor<4x1xi64>, tensor<5xi64>) -> tensor<4x5xi1>
  %1 = "graph.select"(%c, %0, %z) : (tensor<4x5xi1>, tensor<4x5xf32>, tensor<f32>) -> tensor<4x5xf32>
  %2 = "graph.select"(%c, %g, %z) : (tensor<4x5xi1>, tensor<4x5xf32>, tensor<f32>) -> tensor<4x5xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: -1>, keepdims = true} : (tensor<4x5xf32>) -> tensor<4x1xf32>
  %4 = "graph.exp"(%0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %5 = "graph.mul"(%4, %3) : (tensor<4x5xf32>, tensor<4x1xf32>) -> tensor<4x5xf32>
  func.return %1, %5 : tensor<4x5xf32>, tensor<4x5xf32>
}

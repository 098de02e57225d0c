// RUN: strata-opt %s -p fuse-elementwise --split-input-file | filecheck %s
// RUN: strata-opt %s -p 'fuse-elementwise{matmul_epilogues=false}' --split-input-file | filecheck %s --check-prefix=NOEPI

// A chain with a broadcast operand becomes one graph.fused with one result.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[F:.*]] = graph.fused %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>):
// CHECK-NEXT:      %[[S:.*]] = graph.add %[[X]], %[[B]]
// CHECK-NEXT:      %[[R:.*]] = graph.relu %[[S]]
// CHECK-NEXT:      %[[T:.*]] = graph.tanh %[[R]]
// CHECK-NEXT:      graph.yield %[[T]] : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[F]]
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.tanh"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----

// An intermediate also used outside the group becomes a second result (computed once),
// not a duplicated computation in two groups.
// CHECK-LABEL: func.func @multi_output
// CHECK-NEXT:    %[[F0:[0-9a-z_]+]], %[[F1:[0-9a-z_]+]] = graph.fused %x : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK:           graph.yield
// CHECK:         graph.matmul %[[F0]], %w
// CHECK-NOT:     graph.exp
// CHECK:         func.return
func.func @multi_output(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.matmul"(%0, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.neg"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Fusing %3 into the group of %0 would make the group depend on itself through the
// matmul: the group stays {%0, %1}. With epilogues, %3 becomes the matmul's epilogue
// (one kernel); without, it stays alone (a single op is never wrapped).
// CHECK-LABEL: func.func @no_cycle
// CHECK-NEXT:    %[[F0:[0-9a-z_]+]], %[[F1:[0-9a-z_]+]] = graph.fused %x
// CHECK:         graph.fused %[[F0]], %w, %[[F1]]
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[R:.*]]: tensor<4x8xf32>):
// CHECK-NEXT:      %[[M:.*]] = graph.matmul %[[A]], %[[W]]
// CHECK-NEXT:      graph.add %[[M]], %[[R]]
// NOEPI-LABEL: func.func @no_cycle
// NOEPI-NEXT:    %[[F0:[0-9a-z_]+]], %[[F1:[0-9a-z_]+]] = graph.fused %x
// NOEPI:         %[[M:.*]] = graph.matmul %[[F0]], %w
// NOEPI-NEXT:    graph.add %[[M]], %[[F1]]
// NOEPI-NEXT:    func.return
func.func @no_cycle(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.tanh"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.matmul"(%0, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.add"(%2, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----

// dropout is a barrier: the ops before and after it fuse separately, it stays outside.
// CHECK-LABEL: func.func @dropout_barrier
// CHECK-NEXT:    %[[A:.*]] = graph.fused %x
// CHECK:         %[[D:.*]] = graph.dropout %[[A]]
// CHECK-NEXT:    %[[B:.*]] = graph.fused %[[D]]
// CHECK-NOT:       graph.dropout
// CHECK:         func.return %[[B]]
func.func @dropout_barrier(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "graph.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %1 = "graph.neg"(%0) : (tensor<16xf32>) -> tensor<16xf32>
  %2 = "graph.dropout"(%1) <{p = 0.5 : f64, seed = 3 : i64}> : (tensor<16xf32>) -> tensor<16xf32>
  %3 = "graph.abs"(%2) : (tensor<16xf32>) -> tensor<16xf32>
  %4 = "graph.sqrt"(%3) : (tensor<16xf32>) -> tensor<16xf32>
  func.return %4 : tensor<16xf32>
}

// -----

// Results of different shapes do not share a kernel: the [8] exp stays apart from the
// [4, 8] chain (it would be recomputed per row otherwise).
// CHECK-LABEL: func.func @shapes_differ
// CHECK-NEXT:    %[[E:.*]] = graph.exp %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[F:.*]] = graph.fused %x, %[[E]]
// CHECK:         func.return %[[F]]
func.func @shapes_differ(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%b) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "graph.mul"(%x, %0) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.relu"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----

// An input defined after the group's first member: the fused op moves after it, and the
// non-elementwise op using the first member's value moves after the fused op.
// CHECK-LABEL: func.func @reordered
// CHECK:         %[[S:.*]] = graph.reduce_sum %y
// CHECK-NEXT:    %[[F0:[0-9a-z_]+]], %[[F1:[0-9a-z_]+]] = graph.fused %x, %[[S]]
// CHECK:         graph.reduce_max %[[F0]]
// CHECK:         func.return
func.func @reordered(%x: tensor<4xf32>, %y: tensor<2x4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.reduce_max"(%0) <{axes = array<i64: 0>}> : (tensor<4xf32>) -> tensor<f32>
  %2 = "graph.reduce_sum"(%y) <{axes = array<i64: 0>}> : (tensor<2x4xf32>) -> tensor<4xf32>
  %3 = "graph.add"(%0, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %3, %1 : tensor<4xf32>, tensor<f32>
}

// -----

// Bias, activation and residual after a matmul become its epilogue: one group headed by
// the matmul. Two matmul-headed groups never merge: the add that joins them stays in the
// first matmul's group and reads the second matmul's result (a lone matmul is not wrapped).
// CHECK-LABEL: func.func @epilogues
// CHECK-NEXT:    %[[G:.*]] = graph.matmul %y, %w2
// CHECK-NEXT:    graph.fused %x, %w, %b, %[[G]]
// CHECK-NEXT:    ^{{.*}}:
// CHECK-NEXT:      %[[M:.*]] = graph.matmul
// CHECK-NEXT:      %[[S:.*]] = graph.add %[[M]]
// CHECK-NEXT:      %[[R:.*]] = graph.relu %[[S]]
// CHECK-NEXT:      graph.add %[[R]]
// CHECK-NEXT:      graph.yield
// NOEPI-LABEL: func.func @epilogues
// NOEPI:         graph.matmul %x, %w
// NOEPI:         graph.matmul %y, %w2
// NOEPI:         graph.fused
func.func @epilogues(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %y: tensor<4x8xf32>, %w2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%0, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.relu"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.matmul"(%y, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %4 = "graph.add"(%2, %3) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %4 : tensor<4x8xf32>
}

// -----

// A group computed before the matmul is not pulled into the matmul's group (its ops
// would run before the matmul): the consumer joins one of them only.
// CHECK-LABEL: func.func @no_prologue
// CHECK-NEXT:    %[[P:.*]] = graph.fused %x
// CHECK:         graph.fused %x, %w, %[[P]]
// CHECK-NEXT:    ^{{.*}}:
// CHECK-NEXT:      graph.matmul
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.yield
func.func @no_prologue(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.tanh"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.mul"(%2, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----

// %3 reads the exp group and the matmul group, and the matmul reads the exp group:
// joining the exp group would make it depend on itself through the matmul, so %3
// becomes the matmul's epilogue instead (reading the exp group's result).
// CHECK-LABEL: func.func @cycle_through_matmul
// CHECK-NEXT:    %[[E:.*]] = graph.fused %x
// CHECK:         graph.fused %[[E]], %w
// CHECK-NEXT:    ^{{.*}}:
// CHECK-NEXT:      graph.matmul
// CHECK-NEXT:      graph.relu
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.yield
func.func @cycle_through_matmul(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = "graph.tanh"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.matmul"(%g, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.relu"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.add"(%g, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----

// A row op takes the elementwise group computing its x as prologue and its elementwise
// consumers as epilogue: softmax(0.5·x + b)·x is one group. A prologue whose value is
// also used elsewhere stays outside (here %s, returned too).
// CHECK-LABEL: func.func @row_anchor
// CHECK-NEXT:    %[[F:.*]] = graph.fused %x, %b
// CHECK-NEXT:    ^{{.*}}:
// CHECK-NEXT:      graph.scale
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.softmax
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.yield
// CHECK:         %[[S:.*]] = graph.exp %x
// CHECK-NEXT:    %[[L:.*]] = graph.fused %[[S]], %g, %b
// CHECK-NEXT:    ^{{.*}}:
// CHECK-NEXT:      graph.layernorm
// CHECK-NEXT:      graph.relu
// CHECK-NEXT:      graph.yield
// NOEPI-LABEL: func.func @row_anchor
// NOEPI:         graph.softmax
// NOEPI:         graph.layernorm
func.func @row_anchor(%x: tensor<7x33xf32>, %b: tensor<33xf32>, %g: tensor<33xf32>) -> (tensor<7x33xf32>, tensor<7x33xf32>, tensor<7x33xf32>) {
  %0 = "graph.scale"(%x) <{value = 0.5 : f64}> : (tensor<7x33xf32>) -> tensor<7x33xf32>
  %1 = "graph.add"(%0, %b) : (tensor<7x33xf32>, tensor<33xf32>) -> tensor<7x33xf32>
  %2 = "graph.softmax"(%1) : (tensor<7x33xf32>) -> tensor<7x33xf32>
  %3 = "graph.mul"(%2, %x) : (tensor<7x33xf32>, tensor<7x33xf32>) -> tensor<7x33xf32>
  %s = "graph.exp"(%x) : (tensor<7x33xf32>) -> tensor<7x33xf32>
  %5 = "graph.layernorm"(%s, %g, %b) : (tensor<7x33xf32>, tensor<33xf32>, tensor<33xf32>) -> tensor<7x33xf32>
  %6 = "graph.relu"(%5) : (tensor<7x33xf32>) -> tensor<7x33xf32>
  func.return %3, %6, %s : tensor<7x33xf32>, tensor<7x33xf32>, tensor<7x33xf32>
}

// fuse-elementwise caps a group at MAX_GROUP_OPS = 64 ops (transforms/fuse_elementwise.py):
// LLVM's optimization time grows faster than linearly in a kernel's size, so a longer
// chain becomes several kernels of at most 64 ops (compile time per op stays flat).
// RUN: strata-opt %s -p fuse-elementwise --split-input-file | filecheck %s
// RUN: strata-opt %s -p 'fuse-elementwise{max_group_ops=4}' --split-input-file | filecheck %s --check-prefix=CAP4

// A chain of 66 ops: the first 64 in one group, the last two in a second, fed by the first.
// CHECK-LABEL: func.func @chain66
// CHECK-NEXT:    %[[A:.*]] = graph.fused %x : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-COUNT-64:  graph.tanh
// CHECK-NEXT:      graph.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[B:.*]] = graph.fused %[[A]] : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<4xf32>):
// CHECK-NEXT:      %[[E:.*]] = graph.exp %[[X]]
// CHECK-NEXT:      %[[N:.*]] = graph.neg %[[E]]
// CHECK-NEXT:      graph.yield %[[N]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[B]]

// With max_group_ops=4: sixteen groups of 4, then one of 2.
// CAP4-LABEL: func.func @chain66
// CAP4-COUNT-17: graph.fused
// CAP4-NOT:      graph.fused
// CAP4:          func.return
func.func @chain66(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.tanh"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.tanh"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.tanh"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.tanh"(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "graph.tanh"(%4) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = "graph.tanh"(%5) : (tensor<4xf32>) -> tensor<4xf32>
  %7 = "graph.tanh"(%6) : (tensor<4xf32>) -> tensor<4xf32>
  %8 = "graph.tanh"(%7) : (tensor<4xf32>) -> tensor<4xf32>
  %9 = "graph.tanh"(%8) : (tensor<4xf32>) -> tensor<4xf32>
  %10 = "graph.tanh"(%9) : (tensor<4xf32>) -> tensor<4xf32>
  %11 = "graph.tanh"(%10) : (tensor<4xf32>) -> tensor<4xf32>
  %12 = "graph.tanh"(%11) : (tensor<4xf32>) -> tensor<4xf32>
  %13 = "graph.tanh"(%12) : (tensor<4xf32>) -> tensor<4xf32>
  %14 = "graph.tanh"(%13) : (tensor<4xf32>) -> tensor<4xf32>
  %15 = "graph.tanh"(%14) : (tensor<4xf32>) -> tensor<4xf32>
  %16 = "graph.tanh"(%15) : (tensor<4xf32>) -> tensor<4xf32>
  %17 = "graph.tanh"(%16) : (tensor<4xf32>) -> tensor<4xf32>
  %18 = "graph.tanh"(%17) : (tensor<4xf32>) -> tensor<4xf32>
  %19 = "graph.tanh"(%18) : (tensor<4xf32>) -> tensor<4xf32>
  %20 = "graph.tanh"(%19) : (tensor<4xf32>) -> tensor<4xf32>
  %21 = "graph.tanh"(%20) : (tensor<4xf32>) -> tensor<4xf32>
  %22 = "graph.tanh"(%21) : (tensor<4xf32>) -> tensor<4xf32>
  %23 = "graph.tanh"(%22) : (tensor<4xf32>) -> tensor<4xf32>
  %24 = "graph.tanh"(%23) : (tensor<4xf32>) -> tensor<4xf32>
  %25 = "graph.tanh"(%24) : (tensor<4xf32>) -> tensor<4xf32>
  %26 = "graph.tanh"(%25) : (tensor<4xf32>) -> tensor<4xf32>
  %27 = "graph.tanh"(%26) : (tensor<4xf32>) -> tensor<4xf32>
  %28 = "graph.tanh"(%27) : (tensor<4xf32>) -> tensor<4xf32>
  %29 = "graph.tanh"(%28) : (tensor<4xf32>) -> tensor<4xf32>
  %30 = "graph.tanh"(%29) : (tensor<4xf32>) -> tensor<4xf32>
  %31 = "graph.tanh"(%30) : (tensor<4xf32>) -> tensor<4xf32>
  %32 = "graph.tanh"(%31) : (tensor<4xf32>) -> tensor<4xf32>
  %33 = "graph.tanh"(%32) : (tensor<4xf32>) -> tensor<4xf32>
  %34 = "graph.tanh"(%33) : (tensor<4xf32>) -> tensor<4xf32>
  %35 = "graph.tanh"(%34) : (tensor<4xf32>) -> tensor<4xf32>
  %36 = "graph.tanh"(%35) : (tensor<4xf32>) -> tensor<4xf32>
  %37 = "graph.tanh"(%36) : (tensor<4xf32>) -> tensor<4xf32>
  %38 = "graph.tanh"(%37) : (tensor<4xf32>) -> tensor<4xf32>
  %39 = "graph.tanh"(%38) : (tensor<4xf32>) -> tensor<4xf32>
  %40 = "graph.tanh"(%39) : (tensor<4xf32>) -> tensor<4xf32>
  %41 = "graph.tanh"(%40) : (tensor<4xf32>) -> tensor<4xf32>
  %42 = "graph.tanh"(%41) : (tensor<4xf32>) -> tensor<4xf32>
  %43 = "graph.tanh"(%42) : (tensor<4xf32>) -> tensor<4xf32>
  %44 = "graph.tanh"(%43) : (tensor<4xf32>) -> tensor<4xf32>
  %45 = "graph.tanh"(%44) : (tensor<4xf32>) -> tensor<4xf32>
  %46 = "graph.tanh"(%45) : (tensor<4xf32>) -> tensor<4xf32>
  %47 = "graph.tanh"(%46) : (tensor<4xf32>) -> tensor<4xf32>
  %48 = "graph.tanh"(%47) : (tensor<4xf32>) -> tensor<4xf32>
  %49 = "graph.tanh"(%48) : (tensor<4xf32>) -> tensor<4xf32>
  %50 = "graph.tanh"(%49) : (tensor<4xf32>) -> tensor<4xf32>
  %51 = "graph.tanh"(%50) : (tensor<4xf32>) -> tensor<4xf32>
  %52 = "graph.tanh"(%51) : (tensor<4xf32>) -> tensor<4xf32>
  %53 = "graph.tanh"(%52) : (tensor<4xf32>) -> tensor<4xf32>
  %54 = "graph.tanh"(%53) : (tensor<4xf32>) -> tensor<4xf32>
  %55 = "graph.tanh"(%54) : (tensor<4xf32>) -> tensor<4xf32>
  %56 = "graph.tanh"(%55) : (tensor<4xf32>) -> tensor<4xf32>
  %57 = "graph.tanh"(%56) : (tensor<4xf32>) -> tensor<4xf32>
  %58 = "graph.tanh"(%57) : (tensor<4xf32>) -> tensor<4xf32>
  %59 = "graph.tanh"(%58) : (tensor<4xf32>) -> tensor<4xf32>
  %60 = "graph.tanh"(%59) : (tensor<4xf32>) -> tensor<4xf32>
  %61 = "graph.tanh"(%60) : (tensor<4xf32>) -> tensor<4xf32>
  %62 = "graph.tanh"(%61) : (tensor<4xf32>) -> tensor<4xf32>
  %63 = "graph.tanh"(%62) : (tensor<4xf32>) -> tensor<4xf32>
  %64 = "graph.exp"(%63) : (tensor<4xf32>) -> tensor<4xf32>
  %65 = "graph.neg"(%64) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %65 : tensor<4xf32>
}

// -----

// A chain within the cap stays one group.
// CHECK-LABEL: func.func @chain4
// CHECK-NEXT:    graph.fused %x, %b
// CHECK-COUNT-4:   graph.
// CHECK-NEXT:      graph.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CAP4-LABEL: func.func @chain4
// CAP4-NEXT:    graph.fused %x, %b
// CAP4-COUNT-4:   graph.
// CAP4-NEXT:      graph.yield
// CAP4-NEXT:    }
// CAP4-NEXT:    func.return
func.func @chain4(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.tanh"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.mul"(%2, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----

// The cap holds for a DAG too: six ops in two groups of at most four; the second
// takes the first's outputs.
// CAP4-LABEL: func.func @dag6
// CAP4-NEXT:    %[[F:.*]] = graph.fused %x
// CAP4-COUNT-4:   graph.
// CAP4-NEXT:      graph.yield
// CAP4-NEXT:    }
// CAP4-NEXT:    graph.fused %[[F]]
// CAP4-COUNT-2:   graph.
// CAP4-NEXT:      graph.yield
// CAP4-NEXT:    }
// CAP4-NEXT:    func.return
func.func @dag6(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "graph.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "graph.tanh"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = "graph.add"(%0, %1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = "graph.neg"(%2) : (tensor<8xf32>) -> tensor<8xf32>
  %4 = "graph.relu"(%3) : (tensor<8xf32>) -> tensor<8xf32>
  %5 = "graph.mul"(%4, %3) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %5 : tensor<8xf32>
}

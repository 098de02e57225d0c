// --timing: strata-opt prints each pass's time (named pipelines step by step), the time
// spent verifying after the passes, and the total on stderr; stdout keeps only the IR.
// RUN: strata-opt %s -p cpu-pipeline --timing -o %t.mlir 2>&1 | filecheck %s
// RUN: strata-opt %s -p cpu-pipeline --timing 2>/dev/null | filecheck %s --check-prefix=STDOUT

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK:      timing: lower-vsla-to-graph{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: expand-attention-grad{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: fuse-patterns{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: canonicalize{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: cse{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: fuse-elementwise{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: lower-graph-to-tile{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: token-dce{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: dedupe-kernels{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: lower-tile-to-loops{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: expand-math{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: plan-memory{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: verify-memory-plan{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: verify (x13){{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: other{{ +[0-9]+\.[0-9]{3} ms$}}
// CHECK-NEXT: timing: total{{ +[0-9]+\.[0-9]{3} ms$}}

// STDOUT-NOT: timing:
// STDOUT:     func.func @f
// STDOUT-NOT: timing:

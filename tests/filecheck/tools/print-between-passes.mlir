// strata-opt spells a named pipeline out into its steps before xDSL builds the pass
// pipeline, so --print-between-passes shows the IR after each step (the last step's IR
// is the output itself), not one block for the whole pipeline.
// RUN: strata-opt %s -p cpu-pipeline --print-between-passes | filecheck %s
// RUN: strata-opt %s -p cpu-pipeline --print-between-passes | grep -c "^IR after" | filecheck %s --check-prefix=COUNT
// RUN: strata-opt %s -p 'cpu-pipeline{fusion=false}' --print-between-passes | filecheck %s --check-prefix=NOFUSION
// RUN: strata-opt %s -p 'cse,cpu-pipeline{fusion=false}' --print-between-passes | grep -c "^IR after" | filecheck %s --check-prefix=COUNT-NOFUSION
// RUN: not strata-opt %s -p 'cpu-pipeline{fusion=maybe}' 2>&1 | filecheck %s --check-prefix=BAD

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

// CHECK-NOT:  IR after cpu-pipeline
// CHECK:      IR after lower-vsla-to-graph:
// CHECK:      IR after expand-attention-grad:
// CHECK:      IR after fuse-patterns:
// CHECK:      IR after canonicalize:
// CHECK:      IR after cse:
// CHECK:      IR after fuse-elementwise:
// CHECK:      IR after lower-graph-to-tile:
// CHECK:      tile.kernel
// CHECK:      IR after token-dce:
// CHECK:      IR after dedupe-kernels:
// CHECK:      IR after lower-tile-to-loops:
// CHECK:      IR after expand-math:
// CHECK:      IR after plan-memory:
// CHECK-NOT:  IR after
// CHECK:      tile.plan

// Thirteen steps: twelve "IR after" blocks, then the output.
// COUNT: {{^12$}}

// NOFUSION-NOT: fuse-patterns
// NOFUSION-NOT: fuse-elementwise
// NOFUSION:     IR after canonicalize:
// NOFUSION-NOT: fuse-elementwise
// NOFUSION:     IR after cse:
// NOFUSION-NOT: fuse-elementwise
// NOFUSION:     IR after lower-graph-to-tile:

// cse, then eleven steps.
// COUNT-NOFUSION: {{^11$}}

// BAD: strata-opt: invalid pass pipeline 'cpu-pipeline{fusion=maybe}'

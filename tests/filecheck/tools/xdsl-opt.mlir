// Plain xdsl-opt knows Strata's dialects and passes through the `xdsl.universe` entry point
// (strata/universe.py, registered in pyproject.toml): it parses and prints graph IR, runs
// canonicalize with the graph ops' patterns, and runs Strata's lowering passes and pipelines.
// RUN: xdsl-opt %s | filecheck %s --check-prefix=PRINT
// RUN: xdsl-opt %s -p canonicalize | filecheck %s --check-prefix=CANON
// RUN: xdsl-opt %s -p lower-graph-to-tile | filecheck %s --check-prefix=TILE
// RUN: xdsl-opt %s -p cpu-pipeline | filecheck %s --check-prefix=LOOPS
// RUN: xdsl-opt %s | xdsl-opt | filecheck %s --check-prefix=PRINT

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.neg"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.relu"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// PRINT:      func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// PRINT-NEXT:   %0 = graph.neg %x
// PRINT-NEXT:   %1 = graph.neg %0
// PRINT-NEXT:   %2 = graph.relu %1

// neg(neg(x)) folds to x.
// CANON:     func.func @f
// CANON-NOT: graph.neg
// CANON:     graph.relu %x

// TILE:      tile.launch @f_neg_0
// TILE:      tile.kernel @f_neg_0
// TILE:      token.make

// The whole CPU pipeline: the three ops fuse into one relu kernel, a loop nest.
// LOOPS:     func.func @f(%x: memref<32xf32>) -> memref<32xf32> attributes {tile.plan
// LOOPS:     tile.launch @f_relu_0
// LOOPS:     func.func @f_relu_0

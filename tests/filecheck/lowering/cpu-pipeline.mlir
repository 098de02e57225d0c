// cpu-pipeline = canonicalize, cse, fuse-elementwise, lower-graph-to-tile, token-dce,
// lower-tile-to-loops, expand-math, plan-memory, verify-memory-plan: the graph is simplified first (neg(neg(x)) folds to x, the duplicate
// exp is merged), the surviving elementwise ops fuse into one kernel, and the result is
// loops-level: the kernel is a func.func carrying tile.grid; the program keeps its buffer
// and launch.
// RUN: strata-opt %s -p cpu-pipeline | filecheck %s
// RUN: strata-opt %s -p cpu-pipeline | filecheck %s --check-prefix=LOOPS

func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.neg"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.exp"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.exp"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "graph.add"(%1, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = "graph.mul"(%4, %3) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %5 : tensor<4x8xf32>
}

// One fused kernel: exp computed once per element, feeding both the add and the mul.
// CHECK-LABEL: func.func @f(%x: memref<32xf32>, %y: memref<32xf32>) -> memref<32xf32>
// CHECK-SAME:    attributes {tile.plan = {alignment = 64 : i64, kernels = 1 : i64, naive_bytes = 0 : i64, arenas = {params = 0 : i64, activations = 0 : i64, workspace = 0 : i64, grads = 0 : i64, external = 128 : i64}}} {
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = tile.buffer {tile.arena = "external", tile.offset = 0 : i64, tile.live = array<i64: 0, 1>} : memref<32xf32>
// CHECK-NEXT:    tile.launch @f_fused_0(%y, %x, [[P]]) : memref<32xf32>, memref<32xf32>, memref<32xf32>
// CHECK-NEXT:    func.return [[P]] : memref<32xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @f_fused_0({{%[0-9a-z_]+}}: memref<32xf32>, {{%[0-9a-z_]+}}: memref<32xf32>, {{%[0-9a-z_]+}}: memref<32xf32>, [[B:%[0-9a-z_]+]]: index, [[E:%[0-9a-z_]+]]: index) -> i32 attributes {tile.grid = array<i64: 1, 1>, tile.in_place = array<i64: 0, 1>} {
// CHECK:         scf.for {{%[0-9a-z_]+}} = [[B]] to [[E]] step
// CHECK:             [[Y:%[0-9a-z_]+]] = memref.load
// CHECK:             [[X:%[0-9a-z_]+]] = memref.load
// exp(y), expanded by expand-math into a polynomial (no libm call), computed once:
// CHECK:             arith.addf {{.*}} fastmath<contract> : f32
// CHECK:             arith.cmpf olt, [[Y]], {{%[0-9a-z_]+}} : f32
// CHECK:             [[EXP:%[0-9a-z_]+]] = arith.select
// CHECK-NEXT:        [[SUM:%[0-9a-z_]+]] = arith.addf [[X]], [[EXP]] : f32
// CHECK-NEXT:        [[PRODUCT:%[0-9a-z_]+]] = arith.mulf [[SUM]], [[EXP]] : f32
// CHECK-NOT:         fastmath<contract>
// CHECK:             memref.store [[PRODUCT]]
// CHECK:         func.return {{%[0-9a-z_]+}} : i32
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NOT:   func.func

// Nothing of the graph or tile-kernel level is left, and the folded negations produced
// no kernel (the exact function list above shows a single fused kernel).
// LOOPS-NOT:   arith.negf
// LOOPS-NOT:   graph.
// LOOPS-NOT:   tensor<
// LOOPS-NOT:   tile.kernel
// LOOPS-NOT:   {{tile\.(program_id|make_tensor_view|make_partition_view|load_view_tko|store_view_tko|map|yield|reduce|broadcast|iota|mma|return)}}
// LOOPS-NOT:   token.
// LOOPS-NOT:   !tile.
// LOOPS-NOT:   _neg_
// LOOPS-NOT:   arith.negf

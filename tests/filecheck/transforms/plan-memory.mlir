// RUN: strata-opt %s -p 'lower-graph-to-tile{fused_attention=false},plan-memory,verify-memory-plan' --split-input-file | filecheck %s
// RUN: strata-opt %s -p 'lower-graph-to-tile{fused_attention=false},plan-memory{in_place=false},verify-memory-plan' --split-input-file | filecheck %s --check-prefix=NOINPLACE

// An unfused elementwise chain runs in one buffer: each kernel writes over the input
// that dies at it (in place), and the result goes to the external arena.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    tile.plan = {alignment = 64 : i64, kernels = 4 : i64, naive_bytes = 12288 : i64, arenas = {params = 0 : i64, activations = 4096 : i64, workspace = 0 : i64, grads = 0 : i64, external = 4096 : i64}}
// CHECK-NEXT:    tile.buffer {tile.arena = "activations", tile.offset = 0 : i64, tile.live = array<i64: 0, 3>}
// CHECK:         tile.buffer {tile.arena = "activations", tile.offset = 0 : i64, tile.live = array<i64: 0, 3>, tile.shares = 0 : i64}
// CHECK:         tile.buffer {tile.arena = "activations", tile.offset = 0 : i64, tile.live = array<i64: 0, 3>, tile.shares = 0 : i64}
// CHECK:         tile.buffer {tile.arena = "external", tile.offset = 0 : i64, tile.live = array<i64: 3, 4>}
// The kernels that ran in place lose noalias (tile.aliased).
// CHECK:         tile.kernel @chain_relu_1
// CHECK-SAME:      tile.aliased
// Without in-place reuse, buffers whose lives do not intersect still share offsets.
// NOINPLACE-LABEL: func.func @chain
// NOINPLACE-SAME:    activations = 8192 : i64
// NOINPLACE-NEXT:    tile.buffer {tile.arena = "activations", tile.offset = 0 : i64, tile.live = array<i64: 0, 1>}
// NOINPLACE:         tile.buffer {tile.arena = "activations", tile.offset = 4096 : i64, tile.live = array<i64: 1, 2>}
// NOINPLACE-NOT:     tile.shares
// NOINPLACE:         tile.buffer {tile.arena = "activations", tile.offset = 0 : i64, tile.live = array<i64: 2, 3>}
// NOINPLACE-NOT:     tile.aliased
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = "graph.exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = "graph.relu"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = "graph.tanh"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %3 = "graph.neg"(%2) : (tensor<1024xf32>) -> tensor<1024xf32>
  func.return %3 : tensor<1024xf32>
}

// -----

// A value still needed later is never overwritten in place; a reshape shares its
// operand's buffer, which lives until the reshape's last use; constants go to params.
// CHECK-LABEL: func.func @alias_and_reuse
// CHECK-SAME:    params = 64 : i64
// CHECK-NEXT:    %[[C:.*]] = tile.buffer {tile.arena = "params", tile.offset = 0 : i64, tile.live = array<i64: 0, 3>, init = dense<2.000000e+00> : tensor<4xf32>}
// CHECK-NEXT:    %[[E:.*]] = tile.buffer {tile.arena = "activations", tile.offset = 0 : i64, tile.live = array<i64: 0, 2>}
// CHECK-NEXT:    tile.launch @alias_and_reuse_exp_0(%x, %[[E]])
// CHECK-NEXT:    %[[N:.*]] = tile.buffer {tile.arena = "activations", tile.offset = 256 : i64, tile.live = array<i64: 1, 2>}
// CHECK-NEXT:    tile.launch @alias_and_reuse_neg_1(%[[E]], %[[N]])
// CHECK-NEXT:    %[[S:.*]] = tile.buffer {tile.arena = "external", tile.offset = 0 : i64, tile.live = array<i64: 2, 3>}
// CHECK-NEXT:    tile.launch @alias_and_reuse_add_2(%[[E]], %[[N]], %[[S]])
func.func @alias_and_reuse(%x: tensor<8x8xf32>) -> tensor<64xf32> {
  %c = "graph.constant"() <{value = dense<2.0> : tensor<4xf32>}> : () -> tensor<4xf32>
  %0 = "graph.exp"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = "graph.reshape"(%0) : (tensor<8x8xf32>) -> tensor<64xf32>
  %1 = "graph.neg"(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = "graph.reshape"(%1) : (tensor<8x8xf32>) -> tensor<64xf32>
  %2 = "graph.add"(%r, %s) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %2 : tensor<64xf32>
}

// -----

// Attention in three kernels (fused_attention=false, the GPU's form): the scores and
// probabilities are workspace; the softmax runs in place over
// the scores (a row kernel reads each element before writing it).
// CHECK-LABEL: func.func @attention
// CHECK-SAME:    activations = 0 : i64, workspace = 2048 : i64
// CHECK-NEXT:    tile.buffer {tile.workspace, tile.arena = "workspace", tile.offset = 0 : i64, tile.live = array<i64: 0, 2>}
// CHECK:         tile.buffer {tile.workspace, tile.arena = "workspace", tile.offset = 0 : i64, tile.live = array<i64: 0, 2>, tile.shares = 0 : i64}
func.func @attention(%q: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %0 = "graph.attention"(%q, %q, %q) <{scale = 0.35 : f64, causal = true}> : (tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  func.return %0 : tensor<2x16x8xf32>
}

// -----

// The first kernel reads an argument (caller-owned memory): never written in place.
// CHECK-LABEL: tile.kernel @argument_not_overwritten_exp_0
// CHECK-NOT:     tile.aliased
// CHECK-SAME:    {
func.func @argument_not_overwritten(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = "graph.exp"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  func.return %0 : tensor<64xf32>
}

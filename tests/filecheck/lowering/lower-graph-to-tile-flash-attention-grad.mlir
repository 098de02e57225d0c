// graph.attention_grad of bf16 with head 64 on the GPU: lower-graph-to-tile{flash_attention=true}
// emits the flash-attention backward as three kernels marked tile.flash_attention_grad
// with their part, the scale and the causality: "stats" (each query row's logsumexp L
// and D = rowsum(dout ∘ out), from q, k, out and dout), "dq" (one 64-row query block per
// program, looping over the keys) and "dkv" (one 64-row key block per program, looping
// over the queries). L and D live in two f32 workspace buffers of [batch, Sq padded to 64,
// 1] (2 x 128 x 1 here, viewed as 2 x 100 x 1 with row stride 128); the [Sq, Sk]
// probabilities are recomputed by blocks, never stored (no 100 x 100 buffer, no view of
// one). Heads past 128 (and f32) are not taken: the op is expanded into matmuls, a softmax and
// elementwise kernels, none of them marked.
// With the forward's log-sum-exp (graph.attention_lse, its gradient reading lse: what
// share-attention-lse makes of a training step's attention), the forward's flash kernel
// stores L in rows padded like the workspace's, and the first kernel is "dots": D alone,
// from out and dout, no pass over the keys.
// RUN: strata-opt %s -p "lower-graph-to-tile{flash_attention=true fused_attention=false}" | filecheck %s
// RUN: strata-opt %s -p "lower-graph-to-tile{flash_attention=true fused_attention=false}" | filecheck %s --check-prefix=SCORES

func.func @flash(%q: tensor<2x100x64xbf16>, %k: tensor<2x100x64xbf16>, %v: tensor<2x100x64xbf16>, %o: tensor<2x100x64xbf16>, %do: tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>)
  func.return %dq, %dk, %dv : tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>
}

func.func @paired(%q: tensor<2x100x64xbf16>, %k: tensor<2x100x64xbf16>, %v: tensor<2x100x64xbf16>, %do: tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) {
  %o, %o_lse = graph.attention_lse %q, %k, %v {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100xf32>)
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do lse %o_lse {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100xf32>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>)
  func.return %o, %dq, %dk, %dv : tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>
}

func.func @wide(%q: tensor<64x144xbf16>, %k: tensor<64x144xbf16>, %v: tensor<64x144xbf16>, %o: tensor<64x144xbf16>, %do: tensor<64x144xbf16>) -> (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64} : (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>) -> (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>)
  func.return %dq, %dk, %dv : tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>
}

func.func @single(%q: tensor<64x64xf32>, %k: tensor<64x64xf32>, %v: tensor<64x64xf32>, %o: tensor<64x64xf32>, %do: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
  func.return %dq, %dk, %dv : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// The program: L and D first (2 x 128 f32 each), then the three results; stats reads q,
// k, out and dout; dq and dkv read q, k, v, dout, L and D (not out).
// CHECK-LABEL: func.func @flash(
// CHECK-NEXT:    [[L:%[0-9]+]] = tile.buffer {tile.workspace} : memref<256xf32>
// CHECK-NEXT:    [[D:%[0-9]+]] = tile.buffer {tile.workspace} : memref<256xf32>
// CHECK-NEXT:    tile.launch @flash_attention_grad_stats_0(%q, %k, %o, %do, [[L]], [[D]])
// CHECK-NEXT:    [[DQ:%[0-9]+]] = tile.buffer : memref<12800xbf16>
// CHECK-NEXT:    [[DK:%[0-9]+]] = tile.buffer : memref<12800xbf16>
// CHECK-NEXT:    [[DV:%[0-9]+]] = tile.buffer : memref<12800xbf16>
// CHECK-NEXT:    tile.launch @flash_attention_grad_dq_1(%q, %k, %v, %do, [[L]], [[D]], [[DQ]])
// CHECK-NEXT:    tile.launch @flash_attention_grad_dkv_2(%q, %k, %v, %do, [[L]], [[D]], [[DK]], [[DV]])
// CHECK-NEXT:    func.return [[DQ]], [[DK]], [[DV]]
// CHECK-NEXT:  }

// The paired one: L from the forward's flash kernel (its fifth buffer, not a workspace:
// it lives until the backward), D from the dots kernel.
// CHECK-LABEL: func.func @paired(
// CHECK-NEXT:    [[OUT:%[0-9]+]] = tile.buffer : memref<12800xbf16>
// CHECK-NEXT:    [[LSE:%[0-9]+]] = tile.buffer : memref<256xf32>
// CHECK-NEXT:    tile.launch @paired_attention_0(%q, %k, %v, [[OUT]], [[LSE]])
// CHECK-NEXT:    [[DOTS:%[0-9]+]] = tile.buffer {tile.workspace} : memref<256xf32>
// CHECK-NEXT:    tile.launch @paired_attention_grad_dots_1([[OUT]], %do, [[DOTS]])
// CHECK-NOT:     stats
// CHECK:         tile.launch @paired_attention_grad_dq_2(%q, %k, %v, %do, [[LSE]], [[DOTS]],
// CHECK-NEXT:    tile.launch @paired_attention_grad_dkv_3(%q, %k, %v, %do, [[LSE]], [[DOTS]],

// The head-144 one: expanded, no workspace, no mark.
// CHECK-LABEL: func.func @wide(
// CHECK-NOT:     tile.workspace
// CHECK-NOT:     flash_attention
// CHECK:         tile.launch @wide_matmul_0(%q, %k,
// CHECK-NEXT:    tile.buffer
// CHECK-NEXT:    tile.launch @wide_softmax_1(
// CHECK-NOT:     tile.workspace
// CHECK-NOT:     flash_attention
// CHECK:         func.return

// The f32 one likewise.
// CHECK-LABEL: func.func @single(
// CHECK-NOT:     tile.workspace
// CHECK-NOT:     flash_attention
// CHECK:         tile.launch @single_softmax_1(
// CHECK-NOT:     tile.workspace
// CHECK-NOT:     flash_attention
// CHECK:         func.return

// The kernels: a 2 x 2 grid (batch, 64-row blocks of 100) each, L and D viewed as
// [2, 100, 1] with row stride 128 (stats and dq; dkv views them as [2, 1, 100]).
// CHECK-LABEL: tile.kernel @flash_attention_grad_stats_0(
// CHECK-SAME:    %4: memref<256xf32>, %5: memref<256xf32>) attributes {grid = array<i64: 2, 2>, tile.flash_attention_grad = {part = "stats", scale = 1.250000e-01 : f64, causal = true}}
// CHECK:         tile.make_tensor_view %4 : memref<256xf32> -> !tile.tensor_view<2x100x1xf32, strides [128, 1, 1], offset 0>
// CHECK:         tile.make_tensor_view %5 : memref<256xf32> -> !tile.tensor_view<2x100x1xf32, strides [128, 1, 1], offset 0>
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x64x1xf32>, !tile.partition_view<1x64x1, !tile.tensor_view<2x100x1xf32, strides [128, 1, 1], offset 0>>
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x64x1xf32>, !tile.partition_view<1x64x1, !tile.tensor_view<2x100x1xf32, strides [128, 1, 1], offset 0>>
// CHECK:         tile.return
// CHECK-LABEL: tile.kernel @flash_attention_grad_dq_1(
// CHECK-SAME:    attributes {grid = array<i64: 2, 2>, tile.flash_attention_grad = {part = "dq", scale = 1.250000e-01 : f64, causal = true}}
// CHECK:         tile.make_tensor_view %4 : memref<256xf32> -> !tile.tensor_view<2x100x1xf32, strides [128, 1, 1], offset 0>
// CHECK:         scf.for
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x64x64xbf16>, !tile.partition_view<1x64x64, !tile.tensor_view<2x100x64xbf16, strides [6400, 64, 1], offset 0>>
// CHECK:         tile.return
// CHECK-LABEL: tile.kernel @flash_attention_grad_dkv_2(
// CHECK-SAME:    attributes {grid = array<i64: 2, 2>, tile.flash_attention_grad = {part = "dkv", scale = 1.250000e-01 : f64, causal = true}}
// CHECK:         tile.make_tensor_view %4 : memref<256xf32> -> !tile.tensor_view<2x1x100xf32, strides [128, 1, 1], offset 0>
// CHECK:         scf.for
// CHECK:         tile.store_view_tko
// CHECK:         tile.store_view_tko
// CHECK:         tile.return

// The paired forward stores L ([2, 100, 1], row stride 128); dots has no loop.
// CHECK-LABEL: tile.kernel @paired_attention_0(
// CHECK-SAME:    %4: memref<256xf32>) attributes {grid = array<i64: 2, 2>, tile.flash_attention = {scale = 1.250000e-01 : f64, causal = true}}
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x64x1xf32>, !tile.partition_view<1x64x1, !tile.tensor_view<2x100x1xf32, strides [128, 1, 1], offset 0>>
// CHECK-LABEL: tile.kernel @paired_attention_grad_dots_1(
// CHECK-SAME:    %2: memref<256xf32>) attributes {grid = array<i64: 2, 2>, tile.flash_attention_grad = {part = "dots", scale = 1.250000e-01 : f64, causal = true}}
// CHECK-NOT:     scf.for
// CHECK:         tile.return

// None of the other kernels is marked.
// CHECK-LABEL: tile.kernel @wide_matmul_0(
// CHECK-NOT:     tile.flash_attention_grad

// Nothing of the [Sq, Sk] scores of @flash: no 2 x 100 x 100 (20000) or 100 x 100
// (10000) buffer, view or tile anywhere.
// SCORES-NOT: {{memref<(1|2)0000x}}
// SCORES-NOT: 100x100

// RUN: strata-opt %s -p "lower-graph-to-tile{flash_attention=true fused_attention=false flash_grad_head=256}" | filecheck %s
// RUN: strata-opt %s -p "lower-graph-to-tile{flash_attention=true fused_attention=false flash_grad_head=256}" | filecheck %s --check-prefix=SCORES
// RUN: strata-opt %s -p "lower-graph-to-tile{flash_attention=true fused_attention=false}" | filecheck %s --check-prefix=SHALLOW
//
// Heads past 128: with flash_grad_head=256 (sm_90's pipeline) the gradient of attention
// with heads of up to 256 takes the flash kernels too, dkv split in two kernels over the
// same key blocks so that each keeps one [64 x head] sum: dk (q, k, v, dout, L, D: two
// score products a block, dk += dsᵀ q) and dv (q, k, dout and L only: one score product,
// dv += pᵀ dout). stats and dq are as at smaller heads. q/k and v heads may differ (@mla:
// 192 and 128, dk summing 192 columns, dv 128). Without the option (every other GPU) such
// gradients are expanded.

func.func @deep(%q: tensor<2x100x256xbf16>, %k: tensor<2x100x256xbf16>, %v: tensor<2x100x256xbf16>, %o: tensor<2x100x256xbf16>, %do: tensor<2x100x256xbf16>) -> (tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 6.250000e-02 : f64, causal = true} : (tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>) -> (tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>)
  func.return %dq, %dk, %dv : tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>
}

func.func @mla(%q: tensor<64x192xbf16>, %k: tensor<64x192xbf16>, %v: tensor<64x128xbf16>, %o: tensor<64x128xbf16>, %do: tensor<64x128xbf16>) -> (tensor<64x192xbf16>, tensor<64x192xbf16>, tensor<64x128xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 7.216878e-02 : f64} : (tensor<64x192xbf16>, tensor<64x192xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>) -> (tensor<64x192xbf16>, tensor<64x192xbf16>, tensor<64x128xbf16>)
  func.return %dq, %dk, %dv : tensor<64x192xbf16>, tensor<64x192xbf16>, tensor<64x128xbf16>
}

// CHECK-LABEL: func.func @deep(
// CHECK-NEXT:    [[L:%[0-9]+]] = tile.buffer {tile.workspace} : memref<256xf32>
// CHECK-NEXT:    [[D:%[0-9]+]] = tile.buffer {tile.workspace} : memref<256xf32>
// CHECK-NEXT:    tile.launch @deep_attention_grad_stats_0(%q, %k, %o, %do, [[L]], [[D]])
// CHECK-NEXT:    [[DQ:%[0-9]+]] = tile.buffer : memref<51200xbf16>
// CHECK-NEXT:    [[DK:%[0-9]+]] = tile.buffer : memref<51200xbf16>
// CHECK-NEXT:    [[DV:%[0-9]+]] = tile.buffer : memref<51200xbf16>
// CHECK-NEXT:    tile.launch @deep_attention_grad_dq_1(%q, %k, %v, %do, [[L]], [[D]], [[DQ]])
// CHECK-NEXT:    tile.launch @deep_attention_grad_dk_2(%q, %k, %v, %do, [[L]], [[D]], [[DK]])
// CHECK-NEXT:    tile.launch @deep_attention_grad_dv_3(%q, %k, %do, [[L]], [[DV]])
// CHECK-NEXT:    func.return [[DQ]], [[DK]], [[DV]]
// CHECK-LABEL: func.func @mla(
// CHECK:         tile.launch @mla_attention_grad_stats_0(
// CHECK:         tile.launch @mla_attention_grad_dq_1(
// CHECK-NEXT:    tile.launch @mla_attention_grad_dk_2(
// CHECK-NEXT:    tile.launch @mla_attention_grad_dv_3(

// dk: kᵀ q and vᵀ dout score products, the sum over q's 64 x 256 blocks, one store.
// CHECK-LABEL: tile.kernel @deep_attention_grad_dk_2(
// CHECK-SAME:    attributes {grid = array<i64: 2, 2>, tile.flash_attention_grad = {part = "dk"
// CHECK:         scf.for
// CHECK:         tile.mma {{.*}} : !tile.tile<1x64x256xf32>, !tile.tile<1x256x64xf32>, !tile.tile<1x64x64xf32>
// CHECK:         tile.mma {{.*}} : !tile.tile<1x64x256xf32>, !tile.tile<1x256x64xf32>, !tile.tile<1x64x64xf32>
// CHECK:         tile.mma {{.*}} : !tile.tile<1x64x64xf32>, !tile.tile<1x64x256xf32>, !tile.tile<1x64x256xf32>
// CHECK-NOT:     tile.mma
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x64x256xbf16>
// CHECK-NOT:     tile.store_view_tko
// CHECK:         tile.return

// dv: five buffers (no v, no D), one score product a block, then the sum; one store.
// CHECK-LABEL: tile.kernel @deep_attention_grad_dv_3(
// CHECK-SAME:    %0: memref<51200xbf16>, %1: memref<51200xbf16>, %2: memref<51200xbf16>, %3: memref<256xf32>, %4: memref<51200xbf16>) attributes {grid = array<i64: 2, 2>, tile.flash_attention_grad = {part = "dv"
// CHECK:         scf.for
// CHECK:         tile.mma {{.*}} : !tile.tile<1x64x256xf32>, !tile.tile<1x256x64xf32>, !tile.tile<1x64x64xf32>
// CHECK-NOT:     tile.mma {{.*}} !tile.tile<1x256x64xf32>, !tile.tile<1x64x64xf32>
// CHECK:         tile.mma {{.*}} : !tile.tile<1x64x64xf32>, !tile.tile<1x64x256xf32>, !tile.tile<1x64x256xf32>
// CHECK-NOT:     tile.mma
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x64x256xbf16>
// CHECK-NOT:     tile.store_view_tko
// CHECK:         tile.return

// @mla's dk sums q's 256-column tiles (192 and the padding), dv dout's 128.
// CHECK-LABEL: tile.kernel @mla_attention_grad_dk_2(
// CHECK:         tile.mma {{.*}} : !tile.tile<64x64xf32>, !tile.tile<64x256xf32>, !tile.tile<64x256xf32>
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<64x256xbf16>, !tile.partition_view<64x256, !tile.tensor_view<64x192xbf16
// CHECK-LABEL: tile.kernel @mla_attention_grad_dv_3(
// CHECK:         tile.mma {{.*}} : !tile.tile<64x64xf32>, !tile.tile<64x128xf32>, !tile.tile<64x128xf32>
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<64x128xbf16>, !tile.partition_view<64x128, !tile.tensor_view<64x128xbf16

// No [Sq, Sk] scores of @deep: no 2 x 100 x 100 (20000) buffer, view or tile.
// SCORES-NOT: {{memref<20000x}}
// SCORES-NOT: 100x100

// SHALLOW-LABEL: func.func @deep(
// SHALLOW-NOT:     flash_attention_grad
// SHALLOW:         tile.launch @deep_softmax_
// SHALLOW-LABEL: func.func @mla(
// SHALLOW-NOT:     flash_attention_grad
// SHALLOW:         tile.launch @mla_softmax_
// SHALLOW-NOT:     flash_attention_grad

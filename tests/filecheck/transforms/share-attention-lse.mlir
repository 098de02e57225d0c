// RUN: strata-opt %s -p share-attention-lse | filecheck %s
// RUN: strata-opt %s -p gpu-pipeline | filecheck %s --check-prefix=GPU
// RUN: strata-opt %s -p "share-attention-lse{flash_grad_head=256}" | filecheck %s --check-prefix=DEEP
//
// share-attention-lse: a graph.attention whose output a graph.attention_grad of the same
// q, k, v and parameters reads becomes graph.attention_lse (out, lse), and the gradient
// reads lse; a second gradient of the same attention reads the same lse. Only 16-bit
// attention with heads the flash backward takes (multiples of 16 up to 128, or with
// flash_grad_head=256 as on sm_90, one head for q and v up to 256) is paired: f32, head
// 144 (by default), a gradient of another attention's output (other parameters) and a
// gradient already reading an lse are left as they are, and so is attention no gradient reads.

// CHECK-LABEL: func.func @paired
// CHECK-NEXT:  %o, %o_lse = graph.attention_lse %q, %k, %v {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100xf32>)
// CHECK-NEXT:  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do lse %o_lse {scale = 1.250000e-01 : f64, causal = true}
// CHECK-NEXT:  %dq2, %dk2, %dv2 = graph.attention_grad %q, %k, %v, %o, %dv lse %o_lse {scale = 1.250000e-01 : f64, causal = true}
// CHECK-NEXT:  func.return %o, %dq, %dq2
// The GPU pipeline: the forward's flash kernel takes L (a fifth buffer), the backward
// computes D alone.
// GPU-LABEL: func.func @paired
// GPU:       tile.launch @paired_attention_{{[0-9]+}}(%q, %k, %v, %{{[0-9]+}}, %{{[0-9]+}})
// GPU-NOT:   attention_grad_stats
// GPU:       tile.launch @paired_attention_grad_dots_
// GPU-NOT:   attention_grad_stats
// GPU-LABEL: func.func @f32_not_paired
func.func @paired(%q: tensor<2x100x64xbf16>, %k: tensor<2x100x64xbf16>, %v: tensor<2x100x64xbf16>, %do: tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) {
  %o = graph.attention %q, %k, %v {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> tensor<2x100x64xbf16>
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>)
  %dq2, %dk2, %dv2 = graph.attention_grad %q, %k, %v, %o, %dv {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>)
  func.return %o, %dq, %dq2 : tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>
}

// CHECK-LABEL: func.func @f32_not_paired
// CHECK-NEXT:  %o = graph.attention %q, %q, %q
// CHECK-NEXT:  graph.attention_grad %q, %q, %q, %o, %o {scale
func.func @f32_not_paired(%q: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %o = graph.attention %q, %q, %q {scale = 1.250000e-01 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %o, %o {scale = 1.250000e-01 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
  func.return %dq : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @head_144
// CHECK-NEXT:  %o = graph.attention %q, %q, %q
// CHECK-NEXT:  graph.attention_grad %q, %q, %q, %o, %o {scale
// DEEP-LABEL:  func.func @head_144
// DEEP-NEXT:   %o, %o_lse = graph.attention_lse %q, %q, %q
// DEEP-NEXT:   graph.attention_grad %q, %q, %q, %o, %o lse %o_lse {scale
// DEEP-LABEL:  func.func @other_parameters_not_paired
func.func @head_144(%q: tensor<64x144xbf16>) -> tensor<64x144xbf16> {
  %o = graph.attention %q, %q, %q {scale = 1.250000e-01 : f64} : (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>) -> tensor<64x144xbf16>
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %o, %o {scale = 1.250000e-01 : f64} : (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>) -> (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>)
  func.return %dq : tensor<64x144xbf16>
}

// The gradient's causality differs from the forward's: out is not this attention's.
// CHECK-LABEL: func.func @other_parameters_not_paired
// CHECK-NEXT:  %o = graph.attention %q, %q, %q
// CHECK-NEXT:  graph.attention_grad %q, %q, %q, %o, %o {scale
func.func @other_parameters_not_paired(%q: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %o = graph.attention %q, %q, %q {scale = 1.250000e-01 : f64, causal = true} : (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %o, %o {scale = 1.250000e-01 : f64} : (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>) -> (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>)
  func.return %dq : tensor<64x64xbf16>
}

// CHECK-LABEL: func.func @forward_alone
// CHECK-NEXT:  %o = graph.attention %q, %q, %q
// CHECK-NOT:   attention_lse
func.func @forward_alone(%q: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %o = graph.attention %q, %q, %q {scale = 1.250000e-01 : f64} : (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  func.return %o : tensor<64x64xbf16>
}

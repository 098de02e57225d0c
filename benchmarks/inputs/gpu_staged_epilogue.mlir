// 16-bit matmul epilogues of an odd row length (no paired stores): results staged in a
// shared tile and stored as whole rows after a barrier; a bf16 LM-head-like product with
// w read transposed (warpgroup mma on sm_90) and an f16 product with a gelu epilogue and
// partial tiles on both axes, for compute-sanitizer.
func.func @main(%h: tensor<4096x256xbf16>, %w: tensor<1001x256xbf16>, %a: tensor<77x96xf16>, %b: tensor<96x129xf16>) -> (tensor<4096x1001xbf16>, tensor<77x129xf16>) {
  %logits = graph.matmul %h, %w {transpose_b = true} : (tensor<4096x256xbf16>, tensor<1001x256xbf16>) -> tensor<4096x1001xbf16>
  %p = graph.matmul %a, %b : (tensor<77x96xf16>, tensor<96x129xf16>) -> tensor<77x129xf16>
  %g = graph.gelu %p {approximate = "tanh"} : (tensor<77x129xf16>) -> tensor<77x129xf16>
  func.return %logits, %g : tensor<4096x1001xbf16>, tensor<77x129xf16>
}

// An attention and its gradient in one program (a training step's): share-attention-lse pairs
// them, the flash forward stores L, the backward's first kernel computes D alone.
// Causal, 100 queries (a partial 64-row block), head 64.
func.func @main(%q: tensor<2x100x64xbf16>, %k: tensor<2x100x64xbf16>, %v: tensor<2x100x64xbf16>, %do: tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) {
  %o = graph.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> tensor<2x100x64xbf16>
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 0.125 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>)
  func.return %o, %dq, %dk, %dv : tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>
}

// Rows added by id (graph.embedding_grad: zeroing, checked atomic scatter-adds into an f32
// workspace, rounding to bf16), 33 ids of which several repeat, rows of 100 (a partial
// column tile), a 37-row table; and cross-entropy over 5001 classes (the GPU's per-column
// partials over two whole column tiles, the partial third per row).
func.func @main(%g: tensor<33x100xbf16>, %x: tensor<5x5001xbf16>) -> (tensor<37x100xbf16>, tensor<bf16>) {
  %ids = graph.constant dense<[7, 7, 7, 7, 7, 5, 30, 35, 9, 11, 32, 15, 10, 30, 9, 15, 23, 20, 3, 1, 32, 27, 31, 19, 30, 12, 16, 29, 4, 11, 4, 16, 36]> : tensor<33xi64>
  %labels = graph.constant dense<[4188, 1308, 546, 1492, 2069]> : tensor<5xi64>
  %dt = graph.embedding_grad %g, %ids {vocabulary = 37 : i64} : (tensor<33x100xbf16>, tensor<33xi64>) -> tensor<37x100xbf16>
  %loss = graph.cross_entropy %x, %labels : (tensor<5x5001xbf16>, tensor<5xi64>) -> tensor<bf16>
  func.return %dt, %loss : tensor<37x100xbf16>, tensor<bf16>
}

func.func @main(%a: tensor<100x200xbf16>, %b: tensor<200x72xbf16>, %c: tensor<2x40x33xf16>, %d: tensor<33x24xf16>) -> (tensor<100x72xbf16>, tensor<2x40x24xf16>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<100x200xbf16>, tensor<200x72xbf16>) -> tensor<100x72xbf16>
  %1 = "graph.relu"(%0) : (tensor<100x72xbf16>) -> tensor<100x72xbf16>
  %2 = "graph.matmul"(%c, %d) : (tensor<2x40x33xf16>, tensor<33x24xf16>) -> tensor<2x40x24xf16>
  func.return %1, %2 : tensor<100x72xbf16>, tensor<2x40x24xf16>
}

func.func @main(%a: tensor<1100x200xbf16>, %b: tensor<200x1736xbf16>, %x: tensor<1536x320xf16>, %w: tensor<1536x320xf16>, %c: tensor<3000x136xbf16>, %d: tensor<136x4000xbf16>) -> (tensor<1100x1736xbf16>, tensor<1536x1536xf16>, tensor<3000x4000xbf16>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<1100x200xbf16>, tensor<200x1736xbf16>) -> tensor<1100x1736xbf16>
  %1 = "graph.relu"(%0) : (tensor<1100x1736xbf16>) -> tensor<1100x1736xbf16>
  %2 = "graph.matmul"(%x, %w) <{transpose_b = true}> : (tensor<1536x320xf16>, tensor<1536x320xf16>) -> tensor<1536x1536xf16>
  %3 = "graph.matmul"(%c, %d) : (tensor<3000x136xbf16>, tensor<136x4000xbf16>) -> tensor<3000x4000xbf16>
  func.return %1, %2, %3 : tensor<1100x1736xbf16>, tensor<1536x1536xf16>, tensor<3000x4000xbf16>
}

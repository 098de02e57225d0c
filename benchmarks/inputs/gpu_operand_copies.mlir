func.func @main(%x: tensor<1000x1024xbf16>, %dy: tensor<1000x1032xbf16>, %a: tensor<1024x204xf16>, %b: tensor<204x1032xf16>, %s: tensor<1024x100xbf16>, %t: tensor<100x1024xbf16>) -> (tensor<1024x1032xbf16>, tensor<1024x1032xf16>, tensor<1024x1024xbf16>) {
  %0 = "graph.matmul"(%x, %dy) <{transpose_a = true}> : (tensor<1000x1024xbf16>, tensor<1000x1032xbf16>) -> tensor<1024x1032xbf16>
  %1 = "graph.matmul"(%a, %b) : (tensor<1024x204xf16>, tensor<204x1032xf16>) -> tensor<1024x1032xf16>
  %2 = "graph.matmul"(%s, %t) : (tensor<1024x100xbf16>, tensor<100x1024xbf16>) -> tensor<1024x1024xbf16>
  %3 = "graph.gelu"(%2) <{approximate = "tanh"}> : (tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
  func.return %0, %1, %3 : tensor<1024x1032xbf16>, tensor<1024x1032xf16>, tensor<1024x1024xbf16>
}

func.func @main(%a: tensor<17x1000xf32>, %b: tensor<1000xf32>, %g: tensor<1000xf32>, %s: tensor<33x100xf32>, %sg: tensor<100xf32>) -> (tensor<17x1000xf32>, tensor<17x1000xf32>, tensor<33x100xf32>, tensor<33x100xf32>, tensor<33xf32>) {
  %0 = "graph.add"(%a, %b) : (tensor<17x1000xf32>, tensor<1000xf32>) -> tensor<17x1000xf32>
  %1 = "graph.softmax"(%0) <{axis = -1 : i64}> : (tensor<17x1000xf32>) -> tensor<17x1000xf32>
  %2 = "graph.layernorm"(%a, %g, %b) <{epsilon = 1.0e-05 : f64}> : (tensor<17x1000xf32>, tensor<1000xf32>, tensor<1000xf32>) -> tensor<17x1000xf32>
  %3 = "graph.softmax"(%s) <{axis = -1 : i64}> : (tensor<33x100xf32>) -> tensor<33x100xf32>
  %4 = "graph.rmsnorm"(%s, %sg) : (tensor<33x100xf32>, tensor<100xf32>) -> tensor<33x100xf32>
  %5 = "graph.reduce_max"(%s) <{axes = array<i64: 1>}> : (tensor<33x100xf32>) -> tensor<33xf32>
  func.return %1, %2, %3, %4, %5 : tensor<17x1000xf32>, tensor<17x1000xf32>, tensor<33x100xf32>, tensor<33x100xf32>, tensor<33xf32>
}

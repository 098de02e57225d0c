func.func @main(%a: tensor<17x1000xf32>, %b: tensor<1000xf32>, %g: tensor<1000xf32>) -> (tensor<17x1000xf32>, tensor<17x1000xf32>) {
  %0 = "graph.add"(%a, %b) : (tensor<17x1000xf32>, tensor<1000xf32>) -> tensor<17x1000xf32>
  %1 = "graph.softmax"(%0) <{axis = -1 : i64}> : (tensor<17x1000xf32>) -> tensor<17x1000xf32>
  %2 = "graph.layernorm"(%a, %g, %b) <{epsilon = 1.0e-05 : f64}> : (tensor<17x1000xf32>, tensor<1000xf32>, tensor<1000xf32>) -> tensor<17x1000xf32>
  func.return %1, %2 : tensor<17x1000xf32>, tensor<17x1000xf32>
}

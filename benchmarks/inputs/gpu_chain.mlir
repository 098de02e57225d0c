func.func @main(%a: tensor<7x1000xf32>, %b: tensor<1000xf32>) -> tensor<7x1000xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<7x1000xf32>, tensor<1000xf32>) -> tensor<7x1000xf32>
  %1 = "graph.exp"(%0) : (tensor<7x1000xf32>) -> tensor<7x1000xf32>
  %2 = "graph.mul"(%1, %a) : (tensor<7x1000xf32>, tensor<7x1000xf32>) -> tensor<7x1000xf32>
  func.return %2 : tensor<7x1000xf32>
}

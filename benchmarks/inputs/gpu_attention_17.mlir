func.func @main(%q: tensor<2x17x32xf32>, %k: tensor<2x17x32xf32>, %v: tensor<2x17x32xf32>) -> tensor<2x17x32xf32> {
  %0 = "graph.attention"(%q, %k, %v) <{causal = true, scale = 0.17677669529663687 : f64}> : (tensor<2x17x32xf32>, tensor<2x17x32xf32>, tensor<2x17x32xf32>) -> tensor<2x17x32xf32>
  func.return %0 : tensor<2x17x32xf32>
}

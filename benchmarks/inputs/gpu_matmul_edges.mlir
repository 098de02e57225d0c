func.func @main(%a: tensor<17x33xf32>, %b: tensor<33x65xf32>, %c: tensor<65xf32>) -> (tensor<17x65xf32>, tensor<65xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<17x33xf32>, tensor<33x65xf32>) -> tensor<17x65xf32>
  %1 = "graph.add"(%0, %c) : (tensor<17x65xf32>, tensor<65xf32>) -> tensor<17x65xf32>
  %2 = "graph.relu"(%1) : (tensor<17x65xf32>) -> tensor<17x65xf32>
  %3 = "graph.reduce_sum"(%2) <{axes = array<i64: 0>}> : (tensor<17x65xf32>) -> tensor<65xf32>
  func.return %2, %3 : tensor<17x65xf32>, tensor<65xf32>
}

// A 3-layer MLP in the generic form of docs/graph-dialect.md: x [32, 512] -> [32, 10].
func.func @mlp(%x: tensor<32x512xf32> {graph.name = "x"},
               %w1: tensor<512x512xf32> {graph.name = "w1", graph.role = "param"},
               %b1: tensor<512xf32> {graph.name = "b1", graph.role = "param"},
               %w2: tensor<512x256xf32> {graph.name = "w2", graph.role = "param"},
               %b2: tensor<256xf32> {graph.name = "b2", graph.role = "param"},
               %w3: tensor<10x256xf32> {graph.name = "w3", graph.role = "param"},
               %b3: tensor<10xf32> {graph.name = "b3", graph.role = "param"}) -> tensor<32x10xf32> {
  %0 = "graph.matmul"(%x, %w1) <{transpose_a = false, transpose_b = true, alpha = 1.0 : f64}> : (tensor<32x512xf32>, tensor<512x512xf32>) -> tensor<32x512xf32>
  %1 = "graph.add"(%0, %b1) : (tensor<32x512xf32>, tensor<512xf32>) -> tensor<32x512xf32>
  %2 = "graph.relu"(%1) : (tensor<32x512xf32>) -> tensor<32x512xf32>
  %3 = "graph.matmul"(%2, %w2) : (tensor<32x512xf32>, tensor<512x256xf32>) -> tensor<32x256xf32>
  %4 = "graph.add"(%3, %b2) : (tensor<32x256xf32>, tensor<256xf32>) -> tensor<32x256xf32>
  %5 = "graph.gelu"(%4) <{approximate = "tanh"}> : (tensor<32x256xf32>) -> tensor<32x256xf32>
  %6 = "graph.matmul"(%5, %w3) <{transpose_b = true}> : (tensor<32x256xf32>, tensor<10x256xf32>) -> tensor<32x10xf32>
  %7 = "graph.add"(%6, %b3) : (tensor<32x10xf32>, tensor<10xf32>) -> tensor<32x10xf32>
  func.return %7 : tensor<32x10xf32>
}

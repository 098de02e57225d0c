builtin.module {
  func.func @transformer_block(%x: tensor<2x16x64xf32> {graph.name = "x", graph.role = "input"}, %ln1_gamma: tensor<64xf32> {graph.name = "ln1_gamma", graph.role = "param"}, %ln1_beta: tensor<64xf32> {graph.name = "ln1_beta", graph.role = "param"}, %w_q: tensor<64x64xf32> {graph.name = "w_q", graph.role = "param"}, %w_k: tensor<64x64xf32> {graph.name = "w_k", graph.role = "param"}, %w_v: tensor<64x64xf32> {graph.name = "w_v", graph.role = "param"}, %w_o: tensor<64x64xf32> {graph.name = "w_o", graph.role = "param"}, %ln2_gamma: tensor<64xf32> {graph.name = "ln2_gamma", graph.role = "param"}, %ln2_beta: tensor<64xf32> {graph.name = "ln2_beta", graph.role = "param"}, %w: tensor<64x256xf32> {graph.name = "w_1", graph.role = "param"}, %b: tensor<256xf32> {graph.name = "b_1", graph.role = "param"}, %w_1: tensor<256x64xf32> {graph.name = "w_2", graph.role = "param"}, %b_1: tensor<64xf32> {graph.name = "b_2", graph.role = "param"}) -> tensor<2x16x64xf32> {
    %0 = graph.layernorm %x, %ln1_gamma, %ln1_beta : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    %1 = graph.matmul %0, %w_q : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %2 = graph.reshape %1 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %3 = graph.transpose %2 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %4 = graph.matmul %0, %w_k : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %5 = graph.reshape %4 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %6 = graph.transpose %5 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %7 = graph.matmul %0, %w_v : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %8 = graph.reshape %7 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %9 = graph.transpose %8 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %10 = graph.matmul %3, %6 {transpose_b = true, alpha = 2.500000e-01 : f64} : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %11 = graph.constant dense<"0x00FFFFFFFFFFFFFFFFFFFFFFFFFFFFFF0000FFFFFFFFFFFFFFFFFFFFFFFFFFFF000000FFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFFFFFFFFFF0000000000FFFFFFFFFFFFFFFFFFFFFF000000000000FFFFFFFFFFFFFFFFFFFF00000000000000FFFFFFFFFFFFFFFFFF0000000000000000FFFFFFFFFFFFFFFF000000000000000000FFFFFFFFFFFFFF00000000000000000000FFFFFFFFFFFF0000000000000000000000FFFFFFFFFF000000000000000000000000FFFFFFFF00000000000000000000000000FFFFFF0000000000000000000000000000FFFF000000000000000000000000000000FF00000000000000000000000000000000"> : tensor<16x16xi1>
    %12 = graph.constant dense<-1.000000e+09> : tensor<f32>
    %13 = graph.select %11, %12, %10 : (tensor<16x16xi1>, tensor<f32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %14 = graph.softmax %13 : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %15 = graph.matmul %14, %9 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %16 = graph.transpose %15 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
    %17 = graph.reshape %16 : (tensor<2x16x4x16xf32>) -> tensor<2x16x64xf32>
    %18 = graph.matmul %17, %w_o : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %19 = graph.add %x, %18 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
    %20 = graph.layernorm %19, %ln2_gamma, %ln2_beta : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    %21 = graph.matmul %20, %w : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
    %22 = graph.add %21, %b : (tensor<2x16x256xf32>, tensor<256xf32>) -> tensor<2x16x256xf32>
    %23 = graph.gelu %22 : (tensor<2x16x256xf32>) -> tensor<2x16x256xf32>
    %24 = graph.matmul %23, %w_1 : (tensor<2x16x256xf32>, tensor<256x64xf32>) -> tensor<2x16x64xf32>
    %25 = graph.add %24, %b_1 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    %26 = graph.add %19, %25 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
    func.return %26 : tensor<2x16x64xf32>
  }
}

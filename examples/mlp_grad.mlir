// A small MLP classifier's training loss, marked for differentiation.
//
//   logits = gelu(x @ w1ᵀ + b1) @ w2ᵀ + b2        x [8, 16] -> hidden 32 -> 10 classes
//   loss   = cross_entropy(logits, labels)         mean over the 8 rows, a rank-0 tensor
//
// The unit attribute `graph.differentiate` asks the `autodiff` pass for @mlp_loss_grad:
//
//   strata-opt examples/mlp_grad.mlir -p autodiff      # prints @mlp_loss and @mlp_loss_grad
//   strata-run examples/mlp_grad.mlir --check-grad     # @mlp_loss_grad vs finite differences
//
// @mlp_loss_grad takes (x, w1, b1, w2, b2, labels, d_result0) and returns
// (loss, dx, dw1, db1, dw2, db2): the labels are integers, so they get no gradient.
func.func @mlp_loss(%x: tensor<8x16xf32> {graph.name = "x"},
                    %w1: tensor<32x16xf32> {graph.name = "w1", graph.role = "param"},
                    %b1: tensor<32xf32> {graph.name = "b1", graph.role = "param"},
                    %w2: tensor<10x32xf32> {graph.name = "w2", graph.role = "param"},
                    %b2: tensor<10xf32> {graph.name = "b2", graph.role = "param"},
                    %labels: tensor<8xi64> {graph.name = "labels"}) -> tensor<f32> attributes {graph.differentiate} {
  %0 = "graph.matmul"(%x, %w1) <{transpose_b = true}> : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
  %1 = "graph.add"(%0, %b1) : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = "graph.gelu"(%1) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = "graph.matmul"(%2, %w2) <{transpose_b = true}> : (tensor<8x32xf32>, tensor<10x32xf32>) -> tensor<8x10xf32>
  %4 = "graph.add"(%3, %b2) : (tensor<8x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %5 = "graph.cross_entropy"(%4, %labels) : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  func.return %5 : tensor<f32>
}

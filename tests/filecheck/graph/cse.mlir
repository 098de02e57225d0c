// Graph ops are Pure, so upstream cse merges equal ones and dce drops dead ones;
// graph.dropout is not Pure: two equal dropouts stay two draws, and it is never CSE'd.
// RUN: strata-opt %s -p cse,dce | filecheck %s

// CHECK-LABEL: func.func @merge_pure
// CHECK-NEXT:    %0 = graph.exp %x
// CHECK-NEXT:    %1 = graph.add %0, %0
// CHECK-NEXT:    func.return %1
func.func @merge_pure(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// CHECK-LABEL: func.func @dropout_not_merged
// CHECK-NEXT:    %0 = graph.dropout %x
// CHECK-NEXT:    %1 = graph.dropout %x
// CHECK-NEXT:    %2 = graph.add %0, %1
func.func @dropout_not_merged(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.dropout"(%x) <{p = 0.5 : f64, seed = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.dropout"(%x) <{p = 0.5 : f64, seed = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

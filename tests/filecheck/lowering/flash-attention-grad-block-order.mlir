// The flash backward's block order (flash_attention_grad.HEAVIEST_LAST). Causal blocks
// differ in work, so they run heaviest first with the batch (2 x 3 = 6 heads) fastest: the
// flat block id b gives rank b / 6 and heads b % 6. stats and dq take query block 3 - rank
// (the last sees every key block); dkv takes key block rank (every query block sees the
// first). Without causal masks every block has the same work: the grid's own order, the
// 4 blocks fastest.
// RUN: strata-opt %s -p "lower-graph-to-tile{flash_attention=true},lower-tile-to-gpu{warpgroup_mma=true}" | filecheck %s

func.func @causal(%q: tensor<2x3x200x64xbf16>, %k: tensor<2x3x200x64xbf16>, %v: tensor<2x3x200x64xbf16>, %o: tensor<2x3x200x64xbf16>, %do: tensor<2x3x200x64xbf16>) -> (tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 0.125 : f64, causal = true} : (tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>) -> (tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>)
  func.return %dq, %dk, %dv : tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>
}

func.func @unmasked(%q: tensor<2x3x200x64xbf16>, %k: tensor<2x3x200x64xbf16>, %v: tensor<2x3x200x64xbf16>, %o: tensor<2x3x200x64xbf16>, %do: tensor<2x3x200x64xbf16>) -> (tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 0.125 : f64, causal = false} : (tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>) -> (tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>)
  func.return %dq, %dk, %dv : tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>, tensor<2x3x200x64xbf16>
}

// CHECK-LABEL: func.func @causal_attention_grad_stats_0(
// CHECK:         [[FLAT:%.+]] = arith.addi %begin, %{{.+}} : index
// CHECK:         [[HEADS:%.+]] = arith.constant 6 : index
// CHECK-NEXT:    [[RANK:%.+]] = arith.divui [[FLAT]], [[HEADS]] : index
// CHECK-NEXT:    [[LAST:%.+]] = arith.constant 3 : index
// CHECK-NEXT:    {{%.+}} = arith.subi [[LAST]], [[RANK]] : index
// CHECK-NEXT:    {{%.+}} = arith.remui [[FLAT]], [[HEADS]] : index

// CHECK-LABEL: func.func @causal_attention_grad_dq_1(
// CHECK:         [[FLAT:%.+]] = arith.addi %begin, %{{.+}} : index
// CHECK:         [[HEADS:%.+]] = arith.constant 6 : index
// CHECK-NEXT:    [[RANK:%.+]] = arith.divui [[FLAT]], [[HEADS]] : index
// CHECK-NEXT:    [[LAST:%.+]] = arith.constant 3 : index
// CHECK-NEXT:    {{%.+}} = arith.subi [[LAST]], [[RANK]] : index
// CHECK-NEXT:    {{%.+}} = arith.remui [[FLAT]], [[HEADS]] : index

// CHECK-LABEL: func.func @causal_attention_grad_dkv_2(
// CHECK:         [[FLAT:%.+]] = arith.addi %begin, %{{.+}} : index
// CHECK:         [[HEADS:%.+]] = arith.constant 6 : index
// CHECK-NEXT:    {{%.+}} = arith.divui [[FLAT]], [[HEADS]] : index
// CHECK-NEXT:    {{%.+}} = arith.remui [[FLAT]], [[HEADS]] : index

// CHECK-LABEL: func.func @unmasked_attention_grad_dkv_2(
// CHECK:         [[FLAT:%.+]] = arith.addi %begin, %{{.+}} : index
// CHECK:         [[BLOCKS:%.+]] = arith.constant 4 : index
// CHECK-NEXT:    {{%.+}} = arith.remui [[FLAT]], [[BLOCKS]] : index
// CHECK-NEXT:    {{%.+}} = arith.divui [[FLAT]], [[BLOCKS]] : index

// Every graph op parses from the generic form, prints in the custom form, and
// re-parses; the generic form round-trips too (properties with defaults are materialized).
// RUN: strata-opt %s | strata-opt | filecheck %s
// RUN: strata-opt %s --print-op-generic | strata-opt --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @elementwise(%x: tensor<4x8xf32> {graph.name = "x"}, %y: tensor<8xf32> {graph.name = "y", graph.role = "param"}, %i: tensor<4x8xi32>, %m: tensor<4x1xi1>) -> tensor<4x8xf32> {
  %0 = "graph.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.abs"(%i) : (tensor<4x8xi32>) -> tensor<4x8xi32>
  %2 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.log"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "graph.sqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = "graph.rsqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = "graph.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = "graph.silu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %10 = "graph.erf"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %11 = "graph.gelu"(%x) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %12 = "graph.gelu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %13 = "graph.add"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %14 = "graph.sub"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %15 = "graph.mul"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %16 = "graph.div"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %17 = "graph.maximum"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %18 = "graph.minimum"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %19 = "graph.pow"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %20 = "graph.scale"(%x) <{value = 5.000000e-01 : f64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %21 = "graph.compare"(%x, %y) <{predicate = "lt"}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %22 = "graph.select"(%m, %x, %y) : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %23 = "graph.cast"(%x) : (tensor<4x8xf32>) -> tensor<4x8xi32>
  %24 = "graph.dropout"(%x) <{p = 1.000000e-01 : f64, seed = 7 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %24 : tensor<4x8xf32>
}

func.func @nn(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %ids: tensor<3x5xi64>, %table: tensor<10x8xf32>, %labels: tensor<4xi32>, %logits: tensor<4x10xf32>) -> tensor<f32> {
  %0 = "graph.constant"() <{value = dense<1.500000e+00> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %1 = "graph.constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %2 = "graph.reduce_sum"(%x) <{axes = array<i64: -1>, keepdims = true}> : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %3 = "graph.reduce_mean"(%x) <{axes = array<i64: 0, 2>}> : (tensor<2x4x8xf32>) -> tensor<4xf32>
  %4 = "graph.reduce_max"(%x) <{axes = array<i64: 1>, keepdims = false}> : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
  %5 = "graph.matmul"(%x, %w) <{transpose_a = false, transpose_b = true, alpha = 1.0 : f64}> : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %6 = "graph.matmul"(%x, %x) <{transpose_a = true, alpha = 2.5e-01 : f64}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
  %7 = "graph.softmax"(%x) <{axis = -1 : i64}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %8 = "graph.log_softmax"(%x) <{axis = 1 : i64}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %9 = "graph.layernorm"(%x, %g, %b) <{epsilon = 1.000000e-05 : f64}> : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %10 = "graph.rmsnorm"(%x, %g) : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %11 = "graph.attention"(%x, %x, %x) <{scale = 0.35355339059327379 : f64, causal = true}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %12 = "graph.embedding"(%table, %ids) : (tensor<10x8xf32>, tensor<3x5xi64>) -> tensor<3x5x8xf32>
  %13 = "graph.cross_entropy"(%logits, %labels) : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  func.return %13 : tensor<f32>
}

func.func @shapes(%x: tensor<2x4x8xf32>, %y: tensor<2x3x8xf32>) -> tensor<2x7x8xf32> {
  %0 = "graph.reshape"(%x) : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %1 = "graph.transpose"(%x) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x4x8xf32>) -> tensor<8x2x4xf32>
  %2 = "graph.broadcast_to"(%x) : (tensor<2x4x8xf32>) -> tensor<3x2x4x8xf32>
  %3 = "graph.slice"(%x) <{starts = array<i64: 0, 1, 0>, limits = array<i64: 2, 4, 8>, steps = array<i64: 1, 2, 3>}> : (tensor<2x4x8xf32>) -> tensor<2x2x3xf32>
  %4 = "graph.concat"(%x, %y) <{axis = -2 : i64}> : (tensor<2x4x8xf32>, tensor<2x3x8xf32>) -> tensor<2x7x8xf32>
  func.return %4 : tensor<2x7x8xf32>
}

// The gradient ops (dialects/graph_grad.py): attention_grad's three results have the types
// of q, k and v (here q/k head 8, v head 16, 4 queries, 6 keys); causal defaults to false.
// embedding_grad's rows of 16 go into a [vocabulary, 16] table; both take a padding_idx.
func.func @grad(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x16xf32>, %o: tensor<2x4x16xf32>, %do: tensor<2x4x16xf32>, %h: tensor<64x32xbf16>, %ids: tensor<2x4xi32>) -> tensor<2x4x8xf32> {
  %0:3 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 0.35355339059327379 : f64}> : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>)
  %1:3 = "graph.attention_grad"(%h, %h, %h, %h, %h) <{scale = 1.250000e-01 : f64, causal = true}> : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>)
  %2:2 = "graph.attention_lse"(%h, %h, %h) <{scale = 1.250000e-01 : f64, causal = true}> : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64xf32>)
  %3:3 = "graph.attention_grad"(%h, %h, %h, %2#0, %h, %2#1) <{scale = 1.250000e-01 : f64, causal = true}> : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64xf32>) -> (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>)
  %4 = "graph.embedding_grad"(%o, %ids) <{vocabulary = 100 : i64}> : (tensor<2x4x16xf32>, tensor<2x4xi32>) -> tensor<100x16xf32>
  %5 = "graph.embedding_grad"(%o, %ids) <{vocabulary = 100 : i64, padding_idx = 0 : i64}> : (tensor<2x4x16xf32>, tensor<2x4xi32>) -> tensor<100x16xf32>
  %6 = "graph.embedding"(%5, %ids) <{padding_idx = 99 : i64}> : (tensor<100x16xf32>, tensor<2x4xi32>) -> tensor<2x4x16xf32>
  func.return %0#0 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @elementwise(%x: tensor<4x8xf32> {graph.name = "x"}, %y: tensor<8xf32> {graph.name = "y", graph.role = "param"}, %i: tensor<4x8xi32>, %m: tensor<4x1xi1>) -> tensor<4x8xf32> {
// CHECK-NEXT: %0 = graph.neg %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %1 = graph.abs %i : (tensor<4x8xi32>) -> tensor<4x8xi32>
// CHECK-NEXT: %2 = graph.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %3 = graph.log %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %4 = graph.sqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %5 = graph.rsqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %6 = graph.tanh %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %7 = graph.sigmoid %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %8 = graph.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %9 = graph.silu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %10 = graph.erf %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %11 = graph.gelu %x {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %12 = graph.gelu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %13 = graph.add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %14 = graph.sub %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %15 = graph.mul %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %16 = graph.div %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %17 = graph.maximum %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %18 = graph.minimum %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %19 = graph.pow %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %20 = graph.scale %x {value = 5.000000e-01 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %21 = graph.compare %x, %y {predicate = "lt"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// CHECK-NEXT: %22 = graph.select %m, %x, %y : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %23 = graph.cast %x : (tensor<4x8xf32>) -> tensor<4x8xi32>
// CHECK-NEXT: %24 = graph.dropout %x {p = 1.000000e-01 : f64, seed = 7 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: func.return %24 : tensor<4x8xf32>
// CHECK-LABEL: func.func @nn(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %ids: tensor<3x5xi64>, %table: tensor<10x8xf32>, %labels: tensor<4xi32>, %logits: tensor<4x10xf32>) -> tensor<f32> {
// CHECK-NEXT: %0 = graph.constant dense<1.500000e+00> : tensor<2x3xf32>
// CHECK-NEXT: %1 = graph.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK-NEXT: %2 = graph.reduce_sum %x {axes = array<i64: -1>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
// CHECK-NEXT: %3 = graph.reduce_mean %x {axes = array<i64: 0, 2>} : (tensor<2x4x8xf32>) -> tensor<4xf32>
// CHECK-NEXT: %4 = graph.reduce_max %x {axes = array<i64: 1>} : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %5 = graph.matmul %x, %w {transpose_b = true} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: %6 = graph.matmul %x, %x {transpose_a = true, alpha = 2.500000e-01 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
// CHECK-NEXT: %7 = graph.softmax %x : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %8 = graph.log_softmax %x {axis = 1 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %9 = graph.layernorm %x, %g, %b : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %10 = graph.rmsnorm %x, %g : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %11 = graph.attention %x, %x, %x {scale = 0.35355339059327379 : f64, causal = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %12 = graph.embedding %table, %ids : (tensor<10x8xf32>, tensor<3x5xi64>) -> tensor<3x5x8xf32>
// CHECK-NEXT: %13 = graph.cross_entropy %logits, %labels : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
// CHECK-NEXT: func.return %13 : tensor<f32>
// CHECK-LABEL: func.func @shapes(%x: tensor<2x4x8xf32>, %y: tensor<2x3x8xf32>) -> tensor<2x7x8xf32> {
// CHECK-NEXT: %0 = graph.reshape %x : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %1 = graph.transpose %x {permutation = array<i64: 2, 0, 1>} : (tensor<2x4x8xf32>) -> tensor<8x2x4xf32>
// CHECK-NEXT: %2 = graph.broadcast_to %x : (tensor<2x4x8xf32>) -> tensor<3x2x4x8xf32>
// CHECK-NEXT: %3 = graph.slice %x {starts = array<i64: 0, 1, 0>, limits = array<i64: 2, 4, 8>, steps = array<i64: 1, 2, 3>} : (tensor<2x4x8xf32>) -> tensor<2x2x3xf32>
// CHECK-NEXT: %4 = graph.concat %x, %y {axis = -2 : i64} : (tensor<2x4x8xf32>, tensor<2x3x8xf32>) -> tensor<2x7x8xf32>
// CHECK-NEXT: func.return %4 : tensor<2x7x8xf32>
// CHECK-LABEL: func.func @grad(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x16xf32>, %o: tensor<2x4x16xf32>, %do: tensor<2x4x16xf32>, %h: tensor<64x32xbf16>, %ids: tensor<2x4xi32>) -> tensor<2x4x8xf32> {
// CHECK-NEXT: %0, %1, %2 = graph.attention_grad %q, %k, %v, %o, %do {scale = 0.35355339059327379 : f64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>)
// CHECK-NEXT: %3, %4, %5 = graph.attention_grad %h, %h, %h, %h, %h {scale = 1.250000e-01 : f64, causal = true} : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>)
// CHECK-NEXT: %6, %7 = graph.attention_lse %h, %h, %h {scale = 1.250000e-01 : f64, causal = true} : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64xf32>)
// CHECK-NEXT: %8, %9, %10 = graph.attention_grad %h, %h, %h, %6, %h lse %7 {scale = 1.250000e-01 : f64, causal = true} : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64xf32>) -> (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>)
// CHECK-NEXT: %11 = graph.embedding_grad %o, %ids {vocabulary = 100 : i64} : (tensor<2x4x16xf32>, tensor<2x4xi32>) -> tensor<100x16xf32>
// CHECK-NEXT: %12 = graph.embedding_grad %o, %ids {vocabulary = 100 : i64, padding_idx = 0 : i64} : (tensor<2x4x16xf32>, tensor<2x4xi32>) -> tensor<100x16xf32>
// CHECK-NEXT: %13 = graph.embedding %12, %ids {padding_idx = 99 : i64} : (tensor<100x16xf32>, tensor<2x4xi32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: func.return %0 : tensor<2x4x8xf32>

// GENERIC: %0 = "graph.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %1 = "graph.abs"(%i) : (tensor<4x8xi32>) -> tensor<4x8xi32>
// GENERIC: %2 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %3 = "graph.log"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %4 = "graph.sqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %5 = "graph.rsqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %6 = "graph.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %7 = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %8 = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %9 = "graph.silu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %10 = "graph.erf"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %11 = "graph.gelu"(%x) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %12 = "graph.gelu"(%x) <{approximate = "none"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %13 = "graph.add"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: %14 = "graph.sub"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: %15 = "graph.mul"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: %16 = "graph.div"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: %17 = "graph.maximum"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: %18 = "graph.minimum"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: %19 = "graph.pow"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: %20 = "graph.scale"(%x) <{value = 5.000000e-01 : f64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %21 = "graph.compare"(%x, %y) <{predicate = "lt"}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// GENERIC: %22 = "graph.select"(%m, %x, %y) : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: %23 = "graph.cast"(%x) : (tensor<4x8xf32>) -> tensor<4x8xi32>
// GENERIC: %24 = "graph.dropout"(%x) <{p = 1.000000e-01 : f64, seed = 7 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %0 = "graph.constant"() <{value = dense<1.500000e+00> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
// GENERIC: %1 = "graph.constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}> : () -> tensor<3xi64>
// GENERIC: %2 = "graph.reduce_sum"(%x) <{axes = array<i64: -1>, keepdims = true}> : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
// GENERIC: %3 = "graph.reduce_mean"(%x) <{axes = array<i64: 0, 2>, keepdims = false}> : (tensor<2x4x8xf32>) -> tensor<4xf32>
// GENERIC: %4 = "graph.reduce_max"(%x) <{axes = array<i64: 1>, keepdims = false}> : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
// GENERIC: %5 = "graph.matmul"(%x, %w) <{transpose_a = false, transpose_b = true, alpha = 1.000000e+00 : f64}> : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
// GENERIC: %6 = "graph.matmul"(%x, %x) <{transpose_a = true, alpha = 2.500000e-01 : f64, transpose_b = false}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
// GENERIC: %7 = "graph.softmax"(%x) <{axis = -1 : i64}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// GENERIC: %8 = "graph.log_softmax"(%x) <{axis = 1 : i64}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// GENERIC: %9 = "graph.layernorm"(%x, %g, %b) <{epsilon = 1.000000e-05 : f64}> : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// GENERIC: %10 = "graph.rmsnorm"(%x, %g) <{epsilon = 1.000000e-06 : f64}> : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// GENERIC: %11 = "graph.attention"(%x, %x, %x) <{scale = 0.35355339059327379 : f64, causal = true}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// GENERIC: %12 = "graph.embedding"(%table, %ids) : (tensor<10x8xf32>, tensor<3x5xi64>) -> tensor<3x5x8xf32>
// GENERIC: %13 = "graph.cross_entropy"(%logits, %labels) : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
// GENERIC: %0 = "graph.reshape"(%x) : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
// GENERIC: %1 = "graph.transpose"(%x) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x4x8xf32>) -> tensor<8x2x4xf32>
// GENERIC: %2 = "graph.broadcast_to"(%x) : (tensor<2x4x8xf32>) -> tensor<3x2x4x8xf32>
// GENERIC: %3 = "graph.slice"(%x) <{starts = array<i64: 0, 1, 0>, limits = array<i64: 2, 4, 8>, steps = array<i64: 1, 2, 3>}> : (tensor<2x4x8xf32>) -> tensor<2x2x3xf32>
// GENERIC: %4 = "graph.concat"(%x, %y) <{axis = -2 : i64}> : (tensor<2x4x8xf32>, tensor<2x3x8xf32>) -> tensor<2x7x8xf32>
// GENERIC: %0, %1, %2 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 0.35355339059327379 : f64, causal = false}> : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>)
// GENERIC: %3, %4, %5 = "graph.attention_grad"(%h, %h, %h, %h, %h) <{scale = 1.250000e-01 : f64, causal = true}> : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>)
// GENERIC: %6, %7 = "graph.attention_lse"(%h, %h, %h) <{scale = 1.250000e-01 : f64, causal = true}> : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64xf32>)
// GENERIC: %8, %9, %10 = "graph.attention_grad"(%h, %h, %h, %6, %h, %7) <{scale = 1.250000e-01 : f64, causal = true}> : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64xf32>) -> (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>)
// GENERIC: %11 = "graph.embedding_grad"(%o, %ids) <{vocabulary = 100 : i64}> : (tensor<2x4x16xf32>, tensor<2x4xi32>) -> tensor<100x16xf32>
// GENERIC: %12 = "graph.embedding_grad"(%o, %ids) <{vocabulary = 100 : i64, padding_idx = 0 : i64}> : (tensor<2x4x16xf32>, tensor<2x4xi32>) -> tensor<100x16xf32>
// GENERIC: %13 = "graph.embedding"(%12, %ids) <{padding_idx = 99 : i64}> : (tensor<100x16xf32>, tensor<2x4xi32>) -> tensor<2x4x16xf32>
// GENERIC: "func.return"(%0) : (tensor<2x4x8xf32>) -> ()

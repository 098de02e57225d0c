// RUN: strata-opt %s --split-input-file --verify-diagnostics | filecheck %s
//
// Invalid graph-dialect IR: one split-input-file chunk per verifier rule of dialects/graph_*.py
// (each op's infer_result_type / check_result_type, GraphOp.verify_, and the ops'
// operand/result/property constraints). Every chunk must produce exactly the diagnostic
// its CHECK line names; each CHECK matches only its own chunk's diagnostic.

// ============================================================================================
// Operand and result types: every operand and the result must be a ranked, statically
// shaped tensor of f16/bf16/f32/f64/i1/i32/i64 (GraphOp.verify_ / _tensor_type, and the
// ops' operand_def/result_def constraints).
// ============================================================================================

// Non-tensor (scalar) operand.
// CHECK: error: 'graph.relu': operand 'x' at position 0 does not verify
func.func @chunk0(%x: f32) {
  %0 = "graph.relu"(%x) : (f32) -> tensor<4xf32>
  func.return
}

// -----

// Unranked tensor operand.
// CHECK: error: 'graph.add': operand 'rhs' at position 1 does not verify
func.func @chunk1(%x: tensor<4xf32>, %y: tensor<*xf32>) {
  %0 = "graph.add"(%x, %y) : (tensor<4xf32>, tensor<*xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Non-tensor (vector) operand of a variadic op.
// CHECK: error: 'graph.concat': operand 'inputs' at positions 0 to 1 does not verify
func.func @chunk2(%x: tensor<4xf32>, %y: vector<4xf32>) {
  %0 = "graph.concat"(%x, %y) <{axis = 0 : i64}> : (tensor<4xf32>, vector<4xf32>) -> tensor<8xf32>
  func.return
}

// -----

// Non-tensor (memref) operand of a three-operand op.
// CHECK: error: 'graph.attention': operand 'k' at position 1 does not verify
func.func @chunk3(%q: tensor<2x8xf32>, %k: memref<2x8xf32>, %v: tensor<2x8xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<2x8xf32>, memref<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// Non-tensor (memref) result.
// CHECK: error: 'graph.exp': result 'result' at position 0 does not verify
func.func @chunk4(%x: tensor<4xf32>) {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> memref<4xf32>
  func.return
}

// -----

// Non-tensor result of a matmul.
// CHECK: error: 'graph.matmul': result 'result' at position 0 does not verify
func.func @chunk5(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf32>) -> f32
  func.return
}

// -----

// Constant whose value (and so result) is a vector, not a tensor.
// CHECK: error: 'graph.constant': result 'result' at position 0 does not verify:
func.func @chunk6() {
  %0 = "graph.constant"() <{value = dense<1.0> : vector<4xf32>}> : () -> vector<4xf32>
  func.return
}

// -----

// ============================================================================================
// Unsupported element type (one chunk per op; the label names the operand or result).
// ============================================================================================

// graph.neg: unsupported element type on x.
// CHECK: error: 'graph.neg': x has unsupported element type i8
func.func @chunk7(%x: tensor<4xi8>) {
  %0 = "graph.neg"(%x) : (tensor<4xi8>) -> tensor<4xi8>
  func.return
}

// -----

// graph.abs: unsupported element type on x.
// CHECK: error: 'graph.abs': x has unsupported element type i16
func.func @chunk8(%x: tensor<4xi16>) {
  %0 = "graph.abs"(%x) : (tensor<4xi16>) -> tensor<4xi16>
  func.return
}

// -----

// graph.exp: unsupported element type on x.
// CHECK: error: 'graph.exp': x has unsupported element type f80
func.func @chunk9(%x: tensor<4xf80>) {
  %0 = "graph.exp"(%x) : (tensor<4xf80>) -> tensor<4xf80>
  func.return
}

// -----

// graph.log: unsupported element type on x.
// CHECK: error: 'graph.log': x has unsupported element type f128
func.func @chunk10(%x: tensor<4xf128>) {
  %0 = "graph.log"(%x) : (tensor<4xf128>) -> tensor<4xf128>
  func.return
}

// -----

// graph.sqrt: unsupported element type on x.
// CHECK: error: 'graph.sqrt': x has unsupported element type index
func.func @chunk11(%x: tensor<4xindex>) {
  %0 = "graph.sqrt"(%x) : (tensor<4xindex>) -> tensor<4xindex>
  func.return
}

// -----

// graph.rsqrt: unsupported element type on x.
// CHECK: error: 'graph.rsqrt': x has unsupported element type complex<f32>
func.func @chunk12(%x: tensor<4xcomplex<f32>>) {
  %0 = "graph.rsqrt"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  func.return
}

// -----

// graph.tanh: unsupported element type on x.
// CHECK: error: 'graph.tanh': x has unsupported element type i8
func.func @chunk13(%x: tensor<4xi8>) {
  %0 = "graph.tanh"(%x) : (tensor<4xi8>) -> tensor<4xi8>
  func.return
}

// -----

// graph.sigmoid: unsupported element type on x.
// CHECK: error: 'graph.sigmoid': x has unsupported element type i4
func.func @chunk14(%x: tensor<4xi4>) {
  %0 = "graph.sigmoid"(%x) : (tensor<4xi4>) -> tensor<4xi4>
  func.return
}

// -----

// graph.relu: unsupported element type on x.
// CHECK: error: 'graph.relu': x has unsupported element type i16
func.func @chunk15(%x: tensor<4xi16>) {
  %0 = "graph.relu"(%x) : (tensor<4xi16>) -> tensor<4xi16>
  func.return
}

// -----

// graph.silu: unsupported element type on x.
// CHECK: error: 'graph.silu': x has unsupported element type f80
func.func @chunk16(%x: tensor<4xf80>) {
  %0 = "graph.silu"(%x) : (tensor<4xf80>) -> tensor<4xf80>
  func.return
}

// -----

// graph.erf: unsupported element type on x.
// CHECK: error: 'graph.erf': x has unsupported element type f128
func.func @chunk17(%x: tensor<4xf128>) {
  %0 = "graph.erf"(%x) : (tensor<4xf128>) -> tensor<4xf128>
  func.return
}

// -----

// graph.gelu: unsupported element type on x.
// CHECK: error: 'graph.gelu': x has unsupported element type i8
func.func @chunk18(%x: tensor<4xi8>) {
  %0 = "graph.gelu"(%x) <{approximate = "tanh"}> : (tensor<4xi8>) -> tensor<4xi8>
  func.return
}

// -----

// graph.scale: unsupported element type on x.
// CHECK: error: 'graph.scale': x has unsupported element type i8
func.func @chunk19(%x: tensor<4xi8>) {
  %0 = "graph.scale"(%x) <{value = 2.0 : f64}> : (tensor<4xi8>) -> tensor<4xi8>
  func.return
}

// -----

// graph.dropout: unsupported element type on result.
// CHECK: error: 'graph.dropout': result has unsupported element type f80
func.func @chunk20(%x: tensor<4xf32>) {
  %0 = "graph.dropout"(%x) <{p = 0.5 : f64, seed = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf80>
  func.return
}

// -----

// graph.add: unsupported element type on lhs.
// CHECK: error: 'graph.add': lhs has unsupported element type i8
func.func @chunk21(%x: tensor<4xi8>, %y: tensor<4xi8>) {
  %0 = "graph.add"(%x, %y) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return
}

// -----

// graph.sub: unsupported element type on rhs.
// CHECK: error: 'graph.sub': rhs has unsupported element type i16
func.func @chunk22(%x: tensor<4xi32>, %y: tensor<4xi16>) {
  %0 = "graph.sub"(%x, %y) : (tensor<4xi32>, tensor<4xi16>) -> tensor<4xi32>
  func.return
}

// -----

// graph.mul: unsupported element type on result.
// CHECK: error: 'graph.mul': result has unsupported element type i8
func.func @chunk23(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.mul"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi8>
  func.return
}

// -----

// graph.div: unsupported element type on lhs.
// CHECK: error: 'graph.div': lhs has unsupported element type f80
func.func @chunk24(%x: tensor<4xf80>, %y: tensor<4xf80>) {
  %0 = "graph.div"(%x, %y) : (tensor<4xf80>, tensor<4xf80>) -> tensor<4xf80>
  func.return
}

// -----

// graph.maximum: unsupported element type on rhs.
// CHECK: error: 'graph.maximum': rhs has unsupported element type index
func.func @chunk25(%x: tensor<4xf32>, %y: tensor<4xindex>) {
  %0 = "graph.maximum"(%x, %y) : (tensor<4xf32>, tensor<4xindex>) -> tensor<4xf32>
  func.return
}

// -----

// graph.minimum: unsupported element type on lhs.
// CHECK: error: 'graph.minimum': lhs has unsupported element type i4
func.func @chunk26(%x: tensor<4xi4>, %y: tensor<4xi4>) {
  %0 = "graph.minimum"(%x, %y) : (tensor<4xi4>, tensor<4xi4>) -> tensor<4xi4>
  func.return
}

// -----

// graph.pow: unsupported element type on rhs.
// CHECK: error: 'graph.pow': rhs has unsupported element type f128
func.func @chunk27(%x: tensor<4xf32>, %y: tensor<4xf128>) {
  %0 = "graph.pow"(%x, %y) : (tensor<4xf32>, tensor<4xf128>) -> tensor<4xf32>
  func.return
}

// -----

// graph.compare: unsupported element type on lhs.
// CHECK: error: 'graph.compare': lhs has unsupported element type i8
func.func @chunk28(%x: tensor<4xi8>, %y: tensor<4xi8>) {
  %0 = "graph.compare"(%x, %y) <{predicate = "eq"}> : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
  func.return
}

// -----

// graph.select: unsupported element type on b.
// CHECK: error: 'graph.select': b has unsupported element type i16
func.func @chunk29(%m: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi16>) {
  %0 = "graph.select"(%m, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xi16>) -> tensor<4xf32>
  func.return
}

// -----

// graph.cast: unsupported element type on result.
// CHECK: error: 'graph.cast': result has unsupported element type i8
func.func @chunk30(%x: tensor<4xf32>) {
  %0 = "graph.cast"(%x) : (tensor<4xf32>) -> tensor<4xi8>
  func.return
}

// -----

// graph.constant: unsupported element type on result.
// CHECK: error: 'graph.constant': result has unsupported element type i8
func.func @chunk31() {
  %0 = "graph.constant"() <{value = dense<1> : tensor<4xi8>}> : () -> tensor<4xi8>
  func.return
}

// -----

// graph.reduce_sum: unsupported element type on x.
// CHECK: error: 'graph.reduce_sum': x has unsupported element type i16
func.func @chunk32(%x: tensor<4x8xi16>) {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 1>}> : (tensor<4x8xi16>) -> tensor<4xi16>
  func.return
}

// -----

// graph.reduce_mean: unsupported element type on x.
// CHECK: error: 'graph.reduce_mean': x has unsupported element type f80
func.func @chunk33(%x: tensor<4x8xf80>) {
  %0 = "graph.reduce_mean"(%x) <{axes = array<i64: 1>}> : (tensor<4x8xf80>) -> tensor<4xf80>
  func.return
}

// -----

// graph.reduce_max: unsupported element type on x.
// CHECK: error: 'graph.reduce_max': x has unsupported element type i8
func.func @chunk34(%x: tensor<4x8xi8>) {
  %0 = "graph.reduce_max"(%x) <{axes = array<i64: 1>}> : (tensor<4x8xi8>) -> tensor<4xi8>
  func.return
}

// -----

// graph.matmul: unsupported element type on b.
// CHECK: error: 'graph.matmul': b has unsupported element type f128
func.func @chunk35(%a: tensor<4x8xf32>, %b: tensor<8x2xf128>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf128>) -> tensor<4x2xf32>
  func.return
}

// -----

// graph.softmax: unsupported element type on x.
// CHECK: error: 'graph.softmax': x has unsupported element type f80
func.func @chunk36(%x: tensor<4x8xf80>) {
  %0 = "graph.softmax"(%x) <{axis = -1 : i64}> : (tensor<4x8xf80>) -> tensor<4x8xf80>
  func.return
}

// -----

// graph.log_softmax: unsupported element type on x.
// CHECK: error: 'graph.log_softmax': x has unsupported element type i8
func.func @chunk37(%x: tensor<4x8xi8>) {
  %0 = "graph.log_softmax"(%x) : (tensor<4x8xi8>) -> tensor<4x8xi8>
  func.return
}

// -----

// graph.layernorm: unsupported element type on beta.
// CHECK: error: 'graph.layernorm': beta has unsupported element type f80
func.func @chunk38(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf80>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf80>) -> tensor<4x8xf32>
  func.return
}

// -----

// graph.rmsnorm: unsupported element type on gamma.
// CHECK: error: 'graph.rmsnorm': gamma has unsupported element type i8
func.func @chunk39(%x: tensor<4x8xf32>, %g: tensor<8xi8>) {
  %0 = "graph.rmsnorm"(%x, %g) : (tensor<4x8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  func.return
}

// -----

// graph.attention: unsupported element type on v.
// CHECK: error: 'graph.attention': v has unsupported element type f128
func.func @chunk40(%q: tensor<2x8xf32>, %k: tensor<2x8xf32>, %v: tensor<2x8xf128>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf128>) -> tensor<2x8xf32>
  func.return
}

// -----

// graph.embedding: unsupported element type on ids.
// CHECK: error: 'graph.embedding': ids has unsupported element type i16
func.func @chunk41(%t: tensor<10x4xf32>, %ids: tensor<3xi16>) {
  %0 = "graph.embedding"(%t, %ids) : (tensor<10x4xf32>, tensor<3xi16>) -> tensor<3x4xf32>
  func.return
}

// -----

// graph.cross_entropy: unsupported element type on labels.
// CHECK: error: 'graph.cross_entropy': labels has unsupported element type i8
func.func @chunk42(%l: tensor<8x10xf32>, %y: tensor<8xi8>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<8xi8>) -> tensor<f32>
  func.return
}

// -----

// graph.reshape: unsupported element type on x.
// CHECK: error: 'graph.reshape': x has unsupported element type i8
func.func @chunk43(%x: tensor<4x8xi8>) {
  %0 = "graph.reshape"(%x) : (tensor<4x8xi8>) -> tensor<32xi8>
  func.return
}

// -----

// graph.transpose: unsupported element type on x.
// CHECK: error: 'graph.transpose': x has unsupported element type f80
func.func @chunk44(%x: tensor<4x8xf80>) {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<4x8xf80>) -> tensor<8x4xf80>
  func.return
}

// -----

// graph.broadcast_to: unsupported element type on x.
// CHECK: error: 'graph.broadcast_to': x has unsupported element type i16
func.func @chunk45(%x: tensor<8xi16>) {
  %0 = "graph.broadcast_to"(%x) : (tensor<8xi16>) -> tensor<4x8xi16>
  func.return
}

// -----

// graph.slice: unsupported element type on x.
// CHECK: error: 'graph.slice': x has unsupported element type index
func.func @chunk46(%x: tensor<4x8xindex>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, steps = array<i64: 1, 1>}> : (tensor<4x8xindex>) -> tensor<4x8xindex>
  func.return
}

// -----

// graph.concat: unsupported element type on operand #1.
// CHECK: error: 'graph.concat': operand #1 has unsupported element type i8
func.func @chunk47(%x: tensor<4xf32>, %y: tensor<4xi8>) {
  %0 = "graph.concat"(%x, %y) <{axis = 0 : i64}> : (tensor<4xf32>, tensor<4xi8>) -> tensor<8xf32>
  func.return
}

// -----

// ============================================================================================
// Dynamic shapes (one chunk per op that has operands).
// ============================================================================================

// graph.neg: dynamic shape on x.
// CHECK: error: 'graph.neg': x must have a static shape, got tensor<?xf32>
func.func @chunk48(%x: tensor<?xf32>) {
  %0 = "graph.neg"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  func.return
}

// -----

// graph.abs: dynamic shape on result.
// CHECK: error: 'graph.abs': result must have a static shape, got tensor<?xi32>
func.func @chunk49(%x: tensor<4xi32>) {
  %0 = "graph.abs"(%x) : (tensor<4xi32>) -> tensor<?xi32>
  func.return
}

// -----

// graph.abs: rank 9, more than the tile level takes (rank 8 is the limit).
// CHECK: error: 'graph.abs': x has rank 9, more than 8: tensor<1x1x1x1x1x1x1x1x2xf32>
func.func @chunk49_rank(%x: tensor<1x1x1x1x1x1x1x1x2xf32>) {
  %0 = "graph.abs"(%x) : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  func.return
}

// -----

// graph.exp: dynamic shape on x.
// CHECK: error: 'graph.exp': x must have a static shape, got tensor<?x8xf32>
func.func @chunk50(%x: tensor<?x8xf32>) {
  %0 = "graph.exp"(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

// graph.log: dynamic shape on x.
// CHECK: error: 'graph.log': x must have a static shape, got tensor<4x?xf32>
func.func @chunk51(%x: tensor<4x?xf32>) {
  %0 = "graph.log"(%x) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  func.return
}

// -----

// graph.sqrt: dynamic shape on x.
// CHECK: error: 'graph.sqrt': x must have a static shape, got tensor<?xf16>
func.func @chunk52(%x: tensor<?xf16>) {
  %0 = "graph.sqrt"(%x) : (tensor<?xf16>) -> tensor<?xf16>
  func.return
}

// -----

// graph.rsqrt: dynamic shape on x.
// CHECK: error: 'graph.rsqrt': x must have a static shape, got tensor<?xbf16>
func.func @chunk53(%x: tensor<?xbf16>) {
  %0 = "graph.rsqrt"(%x) : (tensor<?xbf16>) -> tensor<?xbf16>
  func.return
}

// -----

// graph.tanh: dynamic shape on result.
// CHECK: error: 'graph.tanh': result must have a static shape, got tensor<?xf64>
func.func @chunk54(%x: tensor<4xf64>) {
  %0 = "graph.tanh"(%x) : (tensor<4xf64>) -> tensor<?xf64>
  func.return
}

// -----

// graph.sigmoid: dynamic shape on x.
// CHECK: error: 'graph.sigmoid': x must have a static shape, got tensor<?x?xf32>
func.func @chunk55(%x: tensor<?x?xf32>) {
  %0 = "graph.sigmoid"(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return
}

// -----

// graph.relu: dynamic shape on x.
// CHECK: error: 'graph.relu': x must have a static shape, got tensor<?xi64>
func.func @chunk56(%x: tensor<?xi64>) {
  %0 = "graph.relu"(%x) : (tensor<?xi64>) -> tensor<?xi64>
  func.return
}

// -----

// graph.silu: dynamic shape on x.
// CHECK: error: 'graph.silu': x must have a static shape, got tensor<2x?xf32>
func.func @chunk57(%x: tensor<2x?xf32>) {
  %0 = "graph.silu"(%x) : (tensor<2x?xf32>) -> tensor<2x?xf32>
  func.return
}

// -----

// graph.erf: dynamic shape on x.
// CHECK: error: 'graph.erf': x must have a static shape, got tensor<?x3xf32>
func.func @chunk58(%x: tensor<?x3xf32>) {
  %0 = "graph.erf"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

// graph.gelu: dynamic shape on x.
// CHECK: error: 'graph.gelu': x must have a static shape, got tensor<?x5xf32>
func.func @chunk59(%x: tensor<?x5xf32>) {
  %0 = "graph.gelu"(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  func.return
}

// -----

// graph.scale: dynamic shape on x.
// CHECK: error: 'graph.scale': x must have a static shape, got tensor<?x6xf32>
func.func @chunk60(%x: tensor<?x6xf32>) {
  %0 = "graph.scale"(%x) <{value = 2.0 : f64}> : (tensor<?x6xf32>) -> tensor<?x6xf32>
  func.return
}

// -----

// graph.dropout: dynamic shape on x.
// CHECK: error: 'graph.dropout': x must have a static shape, got tensor<?x7xf32>
func.func @chunk61(%x: tensor<?x7xf32>) {
  %0 = "graph.dropout"(%x) <{p = 0.5 : f64, seed = 1 : i64}> : (tensor<?x7xf32>) -> tensor<?x7xf32>
  func.return
}

// -----

// graph.add: dynamic shape on rhs.
// CHECK: error: 'graph.add': rhs must have a static shape, got tensor<?xf32>
func.func @chunk62(%x: tensor<4xf32>, %y: tensor<?xf32>) {
  %0 = "graph.add"(%x, %y) : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
  func.return
}

// -----

// graph.sub: dynamic shape on lhs.
// CHECK: error: 'graph.sub': lhs must have a static shape, got tensor<?x2xf32>
func.func @chunk63(%x: tensor<?x2xf32>, %y: tensor<2xf32>) {
  %0 = "graph.sub"(%x, %y) : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  func.return
}

// -----

// graph.mul: dynamic shape on result.
// CHECK: error: 'graph.mul': result must have a static shape, got tensor<?xf32>
func.func @chunk64(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.mul"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
  func.return
}

// -----

// graph.div: dynamic shape on lhs.
// CHECK: error: 'graph.div': lhs must have a static shape, got tensor<?x3xf32>
func.func @chunk65(%x: tensor<?x3xf32>, %y: tensor<3xf32>) {
  %0 = "graph.div"(%x, %y) : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

// graph.maximum: dynamic shape on rhs.
// CHECK: error: 'graph.maximum': rhs must have a static shape, got tensor<?x3xf32>
func.func @chunk66(%x: tensor<3xf32>, %y: tensor<?x3xf32>) {
  %0 = "graph.maximum"(%x, %y) : (tensor<3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

// graph.minimum: dynamic shape on lhs.
// CHECK: error: 'graph.minimum': lhs must have a static shape, got tensor<?x4xi32>
func.func @chunk67(%x: tensor<?x4xi32>, %y: tensor<4xi32>) {
  %0 = "graph.minimum"(%x, %y) : (tensor<?x4xi32>, tensor<4xi32>) -> tensor<?x4xi32>
  func.return
}

// -----

// graph.pow: dynamic shape on rhs.
// CHECK: error: 'graph.pow': rhs must have a static shape, got tensor<?x5xf32>
func.func @chunk68(%x: tensor<5xf32>, %y: tensor<?x5xf32>) {
  %0 = "graph.pow"(%x, %y) : (tensor<5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  func.return
}

// -----

// graph.compare: dynamic shape on result.
// CHECK: error: 'graph.compare': result must have a static shape, got tensor<?xi1>
func.func @chunk69(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.compare"(%x, %y) <{predicate = "lt"}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xi1>
  func.return
}

// -----

// graph.select: dynamic shape on cond.
// CHECK: error: 'graph.select': cond must have a static shape, got tensor<?xi1>
func.func @chunk70(%m: tensor<?xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.select"(%m, %x, %y) : (tensor<?xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// graph.cast: dynamic shape on x.
// CHECK: error: 'graph.cast': x must have a static shape, got tensor<?x8xf32>
func.func @chunk71(%x: tensor<?x8xf32>) {
  %0 = "graph.cast"(%x) : (tensor<?x8xf32>) -> tensor<?x8xi32>
  func.return
}

// -----

// graph.reduce_sum: dynamic shape on x.
// CHECK: error: 'graph.reduce_sum': x must have a static shape, got tensor<?x8xf32>
func.func @chunk72(%x: tensor<?x8xf32>) {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 1>}> : (tensor<?x8xf32>) -> tensor<?xf32>
  func.return
}

// -----

// graph.reduce_mean: dynamic shape on result.
// CHECK: error: 'graph.reduce_mean': result must have a static shape, got tensor<?xf32>
func.func @chunk73(%x: tensor<4x8xf32>) {
  %0 = "graph.reduce_mean"(%x) <{axes = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<?xf32>
  func.return
}

// -----

// graph.reduce_max: dynamic shape on x.
// CHECK: error: 'graph.reduce_max': x must have a static shape, got tensor<4x?xf32>
func.func @chunk74(%x: tensor<4x?xf32>) {
  %0 = "graph.reduce_max"(%x) <{axes = array<i64: 1>}> : (tensor<4x?xf32>) -> tensor<4xf32>
  func.return
}

// -----

// graph.matmul: dynamic shape on a.
// CHECK: error: 'graph.matmul': a must have a static shape, got tensor<?x8xf32>
func.func @chunk75(%a: tensor<?x8xf32>, %b: tensor<8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<?x8xf32>, tensor<8x2xf32>) -> tensor<?x2xf32>
  func.return
}

// -----

// graph.softmax: dynamic shape on x.
// CHECK: error: 'graph.softmax': x must have a static shape, got tensor<?x8xf32>
func.func @chunk76(%x: tensor<?x8xf32>) {
  %0 = "graph.softmax"(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

// graph.log_softmax: dynamic shape on x.
// CHECK: error: 'graph.log_softmax': x must have a static shape, got tensor<4x?xf32>
func.func @chunk77(%x: tensor<4x?xf32>) {
  %0 = "graph.log_softmax"(%x) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  func.return
}

// -----

// graph.layernorm: dynamic shape on gamma.
// CHECK: error: 'graph.layernorm': gamma must have a static shape, got tensor<?xf32>
func.func @chunk78(%x: tensor<4x8xf32>, %g: tensor<?xf32>, %b: tensor<8xf32>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<4x8xf32>, tensor<?xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// graph.rmsnorm: dynamic shape on x.
// CHECK: error: 'graph.rmsnorm': x must have a static shape, got tensor<?x8xf32>
func.func @chunk79(%x: tensor<?x8xf32>, %g: tensor<8xf32>) {
  %0 = "graph.rmsnorm"(%x, %g) : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

// graph.attention: dynamic shape on k.
// CHECK: error: 'graph.attention': k must have a static shape, got tensor<?x8xf32>
func.func @chunk80(%q: tensor<2x8xf32>, %k: tensor<?x8xf32>, %v: tensor<2x8xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<2x8xf32>, tensor<?x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// graph.embedding: dynamic shape on table.
// CHECK: error: 'graph.embedding': table must have a static shape, got tensor<?x4xf32>
func.func @chunk81(%t: tensor<?x4xf32>, %ids: tensor<3xi64>) {
  %0 = "graph.embedding"(%t, %ids) : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

// graph.cross_entropy: dynamic shape on labels.
// CHECK: error: 'graph.cross_entropy': labels must have a static shape, got tensor<?xi64>
func.func @chunk82(%l: tensor<8x10xf32>, %y: tensor<?xi64>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<?xi64>) -> tensor<f32>
  func.return
}

// -----

// graph.reshape: dynamic shape on result.
// CHECK: error: 'graph.reshape': result must have a static shape, got tensor<?xf32>
func.func @chunk83(%x: tensor<4x8xf32>) {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<?xf32>
  func.return
}

// -----

// graph.transpose: dynamic shape on x.
// CHECK: error: 'graph.transpose': x must have a static shape, got tensor<?x8xf32>
func.func @chunk84(%x: tensor<?x8xf32>) {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<?x8xf32>) -> tensor<8x?xf32>
  func.return
}

// -----

// graph.broadcast_to: dynamic shape on result.
// CHECK: error: 'graph.broadcast_to': result must have a static shape, got tensor<?x8xf32>
func.func @chunk85(%x: tensor<8xf32>) {
  %0 = "graph.broadcast_to"(%x) : (tensor<8xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

// graph.slice: dynamic shape on x.
// CHECK: error: 'graph.slice': x must have a static shape, got tensor<?x8xf32>
func.func @chunk86(%x: tensor<?x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, steps = array<i64: 1, 1>}> : (tensor<?x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// graph.concat: dynamic shape on operand #1.
// CHECK: error: 'graph.concat': operand #1 must have a static shape, got tensor<?xf32>
func.func @chunk87(%x: tensor<4xf32>, %y: tensor<?xf32>) {
  %0 = "graph.concat"(%x, %y) <{axis = 0 : i64}> : (tensor<4xf32>, tensor<?xf32>) -> tensor<8xf32>
  func.return
}

// -----

// ============================================================================================
// Unary elementwise ops: float-only ops reject integers, integer-accepting ones reject i1,
// and the result type must equal x's.
// ============================================================================================

// graph.exp is float-only: i32 operand.
// CHECK: error: 'graph.exp': x must have a float element type, got tensor<4xi32>
func.func @chunk88(%x: tensor<4xi32>) {
  %0 = "graph.exp"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.log is float-only: i32 operand.
// CHECK: error: 'graph.log': x must have a float element type, got tensor<4xi32>
func.func @chunk89(%x: tensor<4xi32>) {
  %0 = "graph.log"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.sqrt is float-only: i32 operand.
// CHECK: error: 'graph.sqrt': x must have a float element type, got tensor<4xi32>
func.func @chunk90(%x: tensor<4xi32>) {
  %0 = "graph.sqrt"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.rsqrt is float-only: i32 operand.
// CHECK: error: 'graph.rsqrt': x must have a float element type, got tensor<4xi32>
func.func @chunk91(%x: tensor<4xi32>) {
  %0 = "graph.rsqrt"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.tanh is float-only: i32 operand.
// CHECK: error: 'graph.tanh': x must have a float element type, got tensor<4xi32>
func.func @chunk92(%x: tensor<4xi32>) {
  %0 = "graph.tanh"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.sigmoid is float-only: i32 operand.
// CHECK: error: 'graph.sigmoid': x must have a float element type, got tensor<4xi32>
func.func @chunk93(%x: tensor<4xi32>) {
  %0 = "graph.sigmoid"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.silu is float-only: i32 operand.
// CHECK: error: 'graph.silu': x must have a float element type, got tensor<4xi32>
func.func @chunk94(%x: tensor<4xi32>) {
  %0 = "graph.silu"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.erf is float-only: i32 operand.
// CHECK: error: 'graph.erf': x must have a float element type, got tensor<4xi32>
func.func @chunk95(%x: tensor<4xi32>) {
  %0 = "graph.erf"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.gelu is float-only: i64 operand.
// CHECK: error: 'graph.gelu': x must have a float element type, got tensor<4xi64>
func.func @chunk96(%x: tensor<4xi64>) {
  %0 = "graph.gelu"(%x) <{approximate = "none"}> : (tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// graph.scale is float-only: i32 operand.
// CHECK: error: 'graph.scale': x must have a float element type, got tensor<4xi32>
func.func @chunk97(%x: tensor<4xi32>) {
  %0 = "graph.scale"(%x) <{value = 2.0 : f64}> : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.dropout is float-only: i32 operand.
// CHECK: error: 'graph.dropout': x must have a float element type, got tensor<4xi32>
func.func @chunk98(%x: tensor<4xi32>) {
  %0 = "graph.dropout"(%x) <{p = 0.5 : f64, seed = 3 : i64}> : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// Float-only unary op given i1.
// CHECK: error: 'graph.sigmoid': x must have a float element type, got tensor<4xi1>
func.func @chunk99(%x: tensor<4xi1>) {
  %0 = "graph.sigmoid"(%x) : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// graph.neg accepts integers but not i1.
// CHECK: error: 'graph.neg': x must have a numeric (float or i32/i64) element type, got tensor<4xi1>
func.func @chunk100(%x: tensor<4xi1>) {
  %0 = "graph.neg"(%x) : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// graph.abs accepts integers but not i1.
// CHECK: error: 'graph.abs': x must have a numeric (float or i32/i64) element type, got tensor<4xi1>
func.func @chunk101(%x: tensor<4xi1>) {
  %0 = "graph.abs"(%x) : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// graph.relu accepts integers but not i1.
// CHECK: error: 'graph.relu': x must have a numeric (float or i32/i64) element type, got tensor<4xi1>
func.func @chunk102(%x: tensor<4xi1>) {
  %0 = "graph.relu"(%x) : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// Unary result shape differs from x.
// CHECK: error: 'graph.neg': result type tensor<8xf32> does not match the inferred tensor<4xf32>
func.func @chunk103(%x: tensor<4xf32>) {
  %0 = "graph.neg"(%x) : (tensor<4xf32>) -> tensor<8xf32>
  func.return
}

// -----

// Unary result element type differs from x.
// CHECK: error: 'graph.exp': result type tensor<4xf16> does not match the inferred tensor<4xf32>
func.func @chunk104(%x: tensor<4xf32>) {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

// graph.scale result type differs from x.
// CHECK: error: 'graph.scale': result type tensor<3x2xf32> does not match the inferred tensor<2x3xf32>
func.func @chunk105(%x: tensor<2x3xf32>) {
  %0 = "graph.scale"(%x) <{value = 2.0 : f64}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// ============================================================================================
// graph.gelu: approximate must be "none" or "tanh".
// ============================================================================================

// Gelu approximate value not none/tanh.
// CHECK: error: 'graph.gelu': approximate must be "none" or "tanh", got "fast"
func.func @chunk106(%x: tensor<4xf32>) {
  %0 = "graph.gelu"(%x) <{approximate = "fast"}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Gelu approximate is case-sensitive.
// CHECK: error: 'graph.gelu': approximate must be "none" or "tanh", got "Tanh"
func.func @chunk107(%x: tensor<4xf32>) {
  %0 = "graph.gelu"(%x) <{approximate = "Tanh"}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Gelu result type differs from x.
// CHECK: error: 'graph.gelu': result type tensor<4xf64> does not match the inferred tensor<4xf32>
func.func @chunk108(%x: tensor<4xf32>) {
  %0 = "graph.gelu"(%x) <{approximate = "tanh"}> : (tensor<4xf32>) -> tensor<4xf64>
  func.return
}

// -----

// ============================================================================================
// graph.dropout: p must lie in [0, 1).
// ============================================================================================

// Dropout p = 1.0 (upper bound excluded).
// CHECK: error: 'graph.dropout': p must lie in [0, 1), got 1.0
func.func @chunk109(%x: tensor<4xf32>) {
  %0 = "graph.dropout"(%x) <{p = 1.0 : f64, seed = 7 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Dropout p negative.
// CHECK: error: 'graph.dropout': p must lie in [0, 1), got -0.1
func.func @chunk110(%x: tensor<4xf32>) {
  %0 = "graph.dropout"(%x) <{p = -1.000000e-01 : f64, seed = 7 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Dropout p above 1.
// CHECK: error: 'graph.dropout': p must lie in [0, 1), got 1.5
func.func @chunk111(%x: tensor<4xf32>) {
  %0 = "graph.dropout"(%x) <{p = 1.5 : f64, seed = 7 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Dropout result type differs from x.
// CHECK: error: 'graph.dropout': result type tensor<2x2xf32> does not match the inferred tensor<4xf32>
func.func @chunk112(%x: tensor<4xf32>) {
  %0 = "graph.dropout"(%x) <{p = 0.5 : f64, seed = 7 : i64}> : (tensor<4xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// ============================================================================================
// Binary elementwise ops: one element type, numeric (no i1), div/pow float-only, NumPy
// broadcasting, result type = broadcast shape.
// ============================================================================================

// graph.add: lhs/rhs element types differ.
// CHECK: error: 'graph.add': rhs has element type f16, expected f32 like lhs
func.func @chunk113(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  %0 = "graph.add"(%x, %y) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

// graph.sub: lhs/rhs element types differ.
// CHECK: error: 'graph.sub': rhs has element type f64, expected f32 like lhs
func.func @chunk114(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  %0 = "graph.sub"(%x, %y) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

// graph.mul: lhs/rhs element types differ.
// CHECK: error: 'graph.mul': rhs has element type i64, expected i32 like lhs
func.func @chunk115(%x: tensor<4xi32>, %y: tensor<4xi64>) {
  %0 = "graph.mul"(%x, %y) : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>
  func.return
}

// -----

// graph.div: lhs/rhs element types differ.
// CHECK: error: 'graph.div': rhs has element type bf16, expected f32 like lhs
func.func @chunk116(%x: tensor<4xf32>, %y: tensor<4xbf16>) {
  %0 = "graph.div"(%x, %y) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  func.return
}

// -----

// graph.maximum: lhs/rhs element types differ.
// CHECK: error: 'graph.maximum': rhs has element type f32, expected i64 like lhs
func.func @chunk117(%x: tensor<4xi64>, %y: tensor<4xf32>) {
  %0 = "graph.maximum"(%x, %y) : (tensor<4xi64>, tensor<4xf32>) -> tensor<4xi64>
  func.return
}

// -----

// graph.minimum: lhs/rhs element types differ.
// CHECK: error: 'graph.minimum': rhs has element type bf16, expected f16 like lhs
func.func @chunk118(%x: tensor<4xf16>, %y: tensor<4xbf16>) {
  %0 = "graph.minimum"(%x, %y) : (tensor<4xf16>, tensor<4xbf16>) -> tensor<4xf16>
  func.return
}

// -----

// graph.pow: lhs/rhs element types differ.
// CHECK: error: 'graph.pow': rhs has element type f32, expected f64 like lhs
func.func @chunk119(%x: tensor<4xf64>, %y: tensor<4xf32>) {
  %0 = "graph.pow"(%x, %y) : (tensor<4xf64>, tensor<4xf32>) -> tensor<4xf64>
  func.return
}

// -----

// graph.add given i1 (bool is not numeric).
// CHECK: error: 'graph.add': lhs must have a numeric (float or i32/i64) element type, got tensor<4xi1>
func.func @chunk120(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  %0 = "graph.add"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// graph.sub given i1 (bool is not numeric).
// CHECK: error: 'graph.sub': lhs must have a numeric (float or i32/i64) element type, got tensor<4xi1>
func.func @chunk121(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  %0 = "graph.sub"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// graph.mul given i1 (bool is not numeric).
// CHECK: error: 'graph.mul': lhs must have a numeric (float or i32/i64) element type, got tensor<4xi1>
func.func @chunk122(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  %0 = "graph.mul"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// graph.maximum given i1 (bool is not numeric).
// CHECK: error: 'graph.maximum': lhs must have a numeric (float or i32/i64) element type, got tensor<4xi1>
func.func @chunk123(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  %0 = "graph.maximum"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// graph.minimum given i1 (bool is not numeric).
// CHECK: error: 'graph.minimum': lhs must have a numeric (float or i32/i64) element type, got tensor<4xi1>
func.func @chunk124(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  %0 = "graph.minimum"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// graph.div is float-only: i32 operands.
// CHECK: error: 'graph.div': lhs must have a float element type, got tensor<4xi32>
func.func @chunk125(%x: tensor<4xi32>, %y: tensor<4xi32>) {
  %0 = "graph.div"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// graph.pow is float-only: i64 operands.
// CHECK: error: 'graph.pow': lhs must have a float element type, got tensor<4xi64>
func.func @chunk126(%x: tensor<4xi64>, %y: tensor<4xi64>) {
  %0 = "graph.pow"(%x, %y) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// graph.div given i1.
// CHECK: error: 'graph.div': lhs must have a float element type, got tensor<4xi1>
func.func @chunk127(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  %0 = "graph.div"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// graph.add: shapes do not broadcast.
// CHECK: error: 'graph.add': shapes [4, 3] and [4] do not broadcast
func.func @chunk128(%x: tensor<4x3xf32>, %y: tensor<4xf32>) {
  %0 = "graph.add"(%x, %y) : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// graph.sub: shapes do not broadcast.
// CHECK: error: 'graph.sub': shapes [2, 3] and [3, 2] do not broadcast
func.func @chunk129(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) {
  %0 = "graph.sub"(%x, %y) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// graph.mul: shapes do not broadcast.
// CHECK: error: 'graph.mul': shapes [5] and [6] do not broadcast
func.func @chunk130(%x: tensor<5xf32>, %y: tensor<6xf32>) {
  %0 = "graph.mul"(%x, %y) : (tensor<5xf32>, tensor<6xf32>) -> tensor<5xf32>
  func.return
}

// -----

// graph.div: shapes do not broadcast.
// CHECK: error: 'graph.div': shapes [2, 4, 3] and [5, 3] do not broadcast
func.func @chunk131(%x: tensor<2x4x3xf32>, %y: tensor<5x3xf32>) {
  %0 = "graph.div"(%x, %y) : (tensor<2x4x3xf32>, tensor<5x3xf32>) -> tensor<2x4x3xf32>
  func.return
}

// -----

// graph.maximum: shapes do not broadcast.
// CHECK: error: 'graph.maximum': shapes [7, 3] and [3, 7, 2] do not broadcast
func.func @chunk132(%x: tensor<7x3xf32>, %y: tensor<3x7x2xf32>) {
  %0 = "graph.maximum"(%x, %y) : (tensor<7x3xf32>, tensor<3x7x2xf32>) -> tensor<7x3xf32>
  func.return
}

// -----

// graph.minimum: shapes do not broadcast.
// CHECK: error: 'graph.minimum': shapes [8] and [9, 1, 7] do not broadcast
func.func @chunk133(%x: tensor<8xf32>, %y: tensor<9x1x7xf32>) {
  %0 = "graph.minimum"(%x, %y) : (tensor<8xf32>, tensor<9x1x7xf32>) -> tensor<8xf32>
  func.return
}

// -----

// graph.pow: shapes do not broadcast.
// CHECK: error: 'graph.pow': shapes [3, 1] and [2, 3, 4, 2] do not broadcast
func.func @chunk134(%x: tensor<3x1xf32>, %y: tensor<2x3x4x2xf32>) {
  %0 = "graph.pow"(%x, %y) : (tensor<3x1xf32>, tensor<2x3x4x2xf32>) -> tensor<3x1xf32>
  func.return
}

// -----

// Binary result must have the broadcast shape, not an operand's.
// CHECK: error: 'graph.add': result type tensor<8xf32> does not match the inferred tensor<4x8xf32>
func.func @chunk135(%x: tensor<4x8xf32>, %y: tensor<8xf32>) {
  %0 = "graph.add"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return
}

// -----

// Binary result with an extra broadcast axis.
// CHECK: error: 'graph.mul': result type tensor<1x4x8xf32> does not match the inferred tensor<4x8xf32>
func.func @chunk136(%x: tensor<4x1xf32>, %y: tensor<1x8xf32>) {
  %0 = "graph.mul"(%x, %y) : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<1x4x8xf32>
  func.return
}

// -----

// Binary result element type differs from operands.
// CHECK: error: 'graph.sub': result type tensor<4xi64> does not match the inferred tensor<4xi32>
func.func @chunk137(%x: tensor<4xi32>, %y: tensor<4xi32>) {
  %0 = "graph.sub"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi64>
  func.return
}

// -----

// ============================================================================================
// graph.compare: predicate in {lt, le, gt, ge, eq, ne}, one operand element type,
// broadcasting, an i1 result.
// ============================================================================================

// Compare predicate not in the list.
// CHECK: error: 'graph.compare': predicate must be one of lt, le, gt, ge, eq, ne, got "neq"
func.func @chunk138(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.compare"(%x, %y) <{predicate = "neq"}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

// Compare predicate empty.
// CHECK: error: 'graph.compare': predicate must be one of lt, le, gt, ge, eq, ne, got ""
func.func @chunk139(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.compare"(%x, %y) <{predicate = ""}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

// Compare operand element types differ.
// CHECK: error: 'graph.compare': rhs has element type f32, expected i32 like lhs
func.func @chunk140(%x: tensor<4xi32>, %y: tensor<4xf32>) {
  %0 = "graph.compare"(%x, %y) <{predicate = "ge"}> : (tensor<4xi32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

// Compare operands do not broadcast.
// CHECK: error: 'graph.compare': shapes [4, 3] and [2] do not broadcast
func.func @chunk141(%x: tensor<4x3xf32>, %y: tensor<2xf32>) {
  %0 = "graph.compare"(%x, %y) <{predicate = "le"}> : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<4x3xi1>
  func.return
}

// -----

// Compare result must be i1, not the operand type.
// CHECK: error: 'graph.compare': result type tensor<4xf32> does not match the inferred tensor<4xi1>
func.func @chunk142(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.compare"(%x, %y) <{predicate = "gt"}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Compare result must have the broadcast shape.
// CHECK: error: 'graph.compare': result type tensor<4x1xi1> does not match the inferred tensor<4x5xi1>
func.func @chunk143(%x: tensor<4x1xf32>, %y: tensor<5xf32>) {
  %0 = "graph.compare"(%x, %y) <{predicate = "ne"}> : (tensor<4x1xf32>, tensor<5xf32>) -> tensor<4x1xi1>
  func.return
}

// -----

// ============================================================================================
// graph.select: cond is i1, a and b share an element type, all three broadcast.
// ============================================================================================

// Select cond not i1.
// CHECK: error: 'graph.select': cond must have element type i1, got tensor<4xi32>
func.func @chunk144(%m: tensor<4xi32>, %x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.select"(%m, %x, %y) : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Select cond float.
// CHECK: error: 'graph.select': cond must have element type i1, got tensor<4xf32>
func.func @chunk145(%m: tensor<4xf32>, %x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.select"(%m, %x, %y) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Select a/b element types differ.
// CHECK: error: 'graph.select': b has element type f64, expected f32 like a
func.func @chunk146(%m: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf64>) {
  %0 = "graph.select"(%m, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

// Select cond does not broadcast with a, b.
// CHECK: error: 'graph.select': shapes [3] and [4] and [4] do not broadcast
func.func @chunk147(%m: tensor<3xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.select"(%m, %x, %y) : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Select b does not broadcast with cond, a.
// CHECK: error: 'graph.select': shapes [2, 1] and [5] and [3, 5] do not broadcast
func.func @chunk148(%m: tensor<2x1xi1>, %x: tensor<5xf32>, %y: tensor<3x5xf32>) {
  %0 = "graph.select"(%m, %x, %y) : (tensor<2x1xi1>, tensor<5xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

// Select result must have the three-way broadcast shape.
// CHECK: error: 'graph.select': result type tensor<8xf32> does not match the inferred tensor<4x8xf32>
func.func @chunk149(%m: tensor<4x1xi1>, %x: tensor<8xf32>, %y: tensor<f32>) {
  %0 = "graph.select"(%m, %x, %y) : (tensor<4x1xi1>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return
}

// -----

// Select result element type must be a's.
// CHECK: error: 'graph.select': result type tensor<4xi1> does not match the inferred tensor<4xf32>
func.func @chunk150(%m: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.select"(%m, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

// ============================================================================================
// graph.cast: only the element type may change, never the shape.
// ============================================================================================

// Cast changes the shape (same element count).
// CHECK: error: 'graph.cast': result shape [32] differs from x's [4, 8]
func.func @chunk151(%x: tensor<4x8xf32>) {
  %0 = "graph.cast"(%x) : (tensor<4x8xf32>) -> tensor<32xi32>
  func.return
}

// -----

// Cast changes the rank by a unit axis.
// CHECK: error: 'graph.cast': result shape [1, 4] differs from x's [4]
func.func @chunk152(%x: tensor<4xf32>) {
  %0 = "graph.cast"(%x) : (tensor<4xf32>) -> tensor<1x4xf16>
  func.return
}

// -----

// ============================================================================================
// graph.constant: the result type is the value's type.
// ============================================================================================

// Constant value shape differs from result.
// CHECK: error: 'graph.constant': result type tensor<2x2xf32> differs from the value's type tensor<4xf32>
func.func @chunk153() {
  %0 = "graph.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<2x2xf32>
  func.return
}

// -----

// Constant value element type differs from result.
// CHECK: error: 'graph.constant': result type tensor<3xi32> differs from the value's type tensor<3xi64>
func.func @chunk154() {
  %0 = "graph.constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}> : () -> tensor<3xi32>
  func.return
}

// -----

// ============================================================================================
// Reductions: axes in range and unique; reduce_mean float-only; reduce_sum/max reject i1;
// result = x with the axes removed (or kept as 1).
// ============================================================================================

// Reduce_sum axis out of range (positive).
// CHECK: error: 'graph.reduce_sum': axis 2 is out of range for rank 2
func.func @chunk155(%x: tensor<4x8xf32>) {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 2>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Reduce_mean axis out of range (negative).
// CHECK: error: 'graph.reduce_mean': axis -3 is out of range for rank 2
func.func @chunk156(%x: tensor<4x8xf32>) {
  %0 = "graph.reduce_mean"(%x) <{axes = array<i64: -3>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Reduce_max axis out of range.
// CHECK: error: 'graph.reduce_max': axis 5 is out of range for rank 3
func.func @chunk157(%x: tensor<2x4x8xf32>) {
  %0 = "graph.reduce_max"(%x) <{axes = array<i64: 0, 5>}> : (tensor<2x4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Reduce on a rank-0 tensor: any axis is out of range.
// CHECK: error: 'graph.reduce_sum': axis 0 is out of range for rank 0
func.func @chunk158(%x: tensor<f32>) {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 0>}> : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// Reduce_sum duplicate axes.
// CHECK: error: 'graph.reduce_sum': axes [0, 0] are not unique
func.func @chunk159(%x: tensor<4x8xf32>) {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 0, 0>}> : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return
}

// -----

// Reduce_mean duplicate axes after normalizing negatives.
// CHECK: error: 'graph.reduce_mean': axes [1, -1] are not unique
func.func @chunk160(%x: tensor<4x8xf32>) {
  %0 = "graph.reduce_mean"(%x) <{axes = array<i64: 1, -1>}> : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Reduce_max duplicate axes.
// CHECK: error: 'graph.reduce_max': axes [-3, 1, 0] are not unique
func.func @chunk161(%x: tensor<2x4x8xf32>) {
  %0 = "graph.reduce_max"(%x) <{axes = array<i64: -3, 1, 0>}> : (tensor<2x4x8xf32>) -> tensor<8xf32>
  func.return
}

// -----

// Reduce_mean on i32 (float-only).
// CHECK: error: 'graph.reduce_mean': x must have a float element type, got tensor<4x8xi32>
func.func @chunk162(%x: tensor<4x8xi32>) {
  %0 = "graph.reduce_mean"(%x) <{axes = array<i64: 1>}> : (tensor<4x8xi32>) -> tensor<4xi32>
  func.return
}

// -----

// Reduce_mean on i64 (float-only).
// CHECK: error: 'graph.reduce_mean': x must have a float element type, got tensor<4x8xi64>
func.func @chunk163(%x: tensor<4x8xi64>) {
  %0 = "graph.reduce_mean"(%x) <{axes = array<i64: 0>}> : (tensor<4x8xi64>) -> tensor<8xi64>
  func.return
}

// -----

// Reduce_sum given i1.
// CHECK: error: 'graph.reduce_sum': x must have a numeric (float or i32/i64) element type, got tensor<4x8xi1>
func.func @chunk164(%x: tensor<4x8xi1>) {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 1>}> : (tensor<4x8xi1>) -> tensor<4xi1>
  func.return
}

// -----

// Reduce_max given i1.
// CHECK: error: 'graph.reduce_max': x must have a numeric (float or i32/i64) element type, got tensor<4x8xi1>
func.func @chunk165(%x: tensor<4x8xi1>) {
  %0 = "graph.reduce_max"(%x) <{axes = array<i64: 0>}> : (tensor<4x8xi1>) -> tensor<8xi1>
  func.return
}

// -----

// Reduce_sum result keeps the axis though keepdims = false.
// CHECK: error: 'graph.reduce_sum': result type tensor<4x1xf32> does not match the inferred tensor<4xf32>
func.func @chunk166(%x: tensor<4x8xf32>) {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 1>, keepdims = false}> : (tensor<4x8xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

// Reduce_mean result drops the axis though keepdims = true.
// CHECK: error: 'graph.reduce_mean': result type tensor<4xf32> does not match the inferred tensor<4x1xf32>
func.func @chunk167(%x: tensor<4x8xf32>) {
  %0 = "graph.reduce_mean"(%x) <{axes = array<i64: 1>, keepdims = true}> : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Reduce_max result reduced over the wrong axis.
// CHECK: error: 'graph.reduce_max': result type tensor<4xi32> does not match the inferred tensor<8xi32>
func.func @chunk168(%x: tensor<4x8xi32>) {
  %0 = "graph.reduce_max"(%x) <{axes = array<i64: 0>}> : (tensor<4x8xi32>) -> tensor<4xi32>
  func.return
}

// -----

// ============================================================================================
// graph.matmul: float, one element type, rank >= 2, contraction sizes equal after the
// transposes, batch axes broadcast, result [..batch, M, N].
// ============================================================================================

// Matmul a rank-1.
// CHECK: error: 'graph.matmul': operands must have rank >= 2, got tensor<8xf32> and tensor<8x2xf32>
func.func @chunk169(%a: tensor<8xf32>, %b: tensor<8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<8xf32>, tensor<8x2xf32>) -> tensor<2xf32>
  func.return
}

// -----

// Matmul b rank-1.
// CHECK: error: 'graph.matmul': operands must have rank >= 2, got tensor<4x8xf32> and tensor<8xf32>
func.func @chunk170(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Matmul rank-0 operand.
// CHECK: error: 'graph.matmul': operands must have rank >= 2, got tensor<f32> and tensor<8x2xf32>
func.func @chunk171(%a: tensor<f32>, %b: tensor<8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<f32>, tensor<8x2xf32>) -> tensor<2xf32>
  func.return
}

// -----

// Matmul contraction mismatch, no transposes.
// CHECK: error: 'graph.matmul': contraction sizes differ: op(a) is 4x8, op(b) is 9x2 (a: tensor<4x8xf32>, b: tensor<9x2xf32>
func.func @chunk172(%a: tensor<4x8xf32>, %b: tensor<9x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<9x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

// Matmul contraction mismatch with transpose_a.
// CHECK: error: 'graph.matmul': contraction sizes differ: op(a) is 8x4, op(b) is 8x2 (a: tensor<4x8xf32>, b: tensor<8x2xf32>
func.func @chunk173(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) <{transpose_a = true}> : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// Matmul contraction mismatch with transpose_b.
// CHECK: error: 'graph.matmul': contraction sizes differ: op(a) is 4x8, op(b) is 2x8 (a: tensor<4x8xf32>, b: tensor<8x2xf32>
func.func @chunk174(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) <{transpose_b = true}> : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Matmul contraction mismatch with both transposes.
// CHECK: error: 'graph.matmul': contraction sizes differ: op(a) is 4x8, op(b) is 4x2 (a: tensor<8x4xf32>, b: tensor<2x4xf32>
func.func @chunk175(%a: tensor<8x4xf32>, %b: tensor<2x4xf32>) {
  %0 = "graph.matmul"(%a, %b) <{transpose_a = true, transpose_b = true}> : (tensor<8x4xf32>, tensor<2x4xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

// Matmul contraction mismatch in a batched matmul.
// CHECK: error: 'graph.matmul': contraction sizes differ: op(a) is 4x8, op(b) is 6x2
func.func @chunk176(%a: tensor<3x4x8xf32>, %b: tensor<3x6x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<3x4x8xf32>, tensor<3x6x2xf32>) -> tensor<3x4x2xf32>
  func.return
}

// -----

// Matmul batch axes do not broadcast.
// CHECK: error: 'graph.matmul': batch axes [2] of a and [3] of b do not broadcast
func.func @chunk177(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<2x4x4xf32>
  func.return
}

// -----

// Matmul multi-axis batch mismatch.
// CHECK: error: 'graph.matmul': batch axes [5, 2] of a and [7, 1] of b do not broadcast
func.func @chunk178(%a: tensor<5x2x4x8xf32>, %b: tensor<7x1x8x4xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<5x2x4x8xf32>, tensor<7x1x8x4xf32>) -> tensor<5x2x4x4xf32>
  func.return
}

// -----

// Matmul a/b element types differ.
// CHECK: error: 'graph.matmul': b has element type f16, expected f32 like a
func.func @chunk179(%a: tensor<4x8xf32>, %b: tensor<8x2xf16>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf16>) -> tensor<4x2xf32>
  func.return
}

// -----

// Matmul on integers (float-only).
// CHECK: error: 'graph.matmul': a must have a float element type, got tensor<4x8xi32>
func.func @chunk180(%a: tensor<4x8xi32>, %b: tensor<8x2xi32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xi32>, tensor<8x2xi32>) -> tensor<4x2xi32>
  func.return
}

// -----

// Matmul result ignores transpose_b.
// CHECK: error: 'graph.matmul': result type tensor<4x8xf32> does not match the inferred tensor<4x2xf32>
func.func @chunk181(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>) {
  %0 = "graph.matmul"(%a, %b) <{transpose_b = true}> : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Matmul result lacks the broadcast batch axes.
// CHECK: error: 'graph.matmul': result type tensor<4x2xf32> does not match the inferred tensor<3x4x2xf32>
func.func @chunk182(%a: tensor<3x4x8xf32>, %b: tensor<8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<3x4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

// ============================================================================================
// graph.softmax / graph.log_softmax: float x, axis in range, result type = x's.
// ============================================================================================

// Softmax axis out of range (positive).
// CHECK: error: 'graph.softmax': axis 2 is out of range for rank 2
func.func @chunk183(%x: tensor<4x8xf32>) {
  %0 = "graph.softmax"(%x) <{axis = 2 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Softmax axis out of range (negative).
// CHECK: error: 'graph.softmax': axis -3 is out of range for rank 2
func.func @chunk184(%x: tensor<4x8xf32>) {
  %0 = "graph.softmax"(%x) <{axis = -3 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Softmax on a rank-0 tensor: the default axis -1 is out of range.
// CHECK: error: 'graph.softmax': axis -1 is out of range for rank 0
func.func @chunk185(%x: tensor<f32>) {
  %0 = "graph.softmax"(%x) : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// Log_softmax axis out of range.
// CHECK: error: 'graph.log_softmax': axis 3 is out of range for rank 3
func.func @chunk186(%x: tensor<2x4x8xf32>) {
  %0 = "graph.log_softmax"(%x) <{axis = 3 : i64}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return
}

// -----

// Softmax on integers (float-only).
// CHECK: error: 'graph.softmax': x must have a float element type, got tensor<4x8xi32>
func.func @chunk187(%x: tensor<4x8xi32>) {
  %0 = "graph.softmax"(%x) : (tensor<4x8xi32>) -> tensor<4x8xi32>
  func.return
}

// -----

// Log_softmax on i1 (float-only).
// CHECK: error: 'graph.log_softmax': x must have a float element type, got tensor<4x8xi1>
func.func @chunk188(%x: tensor<4x8xi1>) {
  %0 = "graph.log_softmax"(%x) : (tensor<4x8xi1>) -> tensor<4x8xi1>
  func.return
}

// -----

// Softmax result type differs from x.
// CHECK: error: 'graph.softmax': result type tensor<8xf32> does not match the inferred tensor<4x8xf32>
func.func @chunk189(%x: tensor<4x8xf32>) {
  %0 = "graph.softmax"(%x) <{axis = 0 : i64}> : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return
}

// -----

// Log_softmax result element type differs from x.
// CHECK: error: 'graph.log_softmax': result type tensor<4x8xf32> does not match the inferred tensor<4x8xf16>
func.func @chunk190(%x: tensor<4x8xf16>) {
  %0 = "graph.log_softmax"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  func.return
}

// -----

// ============================================================================================
// graph.layernorm / graph.rmsnorm: float x of rank >= 1; gamma (and beta) have x's element
// type and shape [x's last axis]; result type = x's.
// ============================================================================================

// Layernorm gamma shape is not [last axis].
// CHECK: error: 'graph.layernorm': gamma must have shape [8] (x's last axis), got tensor<4xf32>
func.func @chunk191(%x: tensor<4x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Layernorm gamma has the full shape of x.
// CHECK: error: 'graph.layernorm': gamma must have shape [8] (x's last axis), got tensor<4x8xf32>
func.func @chunk192(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<8xf32>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Layernorm beta shape is not [last axis].
// CHECK: error: 'graph.layernorm': beta must have shape [8] (x's last axis), got tensor<1x8xf32>
func.func @chunk193(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<1x8xf32>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Layernorm gamma element type differs from x.
// CHECK: error: 'graph.layernorm': gamma has element type f16, expected f32
func.func @chunk194(%x: tensor<4x8xf32>, %g: tensor<8xf16>, %b: tensor<8xf32>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<4x8xf32>, tensor<8xf16>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Layernorm beta element type differs from x.
// CHECK: error: 'graph.layernorm': beta has element type f32, expected bf16
func.func @chunk195(%x: tensor<4x8xbf16>, %g: tensor<8xbf16>, %b: tensor<8xf32>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xf32>) -> tensor<4x8xbf16>
  func.return
}

// -----

// Layernorm on integers (float-only).
// CHECK: error: 'graph.layernorm': x must have a float element type, got tensor<4x8xi32>
func.func @chunk196(%x: tensor<4x8xi32>, %g: tensor<8xi32>, %b: tensor<8xi32>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<4x8xi32>, tensor<8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  func.return
}

// -----

// Layernorm on a rank-0 x.
// CHECK: error: 'graph.layernorm': x must have rank >= 1, got tensor<f32>
func.func @chunk197(%x: tensor<f32>, %g: tensor<f32>, %b: tensor<f32>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// Layernorm result type differs from x.
// CHECK: error: 'graph.layernorm': result type tensor<4x1xf32> does not match the inferred tensor<4x8xf32>
func.func @chunk198(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  %0 = "graph.layernorm"(%x, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

// Rmsnorm gamma shape is not [last axis].
// CHECK: error: 'graph.rmsnorm': gamma must have shape [8] (x's last axis), got tensor<16xf32>
func.func @chunk199(%x: tensor<4x8xf32>, %g: tensor<16xf32>) {
  %0 = "graph.rmsnorm"(%x, %g) : (tensor<4x8xf32>, tensor<16xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Rmsnorm gamma rank-0.
// CHECK: error: 'graph.rmsnorm': gamma must have shape [8] (x's last axis), got tensor<f32>
func.func @chunk200(%x: tensor<4x8xf32>, %g: tensor<f32>) {
  %0 = "graph.rmsnorm"(%x, %g) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Rmsnorm gamma element type differs from x.
// CHECK: error: 'graph.rmsnorm': gamma has element type f32, expected f64
func.func @chunk201(%x: tensor<4x8xf64>, %g: tensor<8xf32>) {
  %0 = "graph.rmsnorm"(%x, %g) : (tensor<4x8xf64>, tensor<8xf32>) -> tensor<4x8xf64>
  func.return
}

// -----

// Rmsnorm on integers (float-only).
// CHECK: error: 'graph.rmsnorm': x must have a float element type, got tensor<4x8xi64>
func.func @chunk202(%x: tensor<4x8xi64>, %g: tensor<8xi64>) {
  %0 = "graph.rmsnorm"(%x, %g) : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi64>
  func.return
}

// -----

// Rmsnorm on a rank-0 x.
// CHECK: error: 'graph.rmsnorm': x must have rank >= 1, got tensor<f16>
func.func @chunk203(%x: tensor<f16>, %g: tensor<f16>) {
  %0 = "graph.rmsnorm"(%x, %g) : (tensor<f16>, tensor<f16>) -> tensor<f16>
  func.return
}

// -----

// Rmsnorm result type differs from x.
// CHECK: error: 'graph.rmsnorm': result type tensor<4x8xf16> does not match the inferred tensor<4x8xf32>
func.func @chunk204(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  %0 = "graph.rmsnorm"(%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf16>
  func.return
}

// -----

// ============================================================================================
// graph.attention: float, one element type, rank >= 2, equal batch axes, q/k head sizes
// equal, k/v sequence lengths equal; result [..., Sq, Dv].
// ============================================================================================

// Attention k element type differs from q.
// CHECK: error: 'graph.attention': k has element type f16, expected f32 like q
func.func @chunk205(%q: tensor<2x8xf32>, %k: tensor<2x8xf16>, %v: tensor<2x8xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<2x8xf32>, tensor<2x8xf16>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// Attention v element type differs from q.
// CHECK: error: 'graph.attention': v has element type f64, expected f32 like q
func.func @chunk206(%q: tensor<2x8xf32>, %k: tensor<2x8xf32>, %v: tensor<2x8xf64>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf64>) -> tensor<2x8xf32>
  func.return
}

// -----

// Attention on integers (float-only).
// CHECK: error: 'graph.attention': q must have a float element type, got tensor<2x8xi32>
func.func @chunk207(%q: tensor<2x8xi32>, %k: tensor<2x8xi32>, %v: tensor<2x8xi32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi32>
  func.return
}

// -----

// Attention rank-1 operand.
// CHECK: error: 'graph.attention': q, k, v must have rank >= 2, got tensor<8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
func.func @chunk208(%q: tensor<8xf32>, %k: tensor<2x8xf32>, %v: tensor<2x8xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<8xf32>
  func.return
}

// -----

// Attention batch axes of q and k differ.
// CHECK: error: 'graph.attention': batch axes of q, k, v differ: tensor<4x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>
func.func @chunk209(%q: tensor<4x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<4x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<4x16x64xf32>
  func.return
}

// -----

// Attention batch axes of v differ.
// CHECK: error: 'graph.attention': batch axes of q, k, v differ: tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<3x16x64xf32>
func.func @chunk210(%q: tensor<4x16x64xf32>, %k: tensor<4x16x64xf32>, %v: tensor<3x16x64xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<3x16x64xf32>) -> tensor<4x16x64xf32>
  func.return
}

// -----

// Attention batch axes must be equal, not broadcast.
// CHECK: error: 'graph.attention': batch axes of q, k, v differ: tensor<4x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>
func.func @chunk211(%q: tensor<4x16x64xf32>, %k: tensor<1x16x64xf32>, %v: tensor<1x16x64xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<4x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<4x16x64xf32>
  func.return
}

// -----

// Attention batch rank differs.
// CHECK: error: 'graph.attention': batch axes of q, k, v differ: tensor<2x4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>
func.func @chunk212(%q: tensor<2x4x16x64xf32>, %k: tensor<4x16x64xf32>, %v: tensor<4x16x64xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<2x4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>) -> tensor<2x4x16x64xf32>
  func.return
}

// -----

// Attention q and k head sizes differ.
// CHECK: error: 'graph.attention': q and k head sizes differ: tensor<4x16x64xf32>, tensor<4x16x32xf32>
func.func @chunk213(%q: tensor<4x16x64xf32>, %k: tensor<4x16x32xf32>, %v: tensor<4x16x64xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<4x16x64xf32>, tensor<4x16x32xf32>, tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
  func.return
}

// -----

// Attention k and v sequence lengths differ.
// CHECK: error: 'graph.attention': k and v sequence lengths differ: tensor<4x16x64xf32>, tensor<4x12x64xf32>
func.func @chunk214(%q: tensor<4x16x64xf32>, %k: tensor<4x16x64xf32>, %v: tensor<4x12x64xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64}> : (tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x12x64xf32>) -> tensor<4x16x64xf32>
  func.return
}

// -----

// Attention result must be [..., Sq, Dv].
// CHECK: error: 'graph.attention': result type tensor<4x10x64xf32> does not match the inferred tensor<4x10x32xf32>
func.func @chunk215(%q: tensor<4x10x64xf32>, %k: tensor<4x16x64xf32>, %v: tensor<4x16x32xf32>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 1.0 : f64, causal = true}> : (tensor<4x10x64xf32>, tensor<4x16x64xf32>, tensor<4x16x32xf32>) -> tensor<4x10x64xf32>
  func.return
}

// -----

// ============================================================================================
// graph.attention_grad (dialects/graph_grad.py): q, k, v as for graph.attention; out and
// dout of the attention's result type; one element type; results (dq, dk, dv) of the
// types of q, k and v.
// ============================================================================================

// attention_grad dq of v's type, not q's.
// CHECK: error: 'graph.attention_grad': result dq must have the type of q, tensor<2x4x8xf32>, got tensor<2x4x16xf32>
func.func @attention_grad_dq_type(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x16xf32>, %o: tensor<2x4x16xf32>, %do: tensor<2x4x16xf32>) {
  %0:3 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 1.0 : f64}> : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>)
  func.return
}

// -----

// attention_grad dk and dv swapped.
// CHECK: error: 'graph.attention_grad': result dk must have the type of k, tensor<2x6x8xf32>, got tensor<2x6x16xf32>
func.func @attention_grad_dk_dv_swapped(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x16xf32>, %o: tensor<2x4x16xf32>, %do: tensor<2x4x16xf32>) {
  %0:3 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 1.0 : f64}> : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x16xf32>, tensor<2x6x8xf32>)
  func.return
}

// -----

// attention_grad dq of q's shape but another element type.
// CHECK: error: 'graph.attention_grad': result dq must have the type of q, tensor<2x4x8xf32>, got tensor<2x4x8xbf16>
func.func @attention_grad_dq_element(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x16xf32>, %o: tensor<2x4x16xf32>, %do: tensor<2x4x16xf32>) {
  %0:3 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 1.0 : f64}> : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x8xbf16>, tensor<2x6x8xf32>, tensor<2x6x16xf32>)
  func.return
}

// -----

// attention_grad out of q's shape ([..., Sq, Dqk]), not the attention's ([..., Sq, Dv]).
// CHECK: error: 'graph.attention_grad': out must have the attention's result type tensor<2x4x16xf32>, got tensor<2x4x8xf32>
func.func @attention_grad_out_shape(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x16xf32>, %o: tensor<2x4x8xf32>, %do: tensor<2x4x16xf32>) {
  %0:3 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 1.0 : f64}> : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>, tensor<2x4x8xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>)
  func.return
}

// -----

// attention_grad dout with the keys' sequence length.
// CHECK: error: 'graph.attention_grad': dout must have the attention's result type tensor<2x4x16xf32>, got tensor<2x6x16xf32>
func.func @attention_grad_dout_shape(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x16xf32>, %o: tensor<2x4x16xf32>, %do: tensor<2x6x16xf32>) {
  %0:3 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 1.0 : f64}> : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>, tensor<2x4x16xf32>, tensor<2x6x16xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x16xf32>)
  func.return
}

// -----

// attention_grad k element type differs from q.
// CHECK: error: 'graph.attention_grad': k has element type f32, expected bf16 like q
func.func @attention_grad_k_element(%q: tensor<4x8xbf16>, %k: tensor<4x8xf32>, %v: tensor<4x8xbf16>, %o: tensor<4x8xbf16>, %do: tensor<4x8xbf16>) {
  %0:3 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 1.0 : f64}> : (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xbf16>)
  func.return
}

// -----

// attention_grad out element type differs (f16 out of bf16 attention).
// CHECK: error: 'graph.attention_grad': out has element type f16, expected bf16 like q
func.func @attention_grad_out_element(%q: tensor<4x8xbf16>, %k: tensor<4x8xbf16>, %v: tensor<4x8xbf16>, %o: tensor<4x8xf16>, %do: tensor<4x8xbf16>) {
  %0:3 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 1.0 : f64}> : (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xf16>, tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>)
  func.return
}

// -----

// attention_grad lse in q's element type: the log-sum-exp is f32 whatever the attention's type.
// CHECK: error: 'graph.attention_grad': lse must have the type of the attention's log-sum-exp, tensor<4xf32>, got tensor<4xbf16>
func.func @attention_grad_lse_element(%q: tensor<4x8xbf16>, %o: tensor<4x8xbf16>, %l: tensor<4xbf16>) {
  %0:3 = graph.attention_grad %q, %q, %q, %o, %o lse %l {scale = 1.0 : f64} : (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>)
  func.return
}

// -----

// attention_grad lse with a row per key, not per query.
// CHECK: error: 'graph.attention_grad': lse must have the type of the attention's log-sum-exp, tensor<2x4xf32>, got tensor<2x6xf32>
func.func @attention_grad_lse_shape(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %o: tensor<2x4x8xf32>, %l: tensor<2x6xf32>) {
  %0:3 = graph.attention_grad %q, %k, %k, %o, %o lse %l {scale = 1.0 : f64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>)
  func.return
}

// -----

// ============================================================================================
// graph.attention_lse (dialects/graph_grad.py): q, k, v as for graph.attention; results
// out (the attention's result type) and lse ([batch..., Sq] f32).
// ============================================================================================

// attention_lse lse with a trailing unit axis.
// CHECK: error: 'graph.attention_lse': result lse must have type tensor<2x4xf32>, got tensor<2x4x1xf32>
func.func @attention_lse_lse_shape(%q: tensor<2x4x8xbf16>, %k: tensor<2x6x8xbf16>) {
  %0:2 = graph.attention_lse %q, %k, %k {scale = 1.0 : f64} : (tensor<2x4x8xbf16>, tensor<2x6x8xbf16>, tensor<2x6x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<2x4x1xf32>)
  func.return
}

// -----

// attention_lse out in f32 for bf16 attention.
// CHECK: error: 'graph.attention_lse': result out must have type tensor<2x4x8xbf16>, got tensor<2x4x8xf32>
func.func @attention_lse_out_element(%q: tensor<2x4x8xbf16>, %k: tensor<2x6x8xbf16>) {
  %0:2 = graph.attention_lse %q, %k, %k {scale = 1.0 : f64} : (tensor<2x4x8xbf16>, tensor<2x6x8xbf16>, tensor<2x6x8xbf16>) -> (tensor<2x4x8xf32>, tensor<2x4xf32>)
  func.return
}

// -----

// attention_lse q and k head sizes differ (the attention's own rule).
// CHECK: error: 'graph.attention_lse': q and k head sizes differ: tensor<4x8xf32>, tensor<6x16xf32>
func.func @attention_lse_heads(%q: tensor<4x8xf32>, %k: tensor<6x16xf32>) {
  %0:2 = graph.attention_lse %q, %k, %k {scale = 1.0 : f64} : (tensor<4x8xf32>, tensor<6x16xf32>, tensor<6x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>)
  func.return
}

// -----

// attention_grad dout element type differs (an f32 cotangent of bf16 attention).
// CHECK: error: 'graph.attention_grad': dout has element type f32, expected bf16 like q
func.func @attention_grad_dout_element(%q: tensor<4x8xbf16>, %k: tensor<4x8xbf16>, %v: tensor<4x8xbf16>, %o: tensor<4x8xbf16>, %do: tensor<4x8xf32>) {
  %0:3 = "graph.attention_grad"(%q, %k, %v, %o, %do) <{scale = 1.0 : f64}> : (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>)
  func.return
}

// -----

// attention_grad on integers (float-only, as graph.attention).
// CHECK: error: 'graph.attention_grad': q must have a float element type, got tensor<4x8xi32>
func.func @attention_grad_int(%q: tensor<4x8xi32>) {
  %0:3 = "graph.attention_grad"(%q, %q, %q, %q, %q) <{scale = 1.0 : f64}> : (tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>) -> (tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>)
  func.return
}

// -----

// attention_grad k and v sequence lengths differ (graph.attention's rule).
// CHECK: error: 'graph.attention_grad': k and v sequence lengths differ: tensor<4x8xf32>, tensor<6x8xf32>
func.func @attention_grad_kv_lengths(%q: tensor<4x8xf32>, %v: tensor<6x8xf32>) {
  %0:3 = "graph.attention_grad"(%q, %q, %v, %q, %q) <{scale = 1.0 : f64}> : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<6x8xf32>)
  func.return
}

// -----

// attention_grad non-tensor (memref) dout.
// CHECK: error: 'graph.attention_grad': operand 'dout' at position 4 does not verify
func.func @attention_grad_memref(%q: tensor<4x8xf32>, %m: memref<4x8xf32>) {
  %0:3 = "graph.attention_grad"(%q, %q, %q, %q, %m) <{scale = 1.0 : f64}> : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, memref<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  func.return
}

// -----

// attention_grad has three results.
// CHECK: error: 'graph.attention_grad': Expected 3 results, but got 2
func.func @attention_grad_two_results(%q: tensor<4x8xf32>) {
  %0:2 = "graph.attention_grad"(%q, %q, %q, %q, %q) <{scale = 1.0 : f64}> : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  func.return
}

// -----

// attention_grad without its scale.
// CHECK: error: property 'scale' expected in operation 'graph.attention_grad'
func.func @attention_grad_no_scale(%q: tensor<4x8xf32>) {
  %0:3 = "graph.attention_grad"(%q, %q, %q, %q, %q) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  func.return
}

// -----

// ============================================================================================
// graph.embedding: table of rank 2, ids of element type i32/i64; result [...ids, D].
// ============================================================================================

// Embedding table rank 1.
// CHECK: error: 'graph.embedding': table must have rank 2 ([V, D]), got tensor<100xf32>
func.func @chunk216(%t: tensor<100xf32>, %ids: tensor<4xi64>) {
  %0 = "graph.embedding"(%t, %ids) : (tensor<100xf32>, tensor<4xi64>) -> tensor<4xf32>
  func.return
}

// -----

// Embedding table rank 3.
// CHECK: error: 'graph.embedding': table must have rank 2 ([V, D]), got tensor<2x100x16xf32>
func.func @chunk217(%t: tensor<2x100x16xf32>, %ids: tensor<4xi64>) {
  %0 = "graph.embedding"(%t, %ids) : (tensor<2x100x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  func.return
}

// -----

// Embedding ids of float element type.
// CHECK: error: 'graph.embedding': ids must have element type i32 or i64, got tensor<4xf32>
func.func @chunk218(%t: tensor<100x16xf32>, %ids: tensor<4xf32>) {
  %0 = "graph.embedding"(%t, %ids) : (tensor<100x16xf32>, tensor<4xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

// Embedding ids of element type i1.
// CHECK: error: 'graph.embedding': ids must have element type i32 or i64, got tensor<4xi1>
func.func @chunk219(%t: tensor<100x16xf32>, %ids: tensor<4xi1>) {
  %0 = "graph.embedding"(%t, %ids) : (tensor<100x16xf32>, tensor<4xi1>) -> tensor<4x16xf32>
  func.return
}

// -----

// Embedding result must be [...ids, D].
// CHECK: error: 'graph.embedding': result type tensor<4x7x100xf32> does not match the inferred tensor<4x7x16xf32>
func.func @chunk220(%t: tensor<100x16xf32>, %ids: tensor<4x7xi64>) {
  %0 = "graph.embedding"(%t, %ids) : (tensor<100x16xf32>, tensor<4x7xi64>) -> tensor<4x7x100xf32>
  func.return
}

// -----

// Embedding result element type must be the table's.
// CHECK: error: 'graph.embedding': result type tensor<4x16xi32> does not match the inferred tensor<4x16xf16>
func.func @chunk221(%t: tensor<100x16xf16>, %ids: tensor<4xi32>) {
  %0 = "graph.embedding"(%t, %ids) : (tensor<100x16xf16>, tensor<4xi32>) -> tensor<4x16xi32>
  func.return
}

// -----

// ============================================================================================
// graph.cross_entropy: float logits [N, C], labels [N] of i32/i64; result tensor<elt>.
// ============================================================================================

// Cross_entropy logits rank 1.
// CHECK: error: 'graph.cross_entropy': logits must have rank 2 ([N, C]), got tensor<10xf32>
func.func @chunk222(%l: tensor<10xf32>, %y: tensor<1xi64>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<10xf32>, tensor<1xi64>) -> tensor<f32>
  func.return
}

// -----

// Cross_entropy logits rank 3.
// CHECK: error: 'graph.cross_entropy': logits must have rank 2 ([N, C]), got tensor<2x8x10xf32>
func.func @chunk223(%l: tensor<2x8x10xf32>, %y: tensor<2x8xi64>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<2x8x10xf32>, tensor<2x8xi64>) -> tensor<f32>
  func.return
}

// -----

// Cross_entropy integer logits (float-only).
// CHECK: error: 'graph.cross_entropy': logits must have a float element type, got tensor<8x10xi32>
func.func @chunk224(%l: tensor<8x10xi32>, %y: tensor<8xi32>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<8x10xi32>, tensor<8xi32>) -> tensor<i32>
  func.return
}

// -----

// Cross_entropy float labels.
// CHECK: error: 'graph.cross_entropy': labels must have element type i32 or i64, got tensor<8xf32>
func.func @chunk225(%l: tensor<8x10xf32>, %y: tensor<8xf32>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<8xf32>) -> tensor<f32>
  func.return
}

// -----

// Cross_entropy i1 labels.
// CHECK: error: 'graph.cross_entropy': labels must have element type i32 or i64, got tensor<8xi1>
func.func @chunk226(%l: tensor<8x10xf32>, %y: tensor<8xi1>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<8xi1>) -> tensor<f32>
  func.return
}

// -----

// Cross_entropy labels length differs from N.
// CHECK: error: 'graph.cross_entropy': labels must have shape [8] (logits' N), got tensor<10xi64>
func.func @chunk227(%l: tensor<8x10xf32>, %y: tensor<10xi64>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<10xi64>) -> tensor<f32>
  func.return
}

// -----

// Cross_entropy labels of rank 2 (one-hot).
// CHECK: error: 'graph.cross_entropy': labels must have shape [8] (logits' N), got tensor<8x10xi32>
func.func @chunk228(%l: tensor<8x10xf32>, %y: tensor<8x10xi32>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<8x10xi32>) -> tensor<f32>
  func.return
}

// -----

// Cross_entropy result must be rank 0.
// CHECK: error: 'graph.cross_entropy': result type tensor<8xf32> does not match the inferred tensor<f32>
func.func @chunk229(%l: tensor<8x10xf32>, %y: tensor<8xi64>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<8xf32>
  func.return
}

// -----

// Cross_entropy result element type must be the logits'.
// CHECK: error: 'graph.cross_entropy': result type tensor<f32> does not match the inferred tensor<f16>
func.func @chunk230(%l: tensor<8x10xf16>, %y: tensor<8xi64>) {
  %0 = "graph.cross_entropy"(%l, %y) : (tensor<8x10xf16>, tensor<8xi64>) -> tensor<f32>
  func.return
}

// -----

// ============================================================================================
// graph.reshape: same element type, same element count.
// ============================================================================================

// Reshape changes the element count.
// CHECK: error: 'graph.reshape': element count changes: tensor<4x8xf32> has 32, tensor<30xf32> has 30
func.func @chunk231(%x: tensor<4x8xf32>) {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<30xf32>
  func.return
}

// -----

// Reshape of a rank-0 tensor to two elements.
// CHECK: error: 'graph.reshape': element count changes: tensor<f32> has 1, tensor<2xf32> has 2
func.func @chunk232(%x: tensor<f32>) {
  %0 = "graph.reshape"(%x) : (tensor<f32>) -> tensor<2xf32>
  func.return
}

// -----

// Reshape changes the element type.
// CHECK: error: 'graph.reshape': result has element type f16, expected f32 like x
func.func @chunk233(%x: tensor<4x8xf32>) {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf16>
  func.return
}

// -----

// ============================================================================================
// graph.broadcast_to: same element type; x must broadcast to the result shape.
// ============================================================================================

// Broadcast_to incompatible sizes.
// CHECK: error: 'graph.broadcast_to': tensor<4x3xf32> does not broadcast to tensor<4x5xf32>
func.func @chunk234(%x: tensor<4x3xf32>) {
  %0 = "graph.broadcast_to"(%x) : (tensor<4x3xf32>) -> tensor<4x5xf32>
  func.return
}

// -----

// Broadcast_to a smaller size (result would need x's size).
// CHECK: error: 'graph.broadcast_to': tensor<5x4xf32> does not broadcast to tensor<1x4xf32>
func.func @chunk235(%x: tensor<5x4xf32>) {
  %0 = "graph.broadcast_to"(%x) : (tensor<5x4xf32>) -> tensor<1x4xf32>
  func.return
}

// -----

// Broadcast_to a lower rank.
// CHECK: error: 'graph.broadcast_to': tensor<4x8xf32> does not broadcast to tensor<8xf32>
func.func @chunk236(%x: tensor<4x8xf32>) {
  %0 = "graph.broadcast_to"(%x) : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return
}

// -----

// Broadcast_to changes the element type.
// CHECK: error: 'graph.broadcast_to': result has element type i32, expected f32 like x
func.func @chunk237(%x: tensor<8xf32>) {
  %0 = "graph.broadcast_to"(%x) : (tensor<8xf32>) -> tensor<4x8xi32>
  func.return
}

// -----

// ============================================================================================
// graph.transpose: permutation is a permutation of 0..rank-1; result = permuted x.
// ============================================================================================

// Transpose permutation with a duplicate.
// CHECK: error: 'graph.transpose': permutation [0, 0] is not a permutation of the 2 axes of tensor<4x8xf32>
func.func @chunk238(%x: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: 0, 0>}> : (tensor<4x8xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// Transpose permutation entry out of range.
// CHECK: error: 'graph.transpose': permutation [1, 2] is not a permutation of the 2 axes of tensor<4x8xf32>
func.func @chunk239(%x: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: 1, 2>}> : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// Transpose permutation with a negative entry.
// CHECK: error: 'graph.transpose': permutation [-1, 0] is not a permutation of the 2 axes of tensor<4x8xf32>
func.func @chunk240(%x: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: -1, 0>}> : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// Transpose permutation too short.
// CHECK: error: 'graph.transpose': permutation [1, 0] is not a permutation of the 3 axes of tensor<2x4x8xf32>
func.func @chunk241(%x: tensor<2x4x8xf32>) {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<2x4x8xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

// Transpose permutation too long.
// CHECK: error: 'graph.transpose': permutation [2, 1, 0] is not a permutation of the 2 axes of tensor<4x8xf32>
func.func @chunk242(%x: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: 2, 1, 0>}> : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// Transpose result not permuted as the permutation says.
// CHECK: error: 'graph.transpose': result type tensor<8x4x2xf32> does not match the inferred tensor<8x2x4xf32>
func.func @chunk243(%x: tensor<2x4x8xf32>) {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x4x8xf32>) -> tensor<8x4x2xf32>
  func.return
}

// -----

// ============================================================================================
// graph.slice: starts/limits/steps have one entry per axis; step >= 1;
// 0 <= start <= limit <= size; result size ceil((limit - start) / step).
// ============================================================================================

// Slice starts has too few entries.
// CHECK: error: 'graph.slice': starts has 1 entries, x has rank 2
func.func @chunk244(%x: tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0>, limits = array<i64: 4, 8>, steps = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Slice limits has too many entries.
// CHECK: error: 'graph.slice': limits has 3 entries, x has rank 2
func.func @chunk245(%x: tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 0>, limits = array<i64: 4, 8, 1>, steps = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Slice steps empty.
// CHECK: error: 'graph.slice': steps has 0 entries, x has rank 2
func.func @chunk246(%x: tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, steps = array<i64>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Slice step 0.
// CHECK: error: 'graph.slice': step 0 on axis 1 must be >= 1
func.func @chunk247(%x: tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, steps = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Slice negative step.
// CHECK: error: 'graph.slice': step -1 on axis 0 must be >= 1
func.func @chunk248(%x: tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 3, 0>, limits = array<i64: 0, 8>, steps = array<i64: -1, 1>}> : (tensor<4x8xf32>) -> tensor<3x8xf32>
  func.return
}

// -----

// Slice limit past the size.
// CHECK: error: 'graph.slice': bounds [0, 9) on axis 1 do not lie inside size 8
func.func @chunk249(%x: tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 0>, limits = array<i64: 4, 9>, steps = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<4x9xf32>
  func.return
}

// -----

// Slice negative start.
// CHECK: error: 'graph.slice': bounds [-1, 4) on axis 0 do not lie inside size 4
func.func @chunk250(%x: tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: -1, 0>, limits = array<i64: 4, 8>, steps = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<5x8xf32>
  func.return
}

// -----

// Slice start after limit.
// CHECK: error: 'graph.slice': bounds [6, 2) on axis 1 do not lie inside size 8
func.func @chunk251(%x: tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 6>, limits = array<i64: 4, 2>, steps = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<4x0xf32>
  func.return
}

// -----

// Slice result size ignores the step.
// CHECK: error: 'graph.slice': result type tensor<4x6xf32> does not match the inferred tensor<4x2xf32>
func.func @chunk252(%x: tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 2>, limits = array<i64: 4, 8>, steps = array<i64: 1, 3>}> : (tensor<4x8xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// ============================================================================================
// graph.concat: at least one input, one element type, one rank, equal sizes off the axis,
// axis in range; result sums the axis.
// ============================================================================================

// Concat with no inputs.
// CHECK: error: 'graph.concat': needs at least one input
func.func @chunk253() {
  %0 = "graph.concat"() <{axis = 0 : i64}> : () -> tensor<4xf32>
  func.return
}

// -----

// Concat input element types differ.
// CHECK: error: 'graph.concat': operand #1 has element type f16, expected f32 like operand #0
func.func @chunk254(%x: tensor<2x8xf32>, %y: tensor<3x8xf16>) {
  %0 = "graph.concat"(%x, %y) <{axis = 0 : i64}> : (tensor<2x8xf32>, tensor<3x8xf16>) -> tensor<5x8xf32>
  func.return
}

// -----

// Concat input ranks differ.
// CHECK: error: 'graph.concat': operand #1 is tensor<8xf32>; all inputs must match tensor<2x8xf32> off axis 0
func.func @chunk255(%x: tensor<2x8xf32>, %y: tensor<8xf32>) {
  %0 = "graph.concat"(%x, %y) <{axis = 0 : i64}> : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  func.return
}

// -----

// Concat off-axis sizes differ.
// CHECK: error: 'graph.concat': operand #1 is tensor<3x7xf32>; all inputs must match tensor<2x8xf32> off axis 0
func.func @chunk256(%x: tensor<2x8xf32>, %y: tensor<3x7xf32>) {
  %0 = "graph.concat"(%x, %y) <{axis = 0 : i64}> : (tensor<2x8xf32>, tensor<3x7xf32>) -> tensor<5x8xf32>
  func.return
}

// -----

// Concat off-axis sizes differ on the third input, negative axis.
// CHECK: error: 'graph.concat': operand #2 is tensor<5x1xf32>; all inputs must match tensor<4x2xf32> off axis 1
func.func @chunk257(%x: tensor<4x2xf32>, %y: tensor<4x3xf32>, %z: tensor<5x1xf32>) {
  %0 = "graph.concat"(%x, %y, %z) <{axis = -1 : i64}> : (tensor<4x2xf32>, tensor<4x3xf32>, tensor<5x1xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// Concat axis out of range (positive).
// CHECK: error: 'graph.concat': axis 2 is out of range for rank 2
func.func @chunk258(%x: tensor<2x8xf32>, %y: tensor<3x8xf32>) {
  %0 = "graph.concat"(%x, %y) <{axis = 2 : i64}> : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<5x8xf32>
  func.return
}

// -----

// Concat axis out of range (negative).
// CHECK: error: 'graph.concat': axis -3 is out of range for rank 2
func.func @chunk259(%x: tensor<2x8xf32>, %y: tensor<3x8xf32>) {
  %0 = "graph.concat"(%x, %y) <{axis = -3 : i64}> : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<5x8xf32>
  func.return
}

// -----

// Concat of rank-0 tensors: no axis to concatenate.
// CHECK: error: 'graph.concat': axis 0 is out of range for rank 0
func.func @chunk260(%x: tensor<f32>, %y: tensor<f32>) {
  %0 = "graph.concat"(%x, %y) <{axis = 0 : i64}> : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
  func.return
}

// -----

// Concat result size on the axis is not the sum.
// CHECK: error: 'graph.concat': result type tensor<6x8xf32> does not match the inferred tensor<5x8xf32>
func.func @chunk261(%x: tensor<2x8xf32>, %y: tensor<3x8xf32>) {
  %0 = "graph.concat"(%x, %y) <{axis = 0 : i64}> : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<6x8xf32>
  func.return
}

// -----

// ============================================================================================
// Property constraints declared by the ops (prop_def): required properties present and of
// the declared kind.
// ============================================================================================

// Scale without its required value.
// CHECK: error: property 'value' expected in operation 'graph.scale'
func.func @chunk262(%x: tensor<4xf32>) {
  %0 = "graph.scale"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Compare without its required predicate.
// CHECK: error: property 'predicate' expected in operation 'graph.compare'
func.func @chunk263(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %0 = "graph.compare"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

// Dropout without its required seed.
// CHECK: error: property 'seed' expected in operation 'graph.dropout'
func.func @chunk264(%x: tensor<4xf32>) {
  %0 = "graph.dropout"(%x) <{p = 0.5 : f64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Reduce_sum without its required axes.
// CHECK: error: property 'axes' expected in operation 'graph.reduce_sum'
func.func @chunk265(%x: tensor<4xf32>) {
  %0 = "graph.reduce_sum"(%x) : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

// Attention without its required scale.
// CHECK: error: property 'scale' expected in operation 'graph.attention'
func.func @chunk266(%q: tensor<2x8xf32>, %k: tensor<2x8xf32>, %v: tensor<2x8xf32>) {
  %0 = "graph.attention"(%q, %k, %v) : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// Transpose without its required permutation.
// CHECK: error: property 'permutation' expected in operation 'graph.transpose'
func.func @chunk267(%x: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// Slice without its required steps.
// CHECK: error: property 'steps' expected in operation 'graph.slice'
func.func @chunk268(%x: tensor<4xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0>, limits = array<i64: 4>}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Concat without its required axis.
// CHECK: error: property 'axis' expected in operation 'graph.concat'
func.func @chunk269(%x: tensor<4xf32>) {
  %0 = "graph.concat"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Undeclared property.
// CHECK: error: property 'alpha' is not defined by the operation 'graph.relu'
func.func @chunk270(%x: tensor<4xf32>) {
  %0 = "graph.relu"(%x) <{alpha = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Dropout p given as f32 rather than f64.
// CHECK: error: 'graph.dropout': property 'p' = 5.000000e-01 : f32 is invalid: f32 should be of base attribute f64
func.func @chunk271(%x: tensor<4xf32>) {
  %0 = "graph.dropout"(%x) <{p = 5.000000e-01 : f32, seed = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Softmax axis given as a float.
// CHECK: error: 'graph.softmax': property 'axis' = 1.000000e+00 : f64 is invalid: 1.000000e+00 : f64 should be of base attribute integer
func.func @chunk272(%x: tensor<4xf32>) {
  %0 = "graph.softmax"(%x) <{axis = 1.000000e+00 : f64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Gelu approximate given as an integer.
// CHECK: error: 'graph.gelu': property 'approximate' = 1 : i64 is invalid: 1 : i64 should be of base attribute string
func.func @chunk273(%x: tensor<4xf32>) {
  %0 = "graph.gelu"(%x) <{approximate = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Reduce keepdims given as an i64.
// CHECK: error: 'graph.reduce_max': property 'keepdims' = 1 : i64 is invalid: Expected attribute i1 but got i64
func.func @chunk274(%x: tensor<4xf32>) {
  %0 = "graph.reduce_max"(%x) <{axes = array<i64: 0>, keepdims = 1 : i64}> : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

// Int-list properties must be i64 arrays: a float permutation is rejected, not a crash.
// CHECK: error: 'graph.transpose': property 'permutation' = array<f32: 1.000000e+00, 0.000000e+00> is invalid: Expected attribute i64 but got f32
func.func @float_permutation(%x: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%x) <{permutation = array<f32: 1.0, 0.0>}> : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// Reduction axes given as floats are rejected.
// CHECK: error: 'graph.reduce_sum': property 'axes' = array<f32: 5.000000e-01> is invalid: Expected attribute i64 but got f32
func.func @float_axes(%x: tensor<4x8xf32>) {
  %0 = "graph.reduce_sum"(%x) <{axes = array<f32: 0.5>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Slice bounds given as floats are rejected with the property named.
// CHECK: error: 'graph.slice': property 'starts' = array<f32: 0.000000e+00> is invalid: Expected attribute i64 but got f32
func.func @float_slice(%x: tensor<4xf32>) {
  %0 = "graph.slice"(%x) <{starts = array<f32: 0.0>, limits = array<i64: 4>, steps = array<i64: 1>}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Only signless integers: ui32 is not i32.
// CHECK: error: 'graph.neg': x has unsupported element type ui32
func.func @unsigned(%x: tensor<4xui32>) {
  %0 = "graph.neg"(%x) : (tensor<4xui32>) -> tensor<4xui32>
  func.return
}

// -----

// Only signless integers: si64 ids are not i64.
// CHECK: error: 'graph.embedding': ids has unsupported element type si64
func.func @signed_ids(%t: tensor<4x2xf32>, %ids: tensor<3xsi64>) {
  %0 = "graph.embedding"(%t, %ids) : (tensor<4x2xf32>, tensor<3xsi64>) -> tensor<3x2xf32>
  func.return
}

// -----

// An axis given as a bool is rejected (not read as axis 1).
// CHECK: error: 'graph.softmax': property 'axis' = true is invalid: Expected attribute i64 but got i1
func.func @bool_axis(%x: tensor<4x8xf32>) {
  %0 = "graph.softmax"(%x) <{axis = true}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// graph.dropout's step is one i64 scalar: a vector of steps.
// CHECK: error: 'graph.dropout': step must be a rank-0 i64 tensor, got tensor<2xi64>
func.func @dropout_step_shape(%x: tensor<4xf32>, %s: tensor<2xi64>) {
  %0 = "graph.dropout"(%x, %s) <{p = 0.5 : f64, seed = 3 : i64}> : (tensor<4xf32>, tensor<2xi64>) -> tensor<4xf32>
  func.return
}

// -----

// graph.dropout's step is an integer: an f32 step.
// CHECK: error: 'graph.dropout': step must be a rank-0 i64 tensor, got tensor<f32>
func.func @dropout_step_type(%x: tensor<4xf32>, %s: tensor<f32>) {
  %0 = "graph.dropout"(%x, %s) <{p = 0.5 : f64, seed = 3 : i64}> : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return
}

// -----

// ============================================================================================
// graph.embedding_grad (dialects/graph_grad.py): grad [*ids.shape, D] of a float type, ids
// i32/i64, vocabulary >= 0; the result [vocabulary, D] of grad's type.
// ============================================================================================

// embedding_grad rows of another width than the table's result.
// CHECK: error: 'graph.embedding_grad': result type tensor<10x8xf32> does not match the inferred tensor<10x16xf32>
func.func @embedding_grad_width(%g: tensor<4x16xf32>, %ids: tensor<4xi64>) {
  %0 = "graph.embedding_grad"(%g, %ids) <{vocabulary = 10 : i64}> : (tensor<4x16xf32>, tensor<4xi64>) -> tensor<10x8xf32>
  func.return
}

// -----

// embedding_grad grad rows that are not one per id.
// CHECK: error: 'graph.embedding_grad': grad must be [*ids.shape, D] for ids tensor<5xi64>, got tensor<4x16xf32>
func.func @embedding_grad_rows(%g: tensor<4x16xf32>, %ids: tensor<5xi64>) {
  %0 = "graph.embedding_grad"(%g, %ids) <{vocabulary = 10 : i64}> : (tensor<4x16xf32>, tensor<5xi64>) -> tensor<10x16xf32>
  func.return
}

// -----

// embedding_grad ids of a float type.
// CHECK: error: 'graph.embedding_grad': ids must have element type i32 or i64, got tensor<4xf32>
func.func @embedding_grad_float_ids(%g: tensor<4x16xf32>, %ids: tensor<4xf32>) {
  %0 = "graph.embedding_grad"(%g, %ids) <{vocabulary = 10 : i64}> : (tensor<4x16xf32>, tensor<4xf32>) -> tensor<10x16xf32>
  func.return
}

// -----

// embedding_grad of integer cotangents.
// CHECK: error: 'graph.embedding_grad': grad must have a float element type, got tensor<4x16xi32>
func.func @embedding_grad_int_grad(%g: tensor<4x16xi32>, %ids: tensor<4xi64>) {
  %0 = "graph.embedding_grad"(%g, %ids) <{vocabulary = 10 : i64}> : (tensor<4x16xi32>, tensor<4xi64>) -> tensor<10x16xi32>
  func.return
}

// -----

// embedding_grad without its vocabulary.
// CHECK: error: property 'vocabulary' expected in operation 'graph.embedding_grad'
func.func @embedding_grad_no_vocabulary(%g: tensor<4x16xf32>, %ids: tensor<4xi64>) {
  %0 = "graph.embedding_grad"(%g, %ids) : (tensor<4x16xf32>, tensor<4xi64>) -> tensor<10x16xf32>
  func.return
}

// -----

// embedding padding_idx past the table's rows.
// CHECK: error: 'graph.embedding': padding_idx must be a row of the table, in [0, 10), got 10
func.func @embedding_padding_past(%t: tensor<10x4xf32>, %ids: tensor<3xi64>) {
  %0 = "graph.embedding"(%t, %ids) <{padding_idx = 10 : i64}> : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

// embedding_grad padding_idx below 0 (PyTorch's -1 for "none" is left out, not passed).
// CHECK: error: 'graph.embedding_grad': padding_idx must be a row of the table, in [0, 10), got -1
func.func @embedding_grad_padding_negative(%g: tensor<4x16xf32>, %ids: tensor<4xi64>) {
  %0 = "graph.embedding_grad"(%g, %ids) <{vocabulary = 10 : i64, padding_idx = -1 : i64}> : (tensor<4x16xf32>, tensor<4xi64>) -> tensor<10x16xf32>
  func.return
}

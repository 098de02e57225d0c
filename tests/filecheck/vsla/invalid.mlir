// RUN: strata-opt %s --split-input-file --verify-diagnostics | filecheck %s
//
// Invalid vsla IR, one chunk per verifier rule of dialects/vsla.py: the shape rules
// (ambient shape, m + n - 1, m·n, [k, ambient...], [N // size, size, ...], rank - 1), the
// operands' element types and ranks, the overflow guard and the properties' ranges.

// Ambient promotion extends extents, not ranks.
// CHECK: error: 'vsla.add': rhs has rank 2, lhs rank 1: ambient promotion extends extents, never ranks
func.func @rank(%a: tensor<3xf32>, %b: tensor<2x2xf32>) {
  %0 = vsla.add %a, %b : (tensor<3xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// The result must be the ambient shape (the per-axis maximum), not a broadcast one.
// CHECK: error: 'vsla.sub': result type tensor<3x4xf32> does not match the inferred tensor<3x3xf32>
func.func @ambient(%a: tensor<3x1xf32>, %b: tensor<1x3xf32>) {
  %0 = vsla.sub %a, %b : (tensor<3x1xf32>, tensor<1x3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// One element type.
// CHECK: error: 'vsla.hadamard': rhs is f64, lhs is f32
func.func @dtypes(%a: tensor<3xf32>, %b: tensor<3xf64>) {
  %0 = vsla.hadamard %a, %b : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  func.return
}

// -----

// Floats only.
// CHECK: error: 'vsla.add': lhs must have a float element type
func.func @integers(%a: tensor<3xi32>, %b: tensor<3xi32>) {
  %0 = vsla.add %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

// No rank-0 values.
// CHECK: error: 'vsla.relu': x has rank 0: vsla values have rank >= 1
func.func @scalar(%a: tensor<f32>) {
  %0 = vsla.relu %a : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// Model A: full convolution length m + n - 1.
// CHECK: error: 'vsla.conv': result type tensor<5xf32> does not match the inferred tensor<4xf32>
func.func @conv_length(%a: tensor<3xf32>, %b: tensor<2xf32>) {
  %0 = vsla.conv %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<5xf32>
  func.return
}

// -----

// CHECK: error: 'vsla.conv': method must be one of auto, direct, fft, got 'fast'
func.func @conv_method(%a: tensor<3xf32>, %b: tensor<2xf32>) {
  %0 = vsla.conv %a, %b {method = "fast"} : (tensor<3xf32>, tensor<2xf32>) -> tensor<4xf32>
  func.return
}

// -----

// The semirings multiply vectors.
// CHECK: error: 'vsla.kron': lhs has rank 2: Model B multiplies vectors (rank 1)
func.func @kron_rank(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) {
  %0 = vsla.kron %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<16xf32>
  func.return
}

// -----

// Shape products are overflow-guarded.
// CHECK: error: 'vsla.kron': the Kronecker product of [4294967296, 4294967296] has more than 2^62 elements
func.func @kron_overflow(%a: tensor<4294967296xf32>, %b: tensor<4294967296xf32>) {
  %0 = vsla.kron %a, %b : (tensor<4294967296xf32>, tensor<4294967296xf32>) -> tensor<1xf32>
  func.return
}

// -----

// CHECK: error: 'vsla.stack': result type tensor<2x3xf32> does not match the inferred tensor<2x4xf32>
func.func @stack_ambient(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  %0 = vsla.stack %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: error: 'vsla.window': size and stride must be >= 1, got size 0, stride 0
func.func @window_size(%a: tensor<8x3xf32>) {
  %0 = vsla.window %a {size = 0 : i64} : (tensor<8x3xf32>) -> tensor<0x0x3xf32>
  func.return
}

// -----

// CHECK: error: 'vsla.sum': axis 2 is out of range for rank 2
func.func @sum_axis(%a: tensor<2x3xf32>) {
  %0 = vsla.sum %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return
}

// -----

// CHECK: error: 'vsla.scale': factor must be finite, got inf
func.func @scale_factor(%a: tensor<3xf32>) {
  %0 = vsla.scale %a {factor = 0x7FF0000000000000 : f64} : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

// Model consistency: a Model B value (a Kronecker product, through relu) does not enter a
// Model A product.
// CHECK: error: 'vsla.conv': mixes Model A (from vsla.conv) and Model B (from vsla.kron) values: one program multiplies in one semiring
func.func @models(%a: tensor<3xf32>, %b: tensor<2xf32>) {
  %0 = vsla.kron %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<6xf32>
  %1 = vsla.relu %0 : (tensor<6xf32>) -> tensor<6xf32>
  %2 = vsla.conv %1, %b : (tensor<6xf32>, tensor<2xf32>) -> tensor<7xf32>
  func.return
}

// -----

// Nor do the two models meet in an ambient op.
// CHECK: error: 'vsla.add': mixes Model A (from vsla.conv) and Model B (from vsla.kron) values: one program multiplies in one semiring
func.func @ambient_models(%a: tensor<3xf32>, %b: tensor<2xf32>) {
  %0 = vsla.kron %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<6xf32>
  %1 = vsla.conv %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<4xf32>
  %2 = vsla.add %0, %1 : (tensor<6xf32>, tensor<4xf32>) -> tensor<6xf32>
  func.return
}

// -----

// Model A convolves along the last axis; the leading axes are a batch and must match.
// CHECK: error: 'vsla.conv': the batch axes differ: lhs [2], rhs [3] (conv runs along the last axis)
func.func @conv_batch(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) {
  %0 = vsla.conv %a, %b : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x7xf32>
  func.return
}

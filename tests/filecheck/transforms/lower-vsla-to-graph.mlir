// lower-vsla-to-graph: every vsla op becomes graph ops. Operands at one shape are added as
// they are; otherwise the common part is summed and the longer operand's tail appended
// (no operand padded). Hadamard multiplies the common part only and extends it with zeros. Kron is the broadcast outer product, flattened. Direct convolution
// (f64) shifts row i of the outer product by i through a reshape of the product extended
// with zero columns, then sums the rows. FFT convolution (L = 4 here) transforms both
// operands in log2(L) stages of slices, butterflies with twiddle constants (emitted once
// per n) and interleaving concats, multiplies the spectra, and runs the inverse stages
// (each scaled by 0.5). stack = zero-extend + concat; window = slice of the whole windows +
// reshape; mean accumulates in f64. No vsla op is left.
// RUN: strata-opt %s -p lower-vsla-to-graph | filecheck %s
// RUN: strata-opt %s -p lower-vsla-to-graph | filecheck %s --check-prefix=NONE

// NONE-NOT: vsla.

// CHECK-LABEL: func.func @add(
// CHECK-NOT:     graph.constant
// CHECK:         %[[HEAD:.*]] = graph.slice %a {starts = array<i64: 0>, limits = array<i64: 2>, steps = array<i64: 1>} : (tensor<3xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[SUM:.*]] = graph.add %[[HEAD]], %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[TAIL:.*]] = graph.slice %a {starts = array<i64: 2>, limits = array<i64: 3>, steps = array<i64: 1>} : (tensor<3xf32>) -> tensor<1xf32>
// CHECK-NEXT:    graph.concat %[[SUM]], %[[TAIL]] {axis = 0 : i64} : (tensor<2xf32>, tensor<1xf32>) -> tensor<3xf32>
// CHECK-NEXT:    graph.add %a, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>

// CHECK-LABEL: func.func @hadamard(
// CHECK:         %[[A:.*]] = graph.slice %a {starts = array<i64: 0>, limits = array<i64: 2>, steps = array<i64: 1>} : (tensor<3xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.mul %[[A]], %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK:         graph.concat %[[P]], %{{.*}} {axis = 0 : i64} : (tensor<2xf32>, tensor<1xf32>) -> tensor<3xf32>

// CHECK-LABEL: func.func @kron(
// CHECK:         graph.reshape %a : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    graph.reshape %b : (tensor<2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:    %[[OUTER:.*]] = graph.mul %{{.*}}, %{{.*}} : (tensor<3x1xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    graph.reshape %[[OUTER]] : (tensor<3x2xf32>) -> tensor<6xf32>

// CHECK-LABEL: func.func @direct(
// CHECK:         graph.cast %a : (tensor<3xf32>) -> tensor<3xf64>
// CHECK:         graph.mul %{{.*}}, %{{.*}} : (tensor<3x1xf64>, tensor<1x5xf64>) -> tensor<3x5xf64>
// CHECK:         graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<3x5xf64>, tensor<3x3xf64>) -> tensor<3x8xf64>
// CHECK-NEXT:    graph.reshape %{{.*}} : (tensor<3x8xf64>) -> tensor<24xf64>
// CHECK-NEXT:    graph.slice %{{.*}} {starts = array<i64: 0>, limits = array<i64: 21>, steps = array<i64: 1>} : (tensor<24xf64>) -> tensor<21xf64>
// CHECK-NEXT:    graph.reshape %{{.*}} : (tensor<21xf64>) -> tensor<3x7xf64>
// CHECK-NEXT:    graph.reduce_sum %{{.*}} {axes = array<i64: 0>} : (tensor<3x7xf64>) -> tensor<7xf64>
// CHECK-NEXT:    graph.cast %{{.*}} : (tensor<7xf64>) -> tensor<7xf32>

// CHECK-LABEL: func.func @fft(
// CHECK:         graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<1x4xf64>, tensor<1x4xf64>) -> tensor<2x4xf64>
// CHECK:         graph.constant dense<[1.000000e+00, 6.123233995736766e-17]> : tensor<2xf64>
// CHECK-NEXT:    graph.constant dense<[-0.000000e+00, -1.000000e+00]> : tensor<2xf64>
// CHECK:         graph.reshape %{{.*}} : (tensor<2x2x2xf64>) -> tensor<4x2xf64>
// CHECK:         graph.constant dense<1.000000e+00> : tensor<1xf64>
// CHECK:         graph.reshape %{{.*}} : (tensor<4x2x1xf64>) -> tensor<8x1xf64>
// CHECK:         graph.scale %{{.*}} {value = 5.000000e-01 : f64} : (tensor<2x1xf64>) -> tensor<2x1xf64>
// CHECK-NOT:     graph.constant dense<[1.000000e+00, 6.123233995736766e-17]>
// CHECK:         graph.scale %{{.*}} {value = 5.000000e-01 : f64} : (tensor<1x2xf64>) -> tensor<1x2xf64>
// CHECK:         %[[Y:.*]] = graph.reshape %{{.*}} : (tensor<1x4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    func.return %[[Y]] : tensor<4xf64>

// CHECK-LABEL: func.func @structure(
// CHECK:         graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK:         graph.slice %s {starts = array<i64: 0, 0>, limits = array<i64: 6, 2>, steps = array<i64: 1, 1>} : (tensor<7x2xf32>) -> tensor<6x2xf32>
// CHECK-NEXT:    graph.reshape %{{.*}} : (tensor<6x2xf32>) -> tensor<3x2x2xf32>
// CHECK:         graph.cast %s : (tensor<7x2xf32>) -> tensor<7x2xf64>
// CHECK-NEXT:    graph.reduce_mean %{{.*}} {axes = array<i64: 1>} : (tensor<7x2xf64>) -> tensor<7xf64>
// CHECK-NEXT:    graph.cast %{{.*}} : (tensor<7xf64>) -> tensor<7xf32>

func.func @add(%a: tensor<3xf32>, %b: tensor<2xf32>, %c: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = vsla.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  %1 = vsla.add %a, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0, %1 : tensor<3xf32>, tensor<3xf32>
}
func.func @hadamard(%a: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {
  %0 = vsla.hadamard %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
func.func @kron(%a: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<6xf32> {
  %0 = vsla.kron %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}
func.func @direct(%a: tensor<3xf32>, %b: tensor<5xf32>) -> tensor<7xf32> {
  %0 = vsla.conv %a, %b {method = "direct"} : (tensor<3xf32>, tensor<5xf32>) -> tensor<7xf32>
  func.return %0 : tensor<7xf32>
}
func.func @fft(%a: tensor<2xf64>, %b: tensor<3xf64>) -> tensor<4xf64> {
  %0 = vsla.conv %a, %b {method = "fft"} : (tensor<2xf64>, tensor<3xf64>) -> tensor<4xf64>
  func.return %0 : tensor<4xf64>
}
func.func @structure(%a: tensor<3xf32>, %b: tensor<2xf32>, %s: tensor<7x2xf32>) -> (tensor<2x3xf32>, tensor<3x2x2xf32>, tensor<7xf32>) {
  %0 = vsla.stack %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  %1 = vsla.window %s {size = 2 : i64} : (tensor<7x2xf32>) -> tensor<3x2x2xf32>
  %2 = vsla.mean %s {axis = 1 : i64} : (tensor<7x2xf32>) -> tensor<7xf32>
  func.return %0, %1, %2 : tensor<2x3xf32>, tensor<3x2x2xf32>, tensor<7xf32>
}

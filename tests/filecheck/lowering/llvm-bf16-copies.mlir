// Copy kernels of bf16 data (a transpose, a strided slice) move its bits as i16: the
// vectorizer turns strided copies into gathers and shuffles, which LLVM's x86 backend
// cannot legalize for bfloat vectors ("Unexpected illegal type": a process abort).
// bf16 loads and stores are i16 in memory, bitcast to bfloat where arithmetic needs it.
// RUN: strata-translate %s --emit=llvm-ir | filecheck %s

func.func @transpose_bf16(%x: tensor<1x5x8xbf16>) -> tensor<8x1x5xbf16> {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: 2, 0, 1>}> : (tensor<1x5x8xbf16>) -> tensor<8x1x5xbf16>
  func.return %0 : tensor<8x1x5xbf16>
}

func.func @strided_slice_bf16(%x: tensor<2x7x13xbf16>) -> tensor<2x7x2xbf16> {
  %0 = "graph.slice"(%x) <{starts = array<i64: 0, 0, 2>, limits = array<i64: 2, 7, 9>, steps = array<i64: 1, 1, 5>}> : (tensor<2x7x13xbf16>) -> tensor<2x7x2xbf16>
  func.return %0 : tensor<2x7x2xbf16>
}

// CHECK-NOT:   bfloat
// CHECK:       define {{.*}}@transpose_bf16_transpose_0(
// CHECK-NOT:   bfloat
// CHECK:       i16
// CHECK-NOT:   bfloat
// CHECK:       define {{.*}}@strided_slice_bf16_slice_0(
// CHECK-NOT:   bfloat
// CHECK:       i16
// CHECK-NOT:   bfloat

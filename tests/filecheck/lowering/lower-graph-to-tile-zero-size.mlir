// lower-graph-to-tile on zero-size tensors (legal graph values): a kernel whose grid would
// be empty (it writes a zero-size result) is never made or launched, and no view points
// past its buffer; a reduction over an empty axis runs its column loop zero times, so it
// stores the identity.
// RUN: strata-opt %s -p lower-graph-to-tile --split-input-file | filecheck %s

func.func @empty_matmul(%a: tensor<0x1x65xf32>, %b: tensor<65x4xf32>) -> tensor<0x1x4xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<0x1x65xf32>, tensor<65x4xf32>) -> tensor<0x1x4xf32>
  func.return %0 : tensor<0x1x4xf32>
}

// CHECK-LABEL: func.func @empty_matmul(%a: memref<1xf32>, %b: memref<260xf32>) -> memref<1xf32> {
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<1xf32>
// CHECK-NEXT:    func.return [[OUT]] : memref<1xf32>
// CHECK-NOT:   tile.kernel

// -----

func.func @slice_start_is_limit(%x: tensor<3x0xf16>) -> tensor<0x0xf16> {
  %0 = "graph.slice"(%x) <{starts = array<i64: 2, 0>, limits = array<i64: 2, 0>, steps = array<i64: 2, 1>}> : (tensor<3x0xf16>) -> tensor<0x0xf16>
  func.return %0 : tensor<0x0xf16>
}

// CHECK-LABEL: func.func @slice_start_is_limit(
// CHECK-NOT:     tile.launch
// CHECK-NOT:   tile.kernel

// -----

func.func @embedding_no_ids(%t: tensor<17x3xi1>, %ids: tensor<0xi32>) -> tensor<0x3xi1> {
  %0 = "graph.embedding"(%t, %ids) : (tensor<17x3xi1>, tensor<0xi32>) -> tensor<0x3xi1>
  func.return %0 : tensor<0x3xi1>
}

// CHECK-LABEL: func.func @embedding_no_ids(
// CHECK-NOT:     tile.launch
// CHECK-NOT:   tile.kernel

// -----

func.func @sum_empty_axis(%x: tensor<3x0xf32>) -> tensor<3xf32> {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 1>, keepdims = false}> : (tensor<3x0xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @sum_empty_axis(%x: memref<1xf32>) -> memref<3xf32> {
// CHECK:         tile.launch @sum_empty_axis_reduce_sum_0(%x, {{.*}}) : memref<1xf32>, memref<3xf32>
// CHECK:       tile.kernel @sum_empty_axis_reduce_sum_0({{.*}}) attributes {grid = array<i64: 1>} {
// CHECK:         scf.for %{{[0-9]+}} = [[ZERO:%[0-9]+]] to [[ZERO]] step

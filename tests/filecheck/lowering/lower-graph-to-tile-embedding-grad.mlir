// graph.embedding_grad in lower-graph-to-tile: a kernel zeroes the table's sums, then one
// instance per (id tile, column tile) checks its ids (tile.check, run-time error) and
// adds its rows of grad into the rows they pick (tile.scatter_add_tko: ids repeat). An f32
// table is summed in place (two kernels, no workspace); a bf16 one in an f32 workspace
// that a third kernel rounds into the result. No one-hot and no matmul. With a padding_idx,
// the rows whose id is that row add zeros (a select on the ids, broadcast along the row).
// RUN: strata-opt %s -p "lower-graph-to-tile{tile_elements=256}" | filecheck %s

func.func @rows(%g: tensor<2x7x16xf32>, %ids: tensor<2x7xi64>) -> tensor<50x16xf32> {
  %0 = graph.embedding_grad %g, %ids {vocabulary = 50 : i64} : (tensor<2x7x16xf32>, tensor<2x7xi64>) -> tensor<50x16xf32>
  func.return %0 : tensor<50x16xf32>
}

func.func @rows_padded(%g: tensor<7x16xf32>, %ids: tensor<7xi64>) -> tensor<50x16xf32> {
  %0 = graph.embedding_grad %g, %ids {vocabulary = 50 : i64, padding_idx = 4 : i64} : (tensor<7x16xf32>, tensor<7xi64>) -> tensor<50x16xf32>
  func.return %0 : tensor<50x16xf32>
}

func.func @rows_bf16(%g: tensor<33x16xbf16>, %ids: tensor<33xi32>) -> tensor<50x16xbf16> {
  %0 = graph.embedding_grad %g, %ids {vocabulary = 50 : i64} : (tensor<33x16xbf16>, tensor<33xi32>) -> tensor<50x16xbf16>
  func.return %0 : tensor<50x16xbf16>
}

// CHECK-LABEL: func.func @rows(
// CHECK-NEXT:    %[[T:.*]] = tile.buffer : memref<800xf32>
// CHECK-NEXT:    tile.launch @rows_embedding_grad_zero_0(%[[T]])
// CHECK-NEXT:    tile.launch @rows_embedding_grad_1(%g, %ids, %[[T]])
// CHECK-NEXT:    func.return %[[T]]
// CHECK-LABEL: func.func @rows_bf16(
// CHECK-NEXT:    %[[OUT:.*]] = tile.buffer : memref<800xbf16>
// CHECK-NEXT:    %[[SUMS:.*]] = tile.buffer {tile.workspace} : memref<800xf32>
// CHECK-NEXT:    tile.launch @rows_bf16_embedding_grad_zero_0(%[[SUMS]])
// CHECK-NEXT:    tile.launch @rows_bf16_embedding_grad_1(%g, %ids, %[[SUMS]])
// CHECK-NEXT:    tile.launch @rows_bf16_embedding_grad_round_2(%[[SUMS]], %[[OUT]])
// CHECK-NEXT:    func.return %[[OUT]]
// CHECK-LABEL: tile.kernel @rows_embedding_grad_zero_0(
// CHECK:         tile.store_view_tko
// CHECK-LABEL: tile.kernel @rows_embedding_grad_1(
// CHECK-SAME:    grid = array<i64: 1, 1>
// CHECK:         tile.check {{.*}} {message = "{{.*}}'graph.embedding_grad': an id is outside [0, 50)"}
// CHECK:         tile.scatter_add_tko {{.*}} : !tile.tile<16x16xf32>, !tile.tensor_view<50x16xf32, strides [16, 1], offset 0>, !tile.tile<16x1xi64>
// CHECK-NOT:     tile.mma
// CHECK-LABEL: tile.kernel @rows_padded_embedding_grad_1(
// CHECK:         tile.check
// CHECK:         tile.broadcast {{.*}} : !tile.tile<8x1xi64> -> !tile.tile<8x16xi64>
// CHECK:         arith.constant 4 : i64
// CHECK:         arith.cmpi eq
// CHECK:         arith.select
// CHECK:         tile.scatter_add_tko
// CHECK-LABEL: tile.kernel @rows_bf16_embedding_grad_1(
// CHECK-SAME:    grid = array<i64: 3, 1>
// CHECK:         arith.extsi
// CHECK:         arith.extf
// CHECK:         tile.scatter_add_tko {{.*}} : !tile.tile<16x16xf32>, !tile.tensor_view<50x16xf32, strides [16, 1], offset 0>, !tile.tile<16x1xi64>
// CHECK-LABEL: tile.kernel @rows_bf16_embedding_grad_round_2(
// CHECK:         arith.truncf
// CHECK-NOT:     tile.mma

// tile.scatter_add_tko parses from its custom form, prints in it and re-parses; the generic
// form shows its ordering, relaxed (the only one it takes), at device scope unless asked.
// Each instance adds a tile of 8 rows of g into the rows of a [100 x 16] table its ids
// pick, one column tile (of 2) wide: an embedding's gradient.
// RUN: strata-opt %s | strata-opt | filecheck %s
// RUN: strata-opt %s --print-op-generic | strata-opt --print-op-generic | filecheck %s --check-prefix=GENERIC

tile.kernel @rows_added(%g: memref<896xf32>, %ids: memref<56xi64>, %table: memref<1600xf32>) attributes {grid = array<i64: 7, 2>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %c0 = arith.constant 0 : index
  %vg = tile.make_tensor_view %g : memref<896xf32> -> !tile.tensor_view<56x16xf32, strides [16, 1], offset 0>
  %vi = tile.make_tensor_view %ids : memref<56xi64> -> !tile.tensor_view<56x1xi64, strides [1, 0], offset 0>
  %vt = tile.make_tensor_view %table : memref<1600xf32> -> !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>
  %pg = tile.make_partition_view %vg : !tile.tensor_view<56x16xf32, strides [16, 1], offset 0> -> !tile.partition_view<8x8, !tile.tensor_view<56x16xf32, strides [16, 1], offset 0>>
  %pi = tile.make_partition_view %vi : !tile.tensor_view<56x1xi64, strides [1, 0], offset 0> -> !tile.partition_view<8x1, !tile.tensor_view<56x1xi64, strides [1, 0], offset 0>>
  %t0 = token.make : !token.token
  %rows, %t1 = tile.load_view_tko %pg[%i, %j] token %t0 : !tile.partition_view<8x8, !tile.tensor_view<56x16xf32, strides [16, 1], offset 0>> -> !tile.tile<8x8xf32>
  %picked, %t2 = tile.load_view_tko %pi[%i, %c0] token %t0 : !tile.partition_view<8x1, !tile.tensor_view<56x1xi64, strides [1, 0], offset 0>> -> !tile.tile<8x1xi64>
  %t3 = tile.scatter_add_tko %rows, %vt[%picked], %j token %t1 : !tile.tile<8x8xf32>, !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>, !tile.tile<8x1xi64>
  %t4 = tile.scatter_add_tko %rows, %vt[%picked], %j token %t3 {memory_scope = "block"} : !tile.tile<8x8xf32>, !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>, !tile.tile<8x1xi64>
  tile.return
}

// CHECK:      %t3 = tile.scatter_add_tko %rows, %vt[%picked], %j token %t1 : !tile.tile<8x8xf32>, !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>, !tile.tile<8x1xi64>
// CHECK-NEXT: %t4 = tile.scatter_add_tko %rows, %vt[%picked], %j token %t3 {memory_scope = "block"} : !tile.tile<8x8xf32>, !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>, !tile.tile<8x1xi64>

// GENERIC:      %t3 = "tile.scatter_add_tko"(%rows, %vt, %picked, %j, %t1) <{memory_ordering = "relaxed", memory_scope = "device"}> : (!tile.tile<8x8xf32>, !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>, !tile.tile<8x1xi64>, index, !token.token) -> !token.token
// GENERIC-NEXT: %t4 = "tile.scatter_add_tko"(%rows, %vt, %picked, %j, %t3) <{memory_scope = "block", memory_ordering = "relaxed"}>

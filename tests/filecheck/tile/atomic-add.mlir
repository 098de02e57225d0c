// tile.atomic_add_view_tko parses from its custom form, prints in it and re-parses; the
// generic form shows its ordering, relaxed (the only one it takes), at device scope unless
// asked.
// Each of the 64 instances adds its row of a [64 x 33] matrix into one row: column sums.
// RUN: strata-opt %s | strata-opt | filecheck %s
// RUN: strata-opt %s --print-op-generic | strata-opt --print-op-generic | filecheck %s --check-prefix=GENERIC

tile.kernel @column_sums(%a: memref<2112xf32>, %c: memref<33xf32>) attributes {grid = array<i64: 64>} {
  %i = tile.program_id 0 : index
  %c0 = arith.constant 0 : index
  %va = tile.make_tensor_view %a : memref<2112xf32> -> !tile.tensor_view<64x33xf32, strides [33, 1], offset 0>
  %vc = tile.make_tensor_view %c : memref<33xf32> -> !tile.tensor_view<1x33xf32, strides [33, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<64x33xf32, strides [33, 1], offset 0> -> !tile.partition_view<1x64, !tile.tensor_view<64x33xf32, strides [33, 1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<1x33xf32, strides [33, 1], offset 0> -> !tile.partition_view<1x64, !tile.tensor_view<1x33xf32, strides [33, 1], offset 0>>
  %t0 = token.make : !token.token
  %row, %t1 = tile.load_view_tko %pa[%i, %c0] token %t0 : !tile.partition_view<1x64, !tile.tensor_view<64x33xf32, strides [33, 1], offset 0>> -> !tile.tile<1x64xf32>
  %t2 = tile.atomic_add_view_tko %row, %pc[%c0, %c0] token %t1 : !tile.tile<1x64xf32>, !tile.partition_view<1x64, !tile.tensor_view<1x33xf32, strides [33, 1], offset 0>>
  %t3 = tile.atomic_add_view_tko %row, %pc[%c0, %c0] token %t2 {memory_scope = "block"} : !tile.tile<1x64xf32>, !tile.partition_view<1x64, !tile.tensor_view<1x33xf32, strides [33, 1], offset 0>>
  tile.return
}

// CHECK:      %t2 = tile.atomic_add_view_tko %row, %pc[%c0, %c0] token %t1 : !tile.tile<1x64xf32>, !tile.partition_view<1x64, !tile.tensor_view<1x33xf32, strides [33, 1], offset 0>>
// CHECK-NEXT: %t3 = tile.atomic_add_view_tko %row, %pc[%c0, %c0] token %t2 {memory_scope = "block"} : !tile.tile<1x64xf32>, !tile.partition_view<1x64, !tile.tensor_view<1x33xf32, strides [33, 1], offset 0>>

// GENERIC:      %t2 = "tile.atomic_add_view_tko"(%row, %pc, %c0, %c0, %t1) <{memory_ordering = "relaxed", memory_scope = "device"}> : (!tile.tile<1x64xf32>, !tile.partition_view<1x64, !tile.tensor_view<1x33xf32, strides [33, 1], offset 0>>, index, index, !token.token) -> !token.token
// GENERIC-NEXT: %t3 = "tile.atomic_add_view_tko"(%row, %pc, %c0, %c0, %t2) <{memory_scope = "block", memory_ordering = "relaxed"}>

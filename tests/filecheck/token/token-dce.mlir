// RUN: strata-opt %s -p token-dce --split-input-file | filecheck %s

// Unused makes and joins go; a join of one token forwards it; nested joins flatten and
// repeated operands are dropped; memory ops and the tokens they consume stay.
// CHECK-LABEL: tile.kernel @k
// CHECK-NEXT:    %[[I:.*]] = tile.program_id 0 : index
// CHECK-NEXT:    %[[T0:.*]] = token.make : !token.token
// CHECK-NEXT:    %[[T1:.*]] = token.make : !token.token
// CHECK-NOT:     token.make
// CHECK-NEXT:    %[[V:.*]] = tile.make_tensor_view
// CHECK-NEXT:    %[[P:.*]] = tile.make_partition_view
// CHECK-NEXT:    %{{.*}}, %[[T2:.*]] = tile.load_view_tko %[[P]][%[[I]]] token %[[T0]]
// CHECK-NEXT:    %[[J:.*]] = token.join %[[T2]], %[[T1]], %[[T0]] : !token.token
// CHECK-NEXT:    %{{.*}} = tile.store_view_tko %{{.*}}, %[[P]][%[[I]]] token %[[J]]
// CHECK-NEXT:    tile.return
tile.kernel @k(%a: memref<8xf32>) attributes {grid = array<i64: 1>} {
  %i = tile.program_id 0 : index
  %t0 = token.make : !token.token
  %t1 = token.make : !token.token
  %unused = token.make : !token.token
  %single = token.join %t0 : !token.token
  %v = tile.make_tensor_view %a : memref<8xf32> -> !tile.tensor_view<8xf32, strides [1], offset 0>
  %p = tile.make_partition_view %v : !tile.tensor_view<8xf32, strides [1], offset 0> -> !tile.partition_view<8, !tile.tensor_view<8xf32, strides [1], offset 0>>
  %x, %t2 = tile.load_view_tko %p[%i] token %single : !tile.partition_view<8, !tile.tensor_view<8xf32, strides [1], offset 0>> -> !tile.tile<8xf32>
  %inner = token.join %t1, %t0 : !token.token
  %outer = token.join %t2, %inner, %t2 : !token.token
  %dead = token.join %t0, %t1 : !token.token
  %t3 = tile.store_view_tko %x, %p[%i] token %outer : !tile.tile<8xf32>, !tile.partition_view<8, !tile.tensor_view<8xf32, strides [1], offset 0>>
  tile.return
}

// -----

// Idempotent: already-minimal IR is unchanged.
// CHECK-LABEL: tile.kernel @minimal
// CHECK-NEXT:    %{{.*}} = tile.program_id 0 : index
// CHECK-NEXT:    %[[T:.*]] = token.make
// CHECK:         tile.load_view_tko {{.*}} token %[[T]]
// CHECK-NEXT:    tile.return
tile.kernel @minimal(%a: memref<8xf32>) attributes {grid = array<i64: 1>} {
  %i = tile.program_id 0 : index
  %t0 = token.make : !token.token
  %v = tile.make_tensor_view %a : memref<8xf32> -> !tile.tensor_view<8xf32, strides [1], offset 0>
  %p = tile.make_partition_view %v : !tile.tensor_view<8xf32, strides [1], offset 0> -> !tile.partition_view<8, !tile.tensor_view<8xf32, strides [1], offset 0>>
  %x, %t1 = tile.load_view_tko %p[%i] token %t0 : !tile.partition_view<8, !tile.tensor_view<8xf32, strides [1], offset 0>> -> !tile.tile<8xf32>
  tile.return
}

// tile.atomic_add_view_tko through both backends: lower-tile-to-loops adds each element of
// the valid extent (33 of the tile's 64) with memref.atomic_rmw (kind 0, addf), which
// becomes a monotonic `atomicrmw fadd` on the CPU (instances run on several cores) and
// never a plain store; lower-tile-to-gpu gives each element to a thread of the block, inside
// the extent (scf.if), and the NVVM translation writes `atom.global.add` (libNVVM's IR has
// no atomicrmw fadd), f32 or f64.
// RUN: strata-opt %s -p lower-tile-to-loops | filecheck %s --check-prefix=LOOPS
// RUN: strata-translate %s --emit=llvm-ir | filecheck %s --check-prefix=LLVM
// RUN: strata-opt %s -p lower-tile-to-gpu | filecheck %s --check-prefix=GPU
// RUN: strata-translate %s --emit=ptx | filecheck %s --check-prefix=PTX

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
  tile.return
}

tile.kernel @column_sums_f64(%a: memref<2112xf64>, %c: memref<33xf64>) attributes {grid = array<i64: 64>} {
  %i = tile.program_id 0 : index
  %c0 = arith.constant 0 : index
  %va = tile.make_tensor_view %a : memref<2112xf64> -> !tile.tensor_view<64x33xf64, strides [33, 1], offset 0>
  %vc = tile.make_tensor_view %c : memref<33xf64> -> !tile.tensor_view<1x33xf64, strides [33, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<64x33xf64, strides [33, 1], offset 0> -> !tile.partition_view<1x64, !tile.tensor_view<64x33xf64, strides [33, 1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<1x33xf64, strides [33, 1], offset 0> -> !tile.partition_view<1x64, !tile.tensor_view<1x33xf64, strides [33, 1], offset 0>>
  %t0 = token.make : !token.token
  %row, %t1 = tile.load_view_tko %pa[%i, %c0] token %t0 : !tile.partition_view<1x64, !tile.tensor_view<64x33xf64, strides [33, 1], offset 0>> -> !tile.tile<1x64xf64>
  %t2 = tile.atomic_add_view_tko %row, %pc[%c0, %c0] token %t1 : !tile.tile<1x64xf64>, !tile.partition_view<1x64, !tile.tensor_view<1x33xf64, strides [33, 1], offset 0>>
  tile.return
}

// LOOPS-LABEL: func.func @column_sums(
// LOOPS:       scf.for
// LOOPS:       %[[ROW:.*]] = memref.load %a[
// LOOPS:       "memref.atomic_rmw"(%[[ROW]], %c, %{{.*}}) <{kind = 0 : i64}> : (f32, memref<33xf32>, index) -> f32
// LOOPS-NOT:   memref.store
// LOOPS-LABEL: func.func @column_sums_f64(
// LOOPS:       "memref.atomic_rmw"(%{{.*}}, %c, %{{.*}}) <{kind = 0 : i64}> : (f64, memref<33xf64>, index) -> f64

// LLVM-LABEL: define {{.*}} @column_sums(
// LLVM:       atomicrmw fadd ptr %{{.*}}, float %{{.*}} monotonic
// LLVM-NOT:   store float
// LLVM-LABEL: define {{.*}} @column_sums_f64(
// LLVM:       atomicrmw fadd ptr %{{.*}}, double %{{.*}} monotonic

// GPU-LABEL: func.func @column_sums(
// GPU-SAME:  gpu.kernel
// GPU:       scf.if
// GPU:       "memref.atomic_rmw"({{.*}}) <{kind = 0 : i64}> : (f32, memref<33xf32>, index) -> f32

// PTX-LABEL: .entry column_sums(
// PTX:       atom.global.add.f32
// PTX-NOT:   st.global
// PTX-LABEL: .entry column_sums_f64(
// PTX:       atom.global.add.f64

// tile.scatter_add_tko through both backends: lower-tile-to-loops adds each element of the
// valid extent (the tile's rows; 33 of its 64 columns inside the 33-column table) with
// memref.atomic_rmw (kind 0, addf) at the row its id picks, clamped into [0, 100) (maxsi,
// minsi), which becomes a monotonic `atomicrmw fadd` on the CPU and never a plain store;
// lower-tile-to-gpu gives each element to a thread of the block, inside the extent
// (scf.if), and the NVVM translation writes `atom.global.add` (libNVVM's IR has no
// atomicrmw fadd), f32 or f64.
// RUN: strata-opt %s -p lower-tile-to-loops | filecheck %s --check-prefix=LOOPS
// RUN: strata-translate %s --emit=llvm-ir | filecheck %s --check-prefix=LLVM
// RUN: strata-opt %s -p lower-tile-to-gpu | filecheck %s --check-prefix=GPU
// RUN: strata-translate %s --emit=ptx | filecheck %s --check-prefix=PTX

tile.kernel @rows_added(%g: memref<231xf32>, %ids: memref<7xi64>, %table: memref<3300xf32>) attributes {grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %vg = tile.make_tensor_view %g : memref<231xf32> -> !tile.tensor_view<7x33xf32, strides [33, 1], offset 0>
  %vi = tile.make_tensor_view %ids : memref<7xi64> -> !tile.tensor_view<7x1xi64, strides [1, 0], offset 0>
  %vt = tile.make_tensor_view %table : memref<3300xf32> -> !tile.tensor_view<100x33xf32, strides [33, 1], offset 0>
  %pg = tile.make_partition_view %vg : !tile.tensor_view<7x33xf32, strides [33, 1], offset 0> -> !tile.partition_view<8x64, !tile.tensor_view<7x33xf32, strides [33, 1], offset 0>>
  %pi = tile.make_partition_view %vi : !tile.tensor_view<7x1xi64, strides [1, 0], offset 0> -> !tile.partition_view<8x1, !tile.tensor_view<7x1xi64, strides [1, 0], offset 0>>
  %t0 = token.make : !token.token
  %rows, %t1 = tile.load_view_tko %pg[%c0, %c0] token %t0 : !tile.partition_view<8x64, !tile.tensor_view<7x33xf32, strides [33, 1], offset 0>> -> !tile.tile<8x64xf32>
  %picked, %t2 = tile.load_view_tko %pi[%c0, %c0] token %t0 : !tile.partition_view<8x1, !tile.tensor_view<7x1xi64, strides [1, 0], offset 0>> -> !tile.tile<8x1xi64>
  %t3 = tile.scatter_add_tko %rows, %vt[%picked], %c0 token %t1 : !tile.tile<8x64xf32>, !tile.tensor_view<100x33xf32, strides [33, 1], offset 0>, !tile.tile<8x1xi64>
  tile.return
}

tile.kernel @rows_added_f64(%g: memref<231xf64>, %ids: memref<7xi64>, %table: memref<3300xf64>) attributes {grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %vg = tile.make_tensor_view %g : memref<231xf64> -> !tile.tensor_view<7x33xf64, strides [33, 1], offset 0>
  %vi = tile.make_tensor_view %ids : memref<7xi64> -> !tile.tensor_view<7x1xi64, strides [1, 0], offset 0>
  %vt = tile.make_tensor_view %table : memref<3300xf64> -> !tile.tensor_view<100x33xf64, strides [33, 1], offset 0>
  %pg = tile.make_partition_view %vg : !tile.tensor_view<7x33xf64, strides [33, 1], offset 0> -> !tile.partition_view<8x64, !tile.tensor_view<7x33xf64, strides [33, 1], offset 0>>
  %pi = tile.make_partition_view %vi : !tile.tensor_view<7x1xi64, strides [1, 0], offset 0> -> !tile.partition_view<8x1, !tile.tensor_view<7x1xi64, strides [1, 0], offset 0>>
  %t0 = token.make : !token.token
  %rows, %t1 = tile.load_view_tko %pg[%c0, %c0] token %t0 : !tile.partition_view<8x64, !tile.tensor_view<7x33xf64, strides [33, 1], offset 0>> -> !tile.tile<8x64xf64>
  %picked, %t2 = tile.load_view_tko %pi[%c0, %c0] token %t0 : !tile.partition_view<8x1, !tile.tensor_view<7x1xi64, strides [1, 0], offset 0>> -> !tile.tile<8x1xi64>
  %t3 = tile.scatter_add_tko %rows, %vt[%picked], %c0 token %t1 : !tile.tile<8x64xf64>, !tile.tensor_view<100x33xf64, strides [33, 1], offset 0>, !tile.tile<8x1xi64>
  tile.return
}

// LOOPS-LABEL: func.func @rows_added(
// LOOPS:       scf.for
// LOOPS:       %[[ID:.*]] = memref.load %ids[
// LOOPS:       arith.maxsi %[[ID]],
// LOOPS:       arith.minsi
// LOOPS:       "memref.atomic_rmw"(%{{.*}}, %table, %{{.*}}) <{kind = 0 : i64}> : (f32, memref<3300xf32>, index) -> f32
// LOOPS-NOT:   memref.store
// LOOPS-LABEL: func.func @rows_added_f64(
// LOOPS:       "memref.atomic_rmw"(%{{.*}}, %table, %{{.*}}) <{kind = 0 : i64}> : (f64, memref<3300xf64>, index) -> f64

// LLVM-LABEL: define {{.*}} @rows_added(
// LLVM:       atomicrmw fadd ptr %{{.*}}, float %{{.*}} monotonic
// LLVM-NOT:   store float
// LLVM-LABEL: define {{.*}} @rows_added_f64(
// LLVM:       atomicrmw fadd ptr %{{.*}}, double %{{.*}} monotonic

// GPU-LABEL: func.func @rows_added(
// GPU-SAME:  gpu.kernel
// GPU:       scf.if
// GPU:       "memref.atomic_rmw"({{.*}}) <{kind = 0 : i64}> : (f32, memref<3300xf32>, index) -> f32

// PTX-LABEL: .entry rows_added(
// PTX:       atom.global.add.f32
// PTX-NOT:   st.global
// PTX-LABEL: .entry rows_added_f64(
// PTX:       atom.global.add.f64

// tile.mma's register-blocked micro-kernel (lower-tile-to-loops): an f32 tile whose
// columns are whole 512-bit vectors. b is packed into a stack buffer [column vectors, k,
// 16]; each 8-row x 2-vector block of the accumulator is loaded into 16 vectors, carried
// through the k loop (2 vector loads of packed b, 8 broadcasts of a, 16 FMAs per step,
// nothing stored inside the loop), and stored once after it. The LLVM translation keeps
// the vectors 512 bits wide ("min-legal-vector-width") and each FMA one llvm.fma.
// RUN: strata-opt %s -p lower-tile-to-loops --split-input-file | filecheck %s
// RUN: strata-translate %s --emit=llvm-ir | filecheck %s --check-prefix=LLVM

tile.kernel @micro(%a: memref<512xf32>, %b: memref<1024xf32>, %c: memref<512xf32>) attributes {grid = array<i64: 1, 1>} {
  %m = tile.program_id 0 : index
  %n = tile.program_id 1 : index
  %va = tile.make_tensor_view %a : memref<512xf32> -> !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>
  %vb = tile.make_tensor_view %b : memref<1024xf32> -> !tile.tensor_view<32x32xf32, strides [32, 1], offset 0>
  %vc = tile.make_tensor_view %c : memref<512xf32> -> !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<16x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>>
  %pb = tile.make_partition_view %vb : !tile.tensor_view<32x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<32x32, !tile.tensor_view<32x32xf32, strides [32, 1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<16x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>>
  %zero = tile.map : () -> !tile.tile<16x32xf32> {
    %z = arith.constant 0.000000e+00 : f32
    tile.yield %z : f32
  }
  %t0 = token.make : !token.token
  %c0 = arith.constant 0 : index
  %ta, %t1 = tile.load_view_tko %pa[%m, %c0] token %t0 : !tile.partition_view<16x32, !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>> -> !tile.tile<16x32xf32>
  %tb, %t2 = tile.load_view_tko %pb[%c0, %n] token %t0 : !tile.partition_view<32x32, !tile.tensor_view<32x32xf32, strides [32, 1], offset 0>> -> !tile.tile<32x32xf32>
  %acc = tile.mma %ta, %tb, %zero : !tile.tile<16x32xf32>, !tile.tile<32x32xf32>, !tile.tile<16x32xf32>
  %t3 = tile.store_view_tko %acc, %pc[%m, %n] token %t0 : !tile.tile<16x32xf32>, !tile.partition_view<16x32, !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>>
  tile.return
}

// CHECK-LABEL: func.func @micro(
// CHECK-NEXT:    [[PACKED:%[0-9a-z_]+]] = memref.alloca() {alignment = 64 : i64} : memref<2x32x16xf32>
// CHECK-NEXT:    [[ACC:%[0-9a-z_]+]] = memref.alloca() {alignment = 64 : i64} : memref<16x32xf32>
// The pack: b read row by row into the vector columns.
// CHECK:               memref.load %b
// CHECK-NEXT:          memref.store {{%[0-9a-z_]+}}, [[PACKED]]
// CHECK-COUNT-16:    vector.load [[ACC]]
// CHECK:             scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-2:       vector.load [[PACKED]]
// CHECK-NOT:           memref.store
// CHECK-NOT:           vector.store
// CHECK:               memref.load %a
// CHECK-NEXT:          vector.broadcast {{%[0-9a-z_]+}} : f32 to vector<16xf32>
// CHECK-NEXT:          vector.fma
// CHECK-NEXT:          vector.fma
// CHECK-NOT:           memref.store
// CHECK-NOT:           vector.store
// CHECK:               scf.yield {{.*}} : vector<16xf32>
// CHECK-COUNT-16:    vector.store {{%[0-9a-z_]+}}, [[ACC]]
// CHECK:         func.return

// LLVM:      define {{.*}}@micro({{.*}}) {{.*}}#[[ATTRIBUTES:[0-9]+]] {
// LLVM:        call <16 x float> @llvm.fma.v16f32(
// LLVM:      attributes #[[ATTRIBUTES]] = {{.*}}"min-legal-vector-width"="512"

// -----

// The same matmul on a tile the matrix does not fill (c[20x32] in 16-row tiles): the
// second tile has 4 valid rows, known only at run time. A whole tile takes the
// micro-kernel, a partial one the scalar loops: one scf.if on the valid extent.
tile.kernel @edge(%a: memref<640xf32>, %b: memref<1024xf32>, %c: memref<640xf32>) attributes {grid = array<i64: 2, 1>} {
  %m = tile.program_id 0 : index
  %n = tile.program_id 1 : index
  %va = tile.make_tensor_view %a : memref<640xf32> -> !tile.tensor_view<20x32xf32, strides [32, 1], offset 0>
  %vb = tile.make_tensor_view %b : memref<1024xf32> -> !tile.tensor_view<32x32xf32, strides [32, 1], offset 0>
  %vc = tile.make_tensor_view %c : memref<640xf32> -> !tile.tensor_view<20x32xf32, strides [32, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<20x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<20x32xf32, strides [32, 1], offset 0>>
  %pb = tile.make_partition_view %vb : !tile.tensor_view<32x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<32x32, !tile.tensor_view<32x32xf32, strides [32, 1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<20x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<20x32xf32, strides [32, 1], offset 0>>
  %zero = tile.map : () -> !tile.tile<16x32xf32> {
    %z = arith.constant 0.000000e+00 : f32
    tile.yield %z : f32
  }
  %t0 = token.make : !token.token
  %c0 = arith.constant 0 : index
  %ta, %t1 = tile.load_view_tko %pa[%m, %c0] token %t0 : !tile.partition_view<16x32, !tile.tensor_view<20x32xf32, strides [32, 1], offset 0>> -> !tile.tile<16x32xf32>
  %tb, %t2 = tile.load_view_tko %pb[%c0, %n] token %t0 : !tile.partition_view<32x32, !tile.tensor_view<32x32xf32, strides [32, 1], offset 0>> -> !tile.tile<32x32xf32>
  %acc = tile.mma %ta, %tb, %zero : !tile.tile<16x32xf32>, !tile.tile<32x32xf32>, !tile.tile<16x32xf32>
  %t3 = tile.store_view_tko %acc, %pc[%m, %n] token %t0 : !tile.tile<16x32xf32>, !tile.partition_view<16x32, !tile.tensor_view<20x32xf32, strides [32, 1], offset 0>>
  tile.return
}

// CHECK-LABEL: func.func @edge(
// CHECK:           [[ROWS:%[0-9a-z_]+]] = arith.minsi
// CHECK:           [[SIXTEEN:%[0-9a-z_]+]] = arith.constant 16 : index
// CHECK-NEXT:      [[WHOLE:%[0-9a-z_]+]] = arith.cmpi eq, [[ROWS]], [[SIXTEEN]] : index
// CHECK-NEXT:      scf.if [[WHOLE]] {
// CHECK:             vector.fma
// CHECK:           } else {
// CHECK-NOT:         vector.
// CHECK:             arith.mulf {{.*}} fastmath<contract> : f32
// CHECK:           }

// -----

// b transposed (b = wᵀ, as in x @ wᵀ: its view has stride 1 along k): the pack reads
// 16 vectors along k (rows of w), transposes them in registers in 4 rounds of 16
// shuffles, and stores 16 packed runs; no element-by-element loads of b.
tile.kernel @transposed(%a: memref<512xf32>, %w: memref<512xf32>, %c: memref<256xf32>) attributes {grid = array<i64: 1, 1>} {
  %m = tile.program_id 0 : index
  %n = tile.program_id 1 : index
  %va = tile.make_tensor_view %a : memref<512xf32> -> !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>
  %vb = tile.make_tensor_view %w : memref<512xf32> -> !tile.tensor_view<32x16xf32, strides [1, 32], offset 0>
  %vc = tile.make_tensor_view %c : memref<256xf32> -> !tile.tensor_view<16x16xf32, strides [16, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<16x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>>
  %pb = tile.make_partition_view %vb : !tile.tensor_view<32x16xf32, strides [1, 32], offset 0> -> !tile.partition_view<32x16, !tile.tensor_view<32x16xf32, strides [1, 32], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<16x16xf32, strides [16, 1], offset 0> -> !tile.partition_view<16x16, !tile.tensor_view<16x16xf32, strides [16, 1], offset 0>>
  %zero = tile.map : () -> !tile.tile<16x16xf32> {
    %z = arith.constant 0.000000e+00 : f32
    tile.yield %z : f32
  }
  %t0 = token.make : !token.token
  %c0 = arith.constant 0 : index
  %ta, %t1 = tile.load_view_tko %pa[%m, %c0] token %t0 : !tile.partition_view<16x32, !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>> -> !tile.tile<16x32xf32>
  %tb, %t2 = tile.load_view_tko %pb[%c0, %n] token %t0 : !tile.partition_view<32x16, !tile.tensor_view<32x16xf32, strides [1, 32], offset 0>> -> !tile.tile<32x16xf32>
  %acc = tile.mma %ta, %tb, %zero : !tile.tile<16x32xf32>, !tile.tile<32x16xf32>, !tile.tile<16x16xf32>
  %t3 = tile.store_view_tko %acc, %pc[%m, %n] token %t0 : !tile.tile<16x16xf32>, !tile.partition_view<16x16, !tile.tensor_view<16x16xf32, strides [16, 1], offset 0>>
  tile.return
}

// CHECK-LABEL: func.func @transposed(
// CHECK-NEXT:    [[PACKED:%[0-9a-z_]+]] = memref.alloca() {alignment = 64 : i64} : memref<1x32x16xf32>
// CHECK-NOT:     memref.load %w
// CHECK-COUNT-16:  vector.load %w{{\[}}{{%[0-9a-z_]+}}{{\]}} : memref<512xf32>, vector<16xf32>
// CHECK-COUNT-64:  vector.shuffle
// CHECK-COUNT-16:  vector.store {{%[0-9a-z_]+}}, [[PACKED]]
// CHECK-NOT:     memref.load %w
// CHECK:         vector.fma

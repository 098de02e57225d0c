// Every tile op and type, and the token ops, parse from the custom form, print in it and
// re-parse; the generic form round-trips too (memory_ordering / memory_scope defaults are
// materialized there). The kernels are the ones a lowering produces: a broadcasting add,
// a matmul with an scf.for K loop, and row reductions; @main binds buffers and launches them.
// RUN: strata-opt %s | strata-opt | filecheck %s
// RUN: strata-opt %s --print-op-generic | strata-opt --print-op-generic | filecheck %s --check-prefix=GENERIC

// A broadcasting add: c[7x5] = a[7x5] + b[5] (b seen with a stride-0 row axis), cut
// into 4x8 tiles: a 2x1 grid whose edge tiles are partial.
tile.kernel @add(%a: memref<35xf32>, %b: memref<5xf32>, %c: memref<35xf32>) attributes {grid = array<i64: 2, 1>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %va = tile.make_tensor_view %a : memref<35xf32> -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
  %vb = tile.make_tensor_view %b : memref<5xf32> -> !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>
  %vc = tile.make_tensor_view %c : memref<35xf32> -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<7x5xf32, strides [5, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
  %pb = tile.make_partition_view %vb : !tile.tensor_view<7x5xf32, strides [0, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<7x5xf32, strides [5, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %pa[%i, %j] token %t0 : !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>> -> !tile.tile<4x8xf32>
  %y, %t2 = tile.load_view_tko %pb[%i, %j] token %t0 {memory_ordering = "relaxed", memory_scope = "block"} : !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>> -> !tile.tile<4x8xf32>
  %s = tile.map %x, %y : (!tile.tile<4x8xf32>, !tile.tile<4x8xf32>) -> !tile.tile<4x8xf32> {
  ^bb0(%e: f32, %f: f32):
    %r = arith.addf %e, %f : f32
    tile.yield %r : f32
  }
  %t3 = token.join %t1, %t2 : !token.token
  %t4 = tile.store_view_tko %s, %pc[%i, %j] token %t3 : !tile.tile<4x8xf32>, !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
  tile.return
}

// A matmul c[64x48] = a[64x32] @ b[32x48] on 16x16 output tiles: a 4x3 grid, each instance
// running a K loop of 4 steps that carries its accumulator tile and token in iter_args.
tile.kernel @matmul(%a: memref<2048xf32>, %b: memref<1536xf32>, %c: memref<3072xf32>) attributes {grid = array<i64: 4, 3>} {
  %m = tile.program_id 0 : index
  %n = tile.program_id 1 : index
  %va = tile.make_tensor_view %a : memref<2048xf32> -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
  %vb = tile.make_tensor_view %b : memref<1536xf32> -> !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>
  %vc = tile.make_tensor_view %c : memref<3072xf32> -> !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<64x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x8, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
  %pb = tile.make_partition_view %vb : !tile.tensor_view<32x48xf32, strides [48, 1], offset 0> -> !tile.partition_view<8x16, !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<64x48xf32, strides [48, 1], offset 0> -> !tile.partition_view<16x16, !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>>
  %zero = tile.map : () -> !tile.tile<16x16xf32> {
    %z = arith.constant 0.000000e+00 : f32
    tile.yield %z : f32
  }
  %t0 = token.make : !token.token
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %step = arith.constant 1 : index
  %acc, %tk = scf.for %k = %lb to %ub step %step iter_args(%c_acc = %zero, %t_in = %t0) -> (!tile.tile<16x16xf32>, !token.token) {
    %ta, %t1 = tile.load_view_tko %pa[%m, %k] token %t_in : !tile.partition_view<16x8, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>> -> !tile.tile<16x8xf32>
    %tb, %t2 = tile.load_view_tko %pb[%k, %n] token %t_in : !tile.partition_view<8x16, !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>> -> !tile.tile<8x16xf32>
    %next = tile.mma %ta, %tb, %c_acc : !tile.tile<16x8xf32>, !tile.tile<8x16xf32>, !tile.tile<16x16xf32>
    %t3 = token.join %t1, %t2 : !token.token
    scf.yield %next, %t3 : !tile.tile<16x16xf32>, !token.token
  }
  %t4 = tile.store_view_tko %acc, %pc[%m, %n] token %tk {memory_ordering = "release", memory_scope = "system"} : !tile.tile<16x16xf32>, !tile.partition_view<16x16, !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>>
  tile.return
}

// Row reductions over x[64x32] on 16x32 row-block tiles (a 4-instance grid): each row is
// min-max normalized (tile.reduce max / min, tile.broadcast back to the row block) and its
// sum is stored to a 64x1 view.
tile.kernel @row_normalize(%x: memref<2048xf32>, %y: memref<2048xf32>, %sums: memref<64xf32>) attributes {grid = array<i64: 4>} {
  %r = tile.program_id 0 : index
  %c0 = arith.constant 0 : index
  %vx = tile.make_tensor_view %x : memref<2048xf32> -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
  %vy = tile.make_tensor_view %y : memref<2048xf32> -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
  %vs = tile.make_tensor_view %sums : memref<64xf32> -> !tile.tensor_view<64x1xf32, strides [1, 1], offset 0>
  %px = tile.make_partition_view %vx : !tile.tensor_view<64x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
  %py = tile.make_partition_view %vy : !tile.tensor_view<64x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
  %ps = tile.make_partition_view %vs : !tile.tensor_view<64x1xf32, strides [1, 1], offset 0> -> !tile.partition_view<16x1, !tile.tensor_view<64x1xf32, strides [1, 1], offset 0>>
  %t0 = token.make : !token.token
  %xt, %t1 = tile.load_view_tko %px[%r, %c0] token %t0 {memory_ordering = "acquire"} : !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>> -> !tile.tile<16x32xf32>
  %hi = tile.reduce %xt {axes = array<i64: 1>, kind = "max"} : !tile.tile<16x32xf32> -> !tile.tile<16x1xf32>
  %lo = tile.reduce %xt {axes = array<i64: 1>, kind = "min"} : !tile.tile<16x32xf32> -> !tile.tile<16x1xf32>
  %range = tile.map %hi, %lo : (!tile.tile<16x1xf32>, !tile.tile<16x1xf32>) -> !tile.tile<16x1xf32> {
  ^bb0(%h: f32, %l: f32):
    %d = arith.subf %h, %l : f32
    tile.yield %d : f32
  }
  %lo_b = tile.broadcast %lo : !tile.tile<16x1xf32> -> !tile.tile<16x32xf32>
  %range_b = tile.broadcast %range : !tile.tile<16x1xf32> -> !tile.tile<16x32xf32>
  %yt = tile.map %xt, %lo_b, %range_b : (!tile.tile<16x32xf32>, !tile.tile<16x32xf32>, !tile.tile<16x32xf32>) -> !tile.tile<16x32xf32> {
  ^bb0(%v: f32, %m: f32, %w: f32):
    %shifted = arith.subf %v, %m : f32
    %scaled = arith.divf %shifted, %w : f32
    tile.yield %scaled : f32
  }
  %sum = tile.reduce %xt {axes = array<i64: 1>, kind = "sum"} : !tile.tile<16x32xf32> -> !tile.tile<16x1xf32>
  %t2 = tile.store_view_tko %yt, %py[%r, %c0] token %t1 : !tile.tile<16x32xf32>, !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
  %t3 = tile.store_view_tko %sum, %ps[%r, %c0] token %t1 {memory_scope = "block"} : !tile.tile<16x1xf32>, !tile.partition_view<16x1, !tile.tensor_view<64x1xf32, strides [1, 1], offset 0>>
  tile.return
}

// The program: buffers (uninitialized and initialized) and the launches that run the
// kernels on them.
func.func @main() {
  %a = tile.buffer : memref<35xf32>
  %b = tile.buffer {init = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]> : tensor<5xf32>} : memref<5xf32>
  %c = tile.buffer : memref<35xf32>
  tile.launch @add(%a, %b, %c) : memref<35xf32>, memref<5xf32>, memref<35xf32>
  %ma = tile.buffer {init = dense<5.000000e-01> : tensor<2048xf32>} : memref<2048xf32>
  %mb = tile.buffer : memref<1536xf32>
  %mc = tile.buffer : memref<3072xf32>
  tile.launch @matmul(%ma, %mb, %mc) : memref<2048xf32>, memref<1536xf32>, memref<3072xf32>
  %y = tile.buffer : memref<2048xf32>
  %sums = tile.buffer : memref<64xf32>
  tile.launch @row_normalize(%ma, %y, %sums) : memref<2048xf32>, memref<2048xf32>, memref<64xf32>
  func.return
}

// Custom form: every op prints exactly as written (default properties elided).

// CHECK: builtin.module {
// CHECK-LABEL: tile.kernel @add(%a: memref<35xf32>, %b: memref<5xf32>, %c: memref<35xf32>) attributes {grid = array<i64: 2, 1>} {
// CHECK-NEXT: %i = tile.program_id 0 : index
// CHECK-NEXT: %j = tile.program_id 1 : index
// CHECK-NEXT: %va = tile.make_tensor_view %a : memref<35xf32> -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
// CHECK-NEXT: %vb = tile.make_tensor_view %b : memref<5xf32> -> !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>
// CHECK-NEXT: %vc = tile.make_tensor_view %c : memref<35xf32> -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
// CHECK-NEXT: %pa = tile.make_partition_view %va : !tile.tensor_view<7x5xf32, strides [5, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
// CHECK-NEXT: %pb = tile.make_partition_view %vb : !tile.tensor_view<7x5xf32, strides [0, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>>
// CHECK-NEXT: %pc = tile.make_partition_view %vc : !tile.tensor_view<7x5xf32, strides [5, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
// CHECK-NEXT: %t0 = token.make : !token.token
// CHECK-NEXT: %x, %t1 = tile.load_view_tko %pa[%i, %j] token %t0 : !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>> -> !tile.tile<4x8xf32>
// CHECK-NEXT: %y, %t2 = tile.load_view_tko %pb[%i, %j] token %t0 {memory_ordering = "relaxed", memory_scope = "block"} : !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>> -> !tile.tile<4x8xf32>
// CHECK-NEXT: %s = tile.map %x, %y : (!tile.tile<4x8xf32>, !tile.tile<4x8xf32>) -> !tile.tile<4x8xf32> {
// CHECK-NEXT: ^bb0(%e: f32, %f: f32):
// CHECK-NEXT: %r = arith.addf %e, %f : f32
// CHECK-NEXT: tile.yield %r : f32
// CHECK-NEXT: }
// CHECK-NEXT: %t3 = token.join %t1, %t2 : !token.token
// CHECK-NEXT: %t4 = tile.store_view_tko %s, %pc[%i, %j] token %t3 : !tile.tile<4x8xf32>, !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
// CHECK-NEXT: tile.return
// CHECK-NEXT: }
// CHECK-LABEL: tile.kernel @matmul(%a: memref<2048xf32>, %b: memref<1536xf32>, %c: memref<3072xf32>) attributes {grid = array<i64: 4, 3>} {
// CHECK-NEXT: %m = tile.program_id 0 : index
// CHECK-NEXT: %n = tile.program_id 1 : index
// CHECK-NEXT: %va = tile.make_tensor_view %a : memref<2048xf32> -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
// CHECK-NEXT: %vb = tile.make_tensor_view %b : memref<1536xf32> -> !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>
// CHECK-NEXT: %vc = tile.make_tensor_view %c : memref<3072xf32> -> !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>
// CHECK-NEXT: %pa = tile.make_partition_view %va : !tile.tensor_view<64x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x8, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
// CHECK-NEXT: %pb = tile.make_partition_view %vb : !tile.tensor_view<32x48xf32, strides [48, 1], offset 0> -> !tile.partition_view<8x16, !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>>
// CHECK-NEXT: %pc = tile.make_partition_view %vc : !tile.tensor_view<64x48xf32, strides [48, 1], offset 0> -> !tile.partition_view<16x16, !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>>
// CHECK-NEXT: %zero = tile.map : () -> !tile.tile<16x16xf32> {
// CHECK-NEXT: %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: tile.yield %z : f32
// CHECK-NEXT: }
// CHECK-NEXT: %t0 = token.make : !token.token
// CHECK-NEXT: %lb = arith.constant 0 : index
// CHECK-NEXT: %ub = arith.constant 4 : index
// CHECK-NEXT: %step = arith.constant 1 : index
// CHECK-NEXT: %acc, %tk = scf.for %k = %lb to %ub step %step iter_args(%c_acc = %zero, %t_in = %t0) -> (!tile.tile<16x16xf32>, !token.token) {
// CHECK-NEXT: %ta, %t1 = tile.load_view_tko %pa[%m, %k] token %t_in : !tile.partition_view<16x8, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>> -> !tile.tile<16x8xf32>
// CHECK-NEXT: %tb, %t2 = tile.load_view_tko %pb[%k, %n] token %t_in : !tile.partition_view<8x16, !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>> -> !tile.tile<8x16xf32>
// CHECK-NEXT: %next = tile.mma %ta, %tb, %c_acc : !tile.tile<16x8xf32>, !tile.tile<8x16xf32>, !tile.tile<16x16xf32>
// CHECK-NEXT: %t3 = token.join %t1, %t2 : !token.token
// CHECK-NEXT: scf.yield %next, %t3 : !tile.tile<16x16xf32>, !token.token
// CHECK-NEXT: }
// CHECK-NEXT: %t4 = tile.store_view_tko %acc, %pc[%m, %n] token %tk {memory_ordering = "release", memory_scope = "system"} : !tile.tile<16x16xf32>, !tile.partition_view<16x16, !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>>
// CHECK-NEXT: tile.return
// CHECK-NEXT: }
// CHECK-LABEL: tile.kernel @row_normalize(%x: memref<2048xf32>, %y: memref<2048xf32>, %sums: memref<64xf32>) attributes {grid = array<i64: 4>} {
// CHECK-NEXT: %r = tile.program_id 0 : index
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %vx = tile.make_tensor_view %x : memref<2048xf32> -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
// CHECK-NEXT: %vy = tile.make_tensor_view %y : memref<2048xf32> -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
// CHECK-NEXT: %vs = tile.make_tensor_view %sums : memref<64xf32> -> !tile.tensor_view<64x1xf32, strides [1, 1], offset 0>
// CHECK-NEXT: %px = tile.make_partition_view %vx : !tile.tensor_view<64x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
// CHECK-NEXT: %py = tile.make_partition_view %vy : !tile.tensor_view<64x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
// CHECK-NEXT: %ps = tile.make_partition_view %vs : !tile.tensor_view<64x1xf32, strides [1, 1], offset 0> -> !tile.partition_view<16x1, !tile.tensor_view<64x1xf32, strides [1, 1], offset 0>>
// CHECK-NEXT: %t0 = token.make : !token.token
// CHECK-NEXT: %xt, %t1 = tile.load_view_tko %px[%r, %c0] token %t0 {memory_ordering = "acquire"} : !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>> -> !tile.tile<16x32xf32>
// CHECK-NEXT: %hi = tile.reduce %xt {axes = array<i64: 1>, kind = "max"} : !tile.tile<16x32xf32> -> !tile.tile<16x1xf32>
// CHECK-NEXT: %lo = tile.reduce %xt {axes = array<i64: 1>, kind = "min"} : !tile.tile<16x32xf32> -> !tile.tile<16x1xf32>
// CHECK-NEXT: %range = tile.map %hi, %lo : (!tile.tile<16x1xf32>, !tile.tile<16x1xf32>) -> !tile.tile<16x1xf32> {
// CHECK-NEXT: ^bb0(%h: f32, %l: f32):
// CHECK-NEXT: %d = arith.subf %h, %l : f32
// CHECK-NEXT: tile.yield %d : f32
// CHECK-NEXT: }
// CHECK-NEXT: %lo_b = tile.broadcast %lo : !tile.tile<16x1xf32> -> !tile.tile<16x32xf32>
// CHECK-NEXT: %range_b = tile.broadcast %range : !tile.tile<16x1xf32> -> !tile.tile<16x32xf32>
// CHECK-NEXT: %yt = tile.map %xt, %lo_b, %range_b : (!tile.tile<16x32xf32>, !tile.tile<16x32xf32>, !tile.tile<16x32xf32>) -> !tile.tile<16x32xf32> {
// CHECK-NEXT: ^bb0(%v: f32, %m: f32, %w: f32):
// CHECK-NEXT: %shifted = arith.subf %v, %m : f32
// CHECK-NEXT: %scaled = arith.divf %shifted, %w : f32
// CHECK-NEXT: tile.yield %scaled : f32
// CHECK-NEXT: }
// CHECK-NEXT: %sum = tile.reduce %xt {axes = array<i64: 1>, kind = "sum"} : !tile.tile<16x32xf32> -> !tile.tile<16x1xf32>
// CHECK-NEXT: %t2 = tile.store_view_tko %yt, %py[%r, %c0] token %t1 : !tile.tile<16x32xf32>, !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
// CHECK-NEXT: %t3 = tile.store_view_tko %sum, %ps[%r, %c0] token %t1 {memory_scope = "block"} : !tile.tile<16x1xf32>, !tile.partition_view<16x1, !tile.tensor_view<64x1xf32, strides [1, 1], offset 0>>
// CHECK-NEXT: tile.return
// CHECK-NEXT: }
// CHECK-LABEL: func.func @main() {
// CHECK-NEXT: %a = tile.buffer : memref<35xf32>
// CHECK-NEXT: %b = tile.buffer {init = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]> : tensor<5xf32>} : memref<5xf32>
// CHECK-NEXT: %c = tile.buffer : memref<35xf32>
// CHECK-NEXT: tile.launch @add(%a, %b, %c) : memref<35xf32>, memref<5xf32>, memref<35xf32>
// CHECK-NEXT: %ma = tile.buffer {init = dense<5.000000e-01> : tensor<2048xf32>} : memref<2048xf32>
// CHECK-NEXT: %mb = tile.buffer : memref<1536xf32>
// CHECK-NEXT: %mc = tile.buffer : memref<3072xf32>
// CHECK-NEXT: tile.launch @matmul(%ma, %mb, %mc) : memref<2048xf32>, memref<1536xf32>, memref<3072xf32>
// CHECK-NEXT: %y = tile.buffer : memref<2048xf32>
// CHECK-NEXT: %sums = tile.buffer : memref<64xf32>
// CHECK-NEXT: tile.launch @row_normalize(%ma, %y, %sums) : memref<2048xf32>, memref<2048xf32>, memref<64xf32>
// CHECK-NEXT: func.return
// CHECK-NEXT: }
// CHECK-NEXT: }

// Generic form: properties in <{...}>, regions in ({...}), defaults materialized.

// GENERIC: "builtin.module"() ({
// GENERIC-LABEL: "tile.kernel"() <{sym_name = "add", function_type = (memref<35xf32>, memref<5xf32>, memref<35xf32>) -> (), grid = array<i64: 2, 1>}> ({
// GENERIC-NEXT: ^bb0(%a: memref<35xf32>, %b: memref<5xf32>, %c: memref<35xf32>):
// GENERIC-NEXT: %i = "tile.program_id"() <{dim = 0 : i64}> : () -> index
// GENERIC-NEXT: %j = "tile.program_id"() <{dim = 1 : i64}> : () -> index
// GENERIC-NEXT: %va = "tile.make_tensor_view"(%a) : (memref<35xf32>) -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
// GENERIC-NEXT: %vb = "tile.make_tensor_view"(%b) : (memref<5xf32>) -> !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>
// GENERIC-NEXT: %vc = "tile.make_tensor_view"(%c) : (memref<35xf32>) -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
// GENERIC-NEXT: %pa = "tile.make_partition_view"(%va) : (!tile.tensor_view<7x5xf32, strides [5, 1], offset 0>) -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
// GENERIC-NEXT: %pb = "tile.make_partition_view"(%vb) : (!tile.tensor_view<7x5xf32, strides [0, 1], offset 0>) -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>>
// GENERIC-NEXT: %pc = "tile.make_partition_view"(%vc) : (!tile.tensor_view<7x5xf32, strides [5, 1], offset 0>) -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
// GENERIC-NEXT: %t0 = "token.make"() : () -> !token.token
// GENERIC-NEXT: %x, %t1 = "tile.load_view_tko"(%pa, %i, %j, %t0) <{memory_ordering = "weak", memory_scope = "device"}> : (!tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>, index, index, !token.token) -> (!tile.tile<4x8xf32>, !token.token)
// GENERIC-NEXT: %y, %t2 = "tile.load_view_tko"(%pb, %i, %j, %t0) <{memory_ordering = "relaxed", memory_scope = "block"}> : (!tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>>, index, index, !token.token) -> (!tile.tile<4x8xf32>, !token.token)
// GENERIC-NEXT: %s = "tile.map"(%x, %y) ({
// GENERIC-NEXT: ^bb0(%e: f32, %f: f32):
// GENERIC-NEXT: %r = "arith.addf"(%e, %f) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// GENERIC-NEXT: "tile.yield"(%r) : (f32) -> ()
// GENERIC-NEXT: }) : (!tile.tile<4x8xf32>, !tile.tile<4x8xf32>) -> !tile.tile<4x8xf32>
// GENERIC-NEXT: %t3 = "token.join"(%t1, %t2) : (!token.token, !token.token) -> !token.token
// GENERIC-NEXT: %t4 = "tile.store_view_tko"(%s, %pc, %i, %j, %t3) <{memory_ordering = "weak", memory_scope = "device"}> : (!tile.tile<4x8xf32>, !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>, index, index, !token.token) -> !token.token
// GENERIC-NEXT: "tile.return"() : () -> ()
// GENERIC-NEXT: }) : () -> ()
// GENERIC-LABEL: "tile.kernel"() <{sym_name = "matmul", function_type = (memref<2048xf32>, memref<1536xf32>, memref<3072xf32>) -> (), grid = array<i64: 4, 3>}> ({
// GENERIC-NEXT: ^bb0(%a: memref<2048xf32>, %b: memref<1536xf32>, %c: memref<3072xf32>):
// GENERIC-NEXT: %m = "tile.program_id"() <{dim = 0 : i64}> : () -> index
// GENERIC-NEXT: %n = "tile.program_id"() <{dim = 1 : i64}> : () -> index
// GENERIC-NEXT: %va = "tile.make_tensor_view"(%a) : (memref<2048xf32>) -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
// GENERIC-NEXT: %vb = "tile.make_tensor_view"(%b) : (memref<1536xf32>) -> !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>
// GENERIC-NEXT: %vc = "tile.make_tensor_view"(%c) : (memref<3072xf32>) -> !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>
// GENERIC-NEXT: %pa = "tile.make_partition_view"(%va) : (!tile.tensor_view<64x32xf32, strides [32, 1], offset 0>) -> !tile.partition_view<16x8, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
// GENERIC-NEXT: %pb = "tile.make_partition_view"(%vb) : (!tile.tensor_view<32x48xf32, strides [48, 1], offset 0>) -> !tile.partition_view<8x16, !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>>
// GENERIC-NEXT: %pc = "tile.make_partition_view"(%vc) : (!tile.tensor_view<64x48xf32, strides [48, 1], offset 0>) -> !tile.partition_view<16x16, !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>>
// GENERIC-NEXT: %zero = "tile.map"() ({
// GENERIC-NEXT: %z = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
// GENERIC-NEXT: "tile.yield"(%z) : (f32) -> ()
// GENERIC-NEXT: }) : () -> !tile.tile<16x16xf32>
// GENERIC-NEXT: %t0 = "token.make"() : () -> !token.token
// GENERIC-NEXT: %lb = "arith.constant"() <{value = 0 : index}> : () -> index
// GENERIC-NEXT: %ub = "arith.constant"() <{value = 4 : index}> : () -> index
// GENERIC-NEXT: %step = "arith.constant"() <{value = 1 : index}> : () -> index
// GENERIC-NEXT: %acc, %tk = "scf.for"(%lb, %ub, %step, %zero, %t0) ({
// GENERIC-NEXT: ^bb0(%k: index, %c_acc: !tile.tile<16x16xf32>, %t_in: !token.token):
// GENERIC-NEXT: %ta, %t1 = "tile.load_view_tko"(%pa, %m, %k, %t_in) <{memory_ordering = "weak", memory_scope = "device"}> : (!tile.partition_view<16x8, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>, index, index, !token.token) -> (!tile.tile<16x8xf32>, !token.token)
// GENERIC-NEXT: %tb, %t2 = "tile.load_view_tko"(%pb, %k, %n, %t_in) <{memory_ordering = "weak", memory_scope = "device"}> : (!tile.partition_view<8x16, !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>>, index, index, !token.token) -> (!tile.tile<8x16xf32>, !token.token)
// GENERIC-NEXT: %next = "tile.mma"(%ta, %tb, %c_acc) : (!tile.tile<16x8xf32>, !tile.tile<8x16xf32>, !tile.tile<16x16xf32>) -> !tile.tile<16x16xf32>
// GENERIC-NEXT: %t3 = "token.join"(%t1, %t2) : (!token.token, !token.token) -> !token.token
// GENERIC-NEXT: "scf.yield"(%next, %t3) : (!tile.tile<16x16xf32>, !token.token) -> ()
// GENERIC-NEXT: }) : (index, index, index, !tile.tile<16x16xf32>, !token.token) -> (!tile.tile<16x16xf32>, !token.token)
// GENERIC-NEXT: %t4 = "tile.store_view_tko"(%acc, %pc, %m, %n, %tk) <{memory_ordering = "release", memory_scope = "system"}> : (!tile.tile<16x16xf32>, !tile.partition_view<16x16, !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>>, index, index, !token.token) -> !token.token
// GENERIC-NEXT: "tile.return"() : () -> ()
// GENERIC-NEXT: }) : () -> ()
// GENERIC-LABEL: "tile.kernel"() <{sym_name = "row_normalize", function_type = (memref<2048xf32>, memref<2048xf32>, memref<64xf32>) -> (), grid = array<i64: 4>}> ({
// GENERIC-NEXT: ^bb0(%x: memref<2048xf32>, %y: memref<2048xf32>, %sums: memref<64xf32>):
// GENERIC-NEXT: %r = "tile.program_id"() <{dim = 0 : i64}> : () -> index
// GENERIC-NEXT: %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
// GENERIC-NEXT: %vx = "tile.make_tensor_view"(%x) : (memref<2048xf32>) -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
// GENERIC-NEXT: %vy = "tile.make_tensor_view"(%y) : (memref<2048xf32>) -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
// GENERIC-NEXT: %vs = "tile.make_tensor_view"(%sums) : (memref<64xf32>) -> !tile.tensor_view<64x1xf32, strides [1, 1], offset 0>
// GENERIC-NEXT: %px = "tile.make_partition_view"(%vx) : (!tile.tensor_view<64x32xf32, strides [32, 1], offset 0>) -> !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
// GENERIC-NEXT: %py = "tile.make_partition_view"(%vy) : (!tile.tensor_view<64x32xf32, strides [32, 1], offset 0>) -> !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
// GENERIC-NEXT: %ps = "tile.make_partition_view"(%vs) : (!tile.tensor_view<64x1xf32, strides [1, 1], offset 0>) -> !tile.partition_view<16x1, !tile.tensor_view<64x1xf32, strides [1, 1], offset 0>>
// GENERIC-NEXT: %t0 = "token.make"() : () -> !token.token
// GENERIC-NEXT: %xt, %t1 = "tile.load_view_tko"(%px, %r, %c0, %t0) <{memory_ordering = "acquire", memory_scope = "device"}> : (!tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>, index, index, !token.token) -> (!tile.tile<16x32xf32>, !token.token)
// GENERIC-NEXT: %hi = "tile.reduce"(%xt) <{axes = array<i64: 1>, kind = "max"}> : (!tile.tile<16x32xf32>) -> !tile.tile<16x1xf32>
// GENERIC-NEXT: %lo = "tile.reduce"(%xt) <{axes = array<i64: 1>, kind = "min"}> : (!tile.tile<16x32xf32>) -> !tile.tile<16x1xf32>
// GENERIC-NEXT: %range = "tile.map"(%hi, %lo) ({
// GENERIC-NEXT: ^bb0(%h: f32, %l: f32):
// GENERIC-NEXT: %d = "arith.subf"(%h, %l) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// GENERIC-NEXT: "tile.yield"(%d) : (f32) -> ()
// GENERIC-NEXT: }) : (!tile.tile<16x1xf32>, !tile.tile<16x1xf32>) -> !tile.tile<16x1xf32>
// GENERIC-NEXT: %lo_b = "tile.broadcast"(%lo) : (!tile.tile<16x1xf32>) -> !tile.tile<16x32xf32>
// GENERIC-NEXT: %range_b = "tile.broadcast"(%range) : (!tile.tile<16x1xf32>) -> !tile.tile<16x32xf32>
// GENERIC-NEXT: %yt = "tile.map"(%xt, %lo_b, %range_b) ({
// GENERIC-NEXT: ^bb0(%v: f32, %m: f32, %w: f32):
// GENERIC-NEXT: %shifted = "arith.subf"(%v, %m) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// GENERIC-NEXT: %scaled = "arith.divf"(%shifted, %w) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// GENERIC-NEXT: "tile.yield"(%scaled) : (f32) -> ()
// GENERIC-NEXT: }) : (!tile.tile<16x32xf32>, !tile.tile<16x32xf32>, !tile.tile<16x32xf32>) -> !tile.tile<16x32xf32>
// GENERIC-NEXT: %sum = "tile.reduce"(%xt) <{axes = array<i64: 1>, kind = "sum"}> : (!tile.tile<16x32xf32>) -> !tile.tile<16x1xf32>
// GENERIC-NEXT: %t2 = "tile.store_view_tko"(%yt, %py, %r, %c0, %t1) <{memory_ordering = "weak", memory_scope = "device"}> : (!tile.tile<16x32xf32>, !tile.partition_view<16x32, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>, index, index, !token.token) -> !token.token
// GENERIC-NEXT: %t3 = "tile.store_view_tko"(%sum, %ps, %r, %c0, %t1) <{memory_scope = "block", memory_ordering = "weak"}> : (!tile.tile<16x1xf32>, !tile.partition_view<16x1, !tile.tensor_view<64x1xf32, strides [1, 1], offset 0>>, index, index, !token.token) -> !token.token
// GENERIC-NEXT: "tile.return"() : () -> ()
// GENERIC-NEXT: }) : () -> ()
// GENERIC-LABEL: "func.func"() <{sym_name = "main", function_type = () -> ()}> ({
// GENERIC-NEXT: %a = "tile.buffer"() : () -> memref<35xf32>
// GENERIC-NEXT: %b = "tile.buffer"() <{init = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]> : tensor<5xf32>}> : () -> memref<5xf32>
// GENERIC-NEXT: %c = "tile.buffer"() : () -> memref<35xf32>
// GENERIC-NEXT: "tile.launch"(%a, %b, %c) <{kernel = @add}> : (memref<35xf32>, memref<5xf32>, memref<35xf32>) -> ()
// GENERIC-NEXT: %ma = "tile.buffer"() <{init = dense<5.000000e-01> : tensor<2048xf32>}> : () -> memref<2048xf32>
// GENERIC-NEXT: %mb = "tile.buffer"() : () -> memref<1536xf32>
// GENERIC-NEXT: %mc = "tile.buffer"() : () -> memref<3072xf32>
// GENERIC-NEXT: "tile.launch"(%ma, %mb, %mc) <{kernel = @matmul}> : (memref<2048xf32>, memref<1536xf32>, memref<3072xf32>) -> ()
// GENERIC-NEXT: %y = "tile.buffer"() : () -> memref<2048xf32>
// GENERIC-NEXT: %sums = "tile.buffer"() : () -> memref<64xf32>
// GENERIC-NEXT: "tile.launch"(%ma, %y, %sums) <{kernel = @row_normalize}> : (memref<2048xf32>, memref<2048xf32>, memref<64xf32>) -> ()
// GENERIC-NEXT: "func.return"() : () -> ()
// GENERIC-NEXT: }) : () -> ()
// GENERIC-NEXT: }) : () -> ()

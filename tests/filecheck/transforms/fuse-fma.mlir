// RUN: strata-opt %s -p fuse-fma --split-input-file | filecheck %s
// RUN: strata-opt %s -p fuse-fma,fuse-fma --split-input-file | filecheck %s
// RUN: strata-opt %s -p fuse-fma --split-input-file > %t.once
// RUN: strata-opt %s -p fuse-fma,fuse-fma --split-input-file > %t.twice
// RUN: diff %t.once %t.twice

// The last three RUN lines: a second run changes nothing (the pass is idempotent).

// a*b + c, the product on either side of the add.
// CHECK-LABEL: func.func @mul_add
// CHECK-NEXT:    %r = math.fma %a, %b, %c : f32
// CHECK-NEXT:    %s = math.fma %b, %c, %a : f32
// CHECK-NEXT:    func.return %r, %s : f32, f32
func.func @mul_add(%a: f32, %b: f32, %c: f32) -> (f32, f32) {
  %m = arith.mulf %a, %b : f32
  %r = arith.addf %m, %c : f32
  %n = arith.mulf %b, %c : f32
  %s = arith.addf %a, %n : f32
  func.return %r, %s : f32, f32
}

// -----

// Equal fastmath flags fuse and stay on the fma.
// CHECK-LABEL: func.func @flags
// CHECK-NEXT:    %r = math.fma %a, %b, %c fastmath<contract> : f64
// CHECK-NEXT:    %s = math.fma %a, %c, %b fastmath<fast> : f64
// CHECK-NEXT:    func.return
func.func @flags(%a: f64, %b: f64, %c: f64) -> (f64, f64) {
  %m = arith.mulf %a, %b fastmath<contract> : f64
  %r = arith.addf %c, %m fastmath<contract> : f64
  %n = arith.mulf %a, %c fastmath<fast> : f64
  %s = arith.addf %n, %b fastmath<fast> : f64
  func.return %r, %s : f64, f64
}

// -----

// c - a*b = fma(-a, b, c); a*b - c = fma(a, b, -c) (negation is exact).
// CHECK-LABEL: func.func @mul_sub
// CHECK-NEXT:    %[[NA:.*]] = arith.negf %a : f16
// CHECK-NEXT:    %r = math.fma %[[NA]], %b, %c : f16
// CHECK-NEXT:    %[[NB:.*]] = arith.negf %b : f16
// CHECK-NEXT:    %s = math.fma %a, %c, %[[NB]] : f16
// CHECK-NEXT:    func.return %r, %s : f16, f16
func.func @mul_sub(%a: f16, %b: f16, %c: f16) -> (f16, f16) {
  %m = arith.mulf %a, %b : f16
  %r = arith.subf %c, %m : f16
  %n = arith.mulf %a, %c : f16
  %s = arith.subf %n, %b : f16
  func.return %r, %s : f16, f16
}

// -----

// Flags on a subtraction carry over to the fma; the negation is exact.
// CHECK-LABEL: func.func @mul_sub_flags
// CHECK-NEXT:    %[[NC:.*]] = arith.negf %c : bf16
// CHECK-NEXT:    %r = math.fma %a, %b, %[[NC]] fastmath<nnan,ninf> : bf16
func.func @mul_sub_flags(%a: bf16, %b: bf16, %c: bf16) -> bf16 {
  %m = arith.mulf %a, %b fastmath<nnan,ninf> : bf16
  %r = arith.subf %m, %c fastmath<nnan,ninf> : bf16
  func.return %r : bf16
}

// -----

// Nested expressions fuse from the inside out: (a*b + c)*d + e.
// CHECK-LABEL: func.func @nested
// CHECK-NEXT:    %s = math.fma %a, %b, %c : f32
// CHECK-NEXT:    %r = math.fma %s, %d, %e : f32
// CHECK-NEXT:    func.return %r : f32
func.func @nested(%a: f32, %b: f32, %c: f32, %d: f32, %e: f32) -> f32 {
  %m = arith.mulf %a, %b : f32
  %s = arith.addf %m, %c : f32
  %n = arith.mulf %s, %d : f32
  %r = arith.addf %n, %e : f32
  func.return %r : f32
}

// -----

// Two products: the left one fuses, the other stays the addend (a*b + c*d).
// CHECK-LABEL: func.func @two_products
// CHECK-NEXT:    %n = arith.mulf %c, %d : f32
// CHECK-NEXT:    %r = math.fma %a, %b, %n : f32
// CHECK-NEXT:    %p = arith.mulf %b, %d : f32
// CHECK-NEXT:    %[[NP:.*]] = arith.negf %p : f32
// CHECK-NEXT:    %s = math.fma %a, %c, %[[NP]] : f32
func.func @two_products(%a: f32, %b: f32, %c: f32, %d: f32) -> (f32, f32) {
  %m = arith.mulf %a, %b : f32
  %n = arith.mulf %c, %d : f32
  %r = arith.addf %m, %n : f32
  %o = arith.mulf %a, %c : f32
  %p = arith.mulf %b, %d : f32
  %s = arith.subf %o, %p : f32
  func.return %r, %s : f32, f32
}

// -----

// Not fused: a product with another use (here returned, or added to itself) — it would
// be computed twice, rounded differently; mismatched fastmath flags, either way round;
// integer arithmetic.
// CHECK-LABEL: func.func @not_fused
// CHECK-NEXT:    %m = arith.mulf %a, %b : f32
// CHECK-NEXT:    %r = arith.addf %m, %c : f32
// CHECK-NEXT:    %o = arith.mulf %b, %c : f32
// CHECK-NEXT:    %t = arith.addf %o, %o : f32
// CHECK-NEXT:    %n = arith.mulf %a, %c : f32
// CHECK-NEXT:    %s = arith.addf %n, %b fastmath<contract> : f32
// CHECK-NEXT:    %q = arith.mulf %a, %c fastmath<contract> : f32
// CHECK-NEXT:    %u = arith.subf %b, %q fastmath<fast> : f32
// CHECK-NEXT:    %k = arith.muli %i, %j : i32
// CHECK-NEXT:    %l = arith.addi %k, %i : i32
// CHECK-NEXT:    %k2 = arith.muli %i, %j : i32
// CHECK-NEXT:    %l2 = arith.subi %k2, %i : i32
// CHECK-NOT:     math.fma
// CHECK:         func.return
func.func @not_fused(%a: f32, %b: f32, %c: f32, %i: i32, %j: i32) -> (f32, f32, f32, f32, f32, i32, i32) {
  %m = arith.mulf %a, %b : f32
  %r = arith.addf %m, %c : f32
  %o = arith.mulf %b, %c : f32
  %t = arith.addf %o, %o : f32
  %n = arith.mulf %a, %c : f32
  %s = arith.addf %n, %b fastmath<contract> : f32
  %q = arith.mulf %a, %c fastmath<contract> : f32
  %u = arith.subf %b, %q fastmath<fast> : f32
  %k = arith.muli %i, %j : i32
  %l = arith.addi %k, %i : i32
  %k2 = arith.muli %i, %j : i32
  %l2 = arith.subi %k2, %i : i32
  func.return %r, %m, %t, %s, %u, %l, %l2 : f32, f32, f32, f32, f32, i32, i32
}

// -----

// Other float ops are not fusion candidates: a division, an add of two non-products.
// CHECK-LABEL: func.func @other_ops
// CHECK-NEXT:    %d = arith.divf %a, %b : f32
// CHECK-NEXT:    %r = arith.addf %d, %c : f32
// CHECK-NEXT:    %s = arith.addf %a, %b : f32
func.func @other_ops(%a: f32, %b: f32, %c: f32) -> (f32, f32) {
  %d = arith.divf %a, %b : f32
  %r = arith.addf %d, %c : f32
  %s = arith.addf %a, %b : f32
  func.return %r, %s : f32, f32
}

// -----

// The loops level, as cpu-pipeline produces it: a multiply-accumulate in a loop, with
// tile.mma's fastmath<contract>.
// CHECK-LABEL: func.func @kernel
// CHECK:         %acc = scf.for %i = %begin to %end step %c1 iter_args(%s = %zero) -> (f32) {
// CHECK-NEXT:      %x = memref.load %a[%i] : memref<64xf32>
// CHECK-NEXT:      %y = memref.load %b[%i] : memref<64xf32>
// CHECK-NEXT:      %t = math.fma %x, %y, %s fastmath<contract> : f32
// CHECK-NEXT:      scf.yield %t : f32
// CHECK-NEXT:    }
func.func @kernel(%a: memref<64xf32>, %b: memref<64xf32>, %out: memref<1xf32>, %begin: index, %end: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %acc = scf.for %i = %begin to %end step %c1 iter_args(%s = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = memref.load %b[%i] : memref<64xf32>
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %t = arith.addf %s, %p fastmath<contract> : f32
    scf.yield %t : f32
  }
  memref.store %acc, %out[%c0] : memref<1xf32>
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}

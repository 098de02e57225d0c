// RUN: strata-opt %s -p expand-math | filecheck %s

// f32 exp/tanh/erf become arith polynomials (no libm call left to block vectorization);
// f64 keeps the math op (libm accuracy); other math ops are untouched.
// CHECK-LABEL: func.func @f
// CHECK-NOT:     math.exp {{.*}} : f32
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.erf {{.*}} : f32
// exp rounds x·log2 e by adding 1.5·2^23 (no floor, no int conversion), its polynomial in
// fused multiply-adds, and reads n from the sum's bits:
// CHECK-NOT:     math.floor
// CHECK:         arith.constant 0x4B400000 : f32
// CHECK:         arith.addf {{.*}} fastmath<contract> : f32
// CHECK:         arith.bitcast {{.*}} : f32 to i32
// CHECK:         arith.bitcast {{.*}} : i32 to f32
// CHECK:         math.copysign
// CHECK:         %[[D:.*]] = math.exp %d : f64
// CHECK-NEXT:    %[[S:.*]] = math.sqrt %x : f32
// CHECK-NEXT:    func.return {{.*}}, %[[D]], %[[S]]
func.func @f(%x: f32, %d: f64) -> (f32, f32, f32, f64, f32) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.erf %x : f32
  %3 = math.exp %d : f64
  %4 = math.sqrt %x : f32
  func.return %0, %1, %2, %3, %4 : f32, f32, f32, f64, f32
}

// RUN: strata-opt %s -p dedupe-kernels | filecheck %s

// Lowered kernels (func.func with tile.grid): equal ones merge; one differing only in an
// attribute (tile.aliased, tile.error) or in a constant stays. Functions that are not
// kernels are never merged.
// CHECK-LABEL: func.func @p
// CHECK-NEXT:    %[[B:.*]] = tile.buffer
// CHECK-NEXT:    tile.launch @k(%a, %[[B]])
// CHECK-NEXT:    tile.launch @k(%[[B]], %[[B]])
// CHECK-NEXT:    tile.launch @k_aliased(%a, %[[B]])
// CHECK-NEXT:    tile.launch @k_error(%a, %[[B]])
// CHECK-NEXT:    tile.launch @k_constant(%a, %[[B]])
// CHECK-NEXT:    func.return
// CHECK:       func.func @k(
// CHECK-NOT:   func.func @k_copy(
// CHECK:       func.func @k_aliased({{.*}} attributes {tile.grid = array<i64: 2>, tile.aliased}
// CHECK:       func.func @k_error({{.*}} attributes {tile.grid = array<i64: 2>, tile.error = "failed"}
// CHECK:       func.func @k_constant(
// CHECK:         arith.constant 2.000000e+00 : f32
// CHECK:       func.func @helper(
// CHECK:       func.func @helper_copy(
func.func @p(%a: memref<8xf32>) {
  %b = tile.buffer : memref<8xf32>
  tile.launch @k(%a, %b) : memref<8xf32>, memref<8xf32>
  tile.launch @k_copy(%b, %b) : memref<8xf32>, memref<8xf32>
  tile.launch @k_aliased(%a, %b) : memref<8xf32>, memref<8xf32>
  tile.launch @k_error(%a, %b) : memref<8xf32>, memref<8xf32>
  tile.launch @k_constant(%a, %b) : memref<8xf32>, memref<8xf32>
  func.return
}
func.func @k(%0: memref<8xf32>, %1: memref<8xf32>, %begin: index, %end: index) -> i32 attributes {tile.grid = array<i64: 2>} {
  %c = arith.constant 1 : index
  scf.for %g = %begin to %end step %c {
    %x = memref.load %0[%g] : memref<8xf32>
    %k = arith.constant 1.000000e+00 : f32
    %y = arith.addf %x, %k : f32
    memref.store %y, %1[%g] : memref<8xf32>
  }
  %s = arith.constant 0 : i32
  func.return %s : i32
}
func.func @k_copy(%0: memref<8xf32>, %1: memref<8xf32>, %begin: index, %end: index) -> i32 attributes {tile.grid = array<i64: 2>} {
  %c = arith.constant 1 : index
  scf.for %g = %begin to %end step %c {
    %x = memref.load %0[%g] : memref<8xf32>
    %k = arith.constant 1.000000e+00 : f32
    %y = arith.addf %x, %k : f32
    memref.store %y, %1[%g] : memref<8xf32>
  }
  %s = arith.constant 0 : i32
  func.return %s : i32
}
func.func @k_aliased(%0: memref<8xf32>, %1: memref<8xf32>, %begin: index, %end: index) -> i32 attributes {tile.grid = array<i64: 2>, tile.aliased} {
  %c = arith.constant 1 : index
  scf.for %g = %begin to %end step %c {
    %x = memref.load %0[%g] : memref<8xf32>
    %k = arith.constant 1.000000e+00 : f32
    %y = arith.addf %x, %k : f32
    memref.store %y, %1[%g] : memref<8xf32>
  }
  %s = arith.constant 0 : i32
  func.return %s : i32
}
func.func @k_error(%0: memref<8xf32>, %1: memref<8xf32>, %begin: index, %end: index) -> i32 attributes {tile.grid = array<i64: 2>, tile.error = "failed"} {
  %c = arith.constant 1 : index
  scf.for %g = %begin to %end step %c {
    %x = memref.load %0[%g] : memref<8xf32>
    %k = arith.constant 1.000000e+00 : f32
    %y = arith.addf %x, %k : f32
    memref.store %y, %1[%g] : memref<8xf32>
  }
  %s = arith.constant 0 : i32
  func.return %s : i32
}
func.func @k_constant(%0: memref<8xf32>, %1: memref<8xf32>, %begin: index, %end: index) -> i32 attributes {tile.grid = array<i64: 2>} {
  %c = arith.constant 1 : index
  scf.for %g = %begin to %end step %c {
    %x = memref.load %0[%g] : memref<8xf32>
    %k = arith.constant 2.000000e+00 : f32
    %y = arith.addf %x, %k : f32
    memref.store %y, %1[%g] : memref<8xf32>
  }
  %s = arith.constant 0 : i32
  func.return %s : i32
}
func.func @helper(%0: memref<8xf32>) {
  func.return
}
func.func @helper_copy(%0: memref<8xf32>) {
  func.return
}

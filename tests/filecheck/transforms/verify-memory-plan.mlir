// RUN: not strata-opt %s -p verify-memory-plan 2>&1 | filecheck %s

// Two buffers live at step 1 share bytes in the activations arena; one offset is not
// aligned; one buffer is used after its recorded life: each is reported.
// CHECK: verify-memory-plan: @f:
// CHECK-SAME: %1: used at steps [1, 2], outside its planned life [1, 1]
// CHECK-SAME: %2: offset 100 is not a multiple of 64
// CHECK-SAME: %0 and %1 overlap in the activations arena while both live ([0, 1] and [1, 1])
func.func @f(%x: memref<16xf32>) -> memref<16xf32> attributes {tile.plan = {alignment = 64 : i64, kernels = 3 : i64, naive_bytes = 192 : i64, arenas = {params = 0 : i64, activations = 256 : i64, workspace = 0 : i64, grads = 0 : i64, external = 64 : i64}}} {
  %0 = tile.buffer {tile.arena = "activations", tile.offset = 0 : i64, tile.live = array<i64: 0, 1>} : memref<16xf32>
  tile.launch @k(%x, %0) : memref<16xf32>, memref<16xf32>
  %1 = tile.buffer {tile.arena = "activations", tile.offset = 0 : i64, tile.live = array<i64: 1, 1>} : memref<16xf32>
  tile.launch @k(%0, %1) : memref<16xf32>, memref<16xf32>
  %2 = tile.buffer {tile.arena = "external", tile.offset = 100 : i64, tile.live = array<i64: 2, 3>} : memref<16xf32>
  tile.launch @k(%1, %2) : memref<16xf32>, memref<16xf32>
  func.return %2 : memref<16xf32>
}
func.func @k(%a: memref<16xf32>, %b: memref<16xf32>, %begin: index, %end: index) -> i32 attributes {tile.grid = array<i64: 1>} {
  %c0 = arith.constant 0 : i32
  func.return %c0 : i32
}

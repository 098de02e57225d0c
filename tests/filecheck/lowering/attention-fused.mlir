// graph.attention on the CPU: one fused kernel (after a copy kernel transposing k), one
// instance per (batch, 64-query block), walking 128-key blocks with an online softmax:
// the scf.for carries the running max, the running sum and the output tile, and holds
// both matmuls (q kᵀ and p v). A causal kernel's loop stops at the diagonal block (its
// bound is computed per query block: arith.minui). No S x S scores buffer is planned:
// the only buffers are kᵀ (a workspace of k's size) and the result.
// RUN: strata-opt %s -p lower-graph-to-tile | filecheck %s
// RUN: strata-opt %s -p cpu-pipeline | filecheck %s --check-prefix=PLAN

func.func @att(%q: tensor<2x128x32xf32>, %k: tensor<2x128x32xf32>, %v: tensor<2x128x32xf32>) -> tensor<2x128x32xf32> {
  %o = graph.attention %q, %k, %v {scale = 0.17677669529663687 : f64, causal = true} : (tensor<2x128x32xf32>, tensor<2x128x32xf32>, tensor<2x128x32xf32>) -> tensor<2x128x32xf32>
  func.return %o : tensor<2x128x32xf32>
}

// CHECK:      func.func @att(%q: memref<8192xf32>, %k: memref<8192xf32>, %v: memref<8192xf32>) -> memref<8192xf32> {
// CHECK-NEXT:   [[KT:%[0-9]+]] = tile.buffer {tile.workspace} : memref<8192xf32>
// CHECK-NEXT:   tile.launch @att_attention_transpose_b_0(%k, [[KT]])
// CHECK-NEXT:   [[OUT:%[0-9]+]] = tile.buffer : memref<8192xf32>
// CHECK-NEXT:   tile.launch @att_attention_1(%q, [[KT]], %v, [[OUT]])
// CHECK-NEXT:   func.return [[OUT]]
// CHECK:      tile.kernel @att_attention_1({{.*}}) attributes {grid = array<i64: 2, 2>} {
// CHECK:        [[BOUND:%[0-9]+]] = arith.minui
// CHECK:        scf.for {{.*}} to [[BOUND]] {{.*}} -> (!tile.tile<1x64x1xf32>, !tile.tile<1x64x1xf32>, !tile.tile<1x64x32xf32>) {
// CHECK:          tile.mma {{.*}} : !tile.tile<1x64x32xf32>, !tile.tile<1x32x128xf32>, !tile.tile<1x64x128xf32>
// CHECK:          tile.reduce {{.*}} kind = "max"
// CHECK:          math.exp
// CHECK:          tile.reduce {{.*}} kind = "sum"
// CHECK:          tile.mma {{.*}} : !tile.tile<1x64x128xf32>, !tile.tile<1x128x32xf32>, !tile.tile<1x64x32xf32>
// CHECK:          scf.yield
// CHECK:        arith.divf
// CHECK:        tile.store_view_tko
// CHECK-NOT:  tile.kernel

// The three-kernel form would plan 2 x 128 x 128 scores (and probabilities) here.
// PLAN:       func.func @att(
// PLAN-NOT:   memref<32768xf32>
// PLAN:       func.return

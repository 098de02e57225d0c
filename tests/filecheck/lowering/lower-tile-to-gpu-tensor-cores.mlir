// lower-tile-to-gpu on tensor cores: a matmul of bf16 (or f16) operands with an f32
// accumulator (lower-graph-to-tile widens 16-bit operands with a tile.map of arith.extf)
// runs one inline-PTX mma.sync.m16n8k16 per 16 x 8 instruction tile and 16-deep k step.
// Here 64x64 output tiles, k tiles of 32, 128 threads: a 2x2 grid of warps, each a 32x32
// part (2x4 instruction tiles, two k steps: 16 mma per k tile). No fma: the products are
// exact in f32. The program ids are grouped (8 tile rows at a time, column by column) for L2.
//
// @main: rows of 16-byte-aligned chunks, so the k loop is a four-stage cp.async pipeline
// in dynamic shared memory: four stages of a (4 x 64 rows of 32 + 8 padding, at offset 0)
// and b (4 x 32 rows of 64 + 8, after it), three steps issued before the loop (a commit
// group each), then per step: wait for all but the newest two groups, one barrier, issue
// the step three ahead into the stage read a step ago, ldmatrix fragments (x4 for a, x4.trans for b), the
// mma. @odd: k = 100 is no multiple of 8 elements, so the operands are staged element by
// element as packed k-pairs (i32 words in static shared memory) with two barriers per
// step. @single: f32 keeps the fma path.
// RUN: strata-opt %s -p "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile{tile_elements=2048 matmul_m=64 matmul_n=64 matmul_k=32 matmul_min_tiles=132},token-dce,lower-tile-to-gpu" | filecheck %s
// RUN: strata-opt %s -p "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile{tile_elements=2048 matmul_m=64 matmul_n=64 matmul_k=32 matmul_min_tiles=132},token-dce,lower-tile-to-gpu{tf32=true mma_stages=2}" | filecheck %s --check-prefix=TF32
// RUN: strata-translate %s --emit=ptx --arch sm_80 | filecheck %s --check-prefix=PTX
// RUN: not strata-opt %s -p "lower-tile-to-gpu{mma_stages=1}" 2>&1 | filecheck %s --check-prefix=STAGES
//
// TF32 (tf32=true; two stages asked for): the f32 matmul of @single runs
// mma.sync.m16n8k8.tf32 on the cp.async path (32 x 32 tiles: stages of 32 x (32 + 4) and 32 x (32 + 8)
// f32), each fragment word rounded by cvt.rna.tf32.f32; the bf16 matmuls are unchanged.

func.func @main(%a: tensor<1024x96xbf16>, %b: tensor<96x1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = "graph.matmul"(%a, %b) : (tensor<1024x96xbf16>, tensor<96x1024xbf16>) -> tensor<1024x1024xbf16>
  func.return %0 : tensor<1024x1024xbf16>
}

func.func @odd(%a: tensor<1024x100xf16>, %b: tensor<100x1024xf16>) -> tensor<1024x1024xf16> {
  %0 = "graph.matmul"(%a, %b) : (tensor<1024x100xf16>, tensor<100x1024xf16>) -> tensor<1024x1024xf16>
  func.return %0 : tensor<1024x1024xf16>
}

func.func @single(%a: tensor<64x96xf32>, %b: tensor<96x64xf32>) -> tensor<64x64xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<64x96xf32>, tensor<96x64xf32>) -> tensor<64x64xf32>
  func.return %0 : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @main_matmul_0
// CHECK-SAME:    gpu.block_size = 128
// CHECK-SAME:    gpu.dynamic_shared_bytes = 38912
// CHECK-SAME:    gpu.barriers = 1
// CHECK-SAME:    tile.grid = array<i64: 16, 16>
// CHECK-DAG:     memref.alloca() {gpu.dynamic_offset = 20480 : i64, alignment = 16 : i64} : memref<128x72xbf16, 3 : i64>
// CHECK-DAG:     memref.alloca() {gpu.dynamic_offset = 0 : i64, alignment = 16 : i64} : memref<256x40xbf16, 3 : i64>
// CHECK:         %{{.*}} = arith.minui
// CHECK:         scf.if
// CHECK:           func.call @ptx.cp.async.cg.shared.global.16
// CHECK:         func.call @ptx.cp.async.commit_group()
// CHECK:         scf.if
// CHECK:         func.call @ptx.cp.async.commit_group()
// CHECK:         scf.if
// CHECK:         func.call @ptx.cp.async.commit_group()
// CHECK:         scf.for
// CHECK-NEXT:      func.call @ptx.cp.async.wait_group.2()
// CHECK-NEXT:      func.call @llvm.nvvm.barrier0()
// CHECK:           scf.if
// CHECK:             func.call @ptx.cp.async.cg.shared.global.16
// CHECK:           func.call @ptx.cp.async.commit_group()
// CHECK:           func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK:           func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-COUNT-16:  func.call @ptx.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT:       barrier0
// CHECK:           scf.yield

// CHECK-LABEL: func.func @odd_matmul_0
// CHECK-DAG:     memref.alloca() {alignment = 16 : i64} : memref<64x20xi32, 3 : i64>
// CHECK-DAG:     memref.alloca() {alignment = 16 : i64} : memref<16x72xi32, 3 : i64>
// CHECK-NOT:     cp.async
// CHECK:         scf.for
// CHECK:           arith.bitcast %{{.*}} : f16 to i16
// CHECK:           memref.store %{{.*}} : memref<64x20xi32, 3 : i64>
// CHECK:           func.call @llvm.nvvm.barrier0()
// CHECK-COUNT-16:  func.call @ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NOT:       math.fma

// CHECK-LABEL: func.func @single_matmul_0
// CHECK-NOT:     ptx.mma
// CHECK:         math.fma

// PTX:     .target sm_80
// PTX:     .extern .shared .align 16 .b8 main_matmul_0_dynamic_shared[];
// PTX:     .entry main_matmul_0
// PTX:     cp.async.cg.shared.global
// PTX:     ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX:     mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX:     .entry odd_matmul_0
// PTX-NOT: cp.async
// PTX:     mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX:     .entry single_matmul_0
// PTX-NOT: mma.sync

// TF32-LABEL: func.func @main_matmul_0
// TF32:         ptx.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// TF32-LABEL: func.func @single_matmul_0
// TF32-SAME:    gpu.dynamic_shared_bytes = 19456
// TF32-NOT:     math.fma
// TF32:         func.call @ptx.cp.async.wait_group.0()
// TF32:         func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16
// TF32:         func.call @ptx.cvt.rna.tf32.f32
// TF32:         func.call @ptx.mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32

// STAGES: lower-tile-to-gpu: mma_stages must be in [2, 8], got 1

// graph.attention of bf16 on the GPU: lower-graph-to-tile{flash_attention=true} emits the
// fused online-softmax kernel with k read transposed in place (no transpose kernel, no
// workspace: the only buffer is the result) and marks it tile.flash_attention with its
// scale and causality; lower-tile-to-gpu replaces it by the flash kernel: 128 threads, q
// and two stages of k and v blocks (64 rows each, rows padded by 8) in dynamic shared
// memory, ldmatrix fragments, mma.sync for q kᵀ and p v (p split into two bf16 fragments),
// quad shuffles for the row maximum and the final row sums, one barrier per key block.
// Two key-block loops: the blocks wholly left of the diagonal and inside the keys take no
// mask, the rest compare keys with the end and the query rows. Row maxima of the raw
// scores; each p = 2^(s · c - m · c), c = scale · log2(e), is one fma and one ex2.approx.ftz
// (no libdevice exp2, no multiply of every score).
// gpu-pipeline{allow_16bit_attention_p=true} rounds p to one bf16
// fragment: half the p v products. gpu-pipeline{warpgroup_mma=true} (sm_90) runs the same
// kernel on wgmma: q and the k/v stages in the 128-byte swizzled layout from a 1024-aligned
// base (q and four stages of k and v: 72 KiB, their mbarriers, 1008 bytes of alignment
// slack), the stages handed over by mbarriers, copies fenced for the async proxy after the
// wait, q read into registers once (4 ldmatrix), q kᵀ as 4 m64n64k16 products with q's
// fragments from registers and k from descriptors, p v as 8 products with p's fragments
// from registers (high and low) and v N-major; flash-attention-key-blocks.mlir has the
// 128-key blocks of a head of 128 with p16.
// f32 attention keeps the three kernels (scores, softmax, values).
// RUN: strata-opt %s -p "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile{tile_elements=2048 matmul_m=64 matmul_n=64 matmul_k=32 flash_attention=true fused_attention=false}" | filecheck %s --check-prefix=TILE
// RUN: strata-opt %s -p gpu-pipeline | filecheck %s
// RUN: strata-opt %s -p "gpu-pipeline{allow_16bit_attention_p=true}" | filecheck %s --check-prefix=P16
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true}" | filecheck %s --check-prefix=WGMMA

func.func @flash(%q: tensor<2x100x64xbf16>, %k: tensor<2x100x64xbf16>, %v: tensor<2x100x64xbf16>) -> tensor<2x100x64xbf16> {
  %o = graph.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> tensor<2x100x64xbf16>
  func.return %o : tensor<2x100x64xbf16>
}

func.func @wide(%q: tensor<1x64x32xf32>, %k: tensor<1x64x32xf32>, %v: tensor<1x64x32xf32>) -> tensor<1x64x32xf32> {
  %o = graph.attention %q, %k, %v {scale = 0.125 : f64, causal = false} : (tensor<1x64x32xf32>, tensor<1x64x32xf32>, tensor<1x64x32xf32>) -> tensor<1x64x32xf32>
  func.return %o : tensor<1x64x32xf32>
}

// TILE-LABEL: func.func @flash
// TILE-NEXT:    [[OUT:%[0-9]+]] = tile.buffer : memref<12800xbf16>
// TILE-NEXT:    tile.launch @flash_attention_0(%q, %k, %v, [[OUT]])
// TILE-NEXT:    func.return [[OUT]]
// TILE:       tile.kernel @flash_attention_0
// TILE-SAME:    tile.flash_attention = {scale = 1.250000e-01 : f64, causal = true}
// TILE:         tile.make_tensor_view %{{.*}} : memref<12800xbf16> -> !tile.tensor_view<2x64x100xbf16, strides [6400, 1, 64], offset 0>

// CHECK-LABEL: func.func @flash_attention_0
// CHECK-SAME:    gpu.block_size = 128
// CHECK-SAME:    gpu.dynamic_shared_bytes = 46080
// CHECK-SAME:    gpu.barriers = 3
// CHECK:         func.call @ptx.cp.async.wait_group.1()
// CHECK:         func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK:         scf.for
// CHECK:           func.call @ptx.cp.async.wait_group.0()
// CHECK-NEXT:      func.call @llvm.nvvm.barrier0()
// CHECK-COUNT-32:  func.call @ptx.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT:       arith.cmpi uge
// CHECK:           func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK-NOT:       math.exp2
// CHECK:           [[T:%[0-9]+]] = math.fma
// CHECK-NEXT:      func.call @ptx.ex2.approx.ftz.f32([[T]])
// CHECK-COUNT-8:   func.call @ptx.cvt.rn.bf16x2.f32
// CHECK-COUNT-16:  func.call @ptx.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK-COUNT-32:  func.call @ptx.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK:           arith.cmpi uge
// CHECK:           arith.cmpi ugt
// CHECK:           func.call @ptx.ex2.approx.ftz.f32
// CHECK:           scf.yield
// CHECK:         func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK:         memref.store %{{.*}} : memref<12800xbf16>

// P16-LABEL: func.func @flash_attention_0
// P16:         scf.for
// P16:           func.call @ptx.ex2.approx.ftz.f32
// P16-COUNT-4:   func.call @ptx.cvt.rn.bf16x2.f32
// P16-NOT:       func.call @ptx.cvt.rn.bf16x2.f32
// P16-COUNT-8:   func.call @ptx.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// P16-NOT:       func.call @ptx.mma.sync
// P16:           func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16

// CHECK-LABEL: func.func @wide_attention_scores_0
// CHECK-LABEL: func.func @wide_attention_softmax_1
// CHECK-LABEL: func.func @wide_attention_values_2

// WGMMA-LABEL: func.func @flash_attention_0
// WGMMA-SAME:    gpu.block_size = 128
// WGMMA-SAME:    gpu.dynamic_shared_bytes = 74800
// WGMMA-SAME:    gpu.barriers = 1
// WGMMA-SAME:    gpu.warpgroup_mma
// WGMMA-SAME:    tile.grid = array<i64: 2, 2>
// WGMMA-NOT:     ldmatrix
// Thread 0 sets the 8 stage mbarriers (full and empty of 4 stages); the block's one barrier
// publishes them. The copies of q and blocks 0, 1, 2 follow, each block's arriving on its
// stage's full barrier, then block 0 (peeled): its copies land, q is read into registers
// once (4 ldmatrix.x4: the a fragments of head 64), s = q kᵀ (4 m64n64k16, q from those
// registers, k from a descriptor), waited for, its masked online softmax.
// WGMMA-COUNT-8: func.call @ptx.mbarrier.init.shared.b64
// WGMMA-NEXT:    }
// WGMMA-NEXT:    func.call @llvm.nvvm.barrier0()
// WGMMA-NOT:     func.call @llvm.nvvm.barrier0()
// WGMMA-COUNT-3: func.call @ptx.cp.async.mbarrier.arrive.noinc.shared.b64
// WGMMA:         func.call @ptx.mbarrier.wait.parity
// WGMMA-NEXT:    func.call @"ptx.fence.proxy.async.shared::cta"()
// WGMMA-COUNT-4: func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16
// WGMMA-NOT:     ldmatrix
// WGMMA:         func.call @ptx.wgmma.fence.sync.aligned()
// WGMMA:         func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers.fresh(
// WGMMA-COUNT-3: func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers(
// WGMMA-NEXT:    func.call @ptx.wgmma.commit_group.sync.aligned()
// WGMMA-NEXT:    func.call @ptx.wgmma.wait_group.sync.aligned.0.x32(
// WGMMA:         arith.cmpi uge
// WGMMA:         func.call @ptx.ex2.approx.ftz.f32
// Each later block: wait for its copies; its s and the previous block's p v (8 products,
// p's fragments from registers, v N-major) in flight together; wait_group 1 leaves p v
// running beside the softmax of s; after wait_group 0 the previous block's stage is
// released and the copies of the block two ahead are issued (after its stage's release).
// WGMMA:         scf.for
// WGMMA:           func.call @ptx.mbarrier.wait.parity
// WGMMA-NEXT:      func.call @"ptx.fence.proxy.async.shared::cta"()
// WGMMA-NOT:       barrier0
// WGMMA:           func.call @ptx.wgmma.fence.sync.aligned()
// WGMMA:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers.fresh(
// WGMMA-COUNT-3:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers(
// WGMMA-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// WGMMA:           func.call @ptx.wgmma.fence.sync.aligned()
// WGMMA-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.n_major.a_registers(
// WGMMA-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// WGMMA-NEXT:      func.call @ptx.wgmma.wait_group.sync.aligned.1.x64(
// WGMMA-NOT:       arith.cmpi uge
// WGMMA:           func.call @ptx.ex2.approx.ftz.f32
// WGMMA:           func.call @ptx.wgmma.wait_group.sync.aligned.0.x32(
// WGMMA-NOT:       mbarrier.wait
// WGMMA:           func.call @ptx.mbarrier.arrive.shared.b64
// WGMMA:           scf.if
// WGMMA:             func.call @ptx.mbarrier.wait.parity
// WGMMA:             func.call @ptx.cp.async.mbarrier.arrive.noinc.shared.b64
// WGMMA:           scf.yield
// WGMMA:         scf.for
// WGMMA:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers.fresh(
// WGMMA-COUNT-3:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers(
// WGMMA-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.n_major.a_registers(
// WGMMA:           arith.cmpi uge
// WGMMA:           arith.cmpi ugt
// WGMMA:           func.call @ptx.ex2.approx.ftz.f32
// WGMMA:           scf.yield
// The last block's p v, then the output.
// WGMMA-NOT:     barrier0
// WGMMA-COUNT-8: func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.n_major.a_registers(
// WGMMA:         func.call @ptx.wgmma.wait_group.sync.aligned.0.x32(
// WGMMA:         func.call @llvm.nvvm.shfl.sync.bfly.f32
// WGMMA:         memref.store %{{.*}} : memref<12800xbf16>

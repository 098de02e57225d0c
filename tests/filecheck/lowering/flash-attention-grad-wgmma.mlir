// The flash backward on sm_90 (gpu-pipeline{warpgroup_mma=true}; tile_to_gpu/
// flash_attention_grad_wgmma.py): with every head 64 (or every head 128), the dq and dkv
// kernels run their products on the warpgroup mma, one warpgroup (128 threads) per 64
// resident rows. Head 64's shared
// memory: the two resident [64 x 64] bf16 tiles and four stages of the two streamed ones
// (10 x 8192 bytes), the stages' 8 mbarriers (64 bytes) and 1008 bytes of alignment slack
// for the 1024-aligned swizzled base: 82992 bytes. One block barrier (after the mbarriers'
// initialization); the residents' a fragments read once before the loops (8 ldmatrix.x4);
// per streamed block two score products (the first of each starts its sum: `fresh`, no
// zeros moved into registers in flight) waited for together, then the block's sums with
// p / ds as a fragments (high and low: 8 products per 64 rows) and the streamed tile
// N-major, waited for before the stage is released.
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true}" | filecheck %s

func.func @head64(%q: tensor<1x100x64xbf16>, %k: tensor<1x100x64xbf16>, %v: tensor<1x100x64xbf16>, %o: tensor<1x100x64xbf16>, %do: tensor<1x100x64xbf16>) -> (tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 0.125 : f64, causal = true} : (tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>) -> (tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>)
  func.return %dq, %dk, %dv : tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>
}

func.func @head128(%q: tensor<1x100x128xbf16>, %k: tensor<1x100x128xbf16>, %v: tensor<1x100x128xbf16>, %o: tensor<1x100x128xbf16>, %do: tensor<1x100x128xbf16>) -> (tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 0.088 : f64, causal = true} : (tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>) -> (tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>)
  func.return %dq, %dk, %dv : tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>
}

// stats: q resident (four stages of k: 5 x 8192 bytes, mbarriers, slack), s = q kᵀ, the
// online softmax's maxima and sums, no p v.
// CHECK-LABEL: func.func @head64_attention_grad_stats_0(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 42032 : i64
// CHECK-COUNT-4: func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16(
// CHECK:         scf.for
// CHECK:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers.fresh(
// CHECK-COUNT-3:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK-NEXT:      func.call @ptx.wgmma.wait_group.sync.aligned.0.x32(
// CHECK:           func.call @ptx.ex2.approx.ftz.f32
// CHECK-NOT:       n_major
// CHECK:           scf.yield
// CHECK-NOT:     mma.sync
// CHECK:         func.return

// dq: s = q kᵀ and dp = dout vᵀ, then dq += ds k (k N-major).
// CHECK-LABEL: func.func @head64_attention_grad_dq_1(
// CHECK-SAME:    gpu.block_size = 128 : i64, gpu.shared_bytes = 0 : i64, gpu.dynamic_shared_bytes = 82992 : i64, gpu.barriers = 1 : i64, gpu.warpgroup_mma
// CHECK-COUNT-8: func.call @ptx.mbarrier.init.shared.b64
// CHECK:         func.call @llvm.nvvm.barrier0()
// CHECK-NOT:     func.call @llvm.nvvm.barrier0()
// CHECK-COUNT-8: func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16(
// CHECK-NOT:     ldmatrix
// CHECK:         scf.for
// CHECK:           func.call @ptx.mbarrier.wait.parity
// CHECK-NEXT:      func.call @"ptx.fence.proxy.async.shared::cta"()
// CHECK:           func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-NEXT:      func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers.fresh(
// CHECK-COUNT-3:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK:           func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-NEXT:      func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers.fresh(
// CHECK-COUNT-3:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK-NEXT:      func.call @ptx.wgmma.wait_group.sync.aligned.0.x64(
// CHECK:           func.call @ptx.ex2.approx.ftz.f32
// CHECK:           func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.n_major.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK-NEXT:      func.call @ptx.wgmma.wait_group.sync.aligned.0.x32(
// CHECK:           func.call @ptx.mbarrier.arrive.shared.b64
// CHECK-NOT:       barrier0
// CHECK:           scf.yield
// CHECK-NOT:     mma.sync
// CHECK:         func.return

// dkv: sᵀ = k qᵀ and dpᵀ = v doutᵀ, then dk += dsᵀ q and dv += pᵀ dout, waited for together.
// CHECK-LABEL: func.func @head64_attention_grad_dkv_2(
// CHECK-SAME:    gpu.block_size = 128 : i64, gpu.shared_bytes = 0 : i64, gpu.dynamic_shared_bytes = 82992 : i64, gpu.barriers = 1 : i64, gpu.warpgroup_mma
// CHECK-COUNT-8: func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16(
// CHECK:         scf.for
// CHECK:           func.call @ptx.wgmma.wait_group.sync.aligned.0.x64(
// CHECK:           func.call @ptx.ex2.approx.ftz.f32
// CHECK:           func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.n_major.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK:           func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.n_major.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK-NEXT:      func.call @ptx.wgmma.wait_group.sync.aligned.0.x64(
// CHECK:           func.call @ptx.mbarrier.arrive.shared.b64

// Head 128: two stages (2 x 16384 + 2 x 32768 bytes, 4 mbarriers, the slack); the score
// products read both operands from shared memory (8 k16 steps of descriptors: no
// ldmatrix), the sums are m64n128k16.
// CHECK-LABEL: func.func @head128_attention_grad_dq_1(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 99344 : i64
// CHECK-COUNT-4: func.call @ptx.mbarrier.init.shared.b64
// CHECK-NOT:     ldmatrix
// CHECK:         scf.for
// CHECK:           func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-NEXT:      func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.fresh(
// CHECK-COUNT-7:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16(
// CHECK:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major.a_registers(
// CHECK-NOT:     mma.sync
// CHECK:         func.return
// CHECK-LABEL: func.func @head128_attention_grad_dkv_2(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 99344 : i64
// CHECK-NOT:     ldmatrix
// CHECK:         func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major.a_registers(
// CHECK-NOT:     mma.sync
// CHECK:         func.return

// The flash backward on warpgroups where every head is 80: in strips of 128 columns, as
// the forward keeps them, so the dkv kernel stages as at head 128: the resident k and v
// tiles (64 x 128 each) and two stages of the streamed q and dout tiles, 96 KiB, with 4
// mbarriers and the alignment slack 99344 bytes. The copies take whole strips (a chunk
// past the head copies 0 bytes and zero-fills): 64 rows x 16 chunks over 128 threads, 8 a
// thread per tile, so 2 x 8 for the residents and 2 x 8 for the first streamed block
// before the loop, and 2 x 8 a block in it. The score products (sᵀ = k qᵀ, dpᵀ = v doutᵀ)
// step over the head's 80 columns only (five m64n64k16 each, both operands through
// descriptors: two strips are not held in registers, no ldmatrix); the sums (dk += dsᵀ q,
// dv += pᵀ dout) run on whole strips, eight m64n128k16 each with split p.
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true}" | filecheck %s

func.func @strips(%q: tensor<2x100x80xbf16>, %k: tensor<2x100x80xbf16>, %v: tensor<2x100x80xbf16>, %o: tensor<2x100x80xbf16>, %do: tensor<2x100x80xbf16>) -> (tensor<2x100x80xbf16>, tensor<2x100x80xbf16>, tensor<2x100x80xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 0.11 : f64, causal = true} : (tensor<2x100x80xbf16>, tensor<2x100x80xbf16>, tensor<2x100x80xbf16>, tensor<2x100x80xbf16>, tensor<2x100x80xbf16>) -> (tensor<2x100x80xbf16>, tensor<2x100x80xbf16>, tensor<2x100x80xbf16>)
  func.return %dq, %dk, %dv : tensor<2x100x80xbf16>, tensor<2x100x80xbf16>, tensor<2x100x80xbf16>
}

// CHECK-LABEL: func.func @strips_attention_grad_dkv_2(
// CHECK-SAME:    gpu.block_size = 128 : i64
// CHECK-SAME:    gpu.dynamic_shared_bytes = 99344 : i64
// CHECK-NOT:     func.call @ptx.ldmatrix
// CHECK-COUNT-4: func.call @ptx.mbarrier.init.shared.b64
// CHECK-NOT:     func.call @ptx.mbarrier.init.shared.b64
// CHECK-COUNT-32: func.call @ptx.cp.async.cg.shared.global.16
// CHECK-NOT:     func.call @ptx.cp.async.cg.shared.global.16
// CHECK:         scf.for
// CHECK-COUNT-16:  func.call @ptx.cp.async.cg.shared.global.16
// CHECK-NOT:       func.call @ptx.cp.async.cg.shared.global.16
// CHECK:           func.call @ptx.cp.async.mbarrier.arrive.noinc.shared.b64
// CHECK:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.fresh(
// CHECK-COUNT-4:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.fresh(
// CHECK-COUNT-4:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK-NOT:       func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16
// CHECK:           func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK:           func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK:           func.call @ptx.mbarrier.arrive.shared.b64
// CHECK:           scf.yield
// CHECK-NOT:     func.call @ptx.ldmatrix

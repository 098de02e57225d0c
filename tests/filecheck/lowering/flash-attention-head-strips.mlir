// Heads that are not whole strips of 64 on the wgmma flash kernel: q/k of 80 and v of 160
// live in shared memory as strips of 128 and 192 columns. The larger strip passes 128, so
// 128 queries (two warpgroups) take 64-key blocks in as many stages as fit, three: q (32
// KiB), three stages of k (16 KiB) and v (24 KiB), 6 mbarriers and the alignment slack are
// 156704 bytes. The copies take whole strips (the chunks past a head copy 0 bytes and
// zero-fill): a thread's 16-byte copies are q's 128 x 16 chunks over 256 threads (8), and
// per key block k's 64 x 16 (4) and v's 64 x 24 (6), so 8 + 3 x 10 before the loop (blocks
// 0, 1 and 2) and 10 a block in it; no other shared-memory writes. q's fragments come from
// registers (one ldmatrix.x4 per 16 of its 80 columns), the score products step over those
// 80 columns only (five m64n64k16), and p v runs on the padded 192 columns (two p
// fragments per 16 keys with split p: eight m64n192k16).
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true}" | filecheck %s

func.func @strips(%q: tensor<2x100x80xf16>, %k: tensor<2x100x80xf16>, %v: tensor<2x100x160xf16>) -> tensor<2x100x160xf16> {
  %o = graph.attention %q, %k, %v {scale = 0.11 : f64, causal = true} : (tensor<2x100x80xf16>, tensor<2x100x80xf16>, tensor<2x100x160xf16>) -> tensor<2x100x160xf16>
  func.return %o : tensor<2x100x160xf16>
}

// CHECK-LABEL: func.func @strips_attention_0
// CHECK-SAME:    gpu.block_size = 256 : i64
// CHECK-SAME:    gpu.dynamic_shared_bytes = 156704 : i64
// CHECK-COUNT-6: func.call @ptx.mbarrier.init.shared.b64
// CHECK-NOT:     func.call @ptx.mbarrier.init.shared.b64
// CHECK:         func.call @llvm.nvvm.barrier0()
// CHECK-COUNT-38: func.call @ptx.cp.async.cg.shared.global.16
// CHECK-NOT:     func.call @ptx.cp.async.cg.shared.global.16
// CHECK-COUNT-5: func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-NOT:     func.call @ptx.ldmatrix
// CHECK:         scf.for
// CHECK:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16.a_registers.fresh(
// CHECK-COUNT-4:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK:           func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16.n_major.a_registers(
// CHECK-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK:           func.call @ptx.mbarrier.arrive.shared.b64
// CHECK-COUNT-10:  func.call @ptx.cp.async.cg.shared.global.16
// CHECK-NOT:       func.call @ptx.cp.async.cg.shared.global.16
// CHECK:           func.call @ptx.cp.async.mbarrier.arrive.noinc.shared.b64
// CHECK:           scf.yield
// CHECK-NOT:     func.call @ptx.ldmatrix

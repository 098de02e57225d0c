// The wgmma flash kernel's key blocks (flash_attention_wgmma.KeyBlocking). A head of 128
// takes 128 queries a block (two warpgroups, 256 threads). With p rounded to 16 bits
// (allow_16bit_attention_p) its key blocks are 128 wide: q (32 KiB), three stages of k and
// v (64 KiB each), their 6 mbarriers, 1008 bytes of alignment slack; the score products are
// m64n128k16 (q's fragments from registers) and p v takes one fragment per 16 keys. Split p
// keeps 64-key blocks in four stages (8 mbarriers): m64n64k16 scores, two fragments per 16
// keys. Either way p is packed to 16-bit words after wait_group 0 (no product reads the
// previous p then), before the stage is released.
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true allow_16bit_attention_p=true}" | filecheck %s --check-prefix=WIDE
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true}" | filecheck %s --check-prefix=NARROW
// A head of 256 takes 128 queries (two warpgroups) and 64-key blocks in two stages (three fit
// no longer):
// q (64 KiB) and two of k and v (64 KiB each), their 4 mbarriers and the alignment slack
// fill 197648 bytes. q stays in shared memory, so the score products read both operands
// through descriptors (no .a_registers, no ldmatrix), each warpgroup its 64 rows of q's
// 128-row strips; p v is m64n256k16.
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true}" | filecheck %s --check-prefix=DEEP

func.func @heads128(%q: tensor<1x2x300x128xbf16>, %k: tensor<1x2x300x128xbf16>, %v: tensor<1x2x300x128xbf16>) -> tensor<1x2x300x128xbf16> {
  %o = graph.attention %q, %k, %v {scale = 0.088 : f64, causal = true} : (tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>) -> tensor<1x2x300x128xbf16>
  func.return %o : tensor<1x2x300x128xbf16>
}

// WIDE-LABEL: func.func @heads128_attention_0
// WIDE-SAME:    gpu.block_size = 256 : i64
// WIDE-SAME:    gpu.dynamic_shared_bytes = 230432 : i64
// WIDE-COUNT-6: func.call @ptx.mbarrier.init.shared.b64
// WIDE-NOT:     func.call @ptx.mbarrier.init.shared.b64
// WIDE:         scf.for
// WIDE:           func.call @ptx.wgmma.fence.sync.aligned()
// WIDE:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.a_registers.fresh(
// WIDE-COUNT-7:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.a_registers(
// WIDE-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// WIDE:           func.call @ptx.wgmma.fence.sync.aligned()
// WIDE-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major.a_registers(
// WIDE-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// WIDE-NEXT:      func.call @ptx.wgmma.wait_group.sync.aligned.1.x128(
// WIDE:           func.call @ptx.wgmma.wait_group.sync.aligned.0.x64(
// WIDE-NEXT:      func.call @ptx.cvt.rn.bf16x2.f32
// WIDE-COUNT-31:  func.call @ptx.cvt.rn.bf16x2.f32
// WIDE-NOT:       func.call @ptx.cvt.rn.bf16x2.f32
// WIDE:           func.call @ptx.mbarrier.arrive.shared.b64
// WIDE:           scf.yield

// NARROW-LABEL: func.func @heads128_attention_0
// NARROW-SAME:    gpu.block_size = 256 : i64
// NARROW-SAME:    gpu.dynamic_shared_bytes = 164912 : i64
// NARROW-COUNT-8: func.call @ptx.mbarrier.init.shared.b64
// NARROW-NOT:     func.call @ptx.mbarrier.init.shared.b64
// NARROW:         scf.for
// NARROW:           func.call @ptx.wgmma.fence.sync.aligned()
// NARROW:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers.fresh(
// NARROW-COUNT-7:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.a_registers(
// NARROW-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// NARROW:           func.call @ptx.wgmma.fence.sync.aligned()
// NARROW-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major.a_registers(
// NARROW-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// NARROW-NEXT:      func.call @ptx.wgmma.wait_group.sync.aligned.1.x96(
// NARROW:           func.call @ptx.wgmma.wait_group.sync.aligned.0.x64(
// NARROW-NEXT:      func.call @ptx.cvt.rn.bf16x2.f32
// NARROW:           func.call @ptx.mbarrier.arrive.shared.b64
// NARROW:           scf.yield

func.func @heads256(%q: tensor<2x200x256xbf16>, %k: tensor<2x200x256xbf16>, %v: tensor<2x200x256xbf16>) -> tensor<2x200x256xbf16> {
  %o = graph.attention %q, %k, %v {scale = 0.0625 : f64, causal = false} : (tensor<2x200x256xbf16>, tensor<2x200x256xbf16>, tensor<2x200x256xbf16>) -> tensor<2x200x256xbf16>
  func.return %o : tensor<2x200x256xbf16>
}

// DEEP-LABEL: func.func @heads256_attention_0
// DEEP-SAME:    gpu.block_size = 256 : i64
// DEEP-SAME:    gpu.dynamic_shared_bytes = 197648 : i64
// DEEP-COUNT-4: func.call @ptx.mbarrier.init.shared.b64
// DEEP-NOT:     func.call @ptx.mbarrier.init.shared.b64
// DEEP-NOT:     func.call @ptx.ldmatrix
// DEEP:         scf.for
// DEEP:           func.call @ptx.wgmma.fence.sync.aligned()
// DEEP-NEXT:      func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16.fresh(
// DEEP-COUNT-15:  func.call @ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16(
// DEEP-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// DEEP:           func.call @ptx.wgmma.fence.sync.aligned()
// DEEP-COUNT-8:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16.n_major.a_registers(
// DEEP-NEXT:      func.call @ptx.wgmma.commit_group.sync.aligned()
// DEEP-NEXT:      func.call @ptx.wgmma.wait_group.sync.aligned.1.x160(
// DEEP:           func.call @ptx.wgmma.wait_group.sync.aligned.0.x128(
// DEEP:           func.call @ptx.mbarrier.arrive.shared.b64
// DEEP:           scf.yield
// DEEP-NOT:     func.call @ptx.ldmatrix

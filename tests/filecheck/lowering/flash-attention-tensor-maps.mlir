// The warpgroup flash forward with tensor maps (lower-tile-to-gpu{tensor_maps=true}): at
// head 96 (strips of 128) two consumer warpgroups take 128 queries, and a third, the
// producer, copies. The kernel records a map per operand (q in boxes of the block's 128
// rows, k and v of its 128 keys; each copy a strip of 64 columns), its full barriers count
// one arrival (the copying thread's, with the bytes: q 2 x 16 KiB with block 0's 2 x 2 x 16
// KiB, then 64 KiB a block), its empty ones the 256 consumers. The producer gives up
// registers and its first thread fills every block, waiting only for the stage's
// release; the consumers take the registers and never copy. With p split high + low they
// read q from shared memory (a descriptor in each score product); with p16 (P16) from
// registers.
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true tensor_maps=true}" | filecheck %s
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true tensor_maps=true allow_16bit_attention_p=true}" | filecheck %s --check-prefix=P16
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true}" | filecheck %s --check-prefix=COPIES

func.func @mapped(%q: tensor<2x4x100x96xbf16>, %k: tensor<2x4x100x96xbf16>, %v: tensor<2x4x100x96xbf16>) -> tensor<2x4x100x96xbf16> {
  %o = graph.attention %q, %k, %v {scale = 0.1 : f64, causal = true} : (tensor<2x4x100x96xbf16>, tensor<2x4x100x96xbf16>, tensor<2x4x100x96xbf16>) -> tensor<2x4x100x96xbf16>
  func.return %o : tensor<2x4x100x96xbf16>
}

// CHECK-LABEL: func.func @mapped_attention_0
// CHECK-SAME:    gpu.block_size = 384 : i64
// CHECK-SAME:    gpu.tensor_maps = [{argument = 0 : i64, shape = array<i64: 2, 4, 100, 96>, strides = array<i64: 38400, 9600, 96, 1>, offset = 0 : i64, box_rows = 128 : i64, element = bf16},
// CHECK-SAME:      {argument = 1 : i64, {{.*}} box_rows = 128 : i64, element = bf16}, {argument = 2 : i64, {{.*}} box_rows = 128 : i64, element = bf16}]
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG:     %[[CONSUMERS:.*]] = arith.constant 256 : i32
// CHECK-COUNT-3: func.call @ptx.mbarrier.init.shared.b64(%{{.*}}, %[[ONE]])
// CHECK-COUNT-3: func.call @ptx.mbarrier.init.shared.b64(%{{.*}}, %[[CONSUMERS]])
// CHECK-NEXT:    func.call @ptx.fence.mbarrier_init.release.cluster()
// CHECK:         func.call @llvm.nvvm.barrier0()
// CHECK-NOT:     func.call @llvm.nvvm.barrier0()
// CHECK:         scf.if
// CHECK-NEXT:      func.call @ptx.setmaxnreg.dec.sync.aligned.u32.24()
// CHECK-COUNT-3:   func.call @"ptx.fence.proxy.tensormap::generic.acquire.gpu"
// CHECK:           func.call @ptx.mbarrier.wait.parity
// CHECK:           func.call @ptx.mbarrier.arrive.expect_tx.shared.b64
// CHECK-COUNT-6:   func.call @ptx.cp.async.bulk.tensor.4d
// CHECK:           scf.for
// CHECK:             func.call @ptx.mbarrier.wait.parity
// CHECK:             func.call @ptx.mbarrier.arrive.expect_tx.shared.b64
// CHECK-COUNT-4:     func.call @ptx.cp.async.bulk.tensor.4d
// CHECK-NOT:         func.call @ptx.cp.async.bulk.tensor
// CHECK:         scf.if
// CHECK-NEXT:      func.call @ptx.setmaxnreg.inc.sync.aligned.u32.240()
// CHECK-NOT:       func.call @ptx.cp.async
// CHECK-NOT:       func.call @ptx.mbarrier.arrive.expect_tx
// CHECK:           func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.fresh(
// CHECK-NOT:       func.call @ptx.cp.async
// CHECK:         func.func private @ptx.tensor_maps.address() -> i64

// P16-LABEL: func.func @mapped_attention_0
// P16-SAME:    gpu.block_size = 384 : i64
// P16:         func.call @ptx.setmaxnreg.inc.sync.aligned.u32.240()
// P16:         func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.a_registers.fresh(
// P16-NOT:     func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.fresh(

// Without the option every thread copies: no maps, no producer.
// COPIES-LABEL: func.func @mapped_attention_0
// COPIES-SAME:    gpu.block_size = 256 : i64
// COPIES-NOT:     gpu.tensor_maps
// COPIES-NOT:     setmaxnreg
// COPIES:         func.call @ptx.cp.async.cg.shared.global.16
// COPIES-NOT:     cp.async.bulk

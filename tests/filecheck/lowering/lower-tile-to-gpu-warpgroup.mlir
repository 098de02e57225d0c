// gpu-pipeline{warpgroup_mma=true} (what strata.compile runs on an sm_90 device): 16-bit
// matmuls get 128x128 tiles 64 deep (lower-graph-to-tile{matmul_16bit_k=64}) and their k
// loop runs wgmma.mma_async on two warpgroups (256 threads, gpu.warpgroup_mma): four stages
// of 128 x 64 a and 64 x 128 b (32 KiB) in dynamic shared memory plus 1008 bytes to align
// the first to 1024, two steps issued before the loop, then per step: wait for all but the
// newest cp.async group, fence the landed copies for the async proxy, one barrier, issue
// the step two ahead (a thread's copies at constant offsets from its first), four m64n128k16 products from descriptors (each a constant i64 add
// to the stage's first: no divide per product; b N-major for a @ b,
// K-major for x @ wᵀ), commit, wait for the previous step's products (wait_group 1); the
// last wait (0) follows the loop and the epilogue reads the same registers. @wide: a k of
// 2048 and 128 x 256 output tiles (matmul_16bit_n=256) that fill whole waves of the SMs
// (512 tiles: 97% of four waves of 132): m64n256k16, four stages of 48 KiB. @odd: k = 100 is no multiple of 8 elements, so no 16-byte chunks, and
// the matmul is too small (105 MFLOP) to pay for a copy of a: the element-staged mma.sync
// path. @padded: the same k in a matmul big enough: a is copied into rows of 104 elements,
// a second kernel zeroes the 4 padding columns, and the matmul reads it on the warpgroup
// path (b keeps its 100 rows; the padded k's products are zero). @wgrad: a weight
// gradient xᵀ @ dy reads x transposed in place: no copy kernel, x's tiles staged M-major
// (64-row strips of k rows), the products with the transpose-a bit.
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true}" | filecheck %s
// RUN: strata-translate %s --emit=ptx --arch sm_90a | filecheck %s --check-prefix=PTX
// RUN: strata-translate %s --emit=ptx --arch sm_90 | filecheck %s --check-prefix=SM90

// CHECK-LABEL: func.func @padded(
// CHECK:         %[[A:.*]] = tile.buffer {{.*}} : memref<212992xbf16>
// CHECK:         tile.launch @padded_matmul_a_aligned_{{[0-9]+}}(%a, %[[A]])
// CHECK:         tile.launch @padded_matmul_a_padding_{{[0-9]+}}(%{{.*}}, %[[A]])
// CHECK:         tile.launch @padded_matmul_{{[0-9]+}}(%[[A]], %b,
// CHECK-LABEL: func.func @wgrad(
// CHECK-NOT:     tile.launch @wgrad_matmul_a_aligned
// CHECK:         tile.launch @wgrad_matmul_0(%x, %dy,
// CHECK-LABEL: func.func @main_matmul_0(
// CHECK-SAME:    %begin: index, %end: index)
// CHECK-SAME:    gpu.block_size = 256 : i64, gpu.shared_bytes = 0 : i64, gpu.dynamic_shared_bytes = 166896 : i64, gpu.barriers = 4 : i64, gpu.warpgroup_mma, tile.grid = array<i64: 16, 16>, gpu.persistent
// CHECK:         %[[STAGED:.*]] = memref.alloca() {gpu.dynamic_offset = 132080 : i64, alignment = 16 : i64} : memref<128x68xi32, 3 : i64>
// CHECK:         memref.alloca() {gpu.dynamic_offset = 0 : i64, alignment = 16 : i64} : memref<66040xbf16, 3 : i64>
// CHECK:         %[[FIRST:.*]] = arith.addi %begin, %{{.*}} : index
// CHECK:         %[[BLOCKS:.*]] = arith.index_cast %nctaid : i32 to index
// CHECK:         %[[FIRST_VALID:.*]] = arith.cmpi ult, %[[FIRST]], %end : index
// CHECK:         scf.if %[[FIRST_VALID]] {
// CHECK-COUNT-8:   func.call @ptx.cp.async.cg.shared.global.16(
// CHECK:         }
// CHECK-NEXT:    func.call @ptx.cp.async.commit_group()
// CHECK:         scf.if %[[FIRST_VALID]] {
// CHECK:         func.call @ptx.cp.async.commit_group()
// CHECK-NOT:     ptx.cp.async
// CHECK:         scf.for %[[TILE:.*]] = %[[FIRST]] to %end step %[[BLOCKS]] iter_args(%[[DONE:.*]] = %{{.*}}) -> (index) {
// CHECK:           %[[NEXT:.*]] = arith.addi %[[TILE]], %[[BLOCKS]] : index
// CHECK:           %[[NEXT_VALID:.*]] = arith.cmpi ult, %[[NEXT]], %end : index
// Steps 0 and 1 (of 4) copy this tile's step two ahead, into the stage of its step counted
// over the block's tiles:
// CHECK:           scf.for %[[KT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK-NEXT:        func.call @ptx.cp.async.wait_group.1()
// CHECK-NEXT:        func.call @"ptx.fence.proxy.async.shared::cta"()
// CHECK-NEXT:        func.call @llvm.nvvm.barrier0()
// CHECK-NEXT:        %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[AHEAD:.*]] = arith.addi %[[KT]], %[[TWO]] : index
// CHECK-NEXT:        %[[GLOBAL:.*]] = arith.addi %[[DONE]], %[[AHEAD]] : index
// CHECK-NEXT:        %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:        arith.remui %[[GLOBAL]], %[[FOUR]] : index
// CHECK-NOT:         scf.if
// A thread's copies differ by constants (no select of the address: a chunk outside copies
// 0 bytes): its second chunk of a's tile is 32 rows, 8192 elements, past its first.
// CHECK:             func.call @ptx.cp.async.cg.shared.global.16(
// CHECK-NEXT:        %[[ROWS:.*]] = arith.constant 32 : index
// CHECK-NEXT:        arith.addi %{{.*}}, %[[ROWS]] : index
// CHECK-NEXT:        %[[APART:.*]] = arith.constant 8192 : index
// CHECK-NEXT:        arith.addi %{{.*}}, %[[APART]] : index
// CHECK:             func.call @ptx.cp.async.commit_group()
// CHECK:             arith.addi %[[DONE]], %[[KT]] : index
// CHECK:             func.call @ptx.wgmma.fence.sync.aligned()
// CHECK-NEXT:        func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major(%[[A0:[0-9]+]], %[[B0:[0-9]+]],
// CHECK-NOT:         arith.divui
// CHECK:             arith.addi %[[A0]], %{{.*}} : i64
// CHECK-NOT:         arith.divui
// CHECK:             arith.addi %[[B0]], %{{.*}} : i64
// CHECK-COUNT-3:     func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major(
// CHECK-NEXT:        func.call @ptx.wgmma.commit_group.sync.aligned()
// CHECK-NEXT:        func.call @ptx.wgmma.wait_group.sync.aligned.1.x64(
// Steps 2 and 3 copy the next tile's steps 0 and 1, where there is a next tile:
// CHECK:           scf.for %[[KT2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK-NEXT:        func.call @ptx.cp.async.wait_group.1()
// CHECK-NEXT:        func.call @"ptx.fence.proxy.async.shared::cta"()
// CHECK-NEXT:        func.call @llvm.nvvm.barrier0()
// CHECK-NEXT:        %[[TWO2:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[AHEAD2:.*]] = arith.addi %[[KT2]], %[[TWO2]] : index
// CHECK-NEXT:        %[[STEPS:.*]] = arith.constant 4 : index
// CHECK-NEXT:        arith.subi %[[AHEAD2]], %[[STEPS]] : index
// CHECK:             scf.if %[[NEXT_VALID]] {
// CHECK-COUNT-8:       func.call @ptx.cp.async.cg.shared.global.16(
// CHECK:             }
// CHECK-NEXT:        func.call @ptx.cp.async.commit_group()
// CHECK:             func.call @ptx.wgmma.wait_group.sync.aligned.1.x64(
// CHECK:           func.call @ptx.wgmma.wait_group.sync.aligned.0.x64(
// The epilogue: each thread's cell pairs packed (cvt.rn.bf16x2.f32) into a shared tile of
// words whose rows are padded by 16 bytes, a barrier, and the tile out in 16-byte chunks
// of rows, eight per thread; then a barrier before the block's next tile.
// CHECK-COUNT-32:  memref.store %{{.*}}, %[[STAGED]][%{{.*}}, %{{.*}}] : memref<128x68xi32, 3 : i64>
// CHECK-NOT:       ptx.st.global.b32
// CHECK:           func.call @llvm.nvvm.barrier0()
// CHECK-COUNT-8:   func.call @ptx.st.global.v4.b32(
// CHECK-NEXT:      func.call @llvm.nvvm.barrier0()
// CHECK-NEXT:      %[[STEPS_DONE:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[DONE_NEXT:.*]] = arith.addi %[[DONE]], %[[STEPS_DONE]] : index
// CHECK-NEXT:      scf.yield %[[DONE_NEXT]] : index
// CHECK-NOT:     ptx.mma.sync
// CHECK-LABEL: func.func @x_wT_matmul_0(
// CHECK-SAME:    gpu.warpgroup_mma
// CHECK-COUNT-4:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16(
// CHECK-LABEL: func.func @wide_matmul_0(
// CHECK-SAME:    gpu.block_size = 256 : i64, gpu.shared_bytes = 0 : i64, gpu.dynamic_shared_bytes = 197616 : i64, gpu.barriers = 3 : i64, gpu.warpgroup_mma, tile.grid = array<i64: 32, 16>, gpu.persistent
// CHECK-COUNT-4:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16.n_major(
// Four 48 KiB stages leave no room for a 66 KiB staged tile: pairs from the fragments.
// CHECK-NOT:       ptx.st.global.v4.b32
// CHECK:           func.call @ptx.st.global.b32(
// CHECK-NOT:       ptx.st.global.v4.b32
// CHECK-LABEL: func.func @odd_matmul_0(
// CHECK-NOT:     gpu.warpgroup_mma
// CHECK-NOT:     ptx.wgmma
// CHECK:         ptx.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-LABEL: func.func @padded_matmul_{{[0-9]+}}(
// CHECK-SAME:    gpu.warpgroup_mma
// CHECK-LABEL: func.func @wgrad_matmul_0(
// CHECK-SAME:    gpu.warpgroup_mma
// CHECK-COUNT-4:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.m_major.n_major(
// CHECK:           func.call @ptx.st.global.v4.b32(
// Rows of 2050 elements do not start 16 bytes apart: each goes out in the 16-byte chunks
// of global memory it covers, a whole chunk as five staged words realigned by a funnel
// shift and one 16-byte store, the partial chunks at its ends element by element.
// CHECK-LABEL: func.func @even_rows_matmul_0(
// CHECK-SAME:    gpu.warpgroup_mma
// CHECK-NOT:       ptx.st.global.b32
// CHECK:           scf.if
// CHECK-COUNT-4:     func.call @ptx.shf.r.clamp.b32(
// CHECK:             func.call @ptx.st.global.v4.b32(
// CHECK:           } else {
// CHECK:             memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<4198400xbf16>
// CHECK-NOT:       ptx.st.global.b32
// CHECK:           func.return

// PTX:       .target sm_90a
// PTX-LABEL: .entry main_matmul_0(
// PTX:       fence.proxy.async.shared::cta;
// PTX:       wgmma.fence.sync.aligned;
// PTX:       wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 0, 1;
// PTX:       wgmma.commit_group.sync.aligned;
// PTX:       wgmma.wait_group.sync.aligned 1;
// PTX:       wgmma.wait_group.sync.aligned 0;
// PTX-LABEL: .entry x_wT_matmul_0(
// PTX:       wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, 1, 1, 1, 0, 0;
// PTX-LABEL: .entry wide_matmul_0(
// PTX:       wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// PTX-LABEL: .entry odd_matmul_0(
// PTX-NOT:   wgmma
// PTX:       mma.sync.aligned.m16n8k16
// PTX-LABEL: .entry wgrad_matmul_0(
// PTX:       wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 1, 1;

// SM90:     .target sm_90{{$}}
// SM90-NOT: wgmma

func.func @main(%a: tensor<2048x256xbf16>, %b: tensor<256x2048xbf16>) -> tensor<2048x2048xbf16> {
  %0 = "graph.matmul"(%a, %b) : (tensor<2048x256xbf16>, tensor<256x2048xbf16>) -> tensor<2048x2048xbf16>
  func.return %0 : tensor<2048x2048xbf16>
}

func.func @x_wT(%x: tensor<2048x256xf16>, %w: tensor<2048x256xf16>) -> tensor<2048x2048xf16> {
  %0 = "graph.matmul"(%x, %w) <{transpose_b = true}> : (tensor<2048x256xf16>, tensor<2048x256xf16>) -> tensor<2048x2048xf16>
  func.return %0 : tensor<2048x2048xf16>
}

func.func @wide(%a: tensor<4096x2048xbf16>, %b: tensor<2048x4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = "graph.matmul"(%a, %b) : (tensor<4096x2048xbf16>, tensor<2048x4096xbf16>) -> tensor<4096x4096xbf16>
  func.return %0 : tensor<4096x4096xbf16>
}

func.func @odd(%a: tensor<256x100xbf16>, %b: tensor<100x2048xbf16>) -> tensor<256x2048xbf16> {
  %0 = "graph.matmul"(%a, %b) : (tensor<256x100xbf16>, tensor<100x2048xbf16>) -> tensor<256x2048xbf16>
  func.return %0 : tensor<256x2048xbf16>
}

func.func @padded(%a: tensor<2048x100xbf16>, %b: tensor<100x2048xbf16>) -> tensor<2048x2048xbf16> {
  %0 = "graph.matmul"(%a, %b) : (tensor<2048x100xbf16>, tensor<100x2048xbf16>) -> tensor<2048x2048xbf16>
  func.return %0 : tensor<2048x2048xbf16>
}

func.func @wgrad(%x: tensor<1024x768xbf16>, %dy: tensor<1024x3072xbf16>) -> tensor<768x3072xbf16> {
  %0 = "graph.matmul"(%x, %dy) <{transpose_a = true}> : (tensor<1024x768xbf16>, tensor<1024x3072xbf16>) -> tensor<768x3072xbf16>
  func.return %0 : tensor<768x3072xbf16>
}

func.func @even_rows(%x: tensor<2048x256xbf16>, %w: tensor<2050x256xbf16>) -> tensor<2048x2050xbf16> {
  %0 = "graph.matmul"(%x, %w) <{transpose_b = true}> : (tensor<2048x256xbf16>, tensor<2050x256xbf16>) -> tensor<2048x2050xbf16>
  func.return %0 : tensor<2048x2050xbf16>
}

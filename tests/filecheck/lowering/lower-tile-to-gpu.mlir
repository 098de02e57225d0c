// lower-tile-to-gpu: every tile.kernel becomes a func.func with gpu.kernel. The tile grid is
// the CUDA grid (block = begin + ctaid.x, delinearized into the program ids) and the block's
// threads cooperate on each tile. Five kernels, split into files with --split-input-file:
//
// 1. A fused elementwise kernel: 2x1024 tiles, 8 elements per thread, so straight-line code
//    (element tid + k * 256, last axis fastest: coalesced; the row of each element is a
//    constant); reads clamp their indices into the valid extent of edge tiles, stores are
//    guarded by an scf.if. No shared memory, no barriers. Its PTX has global loads/stores, libdevice's expf, IEEE mul/add unless
//    fuse-fma ran (then fma.rn.f32).
// 2. A softmax of rows shorter than the block: each row on 8 lanes of a warp, reduced by
//    warp shuffles (shfl.sync.bfly) into registers; no shared memory, no barriers.
// 3. A softmax of rows too short for 8 lanes: reductions write shared-memory tiles (memory
//    space 3) through warp shuffles, and a barrier stands only where a thread reads what
//    another wrote.
// 4. A matmul with a k loop (100 = 4 tiles of 32), in 32x32 output tiles (small: at least
//    132 tiles are wanted, one per SM): a and b staged k-major in shared memory, each of the
//    128 threads owns a 2x4 micro-tile of the accumulator, carried in registers through the
//    k loop (math.fma) and stored from there; 2 barriers (operands staged -> read; read ->
//    restaged in the next iteration) against 3 naive ones.
// 5. A softmax over 5000-wide rows (3 chunks of 2048: the running max and sum are loop-carried
//    shared tiles, taken in one online pass, then the write pass): 3 dependency-placed
//    barriers against 7 with barriers=naive (a barrier before and after every shared-memory
//    write).
// RUN: strata-opt %s --split-input-file -p "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile{tile_elements=2048 matmul_m=64 matmul_n=64 matmul_k=32 matmul_min_tiles=132},token-dce,lower-tile-to-gpu" | filecheck %s
// RUN: strata-opt %s --split-input-file -p "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile{tile_elements=2048 matmul_m=64 matmul_n=64 matmul_k=32 matmul_min_tiles=132},token-dce,lower-tile-to-gpu{barriers=naive}" | filecheck %s --check-prefix=NAIVE
// RUN: strata-translate %s --emit=ptx | filecheck %s --check-prefix=PTX
// RUN: strata-translate %s --emit=ptx --arch sm_80 | filecheck %s --check-prefix=SM80
// RUN: strata-opt %s -p "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile{matmul_m=64 matmul_n=64 matmul_k=64},token-dce,fuse-fma" | strata-translate - --emit=ptx | filecheck %s --check-prefix=FMA

func.func @main(%a: tensor<7x1000xf32>, %b: tensor<1000xf32>) -> tensor<7x1000xf32> {
  %0 = "graph.mul"(%a, %b) : (tensor<7x1000xf32>, tensor<1000xf32>) -> tensor<7x1000xf32>
  %1 = "graph.add"(%0, %a) : (tensor<7x1000xf32>, tensor<7x1000xf32>) -> tensor<7x1000xf32>
  %2 = "graph.exp"(%1) : (tensor<7x1000xf32>) -> tensor<7x1000xf32>
  func.return %2 : tensor<7x1000xf32>
}

// CHECK-NOT:   tile.kernel
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    %{{[0-9]+}}: memref<7000xf32>, %{{[0-9]+}}: memref<1000xf32>, %{{[0-9]+}}: memref<7000xf32>, %begin: index, %end: index)
// CHECK-SAME:    attributes {gpu.kernel, gpu.block_size = 256 : i64, gpu.shared_bytes = 0 : i64, gpu.barriers = 0 : i64, tile.grid = array<i64: 4, 1>
// CHECK-NEXT:    %ctaid = func.call @llvm.nvvm.read.ptx.sreg.ctaid.x() : () -> i32
// CHECK-NEXT:    [[CTAID:%[0-9]+]] = arith.index_cast %ctaid : i32 to index
// CHECK-NEXT:    [[BLOCK:%[0-9]+]] = arith.addi %begin, [[CTAID]] : index
// CHECK-NEXT:    %tid = func.call @llvm.nvvm.read.ptx.sreg.tid.x() : () -> i32
// CHECK-NEXT:    [[TID:%[0-9]+]] = arith.index_cast %tid : i32 to index
// CHECK-NEXT:    [[THREADS:%[0-9]+]] = arith.constant 256 : index
// CHECK:         arith.remui [[BLOCK]], {{%[0-9]+}} : index
// Element 0 of this thread: row 0 (a constant: the block covers a quarter of a row), column
// tid; reads clamp both into the valid extent of the edge tile.
// CHECK:         [[ROW:%[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    [[IN_I:%[0-9]+]] = arith.cmpi ult, [[ROW]], {{%[0-9]+}} : index
// CHECK:         arith.minui [[ROW]], {{%[0-9]+}} : index
// CHECK-NEXT:    [[IN_J:%[0-9]+]] = arith.cmpi ult, [[TID]], {{%[0-9]+}} : index
// CHECK:         arith.minui [[TID]], {{%[0-9]+}} : index
// CHECK-NEXT:    [[IN:%[0-9]+]] = arith.andi [[IN_I]], [[IN_J]] : i1
// CHECK:         memref.load
// CHECK:         memref.load
// CHECK:         arith.mulf
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    math.exp
// The store alone is guarded.
// CHECK:         scf.if [[IN]] {
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// ... and 7 more elements per thread.
// CHECK-COUNT-7: memref.store
// CHECK-NOT:     memref.store
// CHECK:         func.return
// CHECK:       func.func private @llvm.nvvm.read.ptx.sreg.ctaid.x() -> i32
// CHECK:       func.func private @llvm.nvvm.read.ptx.sreg.tid.x() -> i32
// CHECK-NOT:   memref.alloca
// NAIVE:       gpu.barriers = 0

// PTX:       .target sm_90
// PTX:       .visible .entry main_fused_0(
// PTX:       .maxntid 256, 1, 1
// PTX-NOT:   bar.sync
// PTX-DAG:   mov.u32 {{.*}}%tid.x;
// PTX-DAG:   mov.u32 {{.*}}%ctaid.x;
// PTX:       ld.global.nc.f32
// PTX:       ld.global.nc.f32
// PTX:       mul.rn.f32
// PTX-NEXT:  add.rn.f32
// PTX:       ex2.approx.ftz.f32
// PTX:       st.global.f32
// PTX-NOT:   bar.sync

// SM80:      .target sm_80
// SM80:      st.global.f32

// FMA:       ld.global.nc.f32
// FMA:       ld.global.nc.f32
// FMA-NEXT:  fma.rn.f32
// FMA:       ex2.approx.ftz.f32
// FMA:       st.global.f32

// -----

func.func @softmax(%x: tensor<17x33xf32>) -> tensor<17x33xf32> {
  %0 = "graph.softmax"(%x) <{axis = -1 : i64}> : (tensor<17x33xf32>) -> tensor<17x33xf32>
  func.return %0 : tensor<17x33xf32>
}

// Rows shorter than the block (32 x 64 tiles, 8 elements per thread): each row lives on 8
// lanes of one warp, so the row is loaded once into registers, each reduction is a
// butterfly over offsets 4, 2, 1 that leaves the row's result in all 8 lanes, and nothing
// goes through shared memory: no barriers.
// CHECK-LABEL: func.func @softmax_softmax_0(
// CHECK-SAME:    gpu.shared_bytes = 0 : i64, gpu.barriers = 0 : i64
// CHECK-NOT:     memref.alloca
// CHECK-COUNT-8: memref.load %0
// CHECK-NOT:     memref.load
// CHECK:         func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK:         func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK:         func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK-NOT:     memref.load
// CHECK-COUNT-8: math.exp
// CHECK-NOT:     math.exp
// CHECK:         func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK:         func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK:         func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK-NOT:     math.exp
// CHECK:         arith.divf
// CHECK-NOT:     arith.divf
// The stores are guarded (rows 17.. and columns 33.. of the tile are outside).
// CHECK:         scf.if
// CHECK-NEXT:      memref.store
// CHECK-NOT:     func.call @llvm.nvvm.barrier0()
// CHECK:         func.return
// barriers=naive still puts one after each shared row of results, written before the
// lowering finds that no reader takes it from there.
// NAIVE-LABEL: func.func @softmax_softmax_0(
// NAIVE-SAME:    gpu.shared_bytes = 0 : i64, gpu.barriers = 2 : i64

// PTX-LABEL: .visible .entry softmax_softmax_0(
// PTX:       shfl.sync.bfly.b32
// PTX-NOT:   bar.sync
// PTX:       ret;

// -----

func.func @short_rows(%x: tensor<33x7xf32>) -> tensor<33x7xf32> {
  %0 = "graph.softmax"(%x) <{axis = -1 : i64}> : (tensor<33x7xf32>) -> tensor<33x7xf32>
  func.return %0 : tensor<33x7xf32>
}

// CHECK-LABEL: func.func @short_rows_softmax_0(
// CHECK-SAME:    gpu.barriers = 2 : i64
// CHECK-COUNT-2: memref.alloca() {alignment = 16 : i64} : memref<64x1xf32, 3 : i64>
// Rows of 7 (64 x 8 tiles, 2 elements per thread) are too short to give a row 8 lanes:
// the max: 4 lanes per row fold strided slices, then a butterfly over offsets 2, 1.
// CHECK:         scf.for
// CHECK:           arith.maximumf {{.*}} fastmath<reassoc> : f32
// CHECK:           func.call @llvm.nvvm.shfl.sync.bfly.f32({{.*}}) : (i32, f32, i32, i32) -> f32
// CHECK:           func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK-NOT:       func.call @llvm.nvvm.shfl.sync.bfly.f32
// CHECK:           memref.store {{%[0-9]+}}, [[MAX:%[0-9]+]][
// CHECK:         func.call @llvm.nvvm.barrier0() : () -> ()
// The sum reads the max written by other lanes (after the barrier).
// CHECK:         scf.for
// CHECK:           memref.load [[MAX]]
// CHECK:           math.exp
// CHECK:           arith.addf {{.*}} fastmath<reassoc> : f32
// CHECK:           memref.store {{%[0-9]+}}, [[SUM:%[0-9]+]][
// CHECK:         func.call @llvm.nvvm.barrier0() : () -> ()
// The normalization: straight-line code, 2 elements per thread, stores guarded.
// CHECK-NOT:     scf.for
// CHECK:         memref.load [[MAX]]
// CHECK:         math.exp
// CHECK:         memref.load [[SUM]]
// CHECK:         arith.divf
// CHECK:         scf.if
// CHECK-NEXT:      memref.store
// CHECK-NOT:     func.call @llvm.nvvm.barrier0()
// CHECK:         func.return
// NAIVE-LABEL: func.func @short_rows_softmax_0(
// NAIVE-SAME:    gpu.barriers = 2 : i64

// PTX-LABEL: .visible .entry short_rows_softmax_0(
// PTX:       shfl.sync.bfly.b32
// PTX:       bar.sync 0;
// PTX:       bar.sync 0;
// PTX-NOT:   bar.sync
// PTX:       ret;

// -----

func.func @matmul(%a: tensor<17x100xf32>, %b: tensor<100x33xf32>) -> tensor<17x33xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<17x100xf32>, tensor<100x33xf32>) -> tensor<17x33xf32>
  func.return %0 : tensor<17x33xf32>
}

// CHECK-LABEL: func.func @matmul_matmul_0(
// CHECK-SAME:    gpu.block_size = 128 : i64
// CHECK-SAME:    gpu.barriers = 2 : i64
// Only a and b are in shared memory, staged k-major ([k][m + 4], [k][n + 4]); the
// accumulator is in registers.
// CHECK-COUNT-2: memref.alloca() {alignment = 16 : i64} : memref<32x36xf32, 3 : i64>
// CHECK-NOT:     memref.alloca
// The k loop over 4 tiles carries this thread's 8 cells: stage, barrier, fma, barrier
// before restaging.
// CHECK:         {{(%[0-9]+, ){7}%[0-9]+}} = scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:           memref.store {{%[0-9]+}}, [[A:%[0-9]+]][
// CHECK:           memref.store {{%[0-9]+}}, [[B:%[0-9]+]][
// CHECK:           func.call @llvm.nvvm.barrier0() : () -> ()
// CHECK:           scf.for {{.*}} iter_args
// CHECK:             memref.load [[A]]
// CHECK:             memref.load [[B]]
// CHECK:             math.fma
// CHECK:           func.call @llvm.nvvm.barrier0() : () -> ()
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// The store runs over the thread's own cells, straight from registers: no barrier.
// CHECK-NOT:     func.call @llvm.nvvm.barrier0()
// CHECK-COUNT-8: memref.store {{%[0-9]+}}, %2[
// CHECK:         func.return
// NAIVE-LABEL: func.func @matmul_matmul_0(
// NAIVE-SAME:    gpu.barriers = 3 : i64

// PTX-LABEL: .visible .entry matmul_matmul_0(
// PTX:       ld.shared.v4.f32
// PTX:       fma.rn.f32

// -----

func.func @long_rows(%x: tensor<3x5000xf32>) -> tensor<3x5000xf32> {
  %0 = "graph.softmax"(%x) <{axis = -1 : i64}> : (tensor<3x5000xf32>) -> tensor<3x5000xf32>
  func.return %0 : tensor<3x5000xf32>
}

// CHECK-LABEL: func.func @long_rows_softmax_0(
// CHECK-SAME:    gpu.barriers = 3 : i64
// NAIVE-LABEL: func.func @long_rows_softmax_0(
// NAIVE-SAME:    gpu.barriers = 7 : i64
// PTX-LABEL: .visible .entry long_rows_softmax_0(
// PTX-COUNT-3: bar.sync 0;
// PTX-NOT:   bar.sync

// lower-tile-to-gpu (GPU, elementwise slice of issue 7): a fused elementwise kernel becomes a
// func.func with gpu.kernel; the tile grid is the CUDA grid (block = begin + ctaid.x,
// delinearized into the program ids) and the block's threads split the tile with a
// thread-strided loop (tid.x to the tile's element count, step ntid.x), last axis fastest;
// edge tiles are masked by an scf.if on the partial axes (here the 1000-wide axis of a
// 1024-wide tile and the 7-row axis of a 4-row tile). No barriers, no shared memory, no
// stack tiles. Then the emitted ptx has global loads/stores, libdevice's expf (ex2.approx), IEEE
// mul/add unless fuse-fma ran (then fma.rn.f32).
// RUN: strata-opt %s -p fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile,token-dce,lower-tile-to-gpu | filecheck %s
// RUN: strata-translate %s --emit=ptx | filecheck %s --check-prefix=PTX
// RUN: strata-translate %s --emit=ptx --arch sm_80 | filecheck %s --check-prefix=SM80
// RUN: strata-opt %s -p fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile,token-dce,fuse-fma | strata-translate - --emit=ptx | filecheck %s --check-prefix=FMA

func.func @main(%a: tensor<7x1000xf32>, %b: tensor<1000xf32>) -> tensor<7x1000xf32> {
  %0 = "graph.mul"(%a, %b) : (tensor<7x1000xf32>, tensor<1000xf32>) -> tensor<7x1000xf32>
  %1 = "graph.add"(%0, %a) : (tensor<7x1000xf32>, tensor<7x1000xf32>) -> tensor<7x1000xf32>
  %2 = "graph.exp"(%1) : (tensor<7x1000xf32>) -> tensor<7x1000xf32>
  func.return %2 : tensor<7x1000xf32>
}

// CHECK-NOT:   tile.kernel
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    %{{[0-9]+}}: memref<7000xf32>, %{{[0-9]+}}: memref<1000xf32>, %{{[0-9]+}}: memref<7000xf32>, %begin: index, %end: index)
// CHECK-SAME:    attributes {gpu.kernel, gpu.block_size = 256 : i64, tile.grid = array<i64: 2, 1>
// CHECK-NEXT:    %ctaid = func.call @llvm.nvvm.read.ptx.sreg.ctaid.x() : () -> i32
// CHECK-NEXT:    [[CTAID:%[0-9]+]] = arith.index_cast %ctaid : i32 to index
// CHECK-NEXT:    [[BLOCK:%[0-9]+]] = arith.addi %begin, [[CTAID]] : index
// CHECK-NEXT:    %tid = func.call @llvm.nvvm.read.ptx.sreg.tid.x() : () -> i32
// CHECK-NEXT:    [[TID:%[0-9]+]] = arith.index_cast %tid : i32 to index
// CHECK-NEXT:    %ntid = func.call @llvm.nvvm.read.ptx.sreg.ntid.x() : () -> i32
// CHECK-NEXT:    [[NTID:%[0-9]+]] = arith.index_cast %ntid : i32 to index
// CHECK:         arith.remui [[BLOCK]], {{%[0-9]+}} : index
// CHECK:         [[COUNT:%[0-9]+]] = arith.constant 4096 : index
// CHECK-NEXT:    scf.for [[E:%[0-9]+]] = [[TID]] to [[COUNT]] step [[NTID]] {
// CHECK-NEXT:      [[W:%[0-9]+]] = arith.constant 1024 : index
// CHECK-NEXT:      [[J:%[0-9]+]] = arith.remui [[E]], [[W]] : index
// CHECK-NEXT:      [[I:%[0-9]+]] = arith.divui [[E]], [[W]] : index
// CHECK-NEXT:      [[IN_I:%[0-9]+]] = arith.cmpi ult, [[I]], {{%[0-9]+}} : index
// CHECK-NEXT:      [[IN_J:%[0-9]+]] = arith.cmpi ult, [[J]], {{%[0-9]+}} : index
// CHECK-NEXT:      [[IN:%[0-9]+]] = arith.andi [[IN_I]], [[IN_J]] : i1
// CHECK-NEXT:      scf.if [[IN]] {
// CHECK:             memref.load
// CHECK:             memref.load
// CHECK:             arith.mulf
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        math.exp
// CHECK:             memref.store
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK:       func.func private @llvm.nvvm.read.ptx.sreg.ctaid.x() -> i32
// CHECK:       func.func private @llvm.nvvm.read.ptx.sreg.tid.x() -> i32
// CHECK:       func.func private @llvm.nvvm.read.ptx.sreg.ntid.x() -> i32
// CHECK-NOT:   memref.alloca

// PTX:       .target sm_90
// PTX:       .visible .entry main_fused_0(
// PTX:       .maxntid 256, 1, 1
// PTX-NOT:   bar.sync
// PTX:       mov.u32 {{.*}}%tid.x;
// PTX:       mov.u32 {{.*}}%ctaid.x;
// PTX:       mov.u32 {{.*}}%ntid.x;
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

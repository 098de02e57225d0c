// An mma accumulator's 16-bit epilogue stores pairs of adjacent cells as one 32-bit word:
// cvt.rn.bf16x2.f32 (f16x2 for f16) packs the two rounded values, st.global.b32 writes them
// at the first cell's address, and no element-wise store of the output remains. @odd: an
// odd last dimension (a pair could straddle the edge) takes no pairs: the 16-bit results
// go to a shared tile first (each lane its own cells), and after a barrier the block
// stores whole rows from it, element by element; @single: f32 results are not packed.
// RUN: strata-opt %s -p "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile{tile_elements=2048 matmul_m=64 matmul_n=64 matmul_k=32 matmul_min_tiles=132},token-dce,lower-tile-to-gpu" | filecheck %s
// RUN: strata-translate %s --emit=ptx --arch sm_80 | filecheck %s --check-prefix=PTX

func.func @main(%a: tensor<256x96xbf16>, %b: tensor<96x256xbf16>) -> tensor<256x256xbf16> {
  %0 = "graph.matmul"(%a, %b) : (tensor<256x96xbf16>, tensor<96x256xbf16>) -> tensor<256x256xbf16>
  %1 = "graph.gelu"(%0) {approximate = "tanh"} : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
  func.return %1 : tensor<256x256xbf16>
}

func.func @half(%a: tensor<256x96xf16>, %b: tensor<96x256xf16>) -> tensor<256x256xf16> {
  %0 = "graph.matmul"(%a, %b) : (tensor<256x96xf16>, tensor<96x256xf16>) -> tensor<256x256xf16>
  func.return %0 : tensor<256x256xf16>
}

func.func @odd(%a: tensor<256x96xbf16>, %b: tensor<96x255xbf16>) -> tensor<256x255xbf16> {
  %0 = "graph.matmul"(%a, %b) : (tensor<256x96xbf16>, tensor<96x255xbf16>) -> tensor<256x255xbf16>
  func.return %0 : tensor<256x255xbf16>
}

func.func @single(%a: tensor<64x96xf32>, %b: tensor<96x64xf32>) -> tensor<64x64xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<64x96xf32>, tensor<96x64xf32>) -> tensor<64x64xf32>
  func.return %0 : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @main_matmul_epilogue_0
// CHECK:         scf.for
// CHECK:         math.tanh
// CHECK:         func.call @ptx.cvt.rn.bf16x2.f32
// CHECK:         func.call @ptx.st.global.b32
// CHECK-NOT:     memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<65536xbf16>
// CHECK:         func.return

// CHECK-LABEL: func.func @half_matmul_0
// CHECK:         func.call @ptx.cvt.rn.f16x2.f32
// CHECK:         func.call @ptx.st.global.b32
// CHECK-NOT:     memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<65536xf16>
// CHECK:         func.return

// CHECK-LABEL: func.func @odd_matmul_0
// CHECK:         %[[STAGED:.*]] = memref.alloca() {alignment = 16 : i64} : memref<32x32xbf16, 3 : i64>
// CHECK-NOT:     @ptx.st.global.b32
// CHECK:         memref.store %{{.*}}, %[[STAGED]][%{{.*}}, %{{.*}}] : memref<32x32xbf16, 3 : i64>
// CHECK:         func.call @llvm.nvvm.barrier0()
// CHECK:         memref.load %[[STAGED]]
// CHECK:         memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<65280xbf16>
// CHECK-NOT:     @ptx.st.global.b32
// CHECK:         func.return

// CHECK-LABEL: func.func @single_matmul_0
// CHECK-NOT:     @ptx.st.global.b32
// CHECK:         func.return

// PTX-LABEL: .entry main_matmul_epilogue_0
// PTX:         cvt.rn.bf16x2.f32
// PTX:         st.global.b32

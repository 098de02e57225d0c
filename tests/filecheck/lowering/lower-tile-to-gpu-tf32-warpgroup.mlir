// gpu-pipeline{warpgroup_mma=true allow_tf32=true} (what strata.compile(..., allow_tf32=True)
// runs on an sm_90 device): an f32 matmul of enough work, its k in 16-byte chunks, gets
// 128 x 128 tiles 32 deep (one 128-byte row; lower-graph-to-tile{matmul_tf32=true}) and
// the m64n128k8 TF32 warpgroup product, which takes both operands K-major: @main's b, read
// along n, is first copied with its last two axes swapped (@main_matmul_transpose_b); the
// products read the f32 bits as they are (no cvt.rna, no mma.sync), and the f32 results
// leave through the staged epilogue in 16-byte chunks. @x_wT reads w along k in place:
// no copy. @small (256^3) is too little work for the copy: mma.sync's TF32 path, 64 x 64
// tiles, operands rounded to TF32 (cvt.rna).
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true allow_tf32=true}" | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK:         %[[BT:.*]] = tile.buffer {{.*}} : memref<1048576xf32>
// CHECK:         tile.launch @main_matmul_transpose_b_{{[0-9]+}}(%b, %[[BT]])
// CHECK:         tile.launch @main_matmul_{{[0-9]+}}(%a, %[[BT]],
// CHECK-LABEL: func.func @x_wT(
// CHECK-NOT:     _transpose_
// CHECK:         tile.launch @x_wT_matmul_0(%x, %w,
// CHECK-LABEL: func.func @main_matmul_{{[0-9]+}}(
// CHECK-SAME:    gpu.block_size = 256 : i64, {{.*}}, gpu.warpgroup_mma, tile.grid = array<i64: 16, 16>, gpu.persistent
// CHECK:           memref.alloca() {{.*}} : memref<128x132xf32, 3 : i64>
// CHECK-NOT:       cvt.rna
// CHECK-COUNT-4:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32(
// CHECK-NOT:       ptx.mma.sync
// CHECK:           func.call @ptx.st.global.v4.b32(
// CHECK-LABEL: func.func @x_wT_matmul_0(
// CHECK-SAME:    gpu.warpgroup_mma
// CHECK-COUNT-4:   func.call @ptx.wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32(
// CHECK-LABEL: func.func @small_matmul_0(
// CHECK-NOT:     gpu.warpgroup_mma
// CHECK-NOT:     ptx.wgmma
// CHECK:         ptx.cvt.rna.tf32.f32
// CHECK:         ptx.mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32

func.func @main(%a: tensor<2048x512xf32>, %b: tensor<512x2048xf32>) -> tensor<2048x2048xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<2048x512xf32>, tensor<512x2048xf32>) -> tensor<2048x2048xf32>
  func.return %0 : tensor<2048x2048xf32>
}

func.func @x_wT(%x: tensor<2048x256xf32>, %w: tensor<2048x256xf32>) -> tensor<2048x2048xf32> {
  %0 = "graph.matmul"(%x, %w) <{transpose_b = true}> : (tensor<2048x256xf32>, tensor<2048x256xf32>) -> tensor<2048x2048xf32>
  func.return %0 : tensor<2048x2048xf32>
}

func.func @small(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  func.return %0 : tensor<256x256xf32>
}

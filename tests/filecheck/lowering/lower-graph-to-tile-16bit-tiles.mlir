// lower-graph-to-tile{matmul_16bit_scale=2} (the GPU pipeline's): a matmul of bf16 or f16
// operands gets matmul_m and matmul_n twice as large (128 x 128 output tiles here, k tiles
// of 32: the tensor cores keep the accumulator in registers) and matmul_bytes four times;
// an f32 matmul keeps 64 x 64. With transpose_b, a 16-bit b is not copied transposed first
// (pretranspose_rows applies to the f32 matmul only).
// RUN: strata-opt %s -p "lower-graph-to-tile{matmul_m=64 matmul_n=64 matmul_k=32 dot_k=32 matmul_bytes=40960 pretranspose_rows=256 matmul_16bit_scale=2}" | filecheck %s

func.func @wide(%a: tensor<1024x256xbf16>, %b: tensor<1024x256xbf16>) -> tensor<1024x1024xbf16> {
  %0 = "graph.matmul"(%a, %b) <{transpose_b = true}> : (tensor<1024x256xbf16>, tensor<1024x256xbf16>) -> tensor<1024x1024xbf16>
  func.return %0 : tensor<1024x1024xbf16>
}

func.func @single(%a: tensor<1024x256xf32>, %b: tensor<1024x256xf32>) -> tensor<1024x1024xf32> {
  %0 = "graph.matmul"(%a, %b) <{transpose_b = true}> : (tensor<1024x256xf32>, tensor<1024x256xf32>) -> tensor<1024x1024xf32>
  func.return %0 : tensor<1024x1024xf32>
}

// CHECK-LABEL: func.func @wide
// CHECK-NEXT:    tile.buffer
// CHECK-NEXT:    tile.launch @wide_matmul_0(%a, %b,
// CHECK-LABEL: func.func @single
// CHECK:         tile.launch @single_matmul_transpose_b_0(%b,
// CHECK:         tile.launch @single_matmul_1(%a,
// CHECK-LABEL: tile.kernel @wide_matmul_0
// CHECK-SAME:    grid = array<i64: 8, 8>
// CHECK:         !tile.partition_view<128x32, !tile.tensor_view<1024x256xbf16, strides [256, 1], offset 0>>
// CHECK:         !tile.partition_view<32x128, !tile.tensor_view<256x1024xbf16, strides [1, 256], offset 0>>
// CHECK-LABEL: tile.kernel @single_matmul_1
// CHECK-SAME:    grid = array<i64: 16, 16>
// CHECK:         !tile.partition_view<64x32,

// The mma.sync flash forward by head size (tile_to_gpu/flash_attention.py, key_rows). Up
// to head 128, 64-key blocks and q's a fragments read once, before the key loops, and held
// (head 128: q 64 x 136, two stages of 64 x 136 k and v: 87040 bytes). Past 128, q's
// fragments are read again inside the loop, and the key blocks shrink so that the stages
// fit 96 KiB: 32 keys at head 144 (3 x 64 x 152 x 2 = 58368 bytes), 16 at head 256
// (64 x 264 x 2 + 2 x 2 x 16 x 264 x 2 = 67584; 32-key blocks would take 101376).
// RUN: strata-opt %s -p gpu-pipeline | filecheck %s

func.func @head128(%q: tensor<1x100x128xbf16>, %k: tensor<1x100x128xbf16>, %v: tensor<1x100x128xbf16>) -> tensor<1x100x128xbf16> {
  %o = graph.attention %q, %k, %v {scale = 0.088 : f64, causal = true} : (tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>) -> tensor<1x100x128xbf16>
  func.return %o : tensor<1x100x128xbf16>
}

func.func @head144(%q: tensor<1x100x144xbf16>, %k: tensor<1x100x144xbf16>, %v: tensor<1x100x144xbf16>) -> tensor<1x100x144xbf16> {
  %o = graph.attention %q, %k, %v {scale = 0.083 : f64, causal = true} : (tensor<1x100x144xbf16>, tensor<1x100x144xbf16>, tensor<1x100x144xbf16>) -> tensor<1x100x144xbf16>
  func.return %o : tensor<1x100x144xbf16>
}

func.func @head256(%q: tensor<1x100x256xf16>, %k: tensor<1x100x256xf16>, %v: tensor<1x100x256xf16>) -> tensor<1x100x256xf16> {
  %o = graph.attention %q, %k, %v {scale = 0.0625 : f64, causal = false} : (tensor<1x100x256xf16>, tensor<1x100x256xf16>, tensor<1x100x256xf16>) -> tensor<1x100x256xf16>
  func.return %o : tensor<1x100x256xf16>
}

// CHECK-LABEL: func.func @head128_attention_0(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 87040 : i64
// CHECK-COUNT-8: func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16(
// CHECK:         scf.for

// CHECK-LABEL: func.func @head144_attention_0(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 58368 : i64
// CHECK-NOT:     ldmatrix
// CHECK:         scf.for
// CHECK:           cp.async.cg.shared.global.16
// CHECK-COUNT-9:   func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16(
// CHECK:           mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// CHECK-LABEL: func.func @head256_attention_0(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 67584 : i64
// CHECK-NOT:     ldmatrix
// CHECK:         scf.for
// CHECK:           cp.async.cg.shared.global.16
// CHECK-COUNT-16:  func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16(
// CHECK:           mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

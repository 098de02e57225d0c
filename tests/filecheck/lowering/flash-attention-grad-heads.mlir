// The flash backward's kernels by head size (tile_to_gpu/flash_attention_grad.py). Up to
// head 64 the streamed blocks are 64 rows and the resident operands' a fragments are read
// once, before the loop, and held in registers. Past 64 (here 128) the streamed blocks are
// 32 rows, so that two resident [64 x 128] tiles and two stages of two streamed ones fit
// the 96 KiB a block may have (2 x 64 x 136 + 2 x 2 x 32 x 136 bf16 = 69632 bytes, not
// 104448), and the resident fragments are read again inside the loop (dkv's [16 x 128] dk
// and dv sums take 128 registers a lane already).
// RUN: strata-opt %s -p gpu-pipeline | filecheck %s

func.func @head64(%q: tensor<1x100x64xbf16>, %k: tensor<1x100x64xbf16>, %v: tensor<1x100x64xbf16>, %o: tensor<1x100x64xbf16>, %do: tensor<1x100x64xbf16>) -> (tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 0.125 : f64, causal = true} : (tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>) -> (tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>)
  func.return %dq, %dk, %dv : tensor<1x100x64xbf16>, tensor<1x100x64xbf16>, tensor<1x100x64xbf16>
}

func.func @head128(%q: tensor<1x100x128xbf16>, %k: tensor<1x100x128xbf16>, %v: tensor<1x100x128xbf16>, %o: tensor<1x100x128xbf16>, %do: tensor<1x100x128xbf16>) -> (tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 0.088 : f64, causal = true} : (tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>) -> (tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>)
  func.return %dq, %dk, %dv : tensor<1x100x128xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>
}

// Head 64: q (64 x 72) resident, two stages of 64 keys of k (stats); k and v's fragments
// (four ldmatrix.x4 each) before dkv's first loop.
// CHECK-LABEL: func.func @head64_attention_grad_stats_0(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 27648 : i64
// CHECK-LABEL: func.func @head64_attention_grad_dkv_2(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 55296 : i64
// CHECK-COUNT-8: func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16(
// CHECK:         scf.for

// Head 128: 32-row stages (stats: 17408 + 2 x 32 x 136 x 2 bytes); no ldmatrix before
// dkv's first loop, k and v's eight fragments each read inside it.
// CHECK-LABEL: func.func @head128_attention_grad_stats_0(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 34816 : i64
// CHECK-LABEL: func.func @head128_attention_grad_dq_1(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 69632 : i64
// CHECK-LABEL: func.func @head128_attention_grad_dkv_2(
// CHECK-SAME:    gpu.dynamic_shared_bytes = 69632 : i64
// CHECK-NOT:     ldmatrix
// CHECK:         scf.for
// CHECK:           cp.async.cg.shared.global.16
// CHECK-COUNT-8:   func.call @ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16(
// CHECK:           mma.sync

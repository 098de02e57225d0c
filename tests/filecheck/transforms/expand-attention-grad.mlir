// RUN: strata-opt %s -p expand-attention-grad | filecheck %s
// RUN: strata-opt %s -p "expand-attention-grad{keep_flash=true widen_16bit=false}" | filecheck %s --check-prefix=FLASH
// RUN: strata-opt %s -p "expand-attention-grad{keep_flash=true widen_16bit=false flash_grad_head=256}" | filecheck %s --check-prefix=DEEP
//
// expand-attention-grad: every graph.attention_grad becomes q kᵀ (scaled), a softmax
// (masked above the diagonal first when causal), dP = dout vᵀ, D = rowsum(dout ∘ out),
// dS = P ∘ (dP - D) and the three matmuls dq = scale · dS k, dk = scale · dSᵀ q,
// dv = Pᵀ dout; the results keep their names. By default every one is expanded, 16-bit
// ones included, in f32 (operands cast in, gradients cast back). With keep_flash=true
// widen_16bit=false (the GPU pipeline) the 16-bit ones whose q/k and v head sizes are
// multiples of 16 up to 128 (alike or not) stay for the flash-attention backward kernels;
// f32 ones and heads past 128 are expanded, the 16-bit ones in their own type (tensor-core
// matmuls). With flash_grad_head=256 too (sm_90) heads up to 256 stay: 144, and 64 for q
// with 144 for v.

func.func @plain(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<8x4xf32>, %o: tensor<8x4xf32>, %do: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 5.000000e-01 : f64, causal = false} : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
  func.return %dq, %dk, %dv : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

func.func @causal(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %o: tensor<2x4x8xf32>, %do: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 2.500000e-01 : f64, causal = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  func.return %dq, %dk, %dv : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

func.func @bf16_head64(%q: tensor<2x100x64xbf16>, %k: tensor<2x100x64xbf16>, %v: tensor<2x100x64xbf16>, %o: tensor<2x100x64xbf16>, %do: tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>)
  func.return %dq, %dk, %dv : tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>
}

func.func @f16_head16(%q: tensor<64x16xf16>, %k: tensor<64x16xf16>, %v: tensor<64x16xf16>, %o: tensor<64x16xf16>, %do: tensor<64x16xf16>) -> (tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 2.500000e-01 : f64} : (tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>) -> (tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>)
  func.return %dq, %dk, %dv : tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>
}

func.func @bf16_head144(%q: tensor<64x144xbf16>, %k: tensor<64x144xbf16>, %v: tensor<64x144xbf16>, %o: tensor<64x144xbf16>, %do: tensor<64x144xbf16>) -> (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64} : (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>) -> (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>)
  func.return %dq, %dk, %dv : tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>
}

func.func @bf16_v128(%q: tensor<64x64xbf16>, %k: tensor<64x64xbf16>, %v: tensor<64x128xbf16>, %o: tensor<64x128xbf16>, %do: tensor<64x128xbf16>) -> (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x128xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64} : (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>) -> (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x128xbf16>)
  func.return %dq, %dk, %dv : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x128xbf16>
}

func.func @bf16_v144(%q: tensor<64x64xbf16>, %k: tensor<64x64xbf16>, %v: tensor<64x144xbf16>, %o: tensor<64x144xbf16>, %do: tensor<64x144xbf16>) -> (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x144xbf16>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64} : (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>) -> (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x144xbf16>)
  func.return %dq, %dk, %dv : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x144xbf16>
}

func.func @f32_head64(%q: tensor<64x64xf32>, %k: tensor<64x64xf32>, %v: tensor<64x64xf32>, %o: tensor<64x64xf32>, %do: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
  func.return %dq, %dk, %dv : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// The expansion, op by op: the scores carry the scale (alpha), dP and dv do not.
// CHECK-LABEL: func.func @plain
// CHECK-NOT:     graph.attention_grad
// CHECK:         %[[S:[0-9]+]] = graph.matmul %q, %k {transpose_b = true, alpha = 5.000000e-01 : f64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[P:[0-9]+]] = graph.softmax %[[S]] : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[DP:[0-9]+]] = graph.matmul %do, %v {transpose_b = true} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[DOO:[0-9]+]] = graph.mul %do, %o : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    %[[D:[0-9]+]] = graph.reduce_sum %[[DOO]] {axes = array<i64: -1>, keepdims = true} : (tensor<8x4xf32>) -> tensor<8x1xf32>
// CHECK-NEXT:    %[[DPD:[0-9]+]] = graph.sub %[[DP]], %[[D]] : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[DS:[0-9]+]] = graph.mul %[[P]], %[[DPD]] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %dq = graph.matmul %[[DS]], %k {alpha = 5.000000e-01 : f64} : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    %dk = graph.matmul %[[DS]], %q {transpose_a = true, alpha = 5.000000e-01 : f64} : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    %dv = graph.matmul %[[P]], %do {transpose_a = true} : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    func.return %dq, %dk, %dv : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>

// Causal: the scores above the diagonal take f32's lowest value (a constant i1 mask,
// broadcast over the batch) before the softmax; dq, dk and dv read the masked P.
// CHECK-LABEL: func.func @causal
// CHECK-NOT:     graph.attention_grad
// CHECK:         %[[S:[0-9]+]] = graph.matmul %q, %k {transpose_b = true, alpha = 2.500000e-01 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT:    %[[MASK:[0-9]+]] = graph.constant dense<{{\[\[}}false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
// CHECK-NEXT:    %[[LOW:[0-9]+]] = graph.constant dense<-3.40282347e+38> : tensor<f32>
// CHECK-NEXT:    %[[M:[0-9]+]] = graph.select %[[MASK]], %[[LOW]], %[[S]] : (tensor<4x4xi1>, tensor<f32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT:    %[[P:[0-9]+]] = graph.softmax %[[M]] : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT:    %[[DP:[0-9]+]] = graph.matmul %do, %v {transpose_b = true}
// CHECK-NEXT:    %[[DOO:[0-9]+]] = graph.mul %do, %o
// CHECK-NEXT:    %[[D:[0-9]+]] = graph.reduce_sum %[[DOO]] {axes = array<i64: -1>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
// CHECK-NEXT:    %[[DPD:[0-9]+]] = graph.sub %[[DP]], %[[D]]
// CHECK-NEXT:    %[[DS:[0-9]+]] = graph.mul %[[P]], %[[DPD]]
// CHECK-NEXT:    %dq = graph.matmul %[[DS]], %k {alpha = 2.500000e-01 : f64}
// CHECK-NEXT:    %dk = graph.matmul %[[DS]], %q {transpose_a = true, alpha = 2.500000e-01 : f64}
// CHECK-NEXT:    %dv = graph.matmul %[[P]], %do {transpose_a = true} :
// CHECK-NEXT:    func.return %dq, %dk, %dv

// Without keep_flash the 16-bit ones are expanded too, in f32: the five operands cast
// up, the three gradients cast back once.
// CHECK-LABEL: func.func @bf16_head64
// CHECK-NOT:     graph.attention_grad
// CHECK-COUNT-5: graph.cast {{.*}} : (tensor<2x100x64xbf16>) -> tensor<2x100x64xf32>
// CHECK:         graph.select
// CHECK-NEXT:    graph.softmax {{.*}} -> tensor<2x100x100xf32>
// CHECK:         %dq = graph.cast {{.*}} : (tensor<2x100x64xf32>) -> tensor<2x100x64xbf16>
// CHECK-NEXT:    %dk = graph.cast
// CHECK-NEXT:    %dv = graph.cast
// CHECK-LABEL: func.func @f16_head16
// CHECK-NOT:     graph.attention_grad
// CHECK:         graph.softmax {{.*}} -> tensor<64x64xf32>
// CHECK-LABEL: func.func @bf16_head144
// CHECK-NOT:     graph.attention_grad
// CHECK:         graph.softmax
// CHECK-LABEL: func.func @bf16_v128
// CHECK-NOT:     graph.attention_grad
// CHECK:         graph.softmax
// CHECK-LABEL: func.func @bf16_v144
// CHECK-NOT:     graph.attention_grad
// CHECK:         graph.softmax
// CHECK-LABEL: func.func @f32_head64
// CHECK-NOT:     graph.attention_grad
// CHECK:         graph.softmax
// CHECK:         %dv = graph.matmul
// CHECK-NOT:     graph.attention_grad

// keep_flash: the f32 ones are still expanded.
// FLASH-LABEL: func.func @plain
// FLASH-NOT:     graph.attention_grad
// FLASH:         graph.softmax
// FLASH-LABEL: func.func @causal
// FLASH-NOT:     graph.attention_grad
// FLASH:         graph.select
// FLASH-NEXT:    graph.softmax

// 16-bit, heads 64 and 16: the op stays as it was.
// FLASH-LABEL: func.func @bf16_head64
// FLASH-NEXT:    %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>) -> (tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>)
// FLASH-NEXT:    func.return %dq, %dk, %dv
// FLASH-LABEL: func.func @f16_head16
// FLASH-NEXT:    %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 2.500000e-01 : f64} : (tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>) -> (tensor<64x16xf16>, tensor<64x16xf16>, tensor<64x16xf16>)
// FLASH-NEXT:    func.return %dq, %dk, %dv

// bf16 with head 144 (the forward's flash kernel takes it, the backward's do not):
// expanded. q/k head 64 with v head 128 stays.
// FLASH-LABEL: func.func @bf16_head144
// FLASH-NOT:     graph.attention_grad
// FLASH:         graph.matmul %q, %k {transpose_b = true, alpha = 1.250000e-01 : f64} : (tensor<64x144xbf16>, tensor<64x144xbf16>) -> tensor<64x64xbf16>
// FLASH-NEXT:    graph.softmax
// FLASH:         %dq = graph.matmul
// FLASH-NEXT:    %dk = graph.matmul
// FLASH-NEXT:    %dv = graph.matmul
// FLASH-LABEL: func.func @bf16_v128
// FLASH-NEXT:    %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {{.*}} -> (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x128xbf16>)
// FLASH-NEXT:    func.return %dq, %dk, %dv
// FLASH-LABEL: func.func @bf16_v144
// FLASH-NOT:     graph.attention_grad
// FLASH:         graph.softmax

// flash_grad_head=256: head 144 stays, and so does q/k head 64 with v head 144; f32 does not.
// DEEP-LABEL: func.func @bf16_head144
// DEEP-NEXT:    %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {{.*}} -> (tensor<64x144xbf16>, tensor<64x144xbf16>, tensor<64x144xbf16>)
// DEEP-NEXT:    func.return %dq, %dk, %dv
// DEEP-LABEL: func.func @bf16_v128
// DEEP-NEXT:    graph.attention_grad
// DEEP-LABEL: func.func @bf16_v144
// DEEP-NEXT:    %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {{.*}} -> (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x144xbf16>)
// DEEP-LABEL: func.func @f32_head64
// DEEP-NOT:     graph.attention_grad

// f32 with head 64: expanded.
// FLASH-LABEL: func.func @f32_head64
// FLASH-NOT:     graph.attention_grad
// FLASH:         graph.matmul %q, %k {transpose_b = true, alpha = 1.250000e-01 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
// FLASH-NEXT:    graph.softmax
// FLASH:         %dv = graph.matmul
// FLASH-NOT:     graph.attention_grad

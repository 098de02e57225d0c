// gpu-pipeline (fuse-patterns .. lower-graph-to-tile, token-dce, lower-tile-to-gpu,
// plan-memory, verify-memory-plan): an elementwise chain becomes one GPU kernel function
// reading block/thread ids; the program keeps its planned buffer and launch.
// RUN: strata-opt %s -p gpu-pipeline | filecheck %s

// CHECK-LABEL: func.func @f(%x: memref<35xf32>, %b: memref<5xf32>) -> memref<35xf32>
// CHECK-SAME:    tile.plan = {alignment = 64 : i64, kernels = 1 : i64
// CHECK:         tile.launch @f_fused_0(%x, %b,
// CHECK:       func.func @f_fused_0({{.*}}, %begin: index, %end: index) attributes {gpu.kernel, gpu.block_size = 256 : i64
// CHECK:         func.call @llvm.nvvm.read.ptx.sreg.ctaid.x()
// CHECK:         func.call @llvm.nvvm.read.ptx.sreg.tid.x()
// CHECK:         arith.addf
// CHECK:         math.exp
// CHECK-NOT:   tile.kernel
func.func @f(%x: tensor<7x5xf32>, %b: tensor<5xf32>) -> tensor<7x5xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<7x5xf32>, tensor<5xf32>) -> tensor<7x5xf32>
  %1 = "graph.exp"(%0) : (tensor<7x5xf32>) -> tensor<7x5xf32>
  func.return %1 : tensor<7x5xf32>
}

// lower-graph-to-tile: every graph function becomes a program over flat buffers (one
// tile.buffer per result, one tile.launch per kernel) plus the tile.kernels it launches.
// Shape ops are views (zero-copy reshape, strided copy kernels), broadcasting is a stride-0
// view, matmul is an scf.for K loop of tile.mma, row ops are scf.for passes over columns.
// RUN: strata-opt %s -p 'lower-graph-to-tile{fused_attention=false}' --split-input-file | filecheck %s
// The cost-model options change the tile shapes (and so the grid and the K loop).
// RUN: strata-opt %s -p 'lower-graph-to-tile{tile_elements=16 matmul_k=32 dot_k=32}' --split-input-file | filecheck %s --check-prefix=SMALL

// A broadcasting add c[7x5] = x[7x5] + b[5]: the default tile (about 4096 elements,
// power-of-two sides) covers it in one 8x8 tile; b is read through a stride-0 row axis.
func.func @add(%x: tensor<7x5xf32>, %b: tensor<5xf32>) -> tensor<7x5xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<7x5xf32>, tensor<5xf32>) -> tensor<7x5xf32>
  func.return %0 : tensor<7x5xf32>
}

// CHECK-LABEL: func.func @add(%x: memref<35xf32>, %b: memref<5xf32>) -> memref<35xf32> {
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<35xf32>
// CHECK-NEXT:    tile.launch @add_add_0(%x, %b, [[OUT]]) : memref<35xf32>, memref<5xf32>, memref<35xf32>
// CHECK-NEXT:    func.return [[OUT]] : memref<35xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.kernel @add_add_0([[A:%[0-9a-z_]+]]: memref<35xf32>, [[B:%[0-9a-z_]+]]: memref<5xf32>, [[C:%[0-9a-z_]+]]: memref<35xf32>) attributes {grid = array<i64: 1, 1>, tile.in_place = array<i64: 0>} {
// CHECK-NEXT:    [[I:%[0-9a-z_]+]] = tile.program_id 0 : index
// CHECK-NEXT:    [[J:%[0-9a-z_]+]] = tile.program_id 1 : index
// CHECK-NEXT:    [[T0:%[0-9a-z_]+]] = token.make : !token.token
// CHECK-NEXT:    [[VA:%[0-9a-z_]+]] = tile.make_tensor_view [[A]] : memref<35xf32> -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
// CHECK-NEXT:    [[PA:%[0-9a-z_]+]] = tile.make_partition_view [[VA]] : !tile.tensor_view<7x5xf32, strides [5, 1], offset 0> -> !tile.partition_view<8x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
// CHECK-NEXT:    [[XA:%[0-9a-z_]+]], {{%[0-9a-z_]+}} = tile.load_view_tko [[PA]]{{\[}}[[I]], [[J]]] token [[T0]] : !tile.partition_view<8x8, {{.*}}> -> !tile.tile<8x8xf32>
// CHECK-NEXT:    [[VB:%[0-9a-z_]+]] = tile.make_tensor_view [[B]] : memref<5xf32> -> !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>
// CHECK-NEXT:    [[PB:%[0-9a-z_]+]] = tile.make_partition_view [[VB]] : !tile.tensor_view<7x5xf32, strides [0, 1], offset 0> -> !tile.partition_view<8x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>>
// CHECK-NEXT:    [[XB:%[0-9a-z_]+]], {{%[0-9a-z_]+}} = tile.load_view_tko [[PB]]{{\[}}[[I]], [[J]]] token [[T0]] : !tile.partition_view<8x8, {{.*}}> -> !tile.tile<8x8xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = tile.map [[XA]], [[XB]] : (!tile.tile<8x8xf32>, !tile.tile<8x8xf32>) -> !tile.tile<8x8xf32> {
// CHECK-NEXT:    ^bb0([[E:%[0-9a-z_]+]]: f32, [[F:%[0-9a-z_]+]]: f32):
// CHECK-NEXT:      [[R:%[0-9a-z_]+]] = arith.addf [[E]], [[F]] : f32
// CHECK-NEXT:      tile.yield [[R]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    [[VC:%[0-9a-z_]+]] = tile.make_tensor_view [[C]] : memref<35xf32> -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
// CHECK-NEXT:    [[PC:%[0-9a-z_]+]] = tile.make_partition_view [[VC]] : {{.*}} -> !tile.partition_view<8x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
// CHECK-NEXT:    {{%[0-9a-z_]+}} = tile.store_view_tko [[S]], [[PC]]{{\[}}[[I]], [[J]]] token [[T0]] : !tile.tile<8x8xf32>, !tile.partition_view<8x8, {{.*}}>
// CHECK-NEXT:    tile.return
// CHECK-NEXT:  }
// CHECK-NOT:   tile.kernel
// CHECK-NOT:   graph.

// With tile_elements=16 the tile is 2x8 (the long contiguous axis first) and the grid 4x1.
// SMALL-LABEL: func.func @add(
// SMALL:       tile.kernel @add_add_0({{.*}}) attributes {grid = array<i64: 4, 1>, tile.in_place = array<i64: 0>} {
// SMALL:       tile.make_partition_view {{.*}} -> !tile.partition_view<2x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
// SMALL:       tile.make_partition_view {{.*}} -> !tile.partition_view<2x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>>
// SMALL:       tile.map {{.*}} -> !tile.tile<2x8xf32> {
// SMALL:       tile.store_view_tko {{.*}} : !tile.tile<2x8xf32>, !tile.partition_view<2x8,
// SMALL-NOT:   partition_view<8x8

// -----

// A unary chain: one kernel per op (no fusion in this pass), the intermediate is a buffer
// written by the first launch and read by the second.
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.tanh"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @chain(%x: memref<32xf32>) -> memref<32xf32> {
// CHECK-NEXT:    [[TMP:%[0-9a-z_]+]] = tile.buffer : memref<32xf32>
// CHECK-NEXT:    tile.launch @chain_exp_0(%x, [[TMP]]) : memref<32xf32>, memref<32xf32>
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<32xf32>
// CHECK-NEXT:    tile.launch @chain_tanh_1([[TMP]], [[OUT]]) : memref<32xf32>, memref<32xf32>
// CHECK-NEXT:    func.return [[OUT]] : memref<32xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.kernel @chain_exp_0({{.*}}) attributes {grid = array<i64: 1, 1>, tile.in_place = array<i64: 0>} {
// CHECK:         tile.map {{.*}} : (!tile.tile<4x8xf32>) -> !tile.tile<4x8xf32> {
// CHECK-NEXT:    ^bb0([[E:%[0-9a-z_]+]]: f32):
// CHECK-NEXT:      [[R:%[0-9a-z_]+]] = math.exp [[E]] : f32
// CHECK-NEXT:      tile.yield [[R]] : f32
// CHECK-NOT:     math.tanh
// CHECK:         tile.store_view_tko
// CHECK:       tile.kernel @chain_tanh_1({{.*}}) attributes {grid = array<i64: 1, 1>, tile.in_place = array<i64: 0>} {
// CHECK-NOT:     math.exp
// CHECK:         tile.map {{.*}} : (!tile.tile<4x8xf32>) -> !tile.tile<4x8xf32> {
// CHECK-NEXT:    ^bb0([[E2:%[0-9a-z_]+]]: f32):
// CHECK-NEXT:      [[R2:%[0-9a-z_]+]] = math.tanh [[E2]] : f32
// CHECK-NEXT:      tile.yield [[R2]] : f32
// CHECK:         tile.store_view_tko
// CHECK-NOT:   tile.kernel

// -----

// graph.constant is an initialized buffer, not a kernel.
func.func @constant(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "graph.constant"() <{value = dense<1.500000e+00> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %1 = "graph.mul"(%x, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @constant(%x: memref<6xf32>) -> memref<6xf32> {
// CHECK-NEXT:    [[K:%[0-9a-z_]+]] = tile.buffer {init = dense<1.500000e+00> : tensor<2x3xf32>} : memref<6xf32>
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<6xf32>
// CHECK-NEXT:    tile.launch @constant_mul_0(%x, [[K]], [[OUT]]) : memref<6xf32>, memref<6xf32>, memref<6xf32>
// CHECK-NEXT:    func.return [[OUT]] : memref<6xf32>
// CHECK-NEXT:  }
// CHECK-NOT:   tile.kernel @constant_constant
// CHECK:       tile.kernel @constant_mul_0(
// CHECK:           arith.mulf
// CHECK-NOT:   tile.kernel

// -----

// reshape is zero-copy: the same flat buffer is returned, no buffer, kernel or launch.
func.func @reshape(%x: tensor<4x6xf32>) -> tensor<2x12xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x6xf32>) -> tensor<2x12xf32>
  func.return %0 : tensor<2x12xf32>
}

// CHECK-LABEL: func.func @reshape(%x: memref<24xf32>) -> memref<24xf32> {
// CHECK-NEXT:    func.return %x : memref<24xf32>
// CHECK-NEXT:  }
// CHECK-NOT:   tile.

// -----

// transpose is a copy kernel whose source view has the permuted strides: x[2x3x4] has
// strides [12, 4, 1]; permutation (2, 0, 1) reads it as [4x2x3] with strides [1, 12, 4].
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "graph.transpose"(%x) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  func.return %0 : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @transpose(%x: memref<24xf32>) -> memref<24xf32> {
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<24xf32>
// CHECK-NEXT:    tile.launch @transpose_transpose_0(%x, [[OUT]]) : memref<24xf32>, memref<24xf32>
// CHECK-NEXT:    func.return [[OUT]] : memref<24xf32>
// CHECK:       tile.kernel @transpose_transpose_0([[SRC:%[0-9a-z_]+]]: memref<24xf32>, [[DST:%[0-9a-z_]+]]: memref<24xf32>) attributes {grid = array<i64: 1, 1, 1>} {
// CHECK-NOT:     tile.map
// CHECK:         {{%[0-9a-z_]+}} = tile.make_tensor_view [[SRC]] : memref<24xf32> -> !tile.tensor_view<4x2x3xf32, strides [1, 12, 4], offset 0>
// CHECK:         [[V:%[0-9a-z_]+]], {{%[0-9a-z_]+}} = tile.load_view_tko {{.*}} -> !tile.tile<4x2x4xf32>
// CHECK-NOT:     tile.map
// CHECK:         {{%[0-9a-z_]+}} = tile.make_tensor_view [[DST]] : memref<24xf32> -> !tile.tensor_view<4x2x3xf32, strides [6, 3, 1], offset 0>
// CHECK-NOT:     tile.map
// CHECK:         tile.store_view_tko [[V]], {{.*}} : !tile.tile<4x2x4xf32>, !tile.partition_view<4x2x4, !tile.tensor_view<4x2x3xf32, strides [6, 3, 1], offset 0>>
// CHECK-NEXT:    tile.return

// -----

// slice x[1:7:2, 2:10:2] of x[8x10] (strides [10, 1]): offset 1*10 + 2*1 = 12, strides
// scaled by the steps to [20, 2].
func.func @slice(%x: tensor<8x10xf32>) -> tensor<3x4xf32> {
  %0 = "graph.slice"(%x) <{starts = array<i64: 1, 2>, limits = array<i64: 7, 10>, steps = array<i64: 2, 2>}> : (tensor<8x10xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @slice(%x: memref<80xf32>) -> memref<12xf32> {
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<12xf32>
// CHECK-NEXT:    tile.launch @slice_slice_0(%x, [[OUT]]) : memref<80xf32>, memref<12xf32>
// CHECK:       tile.kernel @slice_slice_0([[SRC:%[0-9a-z_]+]]: memref<80xf32>, [[DST:%[0-9a-z_]+]]: memref<12xf32>)
// CHECK:         tile.make_tensor_view [[SRC]] : memref<80xf32> -> !tile.tensor_view<3x4xf32, strides [20, 2], offset 12>
// CHECK:         tile.make_tensor_view [[DST]] : memref<12xf32> -> !tile.tensor_view<3x4xf32, strides [4, 1], offset 0>
// CHECK:         tile.store_view_tko

// -----

// concat along axis 1: one output buffer, one copy kernel per input, each writing its
// block of columns (offsets 0 and 3) through the output's strides [8, 1].
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = "graph.concat"(%a, %b) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @concat(%a: memref<6xf32>, %b: memref<10xf32>) -> memref<16xf32> {
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<16xf32>
// CHECK-NEXT:    tile.launch @concat_concat_0(%a, [[OUT]]) : memref<6xf32>, memref<16xf32>
// CHECK-NEXT:    tile.launch @concat_concat_1(%b, [[OUT]]) : memref<10xf32>, memref<16xf32>
// CHECK-NEXT:    func.return [[OUT]] : memref<16xf32>
// CHECK:       tile.kernel @concat_concat_0([[A:%[0-9a-z_]+]]: memref<6xf32>, [[O1:%[0-9a-z_]+]]: memref<16xf32>)
// CHECK:         tile.make_tensor_view [[A]] : memref<6xf32> -> !tile.tensor_view<2x3xf32, strides [3, 1], offset 0>
// CHECK:         tile.make_tensor_view [[O1]] : memref<16xf32> -> !tile.tensor_view<2x3xf32, strides [8, 1], offset 0>
// CHECK:       tile.kernel @concat_concat_1([[B:%[0-9a-z_]+]]: memref<10xf32>, [[O2:%[0-9a-z_]+]]: memref<16xf32>)
// CHECK:         tile.make_tensor_view [[B]] : memref<10xf32> -> !tile.tensor_view<2x5xf32, strides [5, 1], offset 0>
// CHECK:         tile.make_tensor_view [[O2]] : memref<16xf32> -> !tile.tensor_view<2x5xf32, strides [8, 1], offset 3>
// CHECK-NOT:   tile.kernel

// -----

// matmul 0.5 · a[32x100] @ b[48x100]ᵀ: b is read through a transposed view (strides
// [1, 100]); 32x64 output tiles; b is read along k, so K tiles are long (dot_k: here
// 128, all of K) and the K loop carrying a !tile.tile accumulator runs once; then an
// alpha map before the store.
func.func @matmul(%a: tensor<32x100xf32>, %b: tensor<48x100xf32>) -> tensor<32x48xf32> {
  %0 = "graph.matmul"(%a, %b) <{transpose_a = false, transpose_b = true, alpha = 5.000000e-01 : f64}> : (tensor<32x100xf32>, tensor<48x100xf32>) -> tensor<32x48xf32>
  func.return %0 : tensor<32x48xf32>
}

// CHECK-LABEL: func.func @matmul(%a: memref<3200xf32>, %b: memref<4800xf32>) -> memref<1536xf32> {
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<1536xf32>
// CHECK-NEXT:    tile.launch @matmul_matmul_0(%a, %b, [[OUT]]) : memref<3200xf32>, memref<4800xf32>, memref<1536xf32>
// CHECK-NEXT:    func.return [[OUT]] : memref<1536xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.kernel @matmul_matmul_0([[A:%[0-9a-z_]+]]: memref<3200xf32>, [[B:%[0-9a-z_]+]]: memref<4800xf32>, [[C:%[0-9a-z_]+]]: memref<1536xf32>) attributes {grid = array<i64: 1, 1>} {
// CHECK-DAG:     [[C0:%[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-DAG:     [[ROW:%[0-9a-z_]+]] = tile.program_id 0 : index
// CHECK-DAG:     [[COL:%[0-9a-z_]+]] = tile.program_id 1 : index
// CHECK:         tile.make_tensor_view [[A]] : memref<3200xf32> -> !tile.tensor_view<32x100xf32, strides [100, 1], offset 0>
// CHECK-NEXT:    [[PA:%[0-9a-z_]+]] = tile.make_partition_view {{.*}} -> !tile.partition_view<32x128, !tile.tensor_view<32x100xf32, strides [100, 1], offset 0>>
// CHECK-NEXT:    tile.make_tensor_view [[B]] : memref<4800xf32> -> !tile.tensor_view<100x48xf32, strides [1, 100], offset 0>
// CHECK-NEXT:    [[PB:%[0-9a-z_]+]] = tile.make_partition_view {{.*}} -> !tile.partition_view<128x64, !tile.tensor_view<100x48xf32, strides [1, 100], offset 0>>
// CHECK-NEXT:    [[ZERO:%[0-9a-z_]+]] = tile.map : () -> !tile.tile<32x64xf32> {
// CHECK-NEXT:      [[Z:%[0-9a-z_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      tile.yield [[Z]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    [[ACC:%[0-9a-z_]+]] = scf.for [[K:%[0-9a-z_]+]] = [[C0]] to [[C1]] step [[C1]] iter_args([[CARRIED:%[0-9a-z_]+]] = [[ZERO]]) -> (!tile.tile<32x64xf32>) {
// CHECK-NEXT:      [[TA:%[0-9a-z_]+]], {{%[0-9a-z_]+}} = tile.load_view_tko [[PA]]{{\[}}[[ROW]], [[K]]] {{.*}} -> !tile.tile<32x128xf32>
// CHECK-NEXT:      [[TB:%[0-9a-z_]+]], {{%[0-9a-z_]+}} = tile.load_view_tko [[PB]]{{\[}}[[K]], [[COL]]] {{.*}} -> !tile.tile<128x64xf32>
// CHECK-NEXT:      [[NEXT:%[0-9a-z_]+]] = tile.mma [[TA]], [[TB]], [[CARRIED]] : !tile.tile<32x128xf32>, !tile.tile<128x64xf32>, !tile.tile<32x64xf32>
// CHECK-NEXT:      scf.yield [[NEXT]] : !tile.tile<32x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    [[SCALED:%[0-9a-z_]+]] = tile.map [[ACC]] : (!tile.tile<32x64xf32>) -> !tile.tile<32x64xf32> {
// CHECK-NEXT:    ^bb0([[E:%[0-9a-z_]+]]: f32):
// CHECK-NEXT:      [[HALF:%[0-9a-z_]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      [[M:%[0-9a-z_]+]] = arith.mulf [[E]], [[HALF]] : f32
// CHECK-NEXT:      tile.yield [[M]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.make_tensor_view [[C]] : memref<1536xf32> -> !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>
// CHECK-NEXT:    [[PC:%[0-9a-z_]+]] = tile.make_partition_view {{.*}} -> !tile.partition_view<32x64, !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>>
// CHECK-NEXT:    tile.store_view_tko [[SCALED]], [[PC]]{{\[}}[[ROW]], [[COL]]] {{.*}} : !tile.tile<32x64xf32>, !tile.partition_view<32x64,
// CHECK-NEXT:    tile.return

// matmul_k=32 dot_k=32: K tiles of 32, so the K loop runs 4 steps (ceil(100 / 32)).
// SMALL-LABEL: tile.kernel @matmul_matmul_0(
// SMALL:         [[C4:%[0-9a-z_]+]] = arith.constant 4 : index
// SMALL:         tile.make_partition_view {{.*}} -> !tile.partition_view<32x32, !tile.tensor_view<32x100xf32, strides [100, 1], offset 0>>
// SMALL:         tile.make_partition_view {{.*}} -> !tile.partition_view<32x64, !tile.tensor_view<100x48xf32, strides [1, 100], offset 0>>
// SMALL:         scf.for {{%[0-9a-z_]+}} = {{%[0-9a-z_]+}} to [[C4]] step {{%[0-9a-z_]+}} iter_args({{.*}}) -> (!tile.tile<32x64xf32>) {
// SMALL:           tile.mma {{.*}} : !tile.tile<32x32xf32>, !tile.tile<32x64xf32>, !tile.tile<32x64xf32>

// -----

// Batched matmul a[3x4x8] @ b[8x16]: b broadcasts over the batch axis (stride 0); one
// kernel instance per (batch, row tile, column tile); alpha = 1 so no scaling map.
func.func @bmm(%a: tensor<3x4x8xf32>, %b: tensor<8x16xf32>) -> tensor<3x4x16xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<3x4x8xf32>, tensor<8x16xf32>) -> tensor<3x4x16xf32>
  func.return %0 : tensor<3x4x16xf32>
}

// CHECK-LABEL: func.func @bmm(%a: memref<96xf32>, %b: memref<128xf32>) -> memref<192xf32> {
// CHECK:       tile.kernel @bmm_matmul_0([[A:%[0-9a-z_]+]]: memref<96xf32>, [[B:%[0-9a-z_]+]]: memref<128xf32>, [[C:%[0-9a-z_]+]]: memref<192xf32>) attributes {grid = array<i64: 3, 1, 1>} {
// CHECK-DAG:     [[BATCH:%[0-9a-z_]+]] = tile.program_id 0 : index
// CHECK-DAG:     [[ROW:%[0-9a-z_]+]] = tile.program_id 1 : index
// CHECK-DAG:     [[COL:%[0-9a-z_]+]] = tile.program_id 2 : index
// CHECK:         tile.make_tensor_view [[A]] : memref<96xf32> -> !tile.tensor_view<3x4x8xf32, strides [32, 8, 1], offset 0>
// CHECK-NEXT:    tile.make_partition_view {{.*}} -> !tile.partition_view<1x4x8,
// CHECK-NEXT:    tile.make_tensor_view [[B]] : memref<128xf32> -> !tile.tensor_view<3x8x16xf32, strides [0, 16, 1], offset 0>
// CHECK-NEXT:    tile.make_partition_view {{.*}} -> !tile.partition_view<1x8x16,
// CHECK:         scf.for [[K:%[0-9a-z_]+]] = {{.*}} iter_args({{.*}}) -> (!tile.tile<1x4x16xf32>) {
// CHECK-NEXT:      tile.load_view_tko {{%[0-9a-z_]+}}{{\[}}[[BATCH]], [[ROW]], [[K]]] {{.*}} -> !tile.tile<1x4x8xf32>
// CHECK-NEXT:      tile.load_view_tko {{%[0-9a-z_]+}}{{\[}}[[BATCH]], [[K]], [[COL]]] {{.*}} -> !tile.tile<1x8x16xf32>
// CHECK-NEXT:      tile.mma {{.*}} : !tile.tile<1x4x8xf32>, !tile.tile<1x8x16xf32>, !tile.tile<1x4x16xf32>
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.make_tensor_view [[C]] : memref<192xf32> -> !tile.tensor_view<3x4x16xf32, strides [64, 16, 1], offset 0>
// CHECK-NEXT:    tile.make_partition_view {{.*}} -> !tile.partition_view<1x4x16,
// CHECK-NEXT:    tile.store_view_tko {{%[0-9a-z_]+}}, {{%[0-9a-z_]+}}{{\[}}[[BATCH]], [[ROW]], [[COL]]]
// CHECK-NEXT:    tile.return

// -----

// softmax over the last axis of x[4x8]: one kernel instance per 4-row block, three
// passes over the column tiles — a running max, a running sum of exp(x - max) that also
// stores it, and the in-place scaling by 1 / sum.
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.softmax"(%x) <{axis = -1 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @softmax(%x: memref<32xf32>) -> memref<32xf32> {
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<32xf32>
// CHECK-NEXT:    tile.launch @softmax_softmax_0(%x, [[OUT]]) : memref<32xf32>, memref<32xf32>
// CHECK-NEXT:    func.return [[OUT]] : memref<32xf32>
// CHECK:       tile.kernel @softmax_softmax_0({{.*}}) attributes {grid = array<i64: 1>, tile.in_place = array<i64: 0>} {
// CHECK:         [[PX:%[0-9a-z_]+]] = tile.make_partition_view {{.*}} -> !tile.partition_view<4x8, !tile.tensor_view<4x8xf32, strides [8, 1], offset 0>>
// CHECK:         [[PY:%[0-9a-z_]+]] = tile.make_partition_view {{.*}} -> !tile.partition_view<4x8, !tile.tensor_view<4x8xf32, strides [8, 1], offset 0>>
// Pass 1: max.
// CHECK:         arith.constant 0xff800000 : f32
// CHECK:         [[MAX:%[0-9a-z_]+]] = scf.for {{.*}} iter_args([[RM:%[0-9a-z_]+]] = {{.*}}) -> (!tile.tile<4x1xf32>) {
// CHECK-NEXT:      [[X1:%[0-9a-z_]+]], {{%[0-9a-z_]+}} = tile.load_view_tko [[PX]]
// CHECK-NEXT:      [[P1:%[0-9a-z_]+]] = tile.reduce [[X1]] {axes = array<i64: 1>, kind = "max"} : !tile.tile<4x8xf32> -> !tile.tile<4x1xf32>
// CHECK-NEXT:      tile.map [[RM]], [[P1]]
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        arith.maximumf
// CHECK:           scf.yield
// Pass 2: sum of exp(x - max), each exp stored into the output (exp is evaluated once)
// and summed as loaded back (no stack copy of the tile); the loop carries the token
// chain so pass 3 may load what it stored.
// CHECK:         arith.constant 0.000000e+00 : f32
// CHECK:         [[SUM:%[0-9a-z_]+]], [[TOKEN:%[0-9a-z_]+]] = scf.for {{.*}} iter_args([[RS:%[0-9a-z_]+]] = {{.*}}, [[RT:%[0-9a-z_]+]] = {{.*}}) -> (!tile.tile<4x1xf32>, !token.token) {
// CHECK-NEXT:      tile.load_view_tko [[PX]]
// CHECK-NEXT:      tile.broadcast [[MAX]] : !tile.tile<4x1xf32> -> !tile.tile<4x8xf32>
// CHECK:             arith.subf
// CHECK:           [[EXP:%[0-9a-z_]+]] = tile.map
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        math.exp
// CHECK:           [[STORED:%[0-9a-z_]+]] = tile.store_view_tko [[EXP]], [[PY]]{{.*}} token [[RT]]
// CHECK-NEXT:      [[E2:%[0-9a-z_]+]], {{%[0-9a-z_]+}} = tile.load_view_tko [[PY]]{{.*}} token [[STORED]]
// CHECK-NEXT:      [[P2:%[0-9a-z_]+]] = tile.reduce [[E2]] {axes = array<i64: 1>, kind = "sum"}
// CHECK-NEXT:      tile.map [[RS]], [[P2]]
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        arith.addf
// CHECK:           scf.yield {{%[0-9a-z_]+}}, [[STORED]]
// One division per row, then pass 3 scales the stored exps in place (no exp, no reduction).
// CHECK:         [[INVERSE:%[0-9a-z_]+]] = tile.map [[SUM]]
// CHECK:           arith.divf
// CHECK:         scf.for {{%[0-9a-z_]+}} = {{%[0-9a-z_]+}} to {{%[0-9a-z_]+}} step {{%[0-9a-z_]+}} {
// CHECK-NEXT:      tile.load_view_tko [[PY]]{{.*}} token [[TOKEN]]
// CHECK-NOT:       math.exp
// CHECK-NOT:       tile.reduce
// CHECK:           tile.broadcast [[INVERSE]]
// CHECK:             arith.mulf
// CHECK:           tile.store_view_tko {{%[0-9a-z_]+}}, [[PY]]
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.return
// CHECK-NOT:   tile.kernel

// -----

// layernorm over the last axis: a mean pass, a variance pass, then the write pass that
// reads gamma and beta through stride-0 row views.
func.func @layernorm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.layernorm"(%x, %g, %b) <{epsilon = 1.000000e-05 : f64}> : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @layernorm(%x: memref<32xf32>, %g: memref<8xf32>, %b: memref<8xf32>) -> memref<32xf32> {
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<32xf32>
// CHECK-NEXT:    tile.launch @layernorm_layernorm_0(%x, %g, %b, [[OUT]]) : memref<32xf32>, memref<8xf32>, memref<8xf32>, memref<32xf32>
// CHECK:       tile.kernel @layernorm_layernorm_0([[X:%[0-9a-z_]+]]: memref<32xf32>, [[G:%[0-9a-z_]+]]: memref<8xf32>, [[BT:%[0-9a-z_]+]]: memref<8xf32>, [[Y:%[0-9a-z_]+]]: memref<32xf32>) attributes {grid = array<i64: 1>, tile.in_place = array<i64: 0>} {
// CHECK:         tile.make_tensor_view [[X]] : memref<32xf32> -> !tile.tensor_view<4x8xf32, strides [8, 1], offset 0>
// CHECK:         tile.make_tensor_view [[G]] : memref<8xf32> -> !tile.tensor_view<4x8xf32, strides [0, 1], offset 0>
// CHECK:         tile.make_tensor_view [[BT]] : memref<8xf32> -> !tile.tensor_view<4x8xf32, strides [0, 1], offset 0>
// CHECK:         tile.make_tensor_view [[Y]] : memref<32xf32> -> !tile.tensor_view<4x8xf32, strides [8, 1], offset 0>
// CHECK:         scf.for {{.*}} -> (!tile.tile<4x1xf32>) {
// CHECK:           tile.reduce {{.*}} kind = "sum"
// CHECK:         arith.constant 1.250000e-01 : f32
// CHECK:         scf.for {{.*}} -> (!tile.tile<4x1xf32>) {
// CHECK:             arith.subf
// CHECK:             arith.mulf
// CHECK:           tile.reduce {{.*}} kind = "sum"
// CHECK:           arith.constant 1.000000e-05 : f32
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      math.sqrt
// One division per row (1 / deviation); the write pass only multiplies and adds.
// CHECK:           arith.divf
// CHECK:         scf.for {{%[0-9a-z_]+}} = {{%[0-9a-z_]+}} to {{%[0-9a-z_]+}} step {{%[0-9a-z_]+}} {
// CHECK-NOT:       tile.reduce
// CHECK-NOT:       arith.divf
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:         tile.store_view_tko
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.return
// CHECK-NOT:   tile.kernel

// -----

// reduce_mean over axes (0, 2) of x[2x4x8]: one kernel per axis, the last axis first,
// through an intermediate [2x4] buffer; the second kernel reduces its columns (the tile's
// axis 0, the contiguous axis kept) and alone applies the 1/16 scale. An f32 sum accumulates
// in f64 (the intermediate is an f64 workspace) and is rounded once, at the end.
func.func @reduce(%x: tensor<2x4x8xf32>) -> tensor<4xf32> {
  %0 = "graph.reduce_mean"(%x) <{axes = array<i64: 0, 2>}> : (tensor<2x4x8xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @reduce(%x: memref<64xf32>) -> memref<4xf32> {
// CHECK-NEXT:    [[TMP:%[0-9a-z_]+]] = tile.buffer {tile.workspace} : memref<8xf64>
// CHECK-NEXT:    tile.launch @reduce_reduce_mean_0(%x, [[TMP]]) : memref<64xf32>, memref<8xf64>
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<4xf32>
// CHECK-NEXT:    tile.launch @reduce_reduce_mean_1([[TMP]], [[OUT]]) : memref<8xf64>, memref<4xf32>
// CHECK-NEXT:    func.return [[OUT]] : memref<4xf32>
// CHECK:       tile.kernel @reduce_reduce_mean_0({{.*}}) attributes {grid = array<i64: 2, 1>} {
// CHECK:         tile.make_tensor_view {{.*}} -> !tile.tensor_view<2x4x8xf32, strides [32, 8, 1], offset 0>
// CHECK:         arith.extf {{.*}} : f32 to f64
// CHECK:         tile.reduce {{.*}} {axes = array<i64: 2>, kind = "sum"} : !tile.tile<1x4x8xf64> -> !tile.tile<1x4x1xf64>
// CHECK-NOT:     6.250000e-02
// CHECK:         tile.make_tensor_view {{.*}} -> !tile.tensor_view<2x4x1xf64, strides [4, 1, 0], offset 0>
// CHECK:         tile.store_view_tko
// CHECK:       tile.kernel @reduce_reduce_mean_1({{.*}}) attributes {grid = array<i64: 1>} {
// CHECK:         tile.make_tensor_view {{.*}} -> !tile.tensor_view<2x4xf64, strides [4, 1], offset 0>
// CHECK:         tile.reduce {{.*}} {axes = array<i64: 0>, kind = "sum"} : !tile.tile<2x4xf64> -> !tile.tile<1x4xf64>
// CHECK:         arith.constant 6.250000e-02 : f64
// CHECK-NEXT:    arith.mulf
// CHECK:         arith.truncf {{.*}} : f64 to f32
// CHECK:         tile.make_tensor_view {{.*}} -> !tile.tensor_view<1x4xf32, strides [0, 1], offset 0>
// CHECK:         tile.store_view_tko
// CHECK-NOT:   tile.kernel

// -----

// Causal attention in three kernels (fused_attention=false, the GPU's form; the CPU's
// fused kernel: attention-fused.mlir) — scores = scale · q @ kᵀ (k through a transposed
// view), a causally masked softmax (key index > query index -> -inf, from tile.iota),
// and probabilities @ v — with scores and probabilities as workspace buffers.
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 0.35355339059327379 : f64, causal = true}> : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
  func.return %0 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @attention(%q: memref<64xf32>, %k: memref<96xf32>, %v: memref<96xf32>) -> memref<64xf32> {
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = tile.buffer {tile.workspace} : memref<48xf32>
// CHECK-NEXT:    tile.launch @attention_attention_scores_0(%q, %k, [[S]]) : memref<64xf32>, memref<96xf32>, memref<48xf32>
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = tile.buffer {tile.workspace} : memref<48xf32>
// CHECK-NEXT:    tile.launch @attention_attention_softmax_1([[S]], [[P]]) : memref<48xf32>, memref<48xf32>
// CHECK-NEXT:    [[O:%[0-9a-z_]+]] = tile.buffer : memref<64xf32>
// CHECK-NEXT:    tile.launch @attention_attention_values_2([[P]], %v, [[O]]) : memref<48xf32>, memref<96xf32>, memref<64xf32>
// CHECK-NEXT:    func.return [[O]] : memref<64xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.kernel @attention_attention_scores_0({{.*}}) attributes {grid = array<i64: 2, 1, 1>} {
// CHECK-NOT:     tile.iota
// CHECK:         tile.make_tensor_view {{.*}} -> !tile.tensor_view<2x8x6xf32, strides [48, 1, 8], offset 0>
// CHECK-NOT:     tile.iota
// CHECK:         tile.mma
// CHECK-NOT:     tile.iota
// CHECK:         arith.constant 0.353553385 : f32
// CHECK-NEXT:    arith.mulf
// CHECK-NOT:     tile.iota
// CHECK:       tile.kernel @attention_attention_softmax_1({{.*}}) attributes {grid = array<i64: 2, 1>, tile.in_place = array<i64: 0>} {
// CHECK-DAG:     [[C4:%[0-9a-z_]+]] = arith.constant 4 : index
// CHECK-DAG:     [[C8:%[0-9a-z_]+]] = arith.constant 8 : index
// CHECK-DAG:     {{%[0-9a-z_]+}} = tile.program_id 0 : index
// CHECK-DAG:     [[QT:%[0-9a-z_]+]] = tile.program_id 1 : index
// CHECK:         scf.for [[COL:%[0-9a-z_]+]] = {{.*}} -> (!tile.tile<1x4x1xf32>) {
// CHECK-NEXT:      [[X:%[0-9a-z_]+]], {{%[0-9a-z_]+}} = tile.load_view_tko
// CHECK-NEXT:      [[ROWS:%[0-9a-z_]+]] = tile.iota {axis = 1 : i64} : !tile.tile<1x4x8xi64>
// CHECK-NEXT:      [[COLS:%[0-9a-z_]+]] = tile.iota {axis = 2 : i64} : !tile.tile<1x4x8xi64>
// CHECK-NEXT:      [[QO:%[0-9a-z_]+]] = arith.muli [[QT]], [[C4]] : index
// CHECK-NEXT:      [[KO:%[0-9a-z_]+]] = arith.muli [[COL]], [[C8]] : index
// CHECK-NEXT:      [[QO64:%[0-9a-z_]+]] = arith.index_cast [[QO]] : index to i64
// CHECK-NEXT:      [[KO64:%[0-9a-z_]+]] = arith.index_cast [[KO]] : index to i64
// CHECK-NEXT:      tile.map [[X]], [[ROWS]], [[COLS]] : (!tile.tile<1x4x8xf32>, !tile.tile<1x4x8xi64>, !tile.tile<1x4x8xi64>) -> !tile.tile<1x4x8xf32> {
// CHECK-NEXT:      ^bb0([[E:%[0-9a-z_]+]]: f32, [[R:%[0-9a-z_]+]]: i64, [[CI:%[0-9a-z_]+]]: i64):
// CHECK-NEXT:        [[QUERY:%[0-9a-z_]+]] = arith.addi [[R]], [[QO64]] : i64
// CHECK-NEXT:        [[KEY:%[0-9a-z_]+]] = arith.addi [[CI]], [[KO64]] : i64
// CHECK-NEXT:        [[FUTURE:%[0-9a-z_]+]] = arith.cmpi sgt, [[KEY]], [[QUERY]] : i64
// CHECK-NEXT:        [[NINF:%[0-9a-z_]+]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:        [[SEL:%[0-9a-z_]+]] = arith.select [[FUTURE]], [[NINF]], [[E]] : f32
// CHECK-NEXT:        tile.yield [[SEL]] : f32
// CHECK:           tile.reduce {{.*}} kind = "max"
// CHECK:           arith.cmpi sgt
// CHECK:           tile.store_view_tko
// CHECK:           tile.reduce {{.*}} kind = "sum"
// CHECK:           arith.divf
// CHECK-NOT:       arith.cmpi sgt
// CHECK:           arith.mulf
// CHECK:           tile.store_view_tko
// CHECK:       tile.kernel @attention_attention_values_2({{.*}}) attributes {grid = array<i64: 2, 1, 1>} {
// CHECK-NOT:     tile.iota
// CHECK:         tile.make_tensor_view {{.*}} -> !tile.tensor_view<2x6x8xf32, strides [48, 8, 1], offset 0>
// CHECK-NOT:     tile.iota
// CHECK:         tile.mma
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.make_tensor_view
// CHECK-NEXT:    tile.make_partition_view
// CHECK-NEXT:    tile.store_view_tko
// CHECK-NEXT:    tile.return
// CHECK-NOT:   tile.kernel

// -----

// An f16 reduction over several axes rounds once: the intermediate [2x4] buffer is an f32
// workspace, and only the last kernel rounds its sums to f16.
func.func @reduce_f16(%x: tensor<2x4x8xf16>) -> tensor<4xf16> {
  %0 = "graph.reduce_sum"(%x) <{axes = array<i64: 0, 2>}> : (tensor<2x4x8xf16>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// CHECK-LABEL: func.func @reduce_f16(%x: memref<64xf16>) -> memref<4xf16> {
// CHECK-NEXT:    [[TMP:%[0-9a-z_]+]] = tile.buffer {tile.workspace} : memref<8xf32>
// CHECK-NEXT:    tile.launch @reduce_f16_reduce_sum_0(%x, [[TMP]]) : memref<64xf16>, memref<8xf32>
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = tile.buffer : memref<4xf16>
// CHECK-NEXT:    tile.launch @reduce_f16_reduce_sum_1([[TMP]], [[OUT]]) : memref<8xf32>, memref<4xf16>
// CHECK:       tile.kernel @reduce_f16_reduce_sum_0(
// CHECK-NOT:     arith.truncf
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x4x1xf32>
// CHECK:       tile.kernel @reduce_f16_reduce_sum_1(
// CHECK:         arith.truncf {{.*}} : f32 to f16
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x4xf16>

// -----

// bf16 attention keeps its scores and probabilities f32 (workspaces): only the output,
// computed from f32 probabilities and widened v, is rounded to bf16.
func.func @attention_bf16(%q: tensor<2x4x8xbf16>, %k: tensor<2x6x8xbf16>, %v: tensor<2x6x8xbf16>) -> tensor<2x4x8xbf16> {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 0.35355339059327379 : f64}> : (tensor<2x4x8xbf16>, tensor<2x6x8xbf16>, tensor<2x6x8xbf16>) -> tensor<2x4x8xbf16>
  func.return %0 : tensor<2x4x8xbf16>
}

// CHECK-LABEL: func.func @attention_bf16(%q: memref<64xbf16>, %k: memref<96xbf16>, %v: memref<96xbf16>) -> memref<64xbf16> {
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = tile.buffer {tile.workspace} : memref<48xf32>
// CHECK-NEXT:    tile.launch @attention_bf16_attention_scores_0(%q, %k, [[S]]) : memref<64xbf16>, memref<96xbf16>, memref<48xf32>
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = tile.buffer {tile.workspace} : memref<48xf32>
// CHECK-NEXT:    tile.launch @attention_bf16_attention_softmax_1([[S]], [[P]]) : memref<48xf32>, memref<48xf32>
// CHECK-NEXT:    [[O:%[0-9a-z_]+]] = tile.buffer : memref<64xbf16>
// CHECK-NEXT:    tile.launch @attention_bf16_attention_values_2([[P]], %v, [[O]]) : memref<48xf32>, memref<96xbf16>, memref<64xbf16>
// CHECK:       tile.kernel @attention_bf16_attention_scores_0(
// CHECK-NOT:     arith.truncf
// CHECK:       tile.kernel @attention_bf16_attention_softmax_1(
// CHECK-NOT:     arith.truncf
// CHECK:       tile.kernel @attention_bf16_attention_values_2(
// CHECK:         arith.truncf {{.*}} : f32 to bf16

// -----

// compare on i1 is unsigned (false < true; signed, i1 true would be -1).
func.func @compare_i1(%a: tensor<3xi1>, %b: tensor<i1>) -> tensor<3xi1> {
  %0 = "graph.compare"(%a, %b) <{predicate = "le"}> : (tensor<3xi1>, tensor<i1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// CHECK-LABEL: func.func @compare_i1(
// CHECK:         arith.cmpi ule, {{.*}} : i1

// A row op fused with neighbours of other element types (fuse-elementwise, then
// lower-graph-to-tile): each input is loaded in its own element type (an i1 condition is
// never widened like a row value), and each epilogue tile.map yields its result's type.
// RUN: strata-opt %s -p fuse-elementwise,lower-graph-to-tile --split-input-file | filecheck %s

func.func @rmsnorm_select(%x: tensor<5x31xf32>, %g: tensor<31xf32>, %c: tensor<i1>, %o: tensor<1x31xf32>) -> tensor<5x31xf32> {
  %0 = "graph.rmsnorm"(%x, %g) <{epsilon = 1.000000e-03 : f64}> : (tensor<5x31xf32>, tensor<31xf32>) -> tensor<5x31xf32>
  %1 = "graph.select"(%c, %o, %0) : (tensor<i1>, tensor<1x31xf32>, tensor<5x31xf32>) -> tensor<5x31xf32>
  func.return %1 : tensor<5x31xf32>
}

// CHECK-LABEL: func.func @rmsnorm_select(
// CHECK:         tile.launch @rmsnorm_select_rmsnorm_0(%x, %g, %c, %o, {{.*}})
// CHECK-NOT:     tile.launch
// CHECK:       tile.kernel @rmsnorm_select_rmsnorm_0(
// CHECK-NOT:     arith.extf {{.*}} : i1
// CHECK:         [[C:%[0-9]+]], {{%[0-9]+}} = tile.load_view_tko {{.*}} -> !tile.tile<8x32xi1>
// CHECK:         tile.map {{.*}}[[C]], {{.*}} : (!tile.tile<8x32xf32>, !tile.tile<8x32xi1>, !tile.tile<8x32xf32>) -> !tile.tile<8x32xf32>
// CHECK:           arith.select

// -----

func.func @log_softmax_compare(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xi1> {
  %0 = "graph.log_softmax"(%y) <{axis = 0 : i64}> : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "graph.compare"(%0, %x) <{predicate = "gt"}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  func.return %1 : tensor<2xi1>
}

// CHECK-LABEL: func.func @log_softmax_compare(
// CHECK:         tile.launch @log_softmax_compare_log_softmax_0(
// CHECK-NOT:     tile.launch
// CHECK:       tile.kernel @log_softmax_compare_log_softmax_0(
// CHECK:         tile.map {{.*}} -> !tile.tile<1x2xi1>
// CHECK:           arith.cmpf ogt
// CHECK:         tile.store_view_tko {{.*}} : !tile.tile<1x2xi1>

// -----

// softmax(2x) fused: with no epilogue the group's one output is softmax's own, so the sum
// pass stores exp(2x - max) into it (the prologue is evaluated in the max and sum passes
// only) and the last pass scales what it loads back from the output.
func.func @scaled_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.scale"(%x) <{value = 2.0 : f64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.softmax"(%0) <{axis = 1 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @scaled_softmax(
// CHECK:       tile.kernel @scaled_softmax_softmax_0(
// CHECK:         [[PY:%[0-9]+]] = tile.make_partition_view
// CHECK:         [[PX:%[0-9]+]] = tile.make_partition_view
// CHECK:         tile.reduce {{.*}} kind = "max"
// CHECK:         scf.for {{.*}} -> (!tile.tile<4x1xf32>, !token.token) {
// CHECK:           tile.load_view_tko [[PX]]
// CHECK:             math.exp
// CHECK:           [[STORED:%[0-9]+]] = tile.store_view_tko {{%[0-9]+}}, [[PY]]
// CHECK:           tile.load_view_tko [[PY]]{{.*}} token [[STORED]]
// CHECK:           tile.reduce {{.*}} kind = "sum"
// CHECK:         scf.for
// CHECK-NOT:       tile.load_view_tko [[PX]]
// CHECK-NOT:       math.exp
// CHECK:           tile.load_view_tko [[PY]]
// CHECK:             arith.mulf
// CHECK:           tile.store_view_tko {{%[0-9]+}}, [[PY]]

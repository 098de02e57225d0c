// cross-entropy over rows of several column tiles (5001 classes, tiles of 2048): on the
// GPU (matmul_min_tiles, its cost model's mark) the online pass carries a maximum and a
// sum per column of the tile ([1 x 2048] tiles), with no reduction inside the loop over
// the two whole column tiles; they are reduced once after it, and the partial last tile is
// taken per row. On the CPU the loop carries per-row values ([1 x 1]) and reduces every
// column tile.
// RUN: strata-opt %s -p "lower-graph-to-tile{matmul_min_tiles=132 tile_elements=2048}" | filecheck %s --check-prefix=GPU
// RUN: strata-opt %s -p "lower-graph-to-tile{tile_elements=2048}" | filecheck %s --check-prefix=CPU

func.func @loss(%x: tensor<9x5001xf32>, %l: tensor<9xi64>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l : (tensor<9x5001xf32>, tensor<9xi64>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// GPU-LABEL: tile.kernel @loss_cross_entropy_0(
// GPU:         %[[TWO:.*]] = arith.constant 2 : index
// GPU:         scf.for %{{.*}} = %{{.*}} to %[[TWO]] step %{{.*}} iter_args({{.*}}) -> (!tile.tile<1x2048xf32>, !tile.tile<1x2048xf32>, !tile.tile<1x2048xf32>) {
// GPU-NOT:       tile.reduce
// GPU:         scf.yield
// GPU:         tile.reduce {{.*}} {axes = array<i64: 1>, kind = "max"} : !tile.tile<1x2048xf32> -> !tile.tile<1x1xf32>
// GPU:         tile.reduce {{.*}} {axes = array<i64: 1>, kind = "sum"} : !tile.tile<1x2048xf32> -> !tile.tile<1x1xf32>

// CPU-LABEL: tile.kernel @loss_cross_entropy_0(
// CPU:         scf.for {{.*}} -> (!tile.tile<1x1xf32>, !tile.tile<1x1xf32>, !tile.tile<1x1xf32>) {
// CPU:           tile.reduce
// CPU:         scf.yield

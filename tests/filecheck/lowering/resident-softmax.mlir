// Softmax rows held in shared memory. lower-graph-to-tile{resident_row_bytes=N} marks a
// softmax / log_softmax kernel tile.resident_softmax {log} where the rows run along the last
// axis, are longer than one column tile and at most N bytes: the marked kernel keeps the
// generic body (its meaning, which every other lowering runs). Rows of one column tile, rows
// past N bytes and rows along another axis are not marked, nor is anything without the option.
// gpu-pipeline{warpgroup_mma=true} (sm_90) sets the option (112 KiB) and lower-tile-to-gpu
// replaces the marked kernel: 512 threads, the row's 16-byte chunks in dynamic shared memory
// by cp.async, three barriers (the copies, the -inf padding, the warps' statistics), 16-byte
// shared loads, ex2.approx for exp, 16-byte stores where a chunk is inside the row, and no
// other global load than the element-wise copy of a chunk the buffer ends inside.
// RUN: strata-opt %s -p "lower-graph-to-tile{tile_elements=2048 resident_row_bytes=114688}" | filecheck %s --check-prefix=TILE
// RUN: strata-opt %s -p "lower-graph-to-tile{tile_elements=2048}" | filecheck %s --check-prefix=OFF
// RUN: strata-opt %s -p "gpu-pipeline{warpgroup_mma=true}" | filecheck %s --check-prefix=GPU

// TILE:     tile.kernel @long_softmax_0(%0: memref<15003xbf16>, %1: memref<15003xbf16>) attributes {grid = array<i64: 3>, tile.in_place = array<i64: 0>, tile.resident_softmax = {log = false}}
// TILE:       scf.for
// TILE:       scf.for
// OFF-NOT:  tile.resident_softmax
// GPU-LABEL: func.func @long_softmax_0
// GPU-SAME:   gpu.block_size = 512 : i64, gpu.shared_bytes = 128 : i64, gpu.dynamic_shared_bytes = 10016 : i64, gpu.barriers = 3 : i64
// GPU:        memref.alloca() {gpu.dynamic_offset = 0 : i64, alignment = 16 : i64} : memref<5008xbf16, 3 : i64>
// GPU:        func.call @ptx.cp.async.cg.shared.global.16
// GPU:        func.call @ptx.cp.async.wait_group.0
// GPU:        func.call @ptx.ld.shared.v4.b32
// GPU:        func.call @ptx.ex2.approx.ftz.f32
// GPU:        func.call @ptx.st.global.v4.b32
// GPU:        func.return
func.func @long(%x: tensor<3x5001xbf16>) -> tensor<3x5001xbf16> {
  %y = graph.softmax %x {axis = -1 : i64} : (tensor<3x5001xbf16>) -> tensor<3x5001xbf16>
  func.return %y : tensor<3x5001xbf16>
}

// TILE:     tile.kernel @log_rows_log_softmax_0({{.*}}) attributes {grid = array<i64: 2, 3>, tile.in_place = array<i64: 0>, tile.resident_softmax = {log = true}}
// GPU-LABEL: func.func @log_rows_log_softmax_0
// GPU-SAME:   gpu.block_size = 512
func.func @log_rows(%x: tensor<2x3x4099xf32>) -> tensor<2x3x4099xf32> {
  %y = graph.log_softmax %x {axis = 2 : i64} : (tensor<2x3x4099xf32>) -> tensor<2x3x4099xf32>
  func.return %y : tensor<2x3x4099xf32>
}

// One column tile, past 112 KiB (f32), along the first axis, f64: the generic row kernel.
// TILE:     tile.kernel @not_marked_softmax_0
// TILE-NOT: tile.resident_softmax
// TILE:     tile.kernel @not_marked_softmax_1
// TILE-NOT: tile.resident_softmax
// TILE:     tile.kernel @not_marked_softmax_2
// TILE-NOT: tile.resident_softmax
// TILE:     tile.kernel @not_marked_softmax_3
// TILE-NOT: tile.resident_softmax
// GPU-LABEL: func.func @not_marked_softmax_0
// GPU-SAME:   gpu.block_size = 256
// GPU-LABEL: func.func @not_marked_softmax_1
// GPU-SAME:   gpu.block_size = 256
// GPU-LABEL: func.func @not_marked_softmax_2
// GPU-SAME:   gpu.block_size = 256
// GPU-LABEL: func.func @not_marked_softmax_3
// GPU-SAME:   gpu.block_size = 256
func.func @not_marked(%a: tensor<64x2048xbf16>, %b: tensor<2x28673xf32>, %c: tensor<5000x3xf32>, %d: tensor<4x3000xf64>) -> (tensor<64x2048xbf16>, tensor<2x28673xf32>, tensor<5000x3xf32>, tensor<4x3000xf64>) {
  %0 = graph.softmax %a {axis = -1 : i64} : (tensor<64x2048xbf16>) -> tensor<64x2048xbf16>
  %1 = graph.softmax %b {axis = -1 : i64} : (tensor<2x28673xf32>) -> tensor<2x28673xf32>
  %2 = graph.softmax %c {axis = 0 : i64} : (tensor<5000x3xf32>) -> tensor<5000x3xf32>
  %3 = graph.softmax %d {axis = -1 : i64} : (tensor<4x3000xf64>) -> tensor<4x3000xf64>
  func.return %0, %1, %2, %3 : tensor<64x2048xbf16>, tensor<2x28673xf32>, tensor<5000x3xf32>, tensor<4x3000xf64>
}

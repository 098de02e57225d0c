// A kernel marked tile.resident_softmax that is not what lower-graph-to-tile marks (here y's
// view is x's transposed, so the rows' chunks do not line up; likewise a third buffer, a
// row past the shared memory, or a grid that is not one point per row) is a clear error
// naming the kernel, not a wrong kernel.
// RUN: not strata-opt %s -p lower-tile-to-gpu 2>&1 | filecheck %s

// CHECK: lower-tile-to-gpu: @transposed: tile.resident_softmax needs {log: bool} on a kernel of two viewed buffers
tile.kernel @transposed(%0: memref<15003xbf16>, %1: memref<15003xbf16>) attributes {grid = array<i64: 3>, tile.resident_softmax = {log = false}} {
  %2 = tile.make_tensor_view %0 : memref<15003xbf16> -> !tile.tensor_view<3x5001xbf16, strides [5001, 1], offset 0>
  %3 = tile.make_tensor_view %1 : memref<15003xbf16> -> !tile.tensor_view<3x5001xbf16, strides [1, 3], offset 0>
  tile.return
}

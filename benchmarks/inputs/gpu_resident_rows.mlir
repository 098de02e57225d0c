// Softmax rows held in shared memory on sm_90 (tile.resident_softmax): bf16 rows of an odd
// length (each starts at another offset in its 16-byte chunk, the last chunk of the buffer
// reaches past its end) and an f32 log_softmax, for compute-sanitizer.
func.func @main(%x: tensor<7x5001xbf16>, %z: tensor<3x3000xf32>) -> (tensor<7x5001xbf16>, tensor<3x3000xf32>) {
  %y = graph.softmax %x {axis = -1 : i64} : (tensor<7x5001xbf16>) -> tensor<7x5001xbf16>
  %l = graph.log_softmax %z {axis = -1 : i64} : (tensor<3x3000xf32>) -> tensor<3x3000xf32>
  func.return %y, %l : tensor<7x5001xbf16>, tensor<3x3000xf32>
}

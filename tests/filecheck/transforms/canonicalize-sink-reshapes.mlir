// canonicalize sinks reshapes below elementwise ops (graph_canonicalize.SinkReshapes): an
// elementwise op most of whose operands are reshapes of one shape runs on that shape and
// is reshaped after, so that it sits next to the op producing its input (a PyTorch
// Linear's bias add and view, then the activation: the activation joins the matmul's
// epilogue). An op with as many other operands as reshaped ones, or that broadcasts, keeps
// its reshapes (moving them would only move them back and forth).
// RUN: strata-opt %s -p canonicalize | filecheck %s
// RUN: strata-opt %s -p canonicalize,fuse-elementwise | filecheck %s --check-prefix=FUSED

func.func @linear_gelu(%x: tensor<32x64xbf16>, %w: tensor<64x128xbf16>, %b: tensor<128xbf16>) -> tensor<2x16x128xbf16> {
  %m = graph.matmul %x, %w : (tensor<32x64xbf16>, tensor<64x128xbf16>) -> tensor<32x128xbf16>
  %a = graph.add %m, %b : (tensor<32x128xbf16>, tensor<128xbf16>) -> tensor<32x128xbf16>
  %r = graph.reshape %a : (tensor<32x128xbf16>) -> tensor<2x16x128xbf16>
  %g = graph.gelu %r {approximate = "tanh"} : (tensor<2x16x128xbf16>) -> tensor<2x16x128xbf16>
  func.return %g : tensor<2x16x128xbf16>
}

func.func @both_reshaped(%a: tensor<6x4xf32>, %b: tensor<6x4xf32>) -> tensor<2x3x4xf32> {
  %ra = graph.reshape %a : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %rb = graph.reshape %b : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %s = graph.mul %ra, %rb : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %s : tensor<2x3x4xf32>
}

func.func @one_of_two(%a: tensor<6x4xf32>, %c: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %ra = graph.reshape %a : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %s = graph.add %ra, %c : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %s : tensor<2x3x4xf32>
}

func.func @broadcasting(%a: tensor<6x4xf32>, %c: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %ra = graph.reshape %a : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %s = graph.add %ra, %c : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %s : tensor<2x3x4xf32>
}

func.func @cast(%a: tensor<6x4xf32>) -> tensor<2x3x4xbf16> {
  %ra = graph.reshape %a : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %c = graph.cast %ra : (tensor<2x3x4xf32>) -> tensor<2x3x4xbf16>
  func.return %c : tensor<2x3x4xbf16>
}

// CHECK-LABEL: func.func @linear_gelu
// CHECK:         %a = graph.add %m, %b
// CHECK-NEXT:    [[G:%.*]] = graph.gelu %a {approximate = "tanh"} : (tensor<32x128xbf16>) -> tensor<32x128xbf16>
// CHECK-NEXT:    [[R:%.*]] = graph.reshape [[G]] : (tensor<32x128xbf16>) -> tensor<2x16x128xbf16>
// CHECK-NEXT:    func.return [[R]]

// CHECK-LABEL: func.func @both_reshaped
// CHECK-NEXT:    [[M:%.*]] = graph.mul %a, %b : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:    [[R:%.*]] = graph.reshape [[M]] : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return [[R]]

// CHECK-LABEL: func.func @one_of_two
// CHECK-NEXT:    %ra = graph.reshape %a
// CHECK-NEXT:    %s = graph.add %ra, %c
// CHECK-LABEL: func.func @broadcasting
// CHECK-NEXT:    %ra = graph.reshape %a
// CHECK-NEXT:    %s = graph.add %ra, %c

// A cast keeps its result element type on the reshape's source shape.
// CHECK-LABEL: func.func @cast
// CHECK-NEXT:    [[C:%.*]] = graph.cast %a : (tensor<6x4xf32>) -> tensor<6x4xbf16>
// CHECK-NEXT:    [[R:%.*]] = graph.reshape [[C]] : (tensor<6x4xbf16>) -> tensor<2x3x4xbf16>
// CHECK-NEXT:    func.return [[R]]

// The matmul, its bias add and the gelu are one fused op; only the free reshape follows.
// FUSED-LABEL: func.func @linear_gelu
// FUSED-NEXT:    [[F:%.*]] = graph.fused %x, %w, %b
// FUSED:           graph.matmul
// FUSED-NEXT:      graph.add
// FUSED-NEXT:      graph.gelu
// FUSED:         graph.reshape [[F]]

// Every vsla op parses in its custom form, prints, and re-parses; the generic form
// round-trips too.
// RUN: strata-opt %s | strata-opt | filecheck %s
// RUN: strata-opt %s --print-op-generic | strata-opt --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @ops
// CHECK:       vsla.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
// CHECK:       vsla.sub %m, %n : (tensor<2x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK:       vsla.hadamard %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
// CHECK:       vsla.scale %a {factor = 2.500000e+00 : f64} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:       vsla.conv %a, %b {method = "fft"} : (tensor<3xf32>, tensor<2xf32>) -> tensor<4xf32>
// CHECK:       vsla.conv %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<4xf32>
// CHECK:       vsla.kron %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<6xf32>
// CHECK:       vsla.stack %a, %b, %e : (tensor<3xf32>, tensor<2xf32>, tensor<0xf32>) -> tensor<3x3xf32>
// CHECK:       vsla.window %s {size = 4 : i64} : (tensor<10x3xf32>) -> tensor<2x4x3xf32>
// CHECK:       vsla.window %s {size = 4 : i64, stride = 2 : i64} : (tensor<10x3xf32>) -> tensor<4x4x3xf32>
// CHECK:       vsla.sum %m {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK:       vsla.mean %m {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK-COUNT-6: vsla.{{relu|exp|log|tanh|sigmoid|gelu}} %a : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:       vsla.conv %e, %a : (tensor<0xf32>, tensor<3xf32>) -> tensor<0xf32>
// CHECK:       vsla.conv %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
// GENERIC:     "vsla.conv"(%{{.*}}, %{{.*}}) <{method = "fft"}> : (tensor<3xf32>, tensor<2xf32>) -> tensor<4xf32>
// GENERIC:     "vsla.window"(%{{.*}}) <{size = 4 : i64}> : (tensor<10x3xf32>) -> tensor<2x4x3xf32>
func.func @ops(%a: tensor<3xf32>, %b: tensor<2xf32>, %e: tensor<0xf32>, %m: tensor<2x3xf32>, %n: tensor<4x1xf32>, %s: tensor<10x3xf32>) {
  %0 = vsla.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  %1 = vsla.sub %m, %n : (tensor<2x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %2 = vsla.hadamard %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  %3 = vsla.scale %a {factor = 2.5 : f64} : (tensor<3xf32>) -> tensor<3xf32>
  %4 = "vsla.conv"(%a, %b) <{method = "fft"}> : (tensor<3xf32>, tensor<2xf32>) -> tensor<4xf32>
  %5 = vsla.conv %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<4xf32>
  %6 = vsla.kron %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<6xf32>
  %7 = vsla.stack %a, %b, %e : (tensor<3xf32>, tensor<2xf32>, tensor<0xf32>) -> tensor<3x3xf32>
  %8 = vsla.window %s {size = 4 : i64} : (tensor<10x3xf32>) -> tensor<2x4x3xf32>
  %19 = vsla.window %s {size = 4 : i64, stride = 2 : i64} : (tensor<10x3xf32>) -> tensor<4x4x3xf32>
  %9 = vsla.sum %m {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
  %10 = vsla.mean %m {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
  %11 = vsla.relu %a : (tensor<3xf32>) -> tensor<3xf32>
  %12 = vsla.exp %a : (tensor<3xf32>) -> tensor<3xf32>
  %13 = vsla.log %a : (tensor<3xf32>) -> tensor<3xf32>
  %14 = vsla.tanh %a : (tensor<3xf32>) -> tensor<3xf32>
  %15 = vsla.sigmoid %a : (tensor<3xf32>) -> tensor<3xf32>
  %16 = vsla.gelu %a : (tensor<3xf32>) -> tensor<3xf32>
  %17 = vsla.conv %e, %a : (tensor<0xf32>, tensor<3xf32>) -> tensor<0xf32>
  %18 = vsla.conv %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  func.return
}

func.func @main(%q: tensor<2x3x70x64xbf16>, %k: tensor<2x3x70x64xbf16>, %v: tensor<2x3x70x64xbf16>, %q2: tensor<1x33x32xf16>, %k2: tensor<1x150x32xf16>, %v2: tensor<1x150x16xf16>, %q3: tensor<2x150x128xf16>, %k3: tensor<2x200x128xf16>, %v3: tensor<2x200x128xf16>) -> (tensor<2x3x70x64xbf16>, tensor<1x33x16xf16>, tensor<2x150x128xf16>) {
  %0 = "graph.attention"(%q, %k, %v) <{scale = 0.125 : f64, causal = true}> : (tensor<2x3x70x64xbf16>, tensor<2x3x70x64xbf16>, tensor<2x3x70x64xbf16>) -> tensor<2x3x70x64xbf16>
  %1 = "graph.attention"(%q2, %k2, %v2) <{scale = 0.17677669529663687 : f64, causal = false}> : (tensor<1x33x32xf16>, tensor<1x150x32xf16>, tensor<1x150x16xf16>) -> tensor<1x33x16xf16>
  %2 = "graph.attention"(%q3, %k3, %v3) <{scale = 0.08838834764831845 : f64, causal = false}> : (tensor<2x150x128xf16>, tensor<2x200x128xf16>, tensor<2x200x128xf16>) -> tensor<2x150x128xf16>
  func.return %0, %1, %2 : tensor<2x3x70x64xbf16>, tensor<1x33x16xf16>, tensor<2x150x128xf16>
}

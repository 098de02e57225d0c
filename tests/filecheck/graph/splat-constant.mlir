// A splat literal stays one stored element (support.dtypes.is_compact_splat) through
// parse, verify, print (custom and generic forms), canonicalize, cse, fusion and the
// lowering to tile: xDSL 0.74 alone fills this 110-byte constant out to 50M elements
// (4 GB, 13 s); here it takes well under a second.
// RUN: strata-opt %s | filecheck %s
// RUN: strata-opt %s --print-op-generic | strata-opt - | filecheck %s
// RUN: strata-opt %s -p canonicalize,cse,fuse-patterns,fuse-elementwise | filecheck %s --check-prefix=FUSED
// RUN: strata-opt %s -p lower-graph-to-tile | filecheck %s --check-prefix=TILE

// CHECK-LABEL: func.func @splat
// CHECK-NEXT:    %c = graph.constant dense<1.000000e+00> : tensor<50000000xf32>
// CHECK-NEXT:    %b = graph.constant dense<true> : tensor<1000x50000xi1>
// CHECK-NEXT:    %i = graph.constant dense<-3> : tensor<50000000xi32>
// CHECK-NEXT:    %h = graph.constant dense<2.000000e+00> : tensor<50000000xf32>
// CHECK-NEXT:    func.return %c, %b, %i, %h

// FUSED-LABEL: func.func @splat
// FUSED-DAG:     graph.constant dense<1.000000e+00> : tensor<50000000xf32>
// FUSED-DAG:     graph.constant dense<true> : tensor<1000x50000xi1>
// FUSED-DAG:     graph.constant dense<-3> : tensor<50000000xi32>
// FUSED-DAG:     graph.constant dense<2.000000e+00> : tensor<50000000xf32>

// TILE-LABEL: func.func @splat
// TILE:         tile.buffer {init = dense<1.000000e+00> : tensor<50000000xf32>} : memref<50000000xf32>
// TILE:         tile.buffer {init = dense<true> : tensor<1000x50000xi1>} : memref<50000000xi1>
// TILE:         tile.buffer {init = dense<-3> : tensor<50000000xi32>} : memref<50000000xi32>
// TILE:         tile.buffer {init = dense<2.000000e+00> : tensor<50000000xf32>} : memref<50000000xf32>

func.func @splat() -> (tensor<50000000xf32>, tensor<1000x50000xi1>, tensor<50000000xi32>, tensor<50000000xf32>) {
  %c = "graph.constant"() <{value = dense<1.0> : tensor<50000000xf32>}> : () -> tensor<50000000xf32>
  %b = graph.constant dense<true> : tensor<1000x50000xi1>
  %i = graph.constant dense<-3> : tensor<50000000xi32>
  %h = graph.constant dense<"0x00000040"> : tensor<50000000xf32>
  func.return %c, %b, %i, %h : tensor<50000000xf32>, tensor<1000x50000xi1>, tensor<50000000xi32>, tensor<50000000xf32>
}

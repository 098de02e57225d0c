// lower-tile-to-loops (CPU): every tile.kernel becomes a func.func taking its buffers plus
// a [begin, end) range of the flattened grid, returning an i32 status and carrying
// tile.grid. The grid range is one scf.for, each grid index is delinearized row-major
// (remui/divui, last axis first), and each tile expression is evaluated element by element
// in an scf.for nest over the tile's valid extent (min(size - origin, tile) only on axes
// whose size is not a multiple of the tile). Reductions, mma accumulators and loop-carried
// tiles live in stack buffers allocated once per call; program functions are kept.
// RUN: strata-opt %s -p lower-tile-to-loops --split-input-file | filecheck %s
// RUN: strata-opt %s -p lower-tile-to-loops --split-input-file | filecheck %s --check-prefix=NOTILE

// Nothing of the tile level is left inside the kernels: no tile or token ops, no tile
// types, no loop-carried tiles (only the dot-product form carries scalar f32 sums;
// tile.buffer / tile.launch of the program stay).
// NOTILE-NOT: tile.kernel
// NOTILE-NOT: {{tile\.(program_id|make_tensor_view|make_partition_view|load_view_tko|store_view_tko|map|yield|reduce|broadcast|iota|mma|return)}}
// NOTILE-NOT: token.
// NOTILE-NOT: !tile.
// NOTILE-NOT: iter_args({{.*}}) -> ({{.*}}!tile
// NOTILE-NOT: iter_args({{.*}}) -> ({{.*}}!token

// A constant tile stored to x[7x5] (offset 2) on 4x8 tiles: both axes have a partial edge
// tile, so the store loops run to min(size - origin, tile).
tile.kernel @fill(%y: memref<37xf32>) attributes {grid = array<i64: 2, 1>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %vy = tile.make_tensor_view %y : memref<37xf32> -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 2>
  %py = tile.make_partition_view %vy : !tile.tensor_view<7x5xf32, strides [5, 1], offset 2> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 2>>
  %t0 = token.make : !token.token
  %ones = tile.map : () -> !tile.tile<4x8xf32> {
    %one = arith.constant 1.000000e+00 : f32
    tile.yield %one : f32
  }
  %t1 = tile.store_view_tko %ones, %py[%i, %j] token %t0 : !tile.tile<4x8xf32>, !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 2>>
  tile.return
}

// CHECK-LABEL: func.func @fill(
// CHECK-SAME:  %y: memref<37xf32>, [[BEGIN:%[0-9a-z_]+]]: index, [[END:%[0-9a-z_]+]]: index) -> i32 attributes {tile.grid = array<i64: 2, 1>} {
// CHECK-NEXT:    [[STEP:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for [[G:%[0-9a-z_]+]] = [[BEGIN]] to [[END]] step [[STEP]] {
// CHECK-NEXT:      [[N1:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:      [[J:%[0-9a-z_]+]] = arith.remui [[G]], [[N1]] : index
// CHECK-NEXT:      [[REST:%[0-9a-z_]+]] = arith.divui [[G]], [[N1]] : index
// CHECK-NEXT:      [[N2:%[0-9a-z_]+]] = arith.constant 2 : index
// CHECK-NEXT:      [[I:%[0-9a-z_]+]] = arith.remui [[REST]], [[N2]] : index
// CHECK-NEXT:      arith.divui [[REST]], [[N2]] : index
// CHECK:           [[R0:%[0-9a-z_]+]] = arith.muli [[I]], {{%[0-9a-z_]+}} : index
// CHECK-NEXT:      [[T8:%[0-9a-z_]+]] = arith.constant 8 : index
// CHECK-NEXT:      [[C0:%[0-9a-z_]+]] = arith.muli [[J]], [[T8]] : index
// CHECK-NEXT:      [[S7:%[0-9a-z_]+]] = arith.constant 7 : index
// CHECK-NEXT:      [[RLEFT:%[0-9a-z_]+]] = arith.subi [[S7]], [[R0]] : index
// CHECK-NEXT:      [[TR:%[0-9a-z_]+]] = arith.constant 4 : index
// CHECK-NEXT:      [[ROWS:%[0-9a-z_]+]] = arith.minsi [[RLEFT]], [[TR]] : index
// CHECK-NEXT:      [[S5:%[0-9a-z_]+]] = arith.constant 5 : index
// CHECK-NEXT:      [[CLEFT:%[0-9a-z_]+]] = arith.subi [[S5]], [[C0]] : index
// CHECK-NEXT:      [[TC:%[0-9a-z_]+]] = arith.constant 8 : index
// CHECK-NEXT:      [[COLS:%[0-9a-z_]+]] = arith.minsi [[CLEFT]], [[TC]] : index
// CHECK-NEXT:      [[LO:%[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-NEXT:      [[ONE:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:      scf.for [[R:%[0-9a-z_]+]] = [[LO]] to [[ROWS]] step [[ONE]] {
// CHECK-NEXT:        {{%[0-9a-z_]+}} = arith.constant 0 : index
// CHECK-NEXT:        {{%[0-9a-z_]+}} = arith.constant 1 : index
// CHECK-NEXT:        scf.for [[C:%[0-9a-z_]+]] = {{%[0-9a-z_]+}} to [[COLS]] step {{%[0-9a-z_]+}} {
// The map body, inlined; then the element offset 2 + (r0 + r) * 5 + (c0 + c) * 1.
// CHECK-NEXT:          %one = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:          [[BASE:%[0-9a-z_]+]] = arith.constant 2 : index
// CHECK-NEXT:          [[RR:%[0-9a-z_]+]] = arith.addi [[R0]], [[R]] : index
// CHECK-NEXT:          [[RS:%[0-9a-z_]+]] = arith.constant 5 : index
// CHECK-NEXT:          [[RM:%[0-9a-z_]+]] = arith.muli [[RR]], [[RS]] : index
// CHECK-NEXT:          [[O1:%[0-9a-z_]+]] = arith.addi [[BASE]], [[RM]] : index
// CHECK-NEXT:          [[CC:%[0-9a-z_]+]] = arith.addi [[C0]], [[C]] : index
// CHECK-NEXT:          [[CS:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:          [[CM:%[0-9a-z_]+]] = arith.muli [[CC]], [[CS]] : index
// CHECK-NEXT:          [[O2:%[0-9a-z_]+]] = arith.addi [[O1]], [[CM]] : index
// CHECK-NEXT:          memref.store %one, %y{{\[}}[[O2]]{{\]}} : memref<37xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    [[OK:%[0-9a-z_]+]] = arith.constant 0 : i32
// CHECK-NEXT:    func.return [[OK]] : i32
// CHECK-NEXT:  }

// -----

// exp of x[8x16] on 4x8 tiles: every tile is whole, so the extents are the tile sizes —
// no size - origin, no min. The map is fused into the store's loop nest: each element
// is loaded, mapped and stored in one pass, with no stack buffer.
tile.kernel @exp(%x: memref<128xf32>, %y: memref<128xf32>) attributes {grid = array<i64: 2, 2>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %vx = tile.make_tensor_view %x : memref<128xf32> -> !tile.tensor_view<8x16xf32, strides [16, 1], offset 0>
  %vy = tile.make_tensor_view %y : memref<128xf32> -> !tile.tensor_view<8x16xf32, strides [16, 1], offset 0>
  %px = tile.make_partition_view %vx : !tile.tensor_view<8x16xf32, strides [16, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<8x16xf32, strides [16, 1], offset 0>>
  %py = tile.make_partition_view %vy : !tile.tensor_view<8x16xf32, strides [16, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<8x16xf32, strides [16, 1], offset 0>>
  %t0 = token.make : !token.token
  %xt, %t1 = tile.load_view_tko %px[%i, %j] token %t0 : !tile.partition_view<4x8, !tile.tensor_view<8x16xf32, strides [16, 1], offset 0>> -> !tile.tile<4x8xf32>
  %e = tile.map %xt : (!tile.tile<4x8xf32>) -> !tile.tile<4x8xf32> {
  ^bb0(%v: f32):
    %r = math.exp %v : f32
    tile.yield %r : f32
  }
  %t2 = tile.store_view_tko %e, %py[%i, %j] token %t1 : !tile.tile<4x8xf32>, !tile.partition_view<4x8, !tile.tensor_view<8x16xf32, strides [16, 1], offset 0>>
  tile.return
}

// CHECK-LABEL: func.func @exp(
// CHECK-SAME:  %x: memref<128xf32>, %y: memref<128xf32>, [[BEGIN:%[0-9a-z_]+]]: index, [[END:%[0-9a-z_]+]]: index) -> i32 attributes {tile.grid = array<i64: 2, 2>} {
// CHECK-NOT:     memref.alloca
// CHECK:         scf.for [[G:%[0-9a-z_]+]] = [[BEGIN]] to [[END]] step {{%[0-9a-z_]+}} {
// CHECK-NEXT:      [[N2:%[0-9a-z_]+]] = arith.constant 2 : index
// CHECK-NEXT:      [[J:%[0-9a-z_]+]] = arith.remui [[G]], [[N2]] : index
// CHECK-NEXT:      [[REST:%[0-9a-z_]+]] = arith.divui [[G]], [[N2]] : index
// CHECK-NEXT:      [[N2B:%[0-9a-z_]+]] = arith.constant 2 : index
// CHECK-NEXT:      [[I:%[0-9a-z_]+]] = arith.remui [[REST]], [[N2B]] : index
// CHECK-NEXT:      arith.divui [[REST]], [[N2B]] : index
// The loaded tile's origin and extents, then the stored tile's: the extents are the
// constant tile sizes.
// CHECK-NEXT:      [[T4:%[0-9a-z_]+]] = arith.constant 4 : index
// CHECK-NEXT:      [[XR0:%[0-9a-z_]+]] = arith.muli [[I]], [[T4]] : index
// CHECK-NEXT:      [[T8:%[0-9a-z_]+]] = arith.constant 8 : index
// CHECK-NEXT:      [[XC0:%[0-9a-z_]+]] = arith.muli [[J]], [[T8]] : index
// CHECK-NEXT:      {{%[0-9a-z_]+}} = arith.constant 4 : index
// CHECK-NEXT:      {{%[0-9a-z_]+}} = arith.constant 8 : index
// CHECK-NEXT:      [[T4B:%[0-9a-z_]+]] = arith.constant 4 : index
// CHECK-NEXT:      [[YR0:%[0-9a-z_]+]] = arith.muli [[I]], [[T4B]] : index
// CHECK-NEXT:      [[T8B:%[0-9a-z_]+]] = arith.constant 8 : index
// CHECK-NEXT:      [[YC0:%[0-9a-z_]+]] = arith.muli [[J]], [[T8B]] : index
// CHECK-NEXT:      [[ROWS:%[0-9a-z_]+]] = arith.constant 4 : index
// CHECK-NEXT:      [[COLS:%[0-9a-z_]+]] = arith.constant 8 : index
// CHECK-NEXT:      {{%[0-9a-z_]+}} = arith.constant 0 : index
// CHECK-NEXT:      {{%[0-9a-z_]+}} = arith.constant 1 : index
// CHECK-NEXT:      scf.for [[R:%[0-9a-z_]+]] = {{%[0-9a-z_]+}} to [[ROWS]] step {{%[0-9a-z_]+}} {
// CHECK-NEXT:        {{%[0-9a-z_]+}} = arith.constant 0 : index
// CHECK-NEXT:        {{%[0-9a-z_]+}} = arith.constant 1 : index
// CHECK-NEXT:        scf.for [[C:%[0-9a-z_]+]] = {{%[0-9a-z_]+}} to [[COLS]] step {{%[0-9a-z_]+}} {
// CHECK-NEXT:          [[XB:%[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-NEXT:          [[XR:%[0-9a-z_]+]] = arith.addi [[XR0]], [[R]] : index
// CHECK-NEXT:          [[X16:%[0-9a-z_]+]] = arith.constant 16 : index
// CHECK-NEXT:          [[XRM:%[0-9a-z_]+]] = arith.muli [[XR]], [[X16]] : index
// CHECK-NEXT:          [[XO1:%[0-9a-z_]+]] = arith.addi [[XB]], [[XRM]] : index
// CHECK-NEXT:          [[XC:%[0-9a-z_]+]] = arith.addi [[XC0]], [[C]] : index
// CHECK-NEXT:          [[X1:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:          [[XCM:%[0-9a-z_]+]] = arith.muli [[XC]], [[X1]] : index
// CHECK-NEXT:          [[XO:%[0-9a-z_]+]] = arith.addi [[XO1]], [[XCM]] : index
// CHECK-NEXT:          [[X:%[0-9a-z_]+]] = memref.load %x{{\[}}[[XO]]{{\]}} : memref<128xf32>
// CHECK-NEXT:          %r = math.exp [[X]] : f32
// CHECK-NEXT:          [[YB:%[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-NEXT:          [[YR:%[0-9a-z_]+]] = arith.addi [[YR0]], [[R]] : index
// CHECK-NEXT:          [[Y16:%[0-9a-z_]+]] = arith.constant 16 : index
// CHECK-NEXT:          [[YRM:%[0-9a-z_]+]] = arith.muli [[YR]], [[Y16]] : index
// CHECK-NEXT:          [[YO1:%[0-9a-z_]+]] = arith.addi [[YB]], [[YRM]] : index
// CHECK-NEXT:          [[YC:%[0-9a-z_]+]] = arith.addi [[YC0]], [[C]] : index
// CHECK-NEXT:          [[Y1:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:          [[YCM:%[0-9a-z_]+]] = arith.muli [[YC]], [[Y1]] : index
// CHECK-NEXT:          [[YO:%[0-9a-z_]+]] = arith.addi [[YO1]], [[YCM]] : index
// CHECK-NEXT:          memref.store %r, %y{{\[}}[[YO]]{{\]}} : memref<128xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    [[OK:%[0-9a-z_]+]] = arith.constant 0 : i32
// CHECK-NEXT:    func.return [[OK]] : i32

// -----

// A broadcasting add c[7x5] = a[7x5] + b[5] (b with a stride-0 row axis): loads at computed
// offsets (b's skips the stride-0 axis), the map body inlined between them and the store.
// The program function that launches it is kept as it is.
tile.kernel @badd(%a: memref<35xf32>, %b: memref<5xf32>, %c: memref<35xf32>) attributes {grid = array<i64: 2, 1>} {
  %i = tile.program_id 0 : index
  %j = tile.program_id 1 : index
  %va = tile.make_tensor_view %a : memref<35xf32> -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
  %vb = tile.make_tensor_view %b : memref<5xf32> -> !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>
  %vc = tile.make_tensor_view %c : memref<35xf32> -> !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<7x5xf32, strides [5, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
  %pb = tile.make_partition_view %vb : !tile.tensor_view<7x5xf32, strides [0, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<7x5xf32, strides [5, 1], offset 0> -> !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %pa[%i, %j] token %t0 : !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>> -> !tile.tile<4x8xf32>
  %y, %t2 = tile.load_view_tko %pb[%i, %j] token %t0 : !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [0, 1], offset 0>> -> !tile.tile<4x8xf32>
  %s = tile.map %x, %y : (!tile.tile<4x8xf32>, !tile.tile<4x8xf32>) -> !tile.tile<4x8xf32> {
  ^bb0(%e: f32, %f: f32):
    %sum = arith.addf %e, %f : f32
    tile.yield %sum : f32
  }
  %t3 = token.join %t1, %t2 : !token.token
  %t4 = tile.store_view_tko %s, %pc[%i, %j] token %t3 : !tile.tile<4x8xf32>, !tile.partition_view<4x8, !tile.tensor_view<7x5xf32, strides [5, 1], offset 0>>
  tile.return
}

func.func @main(%a: memref<35xf32>, %b: memref<5xf32>) -> memref<35xf32> {
  %c = tile.buffer : memref<35xf32>
  tile.launch @badd(%a, %b, %c) : memref<35xf32>, memref<5xf32>, memref<35xf32>
  func.return %c : memref<35xf32>
}

// CHECK-LABEL: func.func @badd(
// CHECK-SAME:  %a: memref<35xf32>, %b: memref<5xf32>, %c: memref<35xf32>, [[BEGIN:%[0-9a-z_]+]]: index, [[END:%[0-9a-z_]+]]: index) -> i32 attributes {tile.grid = array<i64: 2, 1>} {
// CHECK:         scf.for {{%[0-9a-z_]+}} = [[BEGIN]] to [[END]] step
// CHECK:           scf.for [[R:%[0-9a-z_]+]] = {{%[0-9a-z_]+}} to {{%[0-9a-z_]+}} step {{%[0-9a-z_]+}} {
// CHECK-NEXT:        {{%[0-9a-z_]+}} = arith.constant 0 : index
// CHECK-NEXT:        {{%[0-9a-z_]+}} = arith.constant 1 : index
// CHECK-NEXT:        scf.for [[C:%[0-9a-z_]+]] = {{%[0-9a-z_]+}} to {{%[0-9a-z_]+}} step {{%[0-9a-z_]+}} {
// a: 0 + (row origin + r) * 5 + (column origin + c) * 1
// CHECK-NEXT:          [[AB:%[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-NEXT:          [[AR:%[0-9a-z_]+]] = arith.addi {{%[0-9a-z_]+}}, [[R]] : index
// CHECK-NEXT:          [[A5:%[0-9a-z_]+]] = arith.constant 5 : index
// CHECK-NEXT:          [[ARM:%[0-9a-z_]+]] = arith.muli [[AR]], [[A5]] : index
// CHECK-NEXT:          [[AO1:%[0-9a-z_]+]] = arith.addi [[AB]], [[ARM]] : index
// CHECK-NEXT:          [[AC:%[0-9a-z_]+]] = arith.addi {{%[0-9a-z_]+}}, [[C]] : index
// CHECK-NEXT:          [[A1:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:          [[ACM:%[0-9a-z_]+]] = arith.muli [[AC]], [[A1]] : index
// CHECK-NEXT:          [[AO:%[0-9a-z_]+]] = arith.addi [[AO1]], [[ACM]] : index
// CHECK-NEXT:          [[XA:%[0-9a-z_]+]] = memref.load %a{{\[}}[[AO]]{{\]}} : memref<35xf32>
// b: 0 + (column origin + c) * 1, no row term
// CHECK-NEXT:          [[BB:%[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-NEXT:          [[BC:%[0-9a-z_]+]] = arith.addi {{%[0-9a-z_]+}}, [[C]] : index
// CHECK-NEXT:          [[B1:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:          [[BCM:%[0-9a-z_]+]] = arith.muli [[BC]], [[B1]] : index
// CHECK-NEXT:          [[BO:%[0-9a-z_]+]] = arith.addi [[BB]], [[BCM]] : index
// CHECK-NEXT:          [[XB:%[0-9a-z_]+]] = memref.load %b{{\[}}[[BO]]{{\]}} : memref<5xf32>
// CHECK-NEXT:          %sum = arith.addf [[XA]], [[XB]] : f32
// c: like a
// CHECK-NEXT:          [[CB:%[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-NEXT:          [[CR:%[0-9a-z_]+]] = arith.addi {{%[0-9a-z_]+}}, [[R]] : index
// CHECK-NEXT:          [[C5:%[0-9a-z_]+]] = arith.constant 5 : index
// CHECK-NEXT:          [[CRM:%[0-9a-z_]+]] = arith.muli [[CR]], [[C5]] : index
// CHECK-NEXT:          [[CO1:%[0-9a-z_]+]] = arith.addi [[CB]], [[CRM]] : index
// CHECK-NEXT:          [[CC:%[0-9a-z_]+]] = arith.addi {{%[0-9a-z_]+}}, [[C]] : index
// CHECK-NEXT:          [[C1:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:          [[CCM:%[0-9a-z_]+]] = arith.muli [[CC]], [[C1]] : index
// CHECK-NEXT:          [[CO:%[0-9a-z_]+]] = arith.addi [[CO1]], [[CCM]] : index
// CHECK-NEXT:          memref.store %sum, %c{{\[}}[[CO]]{{\]}} : memref<35xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         func.return {{%[0-9a-z_]+}} : i32
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @main(%a: memref<35xf32>, %b: memref<5xf32>) -> memref<35xf32> {
// CHECK-NEXT:    %c = tile.buffer : memref<35xf32>
// CHECK-NEXT:    tile.launch @badd(%a, %b, %c) : memref<35xf32>, memref<5xf32>, memref<35xf32>
// CHECK-NEXT:    func.return %c : memref<35xf32>
// CHECK-NEXT:  }

// -----

// A row sum of x[16x12] on 4x16 tiles: 16 rows are whole tiles (constant extent), 12
// columns are one partial tile (min(12 - origin, 16)). tile.reduce accumulates into a
// stack buffer allocated before the grid loop, reset per grid point to the identity, and
// combined with a reassociable (fastmath<reassoc>) addf.
tile.kernel @rowsum(%x: memref<192xf32>, %s: memref<16xf32>) attributes {grid = array<i64: 4>} {
  %r = tile.program_id 0 : index
  %c0 = arith.constant 0 : index
  %vx = tile.make_tensor_view %x : memref<192xf32> -> !tile.tensor_view<16x12xf32, strides [12, 1], offset 0>
  %vs = tile.make_tensor_view %s : memref<16xf32> -> !tile.tensor_view<16x1xf32, strides [1, 0], offset 0>
  %px = tile.make_partition_view %vx : !tile.tensor_view<16x12xf32, strides [12, 1], offset 0> -> !tile.partition_view<4x16, !tile.tensor_view<16x12xf32, strides [12, 1], offset 0>>
  %ps = tile.make_partition_view %vs : !tile.tensor_view<16x1xf32, strides [1, 0], offset 0> -> !tile.partition_view<4x1, !tile.tensor_view<16x1xf32, strides [1, 0], offset 0>>
  %t0 = token.make : !token.token
  %xt, %t1 = tile.load_view_tko %px[%r, %c0] token %t0 : !tile.partition_view<4x16, !tile.tensor_view<16x12xf32, strides [12, 1], offset 0>> -> !tile.tile<4x16xf32>
  %sum = tile.reduce %xt {axes = array<i64: 1>, kind = "sum"} : !tile.tile<4x16xf32> -> !tile.tile<4x1xf32>
  %t2 = tile.store_view_tko %sum, %ps[%r, %c0] token %t1 : !tile.tile<4x1xf32>, !tile.partition_view<4x1, !tile.tensor_view<16x1xf32, strides [1, 0], offset 0>>
  tile.return
}

// CHECK-LABEL: func.func @rowsum(
// CHECK-SAME:  %x: memref<192xf32>, %s: memref<16xf32>, [[BEGIN:%[0-9a-z_]+]]: index, [[END:%[0-9a-z_]+]]: index) -> i32 attributes {tile.grid = array<i64: 4>} {
// CHECK-NEXT:    [[ACC:%[0-9a-z_]+]] = memref.alloca() {alignment = 64 : i64} : memref<4x1xf32>
// CHECK-NEXT:    [[STEP:%[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for [[G:%[0-9a-z_]+]] = [[BEGIN]] to [[END]] step [[STEP]] {
// CHECK-NEXT:      [[N4:%[0-9a-z_]+]] = arith.constant 4 : index
// CHECK-NEXT:      [[ROWTILE:%[0-9a-z_]+]] = arith.remui [[G]], [[N4]] : index
// CHECK-NEXT:      arith.divui [[G]], [[N4]] : index
// CHECK-NEXT:      %c0 = arith.constant 0 : index
// CHECK-NEXT:      [[T4:%[0-9a-z_]+]] = arith.constant 4 : index
// CHECK-NEXT:      [[R0:%[0-9a-z_]+]] = arith.muli [[ROWTILE]], [[T4]] : index
// CHECK-NEXT:      [[T16:%[0-9a-z_]+]] = arith.constant 16 : index
// CHECK-NEXT:      [[C0:%[0-9a-z_]+]] = arith.muli %c0, [[T16]] : index
// CHECK-NEXT:      [[ROWS:%[0-9a-z_]+]] = arith.constant 4 : index
// CHECK-NEXT:      [[S12:%[0-9a-z_]+]] = arith.constant 12 : index
// CHECK-NEXT:      [[CLEFT:%[0-9a-z_]+]] = arith.subi [[S12]], [[C0]] : index
// CHECK-NEXT:      [[T16B:%[0-9a-z_]+]] = arith.constant 16 : index
// CHECK-NEXT:      [[COLS:%[0-9a-z_]+]] = arith.minsi [[CLEFT]], [[T16B]] : index
// Reset the whole 4x1 buffer to the identity.
// CHECK:           scf.for [[IR:%[0-9a-z_]+]] =
// CHECK:             scf.for [[IC:%[0-9a-z_]+]] =
// CHECK-NEXT:          [[ID:%[0-9a-z_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:          memref.store [[ID]], [[ACC]]{{\[}}[[IR]], [[IC]]{{\]}} : memref<4x1xf32>
// Accumulate over the valid 4 x min(12 - origin, 16) elements.
// CHECK:           scf.for [[R:%[0-9a-z_]+]] = {{%[0-9a-z_]+}} to [[ROWS]] step
// CHECK:             scf.for [[C:%[0-9a-z_]+]] = {{%[0-9a-z_]+}} to [[COLS]] step
// CHECK-NEXT:          [[Z:%[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-NEXT:          [[CUR:%[0-9a-z_]+]] = memref.load [[ACC]]{{\[}}[[R]], [[Z]]{{\]}} : memref<4x1xf32>
// CHECK:               [[E:%[0-9a-z_]+]] = memref.load %x{{\[}}{{%[0-9a-z_]+}}{{\]}} : memref<192xf32>
// CHECK-NEXT:          [[NEW:%[0-9a-z_]+]] = arith.addf [[CUR]], [[E]] fastmath<reassoc> : f32
// CHECK-NEXT:          memref.store [[NEW]], [[ACC]]{{\[}}[[R]], [[Z]]{{\]}} : memref<4x1xf32>
// The result is read back from the buffer and stored.
// CHECK:           scf.for [[SR:%[0-9a-z_]+]] =
// CHECK:             scf.for [[SC:%[0-9a-z_]+]] =
// CHECK-NEXT:          [[V:%[0-9a-z_]+]] = memref.load [[ACC]]{{\[}}[[SR]], [[SC]]{{\]}} : memref<4x1xf32>
// CHECK:               memref.store [[V]], %s{{\[}}{{%[0-9a-z_]+}}{{\]}} : memref<16xf32>
// CHECK-NOT:     memref.alloca
// CHECK:         func.return {{%[0-9a-z_]+}} : i32

// -----

// A matmul K loop (c[64x48] = a[64x32] @ b[32x48], 16x8 output tiles, K tiles of 8)
// whose scf.for carries the accumulator tile: the carried tile becomes a stack buffer
// (initialized from the zero map), the loop carries nothing, and tile.mma is an i-k-j
// loop nest of mulf/addf (8 columns are less than a vector, so
// this tile takes the scalar loops, not the micro-kernel) updating that buffer in place: it is the kernel's only stack
// buffer (allocas all sit at the top of the function), so there is no separate
// accumulator copied back at the yield. (Rows may be blocked; the mulf/addf pair may
// carry fastmath<contract>, never reassoc.)
tile.kernel @matmul(%a: memref<2048xf32>, %b: memref<1536xf32>, %c: memref<3072xf32>) attributes {grid = array<i64: 4, 6>} {
  %m = tile.program_id 0 : index
  %n = tile.program_id 1 : index
  %va = tile.make_tensor_view %a : memref<2048xf32> -> !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>
  %vb = tile.make_tensor_view %b : memref<1536xf32> -> !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>
  %vc = tile.make_tensor_view %c : memref<3072xf32> -> !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<64x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x8, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>>
  %pb = tile.make_partition_view %vb : !tile.tensor_view<32x48xf32, strides [48, 1], offset 0> -> !tile.partition_view<8x8, !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<64x48xf32, strides [48, 1], offset 0> -> !tile.partition_view<16x8, !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>>
  %zero = tile.map : () -> !tile.tile<16x8xf32> {
    %z = arith.constant 0.000000e+00 : f32
    tile.yield %z : f32
  }
  %t0 = token.make : !token.token
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %step = arith.constant 1 : index
  %acc = scf.for %k = %lb to %ub step %step iter_args(%c_acc = %zero) -> (!tile.tile<16x8xf32>) {
    %ta, %t1 = tile.load_view_tko %pa[%m, %k] token %t0 : !tile.partition_view<16x8, !tile.tensor_view<64x32xf32, strides [32, 1], offset 0>> -> !tile.tile<16x8xf32>
    %tb, %t2 = tile.load_view_tko %pb[%k, %n] token %t0 : !tile.partition_view<8x8, !tile.tensor_view<32x48xf32, strides [48, 1], offset 0>> -> !tile.tile<8x8xf32>
    %next = tile.mma %ta, %tb, %c_acc : !tile.tile<16x8xf32>, !tile.tile<8x8xf32>, !tile.tile<16x8xf32>
    scf.yield %next : !tile.tile<16x8xf32>
  }
  %t4 = tile.store_view_tko %acc, %pc[%m, %n] token %t0 : !tile.tile<16x8xf32>, !tile.partition_view<16x8, !tile.tensor_view<64x48xf32, strides [48, 1], offset 0>>
  tile.return
}

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:  %a: memref<2048xf32>, %b: memref<1536xf32>, %c: memref<3072xf32>, [[BEGIN:%[0-9a-z_]+]]: index, [[END:%[0-9a-z_]+]]: index) -> i32 attributes {tile.grid = array<i64: 4, 6>} {
// CHECK-NEXT:    [[ACC:%[0-9a-z_]+]] = memref.alloca() {alignment = 64 : i64} : memref<16x8xf32>
// CHECK-NEXT:    {{%[0-9a-z_]+}} = arith.constant 1 : index
// CHECK-NEXT:    scf.for [[G:%[0-9a-z_]+]] = [[BEGIN]] to [[END]] step
// CHECK-NEXT:      [[N3:%[0-9a-z_]+]] = arith.constant 6 : index
// CHECK-NEXT:      [[N:%[0-9a-z_]+]] = arith.remui [[G]], [[N3]] : index
// CHECK-NEXT:      [[REST:%[0-9a-z_]+]] = arith.divui [[G]], [[N3]] : index
// CHECK-NEXT:      [[N4:%[0-9a-z_]+]] = arith.constant 4 : index
// CHECK-NEXT:      [[M:%[0-9a-z_]+]] = arith.remui [[REST]], [[N4]] : index
// The accumulator starts as the zero map, written into the buffer.
// CHECK:           scf.for [[ZI:%[0-9a-z_]+]] =
// CHECK:             scf.for [[ZJ:%[0-9a-z_]+]] =
// CHECK-NEXT:          %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:          memref.store %z, [[ACC]]{{\[}}[[ZI]], [[ZJ]]{{\]}} : memref<16x8xf32>
// The K loop carries nothing.
// CHECK:           scf.for [[K:%[0-9a-z_]+]] = %lb to %ub step %step {{\{$}}
// CHECK:             [[AR0:%[0-9a-z_]+]] = arith.muli [[M]], {{%[0-9a-z_]+}} : index
// CHECK-NEXT:        {{%[0-9a-z_]+}} = arith.constant 8 : index
// CHECK-NEXT:        [[AK0:%[0-9a-z_]+]] = arith.muli [[K]], {{%[0-9a-z_]+}} : index
// CHECK:             scf.for [[I:%[0-9a-z_]+]] =
// CHECK:               scf.for [[KK:%[0-9a-z_]+]] =
// a[i, kk] at (row origin + i) * 32 + (k origin + kk) * 1
// CHECK:                 arith.addi [[AR0]], [[I]] : index
// CHECK:                 [[AKK:%[0-9a-z_]+]] = arith.addi [[AK0]], [[KK]] : index
// CHECK-NEXT:            {{%[0-9a-z_]+}} = arith.constant 1 : index
// CHECK-NEXT:            {{%[0-9a-z_]+}} = arith.muli [[AKK]], {{%[0-9a-z_]+}} : index
// CHECK-NEXT:            [[AO:%[0-9a-z_]+]] = arith.addi {{%[0-9a-z_]+}}, {{%[0-9a-z_]+}} : index
// CHECK-NEXT:            [[AIK:%[0-9a-z_]+]] = memref.load %a{{\[}}[[AO]]{{\]}} : memref<2048xf32>
// CHECK:                 scf.for [[J:%[0-9a-z_]+]] =
// CHECK-DAG:               [[BKJ:%[0-9a-z_]+]] = memref.load %b{{\[}}{{%[0-9a-z_]+}}{{\]}} : memref<1536xf32>
// CHECK-DAG:               [[CUR:%[0-9a-z_]+]] = memref.load [[ACC]]{{\[}}[[I]], [[J]]{{\]}} : memref<16x8xf32>
// CHECK:                   [[P:%[0-9a-z_]+]] = arith.mulf [[AIK]], [[BKJ]]{{( fastmath<contract>)?}} : f32
// CHECK-NEXT:              [[S:%[0-9a-z_]+]] = arith.addf [[CUR]], [[P]]{{( fastmath<contract>)?}} : f32
// CHECK-NEXT:              memref.store [[S]], [[ACC]]{{\[}}[[I]], [[J]]{{\]}} : memref<16x8xf32>
// After the K loop, the buffer is stored to c.
// CHECK:           scf.for [[SI:%[0-9a-z_]+]] =
// CHECK:             scf.for [[SJ:%[0-9a-z_]+]] =
// CHECK-NEXT:          [[V:%[0-9a-z_]+]] = memref.load [[ACC]]{{\[}}[[SI]], [[SJ]]{{\]}} : memref<16x8xf32>
// CHECK:               memref.store [[V]], %c{{\[}}{{%[0-9a-z_]+}}{{\]}} : memref<3072xf32>
// CHECK-NOT:     memref.alloca
// CHECK:         func.return {{%[0-9a-z_]+}} : i32

// -----

// A row-max pass (the shape softmax's max pass has): the loop carries a 4x1 tile that the
// body replaces by map(carried, reduce(column tile)). The carried tile is a stack buffer
// set from the init map before the loop; each step reduces into its own buffer (reset to
// -inf) and the map's result is written back into the carried buffer.
tile.kernel @rowmax(%x: memref<64xf32>, %mx: memref<4xf32>) attributes {grid = array<i64: 1>} {
  %r = tile.program_id 0 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %vx = tile.make_tensor_view %x : memref<64xf32> -> !tile.tensor_view<4x16xf32, strides [16, 1], offset 0>
  %vm = tile.make_tensor_view %mx : memref<4xf32> -> !tile.tensor_view<4x1xf32, strides [1, 0], offset 0>
  %px = tile.make_partition_view %vx : !tile.tensor_view<4x16xf32, strides [16, 1], offset 0> -> !tile.partition_view<4x4, !tile.tensor_view<4x16xf32, strides [16, 1], offset 0>>
  %pm = tile.make_partition_view %vm : !tile.tensor_view<4x1xf32, strides [1, 0], offset 0> -> !tile.partition_view<4x1, !tile.tensor_view<4x1xf32, strides [1, 0], offset 0>>
  %t0 = token.make : !token.token
  %init = tile.map : () -> !tile.tile<4x1xf32> {
    %ninf = arith.constant 0xff800000 : f32
    tile.yield %ninf : f32
  }
  %res = scf.for %col = %c0 to %c4 step %c1 iter_args(%run = %init) -> (!tile.tile<4x1xf32>) {
    %xt, %t1 = tile.load_view_tko %px[%r, %col] token %t0 : !tile.partition_view<4x4, !tile.tensor_view<4x16xf32, strides [16, 1], offset 0>> -> !tile.tile<4x4xf32>
    %part = tile.reduce %xt {axes = array<i64: 1>, kind = "max"} : !tile.tile<4x4xf32> -> !tile.tile<4x1xf32>
    %next = tile.map %run, %part : (!tile.tile<4x1xf32>, !tile.tile<4x1xf32>) -> !tile.tile<4x1xf32> {
    ^bb0(%p: f32, %q: f32):
      %bigger = arith.maximumf %p, %q : f32
      tile.yield %bigger : f32
    }
    scf.yield %next : !tile.tile<4x1xf32>
  }
  %t2 = tile.store_view_tko %res, %pm[%r, %c0] token %t0 : !tile.tile<4x1xf32>, !tile.partition_view<4x1, !tile.tensor_view<4x1xf32, strides [1, 0], offset 0>>
  tile.return
}

// CHECK-LABEL: func.func @rowmax(
// CHECK-SAME:  %x: memref<64xf32>, %mx: memref<4xf32>, [[BEGIN:%[0-9a-z_]+]]: index, [[END:%[0-9a-z_]+]]: index) -> i32 attributes {tile.grid = array<i64: 1>} {
// CHECK-NEXT:    memref.alloca() {alignment = 64 : i64} : memref<4x1xf32>
// CHECK-NEXT:    memref.alloca() {alignment = 64 : i64} : memref<4x1xf32>
// CHECK-NEXT:    {{%[0-9a-z_]+}} = arith.constant 1 : index
// CHECK-NEXT:    scf.for {{%[0-9a-z_]+}} = [[BEGIN]] to [[END]] step
// Before the loop: the carried buffer gets the init map.
// CHECK:             %ninf = arith.constant 0xff800000 : f32
// CHECK-NEXT:        memref.store %ninf, [[CARRY:%[0-9a-z_]+]]{{\[}}{{%[0-9a-z_]+}}, {{%[0-9a-z_]+}}{{\]}} : memref<4x1xf32>
// CHECK:           scf.for [[COL:%[0-9a-z_]+]] = %c0 to %c4 step %c1 {{\{$}}
// CHECK-NOT:         memref.store {{%[0-9a-z_]+}}, [[CARRY]]{{\[}}
// CHECK:                 [[NINF:%[0-9a-z_]+]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:            memref.store [[NINF]], [[PART:%[0-9a-z_]+]]{{\[}}{{%[0-9a-z_]+}}, {{%[0-9a-z_]+}}{{\]}} : memref<4x1xf32>
// CHECK-NOT:         memref.store {{%[0-9a-z_]+}}, [[CARRY]]{{\[}}
// CHECK:                 [[CUR:%[0-9a-z_]+]] = memref.load [[PART]]{{\[}}
// CHECK:                 [[E:%[0-9a-z_]+]] = memref.load %x
// CHECK-NEXT:            [[M:%[0-9a-z_]+]] = arith.maximumf [[CUR]], [[E]] fastmath<reassoc> : f32
// CHECK-NEXT:            memref.store [[M]], [[PART]]{{\[}}
// CHECK-NOT:         memref.store {{%[0-9a-z_]+}}, [[CARRY]]{{\[}}
// CHECK:               scf.for [[WR:%[0-9a-z_]+]] =
// CHECK:                 scf.for [[WC:%[0-9a-z_]+]] =
// CHECK-NEXT:              [[OLD:%[0-9a-z_]+]] = memref.load [[CARRY]]{{\[}}[[WR]], [[WC]]{{\]}} : memref<4x1xf32>
// CHECK-NEXT:              [[NEW:%[0-9a-z_]+]] = memref.load [[PART]]{{\[}}[[WR]], [[WC]]{{\]}} : memref<4x1xf32>
// CHECK-NEXT:              %bigger = arith.maximumf [[OLD]], [[NEW]] : f32
// CHECK-NEXT:              memref.store %bigger, [[CARRY]]{{\[}}[[WR]], [[WC]]{{\]}} : memref<4x1xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// After the loop the carried buffer is the result.
// CHECK:               [[RES:%[0-9a-z_]+]] = memref.load [[CARRY]]{{\[}}
// CHECK:               memref.store [[RES]], %mx{{\[}}{{%[0-9a-z_]+}}{{\]}} : memref<4xf32>
// CHECK-NOT:     memref.alloca
// CHECK:         func.return {{%[0-9a-z_]+}} : i32

// -----

// b read along k (transpose_b: its view has stride 1 on the K axis): tile.mma becomes
// dot products — 2 rows x 4 columns of sums carried through one k loop (scalar iter_args
// that LLVM vectorizes along k: fastmath<reassoc,contract>), then added to the
// accumulator; b is not packed into a stack buffer. (8 columns, less than a vector: wider
// tiles take the register-blocked micro-kernel, which packs b whatever its layout.)
tile.kernel @dot(%a: memref<512xf32>, %b: memref<256xf32>, %c: memref<128xf32>) attributes {grid = array<i64: 1, 1>} {
  %m = tile.program_id 0 : index
  %n = tile.program_id 1 : index
  %va = tile.make_tensor_view %a : memref<512xf32> -> !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>
  %vb = tile.make_tensor_view %b : memref<256xf32> -> !tile.tensor_view<32x8xf32, strides [1, 32], offset 0>
  %vc = tile.make_tensor_view %c : memref<128xf32> -> !tile.tensor_view<16x8xf32, strides [8, 1], offset 0>
  %pa = tile.make_partition_view %va : !tile.tensor_view<16x32xf32, strides [32, 1], offset 0> -> !tile.partition_view<16x32, !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>>
  %pb = tile.make_partition_view %vb : !tile.tensor_view<32x8xf32, strides [1, 32], offset 0> -> !tile.partition_view<32x8, !tile.tensor_view<32x8xf32, strides [1, 32], offset 0>>
  %pc = tile.make_partition_view %vc : !tile.tensor_view<16x8xf32, strides [8, 1], offset 0> -> !tile.partition_view<16x8, !tile.tensor_view<16x8xf32, strides [8, 1], offset 0>>
  %zero = tile.map : () -> !tile.tile<16x8xf32> {
    %z = arith.constant 0.000000e+00 : f32
    tile.yield %z : f32
  }
  %t0 = token.make : !token.token
  %c0 = arith.constant 0 : index
  %ta, %t1 = tile.load_view_tko %pa[%m, %c0] token %t0 : !tile.partition_view<16x32, !tile.tensor_view<16x32xf32, strides [32, 1], offset 0>> -> !tile.tile<16x32xf32>
  %tb, %t2 = tile.load_view_tko %pb[%c0, %n] token %t0 : !tile.partition_view<32x8, !tile.tensor_view<32x8xf32, strides [1, 32], offset 0>> -> !tile.tile<32x8xf32>
  %acc = tile.mma %ta, %tb, %zero : !tile.tile<16x32xf32>, !tile.tile<32x8xf32>, !tile.tile<16x8xf32>
  %t3 = tile.store_view_tko %acc, %pc[%m, %n] token %t0 : !tile.tile<16x8xf32>, !tile.partition_view<16x8, !tile.tensor_view<16x8xf32, strides [8, 1], offset 0>>
  tile.return
}

// CHECK-LABEL: func.func @dot(
// CHECK-NEXT:    [[ACC:%[0-9a-z_]+]] = memref.alloca() {alignment = 64 : i64} : memref<16x8xf32>
// CHECK-NOT:     memref.alloca
// CHECK:         = scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:           memref.load %b
// CHECK:           arith.mulf {{.*}} fastmath<reassoc,contract> : f32
// CHECK:           arith.addf {{.*}} fastmath<reassoc,contract> : f32
// CHECK:           scf.yield {{.*}} : f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-COUNT-8:   memref.store {{%[0-9a-z_]+}}, [[ACC]]

// RUN: strata-opt %s -p split-loops --split-input-file | filecheck %s
// RUN: strata-opt %s -p 'split-loops{threshold=100}' --split-input-file | filecheck %s --check-prefix=THRESHOLD
// RUN: strata-opt %s -p split-loops --split-input-file > %t.once
// RUN: strata-opt %s -p split-loops,split-loops --split-input-file > %t.twice
// RUN: diff %t.once %t.twice
// RUN: strata-opt %s -p split-loops,split-loops --split-input-file | filecheck %s

// The first three RUN lines check the pass; the next three that a second run changes
// nothing (the pass is idempotent); the last that the checks hold after two runs.

// `%i < %v`: the then branch runs on [lb, split), the else branch on [split, ub), with
// split = v clamped into [lb, ub] (a v outside the range leaves one empty loop).
// CHECK-LABEL: func.func @slt
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %[[MIN:.*]] = arith.minsi %v, %ub : index
// CHECK-NEXT:    %split = arith.maxsi %[[MIN]], %lb : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %lb to %split step %c1 {
// CHECK-NEXT:      memref.store %x, %a[%[[I]]] : memref<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %[[J:.*]] = %split to %ub step %c1 {
// CHECK-NEXT:      memref.store %y, %a[%[[J]]] : memref<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NOT:     scf.if
// THRESHOLD-LABEL: func.func @slt
// THRESHOLD:         scf.for
// THRESHOLD:           scf.if
// THRESHOLD-NOT:     scf.for
// THRESHOLD:         func.return
func.func @slt(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %x: f32, %y: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi slt, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// `%i <= %v`: split = min(v + 1, ub), formed without overflow (v = INT64_MAX must not
// wrap to INT64_MIN): `v < ub ? v + 1 : ub`.
// CHECK-LABEL: func.func @sle
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %[[BELOW:.*]] = arith.cmpi slt, %v, %ub : index
// CHECK-NEXT:    %[[NEXT:.*]] = arith.addi %v, %c1 : index
// CHECK-NEXT:    %[[HIGH:.*]] = arith.select %[[BELOW]], %[[NEXT]], %ub : index
// CHECK-NEXT:    %split = arith.maxsi %[[HIGH]], %lb : index
// CHECK-NEXT:    scf.for %{{.*}} = %lb to %split step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %split to %ub step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
func.func @sle(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %x: f32, %y: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi sle, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// `%i > %v`: false first; the split is the first i >= v + 1, and the then branch
// runs in the second loop.
// CHECK-LABEL: func.func @sgt
// CHECK:         %[[HIGH:.*]] = arith.select
// CHECK-NEXT:    %split = arith.maxsi %[[HIGH]], %lb : index
// CHECK-NEXT:    scf.for %{{.*}} = %lb to %split step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %split to %ub step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
func.func @sgt(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %x: f32, %y: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi sgt, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// `%i >= %v`: false first, split at v.
// CHECK-LABEL: func.func @sge
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %[[MIN:.*]] = arith.minsi %v, %ub : index
// CHECK-NEXT:    %split = arith.maxsi %[[MIN]], %lb : index
// CHECK-NEXT:    scf.for %{{.*}} = %lb to %split step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %split to %ub step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
func.func @sge(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %x: f32, %y: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi sge, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// Swapped operands: `%v < %i` is `%i > %v` (false first, split at v + 1) and
// `%v >= %i` is `%i <= %v` (true first, split at v + 1).
// CHECK-LABEL: func.func @swapped
// CHECK:         arith.cmpi slt, %v, %ub
// CHECK-NEXT:    arith.addi %v, %c1
// CHECK-NEXT:    %[[H0:.*]] = arith.select
// CHECK-NEXT:    %split = arith.maxsi %[[H0]], %lb : index
// CHECK-NEXT:    scf.for %{{.*}} = %lb to %split step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %split to %ub step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    arith.cmpi slt, %v, %ub
// CHECK-NEXT:    arith.addi %v, %c1
// CHECK-NEXT:    %[[H1:.*]] = arith.select
// CHECK-NEXT:    %[[S1:.*]] = arith.maxsi %[[H1]], %lb : index
// CHECK-NEXT:    scf.for %{{.*}} = %lb to %[[S1]] step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %[[S1]] to %ub step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NOT:     scf.if
func.func @swapped(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %x: f32, %y: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi slt, %v, %i : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi sge, %v, %i : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// Unsigned predicates, with lb = 0 (every induction value is >= 0, so unsigned order is
// monotone): the split uses minui (v = -1 is the largest value), then minsi with ub
// because an empty loop may have ub < 0.
// CHECK-LABEL: func.func @unsigned
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %[[U0:.*]] = arith.minui %v, %ub : index
// CHECK-NEXT:    %[[U1:.*]] = arith.minsi %[[U0]], %ub : index
// CHECK-NEXT:    %split = arith.maxsi %[[U1]], %c0 : index
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %split step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %split to %ub step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// ule: true first at min(v + 1, ub) in unsigned order.
// CHECK-NEXT:    %[[B1:.*]] = arith.cmpi ult, %v, %ub : index
// CHECK-NEXT:    %[[N1:.*]] = arith.addi %v, %c1 : index
// CHECK-NEXT:    %[[H1:.*]] = arith.select %[[B1]], %[[N1]], %ub : index
// CHECK-NEXT:    %[[M1:.*]] = arith.minsi %[[H1]], %ub : index
// CHECK-NEXT:    %[[S1:.*]] = arith.maxsi %[[M1]], %c0 : index
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %[[S1]] step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %[[S1]] to %ub step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// ugt: false first at v + 1.
// CHECK-NEXT:    arith.cmpi ult, %v, %ub : index
// CHECK-NEXT:    arith.addi %v, %c1 : index
// CHECK-NEXT:    arith.select
// CHECK-NEXT:    arith.minsi
// CHECK-NEXT:    %[[S2:.*]] = arith.maxsi %{{.*}}, %c0 : index
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %[[S2]] step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %[[S2]] to %ub step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// `%v uge %i` is `%i ule %v`: true first at v + 1.
// CHECK-NEXT:    arith.cmpi ult, %v, %ub : index
// CHECK-NEXT:    arith.addi %v, %c1 : index
// CHECK-NEXT:    arith.select
// CHECK-NEXT:    arith.minsi
// CHECK-NEXT:    %[[S3:.*]] = arith.maxsi %{{.*}}, %c0 : index
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %[[S3]] step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %[[S3]] to %ub step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @unsigned(%a: memref<64xf32>, %ub: index, %v: index, %x: f32, %y: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %ub step %c1 {
    %c = arith.cmpi ult, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  scf.for %i = %c0 to %ub step %c1 {
    %c = arith.cmpi ule, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  scf.for %i = %c0 to %ub step %c1 {
    %c = arith.cmpi ugt, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  scf.for %i = %c0 to %ub step %c1 {
    %c = arith.cmpi uge, %v, %i : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// lb = maxsi(%lb, 0) is known >= 0 too; with a constant ub >= 0 no minsi is needed.
// A guard without else leaves its second loop empty, so that loop is dropped.
// CHECK-LABEL: func.func @unsigned_guard
// CHECK:         %lb0 = arith.maxsi %lb, %c0 : index
// CHECK-NEXT:    %[[U:.*]] = arith.minui %v, %c64 : index
// CHECK-NEXT:    %split = arith.maxsi %[[U]], %lb0 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %lb0 to %split step %c1 {
// CHECK-NEXT:      memref.store %x, %a[%[[I]]] : memref<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @unsigned_guard(%a: memref<64xf32>, %lb: index, %v: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %lb0 = arith.maxsi %lb, %c0 : index
  scf.for %i = %lb0 to %c64 step %c1 {
    %c = arith.cmpi ult, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// Not split: an unsigned test over a lower bound that may be negative (unsigned order
// is not monotone there).
// CHECK-LABEL: func.func @unsigned_dynamic_lb
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %lb to %ub step %c1 {
// CHECK-NEXT:      %c = arith.cmpi ult, %i, %v : index
// CHECK-NEXT:      scf.if %c {
func.func @unsigned_dynamic_lb(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %x: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi ult, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// A dynamic step: split = min(lb + ceildiv(clamp(v) - lb, step) * step, ub), the first
// iteration of the original loop at or past v.
// CHECK-LABEL: func.func @step
// CHECK-NEXT:    %[[MIN:.*]] = arith.minsi %v, %ub : index
// CHECK-NEXT:    %[[X:.*]] = arith.maxsi %[[MIN]], %lb : index
// CHECK-NEXT:    %[[D:.*]] = arith.subi %[[X]], %lb : index
// CHECK-NEXT:    %[[K:.*]] = arith.ceildivsi %[[D]], %s : index
// CHECK-NEXT:    %[[O:.*]] = arith.muli %[[K]], %s : index
// CHECK-NEXT:    %[[P:.*]] = arith.addi %lb, %[[O]] : index
// CHECK-NEXT:    %split = arith.minsi %[[P]], %ub : index
// CHECK-NEXT:    scf.for %{{.*}} = %lb to %split step %s {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %split to %ub step %s {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
func.func @step(%a: memref<64xf32>, %lb: index, %ub: index, %s: index, %v: index, %x: f32, %y: f32) {
  scf.for %i = %lb to %ub step %s {
    %c = arith.cmpi slt, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// Constant bounds: the split is computed here. Inside the range: two loops at a constant
// split (with step 3 and i < 4, the first iteration past 4 is 6). At or outside the
// range: ONE loop running the branch that holds everywhere (no empty loop). An in-body
// constant counts as invariant.
// CHECK-LABEL: func.func @constant_bounds
// CHECK:         %split = arith.constant 10 : index
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %split step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %split to %c64 step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S6:.*]] = arith.constant 6 : index
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %[[S6]] step %c3 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %[[S6]] to %c10 step %c3 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// i < 100 over [0, 64): then everywhere.
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %c64 step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// i <= -5 over [0, 64): else everywhere.
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %c64 step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// i > 63 over 0, 3, ..., 63: else everywhere (the in-body constant goes too).
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %c64 step %c3 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @constant_bounds(%a: memref<64xf32>, %x: f32, %y: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c10 = arith.constant 10 : index
  %c64 = arith.constant 64 : index
  %c4 = arith.constant 4 : index
  %c100 = arith.constant 100 : index
  %cm5 = arith.constant -5 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %c = arith.cmpi slt, %i, %c10 : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  scf.for %i = %c0 to %c10 step %c3 {
    %c = arith.cmpi slt, %i, %c4 : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %c = arith.cmpi slt, %i, %c100 : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %c = arith.cmpi sle, %i, %cm5 : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  scf.for %i = %c0 to %c64 step %c3 {
    %c63 = arith.constant 63 : index
    %c = arith.cmpi sgt, %i, %c63 : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    } else {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// A guard `if (i >= v)` without else: the first loop would be empty and is dropped.
// CHECK-LABEL: func.func @guard
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %[[MIN:.*]] = arith.minsi %v, %ub : index
// CHECK-NEXT:    %split = arith.maxsi %[[MIN]], %lb : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %split to %ub step %c1 {
// CHECK-NEXT:      memref.store %x, %a[%[[I]]] : memref<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @guard(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %x: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi sge, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// iter_args and an scf.if with results: the yielded values replace the if's results,
// and the second loop starts from the first loop's results.
// CHECK-LABEL: func.func @results
// CHECK:         %split = arith.maxsi
// CHECK-NEXT:    %[[R0:.*]] = scf.for %{{.*}} = %lb to %split step %c1 iter_args(%[[A0:.*]] = %x) -> (f32) {
// CHECK-NEXT:      %[[P:.*]] = arith.addf %[[A0]], %x : f32
// CHECK-NEXT:      memref.store %[[P]], %a[%{{.*}}] : memref<64xf32>
// CHECK-NEXT:      scf.yield %[[P]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R1:.*]] = scf.for %{{.*}} = %split to %ub step %c1 iter_args(%[[A1:.*]] = %[[R0]]) -> (f32) {
// CHECK-NEXT:      %[[Q:.*]] = arith.mulf %[[A1]], %y : f32
// CHECK-NEXT:      memref.store %[[Q]], %a[%{{.*}}] : memref<64xf32>
// CHECK-NEXT:      scf.yield %[[Q]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R1]] : f32
func.func @results(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %x: f32, %y: f32) -> f32 {
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %lb to %ub step %c1 iter_args(%acc = %x) -> (f32) {
    %c = arith.cmpi slt, %i, %v : index
    %t = scf.if %c -> (f32) {
      %p = arith.addf %acc, %x : f32
      scf.yield %p : f32
    } else {
      %q = arith.mulf %acc, %y : f32
      scf.yield %q : f32
    }
    memref.store %t, %a[%i] : memref<64xf32>
    scf.yield %t : f32
  }
  func.return %r : f32
}

// -----

// Other uses of the condition see the constant it has in each loop.
// CHECK-LABEL: func.func @condition_reused
// CHECK:         scf.for %{{.*}} = %lb to %split step %c1 {
// CHECK-NEXT:      %[[T:.*]] = arith.constant true
// CHECK-NEXT:      memref.store %[[T]], %a
// CHECK-NEXT:      arith.negf %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %split to %ub step %c1 {
// CHECK-NEXT:      %[[F:.*]] = arith.constant false
// CHECK-NEXT:      memref.store %[[F]], %a
// CHECK-NEXT:    }
func.func @condition_reused(%a: memref<64xi1>, %lb: index, %ub: index, %v: index, %x: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi slt, %i, %v : index
    memref.store %c, %a[%i] : memref<64xi1>
    scf.if %c {
      %n = arith.negf %x : f32
    }
  }
  func.return
}

// -----

// Nested loops: both levels split. The outer if has no else, so
// only the outer loop's first part remains; its inner loop is split in turn.
// CHECK-LABEL: func.func @nested
// CHECK:         %split = arith.maxsi %{{.*}}, %c0 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %c0 to %split step %c1 {
// CHECK-NEXT:      %[[MIN:.*]] = arith.minsi %m, %c64 : index
// CHECK-NEXT:      %[[S:.*]] = arith.maxsi %[[MIN]], %c0 : index
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %[[S]] step %c1 {
// CHECK-NEXT:        memref.store %x, %a[%[[I]], %[[J]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for %[[K:.*]] = %[[S]] to %c64 step %c1 {
// CHECK-NEXT:        memref.store %y, %a[%[[I]], %[[K]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @nested(%a: memref<64x64xf32>, %n: index, %m: index, %x: f32, %y: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %ci = arith.cmpi slt, %i, %n : index
    scf.if %ci {
      scf.for %j = %c0 to %c64 step %c1 {
        %cj = arith.cmpi slt, %j, %m : index
        scf.if %cj {
          memref.store %x, %a[%i, %j] : memref<64x64xf32>
        } else {
          memref.store %y, %a[%i, %j] : memref<64x64xf32>
        }
      }
    }
  }
  func.return
}

// -----

// The inner loop compares its induction variable with the outer one (`i <= j` is
// `j >= i`): the outer iv is invariant in the inner loop, which splits at i; the outer
// loop has no condition of its own and stays one loop.
// CHECK-LABEL: func.func @triangle
// CHECK:         scf.for %[[I:.*]] = %c0 to %c64 step %c1 {
// CHECK-NEXT:      %[[MIN:.*]] = arith.minsi %[[I]], %c64 : index
// CHECK-NEXT:      %[[S:.*]] = arith.maxsi %[[MIN]], %c0 : index
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %[[S]] step %c1 {
// CHECK-NEXT:        memref.store %y
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for %{{.*}} = %[[S]] to %c64 step %c1 {
// CHECK-NEXT:        memref.store %x
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @triangle(%a: memref<64x64xf32>, %x: f32, %y: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %c = arith.cmpi sle, %i, %j : index
      scf.if %c {
        memref.store %x, %a[%i, %j] : memref<64x64xf32>
      } else {
        memref.store %y, %a[%i, %j] : memref<64x64xf32>
      }
    }
  }
  func.return
}

// -----

// An i32 induction variable with a constant step of 2.
// CHECK-LABEL: func.func @i32_iv
// CHECK:         arith.ceildivsi %{{.*}}, %c2 : i32
// CHECK:         %split = arith.minsi %{{.*}}, %ub : i32
// CHECK-NEXT:    scf.for %{{.*}} = %lb to %split step %c2 : i32 {
// CHECK:           memref.store %y
// CHECK:         scf.for %{{.*}} = %split to %ub step %c2 : i32 {
// CHECK:           memref.store %x
func.func @i32_iv(%a: memref<64xf32>, %lb: i32, %ub: i32, %v: i32, %x: f32, %y: f32) {
  %c2 = arith.constant 2 : i32
  scf.for %i = %lb to %ub step %c2 : i32 {
    %c = arith.cmpi sgt, %i, %v : i32
    %k = arith.index_cast %i : i32 to index
    scf.if %c {
      memref.store %x, %a[%k] : memref<64xf32>
    } else {
      memref.store %y, %a[%k] : memref<64xf32>
    }
  }
  func.return
}

// -----

// Two conditions: split on the first, then each part on the second (the part where
// neither guard holds is empty and dropped).
// CHECK-LABEL: func.func @two_conditions
// CHECK:         %split = arith.maxsi %{{.*}}, %lb : index
// CHECK-NEXT:    %[[W:.*]] = arith.minsi %w, %split : index
// CHECK-NEXT:    %[[S1:.*]] = arith.maxsi %[[W]], %lb : index
// CHECK-NEXT:    scf.for %{{.*}} = %lb to %[[S1]] step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %[[S1]] to %split step %c1 {
// CHECK-NEXT:      memref.store %x
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[W2:.*]] = arith.minsi %w, %ub : index
// CHECK-NEXT:    %[[S2:.*]] = arith.maxsi %[[W2]], %split : index
// CHECK-NEXT:    scf.for %{{.*}} = %[[S2]] to %ub step %c1 {
// CHECK-NEXT:      memref.store %y
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @two_conditions(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %w: index, %x: f32, %y: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi slt, %i, %v : index
    scf.if %c {
      memref.store %x, %a[%i] : memref<64xf32>
    }
    %d = arith.cmpi sge, %i, %w : index
    scf.if %d {
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  func.return
}

// -----

// Never split: a loaded (data-dependent) value, a value computed
// from the induction variable, a loop-carried value, eq / ne, a test without the
// induction variable, the induction variable against itself, empty branches, a value
// computed inside an outer loop body (the result of another loop), a negative step.
// CHECK-LABEL: func.func @not_split
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %cm1 = arith.constant -1 : index
// CHECK-NEXT:    %r = scf.for %i = %lb to %ub step %c1 iter_args(%k = %c0) -> (index) {
// CHECK-COUNT-8: scf.if
// CHECK:           scf.yield %n : index
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %i_1 = %lb to %ub step %c1 {
// CHECK-NEXT:      %inner = scf.for
// CHECK:           scf.if %other_iv
// CHECK:         scf.for %i_2 = %lb to %ub step %cm1 {
// CHECK-NEXT:      %c = arith.cmpi slt, %i_2, %s : index
// CHECK-NEXT:      scf.if %c {
// CHECK-NOT:     scf.for
// CHECK:         func.return %r : index
func.func @not_split(%a: memref<64xindex>, %lb: index, %ub: index, %s: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cm1 = arith.constant -1 : index
  %r = scf.for %i = %lb to %ub step %c1 iter_args(%k = %c0) -> (index) {
    %v = memref.load %a[%i] : memref<64xindex>
    %loaded = arith.cmpi slt, %i, %v : index
    scf.if %loaded {
      memref.store %i, %a[%i] : memref<64xindex>
    }
    %w = arith.addi %i, %c1 : index
    %derived = arith.cmpi slt, %i, %w : index
    scf.if %derived {
      memref.store %i, %a[%i] : memref<64xindex>
    }
    %carried = arith.cmpi slt, %i, %k : index
    scf.if %carried {
      memref.store %i, %a[%i] : memref<64xindex>
    }
    %eq = arith.cmpi eq, %i, %ub : index
    scf.if %eq {
      memref.store %i, %a[%i] : memref<64xindex>
    }
    %ne = arith.cmpi ne, %i, %ub : index
    scf.if %ne {
      memref.store %i, %a[%i] : memref<64xindex>
    }
    %no_iv = arith.cmpi slt, %lb, %ub : index
    scf.if %no_iv {
      memref.store %i, %a[%i] : memref<64xindex>
    }
    %self = arith.cmpi slt, %i, %i : index
    scf.if %self {
      memref.store %i, %a[%i] : memref<64xindex>
    }
    %empty = arith.cmpi slt, %i, %ub : index
    scf.if %empty {
    } else {
    }
    %n = arith.addi %k, %c1 : index
    scf.yield %n : index
  }
  scf.for %i = %lb to %ub step %c1 {
    %inner = scf.for %j = %lb to %ub step %c1 iter_args(%t = %c0) -> (index) {
      %u = arith.addi %t, %j : index
      scf.yield %u : index
    }
    %other_iv = arith.cmpi slt, %i, %inner : index
    scf.if %other_iv {
      memref.store %i, %a[%i] : memref<64xindex>
    }
  }
  scf.for %i = %lb to %ub step %cm1 {
    %c = arith.cmpi slt, %i, %s : index
    scf.if %c {
      memref.store %i, %a[%i] : memref<64xindex>
    }
  }
  func.return %r : index
}

// -----

// Profitability: a one-op branch is split at the default threshold (1) and left alone
// with `threshold=100` (THRESHOLD; the @slt case above is left alone there too).
// CHECK-LABEL: func.func @small
// CHECK:         %split = arith.maxsi
// CHECK-NEXT:    scf.for %{{.*}} = %lb to %split step %c1 {
// CHECK-NEXT:      %[[P:.*]] = arith.addf %x, %y : f32
// CHECK-NEXT:      memref.store %[[P]], %a
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %{{.*}} = %split to %ub step %c1 {
// CHECK-NEXT:      memref.store %y, %a
// CHECK-NEXT:    }
// THRESHOLD-LABEL: func.func @small
// THRESHOLD-NEXT:    %c1 = arith.constant 1 : index
// THRESHOLD-NEXT:    scf.for %i = %lb to %ub step %c1 {
// THRESHOLD-NEXT:      %c = arith.cmpi slt, %i, %v : index
// THRESHOLD-NEXT:      %r = scf.if %c -> (f32) {
// THRESHOLD-NEXT:        %p = arith.addf %x, %y : f32
// THRESHOLD-NEXT:        scf.yield %p : f32
// THRESHOLD-NEXT:      } else {
// THRESHOLD-NEXT:        scf.yield %y : f32
// THRESHOLD-NEXT:      }
// THRESHOLD-NEXT:      memref.store %r, %a[%i] : memref<64xf32>
// THRESHOLD-NEXT:    }
func.func @small(%a: memref<64xf32>, %lb: index, %ub: index, %v: index, %x: f32, %y: f32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %c1 {
    %c = arith.cmpi slt, %i, %v : index
    %r = scf.if %c -> (f32) {
      %p = arith.addf %x, %y : f32
      scf.yield %p : f32
    } else {
      scf.yield %y : f32
    }
    memref.store %r, %a[%i] : memref<64xf32>
  }
  func.return
}

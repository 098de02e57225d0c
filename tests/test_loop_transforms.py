"""Numeric tests of the loops-level passes `split-loops` and `fuse-fma`
(`strata.transforms.split_loops`, `strata.transforms.fuse_fma`).

Each test writes a kernel in the loops-level form of docs/cpu-backend.md (flat memref
arguments, then `%begin, %end: index`, returning i32), applies the pass with
`run_pipeline`, JIT-compiles the original and the transformed module and runs both
through ctypes on numpy buffers. split-loops must not change a single bit; fuse-fma
must give the once-rounded result.
"""

from __future__ import annotations

import ctypes
import itertools
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from strata.dialects.context import parse_module
from strata.lowering.llvm.translate import translate_module
from strata.lowering.tile_to_loops.kernel import kernel_functions
from strata.targets.passes import run_pipeline
from strata.support.dtypes import NUMPY_DTYPES
from strata.lowering.llvm.jit import JitModule

ROOT = Path(__file__).resolve().parents[1]
STRATA_OPT = str(Path(sys.executable).parent / "strata-opt")
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
RNG = np.random.default_rng(4)


# Compiling and calling ----------------------------------------------------------------


def transformed(text: str, spec: str) -> tuple[ModuleOp, ModuleOp]:
    """(original, transformed): two parsed copies, the second run through `spec`."""
    original, changed = parse_module(text), parse_module(text)
    run_pipeline(changed, spec)
    return original, changed


def jit(module: ModuleOp) -> JitModule:
    return JitModule(translate_module(module))


def call(compiled: JitModule, name: str, *args) -> int:
    """Arrays go as pointers, ints as int64 (index), like runtime/cpu.py's launches."""
    types = [ctypes.c_void_p if isinstance(a, np.ndarray) else ctypes.c_int64 for a in args]
    values = [a.ctypes.data if isinstance(a, np.ndarray) else a for a in args]
    function = ctypes.CFUNCTYPE(ctypes.c_int32, *types)(compiled.function_address(name))
    return function(*values)


def count(module: ModuleOp, name: str) -> int:
    return sum(1 for op in module.walk() if op.name == name)


def bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


# split-loops ----------------------------------------------------------------------------

N = 1000

SPLIT_KERNEL = """
func.func @kernel(%x: memref<{n}xf64>, %out: memref<{n}xf64>, %sum: memref<1xf64>,
                  %params: memref<3xindex>, %begin: index, %end: index) -> i32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %v = memref.load %params[%c0] : memref<3xindex>
  %step = memref.load %params[%c1] : memref<3xindex>
  %shift = memref.load %params[%c2] : memref<3xindex>
  %lb0 = arith.subi %begin, %shift : index
  %ub = arith.subi %end, %shift : index
  {lower}
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.75 : f64
  %scale = arith.constant 1.25 : f64
  %total = scf.for %i = %lb to %ub step %step iter_args(%acc = %zero) -> (f64) {{
    %k = arith.addi %i, %shift : index
    %xi = memref.load %x[%k] : memref<{n}xf64>
    %cond = arith.cmpi {predicate}, {lhs}, {rhs} : index
    %r = scf.if %cond -> (f64) {{
      %p = arith.mulf %acc, %half : f64
      %q = arith.addf %p, %xi : f64
      scf.yield %q : f64
    }} else {{
      %p = arith.mulf %xi, %scale : f64
      %q = arith.subf %acc, %p : f64
      scf.yield %q : f64
    }}
    memref.store %r, %out[%k] : memref<{n}xf64>
    scf.yield %r : f64
  }}
  memref.store %total, %sum[%c0] : memref<1xf64>
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}"""
"""iv in [lb, ub) (shifted by `shift` so it can be negative), the split value, the
step and the shift come from `params` at run time, so every bound is dynamic. The
branches feed a loop-carried sum, so the order and the branch of every iteration show."""

PREDICATES = ["slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
RANGES = [(0, 0), (0, 1), (0, 7), (3, 17), (0, 1000), (17, 1000), (5, 4)]
STEPS = [1, 2, 3, 7]
SPLITS = [INT64_MIN, -5, -1, 0, 1, 3, 6, 7, 16, 17, 18, 500, 999, 1000, 1001, INT64_MAX - 1, INT64_MAX]


def split_kernel(predicate: str, swapped: bool) -> str:
    unsigned = predicate.startswith("u")
    # Unsigned tests are split only when lb is provably >= 0: maxsi(lb0, 0) is.
    lower = "%lb = arith.maxsi %lb0, %c0 : index" if unsigned else "%lb = arith.addi %lb0, %c0 : index"
    lhs, rhs = ("%v", "%i") if swapped else ("%i", "%v")
    return SPLIT_KERNEL.format(n=N, lower=lower, predicate=predicate, lhs=lhs, rhs=rhs)


def run_split(compiled: JitModule, x: np.ndarray, begin: int, end: int, v: int, step: int, shift: int):
    out = np.full(N, -7.0)
    total = np.full(1, -9.0)
    params = np.array([v, step, shift], np.int64)
    assert call(compiled, "kernel", x, out, total, params, begin, end) == 0
    return out, total


@pytest.mark.parametrize("swapped", [False, True], ids=["iv-lhs", "iv-rhs"])
@pytest.mark.parametrize("predicate", PREDICATES)
def test_split_is_bit_identical_for_every_predicate(predicate, swapped):
    """Every predicate, both operand orders, non-unit steps, empty
    and reversed ranges, negative induction values, split values below, inside and
    above the range, and the int64 extremes (no underflow, no `v + 1` overflow)."""
    original, split = transformed(split_kernel(predicate, swapped), "split-loops")
    assert count(split, "scf.if") == 0 and count(split, "scf.for") == 2, str(split)
    before, after = jit(original), jit(split)
    x = RNG.standard_normal(N)
    # shift 10 makes signed induction values negative; for unsigned predicates, whose
    # lb is max(begin - 10, 0), it makes ub < 0 <= lb (an empty loop) for small ends.
    for (begin, end), step, shift, v in itertools.product(RANGES, STEPS, [0, 10], SPLITS):
        expected, expected_total = run_split(before, x, begin, end, v, step, shift)
        got, got_total = run_split(after, x, begin, end, v, step, shift)
        where = f"{predicate} begin={begin} end={end} step={step} shift={shift} v={v}"
        np.testing.assert_array_equal(bits(got), bits(expected), err_msg=where)
        np.testing.assert_array_equal(bits(got_total), bits(expected_total), err_msg=where)


def test_unsigned_split_with_a_possibly_negative_lower_bound_is_left_alone():
    """Unsigned order is not monotone over negative induction values."""
    text = SPLIT_KERNEL.format(
        n=N, lower="%lb = arith.addi %lb0, %c0 : index", predicate="ult", lhs="%i", rhs="%v"
    )
    _, split = transformed(text, "split-loops")
    assert count(split, "scf.if") == 1 and count(split, "scf.for") == 1


CONSTANT_KERNEL = """
func.func @kernel(%x: memref<64xf64>, %out: memref<64xf64>, %sum: memref<1xf64>,
                  %begin: index, %end: index) -> i32 {{
  %c0 = arith.constant 0 : index
  %lb = arith.constant {lb} : index
  %ub = arith.constant {ub} : index
  %step = arith.constant {step} : index
  %v = arith.constant {v} : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.75 : f64
  %total = scf.for %i = %lb to %ub step %step iter_args(%acc = %zero) -> (f64) {{
    %xi = memref.load %x[%i] : memref<64xf64>
    %cond = arith.cmpi {predicate}, %i, %v : index
    %r = scf.if %cond -> (f64) {{
      %p = arith.mulf %acc, %half : f64
      %q = arith.addf %p, %xi : f64
      scf.yield %q : f64
    }} else {{
      %q = arith.subf %acc, %xi : f64
      scf.yield %q : f64
    }}
    memref.store %r, %out[%i] : memref<64xf64>
    scf.yield %r : f64
  }}
  memref.store %total, %sum[%c0] : memref<1xf64>
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}"""


@pytest.mark.parametrize(
    "lb, ub, step, v, predicate, loops",
    [
        (0, 64, 1, 10, "slt", 2),  # inside
        (0, 17, 3, 7, "slt", 2),  # inside, aligned up to 9
        (1, 64, 7, 8, "sle", 2),  # split exactly on an iteration (8 runs the then branch)
        (0, 64, 1, 0, "slt", 1),  # at lb: only the else part
        (0, 64, 1, -5, "sge", 1),  # below the range
        (0, 64, 1, 64, "slt", 1),  # at ub: only the then part
        (0, 64, 1, 1000, "sgt", 1),  # above the range
        (0, 64, 3, 63, "sgt", 1),  # past the last iteration (63) with step 3
        (0, 64, 1, -1, "ult", 1),  # unsigned: -1 is the largest value, always true
        (5, 5, 1, 3, "slt", 1),  # an empty loop stays one (empty) loop
    ],
)
def test_split_with_constant_bounds(lb, ub, step, v, predicate, loops):
    """A split point at or outside the range leaves one loop, never an empty one."""
    text = CONSTANT_KERNEL.format(lb=lb, ub=ub, step=step, v=v, predicate=predicate)
    original, split = transformed(text, "split-loops")
    assert count(split, "scf.if") == 0 and count(split, "scf.for") == loops, str(split)
    x = RNG.standard_normal(64)
    results = []
    for module in (original, split):
        out, total = np.full(64, -7.0), np.zeros(1)
        assert call(jit(module), "kernel", x, out, total, 0, 0) == 0
        results.append((bits(out), bits(total)))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])


NESTED_KERNEL = """
func.func @kernel(%x: memref<{size}xf32>, %out: memref<{size}xf32>, %params: memref<1xindex>,
                  %begin: index, %end: index) -> i32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cols = arith.constant {cols} : index
  %v = memref.load %params[%c0] : memref<1xindex>
  %two = arith.constant 2.0 : f32
  scf.for %i = %begin to %end step %c1 {{
    %outer = arith.cmpi slt, %i, %v : index
    scf.if %outer {{
      scf.for %j = %c0 to %cols step %c1 {{
        %row = arith.muli %i, %cols : index
        %k = arith.addi %row, %j : index
        %xk = memref.load %x[%k] : memref<{size}xf32>
        %inner = arith.cmpi sle, %j, %i : index
        scf.if %inner {{
          %d = arith.mulf %xk, %two : f32
          memref.store %d, %out[%k] : memref<{size}xf32>
        }} else {{
          %n = arith.negf %xk : f32
          memref.store %n, %out[%k] : memref<{size}xf32>
        }}
      }}
    }} else {{
      %row = arith.muli %i, %cols : index
      memref.store %two, %out[%row] : memref<{size}xf32>
    }}
  }}
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}"""


@pytest.mark.parametrize("rows", [0, 1, 7, 17])
def test_nested_split(rows):
    """A triangular inner condition (j <= i) inside an outer one (i < v): both
    levels split (the outer into two loops, the inner into two in the first)."""
    cols = 13
    size = max(rows, 1) * cols
    text = NESTED_KERNEL.format(size=size, cols=cols)
    original, split = transformed(text, "split-loops")
    assert count(split, "scf.if") == 0 and count(split, "scf.for") == 4, str(split)
    before, after = jit(original), jit(split)
    x = RNG.standard_normal(size).astype(np.float32)
    for v, (begin, end) in itertools.product([-3, 0, 1, 5, 17, 100], [(0, rows), (1, rows)]):
        outs = []
        for compiled in (before, after):
            out = np.full(size, -7.0, np.float32)
            assert call(compiled, "kernel", x, out, np.array([v], np.int64), begin, end) == 0
            outs.append(bits(out))
        np.testing.assert_array_equal(outs[1], outs[0], err_msg=f"v={v} [{begin}, {end})")


TWO_CONDITIONS = """
func.func @kernel(%out: memref<{n}xi64>, %params: memref<2xindex>, %begin: index, %end: index) -> i32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.load %params[%c0] : memref<2xindex>
  %w = memref.load %params[%c1] : memref<2xindex>
  %one = arith.constant 1 : i64
  %ten = arith.constant 10 : i64
  scf.for %i = %begin to %end step %c1 {{
    %a = arith.cmpi slt, %i, %v : index
    %b = arith.cmpi uge, %w, %i : index
    %s = arith.select %a, %one, %ten : i64
    scf.if %a {{
      memref.store %s, %out[%i] : memref<{n}xi64>
    }}
    %old = memref.load %out[%i] : memref<{n}xi64>
    %sum = arith.addi %old, %ten : i64
    scf.if %b {{
      memref.store %sum, %out[%i] : memref<{n}xi64>
    }}
  }}
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}"""


def test_two_conditions_and_a_reused_condition():
    """Two conditions in one body split into up to four loops (the unsigned one only
    where lb is known >= 0, so here just the signed one); the condition's other use (a
    select) becomes a constant in each loop."""
    original, split = transformed(TWO_CONDITIONS.format(n=N), "split-loops")
    assert count(split, "scf.for") == 2 and count(split, "scf.if") == 2, str(split)
    before, after = jit(original), jit(split)
    for (begin, end), v, w in itertools.product([(0, 0), (0, 7), (3, 1000)], [-1, 0, 5, 999, 2000], [-1, 0, 4, 600]):
        outs = []
        for compiled in (before, after):
            out = np.zeros(N, np.int64)
            assert call(compiled, "kernel", out, np.array([v, w], np.int64), begin, end) == 0
            outs.append(out)
        np.testing.assert_array_equal(outs[1], outs[0])


def test_data_dependent_condition_is_not_split():
    """A condition on a value loaded in the loop, or derived from the induction
    variable, is left alone."""
    for rhs, extra in [
        ("%loaded", "%loaded = memref.load %params[%c0] : memref<3xindex>"),
        ("%k", ""),
    ]:
        text = SPLIT_KERNEL.format(
            n=N, lower="%lb = arith.addi %lb0, %c0 : index", predicate="slt", lhs="%i", rhs=rhs
        ).replace("%k = arith.addi %i, %shift : index", f"%k = arith.addi %i, %shift : index\n    {extra}")
        original, split = transformed(text, "split-loops")
        assert str(split) == str(original)


def test_split_loops_is_idempotent():
    """Running the pass twice equals running it once."""
    for predicate in PREDICATES:
        _, once = transformed(split_kernel(predicate, False), "split-loops")
        _, twice = transformed(split_kernel(predicate, False), "split-loops,split-loops")
        assert str(once) == str(twice)


# fuse-fma ---------------------------------------------------------------------------------

EPSILON = {"f16": 2.0**-10, "bf16": 2.0**-7, "f32": 2.0**-23, "f64": 2.0**-52}
"""The distance from 1 to the next value of each element type."""

DTYPES = {t: NUMPY_DTYPES[t] for t in EPSILON}

FMA_KERNEL = """
func.func @kernel(%a: memref<{n}x{t}>, %b: memref<{n}x{t}>, %c: memref<{n}x{t}>,
                  %out: memref<{n}x{t}>, %begin: index, %end: index) -> i32 {{
  %c1 = arith.constant 1 : index
  scf.for %i = %begin to %end step %c1 {{
    %x = memref.load %a[%i] : memref<{n}x{t}>
    %y = memref.load %b[%i] : memref<{n}x{t}>
    %z = memref.load %c[%i] : memref<{n}x{t}>
    %m = arith.mulf %x, %y {flags}: {t}
    %r = {combine} {flags}: {t}
    memref.store %r, %out[%i] : memref<{n}x{t}>
  }}
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}"""

FORMS = {
    # name: (the combining op, sign of a*b, sign of c)
    "ab+c": ("arith.addf %m, %z", 1, 1),
    "c+ab": ("arith.addf %z, %m", 1, 1),
    "c-ab": ("arith.subf %z, %m", -1, 1),
    "ab-c": ("arith.subf %m, %z", 1, -1),
}


def fma_kernel(t: str, form: str, n: int, flags: str = "") -> str:
    return FMA_KERNEL.format(t=t, n=n, combine=FORMS[form][0], flags=flags + " " if flags else "")


def run_fma(compiled: JitModule, a, b, c, begin: int, end: int) -> np.ndarray:
    out = np.full(len(a), 7.0, a.dtype)
    assert call(compiled, "kernel", a, b, c, out, begin, end) == 0
    return out


def fused_reference(t: str, a, b, c, sign_ab: int, sign_c: int) -> np.ndarray:
    """a*b + c rounded once. f64: exactly (Fractions). f32: in f64, where a*b is exact
    and the sum rounds far below f32's last bit. f16/bf16: the CPU backend's documented
    semantics, computed in f32 and rounded once to the element type."""
    if t == "f64":
        values = [
            float(sign_ab * Fraction(x) * Fraction(y) + sign_c * Fraction(z))
            for x, y, z in zip(a.tolist(), b.tolist(), c.tolist())
        ]
        return np.array(values, np.float64)
    wide = sign_ab * a.astype(np.float64) * b.astype(np.float64) + sign_c * c.astype(np.float64)
    return wide.astype(np.float32).astype(DTYPES[t])


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("t", list(DTYPES))
@pytest.mark.parametrize("n", [0, 1, 7, 17, 1000])
def test_fma_rounds_once(t, form, n):
    """Every form (negated operands included): the fused kernel equals the once-rounded a*b + c,
    stays within the unfused kernel's rounding error, and is never less accurate
    (f32, f64)."""
    text = fma_kernel(t, form, max(n, 1))
    original, fused = transformed(text, "fuse-fma")
    assert count(fused, "math.fma") == 1 and count(fused, "arith.mulf") == 0, str(fused)
    assert count(fused, "arith.negf") == (0 if form in ("ab+c", "c+ab") else 1)
    size = max(n, 1)
    dtype = DTYPES[t]
    a, b, c = (RNG.uniform(-4, 4, size).astype(dtype) for _ in range(3))
    unfused = run_fma(jit(original), a, b, c, 0, n)
    got = run_fma(jit(fused), a, b, c, 0, n)
    _, sign_ab, sign_c = FORMS[form]
    expected = fused_reference(t, a, b, c, sign_ab, sign_c)
    np.testing.assert_array_equal(bits(got[:n]), bits(expected[:n]))
    assert (bits(got[n:]) == bits(np.array(7.0, dtype))).all()  # bounds honored
    # Within the unfused result's error: at most one rounding of each term apart.
    wide = [x[:n].astype(np.float64) for x in (a, b, c, got, unfused)]
    bound = EPSILON[t] * (np.abs(wide[0] * wide[1]) + np.abs(wide[2]))
    assert (np.abs(wide[3] - wide[4]) <= bound).all()
    if t in ("f32", "f64") and n >= 17:
        exact = [
            sign_ab * Fraction(x) * Fraction(y) + sign_c * Fraction(z)
            for x, y, z in zip(a[:n].tolist(), b[:n].tolist(), c[:n].tolist())
        ]
        fused_error = [abs(Fraction(g) - e) for g, e in zip(got[:n].tolist(), exact)]
        unfused_error = [abs(Fraction(u) - e) for u, e in zip(unfused[:n].tolist(), exact)]
        assert all(f <= u for f, u in zip(fused_error, unfused_error))
        if n == 1000:
            assert sum(f < u for f, u in zip(fused_error, unfused_error)) > 0  # it did fuse


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("form", list(FORMS))
def test_fma_special_values(t, form):
    """NaN and infinity behave as IEEE 754 fma (the same as unfused here,
    since none of these products overflows)."""
    nan, inf = np.nan, np.inf
    a = np.array([nan, inf, inf, 0.0, -inf, 1.0, 2.0, inf, -0.0, 0.0], DTYPES[t])
    b = np.array([1.0, 0.0, 1.0, inf, 2.0, nan, 3.0, 1.0, 0.0, -1.0], DTYPES[t])
    c = np.array([1.0, 1.0, -inf, 1.0, inf, 1.0, nan, inf, -0.0, 0.0], DTYPES[t])
    original, fused = transformed(fma_kernel(t, form, len(a)), "fuse-fma")
    got = run_fma(jit(fused), a, b, c, 0, len(a))
    unfused = run_fma(jit(original), a, b, c, 0, len(a))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(unfused))
    finite = ~np.isnan(got)
    np.testing.assert_array_equal(bits(got[finite]), bits(unfused[finite]))  # signs of 0 and inf


def test_fma_can_avoid_an_intermediate_overflow():
    """Fusion changes more than the last bit: a*b overflows f32 when rounded alone."""
    a, b, c = (np.array([x], np.float32) for x in (2e38, 2.0, -3e38))
    original, fused = transformed(fma_kernel("f32", "ab+c", 1), "fuse-fma")
    assert run_fma(jit(original), a, b, c, 0, 1)[0] == np.inf
    expected = (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)[0]
    assert np.isfinite(expected)
    assert run_fma(jit(fused), a, b, c, 0, 1)[0] == expected


def test_fma_keeps_fastmath_flags_and_skips_mismatches():
    """Equal flags fuse and stay on the fma (and reach LLVM); unequal ones do not."""
    _, fused = transformed(fma_kernel("f32", "ab+c", 8, "fastmath<contract>"), "fuse-fma")
    assert "math.fma %x, %y, %z fastmath<contract> : f32" in str(fused)
    assert 'call contract float @"llvm.fma.f32"' in str(translate_module(fused))
    mismatched = fma_kernel("f32", "ab+c", 8).replace("%r = arith.addf %m, %z", "%r = arith.addf %m, %z fastmath<contract>")
    original, unchanged = transformed(mismatched, "fuse-fma")
    assert str(unchanged) == str(original)


def test_fma_nested_expression_and_idempotence():
    """(a*b + c)*a + b fuses twice, inside out; a second run changes nothing."""
    text = fma_kernel("f64", "ab+c", 64).replace(
        "memref.store %r,",
        "%m2 = arith.mulf %r, %x : f64\n    %r2 = arith.addf %m2, %y : f64\n    memref.store %r2,",
    )
    _, fused = transformed(text, "fuse-fma")
    assert count(fused, "math.fma") == 2 and count(fused, "arith.mulf") == 0
    _, twice = transformed(text, "fuse-fma,fuse-fma")
    assert str(twice) == str(fused)
    a, b, c = (RNG.uniform(-2, 2, 64) for _ in range(3))
    got = run_fma(jit(fused), a, b, c, 0, 64)
    inner = fused_reference("f64", a, b, c, 1, 1)
    np.testing.assert_array_equal(got, fused_reference("f64", inner, a, b, 1, 1))


def test_fma_on_the_cpu_pipeline_output():
    """End to end: `strata-opt examples/mlp.mlir -p cpu-pipeline,fuse-fma` still
    verifies, contains math.fma, and its kernels compile."""
    result = subprocess.run(
        [STRATA_OPT, str(ROOT / "examples" / "mlp.mlir"), "-p", "cpu-pipeline,fuse-fma"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "math.fma" in result.stdout
    module = parse_module(result.stdout)  # parses and verifies
    kernels = ModuleOp([k.clone() for k in kernel_functions(module)])
    assert count(kernels, "math.fma") > 0
    jit(kernels)

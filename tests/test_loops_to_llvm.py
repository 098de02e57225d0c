"""Tests of loops-level IR -> LLVM IR -> MCJIT (`strata.lowering.llvm.translate`,
`strata.lowering.llvm.jit`).

Every test writes a kernel in loops-level MLIR text, compiles it at O3 for the host,
calls it through ctypes on numpy buffers and compares with a numpy formula.
"""

from __future__ import annotations

import ctypes
import math
import re

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects import math as math_dialect
from xdsl.dialects import memref, scf
from xdsl.parser import Parser

from strata.support.errors import StrataError
from strata.dialects.context import make_context
from strata.lowering.llvm.translate import translate_module
from strata.support.dtypes import NUMPY_DTYPES
from strata.lowering.llvm.jit import JitModule

DTYPES = {**NUMPY_DTYPES, "index": np.dtype(np.int64)}
SIZES = [1, 7, 17, 1000]
RNG = np.random.default_rng(0)


# Compiling and calling ----------------------------------------------------------------


def parse(text: str):
    ctx = make_context()
    loaded = {dialect.name for dialect in ctx.loaded_dialects}
    for dialect in (math_dialect.Math, scf.Scf, memref.MemRef):
        if dialect.name not in loaded:
            ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def compile_text(text: str) -> JitModule:
    return JitModule(translate_module(parse(text)))


def call(jit: JitModule, name: str, *args) -> int:
    """Arrays go as pointers, ctypes scalars as themselves, ints as int64 (index)."""

    def ctype(arg):
        if isinstance(arg, np.ndarray):
            return ctypes.c_void_p
        return type(arg) if isinstance(arg, ctypes._SimpleCData) else ctypes.c_int64

    values = [arg.ctypes.data if isinstance(arg, np.ndarray) else arg for arg in args]
    prototype = ctypes.CFUNCTYPE(ctypes.c_int32, *map(ctype, args))
    return prototype(jit.function_address(name))(*values)


def elementwise(
    body: str, inputs: list[np.ndarray], result: str, input_type: str | None = None
) -> np.ndarray:
    """Runs `out[i] = body(%x0[i], %x1[i], ...)`; `body` defines %r of type `result`."""
    n = len(inputs[0])
    types = [input_type or type_name(x.dtype) for x in inputs]
    args = ", ".join(f"%in{k}: memref<{n}x{t}>" for k, t in enumerate(types))
    loads = "\n".join(
        f"    %x{k} = memref.load %in{k}[%i] : memref<{n}x{t}>" for k, t in enumerate(types)
    )
    text = f"""
func.func @kernel({args}, %out: memref<{n}x{result}>, %lo: index, %hi: index) -> i32 {{
  %c1 = arith.constant 1 : index
  scf.for %i = %lo to %hi step %c1 {{
{loads}
    {body}
    memref.store %r, %out[%i] : memref<{n}x{result}>
  }}
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}"""
    out = np.zeros(n, DTYPES[result])
    assert call(compile_text(text), "kernel", *inputs, out, 0, n) == 0
    return out


def type_name(dtype: np.dtype) -> str:
    return next(name for name, d in DTYPES.items() if d == dtype)


def random(dtype: str, n: int = 17, low: float = -4.0, high: float = 4.0) -> np.ndarray:
    if dtype.startswith("i"):
        return RNG.integers(int(low), int(high), n).astype(DTYPES[dtype])
    return RNG.uniform(low, high, n).astype(DTYPES[dtype])


def with_specials(x: np.ndarray) -> np.ndarray:
    """NaN, infinities and signed zeros at the front of a float array."""
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], x.dtype)
    x = x.copy()
    x[: len(specials)] = specials
    return x


# Streaming kernel, sizes, vectorization ----------------------------------------------------

STREAM = """
func.func @stream(%a: memref<{n}x{t}>, %b: memref<{n}x{t}>, %c: memref<{n}x{t}>,
                  %out: memref<{n}x{t}>, %lo: index, %hi: index) -> i32 {{
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : {t}
  scf.for %i = %lo to %hi step %c1 {{
    %x = memref.load %a[%i] : memref<{n}x{t}>
    %y = memref.load %b[%i] : memref<{n}x{t}>
    %z = memref.load %c[%i] : memref<{n}x{t}>
    %m = arith.mulf %x, %y : {t}
    %s = arith.addf %m, %z : {t}
    %r = arith.maximumf %s, %zero : {t}
    memref.store %r, %out[%i] : memref<{n}x{t}>
  }}
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}"""


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_streaming_kernel(t, n):
    jit = compile_text(STREAM.format(n=n, t=t))
    a, b, c = (random(t, n) for _ in range(3))
    out = np.full(n, -1, DTYPES[t])
    assert call(jit, "stream", a, b, c, out, 0, n) == 0
    np.testing.assert_array_equal(out, np.maximum(a * b + c, 0))


def test_loop_bounds_are_honored():
    jit = compile_text(STREAM.format(n=1000, t="f32"))
    a, b, c = (random("f32", 1000) for _ in range(3))
    out = np.full(1000, -1, np.float32)
    call(jit, "stream", a, b, c, out, 3, 990)
    np.testing.assert_array_equal(out[3:990], np.maximum(a * b + c, 0)[3:990])
    assert (out[:3] == -1).all() and (out[990:] == -1).all()


def test_streaming_kernel_vectorizes():
    jit = compile_text(STREAM.format(n=1 << 20, t="f32"))
    assert re.search(r"<(8|16) x float>", jit.llvm_ir()), jit.llvm_ir()
    assert "ptrtoint" not in jit.llvm_ir()
    assert "stream:" in jit.assembly()


REDUCTION = """
func.func @total(%a: memref<{n}xf32>, %out: memref<1xf32>, %lo: index, %hi: index) -> i32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %lo to %hi step %c1 iter_args(%acc = %zero) -> (f32) {{
    %x = memref.load %a[%i] : memref<{n}xf32>
    %s = arith.addf %acc, %x {fastmath} : f32
    scf.yield %s : f32
  }}
  memref.store %sum, %out[%c0] : memref<1xf32>
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}"""


@pytest.mark.parametrize("n", SIZES)
def test_reduction_with_reassoc_vectorizes(n):
    jit = compile_text(REDUCTION.format(n=n, fastmath="fastmath<reassoc>"))
    assert re.search(r"fadd reassoc <(8|16) x float>", jit.llvm_ir()), jit.llvm_ir()
    a, out = random("f32", n), np.zeros(1, np.float32)
    call(jit, "total", a, out, 0, n)
    np.testing.assert_allclose(out[0], a.astype(np.float64).sum(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", SIZES)
def test_strict_reduction_keeps_the_sequential_order(n):
    jit = compile_text(REDUCTION.format(n=n, fastmath=""))
    a, out = random("f32", n), np.zeros(1, np.float32)
    call(jit, "total", a, out, 0, n)
    expected = np.float32(0)
    for x in a:
        expected = np.float32(expected + x)
    assert out[0] == expected  # bit-exact: no reassociation without the flag


# arith: float ops ---------------------------------------------------------------------------

FLOAT_BINARY = {
    "arith.addf": np.add, "arith.subf": np.subtract,
    "arith.mulf": np.multiply, "arith.divf": np.divide,
    "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,  # NaN-propagating
    "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,  # NaN-ignoring
    "math.copysign": np.copysign,
}  # fmt: skip


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("op", FLOAT_BINARY)
def test_float_binary(op, t):
    x, y = with_specials(random(t)), random(t)[::-1].copy()
    y[:3] = [np.nan, 2.0, -np.inf]
    out = elementwise(f"%r = {op} %x0, %x1 : {t}", [x, y], t)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, FLOAT_BINARY[op](x, y))


FLOAT_UNARY = {
    # op: (numpy reference, input range)
    "arith.negf": (np.negative, (-4, 4)), "math.absf": (np.abs, (-4, 4)),
    "math.floor": (np.floor, (-4, 4)), "math.ceil": (np.ceil, (-4, 4)),
    "math.trunc": (np.trunc, (-4, 4)), "math.roundeven": (np.round, (-4, 4)),
    "math.sqrt": (np.sqrt, (0, 9)), "math.rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 9)),
    "math.exp": (np.exp, (-4, 4)), "math.exp2": (np.exp2, (-4, 4)),
    "math.log": (np.log, (0.1, 9)), "math.log2": (np.log2, (0.1, 9)),
    "math.log1p": (np.log1p, (-0.5, 9)), "math.tanh": (np.tanh, (-4, 4)),
    "math.erf": (np.vectorize(math.erf), (-3, 3)),
    "math.sin": (np.sin, (-4, 4)), "math.cos": (np.cos, (-4, 4)),
}  # fmt: skip
ULPS = {"f32": {"rtol": 4e-7, "atol": 1e-7}, "f64": {"rtol": 1e-15, "atol": 1e-15}}


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("op", FLOAT_UNARY)
def test_float_unary(op, t):
    reference, (low, high) = FLOAT_UNARY[op]
    x = random(t, 33, low, high)
    x[:4] = [low, high, 2.5, -0.5] if low < 0 else [low, high, 2.5, 1.0]
    out = elementwise(f"%r = {op} %x0 : {t}", [x], t)
    expected = reference(x.astype(np.float64)).astype(DTYPES[t])
    np.testing.assert_allclose(out, expected, **ULPS[t])


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_powf_and_fma(t):
    x, y, z = random(t, 17, 0.1, 3), random(t, 17, -2, 2), random(t)
    wide = [v.astype(np.float64) for v in (x, y, z)]
    out = elementwise(f"%r = math.powf %x0, %x1 : {t}", [x, y], t)
    np.testing.assert_allclose(out, np.power(*wide[:2]).astype(DTYPES[t]), **ULPS[t])
    out = elementwise(f"%r = math.fma %x0, %x1, %x2 : {t}", [x, y, z], t)
    np.testing.assert_allclose(out, (wide[0] * wide[1] + wide[2]).astype(DTYPES[t]), **ULPS[t])


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_low_precision_arith_and_math(t):
    x, y = random(t), random(t)
    body = (
        f"%s = arith.addf %x0, %x1 : {t}\n"
        f"    %e = math.exp %s : {t}\n"
        f"    %m = arith.maximumf %e, %x1 : {t}\n"
        f"    %h = math.tanh %m : {t}\n"
        f"    %q = math.rsqrt %e : {t}\n"
        f"    %r = arith.mulf %h, %q : {t}"
    )
    out = elementwise(body, [x, y], t)
    dt, f32 = DTYPES[t], np.float32
    s = (x.astype(f32) + y.astype(f32)).astype(dt)  # rounded once per op
    m = np.maximum(np.exp(s.astype(f32)).astype(dt), y)
    h = np.tanh(m.astype(f32)).astype(dt)
    q = (1 / np.sqrt(np.exp(s.astype(f32)).astype(dt).astype(f32))).astype(dt)
    expected = (h.astype(f32) * q.astype(f32)).astype(dt)
    np.testing.assert_allclose(
        out.astype(f32), expected.astype(f32), rtol=2.0**-7 if t == "bf16" else 2.0**-10
    )


def test_fastmath_flags_reach_llvm():
    text = (
        STREAM.format(n=64, t="f32")
        .replace("arith.mulf %x, %y", "arith.mulf %x, %y fastmath<nnan,ninf,contract>")
        .replace("arith.addf %m, %z", "arith.addf %m, %z fastmath<fast>")
        .replace("%s, %zero : f32", "%s, %zero fastmath<nnan> : f32")
    )
    llvm_ir = str(translate_module(parse(text)))
    assert "fmul contract ninf nnan float" in llvm_ir
    assert "fadd afn arcp contract ninf nnan nsz reassoc float" in llvm_ir
    assert 'call nnan float @"llvm.maximum.f32"' in llvm_ir


# arith: integer ops -------------------------------------------------------------------------


def unsigned(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint32 if x.dtype == np.int32 else np.uint64)


def divsi(a, b):
    return (np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)).astype(a.dtype)


INT_BINARY = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.divsi": divsi, "arith.remsi": lambda a, b: a - b * divsi(a, b),
    "arith.divui": lambda a, b: (unsigned(a) // unsigned(b)).view(a.dtype),
    "arith.remui": lambda a, b: (unsigned(a) % unsigned(b)).view(a.dtype),
    "arith.floordivsi": np.floor_divide, "arith.ceildivsi": lambda a, b: -(-a // b),
    "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
    "arith.maxui": lambda a, b: np.maximum(unsigned(a), unsigned(b)).view(a.dtype),
    "arith.minui": lambda a, b: np.minimum(unsigned(a), unsigned(b)).view(a.dtype),
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
}  # fmt: skip
SHIFTS = {
    "arith.shli": np.left_shift, "arith.shrsi": np.right_shift,
    "arith.shrui": lambda a, s: (unsigned(a) >> unsigned(s)).view(a.dtype),
}  # fmt: skip


@pytest.mark.parametrize("t", ["i32", "i64"])
@pytest.mark.parametrize("op", INT_BINARY)
def test_int_binary(op, t):
    a = random(t, 40, -1000, 1000)
    b = random(t, 40, 1, 50) * np.where(np.arange(40) % 2, 1, -1).astype(DTYPES[t])
    a[:4], b[:4] = [7, -7, 7, -7], [2, 2, -2, -2]
    out = elementwise(f"%r = {op} %x0, %x1 : {t}", [a, b], t)
    np.testing.assert_array_equal(out, INT_BINARY[op](a, b))


@pytest.mark.parametrize("t", ["i32", "i64"])
@pytest.mark.parametrize("op", SHIFTS)
def test_shifts(op, t):
    a = random(t, 17, -(2**20), 2**20)
    s = random(t, 17, 0, 30)
    out = elementwise(f"%r = {op} %x0, %x1 : {t}", [a, s], t)
    np.testing.assert_array_equal(out, SHIFTS[op](a, s))


@pytest.mark.parametrize("t", ["i32", "i64"])
def test_absi(t):
    a = random(t, 17, -100, 100)
    a[0] = np.iinfo(DTYPES[t]).min  # stays INT_MIN, as in MLIR
    out = elementwise(f"%r = math.absi %x0 : {t}", [a], t)
    np.testing.assert_array_equal(out, np.abs(a))


def test_i1_logic_load_and_store():
    p, q = RNG.integers(0, 2, 17).astype(bool), RNG.integers(0, 2, 17).astype(bool)
    body = (
        "%t = arith.constant true\n"
        "    %n = arith.xori %x0, %t : i1\n"
        "    %a = arith.andi %n, %x1 : i1\n"
        "    %r = arith.ori %a, %x0 : i1"
    )
    out = elementwise(body, [p, q], "i1")
    assert out.view(np.uint8).max() <= 1  # stored as 0/1 bytes
    np.testing.assert_array_equal(out, (~p & q) | p)


# Comparisons and select -----------------------------------------------------------------------

CMPI = {
    "eq": np.equal, "ne": np.not_equal,
    "slt": np.less, "sle": np.less_equal, "sgt": np.greater, "sge": np.greater_equal,
    "ult": lambda a, b: unsigned(a) < unsigned(b), "ule": lambda a, b: unsigned(a) <= unsigned(b),
    "ugt": lambda a, b: unsigned(a) > unsigned(b), "uge": lambda a, b: unsigned(a) >= unsigned(b),
}  # fmt: skip


def unordered(a, b):
    return np.isnan(a) | np.isnan(b)


CMPF = {
    "false": lambda a, b: np.zeros(a.shape, bool),
    "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal,
    "olt": np.less, "ole": np.less_equal,
    "one": lambda a, b: (a != b) & ~unordered(a, b),
    "ord": lambda a, b: ~unordered(a, b),
    "ueq": lambda a, b: (a == b) | unordered(a, b),
    "ugt": lambda a, b: (a > b) | unordered(a, b),
    "uge": lambda a, b: (a >= b) | unordered(a, b),
    "ult": lambda a, b: (a < b) | unordered(a, b),
    "ule": lambda a, b: (a <= b) | unordered(a, b),
    "une": np.not_equal,
    "uno": unordered,
    "true": lambda a, b: np.ones(a.shape, bool),
}  # fmt: skip


@pytest.mark.parametrize("t", ["i32", "i64"])
@pytest.mark.parametrize("predicate", CMPI)
def test_cmpi(predicate, t):
    a, b = random(t, 17, -3, 3), random(t, 17, -3, 3)
    out = elementwise(f"%r = arith.cmpi {predicate}, %x0, %x1 : {t}", [a, b], "i1")
    np.testing.assert_array_equal(out, CMPI[predicate](a, b))


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("predicate", CMPF)
def test_cmpf(predicate, t):
    a, b = with_specials(random(t, 17, -2, 2).round()), random(t, 17, -2, 2).round()
    b[:2] = [1.0, np.nan]
    out = elementwise(f"%r = arith.cmpf {predicate}, %x0, %x1 : {t}", [a, b], "i1")
    np.testing.assert_array_equal(out, CMPF[predicate](a, b))


@pytest.mark.parametrize("t", ["f32", "f64", "i32", "i64"])
def test_select(t):
    a, b = random(t), random(t)
    body = f"%c = arith.cmp{'f ogt' if t[0] == 'f' else 'i sgt'}, %x0, %x1 : {t}\n" \
           f"    %r = arith.select %c, %x0, %x1 : {t}"  # fmt: skip
    np.testing.assert_array_equal(elementwise(body, [a, b], t), np.where(a > b, a, b))


# Casts and constants ----------------------------------------------------------------------------

CASTS = [
    # (op, source type, result type, input, numpy reference)
    ("arith.sitofp", "i32", "f32", [-3, 0, 5, 2**24 + 1], lambda x: x.astype(np.float32)),
    ("arith.sitofp", "i64", "f64", [-3, 0, 5], lambda x: x.astype(np.float64)),
    ("arith.uitofp", "i32", "f64", [-1, 0, 5], lambda x: unsigned(x).astype(np.float64)),
    ("arith.fptosi", "f32", "i32", [-2.7, 0.5, 3.9], lambda x: x.astype(np.int32)),
    ("arith.fptosi", "f64", "i64", [-2.7, 1e12, 3.9], lambda x: x.astype(np.int64)),
    ("arith.fptoui", "f64", "i64", [0.0, 2.7, 3e18], lambda x: x.astype(np.uint64).view(np.int64)),
    ("arith.extf", "f32", "f64", [0.1, -np.inf, 3.5], lambda x: x.astype(np.float64)),
    ("arith.extf", "f16", "f32", [0.1, -2.0, 6e4], lambda x: x.astype(np.float32)),
    ("arith.extf", "bf16", "f32", [0.1, -2.0, 3e38], lambda x: x.astype(np.float32)),
    ("arith.truncf", "f64", "f32", [0.1, 1e300, -3.5], lambda x: x.astype(np.float32)),
    ("arith.truncf", "f32", "f16", [0.1, 7e4, -3.5], lambda x: x.astype(np.float16)),
    ("arith.truncf", "f32", "bf16", [0.1, 1.00390625, -3.5], lambda x: x.astype(DTYPES["bf16"])),
    ("arith.extsi", "i32", "i64", [-5, 0, 2**31 - 1], lambda x: x.astype(np.int64)),
    ("arith.extui", "i32", "i64", [-5, 0, 7], lambda x: unsigned(x).astype(np.int64)),
    ("arith.extui", "i1", "i32", [True, False], lambda x: x.astype(np.int32)),
    ("arith.trunci", "i64", "i32", [-5, 2**33 + 7, 9], lambda x: x.astype(np.int32)),
    ("arith.bitcast", "f32", "i32", [1.0, -0.0, np.nan], lambda x: x.view(np.int32)),
    ("arith.bitcast", "i64", "f64", [4607182418800017408, 0], lambda x: x.view(np.float64)),
    ("arith.index_cast", "i32", "index", [-5, 0, 7], lambda x: x.astype(np.int64)),
    ("arith.index_cast", "index", "i32", [-5, 2**33 + 7], lambda x: x.astype(np.int32)),
    ("arith.index_cast", "i64", "index", [-5, 2**40], lambda x: x),
]


@pytest.mark.parametrize("op, source, result, values, reference", CASTS, ids=lambda v: str(v)[:12])
def test_casts(op, source, result, values, reference):
    x = np.array(values, DTYPES[source])
    out = elementwise(f"%r = {op} %x0 : {source} to {result}", [x], result, input_type=source)
    with np.errstate(all="ignore"):
        expected = reference(x)
    np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))


CONSTANTS = [
    # (MLIR constant, element type, expected value)
    ("-7 : i32", "i32", -7),
    ("4294967295 : i32", "i32", -1),
    ("-9223372036854775808 : i64", "i64", np.iinfo(np.int64).min),
    ("42 : index", "index", 42),
    ("true", "i1", True),
    ("false", "i1", False),
    ("0.1 : f32", "f32", np.float32(0.1)),
    ("0x7F800000 : f32", "f32", np.inf),
    ("0xFF800000 : f32", "f32", -np.inf),
    ("0x7FC00000 : f32", "f32", np.nan),
    ("0.1 : f64", "f64", 0.1),
    ("0x7FF8000000000000 : f64", "f64", np.nan),
    ("-0.0 : f64", "f64", -0.0),
    ("0.1 : f16", "f16", np.float16(0.1)),
    ("0.1 : bf16", "bf16", ml_dtypes.bfloat16(0.1)),
]


@pytest.mark.parametrize("constant, t, expected", CONSTANTS)
def test_constants(constant, t, expected):
    out = elementwise(f"%r = arith.constant {constant}", [np.zeros(3, DTYPES[t])], t)
    expected = np.full(3, expected, DTYPES[t])
    np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))


# scf, memref.alloca, func ------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_for_with_several_iter_args_and_a_step(n):
    jit = compile_text(f"""
func.func @stats(%a: memref<{n}xf64>, %b: memref<{n}xi64>, %out: memref<2xf64>,
                 %count: memref<1xi64>, %lo: index, %hi: index) -> i32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %i0 = arith.constant 0 : i64
  %sum, %max, %isum = scf.for %i = %lo to %hi step %c2
      iter_args(%s = %zero, %m = %ninf, %k = %i0) -> (f64, f64, i64) {{
    %x = memref.load %a[%i] : memref<{n}xf64>
    %y = memref.load %b[%i] : memref<{n}xi64>
    %s2 = arith.addf %s, %x : f64
    %m2 = arith.maximumf %m, %x : f64
    %k2 = arith.addi %k, %y : i64
    scf.yield %s2, %m2, %k2 : f64, f64, i64
  }}
  memref.store %sum, %out[%c0] : memref<2xf64>
  memref.store %max, %out[%c1] : memref<2xf64>
  memref.store %isum, %count[%c0] : memref<1xi64>
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}""")
    a, b = random("f64", n), random("i64", n, -100, 100)
    out, count = np.zeros(2), np.zeros(1, np.int64)
    assert call(jit, "stats", a, b, out, count, 0, n) == 0
    np.testing.assert_allclose(out, [a[::2].sum(), a[::2].max()], rtol=1e-12)
    assert count[0] == b[::2].sum()


@pytest.mark.parametrize("n", [1, 7, 17])
def test_nested_loops_matmul(n):
    m, k = n + 2, 5
    jit = compile_text(f"""
func.func @matmul(%a: memref<{m * k}xf32>, %b: memref<{k * n}xf32>, %c: memref<{m * n}xf32>,
                  %m: index, %n: index, %k: index) -> i32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %m step %c1 {{
    scf.for %j = %c0 to %n step %c1 {{
      %dot = scf.for %p = %c0 to %k step %c1 iter_args(%acc = %zero) -> (f32) {{
        %ip = arith.muli %i, %k : index
        %ia = arith.addi %ip, %p : index
        %pn = arith.muli %p, %n : index
        %ib = arith.addi %pn, %j : index
        %x = memref.load %a[%ia] : memref<{m * k}xf32>
        %y = memref.load %b[%ib] : memref<{k * n}xf32>
        %acc2 = math.fma %x, %y, %acc : f32
        scf.yield %acc2 : f32
      }}
      %in = arith.muli %i, %n : index
      %ic = arith.addi %in, %j : index
      memref.store %dot, %c[%ic] : memref<{m * n}xf32>
    }}
  }}
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}""")
    a, b, c = random("f32", m * k), random("f32", k * n), np.zeros(m * n, np.float32)
    assert call(jit, "matmul", a, b, c, m, n, k) == 0
    expected = a.reshape(m, k).astype(np.float64) @ b.reshape(k, n)
    np.testing.assert_allclose(c.reshape(m, n), expected, rtol=1e-5, atol=1e-5)


def test_multidimensional_memrefs_are_row_major():
    """Writes a[i, j] = 10 i + j into a 3x5 argument and, through a 5x3 stack buffer,
    its transpose into a 5x3 argument; numpy sees both in C order."""
    jit = compile_text("""
func.func @layout(%a: memref<3x5xi32>, %t: memref<5x3xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c10 = arith.constant 10 : index
  %buf = memref.alloca() : memref<5x3xi32>
  %flags = memref.alloca() : memref<2x2x2xi1>
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c5 step %c1 {
      %row = arith.muli %i, %c10 : index
      %v = arith.addi %row, %j : index
      %x = arith.index_cast %v : index to i32
      memref.store %x, %a[%i, %j] : memref<3x5xi32>
      memref.store %x, %buf[%j, %i] : memref<5x3xi32>
    }
  }
  scf.for %j = %c0 to %c5 step %c1 {
    scf.for %i = %c0 to %c3 step %c1 {
      %x = memref.load %buf[%j, %i] : memref<5x3xi32>
      memref.store %x, %t[%j, %i] : memref<5x3xi32>
    }
  }
  %true = arith.constant true
  memref.store %true, %flags[%c1, %c0, %c1] : memref<2x2x2xi1>
  %f = memref.load %flags[%c1, %c0, %c1] : memref<2x2x2xi1>
  %status = arith.extui %f : i1 to i32
  func.return %status : i32
}""")
    a, t = np.zeros((3, 5), np.int32), np.zeros((5, 3), np.int32)
    assert call(jit, "layout", a, t) == 1
    expected = 10 * np.arange(3)[:, None] + np.arange(5)
    np.testing.assert_array_equal(a, expected)
    np.testing.assert_array_equal(t, expected.T)


def test_alloca_lands_in_the_entry_block_with_alignment():
    llvm_ir = str(
        translate_module(
            parse("""
func.func @f(%n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %buf = memref.alloca() : memref<4x4xf64>
    %wide = memref.alloca() {alignment = 128 : i64} : memref<3xi1>
  }
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}""")
        )
    )
    entry = llvm_ir.split("allocas:")[1].split(":")[0]
    assert "alloca double, i64 16, align 64" in entry
    assert "alloca i8, i64 3, align 128" in entry


def test_if_with_results_and_without_else():
    body = """%zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %x0, %zero : f32
    %r = scf.if %pos -> (f32) {
      %s = math.sqrt %x0 : f32
      scf.yield %s : f32
    } else {
      %inner = arith.cmpf olt, %x0, %x1 : f32
      %n = scf.if %inner -> (f32) {
        scf.yield %x1 : f32
      } else {
        %neg = arith.negf %x0 : f32
        scf.yield %neg : f32
      }
      scf.yield %n : f32
    }
    scf.if %pos {
      memref.store %zero, %in1[%i] : memref<17xf32>
    }"""
    x, y = random("f32"), random("f32")
    y_before = y.copy()
    out = elementwise(body, [x, y], "f32")
    expected = np.where(x > 0, np.sqrt(np.abs(x)), np.where(x < y_before, y_before, -x))
    np.testing.assert_allclose(out, expected, rtol=1e-7)
    np.testing.assert_array_equal(y, np.where(x > 0, 0, y_before))


def test_calls_between_functions_and_scalar_arguments():
    jit = compile_text("""
func.func @axpy(%x: memref<9xf32>, %y: memref<9xf32>, %alpha: f32, %beta: f64,
                %shift: i32, %lo: index, %hi: index) -> i32 {
  %c1 = arith.constant 1 : index
  %b = arith.truncf %beta : f64 to f32
  scf.for %i = %lo to %hi step %c1 {
    %v = memref.load %x[%i] : memref<9xf32>
    %w = memref.load %y[%i] : memref<9xf32>
    %r = func.call @fused(%alpha, %v, %w) : (f32, f32, f32) -> f32
    %r2 = arith.addf %r, %b : f32
    memref.store %r2, %y[%i] : memref<9xf32>
  }
  func.call @touch(%y) : (memref<9xf32>) -> ()
  func.return %shift : i32
}
func.func private @fused(%a: f32, %x: f32, %y: f32) -> f32 {
  %m = arith.mulf %a, %x : f32
  %s = arith.addf %m, %y : f32
  func.return %s : f32
}
func.func @touch(%y: memref<9xf32>) {
  %c8 = arith.constant 8 : index
  %v = arith.constant 42.0 : f32
  memref.store %v, %y[%c8] : memref<9xf32>
  func.return
}""")
    x, y = random("f32", 9), random("f32", 9)
    expected = (np.float32(2.5) * x + y) + np.float32(0.25)
    expected[8] = 42
    status = call(
        jit, "axpy", x, y, ctypes.c_float(2.5), ctypes.c_double(0.25), ctypes.c_int32(7), 0, 9
    )
    assert status == 7
    np.testing.assert_array_equal(y, expected)
    with pytest.raises(StrataError, match="fused"):
        jit.function_address("fused")  # private: internal linkage, inlined away


# Errors ---------------------------------------------------------------------------------------------


def kernel_with(line: str, argument: str = "%a: memref<4xf32>") -> str:
    return f"""
func.func @k({argument}) -> i32 {{
  {line}
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}}"""


UNSUPPORTED = {
    "op": (kernel_with("%x = math.atan %y : f32", "%y: f32"), "unsupported op 'math.atan'"),
    "alloc": (kernel_with("%m = memref.alloc() : memref<4xf32>"), "unsupported op 'memref.alloc'"),
    "type in an op": (
        kernel_with("%v = arith.constant dense<1.0> : vector<4xf32>"),
        "'arith.constant': unsupported type vector<4xf32>",
    ),
    "argument type": (kernel_with("", "%v: vector<4xf32>"), "@k: unsupported type vector<4xf32>"),
    "dynamic": (kernel_with("", "%a: memref<?xf32>"), "@k: unsupported dynamic shape"),
    "dynamic alloca": (
        kernel_with("%m = memref.alloca(%n) : memref<?xf32>", "%n: index"),
        "'memref.alloca': unsupported dynamic shape",
    ),
    "layout": (kernel_with("", "%a: memref<4xf32, strided<[2]>>"), "@k: unsupported layout"),
    "unsigned": (kernel_with("", "%a: ui32"), "@k: unsupported type ui32 (only signless"),
    "results": (
        "func.func @f(%a: i32) -> (i32, i32) {\n func.return %a, %a : i32, i32\n}",
        "@f returns 2 values",
    ),
    "external": ("func.func private @ext(f32) -> f32", "@ext has no body"),
}


@pytest.mark.parametrize("text, message", UNSUPPORTED.values(), ids=UNSUPPORTED)
def test_unsupported_input_raises(text, message):
    with pytest.raises(StrataError, match=re.escape(message)):
        translate_module(parse(text))


def test_jit_errors():
    jit = compile_text(kernel_with(""))
    with pytest.raises(StrataError, match="no function named 'missing'"):
        jit.function_address("missing")
    with pytest.raises(StrataError, match="invalid LLVM IR"):
        JitModule("define i32 @f() {\n  ret i64 0\n}")

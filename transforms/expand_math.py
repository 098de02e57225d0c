"""`expand-math`: f32 exp, tanh and erf as arith polynomials the vectorizer can handle.

`math.exp` / `math.tanh` / `math.erf` on f32 otherwise become scalar libm calls, which stop
LLVM from vectorizing a loop (a fused elementwise kernel with one tanh ran ~10x slower
than its memory traffic). Like MLIR's math-polynomial-approximation, this pass replaces
them by range reduction + minimax polynomials in arith ops (Cephes coefficients for exp and
tanh, fits of our own for erf):

    exp(x)  = 2^n · p(r),  n = round(x·log2 e),  r = x − n·ln 2 (two-part ln 2)
    tanh(x) = x + x·z·q(z) for |x| < 0.625 (z = x²), else sign(x)·(1 − 2/(exp(2|x|) + 1))
    erf(x)  = x + x·s(x²) for |x| < 1, else sign(x)·(1 − exp(−a²)·q(t)), a = min(|x|, 4), t = 1/(1 + a/2)

The erf polynomials are Strata's own minimax fits (Lawson-weighted least squares on
Chebyshev nodes, float64, relative error; coefficients then rounded to f32): s (degree 6 in
x², its constant term 2/√π − 1 so that the last step adds a small correction to x) fits
erf(x)/x − 1 within 1.2e-9 on |x| < 1; q (degree 7 in t) fits erfc(a)·exp(a²) within 3.7e-10
relative on 1 ≤ a ≤ 4. Past |x| = 4, erf rounds to ±1 in f32 (erfc(4) = 1.5e-8 < half an
ulp of 1) and the clamp keeps q in its range.

Numerics (documented; measured against numpy / math.erf on 10^5 points incl. ±100, ±inf, NaN):
exp within 4 ulp for x >= -86.5 (results >= 2.7e-38), 0 below (no subnormal arithmetic), inf
above 88.72; tanh within 2 ulp; erf within 1.5 ulp of the exact value (measured over 3·10^6
points in [0, 4.5], all binades from 1e-30 up; the error peaks just above |x| = 1, where
exp's rounding meets the largest erfc), ±1 beyond |x| = 4, erf(±0) = ±0. NaN propagates.
f64 keeps libm.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr, ModuleOp, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

EXP_POLYNOMIAL = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
TANH_POLYNOMIAL = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1)
ERF_SMALL = (7.853858e-05, -8.0101925e-04, 0.0051883277, -0.026853811, 0.112835854, -0.37612626, 0.12837917)
"""erf(x)/x − 1 as a polynomial in x² on |x| < ERF_CUT (highest degree first)."""
ERF_TAIL = (0.11901605, -0.47015178, 0.56187314, -0.1025925, 0.34736094, 0.25980172, 0.28489625, -1.5318756e-04)
"""erfc(a)·exp(a²) as a polynomial in t = 1/(1 + a/2) on ERF_CUT <= a <= ERF_CLAMP."""
ERF_CUT = 1.0
ERF_CLAMP = 4.0


class Builder:
    """Emits f32 arith ops before `anchor`; `b(op)` returns the op's result."""

    def __init__(self, rewriter: PatternRewriter, anchor: Operation):
        self.rewriter, self.anchor = rewriter, anchor

    def __call__(self, op: Operation) -> SSAValue:
        self.rewriter.insert(op, InsertPoint.before(self.anchor))
        return op.results[0]

    def f(self, value: float) -> SSAValue:
        return self(arith.ConstantOp(FloatAttr(value, f32)))

    def add(self, a, b):
        return self(arith.AddfOp(a, b))

    def mul(self, a, b):
        return self(arith.MulfOp(a, b))

    def fma(self, a, b, c):
        """a·b + c, fused where the target has FMA (contract flags)."""
        return self(arith.AddfOp(self(arith.MulfOp(a, b, CONTRACT)), c, CONTRACT))

    def horner(self, x: SSAValue, coefficients) -> SSAValue:
        result = self.f(coefficients[0])
        for c in coefficients[1:]:
            result = self.fma(result, x, self.f(c))
        return result

    def select(self, condition, a, b):
        return self(arith.SelectOp(condition, a, b))

    def cmp(self, a, b, predicate: str):
        return self(arith.CmpfOp(a, b, predicate))

    def copysign(self, magnitude, sign):
        return self(xmath.CopySignOp(magnitude, sign))


SMALLEST_EXPONENT = -86.5
"""exp(x) below this is flushed to 0 (exp(-86.5) = 2.7e-38): computing it would go through subnormal
floats, which x86 handles ~100x slower (a causal softmax spent most of its time there)."""
LARGEST_EXPONENT = 88.72283
ROUNDING = 1.5 * 2**23
"""Added to |v| < 2^22, it leaves round-to-nearest(v) in the low mantissa bits."""
CONTRACT = arith.FastMathFlagsAttr([arith.FastMathFlag.ALLOW_CONTRACT])
"""exp's multiply-adds may fuse (one rounding instead of two: within the same error bound)."""


def emit_exp(b: Builder, x: SSAValue, low: bool = True, high: bool = True, limits: bool = True) -> SSAValue:
    """~20 vector ops; it dominates softmax and the activations, so every op counts:
    the clamps are compare+select (one x86 max/min each, NaN passes through them and then
    through every op), n = round(x·log2 e) comes from one add of ROUNDING (its bits give
    the integer n with no conversion), and 2^n is applied as 2^(n−1) times a polynomial
    scaled by 2 (exact), so n = 128 does not overflow the exponent field.
    A caller that knows x >= SMALLEST_EXPONENT (`low=False`) or x <= LARGEST_EXPONENT
    (`high=False`) skips that clamp; one whose formula saturates anyway near the limits
    (`limits=False`) gets exp(clamped x) instead of exactly 0 / inf beyond them."""
    clamped = x
    if low:
        clamped = b.select(b.cmp(x, b.f(SMALLEST_EXPONENT), "olt"), b.f(SMALLEST_EXPONENT), clamped)
    if high:
        clamped = b.select(b.cmp(clamped, b.f(LARGEST_EXPONENT), "ogt"), b.f(LARGEST_EXPONENT), clamped)
    shifted = b.fma(clamped, b.f(1.44269504089), b.f(ROUNDING))
    n = b(arith.SubfOp(shifted, b.f(ROUNDING)))
    r = b.fma(n, b.f(-0.693359375), clamped)
    r = b.fma(n, b.f(2.12194440e-4), r)
    twice = b.horner(r, [2 * c for c in EXP_POLYNOMIAL])
    # 2·exp(r) ≈ (r²·2p(r) + 2r) + 2: the small terms first, like Cephes.
    y = b.add(b.fma(b.mul(r, r), twice, b.add(r, r)), b.f(2.0))
    bits = lambda v: b(arith.BitcastOp(v, i32))  # noqa: E731
    # The bits of `shifted` minus those of ROUNDING are n; 2^(n−1) has biased exponent n + 126.
    offset = b(arith.ConstantOp(IntegerAttr(126 - _f32_bits(ROUNDING), i32)))
    biased = b(arith.AddiOp(bits(shifted), offset))
    power = b(arith.BitcastOp(b(arith.ShLIOp(biased, b(arith.ConstantOp(IntegerAttr(23, i32))))), f32))
    y = b.mul(y, power)
    if not limits:
        return y
    if high:
        y = b.select(b.cmp(x, b.f(LARGEST_EXPONENT), "ogt"), b.f(math.inf), y)
    if low:
        y = b.select(b.cmp(x, b.f(SMALLEST_EXPONENT), "olt"), b.f(0.0), y)
    return y


def _f32_bits(value: float) -> int:
    return struct.unpack("<i", struct.pack("<f", value))[0]


TANH_EXP_CLAMP = 20.0


def emit_tanh(b: Builder, x: SSAValue) -> SSAValue:
    z = b.mul(x, x)
    small = b.add(x, b.mul(b.mul(x, z), b.horner(z, TANH_POLYNOMIAL)))
    magnitude = b(xmath.AbsFOp(x))
    # tanh rounds to ±1 from |x| = 9.01: 2|x| clamped to TANH_EXP_CLAMP keeps 2/(e + 1) normal
    # (about 4e-9, no subnormal division) and exp in range, so no other clamp or limit applies.
    twice = b.add(magnitude, magnitude)
    twice = b.select(b.cmp(twice, b.f(TANH_EXP_CLAMP), "ogt"), b.f(TANH_EXP_CLAMP), twice)
    e = emit_exp(b, twice, low=False, high=False, limits=False)
    large = b(arith.SubfOp(b.f(1.0), b(arith.DivfOp(b.f(2.0), b.add(e, b.f(1.0))))))
    return b.select(b.cmp(magnitude, b.f(0.625), "olt"), small, b.copysign(large, x))


def emit_erf(b: Builder, x: SSAValue) -> SSAValue:
    z = b.mul(x, x)
    small = b.add(x, b.mul(x, b.horner(z, ERF_SMALL)))
    magnitude = b(xmath.AbsFOp(x))
    a = b(arith.MinimumfOp(magnitude, b.f(ERF_CLAMP)))
    t = b(arith.DivfOp(b.f(1.0), b.add(b.f(1.0), b.mul(b.f(0.5), a))))
    # -a² lies in [-16, 0] (a is clamped to 4): no exp clamp or limit applies.
    tail = b.mul(emit_exp(b, b(arith.NegfOp(b.mul(a, a))), low=False, high=False, limits=False), b.horner(t, ERF_TAIL))
    large = b.copysign(b(arith.SubfOp(b.f(1.0), tail)), x)
    y = b.select(b.cmp(magnitude, b.f(ERF_CUT), "olt"), small, large)
    return b.select(b.cmp(x, x, "uno"), x, y)


EXPANSIONS: dict[type[Operation], Callable[[Builder, SSAValue], SSAValue]] = {
    xmath.ExpOp: emit_exp,
    xmath.TanhOp: emit_tanh,
    xmath.ErfOp: emit_erf,
}


class ExpandF32Math(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        expand = EXPANSIONS.get(type(op))
        if expand is None or not isinstance(op.results[0].type, Float32Type):
            return
        result = expand(Builder(rewriter, op), op.operands[0])
        rewriter.replace(op, [], [result])


@dataclass(frozen=True)
class ExpandMathPass(ModulePass):
    """Replace f32 exp/tanh/erf by vectorizable polynomials (see module docstring)."""

    name = "expand-math"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ExpandF32Math(), apply_recursively=False).rewrite_module(op)

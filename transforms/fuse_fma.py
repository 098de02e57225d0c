"""`fuse-fma`: fuse a floating-point multiply feeding an add or a subtract into `math.fma`.

Before:

    %p = arith.mulf %a, %b fastmath<contract> : f32        // one use
    %r = arith.addf %c, %p fastmath<contract> : f32        // either operand
    %q = arith.mulf %d, %e : f32
    %s = arith.subf %f, %q : f32                            // c - a*b
    %t = arith.mulf %g, %h : f32
    %u = arith.subf %t, %k : f32                            // a*b - c

After:

    %r = math.fma %a, %b, %c fastmath<contract> : f32       // a*b + c
    %nd = arith.negf %d : f32
    %s = math.fma %nd, %e, %f : f32                          // (-d)*e + f
    %nk = arith.negf %k : f32
    %u = math.fma %g, %h, %nk : f32                          // g*h + (-k)

A multiply is fused only when its result has exactly one use (otherwise the product
would be computed twice, once rounded and once not) and when the multiply and the add
carry *equal* fastmath flags; the fma keeps those flags. Negation is exact, so
`c - a*b` and `a*b - c` are each one fma. Nested expressions fuse from the inside out:
`(a*b + c)*d + e` becomes `fma(fma(a, b, c), d, e)`. Integer arithmetic is untouched.

Numerics: this CHANGES ROUNDING. `a*b + c` rounds twice (the product, then the sum);
`math.fma` rounds once (f16/bf16: computed in f32, then rounded to the element type, as
every low-precision op on the CPU backend). Results differ from the unfused program in
the last bit, or by more under cancellation (`a*b ≈ -c`). The pass is therefore opt-in:
it is not part of `cpu-pipeline` (which documents IEEE semantics without fast-math);
run it explicitly, e.g. `strata-opt -p cpu-pipeline,fuse-fma`.

xDSL 0.74 note: `math.FmaOp(...)` and `arith.NegfOp(...)` store the `fastmath` argument
of their constructors as a discardable attribute instead of the `fastmath` property,
so the flags are set on `properties` here.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint


def fusable_mul(value: SSAValue, user: arith.AddfOp | arith.SubfOp) -> arith.MulfOp | None:
    """The mulf defining `value`, if `user` is its only use and the flags agree."""
    mul = value.owner
    if not isinstance(mul, arith.MulfOp) or not mul.result.has_one_use():
        return None
    if mul.fastmath != user.fastmath:
        return None
    return mul


def make_fma(a: SSAValue, b: SSAValue, c: SSAValue, flags: arith.FastMathFlagsAttr) -> math.FmaOp:
    fma = math.FmaOp(a, b, c)
    fma.properties["fastmath"] = flags  # see the module docstring
    return fma


def fuse(
    rewriter: PatternRewriter,
    op: arith.AddfOp | arith.SubfOp,
    mul: arith.MulfOp,
    negate: arith.NegfOp | None,
    fma: math.FmaOp,
) -> None:
    if negate is not None:  # inserted on its own, so it does not take the result's name
        rewriter.insert(negate, InsertPoint.before(op))
    rewriter.replace(op, fma)
    rewriter.erase(mul)


class FuseMulAdd(RewritePattern):
    """addf(mulf(a, b), c) or addf(c, mulf(a, b)) -> fma(a, b, c)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddfOp, rewriter: PatternRewriter) -> None:
        for product, addend in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if (mul := fusable_mul(product, op)) is not None:
                fma = make_fma(mul.lhs, mul.rhs, addend, op.fastmath)
                fuse(rewriter, op, mul, None, fma)
                return


class FuseMulSub(RewritePattern):
    """subf(mulf(a, b), c) -> fma(a, b, -c); subf(c, mulf(a, b)) -> fma(-a, b, c)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SubfOp, rewriter: PatternRewriter) -> None:
        if (mul := fusable_mul(op.lhs, op)) is not None:
            negate = arith.NegfOp(op.rhs)
            fma = make_fma(mul.lhs, mul.rhs, negate.result, op.fastmath)
        elif (mul := fusable_mul(op.rhs, op)) is not None:
            negate = arith.NegfOp(mul.lhs)
            fma = make_fma(negate.result, mul.rhs, op.lhs, op.fastmath)
        else:
            return
        fuse(rewriter, op, mul, negate, fma)


@dataclass(frozen=True)
class FuseFmaPass(ModulePass):
    """Fuse single-use mulf into addf/subf as math.fma (opt-in: changes rounding; see
    the module docstring)."""

    name = "fuse-fma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([FuseMulAdd(), FuseMulSub()], dce_enabled=False)
        PatternRewriteWalker(patterns).rewrite_module(op)

"""`fuse-patterns`: fold neighbours of a matmul into its flags.

Transposes of the last two axes become `transpose_a` / `transpose_b` (the kernel reads
the operand through a swapped-stride view instead of a copy); a scale, or a division by
a scalar constant, of a matmul's result or operand becomes `alpha`:

    %t = graph.transpose %w {permutation = array<i64: 1, 0>}
    %m = graph.matmul %x, %t
    %y = graph.scale %m {value = 0.125 : f64}
  ->
    %y = graph.matmul %x, %w {transpose_b = true, alpha = 0.125 : f64}

Runs before constant folding (seed 001: a folded transpose of a constant weight would
otherwise be materialized). Numerics: folding a scale into alpha multiplies the product
once instead of the operand or the result, so the result may differ in the last bit.
Matmul epilogues (bias, activation, residual) are fused by fuse-elementwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
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

from strata.dialects import graph
from strata.runtime.dtypes import dense_to_numpy


def swaps_last_two_axes(op: object) -> bool:
    if not isinstance(op, graph.TransposeOp):
        return False
    permutation = op.params()["permutation"]
    rank = len(permutation)
    return rank >= 2 and permutation == (*range(rank - 2), rank - 1, rank - 2)


def with_params(op: graph.MatmulOp, a: SSAValue, b: SSAValue, **changes: object) -> graph.MatmulOp:
    return graph.MatmulOp.make([a, b], op.result.type, **{**op.params(), **changes})


class AbsorbTranspose(RewritePattern):
    """matmul(transpose(x), y) -> matmul(x, y) with transpose_a flipped (likewise b)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatmulOp, rewriter: PatternRewriter):
        params = op.params()
        if swaps_last_two_axes(op.a.owner):
            rewriter.replace(op, with_params(op, op.a.owner.x, op.b, transpose_a=not params["transpose_a"]))
        elif swaps_last_two_axes(op.b.owner):
            rewriter.replace(op, with_params(op, op.a, op.b.owner.x, transpose_b=not params["transpose_b"]))


def scalar_factor(op: object) -> float | None:
    """The factor a scale, or a division by a one-element constant, multiplies by."""
    if isinstance(op, graph.ScaleOp):
        return op.params()["value"]
    if isinstance(op, graph.DivOp) and isinstance(op.rhs.owner, graph.ConstantOp):
        divisor = dense_to_numpy(op.rhs.owner.value)
        if divisor.size == 1 and divisor.reshape(()) != 0:
            return 1.0 / float(divisor.reshape(()))
    return None


def scaled_operand(op: object) -> SSAValue:
    return op.x if isinstance(op, graph.ScaleOp) else op.lhs


class FoldScaleOfResult(RewritePattern):
    """scale(matmul(a, b)) or matmul(a, b) / c -> matmul(a, b, alpha · factor)."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        factor = scalar_factor(op)
        if factor is None:
            return
        source = scaled_operand(op)
        matmul = source.owner
        if not isinstance(matmul, graph.MatmulOp) or not source.has_one_use():
            return
        if op.results[0].type != matmul.result.type:
            return
        alpha = matmul.params()["alpha"] * factor
        rewriter.replace(op, with_params(matmul, matmul.a, matmul.b, alpha=alpha))
        rewriter.erase(matmul)


class FoldScaleOfOperand(RewritePattern):
    """matmul(scale(a), b) -> matmul(a, b, alpha · factor) (likewise b)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatmulOp, rewriter: PatternRewriter):
        for position in ("a", "b"):
            value = getattr(op, position)
            factor = scalar_factor(value.owner)
            if factor is None or scaled_operand(value.owner).type != value.type:
                continue
            operands = {"a": op.a, "b": op.b, position: scaled_operand(value.owner)}
            alpha = op.params()["alpha"] * factor
            rewriter.replace(op, with_params(op, operands["a"], operands["b"], alpha=alpha))
            return


@dataclass(frozen=True)
class FusePatternsPass(ModulePass):
    """Fold transposes and scalar scaling into matmul flags (see module docstring)."""

    name = "fuse-patterns"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([AbsorbTranspose(), FoldScaleOfResult(), FoldScaleOfOperand()])
        PatternRewriteWalker(patterns).rewrite_module(op)


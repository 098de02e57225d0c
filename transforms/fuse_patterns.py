"""`fuse-patterns`: fold neighbours of a matmul into its flags.

Transposes of the last two axes become `transpose_a` / `transpose_b` (the kernel reads
the operand through a swapped-stride view instead of a copy); a scale, or a division by
a scalar constant, of a matmul's result or operand becomes `alpha`:

    %t = graph.transpose %w {permutation = array<i64: 1, 0>}
    %m = graph.matmul %x, %t
    %y = graph.scale %m {value = 0.125 : f64}
  ->
    %y = graph.matmul %x, %w {transpose_b = true, alpha = 0.125 : f64}

Runs before constant folding (a transpose of a constant weight would otherwise be folded
into a second, transposed copy of the weight instead of a flag). Numerics: folding a
scale into alpha multiplies the product once instead of the operand or the result, so
the result may differ in the last bit.
It also recognizes two DAGs that a program may spell out op by op: the explicit attention
matmul → [causal mask] → softmax → matmul becomes graph.attention (causal = true when the
mask is a select or add of a constant that hides exactly the keys above the diagonal), and
the 8-op tanh GELU becomes graph.gelu {approximate = "tanh"}.

Matmul epilogues (bias, activation, residual) are fused by fuse-elementwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
from strata.dialects.graph_base import ShapeError
from strata.dialects.graph_nn import above_diagonal
from strata.support.dtypes import dense_to_numpy, element_count, splat_value
from strata.dialects.graph_elementwise import GELU_TANH_CUBIC, GELU_TANH_SCALE


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
    if isinstance(op, graph.DivOp):
        divisor = scalar_constant(op.rhs)
        if divisor is not None and divisor != 0:
            return 1.0 / divisor
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


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The array a graph.constant holds (read-only; a splat is a broadcast view, never
    filled out)."""
    owner = value.owner
    if not isinstance(owner, graph.ConstantOp):
        return None
    if (splat := splat_value(owner.value)) is not None:
        return np.broadcast_to(splat, owner.value.get_shape())
    return dense_to_numpy(owner.value)


def scalar_constant(value: SSAValue) -> float | None:
    """The number a one-element graph.constant holds (None for anything else)."""
    owner = value.owner
    if not isinstance(owner, graph.ConstantOp) or element_count(owner.value) != 1:
        return None
    return float(dense_to_numpy(owner.value).reshape(()))


def scaled(value: SSAValue) -> tuple[SSAValue, float] | None:
    """value = inner · factor, as a scale or a multiplication by a scalar constant."""
    owner = value.owner
    if isinstance(owner, graph.ScaleOp):
        return owner.x, owner.params()["value"]
    if isinstance(owner, graph.MulOp):
        for inner, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            c = scalar_constant(other)
            if c is not None and inner.type == value.type:
                return inner, c
    return None


def plus_constant(value: SSAValue, constant: float) -> SSAValue | None:
    """The other operand of value = other + constant (either order)."""
    owner = value.owner
    if isinstance(owner, graph.AddOp):
        for inner, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            c = scalar_constant(other)
            if c is not None and np.isclose(c, constant) and inner.type == value.type:
                return inner
    return None


def is_cube_of(value: SSAValue, x: SSAValue) -> bool:
    owner = value.owner
    if isinstance(owner, graph.PowOp):
        return owner.lhs is x and scalar_constant(owner.rhs) == 3
    if isinstance(owner, graph.MulOp):
        for a, b in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            square = b.owner
            if a is x and isinstance(square, graph.MulOp) and square.lhs is x and square.rhs is x:
                return True
    return False


def gelu_tanh_input(value: SSAValue) -> SSAValue | None:
    """x if value = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), in the usual op orders."""
    candidates = []
    halved = scaled(value)
    if halved is not None and np.isclose(halved[1], 0.5) and isinstance(halved[0].owner, graph.MulOp):
        product = halved[0].owner
        candidates += [(product.lhs, product.rhs), (product.rhs, product.lhs)]
    elif isinstance(value.owner, graph.MulOp):
        product = value.owner
        for a, b in ((product.lhs, product.rhs), (product.rhs, product.lhs)):
            for side, other in ((a, b), (b, a)):
                half = scaled(side)
                if half is not None and np.isclose(half[1], 0.5):
                    candidates.append((half[0], other))
    for x, gate in candidates:
        inner = plus_constant(gate, 1.0)
        if inner is None or not isinstance(inner.owner, graph.TanhOp):
            continue
        argument = scaled(inner.owner.x)
        if argument is None or not np.isclose(argument[1], GELU_TANH_SCALE, rtol=1e-6):
            continue
        total = argument[0].owner
        if not isinstance(total, graph.AddOp):
            continue
        for a, b in ((total.lhs, total.rhs), (total.rhs, total.lhs)):
            cubic = scaled(b)
            if a is x and cubic is not None and np.isclose(cubic[1], GELU_TANH_CUBIC) and is_cube_of(cubic[0], x):
                return x
    return None


class RecognizeGeluTanh(RewritePattern):
    """The 8-op tanh-approximation DAG -> graph.gelu {approximate = "tanh"}."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, graph.ScaleOp | graph.MulOp):
            return
        x = gelu_tanh_input(op.results[0])
        if x is not None and x.type == op.results[0].type:
            rewriter.replace(op, graph.GeluOp.make([x], approximate="tanh"))


def causal_mask(value: SSAValue) -> SSAValue | None:
    """The scores s if value masks them causally: select(mask, very negative, s) or
    s + additive mask, with the mask true / very negative exactly above the diagonal."""
    owner = value.owner
    if isinstance(owner, graph.SelectOp):
        mask, fill = constant_array(owner.cond), scalar_constant(owner.a)
        if mask is not None and fill is not None and fill <= -1e9:
            return owner.b if is_upper_triangle(mask) else None
    if isinstance(owner, graph.AddOp):
        for scores, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            additive = constant_array(other)
            if additive is not None and additive.ndim >= 2 and is_upper_triangle(additive <= -1e9) and np.all((additive <= -1e9) | (additive == 0)):
                return scores
    return None


def is_upper_triangle(mask: np.ndarray) -> bool:
    if mask.ndim < 2:
        return False
    rows, columns = mask.shape[-2:]
    return bool(np.all(mask == np.broadcast_to(above_diagonal(rows, columns), mask.shape)))


class RecognizeAttention(RewritePattern):
    """matmul(softmax(scale · q kᵀ [causal mask]), v) -> graph.attention. The softmax must
    be over the last axis and every intermediate used once."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatmulOp, rewriter: PatternRewriter):
        params = op.params()
        softmax = op.a.owner
        if params["transpose_a"] or params["transpose_b"] or params["alpha"] != 1.0:
            return
        if not isinstance(softmax, graph.SoftmaxOp) or not op.a.has_one_use():
            return
        rank = len(softmax.x.type.get_shape())
        if softmax.params()["axis"] % rank != rank - 1 or not softmax.x.has_one_use():
            return
        scores, causal = softmax.x, False
        unmasked = causal_mask(scores)
        if unmasked is not None:
            scores, causal = unmasked, True
            if not scores.has_one_use():
                return
        product = scores.owner
        if not isinstance(product, graph.MatmulOp):
            return
        p = product.params()
        if p["transpose_a"] or not p["transpose_b"]:
            return
        try:
            attention = graph.AttentionOp.make(
                [product.a, product.b, op.b], op.result.type, scale=p["alpha"], causal=causal
            )
        except ShapeError:
            return
        rewriter.replace(op, attention)


@dataclass(frozen=True)
class FusePatternsPass(ModulePass):
    """Fold transposes and scalar scaling into matmul flags; recognize attention and the
    tanh GELU (see module docstring)."""

    name = "fuse-patterns"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([
            AbsorbTranspose(), FoldScaleOfResult(), FoldScaleOfOperand(),
            RecognizeGeluTanh(), RecognizeAttention(),
        ])  # fmt: skip
        PatternRewriteWalker(patterns).rewrite_module(op)


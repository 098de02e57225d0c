"""Vector-Jacobian products of the graph ops, one rule per op, in the per-op registry.

A rule receives a `VjpContext` for one primal op of the gradient function and returns
one cotangent per operand of the op (None where no gradient flows: integer or i1
operands, a select's condition). It builds the cotangents from graph ops only, through
`ctx.emit`, so every gradient program runs on every target:

    @register_vjp(graph.ExpOp)
    def exp(ctx):                       # y = e^x  =>  dx = dy * y
        return [ctx.emit(graph.MulOp, [ctx.cotangent, ctx.result])]

`ctx.operand(i)` and `ctx.result` are the primal op's values as the gradient function
sees them: the saved forward value, or a recomputed copy where the checkpoint policy
recomputes it (transforms/autodiff.py). `ctx.operand_type(i)`/`ctx.result_type` give
types without materializing anything. A rule may compute a cotangent nobody needs (for a
constant operand, say): the pass erases such dead backward ops afterwards.

The `autodiff` pass (transforms/autodiff.py) walks the forward ops in reverse, calls the
rule of each op whose result has a cotangent and accumulates what it returns. The rule
table, with each rule's formula, is in docs/autodiff.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import is_float, normalize_axes, normalize_axis, shape_of, tensor
from strata.dialects.graph_nn import above_diagonal
from strata.dialects.opinfo import register_vjp
from strata.support.dtypes import numpy_to_dense, tensor_dtype
from strata.dialects.graph_elementwise import GELU_TANH_CUBIC, GELU_TANH_SCALE

Cotangents = Sequence[SSAValue | None]


@dataclass
class GraphEmitter:
    """Builds graph ops with inferred result types and hands each to `append`."""

    append: Callable[[Operation], None]
    """Appends an op to the backward part of the gradient function."""

    def emit(
        self,
        op_type: type[graph.GraphOp],
        operands: Sequence[SSAValue],
        result_type: TensorType | None = None,
        **params: object,
    ) -> SSAValue:
        """Append `op_type(operands, **params)` (result type inferred) and return its result."""
        op = op_type.make(operands, result_type, **params)
        self.append(op)
        return op.results[0]

    def constant(self, value: object, t: TensorType) -> SSAValue:
        """A graph.constant of type `t` holding `value` (an array or a scalar)."""
        return self.emit(graph.ConstantOp, [], value=numpy_to_dense(np.asarray(value), t))

    def scalar(self, value: float, element_type: Attribute) -> SSAValue:
        """A rank-0 constant; binary ops broadcast it against any shape."""
        return self.constant(value, tensor((), element_type))

    def full(self, value: float, t: TensorType) -> SSAValue:
        """A tensor of type `t` filled with `value` (a broadcast scalar, not a big literal)."""
        filled = self.scalar(value, t.element_type)
        return filled if not shape_of(t) else self.emit(graph.BroadcastToOp, [filled], t)

    # Small arithmetic vocabulary the rules are written in.

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.AddOp, [a, b])

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.SubOp, [a, b])

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.MulOp, [a, b])

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.DivOp, [a, b])

    def scale(self, a: SSAValue, value: float) -> SSAValue:
        return self.emit(graph.ScaleOp, [a], value=float(value))

    def neg(self, a: SSAValue) -> SSAValue:
        return self.emit(graph.NegOp, [a])

    def compare(self, a: SSAValue, b: SSAValue, predicate: str) -> SSAValue:
        return self.emit(graph.CompareOp, [a, b], predicate=predicate)

    def where(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.SelectOp, [cond, a, b])

    def mask_float(self, mask: SSAValue, element_type: Attribute) -> SSAValue:
        """An i1 mask as 0/1 values of `element_type`."""
        return self.emit(graph.CastOp, [mask], tensor(shape_of(mask.type), element_type))

    def reshape(self, a: SSAValue, shape: Sequence[int]) -> SSAValue:
        if shape_of(a.type) == tuple(shape):
            return a
        return self.emit(graph.ReshapeOp, [a], tensor(shape, a.type.element_type))

    def row_sum(self, a: SSAValue, axis: int) -> SSAValue:
        """The sum along `axis`, kept as a size-1 axis (broadcasts back against `a`)."""
        return self.emit(graph.ReduceSumOp, [a], axes=(axis,), keepdims=True)

    def row_mean(self, a: SSAValue, axis: int) -> SSAValue:
        return self.emit(graph.ReduceMeanOp, [a], axes=(axis,), keepdims=True)

    def matmul(self, a, b, transpose_a=False, transpose_b=False, alpha=1.0) -> SSAValue:
        return self.emit(
            graph.MatmulOp, [a, b],
            transpose_a=transpose_a, transpose_b=transpose_b, alpha=float(alpha),
        )  # fmt: skip

    def unbroadcast(self, g: SSAValue, to: TensorType) -> SSAValue:
        """Sum `g` over the axes broadcasting added or stretched, back to `to`'s shape."""
        g_shape, target = shape_of(g.type), shape_of(to)
        leading = len(g_shape) - len(target)
        stretched = [leading + i for i, d in enumerate(target) if d == 1 and g_shape[leading + i] != 1]
        axes = (*range(leading), *stretched)
        summed = self.emit(graph.ReduceSumOp, [g], axes=axes) if axes else g
        return self.reshape(summed, target)

    def one_hot(self, ids: SSAValue, depth: int, element_type: Attribute) -> SSAValue:
        """[N] ids -> [N, depth] rows of 0/1: ids compared with a constant iota."""
        (n,) = shape_of(ids.type)
        column = self.reshape(ids, (n, 1))
        iota = self.constant(np.arange(depth).reshape(1, depth), tensor((1, depth), ids.type.element_type))
        return self.mask_float(self.compare(column, iota, "eq"), element_type)


@dataclass
class VjpContext(GraphEmitter):
    """What a VJP rule sees of one primal op; `emit` & co. append its backward ops."""

    op: graph.GraphOp
    """The primal op, in the gradient function (read its params and types here)."""
    cotangent: SSAValue
    """The accumulated cotangent of the op's result."""
    forward_value: Callable[[SSAValue], SSAValue]
    """A forward value as the backward part may use it: saved, or recomputed."""

    @property
    def params(self) -> dict[str, object]:
        return self.op.params()

    def operand(self, index: int) -> SSAValue:
        return self.forward_value(self.op.operands[index])

    def operand_type(self, index: int) -> TensorType:
        return self.op.operands[index].type

    @property
    def result(self) -> SSAValue:
        return self.forward_value(self.op.results[0])

    @property
    def result_type(self) -> TensorType:
        return self.op.results[0].type


def element(t: TensorType) -> Attribute:
    return t.element_type


# ---------------------------------------------------------------------------------------
# Ops without a gradient.


@register_vjp(graph.CompareOp, graph.ConstantOp)
def no_gradient(ctx: VjpContext) -> Cotangents:
    """i1 results and literals: nothing flows back."""
    return [None] * len(ctx.op.operands)


# ---------------------------------------------------------------------------------------
# Unary elementwise ops: dx = dy * f'(x), written with the forward value that is cheapest.


@register_vjp(graph.NegOp)
def neg(ctx: VjpContext) -> Cotangents:
    return [ctx.neg(ctx.cotangent)]


@register_vjp(graph.AbsOp)
def abs_(ctx: VjpContext) -> Cotangents:
    """dx = dy * sign(x) (0 at x = 0, like torch)."""
    x, g = ctx.operand(0), ctx.cotangent
    zero = ctx.scalar(0.0, element(ctx.operand_type(0)))
    negative = ctx.where(ctx.compare(x, zero, "lt"), ctx.neg(g), zero)
    return [ctx.where(ctx.compare(x, zero, "gt"), g, negative)]


@register_vjp(graph.ExpOp)
def exp(ctx: VjpContext) -> Cotangents:
    return [ctx.mul(ctx.cotangent, ctx.result)]


@register_vjp(graph.LogOp)
def log(ctx: VjpContext) -> Cotangents:
    return [ctx.div(ctx.cotangent, ctx.operand(0))]


@register_vjp(graph.SqrtOp)
def sqrt(ctx: VjpContext) -> Cotangents:
    """dx = dy / (2 sqrt(x))."""
    return [ctx.div(ctx.cotangent, ctx.scale(ctx.result, 2.0))]


@register_vjp(graph.RsqrtOp)
def rsqrt(ctx: VjpContext) -> Cotangents:
    """y = x^-1/2: dx = -1/2 dy y / x."""
    return [ctx.scale(ctx.div(ctx.mul(ctx.cotangent, ctx.result), ctx.operand(0)), -0.5)]


@register_vjp(graph.TanhOp)
def tanh(ctx: VjpContext) -> Cotangents:
    """dx = dy (1 - y²)."""
    y = ctx.result
    one = ctx.scalar(1.0, element(ctx.result_type))
    return [ctx.mul(ctx.cotangent, ctx.sub(one, ctx.mul(y, y)))]


@register_vjp(graph.SigmoidOp)
def sigmoid(ctx: VjpContext) -> Cotangents:
    """dx = dy y (1 - y)."""
    y = ctx.result
    one = ctx.scalar(1.0, element(ctx.result_type))
    return [ctx.mul(ctx.cotangent, ctx.mul(y, ctx.sub(one, y)))]


@register_vjp(graph.ReluOp)
def relu(ctx: VjpContext) -> Cotangents:
    """dx = dy where x > 0, else 0 (0 at x = 0)."""
    zero = ctx.scalar(0.0, element(ctx.operand_type(0)))
    positive = ctx.compare(ctx.operand(0), zero, "gt")
    return [ctx.where(positive, ctx.cotangent, zero)]


@register_vjp(graph.SiluOp)
def silu(ctx: VjpContext) -> Cotangents:
    """y = x s, s = sigmoid(x): dx = dy s (1 + x (1 - s))."""
    x = ctx.operand(0)
    s = ctx.emit(graph.SigmoidOp, [x])
    one = ctx.scalar(1.0, element(ctx.operand_type(0)))
    slope = ctx.mul(s, ctx.add(one, ctx.mul(x, ctx.sub(one, s))))
    return [ctx.mul(ctx.cotangent, slope)]


def gaussian(ctx: VjpContext, x: SSAValue, scale: float) -> SSAValue:
    """scale · exp(-x²), the shape of erf's derivative and of the normal density."""
    bell = ctx.emit(graph.ExpOp, [ctx.neg(ctx.mul(x, x))])
    return ctx.scale(bell, scale)


@register_vjp(graph.ErfOp)
def erf(ctx: VjpContext) -> Cotangents:
    """dx = dy 2/√π exp(-x²)."""
    return [ctx.mul(ctx.cotangent, gaussian(ctx, ctx.operand(0), 2 / math.sqrt(math.pi)))]


@register_vjp(graph.GeluOp)
def gelu(ctx: VjpContext) -> Cotangents:
    slope = GELU_SLOPES[ctx.params["approximate"]](ctx, ctx.operand(0))
    return [ctx.mul(ctx.cotangent, slope)]


def gelu_erf_slope(ctx: VjpContext, x: SSAValue) -> SSAValue:
    """d/dx 0.5x(1 + erf(x/√2)) = 0.5(1 + erf(x/√2)) + x φ(x), φ the normal density."""
    one = ctx.scalar(1.0, element(x.type))
    cdf = ctx.scale(ctx.add(one, ctx.emit(graph.ErfOp, [ctx.scale(x, 1 / math.sqrt(2))])), 0.5)
    density = gaussian(ctx, ctx.scale(x, 1 / math.sqrt(2)), 1 / math.sqrt(2 * math.pi))
    return ctx.add(cdf, ctx.mul(x, density))




def gelu_tanh_slope(ctx: VjpContext, x: SSAValue) -> SSAValue:
    """t = tanh(c(x + k x³)): slope = 0.5(1 + t) + 0.5 x (1 - t²) c (1 + 3k x²)."""
    one = ctx.scalar(1.0, element(x.type))
    x2 = ctx.mul(x, x)
    inner = ctx.scale(ctx.add(x, ctx.scale(ctx.mul(x2, x), GELU_TANH_CUBIC)), GELU_TANH_SCALE)
    t = ctx.emit(graph.TanhOp, [inner])
    inner_slope = ctx.scale(ctx.add(one, ctx.scale(x2, 3 * GELU_TANH_CUBIC)), GELU_TANH_SCALE)
    tanh_slope = ctx.mul(ctx.sub(one, ctx.mul(t, t)), inner_slope)
    return ctx.scale(ctx.add(ctx.add(one, t), ctx.mul(x, tanh_slope)), 0.5)


GELU_SLOPES = {"none": gelu_erf_slope, "tanh": gelu_tanh_slope}


@register_vjp(graph.ScaleOp)
def scale(ctx: VjpContext) -> Cotangents:
    return [ctx.scale(ctx.cotangent, ctx.params["value"])]


@register_vjp(graph.CastOp)
def cast(ctx: VjpContext) -> Cotangents:
    """float -> float: the cotangent cast back; an integer or i1 source gets none."""
    source = ctx.operand_type(0)
    if not is_float(source.element_type):
        return [None]
    return [ctx.emit(graph.CastOp, [ctx.cotangent], source)]


@register_vjp(graph.DropoutOp)
def dropout(ctx: VjpContext) -> Cotangents:
    """dx = dy · mask/(1-p), the mask recomputed by dropping out ones with the same (seed, p):
    the keyed RNG makes it bit-identical to the forward's, so it is never stored."""
    ones = ctx.full(1.0, ctx.operand_type(0))
    mask = ctx.emit(graph.DropoutOp, [ones], p=ctx.params["p"], seed=ctx.params["seed"])
    return [ctx.mul(ctx.cotangent, mask)]


# ---------------------------------------------------------------------------------------
# Binary elementwise ops: the full-shape cotangents, then summed back over broadcast axes.


def unbroadcast_all(ctx: VjpContext, cotangents: Sequence[SSAValue | None]) -> Cotangents:
    return [
        None if g is None else ctx.unbroadcast(g, ctx.operand_type(i))
        for i, g in enumerate(cotangents)
    ]


@register_vjp(graph.AddOp)
def add(ctx: VjpContext) -> Cotangents:
    return unbroadcast_all(ctx, [ctx.cotangent, ctx.cotangent])


@register_vjp(graph.SubOp)
def sub(ctx: VjpContext) -> Cotangents:
    return unbroadcast_all(ctx, [ctx.cotangent, ctx.neg(ctx.cotangent)])


@register_vjp(graph.MulOp)
def mul(ctx: VjpContext) -> Cotangents:
    g = ctx.cotangent
    return unbroadcast_all(ctx, [ctx.mul(g, ctx.operand(1)), ctx.mul(g, ctx.operand(0))])


@register_vjp(graph.DivOp)
def div(ctx: VjpContext) -> Cotangents:
    """y = l / r: dl = dy / r, dr = -dl · y."""
    dl = ctx.div(ctx.cotangent, ctx.operand(1))
    return unbroadcast_all(ctx, [dl, ctx.neg(ctx.mul(dl, ctx.result))])


@register_vjp(graph.PowOp)
def pow_(ctx: VjpContext) -> Cotangents:
    """y = l^r: dl = dy r l^(r-1), dr = dy y log(l) (meaningful for l > 0)."""
    l, r, g = ctx.operand(0), ctx.operand(1), ctx.cotangent
    one = ctx.scalar(1.0, element(ctx.result_type))
    dl = ctx.mul(g, ctx.mul(r, ctx.emit(graph.PowOp, [l, ctx.sub(r, one)])))
    dr = ctx.mul(g, ctx.mul(ctx.result, ctx.emit(graph.LogOp, [l])))
    return unbroadcast_all(ctx, [dl, dr])


def extremum_vjp(ctx: VjpContext, lhs_wins: str) -> Cotangents:
    """maximum/minimum: the cotangent goes to the winning operand; ties split it evenly
    (like torch). dr = dy - dl."""
    l, r, g = ctx.operand(0), ctx.operand(1), ctx.cotangent
    zero = ctx.scalar(0.0, element(ctx.result_type))
    on_tie = ctx.where(ctx.compare(l, r, "eq"), ctx.scale(g, 0.5), zero)
    dl = ctx.where(ctx.compare(l, r, lhs_wins), g, on_tie)
    return unbroadcast_all(ctx, [dl, ctx.sub(g, dl)])


@register_vjp(graph.MaximumOp)
def maximum(ctx: VjpContext) -> Cotangents:
    return extremum_vjp(ctx, "gt")


@register_vjp(graph.MinimumOp)
def minimum(ctx: VjpContext) -> Cotangents:
    return extremum_vjp(ctx, "lt")


@register_vjp(graph.SelectOp)
def select(ctx: VjpContext) -> Cotangents:
    """where(c, a, b): a gets dy where c holds, b elsewhere; c gets none."""
    cond, g = ctx.operand(0), ctx.cotangent
    zero = ctx.scalar(0.0, element(ctx.result_type))
    return unbroadcast_all(ctx, [None, ctx.where(cond, g, zero), ctx.where(cond, zero, g)])


# ---------------------------------------------------------------------------------------
# Reductions: the cotangent reshaped to keep the reduced axes, broadcast back over them.


def reduced_axes(ctx: VjpContext) -> tuple[int, ...]:
    return normalize_axes(ctx.params["axes"], len(shape_of(ctx.operand_type(0))))


def with_kept_axes(ctx: VjpContext, value: SSAValue) -> SSAValue:
    """A reduction's result (or cotangent) in keepdims form: broadcastable against x."""
    axes = reduced_axes(ctx)
    kept = [1 if i in axes else d for i, d in enumerate(shape_of(ctx.operand_type(0)))]
    return ctx.reshape(value, kept)


def spread(ctx: VjpContext, value: SSAValue) -> SSAValue:
    return ctx.emit(graph.BroadcastToOp, [with_kept_axes(ctx, value)], ctx.operand_type(0))


@register_vjp(graph.ReduceSumOp)
def reduce_sum(ctx: VjpContext) -> Cotangents:
    return [spread(ctx, ctx.cotangent)]


@register_vjp(graph.ReduceMeanOp)
def reduce_mean(ctx: VjpContext) -> Cotangents:
    shape = shape_of(ctx.operand_type(0))
    count = math.prod(shape[a] for a in reduced_axes(ctx))
    return [ctx.scale(spread(ctx, ctx.cotangent), 1.0 / count)]


@register_vjp(graph.ReduceMaxOp)
def reduce_max(ctx: VjpContext) -> Cotangents:
    """The cotangent goes to the positions equal to the max, split evenly among ties."""
    x, element_type = ctx.operand(0), element(ctx.operand_type(0))
    is_max = ctx.compare(x, with_kept_axes(ctx, ctx.result), "eq")
    ties = ctx.emit(
        graph.ReduceSumOp, [ctx.mask_float(is_max, element_type)], axes=reduced_axes(ctx), keepdims=True
    )
    share = ctx.div(with_kept_axes(ctx, ctx.cotangent), ties)
    return [ctx.where(is_max, share, ctx.scalar(0.0, element_type))]


# ---------------------------------------------------------------------------------------
# Linear algebra.


@register_vjp(graph.MatmulOp)
def matmul(ctx: VjpContext) -> Cotangents:
    """y = α op(a) op(b). With A = op(a), B = op(b): dA = α dy Bᵀ, dB = α Aᵀ dy; a
    transposed operand gets the transpose of that, folded into the matmul's flags:

        da = α dy op(b)ᵀ     -> matmul(dy, b, tb = !tb)         if not ta
        da = α op(b) dyᵀ     -> matmul(b, dy, ta = tb, tb = 1)  if ta
        db = α op(a)ᵀ dy     -> matmul(a, dy, ta = !ta)         if not tb
        db = α dyᵀ op(a)     -> matmul(dy, a, ta = 1, tb = ta)  if tb

    Batch axes broadcast: each product has the full batch shape and is summed back
    over the axes its operand was broadcast along."""
    a, b, g = ctx.operand(0), ctx.operand(1), ctx.cotangent
    ta, tb, alpha = ctx.params["transpose_a"], ctx.params["transpose_b"], ctx.params["alpha"]
    if ta:
        da = ctx.matmul(b, g, transpose_a=tb, transpose_b=True, alpha=alpha)
    else:
        da = ctx.matmul(g, b, transpose_b=not tb, alpha=alpha)
    if tb:
        db = ctx.matmul(g, a, transpose_a=True, transpose_b=ta, alpha=alpha)
    else:
        db = ctx.matmul(a, g, transpose_a=not ta, alpha=alpha)
    return unbroadcast_all(ctx, [da, db])


# ---------------------------------------------------------------------------------------
# Normalizations and the softmax family.


def softmax_vjp(ctx: VjpContext, y: SSAValue, g: SSAValue, axis: int) -> SSAValue:
    """From softmax's output y: dx = y (dy - Σ_axis dy y)."""
    return ctx.mul(y, ctx.sub(g, ctx.row_sum(ctx.mul(g, y), axis)))


@register_vjp(graph.SoftmaxOp)
def softmax(ctx: VjpContext) -> Cotangents:
    return [softmax_vjp(ctx, ctx.result, ctx.cotangent, ctx.params["axis"])]


@register_vjp(graph.LogSoftmaxOp)
def log_softmax(ctx: VjpContext) -> Cotangents:
    """From the output y = log p: dx = dy - e^y Σ_axis dy."""
    g, axis = ctx.cotangent, ctx.params["axis"]
    probabilities = ctx.emit(graph.ExpOp, [ctx.result])
    return [ctx.sub(g, ctx.mul(probabilities, ctx.row_sum(g, axis)))]


def normalized_input_vjp(ctx: VjpContext, x_hat: SSAValue, inv_std: SSAValue, g_hat: SSAValue,
                         centered: bool) -> SSAValue:  # fmt: skip
    """dx for x̂ = (x - [mean]) · inv_std over the last axis, given dx̂:
    inv_std (dx̂ - [mean(dx̂)] - x̂ mean(dx̂ x̂)); the bracketed terms only when centered."""
    projected = ctx.sub(g_hat, ctx.mul(x_hat, ctx.row_mean(ctx.mul(g_hat, x_hat), -1)))
    if centered:
        projected = ctx.sub(projected, ctx.row_mean(g_hat, -1))
    return ctx.mul(inv_std, projected)


@register_vjp(graph.LayerNormOp)
def layernorm(ctx: VjpContext) -> Cotangents:
    """y = x̂ γ + β, x̂ = (x - μ) / sqrt(var + ε). The statistics are recomputed from x
    (two row reductions), not saved."""
    x, gamma, g = ctx.operand(0), ctx.operand(1), ctx.cotangent
    eps = ctx.scalar(ctx.params["epsilon"], element(ctx.operand_type(0)))
    centered = ctx.sub(x, ctx.row_mean(x, -1))
    inv_std = ctx.emit(graph.RsqrtOp, [ctx.add(ctx.row_mean(ctx.mul(centered, centered), -1), eps)])
    x_hat = ctx.mul(centered, inv_std)
    dx = normalized_input_vjp(ctx, x_hat, inv_std, ctx.mul(g, gamma), centered=True)
    return [dx, ctx.unbroadcast(ctx.mul(g, x_hat), ctx.operand_type(1)),
            ctx.unbroadcast(g, ctx.operand_type(2))]  # fmt: skip


@register_vjp(graph.RmsNormOp)
def rmsnorm(ctx: VjpContext) -> Cotangents:
    """y = x̂ γ, x̂ = x / sqrt(mean(x²) + ε); the statistic is recomputed from x."""
    x, gamma, g = ctx.operand(0), ctx.operand(1), ctx.cotangent
    eps = ctx.scalar(ctx.params["epsilon"], element(ctx.operand_type(0)))
    inv_rms = ctx.emit(graph.RsqrtOp, [ctx.add(ctx.row_mean(ctx.mul(x, x), -1), eps)])
    x_hat = ctx.mul(x, inv_rms)
    dx = normalized_input_vjp(ctx, x_hat, inv_rms, ctx.mul(g, gamma), centered=False)
    return [dx, ctx.unbroadcast(ctx.mul(g, x_hat), ctx.operand_type(1))]


def causal_mask(ctx: VjpContext, scores: SSAValue) -> SSAValue:
    """The forward's mask: positions above the diagonal get the lowest finite value (the
    softmax gives them probability 0, as -inf does)."""
    sq, sk = shape_of(scores.type)[-2:]
    mask = ctx.constant(above_diagonal(sq, sk), tensor((sq, sk), i1))
    lowest = float(ml_dtypes.finfo(tensor_dtype(scores.type)).min)
    return ctx.where(mask, ctx.scalar(lowest, element(scores.type)), scores)


@register_vjp(graph.AttentionOp)
def attention(ctx: VjpContext) -> Cotangents:
    """O = P v, P = softmax(S), S = scale · q kᵀ (+ causal mask). P is recomputed with
    matmul/softmax pieces (flash-attention style: the [Sq, Sk] probabilities are never
    saved), then dv = Pᵀ dO, dP = dO vᵀ, dS = softmax's VJP, dq = scale dS k,
    dk = scale dSᵀ q."""
    q, k, v, g = ctx.operand(0), ctx.operand(1), ctx.operand(2), ctx.cotangent
    s = ctx.params["scale"]
    scores = ctx.matmul(q, k, transpose_b=True, alpha=s)
    if ctx.params["causal"]:
        scores = causal_mask(ctx, scores)
    p = ctx.emit(graph.SoftmaxOp, [scores], axis=-1)
    d_scores = softmax_vjp(ctx, p, ctx.matmul(g, v, transpose_b=True), -1)
    dq = ctx.matmul(d_scores, k, alpha=s)
    dk = ctx.matmul(d_scores, q, transpose_a=True, alpha=s)
    return [dq, dk, ctx.matmul(p, g, transpose_a=True)]


@register_vjp(graph.EmbeddingOp)
def embedding(ctx: VjpContext) -> Cotangents:
    """Scatter-add of the rows' cotangents into the table, as one-hot(ids)ᵀ @ dy:
    [N, V]ᵀ @ [N, D] with N = number of ids. Costs N·V·D multiply-adds and an [N, V]
    one-hot, fine for vocabularies of thousands, not for huge ones."""
    table = ctx.operand_type(0)
    vocabulary, width = shape_of(table)
    count = math.prod(shape_of(ctx.operand_type(1)))
    ids = ctx.reshape(ctx.operand(1), (count,))
    rows = ctx.reshape(ctx.cotangent, (count, width))
    one_hot = ctx.one_hot(ids, vocabulary, table.element_type)
    return [ctx.matmul(one_hot, rows, transpose_a=True), None]


@register_vjp(graph.CrossEntropyOp)
def cross_entropy(ctx: VjpContext) -> Cotangents:
    """loss = -mean_n log softmax(logits)[n, label_n]: dlogits = dy (softmax - onehot) / N."""
    logits_type = ctx.operand_type(0)
    n, classes = shape_of(logits_type)
    p = ctx.emit(graph.SoftmaxOp, [ctx.operand(0)], axis=-1)
    labels = ctx.one_hot(ctx.operand(1), classes, logits_type.element_type)
    return [ctx.scale(ctx.mul(ctx.sub(p, labels), ctx.cotangent), 1.0 / n), None]


# ---------------------------------------------------------------------------------------
# Shape ops: the inverse data movement.


@register_vjp(graph.ReshapeOp)
def reshape(ctx: VjpContext) -> Cotangents:
    return [ctx.reshape(ctx.cotangent, shape_of(ctx.operand_type(0)))]


@register_vjp(graph.TransposeOp)
def transpose(ctx: VjpContext) -> Cotangents:
    permutation = ctx.params["permutation"]
    inverse = [permutation.index(axis) for axis in range(len(permutation))]
    return [ctx.emit(graph.TransposeOp, [ctx.cotangent], permutation=tuple(inverse))]


@register_vjp(graph.BroadcastToOp)
def broadcast_to(ctx: VjpContext) -> Cotangents:
    return [ctx.unbroadcast(ctx.cotangent, ctx.operand_type(0))]


@register_vjp(graph.ConcatOp)
def concat(ctx: VjpContext) -> Cotangents:
    """Each input gets its own slice of the cotangent along the axis."""
    shape = shape_of(ctx.result_type)
    axis = normalize_axis(ctx.params["axis"], len(shape))
    cotangents, offset = [], 0
    for i in range(len(ctx.op.operands)):
        size = shape_of(ctx.operand_type(i))[axis]
        starts = [offset if a == axis else 0 for a in range(len(shape))]
        limits = [offset + size if a == axis else d for a, d in enumerate(shape)]
        cotangents.append(
            ctx.emit(graph.SliceOp, [ctx.cotangent], starts=starts, limits=limits, steps=[1] * len(shape))
        )
        offset += size
    return cotangents


@register_vjp(graph.SliceOp)
def slice_(ctx: VjpContext) -> Cotangents:
    """The cotangent scattered back into zeros, one axis at a time (pure data movement
    with concat/reshape/slice: no scatter op is needed)."""
    p = ctx.params
    g = ctx.cotangent
    if 0 in shape_of(g.type):
        return [ctx.full(0.0, ctx.operand_type(0))]
    for axis, size in enumerate(shape_of(ctx.operand_type(0))):
        g = unslice_axis(ctx, g, axis, p["starts"][axis], p["steps"][axis], size)
    return [g]


def unslice_axis(ctx: VjpContext, g: SSAValue, axis: int, start: int, step: int, size: int) -> SSAValue:
    """Place g's entries j at start + j·step of a zero axis of length `size`."""
    if step > 1:
        g = interleave_zeros(ctx, g, axis, step)
    covered = shape_of(g.type)[axis]
    if start + covered > size:
        shape = shape_of(g.type)
        limits = [size - start if a == axis else d for a, d in enumerate(shape)]
        g = ctx.emit(graph.SliceOp, [g], starts=[0] * len(shape), limits=limits, steps=[1] * len(shape))
    return pad_axis(ctx, g, axis, start, size - start - shape_of(g.type)[axis])


def interleave_zeros(ctx: VjpContext, g: SSAValue, axis: int, step: int) -> SSAValue:
    """[.., n, ..] -> [.., n·step, ..] with g's entries at multiples of step, zeros between."""
    shape = shape_of(g.type)
    split = (*shape[: axis + 1], 1, *shape[axis + 1 :])
    gap = ctx.full(0.0, tensor((*shape[: axis + 1], step - 1, *shape[axis + 1 :]), g.type.element_type))
    spaced = ctx.emit(graph.ConcatOp, [ctx.reshape(g, split), gap], axis=axis + 1)
    return ctx.reshape(spaced, (*shape[:axis], shape[axis] * step, *shape[axis + 1 :]))


def pad_axis(ctx: VjpContext, g: SSAValue, axis: int, before: int, after: int) -> SSAValue:
    """g with `before` and `after` zeros along axis (concat; nothing when both are 0)."""
    shape = shape_of(g.type)
    pieces = []
    for width in (before, None, after):
        if width is None:
            pieces.append(g)
        elif width > 0:
            zeros_type = tensor((*shape[:axis], width, *shape[axis + 1 :]), g.type.element_type)
            pieces.append(ctx.full(0.0, zeros_type))
    return g if len(pieces) == 1 else ctx.emit(graph.ConcatOp, pieces, axis=axis)

"""VJP rules of the elementwise ops: ops without a gradient (compare, constant), unary ops
(dx = dy · f'(x)) and binary ops (full-shape cotangents summed back over broadcast axes).
The context the rules see is in vjp_context.py."""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import is_float
from strata.dialects.graph_elementwise import GELU_TANH_CUBIC, GELU_TANH_SCALE
from strata.dialects.opinfo import register_vjp
from strata.transforms.vjp_context import Cotangents, VjpContext, element, unbroadcast_all


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
    """dx = dy · mask/(1-p), the mask recomputed by dropping out ones with the same (seed,
    step, p): the keyed RNG makes it bit-identical to the forward's, so it is never stored.
    The step (an integer) gets no cotangent."""
    ones = ctx.full(1.0, ctx.operand_type(0))
    step = [ctx.operand(1)] if len(ctx.op.operands) > 1 else []
    mask = ctx.emit(graph.DropoutOp, [ones, *step], p=ctx.params["p"], seed=ctx.params["seed"])
    return [ctx.mul(ctx.cotangent, mask), *([None] * len(step))]


# ---------------------------------------------------------------------------------------
# Binary elementwise ops: the full-shape cotangents, then summed back over broadcast axes.


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

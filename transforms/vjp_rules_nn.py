"""VJP rules of the neural-network ops: the softmax family, layer and RMS norms, attention,
embedding and cross-entropy. The context the rules see is in vjp_context.py."""

from __future__ import annotations


from xdsl.ir import SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import register_vjp
from strata.transforms.vjp_context import Cotangents, VjpContext, element


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


@register_vjp(graph.AttentionOp)
def attention(ctx: VjpContext) -> Cotangents:
    """One graph.attention_grad of q, k, v, the forward's output and its cotangent: the
    [Sq, Sk] probabilities are recomputed by whatever computes it, never saved (the CPU
    spells it out in matmuls and a softmax, expand-attention-grad; the GPU runs
    flash-attention backward kernels)."""
    grad = graph.AttentionGradOp.make(
        [ctx.operand(0), ctx.operand(1), ctx.operand(2), ctx.result, ctx.cotangent],
        scale=ctx.params["scale"], causal=ctx.params["causal"],
    )  # fmt: skip
    ctx.append(grad)
    return list(grad.results)


@register_vjp(graph.EmbeddingOp)
def embedding(ctx: VjpContext) -> Cotangents:
    """The rows' cotangents added into the table's rows by id: graph.embedding_grad (N · D
    adds for N ids, where one-hot(ids)ᵀ @ dy would cost N · V · D and an [N, V] one-hot),
    none into the padding_idx row if the embedding has one."""
    vocabulary, _ = shape_of(ctx.operand_type(0))
    padding = {k: v for k, v in ctx.params.items() if k == "padding_idx"}
    return [ctx.emit(graph.EmbeddingGradOp, [ctx.cotangent, ctx.operand(1)], vocabulary=vocabulary, **padding), None]


@register_vjp(graph.CrossEntropyOp)
def cross_entropy(ctx: VjpContext) -> Cotangents:
    """loss = -mean_n log softmax(logits)[n, label_n]: dlogits = dy (softmax - onehot) / N."""
    logits_type = ctx.operand_type(0)
    n, classes = shape_of(logits_type)
    p = ctx.emit(graph.SoftmaxOp, [ctx.operand(0)], axis=-1)
    labels = ctx.one_hot(ctx.operand(1), classes, logits_type.element_type)
    # No rows: the gradient is empty, whatever the factor (1 / 0 would stop autodiff).
    return [ctx.scale(ctx.mul(ctx.sub(p, labels), ctx.cotangent), 1.0 / max(n, 1)), None]

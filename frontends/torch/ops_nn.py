"""Translations of neural-network ops: matmuls, attention, softmax, normalization,
dropout, embeddings, gathers and losses.

Decompositions: addmm/linear/mm/bmm/matmul → graph.matmul (+ add; against a 2-D weight,
one matmul over all rows), batch-norm inference → sub/mul/add with rsqrt, index with
constant indices → embedding, gather and nll_loss → one-hot select + reduce_sum,
scaled_dot_product_attention with a mask that is neither empty nor causal → matmul +
select/add + softmax + matmul. Recognized pattern: attention written out
(softmax(scale·q@kᵀ + a constant empty or causal mask) @ v, transformers' eager
attention) → graph.attention.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import permutations

import torch
import torch.fx

from strata.frontends import builder as ops
from strata.frontends.builder import Tensor
from strata.frontends.torch.ops_common import (
    axis, call_of, is_number, out_dtype, out_shape, registrar, reshaped, val,
)  # fmt: skip
from strata.frontends.torch.ops_elementwise import scaled
from strata.frontends.torch.values import Const, packet_name

TRANSLATIONS: dict[str, Callable] = {}
"""This module's part of the translation table (ops.py joins the parts)."""
translates = registrar(TRANSLATIONS)


# --- linear algebra ---------------------------------------------------------------


def _as_2d(x: Tensor) -> Tensor:
    return reshaped(x, (math.prod(x.shape[:-1]), x.shape[-1]))


@translates("linear")
def _linear(cx, node, x, weight, bias=None):
    dtype = out_dtype(cx, node)
    x, weight = cx.tensor(x, dtype), cx.tensor(weight, dtype)
    if weight.ndim == 1:
        return _matmul(cx, node, x, weight)
    y = ops.matmul(_as_2d(x), weight, transpose_b=True)
    if bias is not None:
        y = ops.add(y, cx.tensor(bias, dtype))
    return reshaped(y, out_shape(node))


@translates("addmm")
def _addmm(cx, node, bias, a, b, beta=1, alpha=1):
    dtype = out_dtype(cx, node)
    y = ops.matmul(cx.tensor(a, dtype), cx.tensor(b, dtype), alpha=float(alpha))
    if beta:
        y = ops.add(y, scaled(cx, bias, beta, dtype))
    return y


@translates("baddbmm")
def _baddbmm(cx, node, bias, a, b, beta=1, alpha=1):
    return _addmm(cx, node, bias, a, b, beta, alpha)


@translates("mm", "bmm", "matmul", "dot", "mv")
def _matmul(cx, node, a, b):
    dtype = out_dtype(cx, node)
    matched = match_attention(cx, node) if packet_name(node.target) in ("matmul", "bmm") else None
    if matched is not None:
        q, k, v, scale, causal = matched
        return ops.attention(*(cx.tensor(cx.values[n], dtype) for n in (q, k, v)), scale, causal)
    a, b = cx.tensor(a, dtype), cx.tensor(b, dtype)
    if a.ndim == 1:
        a = reshaped(a, (1, a.shape[0]))
    if b.ndim == 1:
        b = reshaped(b, (b.shape[0], 1))
    if b.ndim == 2 and a.ndim > 2:  # one GEMM over all rows of a
        return reshaped(ops.matmul(_as_2d(a), b), out_shape(node))
    return reshaped(ops.matmul(a, b), out_shape(node))


# --- attention --------------------------------------------------------------------


def mask_kind(mask: torch.Tensor, sq: int, sk: int) -> str | None:
    """"none" (masks nothing), "causal" (exactly the top-left causal mask, for every
    batch entry), or None (anything else), for an attention mask known at import time."""
    if mask.dtype == torch.bool:
        keep = mask
    elif mask.dtype.is_floating_point:  # additive: 0 keeps, −∞ (or a huge negative) drops
        keep = mask == 0
        dropped = mask[~keep]
        if not bool(((dropped == float("-inf")) | (dropped <= torch.finfo(mask.dtype).min / 2)).all()):
            return None
    else:
        return None
    try:
        keep = torch.broadcast_to(keep, (*keep.shape[:-2], sq, sk))
    except RuntimeError:
        return None
    if bool(keep.all()):
        return "none"
    causal = torch.ones(sq, sk, dtype=torch.bool).tril()
    return "causal" if bool((keep == causal).all()) else None


@translates("scaled_dot_product_attention")
def _attention(cx, node, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False):
    if dropout_p:
        raise cx.error("attention dropout is not supported (call model.eval() before exporting)")
    dtype = out_dtype(cx, node)
    q, k, v = cx.tensor(q, dtype), cx.tensor(k, dtype), cx.tensor(v, dtype)
    sq, sk = q.shape[-2], k.shape[-2]
    scale = float(scale) if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        k, v = _repeat_heads(k, q.shape[-3]), _repeat_heads(v, q.shape[-3])
    batch = q.shape[:-2]
    k = k if k.shape[:-2] == batch else ops.broadcast_to(k, batch + k.shape[-2:])
    v = v if v.shape[:-2] == batch else ops.broadcast_to(v, batch + v.shape[-2:])
    causal = bool(is_causal)
    if isinstance(attn_mask, Const):
        kind = mask_kind(attn_mask.value, sq, sk)
        if kind == "none" or (kind == "causal" and not causal):
            attn_mask, causal = None, causal or kind == "causal"
    if attn_mask is None:
        return ops.attention(q, k, v, scale, causal)
    scores = ops.matmul(q, k, transpose_b=True, alpha=scale)
    if causal:
        tril = torch.ones(sq, sk, dtype=torch.bool).tril()
        scores = ops.select(cx.tensor(Const(tril)), scores, cx.tensor(float("-inf"), dtype))
    mask_value = attn_mask.value if isinstance(attn_mask, Const) else None
    if (mask_value is not None and mask_value.dtype == torch.bool) or (isinstance(attn_mask, Tensor) and attn_mask.dtype == "i1"):
        scores = ops.select(cx.tensor(attn_mask, "i1"), scores, cx.tensor(float("-inf"), dtype))
    else:
        scores = ops.add(scores, cx.tensor(attn_mask, dtype))
    # As PyTorch defines it, a row whose keys are all masked attends to nothing: its
    # output is 0 (not the NaN of a softmax over −∞ alone).
    minus_infinity = cx.tensor(float("-inf"), dtype)
    alive = ops.cast(ops.compare(scores, minus_infinity, "ne"), "i32")
    any_alive = ops.compare(ops.reduce_max(alive, [scores.ndim - 1], True), cx.tensor(0, "i32"), "ne")
    probs = ops.select(any_alive, ops.softmax(scores, -1), cx.tensor(0.0, dtype))
    return ops.matmul(probs, v)


def _repeat_heads(x: Tensor, heads: int) -> Tensor:
    """[..., H, S, D] → [..., heads, S, D], each head repeated heads/H times in place."""
    h, s, d = x.shape[-3:]
    lead = x.shape[:-3]
    x = ops.reshape(x, (*lead, h, 1, s, d))
    x = ops.broadcast_to(x, (*lead, h, heads // h, s, d))
    return ops.reshape(x, (*lead, heads, s, d))


def through_identities(n: object) -> object:
    """`n` past ops that do not change its values: same-type casts, eval-mode dropout, copies."""
    while isinstance(n, torch.fx.Node):
        if call_of(n, "to", "_to_copy", "type_as", "clone", "contiguous", "alias", "detach") and (
            isinstance(n.args[0], torch.fx.Node) and val(n).dtype == val(n.args[0]).dtype
        ):
            n = n.args[0]
        elif call_of(n, "dropout") and (len(n.args) < 3 or not n.args[2] or not n.args[1]):
            n = n.args[0]
        else:
            break
    return n


def match_attention(cx, node: torch.fx.Node):
    """(q, k, v, scale, causal) when `node` is attention written out — softmax(s·q@kᵀ [+ a
    constant mask that masks nothing or is causal]) @ v, as transformers' eager attention
    computes it — else None."""
    if len(node.args) != 2:
        return None
    probs, v = through_identities(node.args[0]), node.args[1]
    if not call_of(probs, "softmax", "_softmax") or not isinstance(v, torch.fx.Node):
        return None
    scores = probs.args[0]
    rank = len(val(probs).shape)
    if rank < 2 or axis(probs.args[1], rank) != rank - 1 or val(probs).dtype != val(scores).dtype:
        return None
    mask = None
    if call_of(scores, "add"):
        if len(scores.args) != 2 or scores.kwargs.get("alpha", 1) != 1:
            return None
        for a, b in permutations(scores.args):
            if isinstance(b, torch.fx.Node) and isinstance(cx.values.get(b), Const) and isinstance(a, torch.fx.Node):
                if tuple(val(a).shape) == tuple(val(scores).shape):
                    scores, mask = a, cx.values[b].value
                    break
        else:
            return None
    scale = 1.0
    if call_of(scores, "mul", "div") and len(scores.args) == 2:
        a, b = scores.args
        if call_of(scores, "mul") and not isinstance(a, torch.fx.Node):
            a, b = b, a
        factor = cx.values[b].value if isinstance(b, torch.fx.Node) and isinstance(cx.values.get(b), Const) else b
        if isinstance(factor, torch.Tensor) and factor.numel() == 1:
            factor = float(factor)
        if not is_number(factor) or not isinstance(a, torch.fx.Node) or factor == 0:
            return None
        scores, scale = a, float(factor) if call_of(scores, "mul") else 1.0 / float(factor)
    if not call_of(scores, "matmul", "bmm") or len(scores.args) != 2:
        return None
    q, key_t = scores.args
    if not call_of(key_t, "transpose") or not isinstance(q, torch.fx.Node):
        return None
    k = key_t.args[0]
    r = len(val(key_t).shape)
    if r < 2 or {axis(key_t.args[1], r), axis(key_t.args[2], r)} != {r - 2, r - 1}:
        return None
    shapes = [tuple(val(x).shape) for x in (q, k, v)]
    if len({s[:-2] for s in shapes}) != 1 or min(len(s) for s in shapes) < 2 or shapes[1][-2] != shapes[2][-2]:
        return None
    if not val(q).dtype.is_floating_point:
        return None
    kind = "none" if mask is None else mask_kind(mask, shapes[0][-2], shapes[1][-2])
    if kind is None:
        return None
    return q, k, v, scale, kind == "causal"


# --- softmax and normalization ----------------------------------------------------


def _row(function):
    def translate(cx, node, x, dim, *rest, **kwargs):
        return function(cx.tensor(x, out_dtype(cx, node)), dim)

    return translate


translates("softmax", "_softmax")(_row(ops.softmax))
translates("log_softmax", "_log_softmax")(_row(ops.log_softmax))


def _normalized(cx, x: Tensor, normalized_shape, *params):
    """x flattened over the normalized axes, and the params flattened to match."""
    count = math.prod(normalized_shape)
    lead = x.shape[: x.ndim - len(normalized_shape)]
    flat = reshaped(x, (*lead, count))
    return flat, [None if p is None else reshaped(cx.tensor(p, x.dtype), (count,)) for p in params]


@translates("layer_norm")
def _layer_norm(cx, node, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    x = cx.tensor(x, out_dtype(cx, node))
    flat, (w, b) = _normalized(cx, x, normalized_shape, weight, bias)
    size = flat.shape[-1]
    w = w if w is not None else cx.tensor(Const(torch.ones(size)), x.dtype)
    b = b if b is not None else cx.tensor(Const(torch.zeros(size)), x.dtype)
    return reshaped(ops.layernorm(flat, w, b, float(eps)), x.shape)


@translates("native_layer_norm")
def _native_layer_norm(cx, node, x, normalized_shape, weight, bias, eps):
    out = _layer_norm(cx, node, x, normalized_shape, weight, bias, eps)
    x = cx.tensor(x)
    axes = list(range(x.ndim - len(normalized_shape), x.ndim))
    mean = ops.reduce_mean(x, axes, keepdims=True)
    centered = ops.sub(x, mean)
    variance = ops.reduce_mean(ops.mul(centered, centered), axes, keepdims=True)
    rstd = ops.rsqrt(ops.add(variance, cx.tensor(float(eps), x.dtype)))
    return out, mean, rstd


@translates("rms_norm")
def _rms_norm(cx, node, x, normalized_shape, weight=None, eps=None):
    x = cx.tensor(x, out_dtype(cx, node))
    flat, (w,) = _normalized(cx, x, normalized_shape, weight)
    size = flat.shape[-1]
    w = w if w is not None else cx.tensor(Const(torch.ones(size)), x.dtype)
    if eps is None:
        eps = torch.finfo(val(node).dtype).eps
    return reshaped(ops.rmsnorm(flat, w, float(eps)), x.shape)


@translates("_native_batch_norm_legit_no_training", "batch_norm")
def _batch_norm(cx, node, x, weight, bias, running_mean, running_var, *rest):
    """Inference batch norm over axis 1: (x − mean) · rsqrt(var + eps) · w + b."""
    if packet_name(node.target) == "batch_norm":  # (…, training, momentum, eps, cudnn_enabled)
        training, _, eps = rest[0], rest[1], rest[2]
        if training:
            raise cx.error("batch norm in training mode is not supported (call model.eval())")
    else:
        _, eps = rest[0], rest[1]
    x = cx.tensor(x)
    shape = (x.shape[1],) + (1,) * (x.ndim - 2)

    def channel(p, default):
        return reshaped(cx.tensor(p if p is not None else Const(torch.full((x.shape[1],), default)), x.dtype), shape)

    y = ops.mul(ops.sub(x, channel(running_mean, 0.0)), ops.rsqrt(ops.add(channel(running_var, 1.0), cx.tensor(float(eps), x.dtype))))
    y = ops.add(ops.mul(y, channel(weight, 1.0)), channel(bias, 0.0))
    if packet_name(node.target) == "batch_norm":
        return y
    empty = Const(torch.empty(0))
    return y, empty, empty


# --- dropout ----------------------------------------------------------------------


@translates("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")
def _dropout(cx, node, x, p=0.5, train=False):
    if train and p:
        raise cx.error("dropout in training mode is not supported (call model.eval() before exporting)")
    return cx.tensor(x)


@translates("native_dropout")
def _native_dropout(cx, node, x, p, train):
    if train and p:
        raise cx.error("dropout in training mode is not supported (call model.eval() before exporting)")
    x = cx.tensor(x)
    return x, Const(torch.ones(x.shape, dtype=torch.bool))


# --- embeddings, gathers and losses -----------------------------------------------


@translates("embedding")
def _embedding(cx, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """padding_idx (normalized to a row, or -1 for none) is kept: that row gets no gradient.
    scale_grad_by_freq changes the gradient in a way graph.embedding does not express: an
    error rather than a silently different gradient. `sparse` is the gradient's storage only."""
    if scale_grad_by_freq:
        raise cx.error("embedding with scale_grad_by_freq=True is not supported")
    padding = padding_idx if isinstance(padding_idx, int) and padding_idx >= 0 else None
    return ops.embedding(cx.tensor(weight), cx.tensor(indices), padding_idx=padding)


@translates("index_select")
def _index_select(cx, node, x, dim, index):
    x = cx.tensor(x)
    if x.ndim != 2 or axis(dim, 2) != 0:
        raise cx.error("index_select is supported along axis 0 of a rank-2 tensor only (as an embedding)")
    return ops.embedding(x, cx.tensor(index))


@translates("index")
def _index(cx, node, x, indices):
    """x[i0, i1, …] with constant index tensors on leading axes (as transformers' masks
    index a runtime attention mask): one embedding lookup of the flattened leading axes,
    at linear indices computed at import time."""
    x = cx.tensor(x)
    count = len(indices)
    if count == 0 or count > x.ndim or not all(isinstance(i, Const) for i in indices):
        raise cx.error("indexing is supported with constant index tensors on leading axes only")
    values = [i.value for i in indices]
    if any(v.dtype == torch.bool or v.is_floating_point() for v in values):
        raise cx.error("indexing with boolean or float tensors is not supported")
    lead, rest = x.shape[:count], x.shape[count:]
    linear = torch.zeros((), dtype=torch.int64)
    for v, size in zip(values, lead):
        if v.numel() and (bool((v < -size).any()) or bool((v >= size).any())):
            raise cx.error(f"index out of range for an axis of size {size}")
        linear = linear * size + torch.remainder(v.to(torch.int64), size)
    width = math.prod(rest)
    table = reshaped(x, (math.prod(lead), width))
    picked = ops.embedding(table, cx.tensor(Const(linear)))
    return reshaped(picked, out_shape(node))


def _gather(cx, x: Tensor, dim: int, index: Tensor) -> Tensor:
    """torch.gather(x, dim, index) as a one-hot selection: out[…j…] = Σₖ x[…k…]·(k = index[…j…])
    along `dim` (an index out of range picks 0 where PyTorch would raise)."""
    d = axis(dim, x.ndim)
    if index.ndim != x.ndim:
        raise cx.error("gather needs an index of the operand's rank")
    limits = [index.shape[a] if a != d else x.shape[a] for a in range(x.ndim)]
    if list(x.shape) != limits:
        x = ops.slice_(x, [0] * x.ndim, limits)
    last = [a for a in range(x.ndim) if a != d] + [d]
    xt, it = ops.transpose(x, last) if d != x.ndim - 1 else x, ops.transpose(index, last) if d != x.ndim - 1 else index
    k, j = x.shape[d], index.shape[d]
    lead = xt.shape[:-1]
    positions = cx.tensor(Const(torch.arange(k)), it.dtype)
    onehot = ops.compare(reshaped(it, (*lead, j, 1)), positions, "eq")
    picked = ops.reduce_sum(ops.select(onehot, reshaped(xt, (*lead, 1, k)), cx.tensor(0, x.dtype)), [x.ndim])
    if d == x.ndim - 1:
        return picked
    back = [last.index(a) for a in range(x.ndim)]
    return ops.transpose(picked, back)


@translates("gather", "take_along_dim")
def _gather_op(cx, node, x, dim, index, *rest, **kwargs):
    if packet_name(node.target) == "take_along_dim":
        x, index, dim = x, dim, index  # take_along_dim(x, indices, dim)
    if dim is None:
        raise cx.error("take_along_dim without a dim is not supported")
    return _gather(cx, cx.tensor(x, out_dtype(cx, node)), dim, cx.tensor(index))


def _nll(cx, log_probs: Tensor, labels: Tensor, reduction: int, ignore_index: int) -> tuple[Tensor, Tensor]:
    """(loss, the number of counted labels) of −log_probs[n, labels[n]], labels equal to
    ignore_index left out, as PyTorch's nll_loss (reduction 0 none, 1 mean, 2 sum)."""
    if log_probs.ndim == 1:
        log_probs, labels = reshaped(log_probs, (1, log_probs.shape[0])), reshaped(labels, (1,))
    if log_probs.ndim != 2 or labels.ndim != 1:
        raise cx.error(f"the loss needs inputs [N, C] and labels [N], got {log_probs.shape} and {labels.shape}")
    n = labels.shape[0]
    picked = reshaped(_gather(cx, log_probs, 1, reshaped(labels, (n, 1))), (n,))
    keep = ops.compare(labels, cx.tensor(ignore_index, labels.dtype), "ne")
    losses = ops.select(keep, ops.neg(picked), cx.tensor(0.0, log_probs.dtype))
    counted = ops.reduce_sum(ops.cast(keep, log_probs.dtype), [0])
    if reduction == 0:
        return losses, counted
    total = ops.reduce_sum(losses, [0])
    return (ops.div(total, counted) if reduction == 1 else total), counted


@translates("nll_loss", "nll_loss_forward", "nll_loss_nd")
def _nll_loss(cx, node, log_probs, labels, weight=None, reduction=1, ignore_index=-100):
    if weight is not None:
        raise cx.error("losses with class weights are not supported")
    loss, counted = _nll(cx, cx.tensor(log_probs, out_dtype(cx, node)), cx.tensor(labels), reduction, ignore_index)
    return (loss, counted) if packet_name(node.target).endswith("_forward") else loss


@translates("cross_entropy_loss")
def _cross_entropy(cx, node, logits, labels, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    """graph.cross_entropy, with PyTorch's ignore_index: an ignored row's logits become
    (0, −10⁴, …) and its label 0, so its loss is exactly 0, and the mean is rescaled from
    all rows to the counted ones. reduction="none" is log_softmax and a pick, written out."""
    if weight is not None or label_smoothing:
        raise cx.error("cross_entropy with class weights or label smoothing is not supported")
    logits, labels = cx.tensor(logits, out_dtype(cx, node)), cx.tensor(labels)
    if not labels.dtype.startswith("i") or labels.dtype == "i1":
        raise cx.error("cross_entropy with class probabilities (float targets) is not supported")
    if logits.ndim not in (1, 2):
        raise cx.error(f"cross_entropy needs logits [N, C] or [C], got {logits.shape}")
    if logits.ndim == 1:
        logits, labels = reshaped(logits, (1, logits.shape[0])), reshaped(labels, (1,))
    n, classes = logits.shape
    if reduction == 0:
        top = ops.reduce_max(logits, [1], True)
        shifted = ops.sub(logits, top)
        log_probs = ops.sub(shifted, ops.log(ops.reduce_sum(ops.exp(shifted), [1], True)))
        return reshaped(_nll(cx, log_probs, labels, 0, ignore_index)[0], out_shape(node))
    keep = ops.compare(labels, cx.tensor(ignore_index, labels.dtype), "ne")
    neutral = torch.full((classes,), -1e4)
    neutral[0] = 0.0
    rows = ops.select(reshaped(keep, (n, 1)), logits, cx.tensor(Const(neutral), logits.dtype))
    loss = ops.cross_entropy(rows, ops.select(keep, labels, cx.tensor(0, labels.dtype)))
    counted = ops.reduce_sum(ops.cast(keep, logits.dtype), [0])
    total = ops.scale(loss, float(n))
    return total if reduction == 2 else ops.div(total, counted)

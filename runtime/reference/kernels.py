"""The numpy meaning of every graph op: the oracle every compiled target is tested against.

Each function receives the op and its operands as numpy arrays (f16/bf16 operands arrive
as float32: the interpreter computes low-precision ops in float32 and rounds the result
once per op) and returns the result; the interpreter converts it to the result's dtype.
"""

from __future__ import annotations

import math

import numpy as np

from strata.dialects import graph
from strata.dialects.graph_nn import above_diagonal
from strata.dialects.opinfo import register_reference
from strata.support.errors import ExecutionError
from strata.support.dtypes import dense_to_numpy, tensor_dtype
from strata.dialects.graph_elementwise import DROPOUT_STEP_GAMMA, GELU_TANH_CUBIC, GELU_TANH_SCALE

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp of a non-positive argument only: no overflow warnings at either tail.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _erf_of(x: np.ndarray) -> np.ndarray:
    return _erf(x).astype(x.dtype)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    if x.size == 0:  # (an empty axis leaves nothing to normalize)
        return x.copy()
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    if x.size == 0:
        return x.copy()
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _last_two_swapped(x: np.ndarray, swap: bool) -> np.ndarray:
    return np.swapaxes(x, -1, -2) if swap else x


UNARY = {
    graph.NegOp: np.negative,
    graph.AbsOp: np.abs,
    graph.ExpOp: np.exp,
    graph.LogOp: np.log,
    graph.SqrtOp: np.sqrt,
    graph.RsqrtOp: lambda x: 1 / np.sqrt(x),
    graph.TanhOp: np.tanh,
    graph.SigmoidOp: _sigmoid,
    graph.ReluOp: lambda x: np.maximum(x, 0),
    graph.SiluOp: lambda x: x * _sigmoid(x),
    graph.ErfOp: _erf_of,
}

BINARY = {
    graph.AddOp: np.add,
    graph.SubOp: np.subtract,
    graph.MulOp: np.multiply,
    graph.DivOp: np.divide,
    graph.MaximumOp: np.maximum,
    graph.MinimumOp: np.minimum,
    graph.PowOp: np.power,
}

COMPARISONS = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}

for _op_type, _fn in UNARY.items():
    register_reference(_op_type)(lambda op, x, _fn=_fn: _fn(x))
for _op_type, _fn in BINARY.items():
    register_reference(_op_type)(lambda op, lhs, rhs, _fn=_fn: _fn(lhs, rhs))


@register_reference(graph.GeluOp)
def gelu(op: graph.GeluOp, x: np.ndarray) -> np.ndarray:
    if op.params()["approximate"] == "tanh":
        inner = GELU_TANH_SCALE * (x + GELU_TANH_CUBIC * x**3)
        return 0.5 * x * (1 + np.tanh(inner))
    return 0.5 * x * (1 + _erf_of(x / math.sqrt(2)))


@register_reference(graph.ScaleOp)
def scale(op: graph.ScaleOp, x: np.ndarray) -> np.ndarray:
    return x * x.dtype.type(op.params()["value"])


@register_reference(graph.CompareOp)
def compare(op: graph.CompareOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return COMPARISONS[op.params()["predicate"]](lhs, rhs)


@register_reference(graph.SelectOp)
def select(op: graph.SelectOp, cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(cond, a, b)


@register_reference(graph.CastOp)
def cast(op: graph.CastOp, x: np.ndarray) -> np.ndarray:
    """float->int truncates toward zero and saturates (NaN -> 0); ->i1 is x != 0."""
    target = tensor_dtype(op.result.type)
    if target == np.bool_:
        return x != 0
    if target.kind == "i" and x.dtype.kind == "f":
        limits = np.iinfo(target)
        truncated = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0)
        inside = np.clip(truncated, limits.min, limits.max)
        # 2**63 is the nearest double to int64's max: saturate by hand, not by astype.
        too_large = truncated >= float(limits.max)
        with np.errstate(invalid="ignore"):
            # np.asarray: numpy's ufuncs turn a rank-0 x into scalars, which take no assignment.
            out = np.asarray(inside.astype(target))
        out[too_large] = limits.max
        return out
    return x.astype(target)


@register_reference(graph.DropoutOp)
def dropout(op: graph.DropoutOp, x: np.ndarray, step: np.ndarray | None = None) -> np.ndarray:
    params = op.params()
    key = dropout_key(int(params["seed"]), 0 if step is None else int(step))
    keep = dropout_keep_mask(key, x.shape, float(params["p"]))
    return np.where(keep, x * x.dtype.type(1.0 / (1.0 - params["p"])), x.dtype.type(0))


def dropout_key(seed: int, step: int) -> int:
    """The 64-bit key of a draw: seed + step · gamma (mod 2^64); step 0 keeps the seed."""
    return (seed + step * DROPOUT_STEP_GAMMA) & 0xFFFFFFFFFFFFFFFF


def dropout_keep_mask(seed: int, shape: tuple[int, ...], p: float) -> np.ndarray:
    """The keyed counter-based mask of graph.dropout (docs/dropout-rng.md): splitmix64 of
    seed + (flat index + 1) * golden gamma; keep where the top 24 bits / 2^24 >= p."""
    with np.errstate(over="ignore"):
        index = np.arange(1, math.prod(shape) + 1, dtype=np.uint64)
        z = np.uint64(seed & 0xFFFFFFFFFFFFFFFF) + index * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    uniform = (z >> np.uint64(40)).astype(np.float64) * 2.0**-24
    return (uniform >= p).reshape(shape)


@register_reference(graph.ConstantOp)
def constant(op: graph.ConstantOp) -> np.ndarray:
    return dense_to_numpy(op.value)


def _sum_dtype(x: np.ndarray) -> np.dtype:
    """f32 sums and means (f16/bf16 arrive as f32) accumulate in f64 and round once, as the
    compiled targets do; other dtypes sum in their own."""
    return np.dtype(np.float64) if x.dtype == np.float32 else x.dtype


@register_reference(graph.ReduceSumOp)
def reduce_sum(op: graph.ReduceSumOp, x: np.ndarray) -> np.ndarray:
    p = op.params()
    return np.sum(x, axis=p["axes"], keepdims=p["keepdims"], dtype=_sum_dtype(x)).astype(x.dtype)


@register_reference(graph.ReduceMeanOp)
def reduce_mean(op: graph.ReduceMeanOp, x: np.ndarray) -> np.ndarray:
    p = op.params()
    return np.mean(x, axis=p["axes"], keepdims=p["keepdims"], dtype=_sum_dtype(x)).astype(x.dtype)


@register_reference(graph.ReduceMaxOp)
def reduce_max(op: graph.ReduceMaxOp, x: np.ndarray) -> np.ndarray:
    """The maximum of no elements is the identity of max: -inf, or the integer minimum."""
    p = op.params()
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    return np.max(x, axis=p["axes"], keepdims=p["keepdims"], initial=lowest)


@register_reference(graph.MatmulOp)
def matmul(op: graph.MatmulOp, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    p = op.params()
    product = _last_two_swapped(a, p["transpose_a"]) @ _last_two_swapped(b, p["transpose_b"])
    return product * product.dtype.type(p["alpha"])


@register_reference(graph.SoftmaxOp)
def softmax(op: graph.SoftmaxOp, x: np.ndarray) -> np.ndarray:
    return _softmax(x, op.params()["axis"])


@register_reference(graph.LogSoftmaxOp)
def log_softmax(op: graph.LogSoftmaxOp, x: np.ndarray) -> np.ndarray:
    return _log_softmax(x, op.params()["axis"])


@register_reference(graph.LayerNormOp)
def layernorm(op: graph.LayerNormOp, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=-1, keepdims=True)
    eps = x.dtype.type(op.params()["epsilon"])
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


@register_reference(graph.RmsNormOp)
def rmsnorm(op: graph.RmsNormOp, x: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    eps = x.dtype.type(op.params()["epsilon"])
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gamma


def _attention_scores(params: dict, q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """scale · q kᵀ, -inf above the diagonal where causal."""
    scores = (q @ np.swapaxes(k, -1, -2)) * q.dtype.type(params["scale"])
    if params["causal"]:
        scores = np.where(above_diagonal(*scores.shape[-2:]), q.dtype.type(-np.inf), scores)
    return scores


@register_reference(graph.AttentionOp)
def attention(op: graph.AttentionOp, q: np.ndarray, k: np.ndarray, v: np.ndarray):
    return _softmax(_attention_scores(op.params(), q, k), -1) @ v


@register_reference(graph.AttentionLseOp)
def attention_lse(op: graph.AttentionLseOp, q: np.ndarray, k: np.ndarray, v: np.ndarray):
    """graph.attention's output and each query row's log-sum-exp of its scores, in f32."""
    scores = _attention_scores(op.params(), q, k)
    wide = scores.astype(np.float64)
    largest = np.max(wide, axis=-1, keepdims=True)
    lse = largest + np.log(np.sum(np.exp(wide - largest), axis=-1, keepdims=True))
    return _softmax(scores, -1) @ v, lse[..., 0].astype(np.float32)


@register_reference(graph.AttentionGradOp)
def attention_grad(op: graph.AttentionGradOp, q, k, v, out, dout, lse=None):
    """(dq, dk, dv) of graph.attention, from the probabilities recomputed here: a softmax
    of the scores, or exp(scores - lse) where the forward's log-sum-exp is given."""
    p = op.params()
    scale = q.dtype.type(p["scale"])
    scores = _attention_scores(p, q, k)
    if lse is None:
        probabilities = _softmax(scores, -1)
    else:
        probabilities = np.exp(scores - lse[..., None].astype(scores.dtype))
    d_probabilities = dout @ np.swapaxes(v, -1, -2)
    d_scores = probabilities * (d_probabilities - np.sum(dout * out, axis=-1, keepdims=True))
    return (
        (d_scores @ k) * scale,
        (np.swapaxes(d_scores, -1, -2) @ q) * scale,
        np.swapaxes(probabilities, -1, -2) @ dout,
    )


def _check_ids(op_name: str, what: str, ids: np.ndarray, bound: int) -> None:
    bad = (ids < 0) | (ids >= bound)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ExecutionError(
            f"'{op_name}': {what} {int(ids[where])} at index {list(where)} "
            f"is outside [0, {bound})"
        )


@register_reference(graph.EmbeddingOp)
def embedding(op: graph.EmbeddingOp, table: np.ndarray, ids: np.ndarray) -> np.ndarray:
    _check_ids(op.name, "id", ids, table.shape[0])
    return table[ids]


@register_reference(graph.EmbeddingGradOp)
def embedding_grad(op: graph.EmbeddingGradOp, grad: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """grad's rows added into the rows of a zero [V, D] table that ids pick, in order; none
    into the padding_idx row."""
    params = op.params()
    vocabulary = params["vocabulary"]
    _check_ids(op.name, "id", ids, vocabulary)
    width = grad.shape[-1]
    table = np.zeros((vocabulary, width), grad.dtype)
    np.add.at(table, ids.reshape(-1), grad.reshape(-1, width))
    if "padding_idx" in params:
        table[params["padding_idx"]] = 0
    return table


@register_reference(graph.CrossEntropyOp)
def cross_entropy(op: graph.CrossEntropyOp, logits: np.ndarray, labels: np.ndarray):
    _check_ids(op.name, "label", labels, logits.shape[1])
    picked = _log_softmax(logits, -1)[np.arange(logits.shape[0]), labels]
    return -np.mean(picked, dtype=logits.dtype)


@register_reference(graph.FusedOp)
def fused(op: graph.FusedOp, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
    from strata.runtime.reference.interpreter import run_block

    return run_block(op.body.block, inputs)


@register_reference(graph.ReshapeOp)
def reshape(op: graph.ReshapeOp, x: np.ndarray) -> np.ndarray:
    return x.reshape(op.result.type.get_shape())


@register_reference(graph.BroadcastToOp)
def broadcast_to(op: graph.BroadcastToOp, x: np.ndarray) -> np.ndarray:
    return np.broadcast_to(x, op.result.type.get_shape())


@register_reference(graph.TransposeOp)
def transpose(op: graph.TransposeOp, x: np.ndarray) -> np.ndarray:
    return np.transpose(x, op.params()["permutation"])


@register_reference(graph.SliceOp)
def slice_(op: graph.SliceOp, x: np.ndarray) -> np.ndarray:
    p = op.params()
    return x[tuple(slice(*bounds) for bounds in zip(p["starts"], p["limits"], p["steps"]))]


@register_reference(graph.ConcatOp)
def concat(op: graph.ConcatOp, *inputs: np.ndarray) -> np.ndarray:
    return np.concatenate(inputs, axis=op.params()["axis"])

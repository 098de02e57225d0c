"""`expand-attention-grad`: graph.attention_grad spelled out in graph ops, for targets
that compute it as matmuls, a softmax and elementwise ops (which the fusion passes then
group), not as one flash-attention backward.

Before:

    %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 5.000000e-01 : f64, causal = false}
        : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
        -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)

After:

    %s  = graph.matmul %q, %k {transpose_b = true, alpha = 5.000000e-01 : f64} : ... -> tensor<8x8xf32>
    %p  = graph.softmax %s {axis = -1 : i64} : ...
    %dp = graph.matmul %do, %v {transpose_b = true} : ...
    %d  = graph.reduce_sum (graph.mul %do, %o) {axes = [-1], keepdims = true} : ... -> tensor<8x1xf32>
    %ds = graph.mul %p, (graph.sub %dp, %d)
    %dq = graph.matmul %ds, %k {alpha = 5.000000e-01 : f64}
    %dk = graph.matmul %ds, %q {transpose_a = true, alpha = 5.000000e-01 : f64}
    %dv = graph.matmul %p, %do {transpose_a = true}

(a causal one masks %s above the diagonal first; 16-bit operands are cast to f32 first
and the gradients rounded once, unless `widen_16bit=false`). The [Sq, Sk] probabilities
are recomputed, never saved by the forward; where the op reads the forward's log-sum-exp
(`lse`), %p is exp(%s - lse) instead of the softmax. `expanded_lse` spells out
graph.attention_lse's log-sum-exp likewise, for the targets whose attention kernels do
not give it. With `keep_flash=true` (the GPU pipeline) the
op stays where its operands are 16-bit and its head sizes in FLASH_GRAD_HEADS, or up to
`flash_grad_head` (256 on sm_90; flash_grad_shaped): the GPU computes
those with its flash-attention backward kernels (lowering/graph_to_tile/attention_grad.py);
the GPU pipeline expands the other 16-bit ones with `widen_16bit=false`, in 16-bit matmuls.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
from xdsl.context import Context
from xdsl.dialects.builtin import BFloat16Type, Float16Type, ModuleOp, TensorType, f32, i1
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from strata.dialects import graph
from strata.dialects.graph_base import shape_of, tensor
from strata.dialects.graph_nn import above_diagonal
from strata.support.dtypes import tensor_dtype
from strata.transforms.vjp_context import GraphEmitter

FLASH_HEADS = tuple(range(16, 257, 16))
"""Head sizes (of q/k and of v) the GPU's flash-attention forward kernel takes: multiples of
16 up to 256 (past 128 it streams smaller key blocks, so that q and two stages of k and v
fit the 96 KiB a block may have)."""
FLASH_GRAD_HEADS = tuple(range(16, 129, 16))
"""Head sizes its backward kernels take on every GPU (past 64 the mma.sync kernels stream
blocks of 32 rows to fit; past 128 two resident [64 x head] tiles leave too little of the
96 KiB a block may have there for the streamed ones)."""
DEEPEST_FLASH_GRAD_HEAD = 256
"""The largest head sm_90's warpgroup backward kernels take (227 KiB of shared memory a
block; past 128, dkv split into a dk and a dv kernel: graph_to_tile/attention_grad.py)."""


def empty_attention(q: TensorType, v: TensorType) -> bool:
    """No queries, no keys or an empty head: the empty-softmax identity, which no flash
    kernel takes."""
    return 0 in shape_of(q)[-2:] + shape_of(v)[-2:]


def flash_shaped(q: TensorType, v: TensorType, heads: tuple[int, ...] = FLASH_HEADS) -> bool:
    """Whether attention of these q and v types is one the GPU's flash kernels take: 16-bit
    elements, head sizes in `heads` (their strides are checked when kernels are built)."""
    return (
        isinstance(q.element_type, (Float16Type, BFloat16Type))
        and shape_of(q)[-1] in heads and shape_of(v)[-1] in heads
    )  # fmt: skip


def flash_grad_shaped(q: TensorType, v: TensorType, deepest: int = FLASH_GRAD_HEADS[-1]) -> bool:
    """Whether the GPU's flash backward kernels take attention of these q and v types: heads
    in FLASH_GRAD_HEADS, or (flash_shaped) none past `deepest`."""
    return flash_shaped(q, v, FLASH_GRAD_HEADS) or (flash_shaped(q, v) and max(shape_of(q)[-1], shape_of(v)[-1]) <= deepest)


def causal_mask(emitter: GraphEmitter, scores: SSAValue) -> SSAValue:
    """Positions above the diagonal get the lowest finite value (the softmax gives them
    probability 0, as -inf does, without inf - inf in a fused kernel)."""
    sq, sk = shape_of(scores.type)[-2:]
    mask = emitter.constant(above_diagonal(sq, sk), tensor((sq, sk), i1))
    lowest = float(ml_dtypes.finfo(tensor_dtype(scores.type)).min)
    return emitter.where(mask, emitter.scalar(lowest, scores.type.element_type), scores)


def expanded(emitter: GraphEmitter, op: graph.AttentionGradOp, widen: bool = True) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(dq, dk, dv) of `op` built from graph ops by `emitter` (the module docstring). With
    `widen`, 16-bit operands are cast to f32 first and the gradients rounded once at the
    end, as the reference computes them; without, every intermediate ([Sq, Sk] scores and
    probabilities included) is rounded to the 16-bit type, for 16-bit matmuls (the GPU's
    tensor cores: f32 matmuls there run on its CUDA cores, ten times slower)."""
    element = op.q.type.element_type
    tensors, lse = list(op.operands[:5]), op.lse
    if widen and isinstance(element, (Float16Type, BFloat16Type)):
        widened = [emitter.emit(graph.CastOp, [v], tensor(shape_of(v.type), f32)) for v in tensors]
        gradients = expanded_in(emitter, *widened, lse, op.params())
        return tuple(emitter.emit(graph.CastOp, [g], tensor(shape_of(g.type), element)) for g in gradients)
    return expanded_in(emitter, *tensors, lse, op.params())


def expanded_in(emitter: GraphEmitter, q: SSAValue, k: SSAValue, v: SSAValue, out: SSAValue, dout: SSAValue,
                lse: SSAValue | None, params: dict) -> tuple[SSAValue, SSAValue, SSAValue]:
    scores = attention_scores(emitter, q, k, params)
    if lse is None:
        p = emitter.emit(graph.SoftmaxOp, [scores], axis=-1)
    else:  # the forward's log-sum-exp L: p = exp(s - L)
        rows = emitter.reshape(lse, (*shape_of(lse.type), 1))
        if rows.type.element_type != scores.type.element_type:
            rows = emitter.emit(graph.CastOp, [rows], tensor(shape_of(rows.type), scores.type.element_type))
        p = emitter.emit(graph.ExpOp, [emitter.sub(scores, rows)])
    d_p = emitter.matmul(dout, v, transpose_b=True)
    d_scores = emitter.mul(p, emitter.sub(d_p, emitter.row_sum(emitter.mul(dout, out), -1)))
    scale = params["scale"]
    return (
        emitter.matmul(d_scores, k, alpha=scale),
        emitter.matmul(d_scores, q, transpose_a=True, alpha=scale),
        emitter.matmul(p, dout, transpose_a=True),
    )


def attention_scores(emitter: GraphEmitter, q: SSAValue, k: SSAValue, params: dict) -> SSAValue:
    """scale · q kᵀ, masked above the diagonal where causal (causal_mask)."""
    scores = emitter.matmul(q, k, transpose_b=True, alpha=params["scale"])
    return causal_mask(emitter, scores) if params["causal"] else scores


def expanded_lse(emitter: GraphEmitter, op: graph.AttentionLseOp) -> SSAValue:
    """graph.attention_lse's log-sum-exp L = m + log Σ exp(s - m) (m each row's largest score)
    built from graph ops in f32, as [batch..., Sq]: for targets whose attention kernel
    does not give it (everything but the GPU's flash kernel)."""
    q, k = (
        value if value.type.element_type == f32 else emitter.emit(graph.CastOp, [value], tensor(shape_of(value.type), f32))
        for value in (op.q, op.k)
    )  # fmt: skip
    scores = attention_scores(emitter, q, k, op.params())
    largest = emitter.emit(graph.ReduceMaxOp, [scores], axes=(-1,), keepdims=True)
    total = emitter.row_sum(emitter.emit(graph.ExpOp, [emitter.sub(scores, largest)]), -1)
    lse = emitter.add(largest, emitter.emit(graph.LogOp, [total]))
    return emitter.reshape(lse, shape_of(op.lse.type))


def expand(op: graph.AttentionGradOp, widen: bool) -> None:
    """Replace `op` by its expansion, in place."""
    built: list[Operation] = []
    results = expanded(GraphEmitter(built.append), op, widen)
    Rewriter.insert_op(built, InsertPoint.before(op))
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class ExpandAttentionGradPass(ModulePass):
    """Spells out graph.attention_grad in matmuls, a softmax and elementwise ops: every
    one, or (keep_flash) all but those the GPU's flash-attention backward takes."""

    name = "expand-attention-grad"

    keep_flash: bool = False
    """Keep the 16-bit ones the GPU's flash kernels take (flash_grad_shaped)."""
    flash_grad_head: int = FLASH_GRAD_HEADS[-1]
    """With keep_flash, the largest head kept past FLASH_GRAD_HEADS' 128, which are always kept
    (of q/k and of v; sm_90: 256)."""
    widen_16bit: bool = True
    """Expand 16-bit ones in f32 (cast in, gradients rounded once); false: in their 16-bit
    type, for the GPU's 16-bit tensor-core matmuls."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for grad in [o for o in op.walk() if isinstance(o, graph.AttentionGradOp)]:
            if not (self.keep_flash and flash_grad_shaped(grad.q.type, grad.v.type, self.flash_grad_head)):
                expand(grad, self.widen_16bit)

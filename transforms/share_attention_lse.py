"""`share-attention-lse`: a graph.attention whose output a graph.attention_grad of the same
q, k, v reads becomes graph.attention_lse, and the gradient reads its log-sum-exp.

Before:

    %o = graph.attention %q, %k, %v {scale = 1.250000e-01 : f64, causal = true}
        : (tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64x16xbf16>) -> tensor<64x16xbf16>
    %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale = 1.250000e-01 : f64, causal = true}
        : (tensor<64x16xbf16>, ...) -> (...)

After:

    %o, %o_lse = graph.attention_lse %q, %k, %v {scale = 1.250000e-01 : f64, causal = true}
        : (tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64x16xbf16>) -> (tensor<64x16xbf16>, tensor<64xf32>)
    %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do lse %o_lse {scale = 1.250000e-01 : f64, causal = true}
        : (tensor<64x16xbf16>, ..., tensor<64xf32>) -> (...)

The flash backward recomputes each probability as exp(scale · q kᵀ - L) from each query
row's log-sum-exp L. Without the forward's L it first walks every key block once more for
the softmax's running maxima and sums (a whole q kᵀ product, one of its eight); the
forward's flash kernel has them at hand and stores L beside out. Only attention the GPU's
flash kernels take both ways is paired (16-bit, flash_grad_shaped): elsewhere the
forward would compute L for a backward that recomputes its softmax anyway. Gradients that
already read an lse, and attention used by no such gradient, are left as they are; the
values computed do not change.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from strata.dialects import graph
from strata.transforms.expand_attention_grad import FLASH_GRAD_HEADS, empty_attention, flash_grad_shaped


def forward_of(grad: graph.AttentionGradOp) -> graph.AttentionOp | graph.AttentionLseOp | None:
    """The attention (plain, or already sharing its L) whose output the gradient reads, if
    it has the gradient's q, k, v and parameters."""
    producer = grad.out.owner
    if not isinstance(producer, graph.AttentionOp | graph.AttentionLseOp) or grad.out is not producer.results[0]:
        return None
    if list(producer.operands) != list(grad.operands[:3]) or producer.params() != grad.params():
        return None
    return producer


def with_lse(forward: graph.AttentionOp) -> graph.AttentionLseOp:
    """`forward` replaced by graph.attention_lse (its output's uses moved over; L named
    after the output)."""
    paired = graph.AttentionLseOp.make(list(forward.operands), **forward.params())
    if forward.result.name_hint is not None:
        paired.lse.name_hint = f"{forward.result.name_hint}_lse"
    Rewriter.replace_op(forward, paired, [paired.out])
    return paired


@dataclass(frozen=True)
class ShareAttentionLsePass(ModulePass):
    """Gives each flash-shaped graph.attention_grad its forward's log-sum-exp (the module
    docstring)."""

    name = "share-attention-lse"

    flash_grad_head: int = FLASH_GRAD_HEADS[-1]
    """The largest head (of q/k and of v) the flash backward takes past 128, up to which it
    always does (sm_90: 256)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for grad in [o for o in op.walk() if isinstance(o, graph.AttentionGradOp)]:
            forward = forward_of(grad)
            q, v = grad.q.type, grad.v.type
            taken = flash_grad_shaped(q, v, self.flash_grad_head) and not empty_attention(q, v)
            if grad.lse is not None or forward is None or not taken:
                continue
            if isinstance(forward, graph.AttentionOp):
                forward = with_lse(forward)
            paired = graph.AttentionGradOp.make([*grad.operands, forward.lse], **grad.params())
            Rewriter.replace_op(grad, paired)

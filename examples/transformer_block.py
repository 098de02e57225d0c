"""Build a pre-LayerNorm transformer block with the builder API.

    python examples/transformer_block.py > examples/transformer_block.mlir

Explicit attention (matmul -> scale -> causal mask -> softmax -> matmul), the form
fusion later recognizes as graph.attention. Shapes: x [batch, seq, d_model].
"""

from __future__ import annotations

import math

import numpy as np

import strata
from strata import ops


def build_transformer_block(
    batch: int = 2, seq: int = 16, d_model: int = 64, heads: int = 4, d_ff: int = 256
) -> strata.Graph:
    head = d_model // heads
    g = strata.Graph("transformer_block")
    x = g.input("x", (batch, seq, d_model))
    ln1_g, ln1_b = g.param("ln1_gamma", (d_model,)), g.param("ln1_beta", (d_model,))
    w_q = g.param("w_q", (d_model, d_model))
    w_k = g.param("w_k", (d_model, d_model))
    w_v = g.param("w_v", (d_model, d_model))
    w_o = g.param("w_o", (d_model, d_model))
    ln2_g, ln2_b = g.param("ln2_gamma", (d_model,)), g.param("ln2_beta", (d_model,))
    w_1, b_1 = g.param("w_1", (d_model, d_ff)), g.param("b_1", (d_ff,))
    w_2, b_2 = g.param("w_2", (d_ff, d_model)), g.param("b_2", (d_model,))

    def split_heads(t: strata.Tensor) -> strata.Tensor:
        return t.reshape(batch, seq, heads, head).transpose(0, 2, 1, 3)

    h = ops.layernorm(x, ln1_g, ln1_b)
    q, k, v = (split_heads(h @ w) for w in (w_q, w_k, w_v))
    scores = ops.matmul(q, k, transpose_b=True, alpha=1 / math.sqrt(head))
    future = np.triu(np.ones((seq, seq), dtype=bool), k=1)
    masked = ops.select(g.constant(future, "i1"), g.constant(-1e9), scores)
    context = ops.softmax(masked) @ v
    merged = context.transpose(0, 2, 1, 3).reshape(batch, seq, d_model)
    x = x + merged @ w_o

    h = ops.layernorm(x, ln2_g, ln2_b)
    x = x + (ops.gelu(h @ w_1 + b_1) @ w_2 + b_2)
    g.output(x)
    return g


if __name__ == "__main__":
    print(build_transformer_block().build())

"""Neural-network functions on lazy tensors, named as in `torch.nn.functional`.

    from strata.lazy.nn import functional as F
    loss = F.cross_entropy(F.relu(F.linear(x, w1, b1)) @ w2.T, labels)

Each records one graph op (or a few) of Strata's `graph` dialect.
"""

from __future__ import annotations

import math

from strata.lazy.creation import random_node
from strata.lazy.errors import describe
from strata.lazy.tensor import Tensor
from strata.support.errors import BuildError


def relu(x: Tensor) -> Tensor:
    return x._op("relu")


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    return x._op("gelu", approximate=approximate)


def silu(x: Tensor) -> Tensor:
    return x._op("silu")


def sigmoid(x: Tensor) -> Tensor:
    return x._op("sigmoid")


def tanh(x: Tensor) -> Tensor:
    return x._op("tanh")


def exp(x: Tensor) -> Tensor:
    return x._op("exp")


def log(x: Tensor) -> Tensor:
    return x._op("log")


def erf(x: Tensor) -> Tensor:
    return x._op("erf")


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    return x._op("softmax", axis=dim)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    return x._op("log_softmax", axis=dim)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias, the weight stored (out_features, in_features)."""
    y = x._op("matmul", [weight], what="linear", transpose_b=True)
    return y if bias is None else y + bias


def layer_norm(x: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalization over the last axis (the only normalized_shape graph.layernorm takes)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if shape != x.shape[-1:]:
        raise BuildError(f"layer_norm: normalized_shape must be the last size of {describe(x)}, got {shape}")
    extra = [t for t in (weight, bias) if t is not None]
    return x._op("layernorm", extra, has_weight=weight is not None, has_bias=bias is not None, epsilon=float(eps))


def rms_norm(x: Tensor, normalized_shape, weight: Tensor, eps: float = 1e-6) -> Tensor:
    return x._op("rmsnorm", [weight], what="rms_norm", epsilon=float(eps))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, is_causal: bool = False, scale: float | None = None) -> Tensor:
    """softmax(scale * query @ key.T) @ value over the last two axes (graph.attention);
    `is_causal` masks the positions after each query's own, and `scale` defaults to
    1/sqrt(head size) as in PyTorch."""
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    return query._op("attention", [key, value], what="scaled_dot_product_attention", scale=scale, causal=bool(is_causal))


def embedding(ids: Tensor, weight: Tensor) -> Tensor:
    """Rows of `weight` (num_embeddings, dim) picked by integer `ids` of any shape."""
    return weight._op("embedding", [ids])


def cross_entropy(logits: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean over rows of -log_softmax(logits)[n, target[n]]; logits (N, C), target (N,) ints."""
    if reduction != "mean":
        raise BuildError(f"cross_entropy: only reduction='mean' is supported, got {reduction!r}")
    return logits._op("cross_entropy", [target])


def mse_loss(input: Tensor, target: Tensor) -> Tensor:
    difference = input - target
    return (difference * difference).mean()


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p); the keep mask
    comes from the keyed generator (a new draw per call; see `strata.lazy.manual_seed`)."""
    if not 0.0 <= p < 1.0:
        raise BuildError(f"dropout: p must lie in [0, 1), got {p}")
    if not training or p == 0.0:
        return x
    mask = Tensor.wrap(random_node("dropout", x.shape, x.dtype, float(p)), x.device)
    return x * mask


def where(condition: Tensor, a: Tensor, b: Tensor) -> Tensor:
    return condition._op("select", [a, b], what="where")

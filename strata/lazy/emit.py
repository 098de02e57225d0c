"""How each lazy op becomes graph ops: one emitter per op name.

An emitter takes the `strata.Graph` under construction, the operands as builder tensors,
the node's parameters (a dict) and its payload, and returns a builder tensor (a list for a
multi-result op). Emitters are the only place lazy ops meet the builder API, and the same
emitter infers a node's type when it is recorded (`node.infer_types`), so a shape error
surfaces at the op call, not at the force.
"""

from __future__ import annotations

from collections.abc import Callable

from strata.frontends import builder as ops
from strata.frontends.builder import Graph, Tensor as Built
from strata.lazy import views
from strata.training import inline

Emitter = Callable[[Graph, list[Built], dict, object], "Built | list[Built]"]

UNARY = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "silu", "erf")
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "pow")


def _unary(name: str) -> Emitter:
    build = getattr(ops, name)
    return lambda g, xs, p, payload: build(xs[0])


def _binary(name: str) -> Emitter:
    build = getattr(ops, name)
    return lambda g, xs, p, payload: build(xs[0], xs[1])


def _with_params(name: str) -> Emitter:
    build = getattr(ops, name)
    return lambda g, xs, p, payload: build(*xs, **p)


def _scalar(g: Graph, xs: list[Built], p: dict, payload) -> Built:
    """`x op c` (or `c op x` when reversed) with a Python number specialized into the graph."""
    (x,) = xs
    constant = g.constant(p["value"], x.dtype)
    lhs, rhs = (constant, x) if p["reverse"] else (x, constant)
    if p["name"] == "compare":
        return ops.compare(lhs, rhs, p["predicate"])
    return getattr(ops, p["name"])(lhs, rhs)


def _full(g: Graph, xs: list[Built], p: dict, payload) -> Built:
    constant = g.constant(p["value"], p["dtype"])
    return ops.broadcast_to(constant, p["shape"]) if p["shape"] else constant


def _identity(g: Graph, xs: list[Built], p: dict, payload) -> Built:
    return xs[0]


def _cast(g: Graph, xs: list[Built], p: dict, payload) -> Built:
    return ops.cast(xs[0], p["dtype"])


def _concat(g: Graph, xs: list[Built], p: dict, payload) -> Built:
    return ops.concat(xs, p["axis"])


def _layernorm(g: Graph, xs: list[Built], p: dict, payload) -> Built:
    """layer_norm over the last axis; a missing weight or bias is 1 or 0."""
    x, rest = xs[0], list(xs[1:])
    size = x.shape[-1:] or (1,)
    gamma = rest.pop(0) if p["has_weight"] else ops.broadcast_to(g.constant(1.0, x.dtype), size)
    beta = rest.pop(0) if p["has_bias"] else ops.broadcast_to(g.constant(0.0, x.dtype), size)
    return ops.layernorm(x, gamma, beta, p["epsilon"])


def _view_scatter(g: Graph, xs: list[Built], p: dict, payload) -> Built:
    base, update = xs
    return views.scatter(g, base, update, p["steps"])


def _call(g: Graph, xs: list[Built], p: dict, payload) -> list[Built]:
    """Inline the payload function (a backward pass or a staged step) into `g`."""
    results = inline(g.block, payload, [x.value for x in xs])
    return [Built(g, v) for v in results]


def _optimizer(g: Graph, xs: list[Built], p: dict, payload) -> list[Built]:
    """strata.training's SGD/Adam update rule: (p, grad, state..., hyper...) -> (p', state'...)."""
    rule = p["rule"]
    states = len(rule.state_names)
    param, grad, state, hyper = xs[0], xs[1], xs[2 : 2 + states], xs[2 + states :]
    new_param, new_state = rule.update(param, grad, state, dict(zip(p["hyper_names"], hyper)))
    return [new_param, *new_state]


EMITTERS: dict[str, Emitter] = {
    **{name: _unary(name) for name in UNARY},
    **{name: _binary(name) for name in BINARY},
    **{name: _with_params(name) for name in (
        "gelu", "scale", "compare", "reduce_sum", "reduce_mean", "reduce_max", "matmul", "softmax",
        "log_softmax", "rmsnorm", "reshape", "transpose", "slice_", "broadcast_to",
    )},  # fmt: skip
    "select": lambda g, xs, p, payload: ops.select(*xs),
    "embedding": lambda g, xs, p, payload: ops.embedding(*xs),
    "cross_entropy": lambda g, xs, p, payload: ops.cross_entropy(*xs),
    "attention": lambda g, xs, p, payload: ops.attention(*xs, scale=p["scale"], causal=p["causal"]),
    "scalar": _scalar,
    "full": _full,
    "leaf_ref": _identity,
    "detach": _identity,
    "clone": _identity,
    "cast": _cast,
    "concat": _concat,
    "layernorm": _layernorm,
    "view_scatter": _view_scatter,
    "call": _call,
    "optimizer": _optimizer,
}
"""Every op a node may carry, except "item" (a result of a multi-result op, picked by the
graph builder) and the input ops "storage" and "random"."""

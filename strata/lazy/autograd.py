"""Lazy reverse-mode autograd on Strata's `autodiff` pass.

`backward()` does not compute anything. It cuts the recorded graph of the loss at its
autograd boundaries - leaf tensors that require grad ("leaf_ref" nodes) and values that
do not require grad - and emits that region as a graph function `f(leaves...,
probes..., boundary values...) -> loss`. `strata.transforms.autodiff.differentiate`
turns it into `f_grad`, which becomes one lazy multi-result "call" node whose results are
the gradients. Reading a gradient (or anything computed from it, like an updated
parameter) forces the call, inlined into the forced graph, so forward, backward and the
optimizer update compile as one program. `f_grad` is cached by the region's normalized
structure, so a training loop differentiates once.

- Saved tensors: ops record which tensors their backward reads, with the base's version
  then; `backward()` raises `SavedTensorModifiedError` if a version moved.
- `retain_grad()`: the tensor's value gets a zero "probe" added inside `f`; the gradient
  with respect to the probe is the tensor's gradient.
- Checkpointing is a saved-tensor policy: nodes recorded inside `checkpoint(fn, ...)` are
  recomputed by the backward pass instead of saved (autodiff's "marked" policy, every
  other op marked `graph.checkpoint`). Random values are inputs of the region, so the
  recomputation sees the very same dropout masks.
"""

from __future__ import annotations

import math
import weakref

from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import OpResult

from strata.frontends import builder as ops
from strata.frontends.builder import Graph
from strata.lazy import graphs
from strata.lazy.errors import BackwardGraphFreedError, GradientError, SavedTensorModifiedError
from strata.lazy.node import MODE, Node, record, record_multi
from strata.transforms.autodiff import CHECKPOINT, differentiate

RETAINED: weakref.WeakSet = weakref.WeakSet()
"""Non-leaf tensors whose `.grad` backward fills (`Tensor.retain_grad`)."""

BACKWARD_FUNCTIONS: dict[int, object] = {}
"""`graphs.function_id` of the normalized region structure -> its differentiated `f_grad`
(a func.func)."""


class no_grad:
    """Context manager (and decorator) recording ops without autograd history."""

    enabled = False

    def __enter__(self):
        self.previous, MODE.grad_enabled = MODE.grad_enabled, self.enabled

    def __exit__(self, *exc) -> None:
        MODE.grad_enabled = self.previous

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapped


class enable_grad(no_grad):
    """Turns grad mode back on inside a `no_grad` region."""

    enabled = True


def is_grad_enabled() -> bool:
    return MODE.grad_enabled


def checkpoint(fn, *args, **kwargs):
    """`fn(*args)` with its intermediate values recomputed during backward instead of
    saved. `fn` must not write tensors in place (its recomputation would write again)."""
    MODE.checkpoint_depth += 1
    try:
        return fn(*args, **kwargs)
    finally:
        MODE.checkpoint_depth -= 1


def is_cut(node: Node) -> bool:
    """An argument of the differentiated region: a grad leaf or a value without grad."""
    return not node.requires_grad or node.op == "leaf_ref"


def backward(root: Node, label: str, cotangent: Node | None, retain_graph: bool):
    """Record the backward pass of `root`; [(tensor whose .grad gets it, gradient node)]."""
    if not root.requires_grad:
        raise GradientError(f"backward() on {label}, which does not require grad (no leaf with requires_grad=True reaches it)")
    if cotangent is None:
        if math.prod(root.shape) != 1:
            raise GradientError(f"backward() on {label}: a non-scalar needs gradient= (a tensor of its shape)")
        cotangent = record("full", [], {"value": 1.0, "shape": root.shape, "dtype": root.dtype}, grad=False)
    elif (cotangent.shape, cotangent.dtype) != (root.shape, root.dtype):
        raise GradientError(f"backward() on {label}: gradient= is {cotangent.shape} {cotangent.dtype}, not {root.shape} {root.dtype}")
    order = graphs.closure([root], is_cut)
    interior = [n for n in order if not is_cut(n)]
    _check_saved(interior, label)
    leaves = [n for n in order if n.op == "leaf_ref"]
    boundary = [n for n in order if is_cut(n) and n.op != "leaf_ref"]
    holders = {id(t.node): t for t in list(RETAINED)}
    probes = [n for n in interior if id(n) in holders]
    position = {id(n): i for i, n in enumerate(order)}
    key = (
        graphs.structure_key(order, [root], is_cut),
        tuple(position[id(n)] for n in leaves),
        tuple(position[id(n)] for n in probes),
    )
    function = graphs.function_id(key)
    if function not in BACKWARD_FUNCTIONS:
        BACKWARD_FUNCTIONS[function] = _differentiate(order, root, leaves, probes, boundary)
    zeros = [record("full", [], {"value": 0.0, "shape": n.shape, "dtype": n.dtype}, grad=False) for n in probes]
    arguments = leaves + probes + boundary
    results = record_multi("call", [*leaves, *zeros, *boundary, cotangent], {"function": function}, payload=BACKWARD_FUNCTIONS[function])
    floats = [n for n in arguments if n.dtype.startswith(("f", "bf"))]
    gradient_of = {id(n): results[1 + i] for i, n in enumerate(floats)}
    if not retain_graph:
        for node in interior:
            node.freed = True
            if node.materialized:
                node.inputs = ()
    return [(n.payload, gradient_of[id(n)]) for n in leaves] + [(holders[id(n)], gradient_of[id(n)]) for n in probes]


def _check_saved(interior: list[Node], label: str) -> None:
    for node in interior:
        if node.freed:
            raise BackwardGraphFreedError(
                f"backward() on {label}: the graph through {node.op} was freed by an earlier backward(); "
                f"pass retain_graph=True to that call to backward twice"
            )
        for tensor, base, version in node.saved:
            if base.version != version:
                raise SavedTensorModifiedError(
                    f"backward() on {label}: {tensor}, saved by {node.op} for the backward pass, was modified "
                    f"in place afterwards (version {version}, now {base.version}); clone() it before writing"
                )


def _differentiate(order: list[Node], root: Node, leaves: list[Node], probes: list[Node], boundary: list[Node]):
    """The region as `@lazy_backward`, differentiated: the `@lazy_backward_grad` func."""
    graph = Graph("lazy_backward")
    inputs = {id(n): graph.input(f"leaf{i}", n.shape, n.dtype) for i, n in enumerate(leaves)}
    probe_inputs = {id(n): graph.input(f"probe{i}", n.shape, n.dtype) for i, n in enumerate(probes)}
    inputs |= {id(n): graph.input(f"value{i}", n.shape, n.dtype) for i, n in enumerate(boundary)}
    checkpointed = any(n.recompute for n in order if not is_cut(n))

    def after_emit(node: Node, built):
        if id(node) in probe_inputs:
            built = ops.add(built, probe_inputs[id(node)])
        if checkpointed and not node.recompute and isinstance(built.value, OpResult):
            built.value.owner.attributes[CHECKPOINT] = UnitAttr()
        return built

    values = graphs.build(graph, order, is_cut, lambda n: inputs[id(n)], after_emit)
    graph.output(values[id(root)])
    module = graph.build()
    return differentiate(module, "lazy_backward", checkpoint="marked" if checkpointed else "all")

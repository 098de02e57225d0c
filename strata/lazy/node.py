"""Lazy recipes: the nodes behind every lazy tensor.

A `Node` is one pending operation: an op name (a key of `emit.EMITTERS`), its input
nodes, hashable parameters, and the result's shape and dtype, inferred when the node is
recorded. Nodes are immutable recipes; a node becomes *materialized* when a force
computes it (`value` holds the array) and from then on it is an input of later graphs.

Special ops:
- "storage": a materialized leaf (an array from `tensor()`, `zeros()`, a computed value).
- "random": keyed random numbers (`payload` is the `rng.RandomKey`), generated on the host
  when first forced; an input of compiled graphs, never an op inside them.
- multi-result ops ("call", "optimizer") have `shape = None`; their results are
  "item" nodes, made together and forced together (`siblings`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from strata.frontends.builder import Graph
from strata.lazy.emit import EMITTERS
from strata.support.dtypes import element_name, element_name_of_dtype
from strata.support.errors import BuildError

_serials = itertools.count(1)

IDENTITY_OPS = frozenset({"leaf_ref", "detach", "clone"})
"""Ops that pass their input through unchanged (they only mark autograd boundaries)."""

INPUT_OPS = frozenset({"storage", "random"})


class RecordingMode:
    """How new nodes are recorded: grad mode (`no_grad`) and checkpoint regions."""

    def __init__(self):
        self.grad_enabled = True
        self.checkpoint_depth = 0


MODE = RecordingMode()


class Node:
    """One value of the lazy graph (see the module docstring)."""

    __slots__ = (
        "serial", "op", "inputs", "params", "payload", "shape", "dtype", "value",
        "requires_grad", "recompute", "freed", "siblings", "saved", "__weakref__",
    )  # fmt: skip

    def __init__(self, op: str, inputs: Sequence[Node], params: tuple, shape, dtype, payload=None):
        self.serial = next(_serials)
        self.op = op
        self.inputs: tuple[Node, ...] = tuple(inputs)
        self.params = params
        self.payload = payload
        self.shape = shape
        self.dtype = dtype
        self.value: np.ndarray | None = None
        self.requires_grad = False
        self.recompute = MODE.checkpoint_depth > 0
        """Recorded under `checkpoint`: backward recomputes it instead of saving it."""
        self.saved: tuple[tuple[str, object, int], ...] = ()
        """(tensor description, its base, the base's version) per tensor this op saved
        for backward; backward checks the versions did not move."""
        self.freed = False
        """A backward pass already consumed this node's autograd history."""
        self.siblings: Sequence[Node] = ()
        """For an "item" node not computed yet: every result of the same multi-result op
        (one list they share)."""

    @property
    def materialized(self) -> bool:
        return self.value is not None

    def is_graph_input(self) -> bool:
        """Enters a compiled graph as an argument rather than as an op."""
        return self.value is not None or self.op in INPUT_OPS

    def set_value(self, value: np.ndarray) -> None:
        """Record the computed value; history no longer needed for gradients is dropped
        so long chains of materialized steps are not kept alive, and so are the siblings
        (which refer back to this node: refcounting frees a computed step's results, with
        no work left to the cycle collector)."""
        value.setflags(write=False)  # (cheaper than `value.flags.writeable`, which makes a flags object)
        self.value = value
        self.siblings = ()
        if not self.requires_grad or self.freed:
            self.inputs = ()

    def __repr__(self) -> str:
        return f"Node#{self.serial}({self.op}, {self.shape}, {self.dtype})"


def storage(array: np.ndarray) -> Node:
    """A materialized leaf node holding `array` (not copied; made read-only)."""
    dtype = element_name_of_dtype(array.dtype)
    node = Node("storage", (), (), tuple(array.shape), dtype)
    node.set_value(array)
    return node


_inferred: dict[tuple, list[tuple[tuple[int, ...], str]]] = {}


def infer_types(op: str, inputs: Sequence[Node], params: tuple, payload=None, what: str | None = None):
    """[(shape, dtype)] of the op's results, from the op's own builder rule (run on
    placeholders in a scratch graph, memoized), so the lazy engine and the compiler never
    disagree on a type; a violation is a BuildError naming the op and its operands."""
    if op == "call":  # an inlined function: its signature says it all
        return [(tuple(t.get_shape()), element_name(t.element_type)) for t in payload.function_type.outputs.data]
    signature = tuple((n.shape, n.dtype) for n in inputs)
    key = (op, params, signature)
    if key not in _inferred:
        scratch = Graph("infer")
        placeholders = [scratch.input(f"in{i}", shape, dtype) for i, (shape, dtype) in enumerate(signature)]
        try:
            out = EMITTERS[op](scratch, placeholders, dict(params), payload)
        except BuildError as e:
            operands = ", ".join(f"{'x'.join(map(str, s)) or 'scalar'} {d}" for s, d in signature)
            raise BuildError(f"strata.lazy.{what or op}({operands}): {e}") from None
        results = out if isinstance(out, list) else [out]
        _inferred[key] = [(r.shape, r.dtype) for r in results]
    return _inferred[key]


def record(op: str, inputs: Sequence[Node], params: dict | None = None, *, grad: bool = True, what: str | None = None, payload=None) -> Node:
    """A new single-result node; autograd records it when `grad` and grad mode allow."""
    frozen = tuple(sorted((params or {}).items()))
    ((shape, dtype),) = infer_types(op, inputs, frozen, payload, what)
    node = Node(op, inputs, frozen, shape, dtype, payload)
    node.requires_grad = grad and MODE.grad_enabled and any(n.requires_grad for n in inputs)
    return node


def record_multi(
    op: str, inputs: Sequence[Node], params: dict | None = None, *, payload=None, what: str | None = None
) -> tuple[Node, ...]:
    """The result nodes of a new multi-result node (never differentiated through),
    siblings of each other."""
    frozen = tuple(sorted((params or {}).items()))
    types = infer_types(op, inputs, frozen, payload, what)
    return tuple(multi_results(Node(op, inputs, frozen, None, None, payload), types))


_item_params: list[tuple] = []
"""(("index", i),) per result position: the parameters of every "item" node, made once."""


def multi_results(multi: Node, types: Sequence[tuple]) -> list[Node]:
    """The "item" nodes of `multi`, one per (shape, dtype) of `types`, siblings of each
    other. A replayed compiled step makes one per result on every call (about 90 for a
    small transformer), so they are made field by field, one statement each (a quarter
    faster than `__init__` or tuple assignments): keep the fields in step with
    `Node.__init__`."""
    while len(_item_params) < len(types):
        _item_params.append((("index", len(_item_params)),))
    make, serials, recompute = Node.__new__, _serials, multi.recompute
    inputs = (multi,)
    results: list[Node] = []  # every result's `siblings`, filled as they are made
    append = results.append
    for params, (shape, dtype) in zip(_item_params, types):
        node = make(Node)
        node.serial = next(serials)
        node.op = "item"
        node.inputs = inputs
        node.params = params
        node.payload = None
        node.shape = shape
        node.dtype = dtype
        node.value = None
        node.requires_grad = False
        node.recompute = recompute
        node.saved = ()
        node.freed = False
        node.siblings = results
        append(node)
    return results


def set_results(nodes: Sequence[Node], values: Sequence[np.ndarray]) -> None:
    """`set_value` for the fresh result arrays of an executable, which no one else holds:
    they are left writeable (marking ~90 arrays per step costs more than the rest of
    committing them)."""
    for node, value in zip(nodes, values):
        node.value = value
        node.siblings = ()
        if not node.requires_grad or node.freed:
            node.inputs = ()

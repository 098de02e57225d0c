"""From lazy nodes to a Strata graph, and the normalized identity of that graph.

`closure` lists the nodes a set of roots depends on, in a deterministic post-order that
depends only on the graph's structure (inputs visited in operand order), never on node
serial numbers or object addresses. `structure_key` names that closure with each node
replaced by its position in the order: the same computation recorded twice (a training
loop's every step) gets the same key, which is what the compile cache looks up.
`build` emits the closure into a `strata.Graph`. `function_id` stands in for the key of a
graph function that a "call" node inlines.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Sequence

from strata.frontends.builder import Graph, Tensor as Built
from strata.lazy.emit import EMITTERS
from strata.lazy.node import Node


def closure(roots: Sequence[Node], is_argument: Callable[[Node], bool]) -> list[Node]:
    """Every node the roots need, post-order; an argument's own inputs are not visited."""
    order: list[Node] = []
    seen: set[int] = set()
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack: list[tuple[Node, int]] = [(root, 0)]
        while stack:  # iterative: an unforced chain of many steps is deep
            node, next_input = stack.pop()
            inputs = () if is_argument(node) else node.inputs
            if next_input < len(inputs):
                stack.append((node, next_input + 1))
                child = inputs[next_input]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                order.append(node)
    return order


def canonical(value: object) -> object:
    """A parameter as it enters a cache key: floats by their IEEE-754 bit pattern
    (little-endian), so 0.0 and -0.0 differ and a NaN equals itself."""
    if isinstance(value, float):
        return ("f64", struct.pack("<d", value))
    if isinstance(value, (tuple, list)):
        return tuple(canonical(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, canonical(dataclasses.astuple(value)))
    return value


def structure_key(order: Sequence[Node], roots: Sequence[Node], is_argument: Callable[[Node], bool]) -> tuple:
    """The normalized identity of the graph computing `roots` from the arguments."""
    position = {id(n): i for i, n in enumerate(order)}
    entries = []
    for node in order:
        if is_argument(node):
            entries.append(("arg", node.shape, node.dtype))
        else:
            inputs = tuple(position[id(i)] for i in node.inputs)
            entries.append((node.op, canonical(node.params), inputs, node.recompute))
    return tuple(entries), tuple(position[id(r)] for r in roots)


_function_ids: dict[tuple, int] = {}


def function_id(key: tuple) -> int:
    """A small number naming the graph function whose structure key is `key`, for the
    parameters of the "call" node that inlines it: the function's key is then walked once,
    when the function is made, not by `canonical` on every force through the call. Equal
    keys get equal numbers (in this process), so equal functions share compiles."""
    return _function_ids.setdefault(key, len(_function_ids))


def build(
    graph: Graph,
    order: Sequence[Node],
    is_argument: Callable[[Node], bool],
    argument: Callable[[Node], Built],
    after_emit: Callable[[Node, Built], Built] | None = None,
) -> dict[int, Built]:
    """Emit `order` into `graph`: arguments through `argument(node)`, every other node
    through its emitter; `after_emit` may wrap what a node emitted. Returns id(node) ->
    builder tensor (a list for a multi-result node)."""
    values: dict[int, Built | list[Built]] = {}
    for node in order:
        if is_argument(node):
            values[id(node)] = argument(node)
            continue
        operands = [values[id(i)] for i in node.inputs]
        if node.op == "item":
            result = operands[0][dict(node.params)["index"]]
        else:
            result = EMITTERS[node.op](graph, operands, dict(node.params), node.payload)
        if after_emit is not None and not isinstance(result, list):
            result = after_emit(node, result)
        values[id(node)] = result
    return values

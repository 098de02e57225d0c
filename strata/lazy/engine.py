"""The engine: forcing, the compile cache, pending effects and statistics.

Forcing rule: reading a value (`.numpy()`, `.item()`, `.tolist()`) forces exactly the
dependency closure of that value: the graph is built from its recipe back to values that
are already materialized (which enter as arguments), nothing else pending is run. Every
result of a multi-result op in the closure is forced with it (a backward pass or a
compiled step commits all of its effects at once). `mark_step()` forces every pending
effect: the current value of every tensor state written in place since the last step.

Cache key: the normalized structure of the closure (`graphs.structure_key`: ops,
parameters with scalars by bit pattern, operand positions, argument shapes and dtypes)
plus the target. Views and aliases are ops over one argument, so the aliasing pattern
is part of the structure. Forcing exactly the results of one multi-result op whose
inputs are all arguments (a replayed staged step) skips the walk: its key is the op's
parameters with the arguments' aliasing pattern, shapes and dtypes (a "call" names its
function by `graphs.function_id`, which fixes the shapes and dtypes). A hit runs the
executable compiled before; a miss builds the graph, compiles it with `strata.compile`
and stores it.

Failure: a compile or run that fails commits nothing (no node receives a value), raises
`LazyExecutionError`, and leaves every pending recipe pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from strata.api import Executable, compile as compile_module
from strata.frontends.builder import Graph
from strata.lazy import graphs, rng
from strata.lazy.errors import HostReadInCompileError, LazyExecutionError, describe
from strata.lazy.node import IDENTITY_OPS, Node, set_results
from strata.support.errors import StrataError

TARGETS = {"cpu": "cpu", "cuda": "cuda"}
"""Device name -> the strata.compile target that runs its graphs."""

PENDING_PRUNE_AT = 1024
"""Pending entries whose values were computed meanwhile are dropped past this many."""


@dataclass
class CompiledForce:
    """A cached compile: the executable (None when every root is an argument) and, per
    root, where its value comes from: ("result", i) or ("argument", j)."""

    executable: Executable | None
    sources: list[tuple[str, int]]

    def __post_init__(self):
        self.results_in_order = self.sources == [("result", i) for i in range(len(self.sources))]
        """Root i is result i (a staged step's call): the results commit without lookups."""


class PendingResults:
    """A pending effect standing for every result of one multi-result node (a replayed
    compiled step's call, whose results are the bases it writes and the gradients it
    assigns): forcing one result forces them all."""

    __slots__ = ("node", "device")

    def __init__(self, node: Node, device: str):
        self.node, self.device = node, device


class Engine:
    """The one engine of the process (`ENGINE`)."""

    def __init__(self):
        self.compiled: dict[tuple, CompiledForce] = {}
        self.pending: dict[int, object] = {}
        """Bases written in place since the last step and `PendingResults`, in program
        order (id -> entry)."""
        self.generator = rng.Generator()
        self.staging = None
        """The `staging.Staging` recording a step function, or None."""
        self.state_changes = 0
        """Advances whenever a base gets a new recipe or a tensor a new `.grad`: while it
        stands still, a compiled step knows the state it left is unchanged."""
        self.reset_stats()

    def reset_stats(self) -> None:
        self.stats = {"compiles": 0, "cache_hits": 0, "launches": 0}

    def add_pending(self, entry: object) -> None:
        self.pending[id(entry)] = entry
        if len(self.pending) > PENDING_PRUNE_AT:  # a loop that reads everything, never marking steps
            self.pending = {k: e for k, e in self.pending.items() if not e.node.materialized}

    def force(self, nodes: Sequence[Node], device: str, what: object = "a value") -> None:
        """Materialize `nodes` (and every sibling of a multi-result op among them). `what`
        names the value read in errors: a description, or the tensor itself (described
        only when an error needs it)."""
        for node in nodes:
            if node.op in IDENTITY_OPS and node.inputs and node.inputs[0].value is not None:
                node.set_value(node.inputs[0].value)  # a view of a value: no graph to run
        roots = _with_siblings([n for n in nodes if n.value is None])
        if not roots:
            return
        if self.staging is not None:
            raise HostReadInCompileError(
                f"strata.lazy.compile: reading {_described(what)} while staging a step function; return it "
                f"from the function and read it after the call"
            )
        call = _whole_call(roots)
        if call is not None:
            arguments, key = _call_key(call, device)
            values = [n.value for n in arguments]
            if any(v is None for v in values) and not all(n.is_graph_input() for n in arguments):
                call = None  # an operand is still pending: its recipe belongs in the graph
        if call is None:
            order = graphs.closure(roots, Node.is_graph_input)
            arguments = [n for n in order if n.is_graph_input()]
            key = (TARGETS[device], graphs.structure_key(order, roots, Node.is_graph_input))
            values = [n.value for n in arguments]
        if any(v is None for v in values):  # random nodes: their samples are drawn now
            values = [_drawn(n) if v is None else v for n, v in zip(arguments, values)]
        compiled = self.compiled.get(key)
        if compiled is None:
            if call is not None:
                order = [*arguments, call, *roots]  # `graphs.closure`'s order of this graph
            compiled = self._compile(order, roots, arguments, device)
            self.compiled[key] = compiled
        elif compiled.executable is not None:
            self.stats["cache_hits"] += 1
        results: tuple = ()
        if compiled.executable is not None:
            try:
                results = compiled.executable(*values)
            except StrataError as e:
                raise LazyExecutionError(f"strata.lazy: running the graph for {_described(what)} failed: {e}") from None
            self.stats["launches"] += 1
        if compiled.results_in_order:
            set_results(roots, results)
            return
        for root, (kind, index) in zip(roots, compiled.sources):
            root.set_value(results[index] if kind == "result" else values[index])

    def _compile(self, order: list[Node], roots: list[Node], arguments: list[Node], device: str) -> CompiledForce:
        graph = Graph("lazy_force")
        inputs = {id(n): graph.input(f"arg{i}", n.shape, n.dtype) for i, n in enumerate(arguments)}
        argument_of = {t.value: i for i, t in enumerate(inputs.values())}
        values = graphs.build(graph, order, Node.is_graph_input, lambda n: inputs[id(n)])
        outputs, sources = [], []
        for root in roots:
            value = values[id(root)]
            if value.value in argument_of:
                sources.append(("argument", argument_of[value.value]))
                continue
            if value not in outputs:
                outputs.append(value)
            sources.append(("result", outputs.index(value)))
        if not outputs:
            return CompiledForce(None, sources)
        graph.output(*outputs)
        try:
            executable = compile_module(graph.build(), target=TARGETS[device])
        except StrataError as e:
            raise LazyExecutionError(f"strata.lazy: compiling the forced graph failed: {e}") from None
        self.stats["compiles"] += 1
        return CompiledForce(executable, sources)

    def mark_step(self) -> None:
        """Force every pending effect, then start a new step."""
        by_device: dict[str, list[Node]] = {}
        for entry in self.pending.values():
            if entry.node.value is None:  # most are computed, forced with a value read this step
                by_device.setdefault(entry.device, []).append(entry.node)
        for device, nodes in by_device.items():
            self.force(nodes, device, "the pending effects of mark_step()")
        self.pending.clear()


def _described(what: object) -> str:
    return what if isinstance(what, str) else describe(what)


def _drawn(node: Node) -> np.ndarray:
    """The samples of a random node, drawn now (the first force that needs them)."""
    node.set_value(rng.generate(node.payload, node.shape, node.dtype))
    return node.value


def _with_siblings(nodes: list[Node]) -> list[Node]:
    """`nodes` plus the other results of every multi-result op among them, in order."""
    if len(nodes) == 1:  # the common read of one value (its siblings, computed only with it, are not either)
        return list(nodes[0].siblings or nodes)
    roots: list[Node] = []
    seen: set[int] = set()
    for node in nodes:
        for member in node.siblings or (node,):
            if id(member) not in seen and member.value is None:
                seen.add(id(member))
                roots.append(member)
    return roots


def _whole_call(roots: list[Node]) -> Node | None:
    """The multi-result op whose results are exactly `roots`, in order (a staged step's
    call). Where its operands are all graph inputs (the step replayed on computed state),
    `Engine.force` compiles that one op, known without walking the graph."""
    first = roots[0]
    return first.inputs[0] if first.op == "item" and roots == first.siblings else None


def _call_key(call: Node, device: str) -> tuple[list[Node], tuple]:
    """(arguments, cache key) of forcing every result of `call`. The key names the op by
    its parameters and its arguments by their aliasing pattern (None when all differ, the
    usual case) and their shapes and dtypes: what `structure_key` would spell out node by
    node, in a form of its own. A "call" has one parameter, the id of the function it
    inlines (an int: nothing to canonicalize), which also fixes the operands' shapes and
    dtypes."""
    arguments = list(call.inputs)
    pattern = None
    if len(set(arguments)) < len(arguments):
        position: dict[int, int] = {}
        pattern = tuple(position.setdefault(id(n), len(position)) for n in call.inputs)
        arguments = list({id(n): n for n in call.inputs}.values())
    if call.op == "call":
        return arguments, (TARGETS[device], "whole call", call.params, call.recompute, pattern)
    types = tuple((n.shape, n.dtype) for n in arguments)
    return arguments, (TARGETS[device], "whole call", call.op, graphs.canonical(call.params), call.recompute, pattern, types)


ENGINE = Engine()

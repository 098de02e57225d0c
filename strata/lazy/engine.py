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
parameters (a "call" names its function by `graphs.function_id`) with the arguments'
aliasing pattern, shapes and dtypes. A hit runs the executable compiled before; a miss builds the
graph, compiles it with `strata.compile` and stores it.

Failure: a compile or run that fails commits nothing (no node receives a value), raises
`LazyExecutionError`, and leaves every pending recipe pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from strata.api import Executable, compile as compile_module
from strata.frontends.builder import Graph
from strata.lazy import graphs, rng
from strata.lazy.errors import HostReadInCompileError, LazyExecutionError
from strata.lazy.node import IDENTITY_OPS, Node
from strata.support.errors import StrataError

TARGETS = {"cpu": "cpu", "cuda": "cuda"}
"""Device name -> the strata.compile target that runs its graphs."""

PENDING_PRUNE_AT = 1024
"""Pending bases whose values were computed meanwhile are dropped past this many."""


@dataclass
class CompiledForce:
    """A cached compile: the executable (None when every root is an argument) and, per
    root, where its value comes from: ("result", i) or ("argument", j)."""

    executable: Executable | None
    sources: list[tuple[str, int]]


class Engine:
    """The one engine of the process (`ENGINE`)."""

    def __init__(self):
        self.compiled: dict[tuple, CompiledForce] = {}
        self.pending: dict[int, object] = {}
        """Bases written in place since the last step, in program order (id -> base)."""
        self.generator = rng.Generator()
        self.staging = None
        """The `staging.Staging` recording a step function, or None."""
        self.reset_stats()

    def reset_stats(self) -> None:
        self.stats = {"compiles": 0, "cache_hits": 0, "launches": 0}

    def add_pending(self, base: object) -> None:
        self.pending[id(base)] = base
        if len(self.pending) > PENDING_PRUNE_AT:  # a loop that reads everything, never marking steps
            self.pending = {k: b for k, b in self.pending.items() if not b.node.materialized}

    def force(self, nodes: Sequence[Node], device: str, what: str = "a value") -> None:
        """Materialize `nodes` (and every sibling of a multi-result op among them)."""
        for node in nodes:
            if node.op in IDENTITY_OPS and node.inputs and node.inputs[0].materialized:
                node.set_value(node.inputs[0].value)  # a view of a value: no graph to run
        roots = _with_siblings([n for n in nodes if not n.materialized])
        if not roots:
            return
        if self.staging is not None:
            raise HostReadInCompileError(
                f"strata.lazy.compile: reading {what} while staging a step function; return it "
                f"from the function and read it after the call"
            )
        call = _whole_call(roots)
        if call is not None:
            order, arguments, key = _call_graph(call, roots, device)
        else:
            order = graphs.closure(roots, Node.is_graph_input)
            arguments = [n for n in order if n.is_graph_input()]
            key = (TARGETS[device], graphs.structure_key(order, roots, Node.is_graph_input))
        for node in arguments:
            if node.value is None:  # a random node: draw its samples now
                node.set_value(rng.generate(node.payload, node.shape, node.dtype))
        compiled = self.compiled.get(key)
        if compiled is None:
            compiled = self._compile(order, roots, arguments, device)
            self.compiled[key] = compiled
        elif compiled.executable is not None:
            self.stats["cache_hits"] += 1
        results: tuple = ()
        if compiled.executable is not None:
            try:
                results = compiled.executable(*(n.value for n in arguments))
            except StrataError as e:
                raise LazyExecutionError(f"strata.lazy: running the graph for {what} failed: {e}") from None
            self.stats["launches"] += 1
        for root, (kind, index) in zip(roots, compiled.sources):
            root.set_value(results[index] if kind == "result" else arguments[index].value)

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
        for base in self.pending.values():
            if not base.node.materialized:  # most are, forced with a value read this step
                by_device.setdefault(base.device, []).append(base.node)
        for device, nodes in by_device.items():
            self.force(nodes, device, "the pending effects of mark_step()")
        self.pending.clear()


def _with_siblings(nodes: list[Node]) -> list[Node]:
    """`nodes` plus the other results of every multi-result op among them, in order."""
    if len(nodes) == 1:  # the common read of one value: nothing to deduplicate
        return [member for member in nodes[0].siblings or nodes if not member.materialized]
    roots: list[Node] = []
    seen: set[int] = set()
    for node in nodes:
        for member in node.siblings or (node,):
            if id(member) not in seen and not member.materialized:
                seen.add(id(member))
                roots.append(member)
    return roots


def _whole_call(roots: list[Node]) -> Node | None:
    """The multi-result op whose results are exactly `roots`, in order, when all of its
    inputs are graph inputs (a staged step replayed on computed state): the forced graph
    is then that one op, known without walking it."""
    first = roots[0]
    if first.op != "item" or tuple(roots) != first.siblings:
        return None
    multi = first.inputs[0]
    return multi if all(n.is_graph_input() for n in multi.inputs) else None


def _call_graph(call: Node, roots: list[Node], device: str) -> tuple[list[Node], list[Node], tuple]:
    """(closure, arguments, cache key) of forcing every result of `call`, the closure in
    `graphs.closure`'s order. The key names the op by its parameters (a "call" names its
    function by id) and its arguments by the aliasing pattern, shapes and dtypes: what
    `structure_key` would spell out node by node, in a form of its own."""
    arguments: list[Node] = []
    position: dict[int, int] = {}
    pattern = []
    for node in call.inputs:
        index = position.setdefault(id(node), len(arguments))
        if index == len(arguments):
            arguments.append(node)
        pattern.append(index)
    types = tuple((n.shape, n.dtype) for n in arguments)
    key = (TARGETS[device], "whole call", call.op, graphs.canonical(call.params), call.recompute, tuple(pattern), types)
    return [*arguments, call, *roots], arguments, key


ENGINE = Engine()

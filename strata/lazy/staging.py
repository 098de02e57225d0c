"""`strata.lazy.compile(fn)`: stage a step function once, replay it as one lazy call.

The first call with a new signature runs `fn` in staging mode: ops record nodes as usual,
but reading a value on the host is an error, every read of live state (a base's recipe at
call start) and every write, gradient assignment and random draw is logged. The nodes the
call created become one graph function (`@lazy_step`): its arguments are the state it
read, the call's arguments and its random draws; its results are what `fn` returned, the
new recipe of every base it wrote, and every `.grad` it assigned. The staged effects are
then undone and the call is replayed like every later one:

- one multi-result "call" node (inlined into whatever graph forces it, so forward,
  backward and optimizer update compile together, once);
- each written base gets its result as new recipe, its version advanced as many times as
  `fn` wrote it; assigned gradients are set; returned tensors are wrapped.

Python runs once per signature: control flow and Python numbers are frozen at staging.
A variant is keyed by the arguments' shapes, dtypes and view steps (numbers by value) and
guarded by the shapes of the state read, which gradients were None, and the aliasing of
the tensors it touches (which arguments and captured bases are one base or share a
recipe: staging reads a shared recipe once, so the function assumes the sharing); a call
matching no variant stages a new one. A captured tensor that is also passed as an
argument at staging is taken to be that argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from strata.frontends.builder import Graph
from strata.lazy import graphs, node as nodes
from strata.lazy.engine import ENGINE
from strata.lazy.errors import InvalidTraceTensorEscapeError, LazyError
from strata.lazy.node import Node, record_multi
from strata.lazy.rng import RandomKey
from strata.lazy.tensor import Base, Tensor


class Staging:
    """The log of one staging run (see the module docstring)."""

    def __init__(self, args: tuple):
        self.start = next(nodes._serials)
        self.arg_bases = {id(a._base): i for i, a in enumerate(args) if isinstance(a, Tensor)}
        self.reads: dict[int, Base] = {}
        """id(node at call start) -> the base it was read from."""
        self.bases_read: dict[int, Base] = {}
        """id(base) -> every base read at call start, also those sharing a recipe read before."""
        self.writes: dict[int, list] = {}
        """id(base) -> [base, recipe at call start, version at call start, writes]."""
        self.grads: dict[int, tuple[Tensor, Tensor | None]] = {}
        """id(holder) -> (holder, .grad at call start)."""
        self.random_draws = 0
        self.pending = dict(ENGINE.pending)
        """The engine's pending effects at call start: the staged ones are not real."""

    def made(self, node: Node) -> bool:
        return node.serial > self.start

    def saw(self, base: Base) -> None:
        node = base.node
        if id(base) not in self.writes and (not self.made(node) or node.op == "storage"):
            self.reads.setdefault(id(node), base)
            self.bases_read.setdefault(id(base), base)

    def wrote(self, base: Base) -> None:
        entry = self.writes.setdefault(id(base), [base, base.node, base.version, 0])
        entry[3] += 1

    def grad_changes(self, holder: Tensor) -> None:
        self.grads.setdefault(id(holder), (holder, holder.grad))

    def random_key(self, kind: str, p: float) -> RandomKey:
        self.random_draws += 1
        return RandomKey(ENGINE.generator.seed, 0, self.random_draws, kind, p)

    def persistent_writes(self) -> list[list]:
        """Writes to state that outlives the call (not to values the call made)."""
        return [w for w in self.writes.values() if not self.made(w[1]) or w[1].op == "storage"]

    def undo(self) -> None:
        for base, node, version, _ in self.writes.values():
            base.node, base.version = node, version
        for holder, grad in self.grads.values():
            holder._grad = grad
        ENGINE.pending = self.pending


@dataclass
class Region:
    """One staged variant: the function, where its arguments come from, its effects."""

    function: object
    function_id: int
    """`graphs.function_id` of the function's structure: the call node's parameter."""
    types: list[tuple]
    """(shape, dtype) of each result of the function."""
    sources: list[tuple]
    """Per argument of the function: ("arg", i), ("base", base), ("random", op nonce,
    kind, p, shape, dtype) or ("constant", node)."""
    writes: list[tuple[Base | int, int]]
    """(the base written, or the index of the argument whose base it is; how many times)."""
    grads: list[tuple[Tensor, bool]]
    """(holder, whether the call leaves it a gradient): results after the writes."""
    touched: list[Base | int]
    """The bases the variant reads or writes as the call finds them (an argument by its
    index): their aliasing is part of the guard."""
    outputs: int
    container: object
    device: str
    guard: tuple = ()
    """`_guard` of the state the variant was staged on."""


class CompiledFunction:
    """What `strata.lazy.compile(fn)` returns: call it like `fn`."""

    def __init__(self, fn):
        self.fn = fn
        self.variants: dict[tuple, list[Region]] = {}
        self.__name__ = getattr(fn, "__name__", "step")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args):
        signature = tuple(_signature(a) for a in args)
        variants = self.variants.get(signature, [])
        region = next((r for r in variants if r.guard == _guard(r, args)), None)
        if region is None:
            region = self._stage(args)
        # At most one guard matches and a loop calls the same variant: check it first next time.
        self.variants[signature] = [region, *(r for r in variants if r is not region)]
        return _replay(region, args)

    def _stage(self, args: tuple) -> Region:
        if ENGINE.staging is not None:
            raise LazyError(f"strata.lazy.compile: {self.__name__} was called while another step function is being staged")
        if any(isinstance(a, Tensor) and a._base.leaf is not None for a in args):
            raise LazyError(f"strata.lazy.compile: {self.__name__}: leaves that require grad must be state the function reads, not arguments")
        staging = Staging(args)
        ENGINE.staging = staging
        try:
            returned = self.fn(*args)
        finally:
            ENGINE.staging = None
        try:
            region = _build(staging, returned, args, self.__name__)
        finally:
            staging.undo()
        region.guard = _guard(region, args)  # undone: the state as the call found it
        return region


def _build(staging: Staging, returned: object, args: tuple, name: str) -> Region:
    """The staged nodes as @lazy_step, with where its arguments come from and its effects."""
    outputs, container = _flatten(returned, name)
    writes = staging.persistent_writes()
    grads = [(holder, holder.grad) for holder, _ in staging.grads.values()]
    roots = [t.node for t in outputs] + [w[0].node for w in writes] + [g.node for _, g in grads if g is not None]

    def is_argument(n: Node) -> bool:
        return id(n) in staging.reads or not staging.made(n) or n.op in nodes.INPUT_OPS

    order = graphs.closure(roots, is_argument)
    arguments = [n for n in order if is_argument(n)]
    sources = [_source(n, staging, name) for n in arguments]
    graph = Graph("lazy_step")
    inputs = {id(n): graph.input(f"arg{i}", n.shape, n.dtype) for i, n in enumerate(arguments)}
    values = graphs.build(graph, order, is_argument, lambda n: inputs[id(n)])
    graph.output(*(values[id(r)] for r in roots))
    function = graph.build().body.block.first_op
    function_id = graphs.function_id(("step", graphs.structure_key(order, roots, is_argument)))
    types = nodes.infer_types("call", arguments, (), function)
    targets = [(staging.arg_bases.get(id(w[0]), w[0]), w[3]) for w in writes]
    grad_flags = [(holder, g is not None) for holder, g in grads]
    captured = {id(b): b for b in [*staging.bases_read.values(), *(w[0] for w in writes)] if id(b) not in staging.arg_bases}
    touched = [i for i, a in enumerate(args) if isinstance(a, Tensor)] + list(captured.values())
    device = next((a.device for a in args if isinstance(a, Tensor)), outputs[0].device if outputs else "cpu")
    return Region(function, function_id, types, sources, targets, grad_flags, touched, len(outputs), container, device)


def _source(node: Node, staging: Staging, name: str) -> tuple:
    if id(node) in staging.reads:
        base = staging.reads[id(node)]
        index = staging.arg_bases.get(id(base))
        return ("arg", index) if index is not None else ("base", base)
    if node.op == "random" and staging.made(node):
        key = node.payload
        return ("random", key.op, key.kind, key.p, node.shape, node.dtype)
    if node.materialized:
        return ("constant", node)
    raise InvalidTraceTensorEscapeError(
        f"strata.lazy.compile: {name} uses a pending value ({node.op}, {node.shape} {node.dtype}) that is "
        f"neither an argument nor live tensor state"
    )


def _replay(region: Region, args: tuple):
    draw = ENGINE.generator.next_draw() if any(s[0] == "random" for s in region.sources) else 0
    inputs = []
    for source in region.sources:
        kind = source[0]
        if kind == "arg":
            inputs.append(args[source[1]]._base.read())
        elif kind == "base":
            inputs.append(source[1].read())
        elif kind == "random":
            _, op, random_kind, p, shape, dtype = source
            key = RandomKey(ENGINE.generator.seed, draw, op, random_kind, p)
            inputs.append(Node("random", (), (("kind", random_kind), ("p", p)), shape, dtype, payload=key))
        else:
            inputs.append(source[1])
    params = {"function": region.function_id}
    results = iter(record_multi("call", inputs, params, payload=region.function, types=region.types))
    outputs = [Tensor.wrap(next(results), region.device) for _ in range(region.outputs)]
    for target, count in region.writes:
        base = args[target]._base if isinstance(target, int) else target
        base.node = next(results)
        base.version += count
        ENGINE.add_pending(base)
    for holder, has_gradient in region.grads:
        holder.grad = Tensor.wrap(next(results), holder.device) if has_gradient else None
        if holder.grad is not None:
            ENGINE.add_pending(holder.grad._base)
    if region.container is None:
        return None
    return outputs[0] if region.container == "single" else region.container(outputs)


def _signature(arg: object) -> tuple:
    if isinstance(arg, Tensor):
        return ("tensor", arg._base.node.shape, arg._base.node.dtype, arg._steps, arg._detached, arg.device)
    return ("value", type(arg).__name__, repr(arg))


def _guard(region: Region, args: tuple) -> tuple:
    """What a variant assumes of live state: the shapes of the state it reads, which of
    the gradients it assigns are None, and the aliasing of the bases it touches."""
    state = tuple((s[1].node.shape, s[1].node.dtype) for s in region.sources if s[0] == "base")
    grads = tuple(holder.grad is None for holder, _ in region.grads)
    return state + grads + _aliasing(region.touched, args)


def _aliasing(touched: list[Base | int], args: tuple) -> tuple:
    """Per touched base, the first touched one that is the same base and the first that
    has the same recipe; () when all recipes differ (then all bases do), the usual case."""
    bases = [args[t]._base if isinstance(t, int) else t for t in touched]
    recipes = [id(b.node) for b in bases]
    if len(set(recipes)) == len(recipes):
        return ()
    return ("aliasing", _first_equal([id(b) for b in bases]), _first_equal(recipes))


def _first_equal(keys: list[int]) -> tuple[int, ...]:
    first: dict[int, int] = {}
    return tuple(first.setdefault(k, i) for i, k in enumerate(keys))


def _flatten(returned: object, name: str) -> tuple[list[Tensor], object]:
    if returned is None:
        return [], None
    if isinstance(returned, Tensor):
        return [returned], "single"
    if isinstance(returned, (tuple, list)) and all(isinstance(t, Tensor) for t in returned):
        return list(returned), type(returned)
    raise InvalidTraceTensorEscapeError(f"strata.lazy.compile: {name} must return a Tensor, a tuple/list of Tensors or None")


def compile(fn):  # noqa: A001 - PyTorch's name
    """Stage `fn` once per signature into one lazy call (see the module docstring)."""
    return CompiledFunction(fn)

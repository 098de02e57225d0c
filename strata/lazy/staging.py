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
matching no variant stages a new one. A call that finds the state as the variant's last
replay left it (no recipe or gradient replaced since: `ENGINE.state_changes`) knows the
state's part of the guard already. A captured tensor that is also passed as an argument
at staging is taken to be that argument.

A replay makes one node per result and nothing more: gradients stay bare nodes until
`.grad` is read, and one pending effect (`PendingResults`) stands for all the results.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from strata.frontends.builder import Graph
from strata.lazy import graphs, node as nodes
from strata.lazy.engine import ENGINE, PendingResults
from strata.lazy.errors import InvalidTraceTensorEscapeError, LazyError
from strata.lazy.node import Node, multi_results
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
        self.accumulated: dict[int, tuple[Tensor, Tensor]] = {}
        """(holder, its `.grad` at the time) per gradient backward() accumulated into."""
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

    def grad_accumulates(self, holder: Tensor) -> None:
        """backward() adds into `holder`'s existing `.grad` in place: the variant writes
        that tensor, so it holds only while `.grad` is still that tensor."""
        self.accumulated.setdefault(id(holder), (holder, holder._grad))

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
        ENGINE.state_changes += 1
        ENGINE.pending = self.pending


class _Recipe:
    """Stands in `Region.input_holders` where no base holds the argument: a constant's
    node, or None where each call fills in its own (an argument's recipe, a random draw)."""

    __slots__ = ("node",)

    def __init__(self, node: Node | None = None):
        self.node = node


@dataclass
class Region:
    """One staged variant: the function, where its arguments come from, its effects.

    Everything a call needs that does not change from call to call is laid out here once,
    so a replay is a few passes over flat lists (a training step has about 60 arguments
    and 90 results)."""

    function: object
    params: tuple
    """The call node's parameters: the function's `graphs.function_id`."""
    types: list[tuple]
    """(shape, dtype) of each result of the function."""
    input_holders: list[Base | _Recipe]
    """Per argument of the function, what holds its node at call time: the base it reads,
    or a `_Recipe` (a constant, or filled in by `argument_inputs`/`random_inputs`)."""
    argument_inputs: list[tuple[int, int]]
    """(argument position, index of the call argument whose base's recipe it is)."""
    random_inputs: list[tuple]
    """(argument position, op nonce, kind, p, shape, dtype) per random draw."""
    reads: list[Base | int]
    """The bases the function reads (a call argument by its index), for a staging that
    replays this one."""
    state_bases: list[Base]
    """The captured bases it reads: their shapes are part of the guard."""
    write_targets: list[Base | None]
    """Per written base, in result order: the base, or None for a call argument's."""
    argument_writes: list[tuple[int, int]]
    """(position in `write_targets`, index of the call argument whose base it writes)."""
    write_counts: list[int]
    """How many times the function wrote each base: its version advances as much."""
    grad_holders: list[Tensor]
    """The tensors whose `.grad` the function assigns: results after the writes."""
    grads_assigned: list[bool]
    """Per holder, whether the call leaves it a gradient (else None)."""
    accumulated_grads: list[tuple[Tensor, Tensor]]
    """(holder, gradient tensor) per gradient the function accumulates into in place: the
    guard checks `.grad` is still that tensor (a user's `w.grad = None` stages anew)."""
    touched_arguments: list[int]
    touched_captured: list[Base]
    """The call arguments (by index) and captured bases the variant reads or writes: their
    aliasing is part of the guard."""
    outputs: int
    container: object
    device: str
    guard: tuple = ()
    """`_guard` of the state and arguments the variant was staged on."""
    guard_holds_after_replay: bool | None = None
    """Whether `_state_guard` of the state a replay leaves equals the variant's own (None
    where that is not known in advance: the variant was staged on captured bases sharing
    a recipe)."""
    left_at: int = -1
    """`ENGINE.state_changes` after the last replay: while it stands still, the state is
    the one that replay left."""
    left_recipes: set[int] = field(default_factory=set)
    """Ids of the captured bases' recipes as the last replay left them (valid while
    `left_at` holds: the nodes are then still those bases' recipes, alive)."""


class CompiledFunction:
    """What `strata.lazy.compile(fn)` returns: call it like `fn`."""

    def __init__(self, fn):
        self.fn = fn
        self.variants: dict[tuple, list[Region]] = {}
        self.__name__ = getattr(fn, "__name__", "step")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args):
        variants = self.variants.setdefault(tuple(map(_signature, args)), [])
        region = next((r for r in variants if _matches(r, args)), None)
        if region is None:
            region = self._stage(args)
            variants.insert(0, region)
        elif region is not variants[0]:
            # At most one guard matches and a loop calls the same variant: check it first next time.
            variants.remove(region)
            variants.insert(0, region)
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
        left = _left_guard(region)
        region.guard_holds_after_replay = None if left is None else left == region.guard[0]
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
    graph = Graph("lazy_step")
    inputs = {id(n): graph.input(f"arg{i}", n.shape, n.dtype) for i, n in enumerate(arguments)}
    values = graphs.build(graph, order, is_argument, lambda n: inputs[id(n)])
    graph.output(*(values[id(r)] for r in roots))
    function = graph.build().body.block.first_op
    function_id = graphs.function_id(("step", graphs.structure_key(order, roots, is_argument)))
    holders, argument_inputs, random_inputs, reads = [], [], [], []
    for position, node in enumerate(arguments):
        source = _source(node, staging, name)
        if isinstance(source, Base):
            holders.append(source)
            reads.append(source)
            continue
        holders.append(_Recipe(source if isinstance(source, Node) else None))
        if isinstance(source, int):
            reads.append(source)
            argument_inputs.append((position, source))
        elif isinstance(source, tuple):
            random_inputs.append((position, *source))
    targets = [staging.arg_bases.get(id(w[0]), w[0]) for w in writes]
    captured = {id(b): b for b in [*staging.bases_read.values(), *(w[0] for w in writes)] if id(b) not in staging.arg_bases}
    return Region(
        function=function,
        params=(("function", function_id),),
        types=nodes.infer_types("call", arguments, (), function),
        input_holders=holders,
        argument_inputs=argument_inputs,
        random_inputs=random_inputs,
        reads=reads,
        state_bases=[b for b in reads if isinstance(b, Base)],
        write_targets=[None if isinstance(t, int) else t for t in targets],
        argument_writes=[(i, t) for i, t in enumerate(targets) if isinstance(t, int)],
        write_counts=[w[3] for w in writes],
        grad_holders=[holder for holder, _ in grads],
        grads_assigned=[g is not None for _, g in grads],
        accumulated_grads=list(staging.accumulated.values()),
        touched_arguments=[i for i, a in enumerate(args) if isinstance(a, Tensor)],
        touched_captured=list(captured.values()),
        outputs=len(outputs),
        container=container,
        device=next((a.device for a in args if isinstance(a, Tensor)), outputs[0].device if outputs else "cpu"),
    )


def _source(node: Node, staging: Staging, name: str) -> Base | int | tuple | Node:
    """Where an argument of the function comes from at each call: a captured base, the
    base of a call argument (its index), a random draw (op nonce, kind, p, shape, dtype)
    or a constant node."""
    if id(node) in staging.reads:
        base = staging.reads[id(node)]
        index = staging.arg_bases.get(id(base))
        return index if index is not None else base
    if node.op == "random" and staging.made(node):
        key = node.payload
        return (key.op, key.kind, key.p, node.shape, node.dtype)
    if node.materialized:
        return node
    raise InvalidTraceTensorEscapeError(
        f"strata.lazy.compile: {name} uses a pending value ({node.op}, {node.shape} {node.dtype}) that is "
        f"neither an argument nor live tensor state"
    )


def _replay(region: Region, args: tuple):
    """One lazy call node of the region's function; its results become the returned
    tensors, the new recipes of the written bases and the assigned gradients."""
    written = region.write_targets.copy()
    for position, index in region.argument_writes:
        written[position] = args[index]._base
    staging = ENGINE.staging
    if staging is not None:  # called while another step is staged: it reads, writes and assigns state too
        for read in region.reads:
            staging.saw(args[read]._base if isinstance(read, int) else read)
        for base, count in zip(written, region.write_counts):
            for _ in range(count):
                staging.wrote(base)
        for holder in region.grad_holders:
            staging.grad_changes(holder)
    inputs = [holder.node for holder in region.input_holders]
    for position, index in region.argument_inputs:
        inputs[position] = args[index]._base.node
    if region.random_inputs:
        seed, draw = ENGINE.generator.seed, ENGINE.generator.next_draw()
        for position, op, kind, p, shape, dtype in region.random_inputs:
            key = RandomKey(seed, draw, op, kind, p)
            inputs[position] = Node("random", (), (("kind", kind), ("p", p)), shape, dtype, payload=key)
    results = multi_results(Node("call", inputs, region.params, None, None, region.function), region.types)
    device = region.device
    outputs = [Tensor.wrap(node, device) for node in results[: region.outputs]]
    for base, node, count in zip(written, results[region.outputs :], region.write_counts):
        base.node = node
        base.version += count
    gradients = iter(results[region.outputs + len(written) :])
    for holder, assigned in zip(region.grad_holders, region.grads_assigned):
        holder._grad = next(gradients) if assigned else None  # `Tensor.grad` wraps it when read
    ENGINE.state_changes += 1
    region.left_at = ENGINE.state_changes
    region.left_recipes = {id(base.node) for base in region.touched_captured}
    if results:
        ENGINE.add_pending(PendingResults(results[0], device))
    if region.container is None:
        return None
    return outputs[0] if region.container == "single" else region.container(outputs)


def _signature(arg: object) -> tuple:
    if isinstance(arg, Tensor):
        return ("tensor", arg._base.node.shape, arg._base.node.dtype, arg._steps, arg._detached, arg.device)
    return ("value", type(arg).__name__, repr(arg))


def _guard(region: Region, args: tuple) -> tuple:
    """What a variant assumes: `_state_guard` of live state, `_argument_guard` of the call."""
    return _state_guard(region), _argument_guard(region, args)


def _matches(region: Region, args: tuple) -> bool:
    """Whether the call finds what `region` was staged on (equal `_guard`s). A loop finds
    the state exactly as the variant's own last replay left it, whose guard is known."""
    if region.left_at == ENGINE.state_changes and region.guard_holds_after_replay is not None:
        return region.guard_holds_after_replay and _argument_guard(region, args, region.left_recipes) == region.guard[1]
    return _state_guard(region) == region.guard[0] and _argument_guard(region, args) == region.guard[1]


def _state_guard(region: Region) -> tuple:
    """The shapes of the captured state the variant reads, which of the gradients it
    assigns are None, and which captured bases share a recipe (() when none do, the
    usual case; the bases themselves are distinct)."""
    types = tuple([(base.node.shape, base.node.dtype) for base in region.state_bases])
    grads = tuple([holder._grad is None for holder in region.grad_holders])
    grads += tuple([holder._grad is grad for holder, grad in region.accumulated_grads])
    recipes = [base.node for base in region.touched_captured]
    if len(set(recipes)) == len(recipes):
        return types, grads, ()
    return types, grads, _first_equal([id(recipe) for recipe in recipes])


def _left_guard(region: Region) -> tuple | None:
    """`_state_guard` of the state a replay leaves: the written bases hold new recipes
    (of the function's result types), every assigned gradient is set or None as the
    function left it. Known when the captured recipes differ at staging: new recipes do
    not change that."""
    types, _, shared = region.guard[0]
    if shared:
        return None
    first_write = region.outputs
    write_types = {id(b): region.types[first_write + i] for i, b in enumerate(region.write_targets) if b is not None}
    left_types = tuple(write_types.get(id(base), t) for base, t in zip(region.state_bases, types))
    assigned = {id(holder) for holder in region.grad_holders}
    grads = tuple(not a for a in region.grads_assigned) + tuple(id(h) not in assigned for h, _ in region.accumulated_grads)
    return left_types, grads, ()


def _argument_guard(region: Region, args: tuple, captured_recipes: set[int] | None = None) -> tuple:
    """How the call's tensor arguments alias each other and the captured bases: () when
    their recipes differ from each other and from the captured ones (the usual case),
    else, per touched base (arguments first), the first touched one that is the same
    base and the first that has the same recipe. `captured_recipes`: the ids of the
    captured bases' recipes, where the caller knows them."""
    bases = [args[i]._base for i in region.touched_arguments]
    if not bases:
        return ()
    recipes = [id(base.node) for base in bases]
    if captured_recipes is None:
        captured_recipes = {id(base.node) for base in region.touched_captured}
    if len(set(recipes)) == len(recipes) and captured_recipes.isdisjoint(recipes):
        return ()
    touched = bases + region.touched_captured
    return _first_equal([id(base) for base in touched]), _first_equal([id(base.node) for base in touched])


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

"""`fuse-elementwise`: maximal groups of elementwise ops become one `graph.fused` op.

Before (4 kernels):

    %0 = graph.mul %x, %a : ...
    %1 = graph.add %0, %b : ...
    %2 = graph.relu %1 : ...
    %3 = graph.matmul %2, %w : ...
    %4 = graph.tanh %1 : ...

After (2 kernels; %1 is computed once per element, the group has two outputs):

    %f:2 = graph.fused %x, %a, %b : (...) -> (tensor<..>, tensor<..>) {
    ^bb0(%x1, %a1, %b1):
      %0 = graph.mul %x1, %a1 ...   %1 = graph.add %0, %b1 ...
      %2 = graph.relu %1 ...        %4 = graph.tanh %1 ...
      graph.yield %2, %4
    }
    %3 = graph.matmul %f#0, %w : ...

Rules: members are elementwise ops (broadcasting operands included) whose results all
have one shape; graph.dropout is a barrier (its random stream is never merged or moved);
an op joins a group only if that creates no cycle (the group does not depend on the op's
operands through an op outside it; more generally, two groups merge only if no path
leads from one to the other through an op outside both, followed through the groups'
ancestors transitively: a group's consumers depend on all of its inputs, including those
of members that joined later), and only while the group has fewer than
MAX_GROUP_OPS members. A value used outside its group becomes a result.
Numerics are unchanged: each op keeps its own scalar rule and rounding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32, f64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from strata.dialects import graph
from strata.dialects.graph_fused import ROW_ANCHORS, fusible


MAX_GROUP_OPS = 64
"""The size (in ops) at which a fused group (one kernel) closes; a longer chain becomes
several kernels. LLVM's O3 time grows faster than linearly in a kernel's size (a 2000-op
chain as one kernel: 15 of its 32 s of compile time); with the cap, compile time per op
stays flat (benchmarks/compile_scaling.py). The benchmarks' and models' groups are far
smaller (an MLP epilogue: 2-3 ops, GELU or layernorm chains: 10-30), so they stay whole;
each cut costs one store and one load of the values crossing it. A group at the cap may
still take ops, up to MAX_GROUP_OPS + MAX_GROUP_OPS // 4, while more than one of its
values is needed by ops outside it: the cut then passes one value where the program
allows (the CPU loops recompute a kernel's shared work for each of its outputs)."""


def is_epilogue_root(op: Operation) -> bool:
    """A matmul or a row op may head a group; its elementwise consumers become its
    epilogue (a row op also takes an elementwise group computing its x as prologue)."""
    if isinstance(op, ROW_ANCHORS):
        # Row kernels compute in f32/f64 tiles; f16/bf16 groups keep separate kernels.
        return op.results[0].type.element_type in (f32, f64)
    return isinstance(op, graph.MatmulOp)


@dataclass
class Grouping:
    """Union-find over fusible ops. `ancestors[v]` holds the groups a value depends on,
    other than its own (through any path): an op may join group C only if none of its
    operands depends on C through something outside C, which is what would make the
    fused op depend on itself. These sets are per value and fixed when the value is
    visited, while a group keeps taking members (and their inputs): `may_merge` therefore
    follows `group_ancestors` transitively before any two groups merge."""

    epilogues: bool = True
    max_ops: int = MAX_GROUP_OPS
    parent: dict[Operation, Operation] = field(default_factory=dict)
    members: dict[Operation, list[Operation]] = field(default_factory=dict)
    """The members of each group, by its root."""
    ancestors: dict[SSAValue, frozenset[Operation]] = field(default_factory=dict)
    group_ancestors: dict[Operation, set[Operation]] = field(default_factory=dict)
    rooted: set[Operation] = field(default_factory=set)
    """Groups headed by a matmul (two of them never merge)."""
    visited: set[Operation] = field(default_factory=set)
    """The ops visited so far (all of them precede the op being visited)."""

    def find(self, op: Operation) -> Operation:
        while self.parent[op] is not op:
            self.parent[op] = self.parent[self.parent[op]]
            op = self.parent[op]
        return op

    def roots(self, ops) -> set[Operation]:
        return {self.find(g) for g in ops}

    def group_of(self, value: SSAValue) -> Operation | None:
        owner = value.owner
        return self.find(owner) if owner in self.parent else None

    def upstream(self, value: SSAValue) -> set[Operation]:
        """The groups `value` depends on, its own group included."""
        own = self.group_of(value)
        return self.roots(self.ancestors.get(value, frozenset())) | ({own} if own is not None else set())

    def visit(self, op: Operation) -> None:
        self.visited.add(op)
        if self.epilogues and is_epilogue_root(op):
            self.parent[op] = op
            self.members[op] = [op]
            self.rooted.add(op)
            if isinstance(op, ROW_ANCHORS):
                self.take_prologue(op)
        elif fusible(op):
            self.parent[op] = op
            self.members[op] = [op]
            for value in op.operands:
                self.try_join(op, value)
        below = set().union(*(self.upstream(v) for v in op.operands)) if op.operands else set()
        own = self.group_of(op.results[0]) if op in self.parent else None
        for r in op.results:
            self.ancestors[r] = frozenset(below - {own})
        if own is not None:
            self.group_ancestors.setdefault(own, set()).update(below - {own})

    def take_prologue(self, op: Operation) -> None:
        """Merge the group computing a row op's x into the row op's group when all it
        computes is that x (of x's shape, read by nothing else)."""
        source = self.group_of(op.operands[0])
        if source is None or source in self.rooted or not self.same_shape(source, op):
            return
        if not self.may_grow(source, op) or not self.may_merge(source, op):
            return
        members = self.members[source]
        inside = set(members)
        for member in members:
            for use in member.results[0].uses:
                if use.operation not in inside and not (use.operation is op and use.index == 0):
                    return
        self.parent[source] = op
        self.members[op] = self.members.pop(source) + self.members[op]
        self.group_ancestors[op] = self.group_ancestors.pop(source, set())

    def try_join(self, op: Operation, value: SSAValue) -> None:
        candidate, root = self.group_of(value), self.find(op)
        if candidate is None or candidate is root or not self.same_shape(candidate, op):
            return
        if not self.may_grow(candidate, root):
            return
        if (root in self.rooted or candidate in self.rooted) and root is not op:
            # A matmul's group takes single ops after it (its epilogue), never another
            # group, whose members would run before the matmul.
            return
        if any(candidate in self.roots(self.ancestors.get(v, frozenset())) for v in op.operands):
            return
        if root in self.roots(self.group_ancestors.get(candidate, set())):
            return
        if not self.may_merge(candidate, root):
            return
        self.parent[root] = candidate
        self.members[candidate] += self.members.pop(root)
        merged = self.group_ancestors.pop(root, set()) | self.group_ancestors.get(candidate, set())
        self.group_ancestors[candidate] = merged

    def may_merge(self, a: Operation, b: Operation) -> bool:
        """Whether groups `a` and `b` (roots) may become one fused op: no path leads from
        one to the other through an op outside both (the fused op would consume its own
        result). The checks in `try_join` only see what each value depends on itself;
        a consumer of a fused op depends on all of the group's inputs, including those
        that members merged later brought in, so this follows the groups' ancestors
        transitively."""
        return not self.reaches(a, b) and not self.reaches(b, a)

    def reaches(self, source: Operation, target: Operation) -> bool:
        """Whether a path leads from group `source` to group `target` through an op
        outside both (among the ops visited so far). Positions bound nothing here: a
        group's members may lie far apart, so a path through groups may go backwards in
        the block (a late member consumes `source`, an early one feeds `target`)."""
        pair = (source, target)
        small_source = len(self.members[source]) <= len(self.members[target])
        if small_source and not self.read_outside(source, pair):
            return False  # e.g. `source` is the op being visited: nothing reads it yet
        stack: list[Operation] = []
        for member in self.members[target]:
            for value in member.operands:
                owner = value.owner
                if owner in self.parent and self.find(owner) in pair:
                    continue
                stack.extend(self.upstream(value))
        if not stack or (not small_source and not self.read_outside(source, pair)):
            return False
        seen: set[Operation] = set()
        while stack:
            group = stack.pop()
            if group in seen or group is target:
                continue
            if group is source:
                return True
            seen.add(group)
            stack.extend(self.roots(self.group_ancestors.get(group, ())))
        return False

    def read_outside(self, group: Operation, pair: tuple[Operation, Operation]) -> bool:
        """Whether an op visited so far, outside both groups of `pair`, reads `group`."""
        return any(
            use.operation in self.visited and (use.operation not in self.parent or self.find(use.operation) not in pair)
            for member in self.members[group] for r in member.results for use in r.uses
        )  # fmt: skip

    def may_grow(self, group: Operation, other: Operation) -> bool:
        """Whether `group` may take the group `other` (both roots) without breaking the
        cap (MAX_GROUP_OPS: its slack only while `group` has several outputs)."""
        size = len(self.members[group]) + len(self.members[other])
        if size <= self.max_ops:
            return True
        return size <= self.max_ops + self.max_ops // 4 and self.open_values(group) > 1

    def open_values(self, group: Operation) -> int:
        """How many of `group`'s values are used by ops outside it."""
        return sum(
            1 for m in self.members[group] for r in m.results
            if any(u.operation not in self.parent or self.find(u.operation) is not group for u in r.uses)
        )  # fmt: skip

    @staticmethod
    def same_shape(group: Operation, op: Operation) -> bool:
        return group.results[0].type.get_shape() == op.results[0].type.get_shape()


def fuse_block(block: Block, epilogues: bool = True, max_ops: int = MAX_GROUP_OPS) -> None:
    grouping = Grouping(epilogues, max(max_ops, 1))
    ops = list(block.ops)
    for op in ops:
        grouping.visit(op)
    members: dict[Operation, list[Operation]] = {}
    for op in ops:
        if op in grouping.parent:
            members.setdefault(grouping.find(op), []).append(op)
    order = {op: i for i, op in enumerate(ops)}
    for group in members.values():
        outputs = group_outputs(group) if len(group) > 1 else []
        if outputs:
            order[replace_with_fused(block, group, outputs)] = order[group[0]]
    stable_topological_sort(block, order)


def group_outputs(group: list[Operation]) -> list[SSAValue]:
    """Member results used outside the group (a group nobody uses is left to dce)."""
    inside = set(group)
    return [r for op in group for r in op.results if any(u.operation not in inside for u in r.uses)]


def replace_with_fused(block: Block, group: list[Operation], outputs: list[SSAValue]) -> graph.FusedOp:
    inside = set(group)
    inputs = list(dict.fromkeys(v for op in group for v in op.operands if v.owner not in inside))
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
    for op in group:
        clone = op.clone(value_mapper=mapping)
        body.add_op(clone)
        mapping.update(zip(op.results, clone.results))
    body.add_op(graph.YieldOp(*(mapping[r] for r in outputs)))
    fused = graph.FusedOp(inputs, [r.type for r in outputs], Region(body))
    block.insert_op_before(fused, group[0])
    for old, new in zip(outputs, fused.outputs):
        old.replace_all_uses_with(new)
    for op in reversed(group):
        block.erase_op(op)
    return fused


def stable_topological_sort(block: Block, order: dict[Operation, int]) -> None:
    """Reorder so every op follows its operands' definitions, otherwise keeping the
    original order (a fused op may need to move after an input defined later)."""
    ops = list(block.ops)
    placed: set[Operation] = set()
    result: list[Operation] = []

    def place(op: Operation) -> None:
        # Depth-first, operands before users, without recursion (a chain of thousands of
        # ops would exhaust Python's stack).
        stack = [(op, False)]
        while stack:
            current, expanded = stack.pop()
            if expanded:
                result.append(current)
                continue
            if current in placed:
                continue
            placed.add(current)
            stack.append((current, True))
            for v in reversed(current.operands):
                owner = v.owner
                if isinstance(owner, Operation) and owner not in placed and owner.parent_block() is block:
                    stack.append((owner, False))

    for op in sorted(ops, key=lambda o: order[o]):
        place(op)
    for op in ops:
        op.detach()
    block.add_ops(result)


@dataclass(frozen=True)
class FuseElementwisePass(ModulePass):
    """Fuse maximal DAGs of elementwise ops (see module docstring)."""

    name = "fuse-elementwise"

    matmul_epilogues: bool = True
    """Also fold elementwise consumers of a matmul into the matmul kernel's store."""

    max_group_ops: int = MAX_GROUP_OPS
    """The most ops one group takes (see MAX_GROUP_OPS)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if isinstance(function, func.FuncOp) and function.body.blocks:
                fuse_block(function.body.block, self.matmul_epilogues, self.max_group_ops)

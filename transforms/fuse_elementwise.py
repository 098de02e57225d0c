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
operands through an op outside it). A value used outside its group becomes a result.
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
    fused op depend on itself."""

    epilogues: bool = True
    parent: dict[Operation, Operation] = field(default_factory=dict)
    ancestors: dict[SSAValue, frozenset[Operation]] = field(default_factory=dict)
    group_ancestors: dict[Operation, set[Operation]] = field(default_factory=dict)
    rooted: set[Operation] = field(default_factory=set)
    """Groups headed by a matmul (two of them never merge)."""

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
        if self.epilogues and is_epilogue_root(op):
            self.parent[op] = op
            self.rooted.add(op)
            if isinstance(op, ROW_ANCHORS):
                self.take_prologue(op)
        elif fusible(op):
            self.parent[op] = op
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
        members = [m for m in self.parent if self.find(m) is source]
        inside = set(members)
        for member in members:
            for use in member.results[0].uses:
                if use.operation not in inside and not (use.operation is op and use.index == 0):
                    return
        self.parent[source] = op
        self.group_ancestors[op] = self.group_ancestors.pop(source, set())

    def try_join(self, op: Operation, value: SSAValue) -> None:
        candidate, root = self.group_of(value), self.find(op)
        if candidate is None or candidate is root or not self.same_shape(candidate, op):
            return
        if (root in self.rooted or candidate in self.rooted) and root is not op:
            # A matmul's group takes single ops after it (its epilogue), never another
            # group, whose members would run before the matmul.
            return
        if any(candidate in self.roots(self.ancestors.get(v, frozenset())) for v in op.operands):
            return
        if root in self.roots(self.group_ancestors.get(candidate, set())):
            return
        self.parent[root] = candidate
        merged = self.group_ancestors.pop(root, set()) | self.group_ancestors.get(candidate, set())
        self.group_ancestors[candidate] = merged

    @staticmethod
    def same_shape(group: Operation, op: Operation) -> bool:
        return group.results[0].type.get_shape() == op.results[0].type.get_shape()


def fuse_block(block: Block, epilogues: bool = True) -> None:
    grouping = Grouping(epilogues)
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
        if op in placed:
            return
        placed.add(op)
        for v in op.operands:
            if isinstance(v.owner, Operation) and v.owner.parent_block() is block:
                place(v.owner)
        result.append(op)

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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if isinstance(function, func.FuncOp) and function.body.blocks:
                fuse_block(function.body.block, self.matmul_epilogues)

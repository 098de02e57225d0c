"""`autodiff`: reverse-mode differentiation of graph functions (contract: docs/interfaces.md).

For each `func.func @f` carrying the unit attribute `graph.differentiate`, adds

    func.func @f_grad(f's arguments..., one cotangent per result of f...)
        -> (f's results..., one gradient per floating-point argument of f)

@f_grad is ordinary graph IR: a clone of f's body (the forward part), then the backward
part, built by walking the forward ops in reverse (a reverse topological order, SSA order
being topological) and applying each op's VJP rule from the per-op registry
(transforms/vjp_rules_*.py). Cotangents reaching a value along several paths are summed
with graph.add; a value that does not depend on a float argument gets no cotangent, so
nothing is computed for it (dead-gradient elimination), and backward ops whose results
end up unused are erased. A float argument no cotangent reaches gets zeros.

Checkpointing (`-p 'autodiff{checkpoint=none}'`): which forward values the backward part
reads from the forward part (saved, live from their forward op into the backward part)
and which it recomputes near their first backward use (copies of the forward ops, made
from recursively resolved operands and shared by later uses):

- "all" (default): every forward value is saved.
- "none": values of cheap ops - elementwise ops (graph.dropout too: its keyed mask
  recomputes bit for bit), graph.reshape and graph.broadcast_to - that have a single
  forward use are recomputed; matmuls, reductions, softmax, norms, attention, embedding,
  cross_entropy and the other shape ops stay saved, and so do branch points (values with
  several forward uses, like a residual stream: recomputing one would pull its whole
  producer chain into the backward part at its first use and keep it live as long).
- "marked": only values of ops marked `graph.checkpoint` (and constants) are saved;
  every other forward value is recomputed (gradient checkpointing: mark one value per
  layer, e.g. the residual stream, and each layer is recomputed during its backward).

Under every policy a forward op carrying the unit attribute `graph.checkpoint` is saved,
and so is a value @f_grad returns (it is live to the end anyway). Copies carry the unit
attribute `graph.recomputed`, which keeps cse from merging them back into the forward
values they copy (that would undo the recomputation).

`saved_forward_values` lists the values a policy keeps live into the backward part.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from strata.dialects import graph
from strata.dialects.graph_base import is_float
from strata.dialects.opinfo import op_info
# The rule modules are imported for their registrations (register_vjp).
from strata.transforms import vjp_rules_elementwise, vjp_rules_nn, vjp_rules_reductions, vjp_rules_shape  # noqa: F401
from strata.transforms.vsla_to_graph import LowerVslaToGraphPass
from strata.transforms.vjp_context import GraphEmitter, VjpContext

DIFFERENTIATE = "graph.differentiate"
CHECKPOINT = "graph.checkpoint"
RECOMPUTED = "graph.recomputed"
"""Marks a recomputed copy, so that cse does not merge it back into the saved original."""
CHEAP_OPS = (graph.ElementwiseOp, graph.ReshapeOp, graph.BroadcastToOp)
"""Ops whose values checkpoint=none recomputes instead of saving."""


def saves_everything(value: OpResult, branch_points: set[SSAValue]) -> bool:
    return False


def recomputes_cheap_single_use(value: OpResult, branch_points: set[SSAValue]) -> bool:
    return isinstance(value.owner, CHEAP_OPS) and value not in branch_points


def recomputes_unmarked(value: OpResult, branch_points: set[SSAValue]) -> bool:
    return not isinstance(value.owner, graph.ConstantOp)


RECOMPUTE_POLICIES = {
    "all": saves_everything,
    "none": recomputes_cheap_single_use,
    "marked": recomputes_unmarked,
}
"""checkpoint option -> whether an unmarked forward value (not a result of f) is recomputed."""
CHECKPOINT_POLICIES = tuple(RECOMPUTE_POLICIES)


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Adds @f_grad for every function marked graph.differentiate."""

    name = "autodiff"

    checkpoint: str = "all"
    """"all": save every forward value; "none": recompute cheap ones (see module doc)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        marked = [f for f in op.ops if isinstance(f, func.FuncOp) and DIFFERENTIATE in f.attributes]
        for function in marked:
            add_gradient_function(op, function, self.checkpoint)


def gradient_name(function: func.FuncOp) -> str:
    return f"{function.sym_name.data}_grad"


def add_gradient_function(module: ModuleOp, forward: func.FuncOp, checkpoint: str = "all") -> func.FuncOp:
    """Build @<f>_grad for `forward` and insert it right after it (vsla ops first become
    the graph ops they stand for, which differentiate)."""
    LowerVslaToGraphPass().apply(None, module)
    if checkpoint not in CHECKPOINT_POLICIES:
        raise DiagnosticException(
            f"autodiff: checkpoint must be one of {', '.join(CHECKPOINT_POLICIES)}, got '{checkpoint}'"
        )
    name = gradient_name(forward)
    if any(isinstance(f, func.FuncOp) and f.sym_name.data == name for f in module.ops):
        raise DiagnosticException(f"autodiff: @{name} already exists in the module")
    gradient = GradientBuilder(forward, RECOMPUTE_POLICIES[checkpoint]).build(name)
    module.body.block.insert_op_after(gradient, forward)
    return gradient


def differentiate(module: ModuleOp, entry: str | None = None, checkpoint: str = "all") -> func.FuncOp:
    """Mark @entry (default: the first function) graph.differentiate and add its gradient."""
    functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
    forward = next((f for f in functions if entry in (None, f.sym_name.data)), None)
    if forward is None:
        raise DiagnosticException(f"autodiff: no function @{entry} in the module")
    forward.attributes[DIFFERENTIATE] = UnitAttr()
    return add_gradient_function(module, forward, checkpoint)


def differentiable_values(arguments: Iterable[BlockArgument], ops: Sequence[Operation]) -> set[SSAValue]:
    """Float values that depend on a float argument: the only ones cotangents flow to."""
    reached: set[SSAValue] = {a for a in arguments if is_float(a.type.element_type)}
    for op in ops:
        if any(v in reached for v in op.operands):
            reached.update(r for r in op.results if is_float(r.type.element_type))
    return reached


@dataclass
class GradientBuilder:
    """Builds one @f_grad: forward clone, reverse sweep, gradients, cleanup."""

    forward: func.FuncOp
    policy: Callable[[OpResult, set[SSAValue]], bool]
    block: Block = field(init=False)
    cotangents: dict[SSAValue, SSAValue] = field(default_factory=dict)
    backward_ops: list[Operation] = field(default_factory=list)
    recomputed: dict[SSAValue, SSAValue] = field(default_factory=dict)
    results: set[SSAValue] = field(default_factory=set)
    branch_points: set[SSAValue] = field(default_factory=set)
    """Forward values with several forward uses."""
    emitter: GraphEmitter = field(init=False)

    def __post_init__(self) -> None:
        signature = self.forward.function_type
        self.block = Block(arg_types=[*signature.inputs.data, *signature.outputs.data])
        self.emitter = GraphEmitter(self.append)
        for arg, primal in zip(self.block.args, self.forward.args):
            arg.name_hint = primal.name_hint
        for i, arg in enumerate(self.cotangent_arguments):
            arg.name_hint = f"d_result{i}"

    @property
    def primal_arguments(self) -> tuple[BlockArgument, ...]:
        return self.block.args[: len(self.forward.args)]

    @property
    def cotangent_arguments(self) -> tuple[BlockArgument, ...]:
        return self.block.args[len(self.forward.args) :]

    def build(self, name: str) -> func.FuncOp:
        primal_ops, results = self.clone_forward()
        self.results = set(results)
        self.branch_points = {r for op in primal_ops for r in op.results if r.uses.get_length() > 1}
        needed = differentiable_values(self.primal_arguments, primal_ops)
        for result, cotangent in zip(results, self.cotangent_arguments):
            if result in needed:
                self.accumulate(result, cotangent)
        for op in reversed(primal_ops):
            self.propagate(op, needed)
        gradients = [
            self.cotangents[arg] if arg in self.cotangents else self.emitter.full(0.0, arg.type)
            for arg in self.primal_arguments
            if is_float(arg.type.element_type)
        ]
        self.block.add_op(func.ReturnOp(*results, *gradients))
        self.erase_dead_backward_ops()
        return func.FuncOp(
            name,
            (self.block.arg_types, [v.type for v in (*results, *gradients)]),
            Region(self.block),
            arg_attrs=self.argument_attributes(),
        )

    def clone_forward(self) -> tuple[list[Operation], list[SSAValue]]:
        """f's body, cloned into @f_grad; the cloned ops and f's results there."""
        mapping: dict[SSAValue, SSAValue] = dict(zip(self.forward.args, self.primal_arguments))
        primal_ops = []
        for op in self.forward.body.block.ops:
            if isinstance(op, func.ReturnOp):
                return primal_ops, [mapping.get(v, v) for v in op.operands]
            primal_ops.append(op.clone(mapping))
            self.block.add_op(primal_ops[-1])
        raise DiagnosticException(f"autodiff: @{self.forward.sym_name.data} has no func.return")

    def propagate(self, op: Operation, needed: set[SSAValue]) -> None:
        """Apply `op`'s VJP rule if its result has a cotangent; accumulate into operands."""
        cotangent = next((self.cotangents[r] for r in op.results if r in self.cotangents), None)
        if cotangent is None:
            return
        rule = op_info(op).vjp
        if rule is None or len(op.results) != 1:
            raise DiagnosticException(
                f"autodiff: '{op.name}' has no VJP rule (differentiate before fusion or lowering)"
            )
        context = VjpContext(self.append, op=op, cotangent=cotangent, forward_value=self.forward_value)
        contributions = rule(context)
        for operand, contribution in zip(op.operands, contributions, strict=True):
            if contribution is not None and operand in needed:
                self.accumulate(operand, contribution)

    def accumulate(self, value: SSAValue, cotangent: SSAValue) -> None:
        if cotangent.type != value.type:
            raise DiagnosticException(
                f"autodiff: a VJP rule produced a cotangent of type {cotangent.type} "
                f"for a value of type {value.type}"
            )
        prior = self.cotangents.get(value)
        self.cotangents[value] = cotangent if prior is None else self.emitter.add(prior, cotangent)

    def append(self, op: Operation) -> None:
        self.block.add_op(op)
        self.backward_ops.append(op)

    def forward_value(self, value: SSAValue) -> SSAValue:
        """`value` for use in the backward part: itself if saved, else a recomputed copy
        (made once, at the first use, from recursively resolved operands)."""
        if not self.recomputes(value):
            return value
        if value not in self.recomputed:
            op = value.owner
            clone = op.clone({v: self.forward_value(v) for v in op.operands})
            clone.attributes[RECOMPUTED] = UnitAttr()
            self.append(clone)
            self.recomputed[value] = clone.results[0]
        return self.recomputed[value]

    def recomputes(self, value: SSAValue) -> bool:
        """Whether the policy recomputes `value`; f's results and values of ops marked
        graph.checkpoint are always saved."""
        return (
            isinstance(value, OpResult)
            and CHECKPOINT not in value.owner.attributes
            and value not in self.results
            and self.policy(value, self.branch_points)
        )

    def erase_dead_backward_ops(self) -> None:
        for op in reversed(self.backward_ops):
            if not any(r.uses for r in op.results):
                self.block.erase_op(op)

    def argument_attributes(self) -> ArrayAttr:
        forward_attrs = self.forward.arg_attrs.data if self.forward.arg_attrs else [
            DictionaryAttr({}) for _ in self.forward.args
        ]  # fmt: skip
        cotangent_attrs = [
            DictionaryAttr({"graph.name": StringAttr(f"d_result{i}")})
            for i in range(len(self.cotangent_arguments))
        ]
        return ArrayAttr([*forward_attrs, *cotangent_attrs])


def saved_forward_values(forward: func.FuncOp, gradient: func.FuncOp) -> list[SSAValue]:
    """The forward values @f_grad's backward part reads: results of its forward clone
    (the first ops, one per op of f) used by a backward op. They stay live from the
    forward part into the backward part; the checkpoint policy decides how many."""
    count = sum(1 for op in forward.body.block.ops if not isinstance(op, func.ReturnOp))
    ops = list(gradient.body.block.ops)
    backward = set(ops[count:-1])
    return [r for op in ops[:count] for r in op.results if any(u.operation in backward for u in r.uses)]

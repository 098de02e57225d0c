"""What a VJP rule works with: `GraphEmitter` (graph ops with inferred result types and
the small arithmetic vocabulary the rules are written in) and `VjpContext` (one primal op
of the gradient function, its cotangent and its forward values).

A rule receives a `VjpContext` for one primal op of the gradient function and returns
one cotangent per operand of the op (None where no gradient flows: integer or i1
operands, a select's condition). It builds the cotangents from graph ops only, through
`ctx.emit`, so every gradient program runs on every target:

    @register_vjp(graph.ExpOp)
    def exp(ctx):                       # y = e^x  =>  dx = dy * y
        return [ctx.emit(graph.MulOp, [ctx.cotangent, ctx.result])]

`ctx.operand(i)` and `ctx.result` are the primal op's values as the gradient function
sees them: the saved forward value, or a recomputed copy where the checkpoint policy
recomputes it (transforms/autodiff.py). `ctx.operand_type(i)`/`ctx.result_type` give
types without materializing anything. A rule may compute a cotangent nobody needs (for a
constant operand, say): the pass erases such dead backward ops afterwards.

The rules register themselves in the per-op registry (`register_vjp`) by op family:
vjp_rules_elementwise.py, vjp_rules_reductions.py (with matmul), vjp_rules_nn.py and
vjp_rules_shape.py. The `autodiff` pass (transforms/autodiff.py) imports all four, walks
the forward ops in reverse, calls the rule of each op whose result has a cotangent and
accumulates what it returns. The rule table, with each rule's formula, is in
docs/autodiff.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import shape_of, tensor
from strata.support.dtypes import numpy_to_dense


Cotangents = Sequence[SSAValue | None]


@dataclass
class GraphEmitter:
    """Builds graph ops with inferred result types and hands each to `append`."""

    append: Callable[[Operation], None]
    """Appends an op to the backward part of the gradient function."""

    def emit(
        self,
        op_type: type[graph.GraphOp],
        operands: Sequence[SSAValue],
        result_type: TensorType | None = None,
        **params: object,
    ) -> SSAValue:
        """Append `op_type(operands, **params)` (result type inferred) and return its result."""
        op = op_type.make(operands, result_type, **params)
        self.append(op)
        return op.results[0]

    def constant(self, value: object, t: TensorType) -> SSAValue:
        """A graph.constant of type `t` holding `value` (an array or a scalar)."""
        return self.emit(graph.ConstantOp, [], value=numpy_to_dense(np.asarray(value), t))

    def scalar(self, value: float, element_type: Attribute) -> SSAValue:
        """A rank-0 constant; binary ops broadcast it against any shape."""
        return self.constant(value, tensor((), element_type))

    def full(self, value: float, t: TensorType) -> SSAValue:
        """A tensor of type `t` filled with `value` (a broadcast scalar, not a big literal)."""
        filled = self.scalar(value, t.element_type)
        return filled if not shape_of(t) else self.emit(graph.BroadcastToOp, [filled], t)

    # Small arithmetic vocabulary the rules are written in.

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.AddOp, [a, b])

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.SubOp, [a, b])

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.MulOp, [a, b])

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.DivOp, [a, b])

    def scale(self, a: SSAValue, value: float) -> SSAValue:
        return self.emit(graph.ScaleOp, [a], value=float(value))

    def neg(self, a: SSAValue) -> SSAValue:
        return self.emit(graph.NegOp, [a])

    def compare(self, a: SSAValue, b: SSAValue, predicate: str) -> SSAValue:
        return self.emit(graph.CompareOp, [a, b], predicate=predicate)

    def where(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.SelectOp, [cond, a, b])

    def mask_float(self, mask: SSAValue, element_type: Attribute) -> SSAValue:
        """An i1 mask as 0/1 values of `element_type`."""
        return self.emit(graph.CastOp, [mask], tensor(shape_of(mask.type), element_type))

    def reshape(self, a: SSAValue, shape: Sequence[int]) -> SSAValue:
        if shape_of(a.type) == tuple(shape):
            return a
        return self.emit(graph.ReshapeOp, [a], tensor(shape, a.type.element_type))

    def row_sum(self, a: SSAValue, axis: int) -> SSAValue:
        """The sum along `axis`, kept as a size-1 axis (broadcasts back against `a`)."""
        return self.emit(graph.ReduceSumOp, [a], axes=(axis,), keepdims=True)

    def row_mean(self, a: SSAValue, axis: int) -> SSAValue:
        return self.emit(graph.ReduceMeanOp, [a], axes=(axis,), keepdims=True)

    def matmul(self, a, b, transpose_a=False, transpose_b=False, alpha=1.0) -> SSAValue:
        return self.emit(
            graph.MatmulOp, [a, b],
            transpose_a=transpose_a, transpose_b=transpose_b, alpha=float(alpha),
        )  # fmt: skip

    def unbroadcast(self, g: SSAValue, to: TensorType) -> SSAValue:
        """Sum `g` over the axes broadcasting added or stretched, back to `to`'s shape."""
        g_shape, target = shape_of(g.type), shape_of(to)
        leading = len(g_shape) - len(target)
        stretched = [leading + i for i, d in enumerate(target) if d == 1 and g_shape[leading + i] != 1]
        axes = (*range(leading), *stretched)
        summed = self.emit(graph.ReduceSumOp, [g], axes=axes) if axes else g
        return self.reshape(summed, target)

    def one_hot(self, ids: SSAValue, depth: int, element_type: Attribute) -> SSAValue:
        """[N] ids -> [N, depth] rows of 0/1: ids compared with a constant iota."""
        (n,) = shape_of(ids.type)
        column = self.reshape(ids, (n, 1))
        iota = self.constant(np.arange(depth).reshape(1, depth), tensor((1, depth), ids.type.element_type))
        return self.mask_float(self.compare(column, iota, "eq"), element_type)


@dataclass
class VjpContext(GraphEmitter):
    """What a VJP rule sees of one primal op; `emit` & co. append its backward ops."""

    op: graph.GraphOp
    """The primal op, in the gradient function (read its params and types here)."""
    cotangent: SSAValue
    """The accumulated cotangent of the op's result."""
    forward_value: Callable[[SSAValue], SSAValue]
    """A forward value as the backward part may use it: saved, or recomputed."""

    @property
    def params(self) -> dict[str, object]:
        return self.op.params()

    def operand(self, index: int) -> SSAValue:
        return self.forward_value(self.op.operands[index])

    def operand_type(self, index: int) -> TensorType:
        return self.op.operands[index].type

    @property
    def result(self) -> SSAValue:
        return self.forward_value(self.op.results[0])

    @property
    def result_type(self) -> TensorType:
        return self.op.results[0].type


def element(t: TensorType) -> Attribute:
    return t.element_type


def unbroadcast_all(ctx: VjpContext, cotangents: Sequence[SSAValue | None]) -> Cotangents:
    return [
        None if g is None else ctx.unbroadcast(g, ctx.operand_type(i))
        for i, g in enumerate(cotangents)
    ]

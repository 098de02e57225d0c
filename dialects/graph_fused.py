"""`graph.fused`: a DAG of elementwise graph ops run as one kernel (made by fuse-elementwise).

    %y, %z = graph.fused %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
      %0 = graph.add %a, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %1 = graph.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
      graph.yield %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
    }

The body sees only its block arguments (isolated from above); every result has the same
shape (the kernel's iteration space); operands may broadcast to it. The first op may be
a graph.matmul whose result the rest consume: the elementwise ops are then the matmul
kernel's epilogue (bias, activation, residual), applied before its store. Or one row op
(softmax, log_softmax, layernorm, rmsnorm) may sit in the middle: the ops before it
compute its x (prologue), the ops after it consume its result (epilogue), all in the row
kernel's passes.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from strata.dialects.graph_base import ElementwiseOp
from strata.dialects.graph_elementwise import DropoutOp
from strata.dialects.graph_nn import LayerNormOp, LogSoftmaxOp, MatmulOp, RmsNormOp, SoftmaxOp

ROW_ANCHORS = (SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp)
"""Row ops a group may be built around (an elementwise prologue and epilogue)."""

ANCHORS = (MatmulOp, *ROW_ANCHORS)
"""Non-elementwise ops a group may be built around: a matmul (its epilogue follows) or a
row op (an elementwise prologue may compute its x, an epilogue follows)."""


def fusible(op: type[Operation] | Operation) -> bool:
    """An elementwise op whose element depends only on its operands' elements (dropout also
    depends on the element's index, so it stays a kernel of its own)."""
    kind = op if isinstance(op, type) else type(op)
    return issubclass(kind, ElementwiseOp) and not issubclass(kind, DropoutOp)


@irdl_op_definition
class FusedOp(IRDLOperation):
    """Elementwise ops fused into one kernel; results are the yielded values."""

    name = "graph.fused"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure(), IsolatedFromAbove())

    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $outputs) $body"

    def __init__(self, inputs, output_types, body: Region):
        super().__init__(operands=[list(inputs)], result_types=[list(output_types)], regions=[body])

    def verify_(self) -> None:
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException("'graph.fused': block arguments must match the operand types")
        anchors = [op for op in block.ops if isinstance(op, ANCHORS)]
        if len(anchors) > 1 or (anchors and isinstance(anchors[0], MatmulOp) and anchors[0] is not block.first_op):
            raise VerifyException(
                "'graph.fused': at most one matmul (first) or row op (softmax, log_softmax, "
                "layernorm, rmsnorm) may head the elementwise ops"
            )
        for op in block.ops:
            if isinstance(op, (YieldOp, *ANCHORS)):
                continue
            if not fusible(op):
                raise VerifyException(f"'graph.fused': {op.name} is not a fusible elementwise op")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException("'graph.fused': the body must end with graph.yield")
        if [v.type for v in terminator.values] != [r.type for r in self.outputs]:
            raise VerifyException("'graph.fused': yielded types must match the result types")
        shapes = {tuple(r.type.get_shape()) for r in self.outputs}
        if len(shapes) > 1:
            raise VerifyException(f"'graph.fused': results must share one shape, got {sorted(shapes)}")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The results of a graph.fused body."""

    name = "graph.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), HasParent(FusedOp))

    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values):
        super().__init__(operands=[list(values)])

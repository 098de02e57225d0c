"""Gradient ops of the `graph` dialect: ops the autodiff pass emits for the backward of an
op whose gradient a target computes better as one piece than as the graph ops spelling
it out. They are not in the op catalogue users build from (GRAPH_OPS); every target runs
them (the reference directly, the CPU and GPU through transforms/expand_attention_grad.py
or a fused kernel), and they have no VJP rule of their own (no second derivatives)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, Float64Type, FloatAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from strata.dialects.graph_base import PureGraphOp, ShapeError, _tensor_type, py_to_attr, require_same_element
from strata.dialects.graph_nn import FALSE, AttentionOp


@irdl_op_definition
class AttentionGradOp(PureGraphOp):
    """The cotangents (dq, dk, dv) of `out = graph.attention(q, k, v)` for the cotangent
    dout of out, with the attention's scale and causality:

        P = softmax(scale · q kᵀ [causal mask]),   dP = dout vᵀ,
        dS = P ∘ (dP - rowsum(dout ∘ out)),
        dq = scale · dS k,   dk = scale · dSᵀ q,   dv = Pᵀ dout

    (rowsum(dout ∘ out) = rowsum(dP ∘ P): the forward's out spares a pass over the keys).

    `%dq, %dk, %dv = graph.attention_grad %q, %k, %v, %out, %dout {scale = 1.250000e-01 : f64, causal = true}
        : (tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>)
        -> (tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>)`
    """

    name = "graph.attention_grad"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    out = operand_def(TensorType)
    dout = operand_def(TensorType)
    dq = result_def(TensorType)
    dk = result_def(TensorType)
    dv = result_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = prop_def(BoolAttr, default_value=FALSE)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("q", "k", "v", "out", "dout")

    assembly_format = "$q `,` $k `,` $v `,` $out `,` $dout attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types: Sequence[TensorType], **params: object) -> tuple[TensorType, ...]:
        """(dq, dk, dv) have the types of q, k and v; out and dout the attention's result type."""
        q, k, v, out, dout = operand_types
        require_same_element(operand_types, cls.OPERAND_NAMES)
        expected = AttentionOp.infer_result_type((q, k, v), **params)
        for name, t in (("out", out), ("dout", dout)):
            if t != expected:
                raise ShapeError(f"{name} must have the attention's result type {expected}, got {t}")
        return q, k, v

    @classmethod
    def infer_result_type(cls, operand_types: Sequence[TensorType], **params: object) -> TensorType:
        return cls.infer_result_types(operand_types, **params)[0]

    @classmethod
    def make(cls, operands: Sequence[SSAValue], result_type: TensorType | None = None, **params: object):
        types = [_tensor_type(v.type, cls.name, i) for i, v in enumerate(operands)]
        properties = {key: py_to_attr(value) for key, value in params.items()}
        return cls.create(operands=list(operands), result_types=list(cls.infer_result_types(types, **params)),
                          properties=properties)

    def verify_(self) -> None:
        types = [_tensor_type(v.type, self.name, i, self.operand_label(i)) for i, v in enumerate(self.operands)]
        try:
            expected = type(self).infer_result_types(types, **self.params())
        except ShapeError as e:
            raise VerifyException(f"'{self.name}': {e}") from None
        for name, result, want in zip(("dq", "dk", "dv"), self.results, expected):
            if result.type != want:
                raise VerifyException(f"'{self.name}': result {name} must have the type of {name[1:]}, {want}, got {result.type}")


GRADIENT_OPS = (AttentionGradOp,)
"""Ops the autodiff pass emits (not in the user-facing catalogue)."""

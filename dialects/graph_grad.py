"""Gradient ops of the `graph` dialect: ops the autodiff pass emits for the backward of an
op whose gradient a target computes better as one piece than as the graph ops spelling
it out (graph.attention_grad, graph.embedding_grad), and the forward that saves what such
a backward reads (graph.attention_lse, put in by share-attention-lse). They are not in
the op catalogue users build from (GRAPH_OPS); every target runs them (the reference
directly, the CPU and GPU through transforms/expand_attention_grad.py or kernels of their
own), and they have no VJP rule of their own (no second derivatives)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, BoolAttr, Float64Type, FloatAttr, IntegerAttr, TensorType, f32
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from strata.dialects.graph_base import (
    PureGraphOp,
    ShapeError,
    _tensor_type,
    py_to_attr,
    require_float,
    require_index_int,
    require_same_element,
    shape_of,
    tensor,
)
from strata.dialects.graph_nn import FALSE, AttentionOp, check_padding_idx


class MultiResultGraphOp(PureGraphOp):
    """A graph op of several results, each inferred by one rule (infer_result_types) that
    the builder and the verifier share."""

    RESULT_NAMES: ClassVar[tuple[str, ...]] = ()
    RESULT_TYPE_OF: ClassVar[dict[str, str]] = {}
    """For a result whose type is an operand's, that operand's name (in diagnostics)."""

    @classmethod
    def infer_result_types(cls, operand_types: Sequence[TensorType], **params: object) -> tuple[TensorType, ...]:
        raise NotImplementedError

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
        for name, result, want in zip(self.RESULT_NAMES, self.results, expected):
            if result.type != want:
                rule = f"the type of {self.RESULT_TYPE_OF[name]}," if name in self.RESULT_TYPE_OF else "type"
                raise VerifyException(f"'{self.name}': result {name} must have {rule} {want}, got {result.type}")


def lse_type(q: TensorType) -> TensorType:
    """The log-sum-exp of each query row's scores: [batch..., Sq] in f32 whatever q's type."""
    return tensor(shape_of(q)[:-1], f32)


@irdl_op_definition
class AttentionLseOp(MultiResultGraphOp):
    """graph.attention's output and, per query row, the log-sum-exp of its (scaled, masked)
    scores, L = log Σ_j exp(scale · q kᵀ), in f32: what the attention's backward needs to
    recompute every probability as exp(scale · q kᵀ - L) without the forward's running
    maxima and sums. share-attention-lse puts it where a graph.attention_grad reads the
    attention's output; the GPU's flash kernel stores L beside out at no extra pass.

    `%o, %lse = graph.attention_lse %q, %k, %v {scale = 1.250000e-01 : f64, causal = true}
        : (tensor<2x16x8xbf16>, tensor<2x16x8xbf16>, tensor<2x16x8xbf16>) -> (tensor<2x16x8xbf16>, tensor<2x16xf32>)`
    """

    name = "graph.attention_lse"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    out = result_def(TensorType)
    lse = result_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = prop_def(BoolAttr, default_value=FALSE)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("q", "k", "v")
    RESULT_NAMES: ClassVar[tuple[str, ...]] = ("out", "lse")

    assembly_format = "$q `,` $k `,` $v attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types: Sequence[TensorType], **params: object) -> tuple[TensorType, ...]:
        """out as graph.attention's result; lse [batch..., Sq] f32."""
        return AttentionOp.infer_result_type(operand_types, **params), lse_type(operand_types[0])


@irdl_op_definition
class AttentionGradOp(MultiResultGraphOp):
    """The cotangents (dq, dk, dv) of `out = graph.attention(q, k, v)` for the cotangent
    dout of out, with the attention's scale and causality:

        P = softmax(scale · q kᵀ [causal mask]),   dP = dout vᵀ,
        dS = P ∘ (dP - rowsum(dout ∘ out)),
        dq = scale · dS k,   dk = scale · dSᵀ q,   dv = Pᵀ dout

    (rowsum(dout ∘ out) = rowsum(dP ∘ P): the forward's out spares a pass over the keys).
    The optional `lse` is the forward's log-sum-exp per query row (graph.attention_lse):
    given, P = exp(scale · q kᵀ - lse) needs no pass over the keys for the softmax's
    statistics either (the GPU's flash backward); the result is the same.

    `%dq, %dk, %dv = graph.attention_grad %q, %k, %v, %out, %dout {scale = 1.250000e-01 : f64, causal = true}
        : (tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>)
        -> (tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>)`

    `%dq, %dk, %dv = graph.attention_grad %q, %k, %v, %out, %dout lse %lse {scale = 1.250000e-01 : f64}
        : (tensor<16x8xbf16>, tensor<16x8xbf16>, tensor<16x8xbf16>, tensor<16x8xbf16>, tensor<16x8xbf16>, tensor<16xf32>)
        -> (tensor<16x8xbf16>, tensor<16x8xbf16>, tensor<16x8xbf16>)`
    """

    name = "graph.attention_grad"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    out = operand_def(TensorType)
    dout = operand_def(TensorType)
    lse = opt_operand_def(TensorType)
    dq = result_def(TensorType)
    dk = result_def(TensorType)
    dv = result_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = prop_def(BoolAttr, default_value=FALSE)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("q", "k", "v", "out", "dout", "lse")
    RESULT_NAMES: ClassVar[tuple[str, ...]] = ("dq", "dk", "dv")
    RESULT_TYPE_OF: ClassVar[dict[str, str]] = {"dq": "q", "dk": "k", "dv": "v"}

    assembly_format = (
        "$q `,` $k `,` $v `,` $out `,` $dout (`lse` $lse^)? attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_result_types(cls, operand_types: Sequence[TensorType], **params: object) -> tuple[TensorType, ...]:
        """(dq, dk, dv) have the types of q, k and v; out and dout the attention's result
        type, lse (if given) graph.attention_lse's."""
        q, k, v, out, dout, *lse = operand_types
        require_same_element(operand_types[:5], cls.OPERAND_NAMES[:5])
        expected = AttentionOp.infer_result_type((q, k, v), **params)
        for name, t in (("out", out), ("dout", dout)):
            if t != expected:
                raise ShapeError(f"{name} must have the attention's result type {expected}, got {t}")
        if lse and lse[0] != lse_type(q):
            raise ShapeError(f"lse must have the type of the attention's log-sum-exp, {lse_type(q)}, got {lse[0]}")
        return q, k, v


@irdl_op_definition
class EmbeddingGradOp(PureGraphOp):
    """The cotangent of graph.embedding's table: the rows of `grad` (the cotangent of the
    embedding's [..., D] result) added into the rows of a [V, D] table of zeros that `ids`
    ([...]) pick, V being `vocabulary`:

        dtable[v] = Σ over n with ids[n] = v of grad[n]

    A row of a 16-bit table is summed in f32 and rounded once. An id outside [0, V) is a
    run-time error. With `padding_idx` (the embedding's), that row's ids add nothing: it
    stays 0. The CPU and the GPU add the rows atomically (tile.scatter_add_tko), in
    no fixed order, so a row's last bit may differ from run to run; N ids cost N · D adds,
    where the one-hot matmul this replaces cost N · V · D and an [N, V] one-hot.

    `%dt = graph.embedding_grad %g, %ids {vocabulary = 100 : i64} : (tensor<4x7x16xf32>, tensor<4x7xi64>) -> tensor<100x16xf32>`
    """

    name = "graph.embedding_grad"
    grad = operand_def(TensorType)
    ids = operand_def(TensorType)
    result = result_def(TensorType)
    vocabulary = prop_def(IntegerAttr[I64])
    padding_idx = opt_prop_def(IntegerAttr[I64])
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("grad", "ids")

    assembly_format = "$grad `,` $ids attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types: Sequence[TensorType], **params: object) -> TensorType:
        """[vocabulary, D] of grad's element type, grad being [*ids.shape, D]."""
        grad, ids = operand_types
        vocabulary = params["vocabulary"]
        require_float(grad, "grad")
        require_index_int(ids, "ids")
        if len(shape_of(grad)) != len(shape_of(ids)) + 1 or shape_of(grad)[:-1] != shape_of(ids):
            raise ShapeError(f"grad must be [*ids.shape, D] for ids {ids}, got {grad}")
        if not isinstance(vocabulary, int) or vocabulary < 0:
            raise ShapeError(f"vocabulary must be a size (>= 0), got {vocabulary}")
        check_padding_idx(params.get("padding_idx"), vocabulary)
        return tensor((vocabulary, shape_of(grad)[-1]), grad.element_type)


GRADIENT_OPS = (AttentionGradOp, AttentionLseOp, EmbeddingGradOp)
"""Ops the autodiff pass and the passes after it emit (not in the user-facing catalogue)."""

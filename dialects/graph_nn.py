"""Creation, reduction, linear-algebra and neural-network ops of the `graph` dialect."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseIntOrFPElementsAttr,
    Float64Type,
    I64,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.interfaces import HasFolderInterface
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure

from strata.dialects.graph_base import (
    I64_ARRAY,
    GraphOp,
    PureGraphOp,
    ReductionOp,
    RowOp,
    ShapeError,
    broadcast_shapes,
    require_float,
    require_index_int,
    require_same_element,
    shape_of,
    tensor,
)

FALSE = BoolAttr.from_bool(False)


def f64(value: float) -> FloatAttr:
    return FloatAttr(value, Float64Type())


@irdl_op_definition
class ConstantOp(GraphOp, HasFolderInterface):
    """A literal tensor.

    `%c = graph.constant dense<1.0> : tensor<4xf32>`
    """

    name = "graph.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())

    def fold(self):
        return (self.value,)

    @classmethod
    def infer_result_type(cls, operand_types, *, value=None, **params):
        return value.type

    @classmethod
    def check_result_type(cls, operand_types, result_type, *, value=None, **params):
        if result_type != value.type:
            raise ShapeError(f"result type {result_type} differs from the value's type {value.type}")

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(f"expected a dense elements literal, got {value}")
        attributes = parser.parse_optional_attr_dict()
        op = cls.make([], value=value)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class ReduceSumOp(ReductionOp):
    """Sum over axes.

    `%s = graph.reduce_sum %x {axes = array<i64: -1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>`
    """

    name = "graph.reduce_sum"
    axes = prop_def(I64_ARRAY)
    keepdims = prop_def(BoolAttr, default_value=FALSE)


@irdl_op_definition
class ReduceMeanOp(ReductionOp):
    """Arithmetic mean over axes (floats only).

    `%m = graph.reduce_mean %x {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>`
    """

    name = "graph.reduce_mean"
    axes = prop_def(I64_ARRAY)
    keepdims = prop_def(BoolAttr, default_value=FALSE)
    ACCEPTS_INTEGERS: ClassVar[bool] = False


@irdl_op_definition
class ReduceMaxOp(ReductionOp):
    """Maximum over axes.

    `%m = graph.reduce_max %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>`
    """

    name = "graph.reduce_max"
    axes = prop_def(I64_ARRAY)
    keepdims = prop_def(BoolAttr, default_value=FALSE)


@irdl_op_definition
class MatmulOp(PureGraphOp):
    """alpha * op(a) @ op(b); op transposes the last two axes; batch axes broadcast.

    `%y = graph.matmul %x, %w {transpose_b = true} : (tensor<32x64xf32>, tensor<16x64xf32>) -> tensor<32x16xf32>`
    """

    name = "graph.matmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    result = result_def(TensorType)
    transpose_a = prop_def(BoolAttr, default_value=FALSE)
    transpose_b = prop_def(BoolAttr, default_value=FALSE)
    alpha = prop_def(FloatAttr[Float64Type], default_value=f64(1.0))
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("a", "b")

    assembly_format = "$a `,` $b attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(
        cls, operand_types, *, transpose_a=False, transpose_b=False, **params
    ):
        a, b = operand_types
        require_same_element(operand_types, cls.OPERAND_NAMES)
        require_float(a, "a")
        sa, sb = shape_of(a), shape_of(b)
        if len(sa) < 2 or len(sb) < 2:
            raise ShapeError(f"operands must have rank >= 2, got {a} and {b}")
        m, ka = (sa[-1], sa[-2]) if transpose_a else (sa[-2], sa[-1])
        kb, n = (sb[-1], sb[-2]) if transpose_b else (sb[-2], sb[-1])
        if ka != kb:
            raise ShapeError(
                f"contraction sizes differ: op(a) is {m}x{ka}, op(b) is {kb}x{n} "
                f"(a: {a}, b: {b}, transpose_a = {str(transpose_a).lower()}, "
                f"transpose_b = {str(transpose_b).lower()})"
            )
        try:
            batch = broadcast_shapes(sa[:-2], sb[:-2])
        except ShapeError:
            raise ShapeError(
                f"batch axes {list(sa[:-2])} of a and {list(sb[:-2])} of b do not broadcast"
            ) from None
        return tensor((*batch, m, n), a.element_type)


@irdl_op_definition
class SoftmaxOp(RowOp):
    """Numerically stable softmax along axis.

    `%p = graph.softmax %x {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>`
    """

    name = "graph.softmax"
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, 64))


@irdl_op_definition
class LogSoftmaxOp(RowOp):
    """x - logsumexp(x) along axis.

    `%p = graph.log_softmax %x : (tensor<4x8xf32>) -> tensor<4x8xf32>`
    """

    name = "graph.log_softmax"
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, 64))


def _check_last_axis_params(x: TensorType, params: dict[str, TensorType]) -> None:
    require_float(x, "x")
    shape = shape_of(x)
    if not shape:
        raise ShapeError(f"x must have rank >= 1, got {x}")
    for name, t in params.items():
        if t.element_type != x.element_type:
            raise ShapeError(f"{name} has element type {t.element_type}, expected {x.element_type}")
        if shape_of(t) != (shape[-1],):
            raise ShapeError(f"{name} must have shape [{shape[-1]}] (x's last axis), got {t}")


@irdl_op_definition
class LayerNormOp(PureGraphOp):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta over the last axis (biased var).

    `%y = graph.layernorm %x, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>`
    """

    name = "graph.layernorm"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = prop_def(FloatAttr[Float64Type], default_value=f64(1e-5))
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x", "gamma", "beta")

    assembly_format = "$x `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        x, gamma, beta = operand_types
        _check_last_axis_params(x, {"gamma": gamma, "beta": beta})
        return x


@irdl_op_definition
class RmsNormOp(PureGraphOp):
    """x / sqrt(mean(x^2) + epsilon) * gamma over the last axis.

    `%y = graph.rmsnorm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>`
    """

    name = "graph.rmsnorm"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = prop_def(FloatAttr[Float64Type], default_value=f64(1e-6))
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x", "gamma")

    assembly_format = "$x `,` $gamma attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        x, gamma = operand_types
        _check_last_axis_params(x, {"gamma": gamma})
        return x


def above_diagonal(rows: int, columns: int) -> np.ndarray:
    """True above the diagonal: the keys a causal attention row may not see."""
    return np.arange(columns)[None, :] > np.arange(rows)[:, None]


@irdl_op_definition
class AttentionOp(PureGraphOp):
    """softmax(scale * q @ k^T [+ causal mask]) @ v; batch axes of q, k, v equal.

    `%o = graph.attention %q, %k, %v {scale = 1.250000e-01 : f64, causal = true}
        : (tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>) -> tensor<4x16x64xf32>`
    """

    name = "graph.attention"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    result = result_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = prop_def(BoolAttr, default_value=FALSE)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("q", "k", "v")

    assembly_format = "$q `,` $k `,` $v attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        q, k, v = operand_types
        require_same_element(operand_types, cls.OPERAND_NAMES)
        require_float(q, "q")
        sq, sk, sv = shape_of(q), shape_of(k), shape_of(v)
        if min(len(sq), len(sk), len(sv)) < 2:
            raise ShapeError(f"q, k, v must have rank >= 2, got {q}, {k}, {v}")
        if not sq[:-2] == sk[:-2] == sv[:-2]:
            raise ShapeError(f"batch axes of q, k, v differ: {q}, {k}, {v}")
        if sq[-1] != sk[-1]:
            raise ShapeError(f"q and k head sizes differ: {q}, {k}")
        if sk[-2] != sv[-2]:
            raise ShapeError(f"k and v sequence lengths differ: {k}, {v}")
        return tensor((*sq[:-1], sv[-1]), q.element_type)


@irdl_op_definition
class EmbeddingOp(PureGraphOp):
    """table[ids]: [V, D] x [...] -> [..., D]; an id outside [0, V) is a run-time error.
    `padding_idx` (optional, in [0, V)) is a row that gets no gradient, as torch.nn.Embedding's
    padding_idx: the lookup itself is unchanged.

    `%e = graph.embedding %table, %ids : (tensor<100x16xf32>, tensor<4x7xi64>) -> tensor<4x7x16xf32>`
    `%e = graph.embedding %table, %ids {padding_idx = 0 : i64} : (tensor<100x16xf32>, tensor<4x7xi64>) -> tensor<4x7x16xf32>`
    """

    name = "graph.embedding"
    table = operand_def(TensorType)
    ids = operand_def(TensorType)
    result = result_def(TensorType)
    padding_idx = opt_prop_def(IntegerAttr[I64])
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("table", "ids")

    assembly_format = "$table `,` $ids attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, padding_idx=None, **params):
        table, ids = operand_types
        if len(shape_of(table)) != 2:
            raise ShapeError(f"table must have rank 2 ([V, D]), got {table}")
        require_index_int(ids, "ids")
        check_padding_idx(padding_idx, shape_of(table)[0])
        return tensor((*shape_of(ids), shape_of(table)[1]), table.element_type)


def check_padding_idx(padding_idx: object, vocabulary: int) -> None:
    """An embedding's row without gradient: absent, or a row of the table."""
    if padding_idx is not None and not (isinstance(padding_idx, int) and 0 <= padding_idx < vocabulary):
        raise ShapeError(f"padding_idx must be a row of the table, in [0, {vocabulary}), got {padding_idx}")


@irdl_op_definition
class CrossEntropyOp(PureGraphOp):
    """mean over N of -log_softmax(logits)[n, labels[n]]; a rank-0 result.

    `%l = graph.cross_entropy %logits, %labels : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>`
    """

    name = "graph.cross_entropy"
    logits = operand_def(TensorType)
    labels = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("logits", "labels")

    assembly_format = "$logits `,` $labels attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        logits, labels = operand_types
        require_float(logits, "logits")
        sl, sy = shape_of(logits), shape_of(labels)
        if len(sl) != 2:
            raise ShapeError(f"logits must have rank 2 ([N, C]), got {logits}")
        require_index_int(labels, "labels")
        if sy != sl[:1]:
            raise ShapeError(f"labels must have shape [{sl[0]}] (logits' N), got {labels}")
        return tensor((), logits.element_type)

"""Elementwise ops of the `graph` dialect (NumPy broadcasting, one element type)."""

from __future__ import annotations

import math

from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, prop_def, result_def

from strata.dialects.graph_base import (
    BinaryElementwiseOp,
    ElementwiseOp,
    PureGraphOp,
    ResultTypedOp,
    ShapeError,
    UnaryElementwiseOp,
    broadcast_shapes,
    is_bool,
    require_float,
    require_same_element,
    shape_of,
    tensor,
)


@irdl_op_definition
class NegOp(UnaryElementwiseOp):
    """-x.

    `%y = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.neg"
    ACCEPTS_INTEGERS: ClassVar[bool] = True


@irdl_op_definition
class AbsOp(UnaryElementwiseOp):
    """|x|.

    `%y = graph.abs %x : (tensor<4xi32>) -> tensor<4xi32>`
    """

    name = "graph.abs"
    ACCEPTS_INTEGERS: ClassVar[bool] = True


@irdl_op_definition
class ExpOp(UnaryElementwiseOp):
    """e^x.

    `%y = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.exp"


@irdl_op_definition
class LogOp(UnaryElementwiseOp):
    """Natural logarithm.

    `%y = graph.log %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.log"


@irdl_op_definition
class SqrtOp(UnaryElementwiseOp):
    """Square root.

    `%y = graph.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.sqrt"


@irdl_op_definition
class RsqrtOp(UnaryElementwiseOp):
    """1 / sqrt(x).

    `%y = graph.rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.rsqrt"


@irdl_op_definition
class TanhOp(UnaryElementwiseOp):
    """Hyperbolic tangent.

    `%y = graph.tanh %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.tanh"


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    """1 / (1 + e^-x).

    `%y = graph.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.sigmoid"


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    """max(x, 0).

    `%y = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.relu"
    ACCEPTS_INTEGERS: ClassVar[bool] = True


@irdl_op_definition
class SiluOp(UnaryElementwiseOp):
    """x * sigmoid(x).

    `%y = graph.silu %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.silu"


@irdl_op_definition
class ErfOp(UnaryElementwiseOp):
    """The error function.

    `%y = graph.erf %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.erf"


GELU_TANH_SCALE = math.sqrt(2 / math.pi)
GELU_TANH_CUBIC = 0.044715
"""The tanh approximation: 0.5x(1 + tanh(GELU_TANH_SCALE (x + GELU_TANH_CUBIC x³)))."""


@irdl_op_definition
class GeluOp(UnaryElementwiseOp):
    """GELU: 0.5x(1+erf(x/sqrt 2)), or the tanh approximation.

    `%y = graph.gelu %x {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))

    @classmethod
    def infer_result_type(cls, operand_types, *, approximate="none", **params):
        if approximate not in ("none", "tanh"):
            raise ShapeError(f'approximate must be "none" or "tanh", got "{approximate}"')
        return super().infer_result_type(operand_types)


@irdl_op_definition
class ScaleOp(UnaryElementwiseOp):
    """x * value (a compile-time scalar).

    `%y = graph.scale %x {value = 5.000000e-01 : f64} : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.scale"
    value = prop_def(FloatAttr[Float64Type])


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """lhs + rhs.

    `%z = graph.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>`
    """

    name = "graph.add"


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    """lhs - rhs.

    `%z = graph.sub %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.sub"


@irdl_op_definition
class MulOp(BinaryElementwiseOp):
    """lhs * rhs.

    `%z = graph.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.mul"


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    """lhs / rhs (floats only).

    `%z = graph.div %x, %y : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>`
    """

    name = "graph.div"
    ACCEPTS_INTEGERS: ClassVar[bool] = False


@irdl_op_definition
class MaximumOp(BinaryElementwiseOp):
    """max(lhs, rhs), NaN-propagating.

    `%z = graph.maximum %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.maximum"


@irdl_op_definition
class MinimumOp(BinaryElementwiseOp):
    """min(lhs, rhs), NaN-propagating.

    `%z = graph.minimum %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "graph.minimum"


@irdl_op_definition
class PowOp(BinaryElementwiseOp):
    """lhs ** rhs (floats only).

    `%z = graph.pow %x, %y : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>`
    """

    name = "graph.pow"
    ACCEPTS_INTEGERS: ClassVar[bool] = False


COMPARE_PREDICATES = ("lt", "le", "gt", "ge", "eq", "ne")


@irdl_op_definition
class CompareOp(BinaryElementwiseOp):
    """Elementwise comparison, an i1 result.

    `%m = graph.compare %x, %y {predicate = "lt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>`
    """

    name = "graph.compare"
    predicate = prop_def(StringAttr)

    @classmethod
    def result_element_type(cls, operand_element):
        return IntegerType(1)

    @classmethod
    def require_element_kind(cls, t, what):
        """Any element type compares, i1 included."""

    @classmethod
    def infer_result_type(cls, operand_types, *, predicate="", **params):
        if predicate not in COMPARE_PREDICATES:
            raise ShapeError(
                f'predicate must be one of {", ".join(COMPARE_PREDICATES)}, got "{predicate}"'
            )
        return super().infer_result_type(operand_types)


@irdl_op_definition
class SelectOp(ElementwiseOp, PureGraphOp):
    """where(cond, a, b) with broadcasting of all three.

    `%z = graph.select %m, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>`
    """

    name = "graph.select"
    cond = operand_def(TensorType)
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("cond", "a", "b")

    assembly_format = "$cond `,` $a `,` $b attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        cond, a, b = operand_types
        if not is_bool(cond.element_type):
            raise ShapeError(f"cond must have element type i1, got {cond}")
        require_same_element([a, b], ("a", "b"))
        shape = broadcast_shapes(shape_of(cond), shape_of(a), shape_of(b))
        return tensor(shape, a.element_type)


@irdl_op_definition
class CastOp(ElementwiseOp, ResultTypedOp):
    """Convert x to the result's element type (float->int truncates toward zero).

    `%i = graph.cast %x : (tensor<4xf32>) -> tensor<4xi32>`
    """

    name = "graph.cast"

    @classmethod
    def check_result_type(cls, operand_types, result_type, **params):
        (x,) = operand_types
        if shape_of(result_type) != shape_of(x):
            raise ShapeError(f"result shape {list(shape_of(result_type))} differs from x's {list(shape_of(x))}")


DROPOUT_STEP_GAMMA = 0xD1B54A32D192ED03
"""The odd constant a dropout's step multiplies into its key: key = seed + step · gamma
(mod 2^64), docs/dropout-rng.md."""


@irdl_op_definition
class DropoutOp(ElementwiseOp):
    """x * mask / (1 - p), mask drawn from a keyed counter-based RNG (seed, step, element
    index). The optional `step` (a rank-0 i64 tensor, 0 when absent) re-keys the draw at run
    time: a training program takes a step counter there, so every step draws a fresh mask.

    Not `Pure`: two dropouts with equal operands are distinct random draws in intent and
    must never be merged by CSE. The mask is a pure function of (seed, step, index), so the
    backward pass recomputes it instead of storing it (docs/dropout-rng.md).

    `%y = graph.dropout %x {p = 1.000000e-01 : f64, seed = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>`
    `%y = graph.dropout %x, %step {p = 1.000000e-01 : f64, seed = 7 : i64} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>`
    """

    name = "graph.dropout"
    x = operand_def(TensorType)
    step = opt_operand_def(TensorType)
    result = result_def(TensorType)
    p = prop_def(FloatAttr[Float64Type])
    seed = prop_def(IntegerAttr[I64])
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x", "step")

    assembly_format = "$x (`,` $step^)? attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, *, p=0.0, **params):
        x, *step = operand_types
        require_float(x, "x")
        if step and (shape_of(step[0]) != () or step[0].element_type != i64):
            raise ShapeError(f"step must be a rank-0 i64 tensor, got {step[0]}")
        if not 0.0 <= p < 1.0:
            raise ShapeError(f"p must lie in [0, 1), got {p}")
        return x

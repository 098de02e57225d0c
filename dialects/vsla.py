"""The `vsla` dialect: the variable-shape linear algebra.

Tensors of different shapes combine here without NumPy broadcasting: a tensor stands for
its equivalence class under trailing zeros (`[1, 2, 3]` and `[1, 2, 3, 0, 0]` are the same
element), so two operands of one rank meet at their **ambient shape**, the per-axis
maximum, each implicitly zero-extended:

    %y = vsla.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>   // [1,2,3]+[4,5] = [5,7,3]

Two semirings multiply: Model A is the **convolution** (along the last axis, length
m + n - 1, direct or FFT, commutative; leading axes a batch) and Model B the **Kronecker
product** of vectors (length m·n, not commutative).
`vsla.stack` puts k tensors of one rank side by side at their ambient shape (rank + 1),
`vsla.window` groups a stream (its leading axis) into windows of `size` (recursive windows
build tensor pyramids), `vsla.sum` / `vsla.mean` reduce one axis. An empty operand (a zero
extent) is the zero element: conv and kron of it are empty.

Shapes are static here: the logical shapes a program is compiled for. lower-vsla-to-graph
(transforms/vsla_to_graph.py) rewrites every op into graph ops, so every pass and target
applies; the reference interpreter runs the ops directly, accumulating in f64.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, var_operand_def
from xdsl.utils.exceptions import VerifyException

from strata.dialects.graph_base import PureGraphOp, ShapeError, require_float, shape_of, tensor

MAX_ELEMENTS = 1 << 62
"""Shape products past this overflow the 64-bit index arithmetic downstream: rejected."""
CONV_METHODS = ("auto", "direct", "fft")


def checked_size(shape: Sequence[int], what: str) -> int:
    """The element count of `shape`, or a ShapeError when it would overflow."""
    size = 1
    for d in shape:
        size *= d
        if size > MAX_ELEMENTS:
            raise ShapeError(f"{what} {list(shape)} has more than 2^62 elements")
    return size


def ambient_shape(shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The per-axis maximum of shapes of one rank."""
    return tuple(max(dims) for dims in zip(*shapes))


def same_rank_floats(types: Sequence[TensorType], names: Sequence[str]) -> None:
    """Operands of one float element type and one rank, at least 1 (no rank-0 values)."""
    for t, name in zip(types, names):
        require_float(t, name)
        if not shape_of(t):
            raise ShapeError(f"{name} has rank 0: vsla values have rank >= 1")
    first = types[0]
    for t, name in zip(types[1:], names[1:]):
        if t.element_type != first.element_type:
            raise ShapeError(f"{name} is {t.element_type}, {names[0]} is {first.element_type}")
        if len(shape_of(t)) != len(shape_of(first)):
            raise ShapeError(f"{name} has rank {len(shape_of(t))}, {names[0]} rank {len(shape_of(first))}: "
                             "ambient promotion extends extents, never ranks")


class VslaOp(PureGraphOp):
    """Base of the vsla ops: the graph ops' shape-rule machinery (one rule for verifier
    and builder), a dialect of its own."""


MODEL_DEPTH = 64
"""How far up a value's producers semiring_model looks."""


def semiring_model(value: SSAValue) -> tuple[str, Operation] | None:
    """(model, producer) of the semiring product `value` derives from through ambient,
    scale, unary and stack ops, or None (an argument, a reduction, a window, a graph op)."""
    pending, seen = [value], 0
    while pending and seen < MODEL_DEPTH:
        owner = pending.pop().owner
        seen += 1
        if isinstance(owner, SemiringOp):
            return owner.MODEL, owner
        if isinstance(owner, AmbientBinaryOp | ScaleOp | UnaryOp | StackOp):
            pending.extend(owner.operands)
    return None


class ModelConsistent(VslaOp):
    """An op whose operands must not come from different semirings (Model A and Model B
    values do not mix)."""

    MODEL: ClassVar[str] = ""

    def verify_(self) -> None:
        super().verify_()
        models = {m[0]: m[1] for m in map(semiring_model, self.operands) if m is not None}
        if self.MODEL:
            models.setdefault(self.MODEL, self)
        if len(models) > 1:
            (a, a_op), (b, b_op) = sorted(models.items())
            raise VerifyException(f"'{self.name}': mixes Model {a} (from {a_op.name}) and Model {b} "
                                  f"(from {b_op.name}) values: one program multiplies in one semiring")


class OneOperandOp(VslaOp):
    """An op on one tensor x."""

    x = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x",)

    assembly_format = "$x attr-dict `:` functional-type(operands, results)"


class AmbientBinaryOp(ModelConsistent):
    """(lhs, rhs) of one rank and element type -> their ambient shape."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("lhs", "rhs")

    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        same_rank_floats(operand_types, cls.OPERAND_NAMES)
        shape = ambient_shape([shape_of(t) for t in operand_types])
        checked_size(shape, "the ambient shape")
        return tensor(shape, operand_types[0].element_type)


@irdl_op_definition
class AddOp(AmbientBinaryOp):
    """Ambient addition: both operands zero-extended to the ambient shape.

    `%y = vsla.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>`
    """

    name = "vsla.add"


@irdl_op_definition
class SubOp(AmbientBinaryOp):
    """Ambient subtraction (may leave trailing zeros: the shape stays the ambient one).

    `%y = vsla.sub %a, %b : (tensor<2x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>`
    """

    name = "vsla.sub"


@irdl_op_definition
class HadamardOp(AmbientBinaryOp):
    """Ambient element-wise product: zero wherever either operand is (implicitly) zero.

    `%y = vsla.hadamard %a, %b : (tensor<3xf64>, tensor<5xf64>) -> tensor<5xf64>`
    """

    name = "vsla.hadamard"


@irdl_op_definition
class ScaleOp(OneOperandOp):
    """x · factor.

    `%y = vsla.scale %x {factor = 2.5 : f64} : (tensor<3xf32>) -> tensor<3xf32>`
    """

    name = "vsla.scale"
    factor = prop_def(FloatAttr)

    @classmethod
    def infer_result_type(cls, operand_types, factor=1.0, **params):
        same_rank_floats(operand_types, cls.OPERAND_NAMES)
        if not math.isfinite(factor):
            raise ShapeError(f"factor must be finite, got {factor}")
        return operand_types[0]


class SemiringOp(ModelConsistent):
    """A semiring product of two tensors of one element type."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("lhs", "rhs")

    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def vectors(cls, operand_types) -> tuple[int, int]:
        same_rank_floats(operand_types, cls.OPERAND_NAMES)
        for t, name in zip(operand_types, cls.OPERAND_NAMES):
            if len(shape_of(t)) != 1:
                raise ShapeError(f"{name} has rank {len(shape_of(t))}: Model {cls.MODEL} multiplies vectors (rank 1)")
        (m,), (n,) = (shape_of(t) for t in operand_types)
        return m, n


@irdl_op_definition
class ConvOp(SemiringOp):
    """Model A: the full convolution y[k] = Σ_i lhs[i] · rhs[k - i] along the last axis,
    length m + n - 1 (0 when either is empty); leading axes are a batch, equal in both.
    `method`: "direct" (O(m·n)), "fft" (O(L log L), L = next_pow2(m + n - 1), f64
    temporaries) or "auto" (the cheaper, see vsla_to_graph.py).

    `%y = vsla.conv %a, %b {method = "auto"} : (tensor<3xf32>, tensor<2xf32>) -> tensor<4xf32>`
    """

    name = "vsla.conv"
    method = opt_prop_def(StringAttr)
    MODEL: ClassVar[str] = "A"

    @classmethod
    def infer_result_type(cls, operand_types, method="auto", **params):
        if method not in CONV_METHODS:
            raise ShapeError(f"method must be one of {', '.join(CONV_METHODS)}, got '{method}'")
        same_rank_floats(operand_types, cls.OPERAND_NAMES)
        (*lead, m), (*other, n) = (shape_of(t) for t in operand_types)
        if lead != other:
            raise ShapeError(f"the batch axes differ: lhs {lead}, rhs {other} (conv runs along the last axis)")
        return tensor((*lead, 0 if m == 0 or n == 0 else m + n - 1), operand_types[0].element_type)


@irdl_op_definition
class KronOp(SemiringOp):
    """Model B: the Kronecker product y[i·n + j] = lhs[i] · rhs[j], length m·n (not
    commutative).

    `%y = vsla.kron %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>`
    """

    name = "vsla.kron"
    MODEL: ClassVar[str] = "B"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        m, n = cls.vectors(operand_types)
        return tensor((checked_size((m, n), "the Kronecker product of"),), operand_types[0].element_type)


@irdl_op_definition
class StackOp(VslaOp):
    """k tensors of one rank side by side along a new leading axis, each zero-extended to
    their ambient shape: [k, ambient...].

    `%y = vsla.stack %a, %b : (tensor<3xf32>, tensor<5xf32>) -> tensor<2x5xf32>`
    """

    name = "vsla.stack"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        if not operand_types:
            raise ShapeError("stack needs at least one input")
        same_rank_floats(operand_types, [f"input #{i}" for i in range(len(operand_types))])
        shape = (len(operand_types), *ambient_shape([shape_of(t) for t in operand_types]))
        checked_size(shape, "the stacked shape")
        return tensor(shape, operand_types[0].element_type)


@irdl_op_definition
class WindowOp(OneOperandOp):
    """A stream (the leading axis, N items) grouped into windows of `size` consecutive
    items starting every `stride` items (default: `size`, windows side by side), each
    window stacked: [(N - size) // stride + 1, size, item...] (none when N < size). Items
    past the last whole window are dropped. A window of windows is a level of a tensor
    pyramid; a stride under the size overlaps the windows (a sliding window).

    `%y = vsla.window %x {size = 4 : i64} : (tensor<10x3xf32>) -> tensor<2x4x3xf32>`
    `%s = vsla.window %x {size = 4 : i64, stride = 2 : i64} : (tensor<10x3xf32>) -> tensor<4x4x3xf32>`
    """

    name = "vsla.window"
    size = prop_def(IntegerAttr)
    stride = opt_prop_def(IntegerAttr)

    @classmethod
    def infer_result_type(cls, operand_types, size=1, stride=None, **params):
        same_rank_floats(operand_types, cls.OPERAND_NAMES)
        stride = size if stride is None else stride
        if size < 1 or stride < 1:
            raise ShapeError(f"size and stride must be >= 1, got size {size}, stride {stride}")
        items, *item = shape_of(operand_types[0])
        count = 0 if items < size else (items - size) // stride + 1
        return tensor((count, size, *item), operand_types[0].element_type)


class ReduceOp(OneOperandOp):
    """x reduced along `axis` (negative counts from the end): rank - 1, at least 1."""

    axis = prop_def(IntegerAttr)

    @classmethod
    def infer_result_type(cls, operand_types, axis=0, **params):
        same_rank_floats(operand_types, cls.OPERAND_NAMES)
        shape = shape_of(operand_types[0])
        if not -len(shape) <= axis < len(shape):
            raise ShapeError(f"axis {axis} is out of range for rank {len(shape)}")
        if len(shape) == 1:
            raise ShapeError("reducing a vector would leave rank 0: vsla values have rank >= 1")
        kept = [d for a, d in enumerate(shape) if a != axis % len(shape)]
        return tensor(kept, operand_types[0].element_type)


@irdl_op_definition
class SumOp(ReduceOp):
    """Σ along `axis` (f64 accumulation in the reference).

    `%y = vsla.sum %x {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<4xf32>`
    """

    name = "vsla.sum"


@irdl_op_definition
class MeanOp(ReduceOp):
    """The mean along `axis` over its logical extent.

    `%y = vsla.mean %x {axis = -1 : i64} : (tensor<3x4xf32>) -> tensor<3xf32>`
    """

    name = "vsla.mean"


class UnaryOp(OneOperandOp):
    """x -> f(x) on the logical elements, same type."""

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        same_rank_floats(operand_types, cls.OPERAND_NAMES)
        return operand_types[0]


@irdl_op_definition
class ReluOp(UnaryOp):
    """max(x, 0).

    `%y = vsla.relu %x : (tensor<3xf32>) -> tensor<3xf32>`
    """

    name = "vsla.relu"


@irdl_op_definition
class ExpOp(UnaryOp):
    """e^x (the slack of a result stays outside: only logical elements exist).

    `%y = vsla.exp %x : (tensor<3xf32>) -> tensor<3xf32>`
    """

    name = "vsla.exp"


@irdl_op_definition
class LogOp(UnaryOp):
    """The natural logarithm.

    `%y = vsla.log %x : (tensor<3xf32>) -> tensor<3xf32>`
    """

    name = "vsla.log"


@irdl_op_definition
class TanhOp(UnaryOp):
    """tanh(x).

    `%y = vsla.tanh %x : (tensor<3xf32>) -> tensor<3xf32>`
    """

    name = "vsla.tanh"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """1 / (1 + e^-x).

    `%y = vsla.sigmoid %x : (tensor<3xf32>) -> tensor<3xf32>`
    """

    name = "vsla.sigmoid"


@irdl_op_definition
class GeluOp(UnaryOp):
    """x · Φ(x), the erf form.

    `%y = vsla.gelu %x : (tensor<3xf32>) -> tensor<3xf32>`
    """

    name = "vsla.gelu"


UNARY_OPS = (ReluOp, ExpOp, LogOp, TanhOp, SigmoidOp, GeluOp)
VSLA_OPS = (AddOp, SubOp, HadamardOp, ScaleOp, ConvOp, KronOp, StackOp, WindowOp, SumOp, MeanOp, *UNARY_OPS)

Vsla = Dialect("vsla", list(VSLA_OPS), [])

"""Shared machinery of the `graph` dialect: tensor types, shape rules, op families.

Every graph op declares its shape rule once, as the classmethod `infer_result_type`
(operand types + Python-valued parameters -> result type). The verifier and the
builder API both call it, so the IR and the Python front end can never disagree on
what a program's types are.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from strata.dialects.opinfo import op_info

FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
INDEX_WIDTHS = (32, 64)


I64_ARRAY = DenseArrayBase.constr(i64)
"""Constraint of int-list properties (axes, permutation, slice bounds)."""


class ShapeError(ValueError):
    """A shape or element-type rule of an op is violated; the message says which."""


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, FLOAT_TYPES)


def _is_signless_int(element_type: Attribute, widths: tuple[int, ...]) -> bool:
    return (
        isinstance(element_type, IntegerType)
        and element_type.signedness.data == Signedness.SIGNLESS
        and element_type.width.data in widths
    )


def is_bool(element_type: Attribute) -> bool:
    return _is_signless_int(element_type, (1,))


def is_index_int(element_type: Attribute) -> bool:
    return _is_signless_int(element_type, INDEX_WIDTHS)


def is_supported_element(element_type: Attribute) -> bool:
    return is_float(element_type) or is_bool(element_type) or is_index_int(element_type)


def tensor(shape: Sequence[int], element_type: Attribute) -> TensorType:
    return TensorType(element_type, list(shape))


def shape_of(t: TensorType) -> tuple[int, ...]:
    return tuple(t.get_shape())


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy broadcasting of several shapes; raises ShapeError naming both shapes."""
    rank = max(len(s) for s in shapes)
    result: list[int] = []
    for axis in range(rank):
        size = 1
        for s in shapes:
            dim = s[axis - rank + len(s)] if axis - rank + len(s) >= 0 else 1
            if dim != 1 and size != 1 and dim != size:
                listed = " and ".join(str(list(s)) for s in shapes)
                raise ShapeError(f"shapes {listed} do not broadcast")
            if dim != 1:
                size = dim
        result.append(size)
    return tuple(result)


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def normalize_axes(axes: Sequence[int], rank: int) -> tuple[int, ...]:
    normalized = tuple(normalize_axis(a, rank) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"axes {list(axes)} are not unique")
    return normalized


def require_float(t: TensorType, what: str) -> None:
    if not is_float(t.element_type):
        raise ShapeError(f"{what} must have a float element type, got {t}")


def require_index_int(t: TensorType, what: str) -> None:
    """Ids and labels: i32 or i64."""
    if not is_index_int(t.element_type):
        raise ShapeError(f"{what} must have element type i32 or i64, got {t}")


def require_numeric(t: TensorType, what: str) -> None:
    if is_bool(t.element_type):
        raise ShapeError(f"{what} must have a numeric (float or i32/i64) element type, got {t}")


def require_same_element(types: Sequence[TensorType], names: Sequence[str]) -> None:
    first = types[0].element_type
    for t, name in zip(types[1:], names[1:]):
        if t.element_type != first:
            raise ShapeError(
                f"{name} has element type {t.element_type}, expected {first} like {names[0]}"
            )


def attr_to_py(attr: Attribute) -> object:
    """The Python value of a property (bool, int, float, str, tuple of ints)."""
    if isinstance(attr, IntegerAttr):
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return bool(attr.value.data)
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return tuple(attr.get_values())
    return attr


def py_to_attr(value: object) -> Attribute:
    """The property attribute for a Python value, in the encodings of docs/graph-dialect.md."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, Float64Type())
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, (tuple, list)):
        return DenseArrayBase.from_list(i64, [int(v) for v in value])
    raise TypeError(f"no property encoding for {value!r}")


class GraphCanonicalization(HasCanonicalizationPatternsTrait):
    """Looks up an op's canonicalization patterns in the op registry (registered by
    transforms/graph_canonicalize.py)."""

    def get_patterns(self, op: type) -> tuple:
        return op_info(op).canonicalization or ()

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple:
        return ()


class GraphOp(IRDLOperation, abc.ABC):
    """Base of every graph op: one result, shape rule shared by verifier and builder."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(GraphCanonicalization())

    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ()
    """Names of the operands as docs/graph-dialect.md lists them, for diagnostics."""
    ACCEPTS_INTEGERS: ClassVar[bool] = False
    """Whether i32/i64 operands are accepted besides floats (i1 never is)."""

    @classmethod
    def require_element_kind(cls, t: TensorType, what: str) -> None:
        if cls.ACCEPTS_INTEGERS:
            require_numeric(t, what)
        else:
            require_float(t, what)

    @classmethod
    @abc.abstractmethod
    def infer_result_type(
        cls, operand_types: Sequence[TensorType], **params: object
    ) -> TensorType:
        """The result type for these operand types and parameters, or ShapeError."""

    @classmethod
    def check_result_type(
        cls, operand_types: Sequence[TensorType], result_type: TensorType, **params: object
    ) -> None:
        expected = cls.infer_result_type(operand_types, **params)
        if result_type != expected:
            raise ShapeError(f"result type {result_type} does not match the inferred {expected}")

    @classmethod
    def make(
        cls,
        operands: Sequence[SSAValue],
        result_type: TensorType | None = None,
        **params: object,
    ) -> GraphOp:
        """Create the op with its result type inferred (or checked, where it is given)."""
        types = [_tensor_type(v.type, cls.name, i) for i, v in enumerate(operands)]
        if result_type is None:
            result_type = cls.infer_result_type(types, **params)
        else:
            cls.check_result_type(types, result_type, **params)
        properties = {k: py_to_attr(v) for k, v in params.items()}
        return cls.create(
            operands=list(operands), result_types=[result_type], properties=properties
        )

    def params(self) -> dict[str, object]:
        return {name: attr_to_py(attr) for name, attr in self.properties.items()}

    def operand_label(self, index: int) -> str:
        names = type(self).OPERAND_NAMES
        return names[index] if index < len(names) else f"operand #{index}"

    def verify_(self) -> None:
        types = [
            _tensor_type(v.type, self.name, i, self.operand_label(i))
            for i, v in enumerate(self.operands)
        ]
        result_type = _tensor_type(self.results[0].type, self.name, 0, "result")
        try:
            type(self).check_result_type(types, result_type, **self.params())
        except ShapeError as e:
            raise VerifyException(f"'{self.name}': {e}") from None


MAX_RANK = 8
"""The highest tensor rank; the tile level takes the same (tile_types.MAX_TILE_RANK)."""


def _tensor_type(t: Attribute, op_name: str, index: int, label: str | None = None) -> TensorType:
    label = label or f"operand #{index}"
    if not isinstance(t, TensorType):
        raise VerifyException(f"'{op_name}': {label} must be a ranked tensor, got {t}")
    if len(t.get_shape()) > MAX_RANK:
        raise VerifyException(f"'{op_name}': {label} has rank {len(t.get_shape())}, more than {MAX_RANK}: {t}")
    if any(d < 0 for d in t.get_shape()):
        raise VerifyException(f"'{op_name}': {label} must have a static shape, got {t}")
    if not is_supported_element(t.element_type):
        raise VerifyException(
            f"'{op_name}': {label} has unsupported element type {t.element_type} "
            "(expected f16, bf16, f32, f64, i1, i32 or i64)"
        )
    return t


class PureGraphOp(GraphOp, abc.ABC):
    """A graph op without side effects (`Pure`): cse merges equal ones, dce drops dead
    ones. Every graph op is one except graph.dropout: its random draw is an effect, so two
    dropouts of the same operand are two draws, never merged."""

    traits = traits_def(Pure())


class ResultTypedOp(PureGraphOp, abc.ABC):
    """An op whose result type is given (not inferable from operands): cast, reshape
    and broadcast_to. `check_result_type` holds the rule relating it to the operand."""

    x = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x",)

    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        raise ShapeError(f"{cls.name} needs its result type given")


class ElementwiseOp(GraphOp, abc.ABC):
    """Marker base: the result element at an index depends only on the operands'
    (broadcast) elements at that index. Fusion and tiling key on this class."""


class UnaryElementwiseOp(ElementwiseOp, PureGraphOp, abc.ABC):
    """x -> f(x), same type as x."""

    x = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x",)
    ACCEPTS_INTEGERS: ClassVar[bool] = False

    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        (x,) = operand_types
        cls.require_element_kind(x, "x")
        return x


class BinaryElementwiseOp(ElementwiseOp, PureGraphOp, abc.ABC):
    """(lhs, rhs) -> f(lhs, rhs) with NumPy broadcasting and one element type."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("lhs", "rhs")
    ACCEPTS_INTEGERS: ClassVar[bool] = True

    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def result_element_type(cls, operand_element: Attribute) -> Attribute:
        return operand_element

    @classmethod
    def infer_result_type(cls, operand_types, **params):
        lhs, rhs = operand_types
        require_same_element(operand_types, cls.OPERAND_NAMES)
        cls.require_element_kind(lhs, "lhs")
        shape = broadcast_shapes(shape_of(lhs), shape_of(rhs))
        return tensor(shape, cls.result_element_type(lhs.element_type))


class ReductionOp(PureGraphOp, abc.ABC):
    """Reduce x over `axes` (negative axes count from the end), optionally keeping them."""

    x = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x",)
    ACCEPTS_INTEGERS: ClassVar[bool] = True

    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, *, axes=(), keepdims=False, **params):
        (x,) = operand_types
        cls.require_element_kind(x, "x")
        shape = shape_of(x)
        reduced = normalize_axes(axes, len(shape))
        if keepdims:
            out = [1 if i in reduced else d for i, d in enumerate(shape)]
        else:
            out = [d for i, d in enumerate(shape) if i not in reduced]
        return tensor(out, x.element_type)


class RowOp(PureGraphOp, abc.ABC):
    """A float op that normalizes x along one axis and keeps its type (softmax family)."""

    x = operand_def(TensorType)
    result = result_def(TensorType)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x",)

    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, *, axis=-1, **params):
        (x,) = operand_types
        require_float(x, "x")
        normalize_axis(axis, len(shape_of(x)))
        return x

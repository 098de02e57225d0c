"""Shape ops of the `graph` dialect: reshape, transpose, broadcast_to, slice, concat."""

from __future__ import annotations

from typing import ClassVar

import math

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, var_operand_def

from strata.dialects.graph_base import (
    I64_ARRAY,
    PureGraphOp,
    ResultTypedOp,
    ShapeError,
    broadcast_shapes,
    normalize_axis,
    require_same_element,
    shape_of,
    tensor,
)


@irdl_op_definition
class ReshapeOp(ResultTypedOp):
    """Same elements in row-major order, new shape (the result type's).

    `%y = graph.reshape %x : (tensor<4x8xf32>) -> tensor<32xf32>`
    """

    name = "graph.reshape"

    @classmethod
    def check_result_type(cls, operand_types, result_type, **params):
        (x,) = operand_types
        require_same_element([x, result_type], ("x", "result"))
        if math.prod(shape_of(x)) != math.prod(shape_of(result_type)):
            raise ShapeError(
                f"element count changes: {x} has {math.prod(shape_of(x))}, "
                f"{result_type} has {math.prod(shape_of(result_type))}"
            )


@irdl_op_definition
class BroadcastToOp(ResultTypedOp):
    """numpy.broadcast_to the result shape.

    `%y = graph.broadcast_to %b : (tensor<8xf32>) -> tensor<4x8xf32>`
    """

    name = "graph.broadcast_to"

    @classmethod
    def check_result_type(cls, operand_types, result_type, **params):
        (x,) = operand_types
        require_same_element([x, result_type], ("x", "result"))
        target = shape_of(result_type)
        try:
            broadcast = broadcast_shapes(shape_of(x), target)
        except ShapeError:
            broadcast = None
        if len(shape_of(x)) > len(target) or broadcast != target:
            raise ShapeError(f"{x} does not broadcast to {result_type}")


@irdl_op_definition
class TransposeOp(PureGraphOp):
    """numpy.transpose(x, permutation).

    `%y = graph.transpose %x {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>`
    """

    name = "graph.transpose"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    permutation = prop_def(I64_ARRAY)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x",)

    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, *, permutation=(), **params):
        (x,) = operand_types
        shape = shape_of(x)
        if sorted(permutation) != list(range(len(shape))):
            raise ShapeError(
                f"permutation {list(permutation)} is not a permutation of the "
                f"{len(shape)} axes of {x}"
            )
        return tensor([shape[p] for p in permutation], x.element_type)


@irdl_op_definition
class SliceOp(PureGraphOp):
    """x[starts:limits:steps] per axis; 0 <= start <= limit <= size, step >= 1.

    `%y = graph.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 8>, steps = array<i64: 1, 3>}
        : (tensor<4x8xf32>) -> tensor<4x2xf32>`
    """

    name = "graph.slice"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    starts = prop_def(I64_ARRAY)
    limits = prop_def(I64_ARRAY)
    steps = prop_def(I64_ARRAY)
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x",)

    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, *, starts=(), limits=(), steps=(), **params):
        (x,) = operand_types
        shape = shape_of(x)
        for name, values in (("starts", starts), ("limits", limits), ("steps", steps)):
            if len(values) != len(shape):
                raise ShapeError(f"{name} has {len(values)} entries, x has rank {len(shape)}")
        out = []
        for axis, (start, limit, step, size) in enumerate(zip(starts, limits, steps, shape)):
            if step < 1:
                raise ShapeError(f"step {step} on axis {axis} must be >= 1")
            if not 0 <= start <= limit <= size:
                raise ShapeError(
                    f"bounds [{start}, {limit}) on axis {axis} do not lie inside size {size}"
                )
            out.append(-(-(limit - start) // step))
        return tensor(out, x.element_type)


@irdl_op_definition
class ConcatOp(PureGraphOp):
    """numpy.concatenate(inputs, axis).

    `%y = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<5x8xf32>`
    """

    name = "graph.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])

    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, *, axis=0, **params):
        if not operand_types:
            raise ShapeError("needs at least one input")
        names = [f"operand #{i}" for i in range(len(operand_types))]
        require_same_element(operand_types, names)
        first = shape_of(operand_types[0])
        axis = normalize_axis(axis, len(first))
        total = 0
        for name, t in zip(names, operand_types):
            s = shape_of(t)
            if len(s) != len(first) or any(
                a != b for i, (a, b) in enumerate(zip(s, first)) if i != axis
            ):
                raise ShapeError(f"{name} is {t}; all inputs must match {operand_types[0]} off axis {axis}")
            total += s[axis]
        return tensor((*first[:axis], total, *first[axis + 1 :]), operand_types[0].element_type)

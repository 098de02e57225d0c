"""Computation of the `tile` dialect: whole-tile ops (`tile.map` with its `tile.yield`,
`tile.iota`, `tile.reduce`, `tile.broadcast`, `tile.mma`) and run-time checks
(`tile.check`)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    I64,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i64,
)
from xdsl.ir import Region
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    irdl_to_attr_constraint,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from strata.dialects.tile_types import TileType


@irdl_op_definition
class MapOp(IRDLOperation):
    """Apply the scalar body to each element of equally shaped tiles (zero inputs: fill).

    The body's block arguments are the operands' elements; `tile.yield` gives the result's.
    """

    name = "tile.map"
    inputs = var_operand_def(TileType)
    result = result_def(TileType)
    body = region_def("single_block")
    traits = traits_def(Pure())

    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result) $body"

    def __init__(self, inputs, result_type: TileType, body: Region):
        super().__init__(operands=[list(inputs)], result_types=[result_type], regions=[body])

    def verify_(self) -> None:
        shape = self.result.type.get_shape()
        for i, t in enumerate(self.inputs):
            if t.type.get_shape() != shape:
                raise VerifyException(f"'tile.map': input #{i} is {t.type}, the result is {self.result.type}")
        block = self.body.block
        expected = [t.type.element_type for t in self.inputs]
        if [a.type for a in block.args] != expected:
            listed = ", ".join(str(t) for t in expected)
            raise VerifyException(f"'tile.map': body arguments must be the input element types ({listed})")
        yielded = block.last_op
        if not isinstance(yielded, YieldOp) or [v.type for v in yielded.values] != [self.result.type.element_type]:
            raise VerifyException(f"'tile.map': the body must yield one {self.result.type.element_type}")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The element a tile.map body computes."""

    name = "tile.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(MapOp))

    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class IotaOp(IRDLOperation):
    """Each element's index within the tile along `axis`, as i64 (masks, gathers).

    `%c = tile.iota {axis = 1 : i64} : !tile.tile<4x8xi64>`
    """

    name = "tile.iota"
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TileType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, axis: int, result_type: TileType):
        super().__init__(properties={"axis": IntegerAttr(axis, i64)}, result_types=[result_type])

    def verify_(self) -> None:
        t = self.result.type
        if t.element_type != i64:
            raise VerifyException(f"'tile.iota': result must have element type i64, got {t}")
        if not 0 <= self.axis.value.data < len(t.get_shape()):
            raise VerifyException(f"'tile.iota': axis {self.axis.value.data} is outside {t}")


@irdl_op_definition
class CheckOp(IRDLOperation):
    """Fail the kernel (status 1, reported with `message`) if any valid element of the
    i1 tile `failed` is true: run-time checks such as ids in range.

    `tile.check %bad {message = "'graph.embedding': an id is outside [0, 100)"} : !tile.tile<16x1xi1>`
    """

    name = "tile.check"
    failed = operand_def(TileType)
    message = prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$failed attr-dict `:` type($failed)"

    def __init__(self, failed, message: str):
        super().__init__(operands=[failed], properties={"message": StringAttr(message)})

    def verify_(self) -> None:
        if self.failed.type.element_type != IntegerType(1):
            raise VerifyException(f"'tile.check': the condition must be an i1 tile, got {self.failed.type}")


REDUCTION_KINDS = ("sum", "max", "min")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Reduce a tile along `axes`, keeping them with size 1 (kind: sum, max or min)."""

    name = "tile.reduce"
    input = operand_def(TileType)
    result = result_def(TileType)
    axes = prop_def(DenseArrayBase.constr(i64))
    kind = prop_def(StringAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        if self.kind.data not in REDUCTION_KINDS:
            raise VerifyException(f"'tile.reduce': kind must be one of {', '.join(REDUCTION_KINDS)}, got \"{self.kind.data}\"")
        shape = self.input.type.get_shape()
        axes = self.axes.get_values()
        if any(not 0 <= a < len(shape) for a in axes) or len(set(axes)) != len(axes):
            raise VerifyException(f"'tile.reduce': axes {list(axes)} must be unique axes of {self.input.type}")
        expected = TileType([1 if i in axes else d for i, d in enumerate(shape)], self.input.type.element_type)
        if self.result.type != expected:
            raise VerifyException(f"'tile.reduce': result must be {expected}, got {self.result.type}")


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """Repeat a tile along its size-1 axes to the result shape."""

    name = "tile.broadcast"
    input = operand_def(TileType)
    result = result_def(TileType)
    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        if src.element_type != dst.element_type or len(src.get_shape()) != len(dst.get_shape()) or any(
            s not in (1, d) for s, d in zip(src.get_shape(), dst.get_shape())
        ):
            raise VerifyException(f"'tile.broadcast': {src} does not broadcast to {dst}")


@irdl_op_definition
class MmaOp(IRDLOperation):
    """acc + a @ b: [..., M, K] x [..., K, N] + [..., M, N], leading dims all 1 (a batch
    instance of a batched matmul; the grid runs over the batch)."""

    name = "tile.mma"
    _ACC: ClassVar = VarConstraint("ACC", irdl_to_attr_constraint(TileType))
    a = operand_def(TileType)
    b = operand_def(TileType)
    acc = operand_def(_ACC)
    result = result_def(_ACC)
    traits = traits_def(Pure())

    assembly_format = "$a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)"

    def __init__(self, a, b, acc):
        super().__init__(operands=[a, b, acc], result_types=[acc.type])

    def verify_(self) -> None:
        a, b, acc = self.a.type, self.b.type, self.acc.type
        ranks = {len(t.get_shape()) for t in (a, b, acc)}
        if len(ranks) != 1 or min(ranks) < 2 or any(set(t.get_shape()[:-2]) - {1} for t in (a, b, acc)):
            raise VerifyException(
                "'tile.mma': operands must have one rank >= 2 whose leading dims are all 1"
            )
        (m, k), (k2, n) = a.get_shape()[-2:], b.get_shape()[-2:]
        if k != k2 or acc.get_shape()[-2:] != (m, n) or self.result.type != acc:
            raise VerifyException(f"'tile.mma': {a} x {b} does not accumulate into {acc}")
        if not (a.element_type == b.element_type == acc.element_type):
            raise VerifyException("'tile.mma': a, b and acc must share an element type")


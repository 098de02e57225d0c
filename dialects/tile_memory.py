"""Memory access of the `tile` dialect: views of buffers (`tile.make_tensor_view`,
`tile.make_partition_view`), token-ordered tile loads and stores (`tile.load_view_tko`,
`tile.store_view_tko`), row gathers (`tile.gather`) and their atomic counterpart, row
scatter-adds (`tile.scatter_add_tko`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType, MemRefType, StringAttr, f32, f64, i64
from xdsl.ir import Attribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from strata.dialects.tile_bounds import check_tile_index
from strata.dialects.tile_types import PartitionViewType, TensorViewType, TileType
from strata.dialects.token import TokenType, verify_ordering


@irdl_op_definition
class MakeTensorViewOp(IRDLOperation):
    """View a flat buffer as a strided tensor (stride 0 broadcasts an axis)."""

    name = "tile.make_tensor_view"
    buffer = operand_def(MemRefType)
    result = result_def(TensorViewType)
    traits = traits_def(Pure())

    assembly_format = "$buffer attr-dict `:` type($buffer) `->` type($result)"

    def __init__(self, buffer, view_type: TensorViewType):
        super().__init__(operands=[buffer], result_types=[view_type])

    def verify_(self) -> None:
        buffer, view = self.buffer.type, self.result.type
        if buffer.element_type != view.element_type:
            raise VerifyException(
                f"'tile.make_tensor_view': buffer element type {buffer.element_type} "
                f"differs from the view's {view.element_type}"
            )
        size = math.prod(buffer.get_shape())
        if 0 not in view.get_shape() and view.max_element_index() >= size:
            raise VerifyException(
                f"'tile.make_tensor_view': the view reaches element {view.max_element_index()} "
                f"of a {size}-element buffer"
            )


@irdl_op_definition
class MakePartitionViewOp(IRDLOperation):
    """Cut a tensor_view into a grid of tiles of the result type's tile shape."""

    name = "tile.make_partition_view"
    view = operand_def(TensorViewType)
    result = result_def(PartitionViewType)
    traits = traits_def(Pure())

    assembly_format = "$view attr-dict `:` type($view) `->` type($result)"

    def __init__(self, view, tile_shape: Sequence[int]):
        super().__init__(operands=[view], result_types=[PartitionViewType(tile_shape, view.type)])

    def verify_(self) -> None:
        if self.result.type.view != self.view.type:
            raise VerifyException(
                f"'tile.make_partition_view': partitions {self.result.type.view}, "
                f"but its operand is {self.view.type}"
            )


class TokenOrderedAccess(IRDLOperation):
    """Shared checks of load_view_tko / store_view_tko."""

    memory_ordering = prop_def(StringAttr, default_value=StringAttr("weak"))
    memory_scope = prop_def(StringAttr, default_value=StringAttr("device"))
    irdl_options = (ParsePropInAttrDict(),)

    def check_access(self, view: PartitionViewType, indices: Sequence, tile: Attribute) -> None:
        verify_ordering(self, self.memory_ordering, self.memory_scope)
        if len(indices) != len(view.get_tile_shape()):
            raise VerifyException(
                f"'{self.name}': {len(indices)} grid indices for a rank-{len(view.get_tile_shape())} partition_view"
            )
        if tile != view.tile_type():
            raise VerifyException(f"'{self.name}': tile type {tile} differs from the partition's {view.tile_type()}")
        if 0 not in view.view.get_shape():
            for axis, (index, tiles) in enumerate(zip(indices, view.grid_shape())):
                error = check_tile_index(self.name, index, axis, tiles)
                if error is not None:
                    raise VerifyException(error)


@irdl_op_definition
class LoadViewTkoOp(TokenOrderedAccess):
    """Load the tile at grid position `indices`, ordered after `token`."""

    name = "tile.load_view_tko"
    view = operand_def(PartitionViewType)
    indices = var_operand_def(IndexType)
    token = operand_def(TokenType)
    result = result_def(TileType)
    result_token = result_def(TokenType)

    assembly_format = (
        "$view `[` $indices `]` `token` $token attr-dict `:` type($view) `->` type($result)"
    )

    def __init__(self, view, indices, token):
        super().__init__(
            operands=[view, list(indices), token],
            result_types=[view.type.tile_type(), TokenType()],
        )

    def verify_(self) -> None:
        self.check_access(self.view.type, self.indices, self.result.type)


@irdl_op_definition
class StoreViewTkoOp(TokenOrderedAccess):
    """Store `tile` (its valid extent) at grid position `indices`, ordered after `token`."""

    name = "tile.store_view_tko"
    tile = operand_def(TileType)
    view = operand_def(PartitionViewType)
    indices = var_operand_def(IndexType)
    token = operand_def(TokenType)
    result_token = result_def(TokenType)

    assembly_format = "$tile `,` $view `[` $indices `]` `token` $token attr-dict `:` type($tile) `,` type($view)"

    def __init__(self, tile, view, indices, token):
        super().__init__(operands=[tile, view, list(indices), token], result_types=[TokenType()])

    def verify_(self) -> None:
        self.check_access(self.view.type, self.indices, self.tile.type)


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Rows of a rank-2 tensor_view picked by an index tile, one column tile wide:
    result[i, j] = view[rows[i, 0], column · TD + j]. Row indices are clamped into the
    view (a tile.check before it reports bad ones), so it never reads out of bounds.

    `%e = tile.gather %table[%ids], %c : !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>, !tile.tile<8x1xi64> -> !tile.tile<8x16xf32>`
    """

    name = "tile.gather"
    view = operand_def(TensorViewType)
    rows = operand_def(TileType)
    column = operand_def(IndexType)
    result = result_def(TileType)
    traits = traits_def(Pure())

    assembly_format = "$view `[` $rows `]` `,` $column attr-dict `:` type($view) `,` type($rows) `->` type($result)"

    def __init__(self, view, rows, column, result_type: TileType):
        super().__init__(operands=[view, rows, column], result_types=[result_type])

    def verify_(self) -> None:
        view, rows, result = self.view.type, self.rows.type, self.result.type
        if len(view.get_shape()) != 2 or len(result.get_shape()) != 2:
            raise VerifyException("'tile.gather': the view and the result must be rank 2")
        if rows.element_type != i64 or rows.get_shape() != (result.get_shape()[0], 1):
            raise VerifyException(f"'tile.gather': rows must be a {result.get_shape()[0]}x1 i64 tile, got {rows}")
        if result.element_type != view.element_type:
            raise VerifyException(f"'tile.gather': result element type must be the view's {view.element_type}")
        if 0 not in view.get_shape():
            error = check_tile_index(self.name, self.column, 1, -(-view.get_shape()[1] // result.get_shape()[1]))
            if error is not None:
                raise VerifyException(error)


@irdl_op_definition
class ScatterAddTkoOp(IRDLOperation):
    """tile.gather's counterpart: the rows of `tile` added into rows of a rank-2 tensor_view
    picked by an index tile, one column tile wide, ordered after `token`:
    view[rows[i, 0], column · TD + j] += tile[i, j] over the tile's valid extent. Each add
    is atomic: rows of one tile and kernel instances may add into the same elements (an
    embedding's gradient, where ids repeat), in no fixed order, so a float sum may round
    differently from run to run. Row indices are clamped into the view (a tile.check
    before it reports bad ones), so it never writes out of bounds. f32 and f64; relaxed.

    `%t1 = tile.scatter_add_tko %g, %table[%ids], %c token %t0 : !tile.tile<8x16xf32>, !tile.tensor_view<100x16xf32, strides [16, 1], offset 0>, !tile.tile<8x1xi64>`
    """

    name = "tile.scatter_add_tko"
    tile = operand_def(TileType)
    view = operand_def(TensorViewType)
    rows = operand_def(TileType)
    column = operand_def(IndexType)
    token = operand_def(TokenType)
    result_token = result_def(TokenType)
    memory_ordering = prop_def(StringAttr, default_value=StringAttr("relaxed"))
    memory_scope = prop_def(StringAttr, default_value=StringAttr("device"))
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$tile `,` $view `[` $rows `]` `,` $column `token` $token attr-dict `:` type($tile) `,` type($view) `,` type($rows)"
    )

    def __init__(self, tile, view, rows, column, token):
        super().__init__(operands=[tile, view, rows, column, token], result_types=[TokenType()])

    def verify_(self) -> None:
        verify_ordering(self, self.memory_ordering, self.memory_scope)
        if self.memory_ordering.data != "relaxed" or self.memory_scope.data == "system":
            raise VerifyException(
                f"'{self.name}': adds relaxed within the device (memory_ordering \"relaxed\", memory_scope "
                f"\"block\" or \"device\"), not {self.memory_ordering.data} at {self.memory_scope.data} scope"
            )
        view, rows, value = self.view.type, self.rows.type, self.tile.type
        if len(view.get_shape()) != 2 or len(value.get_shape()) != 2:
            raise VerifyException(f"'{self.name}': the view and the tile must be rank 2")
        if rows.element_type != i64 or rows.get_shape() != (value.get_shape()[0], 1):
            raise VerifyException(f"'{self.name}': rows must be a {value.get_shape()[0]}x1 i64 tile, got {rows}")
        if value.element_type != view.element_type or value.element_type not in (f32, f64):
            raise VerifyException(
                f"'{self.name}': adds f32 or f64 elements of the view's type, not {value.element_type} into {view.element_type}"
            )
        if 0 not in view.get_shape():
            error = check_tile_index(self.name, self.column, 1, -(-view.get_shape()[1] // value.get_shape()[1]))
            if error is not None:
                raise VerifyException(error)

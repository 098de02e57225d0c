"""The `tile` dialect: kernels over a grid of tiles, modelled on NVIDIA CUDA Tile IR.

A program-level `func.func` declares buffers (`tile.buffer`) and runs kernels on them
(`tile.launch`). A `tile.kernel` runs once per point of its grid; each instance reads its
position (`tile.program_id`), views buffers as strided tensors cut into tiles
(`tile.make_tensor_view`, `tile.make_partition_view`), loads and stores tiles in token
order (`tile.load_view_tko`, `tile.store_view_tko`), and computes on whole tiles
(`tile.map`, `tile.reduce`, `tile.broadcast`, `tile.mma`).

Edge tiles are partial: a tile loaded at the edge of its view holds only the elements
inside the view (its *valid extent*); every tile op computes over the valid extent and a
store writes exactly it, so no padding value is ever observed.

    tile.kernel @add(%a: memref<32xf32>, %b: memref<32xf32>) attributes {grid = array<i64: 4>} {
      %i = tile.program_id 0 : index
      %v = tile.make_tensor_view %a : memref<32xf32> -> !tile.tensor_view<32xf32, strides [1], offset 0>
      %p = tile.make_partition_view %v : ... -> !tile.partition_view<8, !tile.tensor_view<...>>
      %t0 = token.make : !token.token
      %x, %t1 = tile.load_view_tko %p[%i] token %t0 : ... -> !tile.tile<8xf32>
      %y = tile.map %x : (!tile.tile<8xf32>) -> !tile.tile<8xf32> {
      ^bb0(%e: f32):
        %r = arith.addf %e, %e : f32
        tile.yield %r : f32
      }
      %t2 = tile.store_view_tko %y, %p[%i] token %t1 : ...
      tile.return
    }
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    I64,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Dialect, Region
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    irdl_to_attr_constraint,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from strata.dialects.tile_types import (
    KERNEL_BYTE_BUDGET,
    PartitionViewType,
    TensorViewType,
    TileType,
)
from strata.dialects.token import TokenType, verify_ordering


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A tile kernel: a body run once per point of `grid`, on memref arguments."""

    name = "tile.kernel"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    grid = prop_def(DenseArrayBase.constr(i64))
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())

    def __init__(self, name: str, arg_types: Sequence[Attribute], grid: Sequence[int], body: Region):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(arg_types, []),
                "grid": DenseArrayBase.from_list(i64, list(grid)),
            },
            regions=[body],
        )

    def grid_shape(self) -> tuple[int, ...]:
        return tuple(self.grid.get_values())

    def verify_(self) -> None:
        if not self.grid_shape() or any(g < 1 for g in self.grid_shape()):
            raise VerifyException(f"'tile.kernel' @{self.sym_name.data}: grid {list(self.grid_shape())} must be non-empty and positive")
        arg_types = [a.type for a in self.body.block.args]
        if self.function_type.outputs.data:
            raise VerifyException(f"'tile.kernel' @{self.sym_name.data}: a kernel has no results")
        if arg_types != list(self.function_type.inputs.data):
            listed = ", ".join(str(t) for t in arg_types)
            raise VerifyException(
                f"'tile.kernel' @{self.sym_name.data}: block arguments ({listed}) must match "
                f"function_type {self.function_type}"
            )
        for t in arg_types:
            if not isinstance(t, MemRefType) or any(d < 0 for d in t.get_shape()):
                raise VerifyException(
                    f"'tile.kernel' @{self.sym_name.data}: arguments must be static memrefs, got {t}"
                )
        tile_bytes = sum(
            r.type.num_bytes() for op in self.body.walk() for r in op.results if isinstance(r.type, TileType)
        )
        if tile_bytes > KERNEL_BYTE_BUDGET:
            raise VerifyException(
                f"'tile.kernel' @{self.sym_name.data}: its tiles take {tile_bytes} bytes, over the "
                f"{KERNEL_BYTE_BUDGET}-byte on-chip budget: use smaller tiles"
            )

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name, inputs, outputs, region, extra, _, _ = parse_func_op_like(parser, reserved_attr_names=("sym_name", "function_type"))
        if outputs:
            parser.raise_error("a tile.kernel has no results")
        attributes = dict(extra.data) if extra is not None else {}
        grid = attributes.pop("grid", None)
        if not isinstance(grid, DenseArrayBase):
            parser.raise_error("tile.kernel needs `attributes {grid = array<i64: ...>}`")
        op = cls(name, inputs, grid.get_values(), region)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            {"grid": self.grid, **self.attributes},
            reserved_attr_names=("sym_name", "function_type"),
            print_empty_outputs=False,
        )


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends a kernel body."""

    name = "tile.return"
    traits = traits_def(IsTerminator(), HasParent(KernelOp))
    assembly_format = "attr-dict"


@irdl_op_definition
class ProgramIdOp(IRDLOperation):
    """This kernel instance's position along grid axis `dim`: `%i = tile.program_id 0 : index`."""

    name = "tile.program_id"
    dim = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)
    traits = traits_def(Pure())

    assembly_format = "$dim attr-dict `:` type($result)"

    def __init__(self, dim: int):
        super().__init__(properties={"dim": IntegerAttr(dim, i64)}, result_types=[IndexType()])

    def verify_(self) -> None:
        kernel = self.parent_op()
        while kernel is not None and not isinstance(kernel, KernelOp):
            kernel = kernel.parent_op()
        if kernel is None:
            raise VerifyException("'tile.program_id' must be inside a tile.kernel")
        if not 0 <= self.dim.value.data < len(kernel.grid_shape()):
            raise VerifyException(
                f"'tile.program_id': dim {self.dim.value.data} is outside the kernel's "
                f"{len(kernel.grid_shape())}-d grid"
            )


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


@irdl_op_definition
class BufferOp(IRDLOperation):
    """A program buffer; storage is bound once, at bind time (optionally initialized)."""

    name = "tile.buffer"
    init = opt_prop_def(DenseIntOrFPElementsAttr)
    result = result_def(MemRefType)
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, buffer_type: MemRefType, init: DenseIntOrFPElementsAttr | None = None):
        super().__init__(properties={"init": init} if init else {}, result_types=[buffer_type])


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run a kernel over its whole grid on these buffers."""

    name = "tile.launch"
    kernel = prop_def(SymbolRefAttr)
    args = var_operand_def(MemRefType)

    assembly_format = "$kernel `(` $args `)` attr-dict `:` type($args)"

    def __init__(self, kernel: str, args):
        super().__init__(properties={"kernel": SymbolRefAttr(kernel)}, operands=[list(args)])

    def verify_(self) -> None:
        kernel = SymbolTable.lookup_symbol(self, self.kernel)
        if kernel is None:
            raise VerifyException(f"'tile.launch': no symbol @{self.kernel.string_value()}")
        lowered = isinstance(kernel, FuncOp) and "tile.grid" in kernel.attributes
        if not isinstance(kernel, KernelOp) and not lowered:
            raise VerifyException(f"'tile.launch': @{self.kernel.string_value()} is not a tile.kernel")
        # A kernel lowered to loops takes the grid range as two trailing index arguments,
        # a GPU kernel with checks also its status word (lower-tile-to-gpu).
        trailing = 2 + ("gpu.status" in kernel.attributes) if lowered else 0
        expected = list(kernel.function_type.inputs.data)[: -trailing or None]
        if [a.type for a in self.args] != expected:
            raise VerifyException(f"'tile.launch': arguments {[str(a.type) for a in self.args]} do not match @{self.kernel.string_value()}'s {[str(t) for t in expected]}")


Tile = Dialect(
    "tile",
    [KernelOp, ReturnOp, ProgramIdOp, MakeTensorViewOp, MakePartitionViewOp, LoadViewTkoOp,
     StoreViewTkoOp, MapOp, YieldOp, IotaOp, CheckOp, GatherOp, ReduceOp, BroadcastOp, MmaOp, BufferOp, LaunchOp],
    [TileType, TensorViewType, PartitionViewType],
)  # fmt: skip

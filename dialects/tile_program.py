"""Program structure of the `tile` dialect: kernels and their grid (`tile.kernel`,
`tile.return`, `tile.program_id`) and the program-level buffers they run on
(`tile.buffer`, `tile.launch`)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    I64,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, BlockArgument, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
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

from strata.dialects.tile_types import KERNEL_BYTE_BUDGET, TileType


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
class BufferOp(IRDLOperation):
    """A program buffer; storage is bound once, at bind time (optionally initialized)."""

    name = "tile.buffer"
    init = opt_prop_def(DenseIntOrFPElementsAttr)
    result = result_def(MemRefType)
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, buffer_type: MemRefType, init: DenseIntOrFPElementsAttr | None = None):
        super().__init__(properties={"init": init} if init else {}, result_types=[buffer_type])


WRITES = {"tile.store_view_tko": 1, "tile.scatter_add_tko": 1, "memref.store": 1, "memref.atomic_rmw": 1}
"""Ops that write memory, with the operand index of the view or memref they write."""
VIEWS = ("tile.make_tensor_view", "tile.make_partition_view", "memref.subview", "memref.cast",
         "memref.reinterpret_cast", "memref.collapse_shape", "memref.expand_shape", "memref.view")
"""Ops whose result is a view of their first operand's memory."""


def written_arguments(kernel) -> set[int]:
    """The positions of the kernel's (tile.kernel or lowered func.func) memref arguments
    that it may write: those reaching a store through views of them."""
    written = set()
    for position, arg in enumerate(kernel.body.blocks[0].args if kernel.body.blocks else ()):
        pending: list[SSAValue] = [arg]
        seen = set()
        while pending and position not in written:
            value = pending.pop()
            if value in seen:
                continue
            seen.add(value)
            for use in value.uses:
                name = use.operation.name
                if WRITES.get(name) == use.index or (name == "memref.store" and use.index == 1):
                    written.add(position)
                elif name in VIEWS and use.index == 0:
                    pending.extend(use.operation.results)
    return written


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
        # A program's arguments are its caller's arrays: a kernel only reads them.
        program = self.parent_block()
        for position in sorted(written_arguments(kernel)):
            if position >= len(self.args):
                continue
            arg = self.args[position]
            if isinstance(arg, BlockArgument) and arg.block is program and isinstance(program.parent_op(), FuncOp):
                raise VerifyException(
                    f"'tile.launch': @{self.kernel.string_value()} writes its argument {position}, which is "
                    f"the program's argument {arg.index} (the caller's input, read-only): write into a "
                    f"tile.buffer instead"
                )


"""`lower-graph-to-tile`: every graph function becomes a program of tile kernels.

Before (graph):

    func.func @f(%x: tensor<7x5xf32>, %b: tensor<5xf32>) -> tensor<7x5xf32> {
      %0 = graph.add %x, %b : (tensor<7x5xf32>, tensor<5xf32>) -> tensor<7x5xf32>
      func.return %0 : tensor<7x5xf32>
    }

After (tile): the function takes and returns flat buffers, declares one `tile.buffer`
per intermediate and launches one kernel per op; broadcasting is a stride-0 view:

    tile.kernel @f_add_0(%a: memref<35xf32>, %b: memref<5xf32>, %c: memref<35xf32>)
        attributes {grid = array<i64: 1, 1>} { ... tile.load_view_tko / tile.map / tile.store_view_tko ... }
    func.func @f(%x: memref<35xf32>, %b: memref<5xf32>) -> memref<35xf32> {
      %0 = tile.buffer : memref<35xf32>
      tile.launch @f_add_0(%x, %b, %0) : memref<35xf32>, memref<5xf32>, memref<35xf32>
      func.return %0 : memref<35xf32>
    }

Each op's lowering is registered in the per-op registry (`op_info(op).tile_lowering`):
elementwise, fused groups, constants and shape ops here; matmul in graph_to_tile_matmul,
embedding and dropout in graph_to_tile_indexed, row ops in graph_to_tile_rows. An op
without one is reported, never skipped. Tile shapes come from `TileCostModel`,
overridable by the pass options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    ModuleOp,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from strata.dialects import graph, tile
from strata.dialects.graph_fused import fusible
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import op_info, register_tile_lowering
from strata.dialects.tile_types import TensorViewType, element_bytes
from strata.errors import StrataError
from strata.ir import location_prefix
from strata.lowering.scalar_rules import emit_members, emit_scalar
from strata.lowering.tile_builder import (
    KernelBuilder,
    TileCostModel,
    broadcast_strides,
    contiguous_strides,
    flat_buffer_type,
    grid_of,
)


def logical_shape(t: TensorType) -> tuple[int, ...]:
    """Rank-0 tensors are handled as one-element rank-1 tensors."""
    return shape_of(t) or (1,)


@dataclass
class ProgramLowering:
    """State while one graph function becomes a tile program."""

    module: ModuleOp
    function_name: str
    body: Block
    cost: TileCostModel
    buffers: dict[SSAValue, SSAValue] = field(default_factory=dict)
    strides: dict[SSAValue, tuple[int, ...]] = field(default_factory=dict)
    """Values bound to a non-contiguous view of their buffer (absorbed transposes)."""
    kernels: int = 0

    def buffer_of(self, value: SSAValue) -> SSAValue:
        return self.buffers[value]

    def operand(self, value: SSAValue) -> tuple[SSAValue, TensorType, tuple[int, ...]]:
        """A matmul operand: its buffer, type and element strides."""
        return self.buffers[value], value.type, self.strides.get(value, contiguous_strides(shape_of(value.type)))

    def bind(self, value: SSAValue, buffer: SSAValue) -> None:
        self.buffers[value] = buffer

    def new_buffer(self, t: TensorType, init=None) -> SSAValue:
        op = tile.BufferOp(flat_buffer_type(shape_of(t), t.element_type), init)
        self.body.add_op(op)
        return op.results[0]

    def kernel_name(self, op: Operation | str) -> str:
        """A unique kernel symbol named after the function and the op (or a label)."""
        label = op if isinstance(op, str) else op.name.removeprefix("graph.")
        self.kernels += 1
        return f"{self.function_name}_{label}_{self.kernels - 1}"

    def launch(self, kernel: KernelBuilder, args: Sequence[SSAValue], in_place: Sequence[int] = ()) -> None:
        """Add the kernel and launch it; `in_place` lists inputs whose elements it reads at
        exactly the positions it writes (the planner may give the output their memory)."""
        finished = kernel.finish()
        if in_place:
            finished.attributes["tile.in_place"] = DenseArrayBase.from_list(i64, list(in_place))
        self.module.body.block.add_op(finished)
        self.body.add_op(tile.LaunchOp(kernel.name, args))

    @staticmethod
    def mark_workspace(buffer: SSAValue) -> SSAValue:
        """A buffer only the op's own next kernel reads (planned in the workspace arena)."""
        buffer.owner.attributes["tile.workspace"] = UnitAttr()
        return buffer


ELEMENTWISE_OPS = tuple(op for op in graph.GRAPH_OPS if fusible(op))
"""Ops whose element is a function of their operands' elements (dropout also of its index)."""


@register_tile_lowering(*ELEMENTWISE_OPS)
def lower_elementwise(op: Operation, p: ProgramLowering) -> None:
    out_type = op.results[0].type
    shape = logical_shape(out_type)
    tile_shape = p.cost.elementwise_tile(shape, out_type.element_type)
    inputs = [p.buffer_of(v) for v in op.operands]
    out = p.new_buffer(out_type)
    k = KernelBuilder(p.kernel_name(op), [*inputs, out], grid_of(shape, tile_shape))
    tiles = load_broadcast(k, op.operands, shape, tile_shape)
    result = k.map(tiles, out_type.element_type, lambda block, elements: emit_scalar(op, block, elements))
    out_view = TensorViewType(shape, out_type.element_type, contiguous_strides(shape))
    k.store(result, k.partition(len(inputs), out_view, tile_shape), k.program_ids)
    p.launch(k, [*inputs, out], same_layout_inputs(op.operands, out_type))
    p.bind(op.results[0], out)


@register_tile_lowering(graph.FusedOp)
def lower_fused(op: graph.FusedOp, p: ProgramLowering) -> None:
    """One kernel for the whole group: each input is loaded once per tile, each result is
    one tile.map whose body chains the members' scalar rules (LLVM drops what a result
    does not need), and every result is stored from the same loop nest position."""
    body = op.body.block
    if isinstance(body.first_op, graph.MatmulOp):
        from strata.lowering.graph_to_tile_matmul import lower_matmul_epilogue

        lower_matmul_epilogue(op, p)
        return
    if not all(isinstance(member, graph.ElementwiseOp | graph.YieldOp) for member in body.ops):
        from strata.lowering.graph_to_tile_rows import lower_row_fused

        lower_row_fused(op, p)
        return
    first = op.outputs[0].type
    shape = logical_shape(first)
    widest = max((v.type.element_type for v in (*op.inputs, *op.outputs)), key=element_bytes)
    tile_shape = p.cost.elementwise_tile(shape, widest, tiles=len(op.inputs) + len(op.outputs))
    inputs = [p.buffer_of(v) for v in op.inputs]
    outputs = [p.new_buffer(r.type) for r in op.outputs]
    k = KernelBuilder(p.kernel_name(op), [*inputs, *outputs], grid_of(shape, tile_shape))
    tiles = load_broadcast(k, op.inputs, shape, tile_shape)
    for index, (yielded, result) in enumerate(zip(body.last_op.operands, op.outputs)):

        def scalar_body(block: Block, elements, yielded=yielded) -> SSAValue:
            members = list(body.ops)[:-1]  # up to graph.yield
            return emit_members(members, block, dict(zip(body.args, elements)))[yielded]

        element = result.type.element_type
        value = k.map(tiles, element, scalar_body)
        view = TensorViewType(shape, element, contiguous_strides(shape))
        k.store(value, k.partition(len(inputs) + index, view, tile_shape), k.program_ids)
    p.launch(k, [*inputs, *outputs], same_layout_inputs(op.inputs, op.outputs[-1].type))
    for result, buffer in zip(op.outputs, outputs):
        p.bind(result, buffer)


def load_broadcast(k: KernelBuilder, operands: Sequence[SSAValue], shape, tile_shape) -> list[SSAValue]:
    """The kernel's first arguments (one per operand) loaded as tiles of the result's
    shape, broadcast by stride-0 views, at the kernel's grid position."""
    tiles = []
    for i, v in enumerate(operands):
        view = TensorViewType(shape, v.type.element_type, broadcast_strides(shape_of(v.type), shape))
        tiles.append(k.load(k.partition(i, view, tile_shape), k.program_ids))
    return tiles


def same_layout_inputs(operands: Sequence[SSAValue], out_type: TensorType) -> list[int]:
    """Operands laid out exactly like the result (same shape and element size)."""
    size = element_bytes(out_type.element_type)
    return [
        i for i, v in enumerate(operands)
        if shape_of(v.type) == shape_of(out_type) and element_bytes(v.type.element_type) == size
    ]  # fmt: skip


@register_tile_lowering(graph.ConstantOp)
def lower_constant(op: graph.ConstantOp, p: ProgramLowering) -> None:
    p.bind(op.result, p.new_buffer(op.result.type, init=op.value))


@register_tile_lowering(graph.ReshapeOp)
def lower_reshape(op: graph.ReshapeOp, p: ProgramLowering) -> None:
    """Row-major buffers are flat: a reshape is the same buffer (zero copy)."""
    p.bind(op.result, p.buffer_of(op.x))


def copy_kernel(
    op: Operation | str, p: ProgramLowering, source: SSAValue, source_view: TensorViewType,
    target: SSAValue, target_view: TensorViewType,
) -> None:
    """A kernel copying `source_view` of one buffer into `target_view` of another."""
    shape = source_view.get_shape()
    tile_shape = p.cost.elementwise_tile(shape, source_view.element_type)
    k = KernelBuilder(p.kernel_name(op), [source, target], grid_of(shape, tile_shape))
    value = k.load(k.partition(0, source_view, tile_shape), k.program_ids)
    k.store(value, k.partition(1, target_view, tile_shape), k.program_ids)
    p.launch(k, [source, target])


def _into_new_buffer(op: Operation, p: ProgramLowering, source_view: TensorViewType) -> None:
    out_type = op.results[0].type
    out = p.new_buffer(out_type)
    shape = logical_shape(out_type)
    target_view = TensorViewType(shape, out_type.element_type, contiguous_strides(shape))
    copy_kernel(op, p, p.buffer_of(op.operands[0]), source_view, out, target_view)
    p.bind(op.results[0], out)


def read_only_as_matmul_operand(value: SSAValue) -> bool:
    """Every use of `value` is a matmul operand (directly, as q/k/v of an attention, or as
    an operand of the matmul heading a graph.fused): those read through any strided view."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, graph.AttentionOp):
            continue
        if isinstance(user, graph.FusedOp):
            arg = user.body.block.args[use.index]
            head = user.body.block.first_op
            if not isinstance(head, graph.MatmulOp) or any(u.operation is not head for u in arg.uses):
                return False
        elif not isinstance(user, graph.MatmulOp):
            return False
    return True


@register_tile_lowering(graph.TransposeOp)
def lower_transpose(op: graph.TransposeOp, p: ProgramLowering) -> None:
    """A copy through a permuted view, or none at all when only matmuls read the result:
    they take the permuted strides directly (transpose absorption)."""
    permutation = op.params()["permutation"]
    if op.result.uses and read_only_as_matmul_operand(op.result) and len(permutation) >= 2:
        _, _, source_strides = p.operand(op.x)
        p.bind(op.result, p.buffer_of(op.x))
        p.strides[op.result] = tuple(source_strides[a] for a in permutation)
        return
    strides = contiguous_strides(shape_of(op.x.type))
    shape = logical_shape(op.result.type)
    permuted = tuple(strides[a] for a in permutation) or (0,)
    _into_new_buffer(op, p, TensorViewType(shape, op.x.type.element_type, permuted))


@register_tile_lowering(graph.BroadcastToOp)
def lower_broadcast_to(op: graph.BroadcastToOp, p: ProgramLowering) -> None:
    shape = logical_shape(op.result.type)
    strides = broadcast_strides(shape_of(op.x.type), shape)
    _into_new_buffer(op, p, TensorViewType(shape, op.x.type.element_type, strides))


@register_tile_lowering(graph.SliceOp)
def lower_slice(op: graph.SliceOp, p: ProgramLowering) -> None:
    params = op.params()
    strides = contiguous_strides(shape_of(op.x.type))
    offset = sum(s * st for s, st in zip(params["starts"], strides))
    view_strides = tuple(step * st for step, st in zip(params["steps"], strides)) or (0,)
    view = TensorViewType(logical_shape(op.result.type), op.x.type.element_type, view_strides, offset)
    _into_new_buffer(op, p, view)


@register_tile_lowering(graph.ConcatOp)
def lower_concat(op: graph.ConcatOp, p: ProgramLowering) -> None:
    out_type = op.result.type
    out_shape = shape_of(out_type)
    axis = op.params()["axis"] % len(out_shape)
    out_strides = contiguous_strides(out_shape)
    out = p.new_buffer(out_type)
    start = 0
    for value in op.inputs:
        shape = shape_of(value.type)
        if shape[axis]:
            source_view = TensorViewType(shape, value.type.element_type, contiguous_strides(shape))
            target_view = TensorViewType(shape, out_type.element_type, out_strides, start * out_strides[axis])
            copy_kernel(op, p, p.buffer_of(value), source_view, out, target_view)
        start += shape[axis]
    p.bind(op.result, out)


def lower_function(function: func.FuncOp, module: ModuleOp, cost: TileCostModel) -> func.FuncOp:
    name = function.sym_name.data
    arg_types = [flat_buffer_type(shape_of(t), t.element_type) for t in function.function_type.inputs.data]
    result_types = [flat_buffer_type(shape_of(t), t.element_type) for t in function.function_type.outputs.data]
    body = Block(arg_types=arg_types)
    p = ProgramLowering(module, name, body, cost)
    for old, new in zip(function.body.block.args, body.args):
        new.name_hint = old.name_hint
        p.bind(old, new)
    for op in function.body.block.ops:
        if isinstance(op, func.ReturnOp):
            body.add_op(func.ReturnOp(*(p.buffer_of(v) for v in op.arguments)))
            continue
        lowering = op_info(op).tile_lowering
        if lowering is None:
            raise StrataError(
                f"{location_prefix(op)}error: '{op.name}' cannot be lowered to tile kernels yet "
                "(no CPU lowering registered); run it with --target reference"
            )
        lowering(op, p)
    return func.FuncOp(
        name, (arg_types, result_types), Region(body), arg_attrs=function.arg_attrs
    )


def is_graph_function(op: Operation) -> bool:
    return isinstance(op, func.FuncOp) and all(
        isinstance(t, TensorType) for t in op.function_type.inputs.data
    ) and any(o.dialect_name() == "graph" or isinstance(o, func.ReturnOp) for o in op.body.walk())


@dataclass(frozen=True)
class LowerGraphToTilePass(ModulePass):
    """Lower every graph function to a program of tile kernels (see module docstring)."""

    name = "lower-graph-to-tile"

    tile_elements: int = TileCostModel.elements
    matmul_m: int = TileCostModel.matmul_m
    matmul_n: int = TileCostModel.matmul_n
    matmul_k: int = TileCostModel.matmul_k
    dot_k: int = TileCostModel.dot_k
    matmul_bytes: int = TileCostModel.matmul_bytes
    matmul_min_tiles: int = TileCostModel.matmul_min_tiles

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cost = TileCostModel(
            self.tile_elements, self.matmul_m, self.matmul_n, self.matmul_k, self.dot_k, self.matmul_bytes,
            self.matmul_min_tiles,
        )
        for function in [f for f in op.ops if is_graph_function(f)]:
            program = lower_function(function, op, cost)
            op.body.block.insert_op_after(program, function)
            op.body.block.erase_op(function)

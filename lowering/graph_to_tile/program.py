"""The state of one graph function while it becomes a program of tile kernels, and the
helpers every op family's lowering shares (buffers, kernel names, launches, copies).

`lower_function` walks the function and calls each op's registered tile lowering
(`op_info(op).tile_lowering`); the op families register theirs in elementwise.py,
layout.py, matmul.py, indexed.py, rows.py, reductions.py and attention.py, and lower.py
(the pass) imports them all.
An op without a lowering is reported, never skipped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerType,
    ModuleOp,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from strata.dialects import graph, tile
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import op_info
from strata.dialects.tile_types import TensorViewType, element_bytes
from strata.support.dtypes import dense_to_numpy
from strata.support.errors import StrataError
from strata.support.locations import location_prefix
from strata.lowering.tile_builder import (
    KernelBuilder,
    TileCostModel,
    broadcast_strides,
    contiguous_strides,
    flat_buffer_type,
    grid_of,
    next_power_of_two,
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
    """Values bound to a non-contiguous view of their buffer (absorbed transposes and slices)."""
    offsets: dict[SSAValue, int] = field(default_factory=dict)
    """Values bound to a view starting past their buffer's first element (absorbed slices)."""
    placements: dict[SSAValue, tuple[Operation, tuple[int, ...], int]] = field(default_factory=dict)
    """Results to compute straight into their region of a concat's output: value -> (the
    concat, strides, offset) (layout.place_concat_inputs)."""
    concat_buffers: dict[Operation, SSAValue] = field(default_factory=dict)
    aligned_copies: dict[tuple, tuple[SSAValue, TensorType, tuple[int, ...]]] = field(default_factory=dict)
    """Matmul operands copied into padded rows for the tensor cores, by (buffer, shape,
    strides) of the view copied (graph_to_tile/matmul.py, padded_rows)."""
    kernels: int = 0

    def buffer_of(self, value: SSAValue) -> SSAValue:
        return self.buffers[value]

    def operand(self, value: SSAValue) -> tuple[SSAValue, TensorType, tuple[int, ...]]:
        """A matmul operand: its buffer, type and element strides."""
        return self.buffers[value], value.type, self.strides.get(value, contiguous_strides(shape_of(value.type)))

    def bind(self, value: SSAValue, buffer: SSAValue) -> None:
        self.buffers[value] = buffer

    def view_of(self, value: SSAValue) -> TensorViewType:
        """How `value` lies in its buffer: its shape, element strides and offset."""
        shape = logical_shape(value.type)
        strides = self.strides.get(value, contiguous_strides(shape))
        return TensorViewType(shape, value.type.element_type, strides, self.offsets.get(value, 0))

    def is_view(self, value: SSAValue) -> bool:
        """Whether `value` is bound to a part of a buffer it shares (not laid out contiguously from its start)."""
        return value in self.offsets or value in self.strides

    def bind_view(self, value: SSAValue, buffer: SSAValue, strides: Sequence[int], offset: int) -> None:
        self.buffers[value] = buffer
        self.strides[value] = tuple(strides)
        self.offsets[value] = offset

    def bind_like(self, value: SSAValue, other: SSAValue) -> None:
        """Binds `value` where `other` lies: its buffer, or its view of one."""
        if self.is_view(other):
            view = self.view_of(other)
            self.bind_view(value, self.buffer_of(other), view.get_strides(), view.offset.data)
        else:
            self.bind(value, self.buffer_of(other))

    def lower_expansion(self, values: Sequence[SSAValue],
                        expand: Callable[[Callable[[Operation], None]], Sequence[SSAValue]]) -> None:
        """An op lowered as its expansion into graph ops: expand(add) builds them, passing
        each to add, and returns the values that stand for `values`; each built op is
        lowered by its own rule and `values` are bound where those results lie."""
        built: list[Operation] = []
        results = expand(built.append)
        for piece in built:
            op_info(piece).tile_lowering(piece, self)
        for value, result in zip(values, results, strict=True):
            self.bind_like(value, result)

    def concat_buffer(self, concat: Operation) -> SSAValue:
        """The output buffer of a concat, created by the first of its inputs placed in it."""
        if concat not in self.concat_buffers:
            self.concat_buffers[concat] = self.new_buffer(concat.results[0].type)
        return self.concat_buffers[concat]

    def result_buffer(self, value: SSAValue) -> tuple[SSAValue, TensorViewType]:
        """Where a kernel writes result `value`, bound: a new buffer, or its region of a
        concat's output when it is placed there."""
        shape = logical_shape(value.type)
        if value in self.placements:
            concat, strides, offset = self.placements[value]
            buffer = self.concat_buffer(concat)
            self.bind_view(value, buffer, strides, offset)
            return buffer, TensorViewType(shape, value.type.element_type, strides, offset)
        buffer = self.new_buffer(value.type)
        self.bind(value, buffer)
        return buffer, TensorViewType(shape, value.type.element_type, contiguous_strides(shape))

    def new_buffer(self, t: TensorType, init=None) -> SSAValue:
        op = tile.BufferOp(flat_buffer_type(shape_of(t), t.element_type), init)
        self.body.add_op(op)
        return op.results[0]

    def kernel_name(self, op: Operation | str) -> str:
        """A unique kernel symbol named after the function and the op (or a label)."""
        label = op if isinstance(op, str) else op.name.removeprefix("graph.")
        self.kernels += 1
        return f"{self.function_name}_{label}_{self.kernels - 1}"

    def launch(self, kernel: KernelBuilder, args: Sequence[SSAValue], in_place: Sequence[int] = (),
               attributes: Mapping[str, Attribute] | None = None) -> None:
        """Add the kernel and launch it; `in_place` lists inputs whose elements it reads at
        exactly the positions it writes (the planner may give the output their memory).
        A kernel with an empty grid (it writes a zero-size result) is never launched: it
        is dropped, views and all."""
        if 0 in kernel.grid:
            return
        finished = kernel.finish()
        if in_place:
            finished.attributes["tile.in_place"] = DenseArrayBase.from_list(i64, list(in_place))
        finished.attributes.update(attributes or {})
        self.module.body.block.add_op(finished)
        self.body.add_op(tile.LaunchOp(kernel.name, args))

    @staticmethod
    def mark_workspace(buffer: SSAValue) -> SSAValue:
        """A buffer only the op's own next kernel reads (planned in the workspace arena)."""
        buffer.owner.attributes["tile.workspace"] = UnitAttr()
        return buffer


def load_broadcast(p: ProgramLowering, k: KernelBuilder, operands: Sequence[SSAValue], shape, tile_shape) -> list[SSAValue]:
    """The kernel's first arguments (one per operand) loaded as tiles of the result's
    shape, broadcast by stride-0 views, at the kernel's grid position; an operand bound to
    a view of a shared buffer (an absorbed slice) is read through it. An integer constant
    counting 0, 1, 2, ... along one axis (a one-hot's column ids) is computed instead
    (arange_tile): it would cost each element a load as wide as the data's."""
    tiles = []
    for i, v in enumerate(operands):
        axis = arange_axis(v)
        if axis is not None:
            tiles.append(arange_tile(k, len(shape) - len(shape_of(v.type)) + axis, tile_shape, v.type.element_type))
            continue
        own = p.view_of(v)
        strides = broadcast_strides(shape_of(v.type), shape, own.get_strides() if shape_of(v.type) else None)
        view = TensorViewType(shape, v.type.element_type, strides, own.offset.data)
        tiles.append(k.load(k.partition(i, view, tile_shape), k.program_ids))
    return tiles


def arange_axis(value: SSAValue) -> int | None:
    """The axis along which `value`, a graph.constant of integers, holds 0, 1, 2, ...
    (every other axis of size 1), else None."""
    owner = value.owner
    if not isinstance(owner, graph.ConstantOp) or not isinstance(value.type.element_type, IntegerType):
        return None
    shape = shape_of(value.type)
    long_axes = [a for a, size in enumerate(shape) if size > 1]
    if len(long_axes) != 1 or value.type.element_type.width.data < 2:
        return None
    counted = dense_to_numpy(owner.value).reshape(-1)
    return long_axes[0] if np.array_equal(counted, np.arange(counted.size)) else None


def arange_tile(k: KernelBuilder, axis: int, tile_shape: Sequence[int], element: IntegerType) -> SSAValue:
    """The tile at the kernel's grid position of 0, 1, 2, ... along `axis` as `element`s:
    tile.iota plus the tile's origin on that axis."""
    origin = k.add(arith.MuliOp(k.program_ids[axis], k.index(tile_shape[axis]))).results[0]
    origin = k.add(arith.IndexCastOp(origin, i64)).results[0]

    def counted(block: Block, elements: Sequence[SSAValue]) -> SSAValue:
        position = arith.AddiOp(elements[0], origin)
        block.add_op(position)
        if element.width.data == 64:
            return position.result
        narrowed = arith.TruncIOp(position.result, element)
        block.add_op(narrowed)
        return narrowed.result

    return k.map([k.iota(axis, tile_shape)], element, counted)


def same_layout_inputs(operands: Sequence[SSAValue], out_type: TensorType, p: ProgramLowering | None = None,
                       results: Sequence[SSAValue] = ()) -> list[int]:
    """Operands laid out exactly like the result (same shape and element size, their own
    buffer from its start); none when a result is written into a concat's output."""
    if p is not None and any(r in p.placements for r in results):
        return []
    size = element_bytes(out_type.element_type)
    return [
        i for i, v in enumerate(operands)
        if shape_of(v.type) == shape_of(out_type) and element_bytes(v.type.element_type) == size
        and not (p is not None and p.is_view(v))
    ]  # fmt: skip


TRANSPOSE_TILE_ROWS = 32
"""Rows of a transposing copy's tile (its columns fill the rest of the tile budget)."""


def copy_kernel(
    op: Operation | str, p: ProgramLowering, source: SSAValue, source_view: TensorViewType,
    target: SSAValue, target_view: TensorViewType,
) -> None:
    """A kernel copying `source_view` of one buffer into `target_view` of another. A copy
    that transposes the last two axes (the source contiguous along the rows) takes tiles of
    up to 32 rows, so a tile's reads are runs along the source's contiguous axis too."""
    shape = source_view.get_shape()
    tile_shape = p.cost.elementwise_tile(shape, source_view.element_type)
    if len(shape) >= 2 and source_view.get_strides()[-2] == 1 and tile_shape[-2] < TRANSPOSE_TILE_ROWS:
        room = math.prod(tile_shape[-2:])
        rows = min(next_power_of_two(shape[-2]), TRANSPOSE_TILE_ROWS, room)
        tile_shape = (*tile_shape[:-2], rows, min(next_power_of_two(shape[-1]), max(1, room // rows)))
    k = KernelBuilder(p.kernel_name(op), [source, target], grid_of(shape, tile_shape))
    value = k.load(k.partition(0, source_view, tile_shape), k.program_ids)
    k.store(value, k.partition(1, target_view, tile_shape), k.program_ids)
    p.launch(k, [source, target])


def into_new_buffer(op: Operation, p: ProgramLowering, source_view: TensorViewType) -> None:
    """A copy of `source_view` of the op's operand as its result (in a new buffer, or in
    its region of a concat's output)."""
    source = p.buffer_of(op.operands[0])
    out, target_view = p.result_buffer(op.results[0])
    copy_kernel(op, p, source, source_view, out, target_view)


def lower_function(function: func.FuncOp, module: ModuleOp, cost: TileCostModel,
                   prepare: Callable[[func.FuncOp, ProgramLowering], None] | None = None) -> func.FuncOp:
    """The tile program of a graph function; `prepare` sees the function and the lowering
    state first (layout.place_concat_inputs)."""
    name = function.sym_name.data
    arg_types = [flat_buffer_type(shape_of(t), t.element_type) for t in function.function_type.inputs.data]
    result_types = [flat_buffer_type(shape_of(t), t.element_type) for t in function.function_type.outputs.data]
    body = Block(arg_types=arg_types)
    p = ProgramLowering(module, name, body, cost)
    for old, new in zip(function.body.block.args, body.args):
        new.name_hint = old.name_hint
        p.bind(old, new)
    if prepare is not None:
        prepare(function, p)
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

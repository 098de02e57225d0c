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

Each op's lowering is registered in the per-op registry (`op_info(op).tile_lowering`);
an op without one is reported, never skipped. Tile shapes come from `TileCostModel`,
overridable by the pass options.
"""

from __future__ import annotations

import math

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    ModuleOp,
    TensorType,
    UnitAttr,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from strata.dialects import graph, tile
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import op_info, register_tile_lowering
from strata.dialects.tile_types import MAX_TILE_BYTES, MAX_TILE_DIM, TensorViewType, TileType, element_bytes
from strata.errors import StrataError
from strata.ir import location_prefix
from strata.lowering.scalar_rules import Emitter, emit_scalar
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


ELEMENTWISE_OPS = tuple(
    op for op in graph.GRAPH_OPS if issubclass(op, graph.ElementwiseOp) and op is not graph.DropoutOp
)
"""Ops whose element is a function of their operands' elements (dropout also of its index)."""


@register_tile_lowering(*ELEMENTWISE_OPS)
def lower_elementwise(op: Operation, p: ProgramLowering) -> None:
    out_type = op.results[0].type
    shape = logical_shape(out_type)
    tile_shape = p.cost.elementwise_tile(shape, out_type.element_type)
    inputs = [p.buffer_of(v) for v in op.operands]
    out = p.new_buffer(out_type)
    k = KernelBuilder(p.kernel_name(op), [*inputs, out], grid_of(shape, tile_shape))
    tiles = []
    for i, v in enumerate(op.operands):
        strides = broadcast_strides(shape_of(v.type), shape)
        view = TensorViewType(shape, v.type.element_type, strides)
        tiles.append(k.load(k.partition(i, view, tile_shape), k.program_ids))
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
        lower_matmul_epilogue(op, p)
        return
    first = op.outputs[0].type
    shape = logical_shape(first)
    widest = max((v.type.element_type for v in (*op.inputs, *op.outputs)), key=element_bytes)
    tile_shape = p.cost.elementwise_tile(shape, widest, tiles=len(op.inputs) + len(op.outputs))
    inputs = [p.buffer_of(v) for v in op.inputs]
    outputs = [p.new_buffer(r.type) for r in op.outputs]
    k = KernelBuilder(p.kernel_name(op), [*inputs, *outputs], grid_of(shape, tile_shape))
    tiles = []
    for i, v in enumerate(op.inputs):
        view = TensorViewType(shape, v.type.element_type, broadcast_strides(shape_of(v.type), shape))
        tiles.append(k.load(k.partition(i, view, tile_shape), k.program_ids))
    for index, (yielded, result) in enumerate(zip(body.last_op.operands, op.outputs)):

        def scalar_body(block: Block, elements, yielded=yielded) -> SSAValue:
            values = dict(zip(body.args, elements))
            for member in body.ops:
                if member is body.last_op:
                    break
                values[member.results[0]] = emit_scalar(member, block, [values[v] for v in member.operands])
            return values[yielded]

        element = result.type.element_type
        value = k.map(tiles, element, scalar_body)
        view = TensorViewType(shape, element, contiguous_strides(shape))
        k.store(value, k.partition(len(inputs) + index, view, tile_shape), k.program_ids)
    p.launch(k, [*inputs, *outputs], same_layout_inputs(op.inputs, op.outputs[-1].type))
    for result, buffer in zip(op.outputs, outputs):
        p.bind(result, buffer)


def lower_matmul_epilogue(op: graph.FusedOp, p: ProgramLowering) -> None:
    """A group rooted at a matmul: its elementwise members run on the result tile before
    the store (bias, activation, residual add), so the matmul result never hits memory."""
    body = op.body.block
    matmul: graph.MatmulOp = body.first_op
    outside = dict(zip(body.args, op.inputs))
    extra_args = [a for a in body.args if any(use.operation is not matmul for use in a.uses)]
    yielded = list(body.last_op.operands)
    params = matmul.params()

    def scalar_body(block: Block, result: SSAValue, extras: Sequence[SSAValue], index: int) -> SSAValue:
        values = {matmul.result: result, **dict(zip(extra_args, extras))}
        for member in body.ops:
            if member is body.last_op:
                break
            if member is not matmul:
                values[member.results[0]] = emit_scalar(member, block, [values[v] for v in member.operands])
        return values[yielded[index]]

    epilogue = Epilogue(
        [(p.buffer_of(outside[a]), a.type) for a in extra_args], [r.type for r in op.outputs], scalar_body
    )
    outputs = matmul_kernel(
        p, "matmul_epilogue", p.operand(outside[matmul.a]), p.operand(outside[matmul.b]), matmul.result.type,
        params["transpose_a"], params["transpose_b"], params["alpha"], epilogue,
    )  # fmt: skip
    for result, buffer in zip(op.outputs, outputs):
        p.bind(result, buffer)


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


@register_tile_lowering(graph.MatmulOp)
def lower_matmul(op: graph.MatmulOp, p: ProgramLowering) -> None:
    params = op.params()
    (out,) = matmul_kernel(
        p, "matmul", p.operand(op.a), p.operand(op.b),
        op.result.type, params["transpose_a"], params["transpose_b"], params["alpha"],
    )  # fmt: skip
    p.bind(op.result, out)


@dataclass
class Epilogue:
    """Elementwise work done on the matmul's result tile before it is stored: `inputs`
    are extra buffers read at the same positions (broadcast to the result shape); each
    output is `body(block, result element, input elements, index)` of its own type."""

    inputs: list[tuple[SSAValue, TensorType]]
    output_types: list[TensorType]
    body: Callable[[Block, SSAValue, Sequence[SSAValue], int], SSAValue]


def matmul_kernel(
    p: ProgramLowering,
    label: str,
    lhs: tuple[SSAValue, TensorType, Sequence[int]],
    rhs: tuple[SSAValue, TensorType, Sequence[int]],
    out_type: TensorType,
    transpose_a: bool,
    transpose_b: bool,
    alpha: float,
    epilogue: Epilogue | None = None,
) -> list[SSAValue]:
    """alpha · op(a) @ op(b), then the epilogue if any, into new buffers (one per output).
    One kernel instance per (batch..., row tile, column tile); a K loop of tile.mma
    accumulates in f32 or f64 (f16/bf16 operands are widened, the result rounded once)."""
    (a, a_type, a_strides), (b, b_type, b_strides) = lhs, rhs
    out_shape = shape_of(out_type)
    batch, (m, n) = out_shape[:-2], out_shape[-2:]
    if transpose_b and b_strides[-1] == 1 and m >= PRETRANSPOSE_MIN_ROWS:
        (b, b_type, b_strides), transpose_b = pretransposed(p, label, b, b_type, b_strides), False
    element = out_type.element_type
    accumulate = f32 if isinstance(element, (Float16Type, BFloat16Type)) else element
    kdim = shape_of(a_type)[-2 if transpose_a else -1]
    k_limit = p.cost.matmul_k
    if transpose_b:
        # b read along k: long k tiles (dot_k) as long as a k x n tile of b fits a tile.
        fitting = MAX_TILE_BYTES // element_bytes(b_type.element_type) // min(next_power_of_two(n), p.cost.matmul_n)
        k_limit = min(p.cost.dot_k, fitting)
    tm, tn, tk = (
        min(next_power_of_two(size), limit)
        for size, limit in ((m, p.cost.matmul_m), (n, p.cost.matmul_n), (kdim, k_limit))
    )
    lead = (1,) * len(batch)

    def operand_view(t: TensorType, own: Sequence[int], transposed: bool, rows: int, cols: int) -> TensorViewType:
        shape = shape_of(t)
        strides = [*broadcast_strides(shape[:-2], batch, own[:-2]), *own[-2:]]
        if transposed:
            strides[-1], strides[-2] = strides[-2], strides[-1]
        return TensorViewType((*batch, rows, cols), t.element_type, strides)

    extras = epilogue.inputs if epilogue else []
    outputs = [p.new_buffer(t) for t in (epilogue.output_types if epilogue else [out_type])]
    buffers = [a, b, *(buffer for buffer, _ in extras), *outputs]
    grid = (*batch, -(-m // tm), -(-n // tn))
    k = KernelBuilder(p.kernel_name(label), buffers, grid)
    *batch_ids, row, col = k.program_ids
    part_a = k.partition(0, operand_view(a_type, a_strides, transpose_a, m, kdim), (*lead, tm, tk))
    part_b = k.partition(1, operand_view(b_type, b_strides, transpose_b, kdim, n), (*lead, tk, tn))
    acc_shape = (*lead, tm, tn)
    zero = k.fill(0, acc_shape, accumulate)

    def k_step(step: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
        ta = widen(k, k.load(part_a, [*batch_ids, row, step]), accumulate)
        tb = widen(k, k.load(part_b, [*batch_ids, step, col]), accumulate)
        return [k.add(tile.MmaOp(ta, tb, carried[0])).results[0]]

    (result,) = k.loop(-(-kdim // tk), [zero], k_step)
    if alpha != 1.0 or accumulate != element:

        def finish(block: Block, elements) -> SSAValue:
            e = Emitter(block)
            value = elements[0]
            if alpha != 1.0:
                value = e(arith.MulfOp(value, e.const(alpha, accumulate)))
            return value if accumulate == element else e(arith.TruncFOp(value, element))

        result = k.map([result], element, finish)
    if epilogue is None:
        out_view = TensorViewType(out_shape, element, contiguous_strides(out_shape))
        k.store(result, k.partition(2, out_view, acc_shape), k.program_ids)
    else:
        extra_tiles = [
            k.load(k.partition(2 + i, TensorViewType(out_shape, t.element_type, broadcast_strides(shape_of(t), out_shape)), acc_shape), k.program_ids)
            for i, (_, t) in enumerate(extras)
        ]
        for index, t in enumerate(epilogue.output_types):
            value = k.map(
                [result, *extra_tiles], t.element_type,
                lambda block, elements, index=index: epilogue.body(block, elements[0], elements[1:], index),
            )  # fmt: skip
            view = TensorViewType(out_shape, t.element_type, contiguous_strides(out_shape))
            k.store(value, k.partition(2 + len(extras) + index, view, acc_shape), k.program_ids)
    p.launch(k, buffers)
    return outputs


PRETRANSPOSE_MIN_ROWS = 256
"""With transpose_b, each row tile would re-pack the same columns of b from strided
reads; from this many rows of a on, one copy kernel transposing b first is cheaper."""


def pretransposed(
    p: ProgramLowering, label: str, b: SSAValue, b_type: TensorType, strides: Sequence[int]
) -> tuple[SSAValue, TensorType, tuple[int, ...]]:
    """b with its last two axes swapped into a contiguous workspace buffer."""
    shape = shape_of(b_type)
    swapped_shape = (*shape[:-2], shape[-1], shape[-2])
    swapped_strides = (*strides[:-2], strides[-1], strides[-2])
    t = TensorType(b_type.element_type, swapped_shape)
    target = p.mark_workspace(p.new_buffer(t))
    source_view = TensorViewType(swapped_shape, t.element_type, swapped_strides)
    target_view = TensorViewType(swapped_shape, t.element_type, contiguous_strides(swapped_shape))
    copy_kernel(f"{label}_transpose_b", p, b, source_view, target, target_view)
    return target, t, contiguous_strides(swapped_shape)


def widen(k: KernelBuilder, value: SSAValue, element) -> SSAValue:
    """The tile converted to `element` (f16/bf16 -> f32), or itself."""
    if value.type.element_type == element:
        return value
    return k.map([value], element, lambda block, elements: Emitter(block)(arith.ExtFOp(elements[0], element)))


@register_tile_lowering(graph.EmbeddingOp)
def lower_embedding(op: graph.EmbeddingOp, p: ProgramLowering) -> None:
    """Rows of the table gathered by id: a tile.check of the ids (run-time error, never a
    wild read), then tile.gather per (id tile, column tile)."""
    vocabulary, width = shape_of(op.table.type)
    count = max(1, math.prod(shape_of(op.ids.type)))
    element = op.table.type.element_type
    rows = min(next_power_of_two(count), max(1, p.cost.elements // min(next_power_of_two(width), MAX_TILE_DIM)))
    columns = min(next_power_of_two(width), MAX_TILE_DIM, p.cost.elements)
    table, ids, out = p.buffer_of(op.table), p.buffer_of(op.ids), p.new_buffer(op.result.type)
    k = KernelBuilder(p.kernel_name(op), [table, ids, out], grid_of((count, width), (rows, columns)))
    row, column = k.program_ids
    id_view = TensorViewType((count, 1), op.ids.type.element_type, (1, 0))
    id_tile = widen_index(k, k.load(k.partition(1, id_view, (rows, 1)), [row, k.index(0)]))
    message = f"{location_prefix(op)}'graph.embedding': an id is outside [0, {vocabulary})"
    k.add(tile.CheckOp(out_of_range(k, id_tile, vocabulary), message))
    table_view = k.add(tile.MakeTensorViewOp(k.block.args[0], TensorViewType((vocabulary, width), element, (width, 1)))).results[0]
    gathered = k.add(tile.GatherOp(table_view, id_tile, column, TileType((rows, columns), element))).results[0]
    out_view = TensorViewType((count, width), element, (width, 1))
    k.store(gathered, k.partition(2, out_view, (rows, columns)), [row, column])
    p.launch(k, [table, ids, out])
    p.bind(op.result, out)


def widen_index(k: KernelBuilder, ids: SSAValue) -> SSAValue:
    """An id tile as i64."""
    if ids.type.element_type == i64:
        return ids
    return k.map([ids], i64, lambda block, elements: Emitter(block)(arith.ExtSIOp(elements[0], i64)))


def out_of_range(k: KernelBuilder, ids: SSAValue, bound: int) -> SSAValue:
    """An i1 tile: id < 0 or id >= bound."""

    def body(block: Block, elements) -> SSAValue:
        e = Emitter(block)
        (value,) = elements
        below = e(arith.CmpiOp(value, e.const(0, i64), "slt"))
        above = e(arith.CmpiOp(value, e.const(bound, i64), "sge"))
        return e(arith.OrIOp(below, above))

    return k.map([ids], i1, body)


@register_tile_lowering(graph.DropoutOp)
def lower_dropout(op: graph.DropoutOp, p: ProgramLowering) -> None:
    """The keyed counter-based mask (docs/dropout-rng.md) computed from each element's
    flat index, so it matches the reference bit for bit and is never stored."""
    params = op.params()
    out_type = op.result.type
    shape = logical_shape(out_type)
    element = out_type.element_type
    tile_shape = p.cost.elementwise_tile(shape, element)
    source, out = p.buffer_of(op.x), p.new_buffer(out_type)
    k = KernelBuilder(p.kernel_name(op), [source, out], grid_of(shape, tile_shape))
    view = TensorViewType(shape, element, contiguous_strides(shape))
    x = k.load(k.partition(0, view, tile_shape), k.program_ids)
    indices = [k.iota(axis, tile_shape) for axis in range(len(shape))]
    origins = [
        k.add(arith.IndexCastOp(k.add(arith.MuliOp(pid, k.index(t))).results[0], i64)).results[0]
        for pid, t in zip(k.program_ids, tile_shape)
    ]
    p_keep, scale = params["p"], 1.0 / (1.0 - params["p"])
    seed = params["seed"] & 0xFFFFFFFFFFFFFFFF

    def body(block: Block, elements) -> SSAValue:
        e = Emitter(block)
        value, *local = elements
        flat = e.const(1, i64)
        for origin, index, stride in zip(origins, local, contiguous_strides(shape)):
            position = e(arith.AddiOp(origin, index))
            flat = e(arith.AddiOp(flat, e(arith.MuliOp(position, e.const(stride, i64)))))
        z = e(arith.AddiOp(e.const(_signed(seed), i64), e(arith.MuliOp(flat, e.const(_signed(0x9E3779B97F4A7C15), i64)))))
        for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            z = e(arith.MuliOp(e(arith.XOrIOp(z, e(arith.ShRUIOp(z, e.const(shift, i64))))), e.const(_signed(multiplier), i64)))
        z = e(arith.XOrIOp(z, e(arith.ShRUIOp(z, e.const(31, i64)))))
        bits = e(arith.ShRUIOp(z, e.const(40, i64)))
        uniform = e(arith.MulfOp(e(arith.UIToFPOp(bits, f64)), e.const(2.0**-24, f64)))
        keep = e(arith.CmpfOp(uniform, e.const(p_keep, f64), "oge"))
        compute = f32 if isinstance(element, (Float16Type, BFloat16Type)) else element
        wide = value if compute == element else e(arith.ExtFOp(value, compute))
        kept = e(arith.MulfOp(wide, e.const(scale, compute)))
        result = e(arith.SelectOp(keep, kept, e.const(0.0, compute)))
        return result if compute == element else e(arith.TruncFOp(result, element))

    result = k.map([x, *indices], element, body)
    k.store(result, k.partition(1, view, tile_shape), k.program_ids)
    p.launch(k, [source, out])
    p.bind(op.result, out)


def _signed(value: int) -> int:
    """A 64-bit pattern as the signed integer an i64 attribute holds."""
    return value - (1 << 64) if value >= 1 << 63 else value


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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cost = TileCostModel(self.tile_elements, self.matmul_m, self.matmul_n, self.matmul_k, self.dot_k)
        for function in [f for f in op.ops if is_graph_function(f)]:
            program = lower_function(function, op, cost)
            op.body.block.insert_op_after(program, function)
            op.body.block.erase_op(function)

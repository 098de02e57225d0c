"""Matmul kernels of `lower-graph-to-tile`: plain, with an epilogue, and b pre-transposed.

One kernel instance per (batch..., row tile, column tile); an scf.for over K tiles carries
the accumulator through tile.mma. A graph.fused headed by a matmul becomes the same kernel
with its elementwise members applied to the result tile before the store (epilogue).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, DenseIntOrFPElementsAttr, Float16Type, Float32Type, TensorType, f32
from xdsl.ir import Block, SSAValue

from strata.dialects import graph, tile
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import MAX_TILE_BYTES, TILE_BYTES_BUDGET, TensorViewType, element_bytes
from strata.lowering.graph_to_tile.program import ProgramLowering, copy_kernel
from strata.lowering.scalar_rules import Emitter, emit_members
from strata.lowering.tile_builder import (
    KernelBuilder,
    broadcast_strides,
    contiguous_strides,
    next_power_of_two,
)


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


MIN_SPLIT_TILE = 32 * 32
"""matmul_min_tiles splits output tiles down to this many elements at most."""
WAVE_FILL = 0.9
"""A grid whose tiles fill this much of its last wave over matmul_min_tiles blocks (the
GPU's SMs) counts as full: 128 tiles on 132 SMs are not split into 256."""
WIDE_TILE_K = 2048
"""The warpgroup mma's wide n tiles (matmul_16bit_n) pay only from this k on, and only
where they fill whole waves. Measured on an H200 (bf16, TFLOP/s of 128 x 256 against
128 x 128 tiles): 8192 x 768 x 768 241 / 328, 8192 x 768 x 3072 341 / 503, 8192 x 2304 x 768
291 / 346, 8192 x 3072 x 768 320 / 365 (k 768: the square tiles win even in whole waves),
3072^3 345 / 471 (2.2 waves), 2048^3 478 / 441 (one full wave), 4096^3 591 / 510."""


def waves_filled(tiles: int, blocks: int) -> bool:
    """Whether `tiles` fill their last wave of `blocks` at least WAVE_FILL (any, blocks 0)."""
    return blocks == 0 or tiles >= WAVE_FILL * blocks * -(-tiles // blocks)


def wide_tiles_pay(p: ProgramLowering, tiles: int, kdim: int) -> bool:
    """Whether `tiles` wide (matmul_16bit_n) output tiles over a k of `kdim` beat the square ones."""
    return kdim >= WIDE_TILE_K and tiles >= WAVE_FILL * p.cost.matmul_min_tiles and waves_filled(tiles, p.cost.matmul_min_tiles)


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
    element = out_type.element_type
    low_precision = isinstance(element, (Float16Type, BFloat16Type))
    flops = 2 * math.prod(out_shape) * shape_of(a_type)[-2 if transpose_a else -1]
    tf32 = tf32_tiles(p, (a_type, a_strides, transpose_a), (b_type, b_strides, transpose_b), flops)
    if tf32:
        # The TF32 warpgroup mma reads both operands along k: copies of those that are not.
        if transpose_a:
            (a, a_type, a_strides), transpose_a = pretransposed(p, f"{label}_transpose_a", a, a_type, a_strides), False
        if not transpose_b:
            (b, b_type, b_strides), transpose_b = pretransposed(p, f"{label}_transpose_b", b, b_type, b_strides), True
    # 16-bit b on the GPU is read along k by the tensor-core path as it is: no copy.
    elif (transpose_b and b_strides[-1] == 1 and p.cost.pretranspose_rows and m >= p.cost.pretranspose_rows
            and not (low_precision and p.cost.matmul_16bit_scale > 1)):  # fmt: skip
        (b, b_type, b_strides), transpose_b = pretransposed(p, f"{label}_transpose_b", b, b_type, b_strides), False
    if low_precision and p.cost.matmul_16bit_scale > 1:
        (a, a_type, a_strides), transpose_a = tensor_core_operand(p, f"{label}_a", (a, a_type, a_strides), transpose_a,
                                                                  flops, along_k=True)
        (b, b_type, b_strides), _ = tensor_core_operand(p, f"{label}_b", (b, b_type, b_strides), False, flops,
                                                        along_k=transpose_b)
    accumulate = f32 if low_precision else element
    # The operand tiles as the mma reads them: 16-bit ones widened to f32 (tile.map).
    widened_bytes = element_bytes(accumulate)
    # One operand's k may be padded with zeros for the tensor cores (tensor_core_operand):
    # each is viewed with its own k, the loop runs over the longer.
    a_k, b_k = shape_of(a_type)[-2 if transpose_a else -1], shape_of(b_type)[-1 if transpose_b else -2]
    kdim = max(a_k, b_k)
    k_limit = p.cost.matmul_k
    if transpose_b:
        # b read along k: long k tiles (dot_k) as long as a k x n tile of b fits a tile.
        fitting = TILE_BYTES_BUDGET // widened_bytes // min(next_power_of_two(n), p.cost.matmul_n)
        k_limit = min(p.cost.dot_k, fitting)
    if low_precision and p.cost.matmul_16bit_k:
        k_limit = p.cost.matmul_16bit_k
    if tf32:
        k_limit = TF32_K
    scale = p.cost.matmul_16bit_scale if low_precision or tf32 else 1
    instances = math.prod(batch)
    tm = min(next_power_of_two(m), p.cost.matmul_m * scale)
    n_limit = p.cost.matmul_n * scale
    if low_precision and p.cost.matmul_16bit_n:
        wide_tiles = instances * -(-m // tm) * -(-n // p.cost.matmul_16bit_n)
        if wide_tiles_pay(p, wide_tiles, kdim):
            n_limit = p.cost.matmul_16bit_n
    tn, tk = (min(next_power_of_two(size), limit) for size, limit in ((n, n_limit), (kdim, k_limit)))
    operand_bytes, acc_bytes = element_bytes(a_type.element_type), element_bytes(accumulate)
    budget = p.cost.matmul_bytes * scale * scale
    while budget and (tm * tk + tk * tn) * operand_bytes + tm * tn * acc_bytes > budget:
        if tk > 8:
            tk //= 2
        elif tm >= tn and tm > 1:
            tm //= 2
        elif tn > 1:
            tn //= 2
        else:
            break
    # Whatever the cost model asks for, operand tiles stay within the tile byte budget and
    # the accumulator within the tile limit (the GPU keeps it in registers).
    while max(tm * tk, tk * tn) * widened_bytes > TILE_BYTES_BUDGET or tm * tn * acc_bytes > MAX_TILE_BYTES:
        if tk > 8 and max(tm * tk, tk * tn) * widened_bytes > TILE_BYTES_BUDGET:
            tk //= 2
        elif tm >= tn:
            tm //= 2
        else:
            tn //= 2
    while instances * -(-m // tm) * -(-n // tn) < WAVE_FILL * p.cost.matmul_min_tiles and tm * tn > MIN_SPLIT_TILE:
        if tm >= tn:
            tm //= 2
        else:
            tn //= 2
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
    # An a read transposed may have its rows (m) padded (tensor_core_operand): its view covers them.
    a_rows = shape_of(a_type)[-1] if transpose_a else m
    part_a = k.partition(0, operand_view(a_type, a_strides, transpose_a, a_rows, a_k), (*lead, tm, tk))
    part_b = k.partition(1, operand_view(b_type, b_strides, transpose_b, b_k, n), (*lead, tk, tn))
    acc_shape = (*lead, tm, tn)
    zero = k.fill(0, acc_shape, accumulate)

    def k_step(step: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
        ta = k.extend(k.load(part_a, [*batch_ids, row, step]), accumulate)
        tb = k.extend(k.load(part_b, [*batch_ids, step, col]), accumulate)
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


def pretransposed(
    p: ProgramLowering, label: str, b: SSAValue, b_type: TensorType, strides: Sequence[int]
) -> tuple[SSAValue, TensorType, tuple[int, ...]]:
    """An operand with its last two axes swapped into a contiguous workspace buffer, by the
    copy kernel `label`."""
    shape = shape_of(b_type)
    swapped_shape = (*shape[:-2], shape[-1], shape[-2])
    swapped_strides = (*strides[:-2], strides[-1], strides[-2])
    t = TensorType(b_type.element_type, swapped_shape)
    target = p.mark_workspace(p.new_buffer(t))
    source_view = TensorViewType(swapped_shape, t.element_type, swapped_strides)
    target_view = TensorViewType(swapped_shape, t.element_type, contiguous_strides(swapped_shape))
    copy_kernel(label, p, b, source_view, target, target_view)
    return target, t, contiguous_strides(swapped_shape)


TF32_K = 32
"""The k tile of the TF32 warpgroup mma (matmul_tf32): one 128-byte row of f32."""
TF32_ALIGNMENT = 4
"""f32 elements per 16-byte chunk, the unit the tensor-core paths copy operand rows in."""


def tf32_tiles(p: ProgramLowering, a: tuple[TensorType, Sequence[int], bool], b: tuple[TensorType, Sequence[int], bool],
               flops: int) -> bool:
    """Whether an f32 matmul is tiled for the TF32 warpgroup mma (matmul_tf32): it does
    enough flops to pay for copying an operand, and its k rows can be read in 16-byte
    chunks once both operands run along k (a copied operand is contiguous)."""
    (a_type, a_strides, transpose_a), (b_type, b_strides, transpose_b) = a, b
    if not (p.cost.matmul_tf32 and isinstance(a_type.element_type, Float32Type) and isinstance(b_type.element_type, Float32Type)
            and flops >= MIN_COPY_FLOPS):  # fmt: skip
        return False
    kdim = shape_of(a_type)[-2 if transpose_a else -1]

    def chunked(strides: Sequence[int]) -> bool:
        return strides[-1] == 1 and all(s % TF32_ALIGNMENT == 0 for s in strides[:-1])

    # An operand read along m or n is copied (contiguous); one read along k is read in place.
    a_ready, b_ready = transpose_a or chunked(a_strides), not transpose_b or chunked(b_strides)
    return kdim % TF32_ALIGNMENT == 0 and a_ready and b_ready


ROW_ALIGNMENT = 8
"""16-bit elements per 16-byte chunk: the tensor-core paths copy operand rows in such chunks."""
COPY_FLOPS = 32
"""An operand is copied for the tensor cores only where the matmul does at least this many
flops per copied element (a copy costs a read and a write of the operand) ..."""
MIN_COPY_FLOPS = 1 << 28
"""... and at least this many in all (below, the copy's launch costs more than it saves)."""
WARPGROUP_K = 64
"""The 16-bit k tile of the GPU pipeline for sm_90's warpgroup mma (matmul_16bit_k), which
reads an a transposed in place (its M-major mode): no copy then."""


def rows_aligned(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the last axis is contiguous, a multiple of ROW_ALIGNMENT long, and every row
    starts ROW_ALIGNMENT elements (16 bytes) after another."""
    return strides[-1] == 1 and all(s % ROW_ALIGNMENT == 0 for s in strides[:-1]) and shape[-1] % ROW_ALIGNMENT == 0


def tensor_core_operand(
    p: ProgramLowering, label: str, operand: tuple[SSAValue, TensorType, Sequence[int]], transposed: bool, flops: int,
    along_k: bool,
) -> tuple[tuple[SSAValue, TensorType, tuple[int, ...]], bool]:
    """A 16-bit operand as the GPU's tensor-core paths read it fast: rows (its last axis)
    contiguous, a multiple of 8 elements long, starting every 16 bytes. An operand read
    transposed (a of aᵀ @ b: the weight gradient xᵀ @ dy), or whose rows are not so
    aligned (the [tokens, 50257] logits gradient), is copied into a workspace with its last
    two axes swapped (if transposed) and its rows padded to a multiple of 8 elements with
    zeros, when its rows run along k (`along_k`: padding k with zeros leaves the product
    unchanged) and the matmul's flops pay for the copy; otherwise it is returned as it is.
    For the warpgroup mma (k tiles of WARPGROUP_K), a transposed operand with aligned rows
    is read in place."""
    buffer, t, strides = operand
    shape = shape_of(t)
    warpgroup = p.cost.matmul_16bit_k == WARPGROUP_K
    if transposed and warpgroup and rows_aligned(shape, strides):
        return operand, transposed
    if flops < max(MIN_COPY_FLOPS, math.prod(shape) * COPY_FLOPS):
        return operand, transposed
    if transposed and warpgroup:
        # Read M-major: its rows padded, not transposed (the logits gradient's copy for
        # dlogits @ w serves dlogitsᵀ @ h too).
        return padded_rows(p, label, buffer, t.element_type, shape, strides), True
    if transposed:
        shape, strides = (*shape[:-2], shape[-1], shape[-2]), (*strides[:-2], strides[-1], strides[-2])
    if (rows_aligned(shape, strides) and not transposed) or not along_k:
        return operand, transposed
    return padded_rows(p, label, buffer, t.element_type, shape, strides), False


def padded_rows(p: ProgramLowering, label: str, buffer: SSAValue, element, shape: Sequence[int],
                strides: Sequence[int]) -> tuple[SSAValue, TensorType, tuple[int, ...]]:
    """The view (shape, strides) of `buffer` copied into contiguous rows padded with zeros
    to a multiple of 8 elements; one copy per view of a buffer in a program, whichever
    matmuls read it."""
    key = (buffer, tuple(shape), tuple(strides))
    if key in p.aligned_copies:
        return p.aligned_copies[key]
    padded = (*shape[:-1], -(-shape[-1] // ROW_ALIGNMENT) * ROW_ALIGNMENT)
    target = p.new_buffer(TensorType(element, padded))
    target_strides = contiguous_strides(padded)
    copy_kernel(f"{label}_aligned", p, buffer, TensorViewType(shape, element, strides), target,
                TensorViewType(shape, element, target_strides))
    if padded != shape:
        zero = p.new_buffer(TensorType(element, (1,)), init=DenseIntOrFPElementsAttr.from_list(TensorType(element, (1,)), [0.0]))
        tail = (*shape[:-1], padded[-1] - shape[-1])
        copy_kernel(f"{label}_padding", p, zero, TensorViewType(tail, element, (0,) * len(tail)), target,
                    TensorViewType(tail, element, target_strides, shape[-1]))
    p.aligned_copies[key] = (target, TensorType(element, padded), target_strides)
    return p.aligned_copies[key]


def lower_matmul_epilogue(op: graph.FusedOp, p: ProgramLowering) -> None:
    """A group rooted at a matmul: its elementwise members run on the result tile before
    the store (bias, activation, residual add), so the matmul result never hits memory."""
    body = op.body.block
    matmul: graph.MatmulOp = body.first_op
    outside = dict(zip(body.args, op.inputs))
    extra_args = [a for a in body.args if any(use.operation is not matmul for use in a.uses)]
    yielded = list(body.last_op.operands)
    params = matmul.params()

    members = [member for member in list(body.ops)[:-1] if member is not matmul]  # up to graph.yield

    def scalar_body(block: Block, result: SSAValue, extras: Sequence[SSAValue], index: int) -> SSAValue:
        values = {matmul.result: result, **dict(zip(extra_args, extras))}
        return emit_members(members, block, values)[yielded[index]]

    epilogue = Epilogue(
        [(p.buffer_of(outside[a]), a.type) for a in extra_args], [r.type for r in op.outputs], scalar_body
    )
    outputs = matmul_kernel(
        p, "matmul_epilogue", p.operand(outside[matmul.a]), p.operand(outside[matmul.b]), matmul.result.type,
        params["transpose_a"], params["transpose_b"], params["alpha"], epilogue,
    )  # fmt: skip
    for result, buffer in zip(op.outputs, outputs):
        p.bind(result, buffer)

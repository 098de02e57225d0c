"""`graph.reduce_sum` / `reduce_mean` / `reduce_max` in `lower-graph-to-tile`.

The input is first seen with its axes merged: size-1 axes dropped, and neighbouring axes
that are both reduced (or both kept) one axis where the strides allow (axes (0, 1) of a
contiguous [4, 128, 1024] are one reduced axis of 512: a [512, 1024] view). The merged
reduced axes are then reduced one kernel each, the last first:

- the last axis: a row kernel (rows.py `reduce_axis`), each instance walking its rows;
- any other: a column kernel. Tiles are [R, C] over (reduced axis, last kept axis), C wide
  along the contiguous axis, reduced along the tile's axis -2; each instance owns C
  columns and loops over the R tiles carrying a [1, C] accumulator. The loops lowering
  folds a source row into the accumulator per step of its inner loop, so that loop runs
  over contiguous memory and vectorizes (the row layout's inner loop strided by C instead:
  a bias gradient, reduce_sum of [4, 128, 1024] over (0, 1), took 0.5 ms single-threaded
  in two kernels, 4x its memory time).

    reduce_sum(x[4, 128, 1024], axes=(0, 1)):   x as [512, 1024], tiles [16, 256],
    grid (4): acc[1, 256] = sum over 32 steps of reduce(x tile, axis 0)

On the GPU (whose cost model asks for matmul_min_tiles instances) a column reduction whose
columns alone make too few instances has its reduced axis split in two (`split_for_grid`):
chunks of at least CHUNK_ROWS rows reduced side by side into a partials workspace, which a
second, small kernel reduces. A GPT-2 bias gradient, [8192, 768] over axis 0, ran as 24
blocks each walking 8192 rows:

    x[8192, 768] as [64, 128, 768]:  partials[64, 768] (grid 64 x 3), then over axis 0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, TensorType, f32, f64
from xdsl.ir import Attribute, Operation, SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import TensorViewType
from strata.lowering.graph_to_tile.program import ProgramLowering
from strata.lowering.graph_to_tile.rows import REDUCERS, reduce_axis
from strata.lowering.scalar_rules import Emitter
from strata.lowering.tile_builder import KernelBuilder, contiguous_strides, grid_of, next_power_of_two

COLUMNS = 256
"""Column tile width: wide enough for full vectors with few loop iterations, narrow enough
that a [4096, 1024] input still spreads over 4 kernel instances (CPU threads)."""
GPU_COLUMNS = 32
"""The narrowest column tile (a warp's width), reached while a GPU grid is too small."""
CHUNK_ROWS = 128
"""The fewest rows of a chunk of a split column reduction (split_for_grid)."""


@dataclass(frozen=True)
class Axis:
    """One axis of the input as a reduction sees it."""

    size: int
    stride: int
    reduced: bool


def merged_axes(axes: Sequence[Axis]) -> list[Axis]:
    """`axes` without size-1 axes, neighbours of one kind merged where the outer one's
    stride steps over the inner one whole. At least one axis stays reduced, so that a
    reduction over size-1 axes is still a kernel (it converts and scales)."""
    merged: list[Axis] = []
    for a in axes:
        if a.size == 1:
            continue
        if merged and merged[-1].reduced == a.reduced and merged[-1].stride == a.stride * a.size:
            merged[-1] = Axis(merged[-1].size * a.size, a.stride, a.reduced)
        else:
            merged.append(a)
    if not any(a.reduced for a in merged):
        merged.append(Axis(1, 0, True))
    return merged


def split_for_grid(p: ProgramLowering, axes: list[Axis]) -> list[Axis]:
    """`axes` with the last reduced axis split into (chunks, rows) where it is a column
    axis (not the last) and the kept axes alone give fewer than matmul_min_tiles tiles
    even GPU_COLUMNS wide: chunks (a power of two) until twice that many instances of
    COLUMNS-wide tiles, at least CHUNK_ROWS rows each. Both parts stay reduced; the rows
    reduce first."""
    axis = max(i for i, a in enumerate(axes) if a.reduced)
    if not p.cost.matmul_min_tiles or axis == len(axes) - 1:
        return axes
    kept = [a.size for a in axes if not a.reduced]
    if math.prod(kept[:-1]) * -(-kept[-1] // GPU_COLUMNS) >= p.cost.matmul_min_tiles:
        return axes
    tiles = math.prod(kept[:-1]) * -(-kept[-1] // COLUMNS)
    size, stride = axes[axis].size, axes[axis].stride
    chunks = 1
    while tiles * chunks < 2 * p.cost.matmul_min_tiles and size % (2 * chunks) == 0 and size // (2 * chunks) >= CHUNK_ROWS:
        chunks *= 2
    if chunks == 1:
        return axes
    rows = size // chunks
    return [*axes[:axis], Axis(chunks, stride * rows, True), Axis(rows, stride, True), *axes[axis + 1 :]]


def column_width(p: ProgramLowering, kept: Sequence[int]) -> int:
    """COLUMNS, or fewer for a short last axis; on the GPU (whose cost model asks for
    enough tiles to fill its multiprocessors) halved down to GPU_COLUMNS until the grid
    does: neighbouring threads still read neighbouring addresses."""
    columns = min(next_power_of_two(kept[-1]), COLUMNS)
    while columns > GPU_COLUMNS and math.prod(kept[:-1]) * -(-kept[-1] // columns) < p.cost.matmul_min_tiles:
        columns //= 2
    return columns


def reduce_columns(op: Operation, p: ProgramLowering, source: SSAValue, axes: Sequence[Axis], axis: int,
                   element, scale: float | None, out_element, compute) -> SSAValue:
    """One kernel reducing `source` (viewed as `axes`) along `axis`, which is not the last,
    into a new contiguous buffer of `out_element`s, accumulating in `compute` (see the
    module docstring)."""
    kind, identity, combine = REDUCERS[type(op)]
    shape = [a.size for a in axes]
    kept = [d for i, d in enumerate(shape) if i != axis]
    columns = column_width(p, kept)
    rows = min(next_power_of_two(shape[axis]), max(1, p.cost.elements // columns))
    tile_shape = [1] * len(shape)
    tile_shape[axis], tile_shape[-1] = rows, columns
    accumulator = [*tile_shape[:axis], 1, *tile_shape[axis + 1 :]]
    out = p.new_buffer(TensorType(out_element, kept))
    k = KernelBuilder(p.kernel_name(op), [source, out], grid_of(kept, [1] * (len(kept) - 1) + [columns]))
    x = k.partition(0, TensorViewType(shape, element, [a.stride for a in axes]), tile_shape)
    at = lambda step: [*k.program_ids[:axis], step, *k.program_ids[axis:]]  # noqa: E731
    apply = lambda value, body, to=compute: k.map([value], to, lambda block, a: body(Emitter(block), a[0]))  # noqa: E731

    def fold(step: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
        partial = k.reduce(k.extend(k.load(x, at(step)), compute), axis, kind)
        return [k.map([carried[0], partial], compute, lambda block, a: Emitter(block)(combine(None, *a)))]

    (result,) = k.loop(-(-shape[axis] // rows), [k.fill(identity(compute), accumulator, compute)], fold)
    if scale is not None:
        result = apply(result, lambda e, a: e(arith.MulfOp(a, e.const(scale, compute))))
    if out_element != compute:
        result = apply(result, lambda e, a: e(arith.TruncFOp(a, out_element)), out_element)
    strides = list(contiguous_strides(kept))
    strides.insert(axis, 0)
    target = k.partition(1, TensorViewType([*shape[:axis], 1, *shape[axis + 1 :]], out_element, strides), accumulator)
    k.store(result, target, at(k.index(0)))
    p.launch(k, [source, out])
    return out


def accumulator_of(op: Operation, element) -> Attribute:
    """What a reduction accumulates (and keeps its partial results) in: f16/bf16 in f32, f32
    sums and means in f64 (accumulated in f32, a sum of 2^22 ones and one 1e8 came out 110
    too low, 14 ulp), everything else (f64, integers, max) in its own element."""
    if isinstance(element, (Float16Type, BFloat16Type)):
        return f32
    if isinstance(element, Float32Type) and isinstance(op, (graph.ReduceSumOp, graph.ReduceMeanOp)):
        return f64
    return element


@register_tile_lowering(*REDUCERS)
def lower_reduction(op: Operation, p: ProgramLowering) -> None:
    """The merged reduced axes reduce one kernel each, the last first; each intermediate is
    a contiguous buffer whose axes merge again. Partial results and intermediates are
    `accumulator_of` the element (f32 workspaces for f16/bf16, f64 for f32 sums): the
    result is rounded once, at the end."""
    x = op.operands[0]
    buffer, _, strides = p.operand(x)
    shape = shape_of(x.type)
    reduced = {a % len(shape) for a in op.params()["axes"]}
    element = x.type.element_type
    partial = accumulator_of(op, element)
    if not reduced:
        p.bind(op.results[0], buffer)
        return
    count = math.prod(shape[a] for a in reduced)
    axes = split_for_grid(p, merged_axes([Axis(d, s, a in reduced) for a, (d, s) in enumerate(zip(shape, strides))]))
    source = element
    while True:
        axis = max(i for i, a in enumerate(axes) if a.reduced)
        last = sum(a.reduced for a in axes) == 1
        # The mean of no elements is nan, like the reference's (0 * nan).
        scale = (1.0 / count if count else math.nan) if last and isinstance(op, graph.ReduceMeanOp) else None
        out_element = element if last else partial
        if axis == len(axes) - 1:
            buffer = reduce_axis(op, p, buffer, [a.size for a in axes], axis, source, scale, out_element=out_element,
                                 compute=partial, strides=[a.stride for a in axes])
        else:
            buffer = reduce_columns(op, p, buffer, axes, axis, source, scale, out_element, partial)
        if last:
            break
        p.mark_workspace(buffer)
        source = partial
        rest = [a for i, a in enumerate(axes) if i != axis]
        axes = merged_axes([Axis(a.size, s, a.reduced) for a, s in zip(rest, contiguous_strides([a.size for a in rest]))])
    p.bind(op.results[0], buffer)

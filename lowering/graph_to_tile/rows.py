"""Row kernels of `lower-graph-to-tile`: softmax, log_softmax, layernorm, rmsnorm, and
`reduce_axis`, a reduction's row kernel (reductions.py lowers the reduction ops).

A row op works along one axis. Its tensor is viewed with that axis last (a strided view,
no copy), the kernel grid runs over tiles of the other axes, and each kernel instance
walks its rows in column tiles with `scf.for` loops carrying per-row tiles: one pass per
statistic (max, sum, ...), a last pass writing the result. A row of any length works;
a short row is one column tile.

    softmax:  m = max_c(x)   s = sum_c(exp(x - m))   y = exp(x - m) / s
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import BFloat16Type, BoolAttr, DictionaryAttr, Float16Type, TensorType, f32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import is_float, shape_of
from strata.dialects.graph_fused import ROW_ANCHORS
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import KERNEL_BYTE_BUDGET, MAX_TILE_DIM, TensorViewType, element_bytes
from strata.lowering.graph_to_tile.program import ProgramLowering, same_layout_inputs
from strata.lowering.scalar_rules import Emitter, emit_members
from strata.lowering.tile_builder import (
    KernelBuilder,
    broadcast_strides,
    contiguous_strides,
    grid_of,
    next_power_of_two,
    previous_power_of_two,
)

Body = Callable[[Emitter, Sequence[SSAValue]], SSAValue]


@dataclass(frozen=True)
class RowLayout:
    """A tensor of `shape` seen as rows along `axis` (kept axes first, `axis` last)."""

    shape: tuple[int, ...]
    axis: int
    tile: tuple[int, ...]

    @staticmethod
    def of(shape: Sequence[int], axis: int, tile_elements: int) -> RowLayout:
        kept = [d for a, d in enumerate(shape) if a != axis] or [1]
        columns = min(next_power_of_two(shape[axis]), MAX_TILE_DIM, tile_elements)
        rows = min(next_power_of_two(kept[-1]), max(1, tile_elements // columns))
        return RowLayout(tuple(shape), axis, (*([1] * (len(kept) - 1)), rows, columns))

    @property
    def kept(self) -> tuple[int, ...]:
        return tuple(d for a, d in enumerate(self.shape) if a != self.axis) or (1,)

    @property
    def steps(self) -> int:
        return -(-self.shape[self.axis] // self.tile[-1])

    @property
    def grid(self) -> tuple[int, ...]:
        return grid_of(self.kept, self.tile)

    @property
    def row_tile(self) -> tuple[int, ...]:
        return (*self.tile[:-1], 1)

    def view(self, element: Attribute, strides: Sequence[int] | None = None) -> TensorViewType:
        """The tensor (contiguous, or with `strides`) with the row axis moved last."""
        strides = contiguous_strides(self.shape) if strides is None else strides
        kept = [s for a, s in enumerate(strides) if a != self.axis] or [0]
        return TensorViewType((*self.kept, self.shape[self.axis]), element, (*kept, strides[self.axis]))

    def row_vector_view(self, element: Attribute) -> TensorViewType:
        """A [length] parameter (gamma, beta) read along every row."""
        return TensorViewType((*self.kept, self.shape[self.axis]), element, (*[0] * len(self.kept), 1))

    def reduced_view(self, element: Attribute) -> TensorViewType:
        """The per-row results, contiguous over the kept axes, with a unit row axis."""
        strides = contiguous_strides(self.kept) if len(self.shape) > 1 else (0,)
        return TensorViewType((*self.kept, 1), element, (*strides, 0))


class RowKernel:
    """A KernelBuilder plus the row layout: passes over the columns of each row tile."""

    def __init__(self, op: Operation | str, p: ProgramLowering, layout: RowLayout, buffers: Sequence[SSAValue], element,
                 compute=None, column_partials: bool = False):
        self.k = KernelBuilder(p.kernel_name(op), buffers, layout.grid)
        self.layout = layout
        self.compute = compute or (f32 if isinstance(element, (Float16Type, BFloat16Type)) else element)
        self.column_partials = column_partials
        """online_max_sum keeps a maximum and a sum per column of the tile and reduces them
        once after the loop (column_partial_max_sum; where it pays: column_partials_pay)."""

    def at(self, column: SSAValue) -> list[SSAValue]:
        return [*self.k.program_ids, column]

    def load(self, partition: SSAValue, column: SSAValue) -> SSAValue:
        return self.k.extend(self.k.load(partition, self.at(column)), self.compute)

    def causal_mask(self, scores: SSAValue, column: SSAValue) -> SSAValue:
        """-inf where the key index (column) exceeds the query index (row)."""
        k, tile_shape = self.k, self.layout.tile
        rows, columns = k.iota(len(tile_shape) - 2, tile_shape), k.iota(len(tile_shape) - 1, tile_shape)
        row_origin = k.add(arith.MuliOp(k.program_ids[-1], k.index(tile_shape[-2]))).results[0]
        column_origin = k.add(arith.MuliOp(column, k.index(tile_shape[-1]))).results[0]
        origins = [k.add(arith.IndexCastOp(v, i64)).results[0] for v in (row_origin, column_origin)]

        def mask(e: Emitter, a: Sequence[SSAValue]) -> SSAValue:
            query = e(arith.AddiOp(a[1], origins[0]))
            key = e(arith.AddiOp(a[2], origins[1]))
            future = e(arith.CmpiOp(key, query, "sgt"))
            return e(arith.SelectOp(future, e.const(float("-inf"), a[0].type), a[0]))

        return self.map([scores, rows, columns], mask)

    def map(self, inputs: Sequence[SSAValue], body: Body, element=None) -> SSAValue:
        return self.k.map(inputs, element or self.compute, lambda block, args: body(Emitter(block), args))

    def spread(self, row_values: SSAValue) -> SSAValue:
        return self.k.broadcast(row_values, self.layout.tile)

    def row_pass(self, init: float, kind: str, element_of: Callable[[SSAValue], SSAValue], combine,
                 stores: bool = False) -> SSAValue:
        """Per-row `kind` reduction of element_of(column tile) over all column tiles.
        `stores`: element_of also stores, and the loop carries the token chain so that a
        later pass may load what it stored."""
        k = self.k

        def step(column: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
            if stores:
                k.token = carried[1]
            partial = k.reduce(element_of(column), len(self.layout.tile) - 1, kind)
            return [self.map([carried[0], partial], lambda e, a: e(combine(*a))), *([k.token] if stores else [])]

        inits = [k.fill(init, self.layout.row_tile, self.compute), *([k.token] if stores else [])]
        result, *token = k.loop(self.layout.steps, inits, step)
        if stores:
            k.token = token[0]
        return result

    def online_max_sum(self, x_of: Callable[[SSAValue], SSAValue], sums_of: Sequence[Callable[[SSAValue], SSAValue]] = ()
                       ) -> tuple[SSAValue, SSAValue, list[SSAValue]]:
        """One pass over the row's column tiles for its maximum m and l = sum(exp(x - m)),
        the online softmax: each tile's terms are taken against the running maximum and the
        sum so far rescaled by exp(m_old - m_new) when it grows (a maximum still -inf counts
        as 0, so a row that starts with -inf tiles gets no inf - inf). Also the row sums of
        each of `sums_of`'s tiles, in the same pass. With column_partials, per column of
        the tile instead (column_partial_max_sum)."""
        if self.column_partials:
            return self.column_partial_max_sum(x_of, sums_of)
        row_tile = self.layout.row_tile
        inits = [*(self.k.fill(0.0, row_tile, self.compute) for _ in range(1 + len(sums_of))),
                 self.k.fill(float("-inf"), row_tile, self.compute)]  # fmt: skip
        total, *sums, largest = self.k.loop(self.layout.steps, inits, self.online_step(x_of, sums_of))
        return largest, total, sums

    def online_step(self, x_of: Callable[[SSAValue], SSAValue], sums_of: Sequence[Callable[[SSAValue], SSAValue]]):
        """online_max_sum's loop body: step(column, [total, *sums, largest]) -> the same, per row."""
        k, axis = self.k, len(self.layout.tile) - 1

        def step(column: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
            # The maximum is carried last: the new sum reads the old maximum, so the loop's
            # yield writes it back after the sums (no copy of the sum first).
            total, *sums, largest = carried
            x = x_of(column)
            new = self.map([largest, k.reduce(x, axis, "max")], lambda e, a: e(arith.MaximumfOp(*a)))

            def finite(e: Emitter, a: Sequence[SSAValue]) -> SSAValue:
                unset = e(arith.CmpfOp(a[0], e.const(float("-inf"), a[0].type), "oeq"))
                return e(arith.SelectOp(unset, e.const(0.0, a[0].type), a[0]))

            base = self.map([new], finite)
            exp_difference = lambda e, a: e(xmath.ExpOp(e(arith.SubfOp(*a))))  # noqa: E731
            terms = k.reduce(self.map([x, self.spread(base)], exp_difference), axis, "sum")
            correction = self.map([largest, base], exp_difference)
            total = self.map([total, correction, terms], lambda e, a: e(arith.AddfOp(e(arith.MulfOp(a[0], a[1])), a[2])))
            sums = [self.map([s, k.reduce(f(column), axis, "sum")], lambda e, a: e(arith.AddfOp(*a))) for s, f in zip(sums, sums_of)]
            return [total, *sums, new]

        return step

    def column_partial_max_sum(self, x_of: Callable[[SSAValue], SSAValue],
                               sums_of: Sequence[Callable[[SSAValue], SSAValue]]) -> tuple[SSAValue, SSAValue, list[SSAValue]]:
        """online_max_sum with the loop carrying whole tiles: per column c of the tile the
        largest m_c of the elements it has seen and l_c = sum(exp(x - m_c)), each element
        costing one exp (x > m_c: l_c = l_c · exp(m_c - x) + 1, else l_c + exp(x - m_c); an
        element that is -inf changes nothing); after the loop over the whole column tiles,
        m = max_c m_c and l = sum_c l_c · exp(m_c - m) (columns still at -inf count 0), and a
        partial last tile is taken per row (online_step): a loop-carried tile keeps only the
        columns its last tile had."""
        k, axis, tile_shape = self.k, len(self.layout.tile) - 1, self.layout.tile

        def step(column: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
            total, *sums, largest = carried
            x = x_of(column)

            def updated_total(e: Emitter, a: Sequence[SSAValue]) -> SSAValue:
                value, seen, total = a
                larger = e(arith.CmpfOp(value, seen, "ogt"))
                exponent = e(arith.SelectOp(larger, e(arith.SubfOp(seen, value)), e(arith.SubfOp(value, seen))))
                term = e(xmath.ExpOp(exponent))
                grown = e(arith.AddfOp(e(arith.MulfOp(total, term)), e.const(1.0, total.type)))
                added = e(arith.SelectOp(larger, grown, e(arith.AddfOp(total, term))))
                skipped = e(arith.CmpfOp(value, e.const(float("-inf"), value.type), "oeq"))
                return e(arith.SelectOp(skipped, total, added))

            total = self.map([x, largest, total], updated_total)
            sums = [self.map([s, f(column)], lambda e, a: e(arith.AddfOp(*a))) for s, f in zip(sums, sums_of)]
            return [total, *sums, self.map([largest, x], lambda e, a: e(arith.MaximumfOp(*a)))]

        inits = [*(k.fill(0.0, tile_shape, self.compute) for _ in range(1 + len(sums_of))),
                 k.fill(float("-inf"), tile_shape, self.compute)]  # fmt: skip
        whole = self.layout.shape[self.layout.axis] // tile_shape[-1]
        totals, *sums, largests = k.loop(whole, inits, step)
        largest = k.reduce(largests, axis, "max")

        def rescaled(e: Emitter, a: Sequence[SSAValue]) -> SSAValue:
            total, seen, row_largest = a
            unset = e(arith.CmpfOp(seen, e.const(float("-inf"), seen.type), "oeq"))
            scaled = e(arith.MulfOp(total, e(xmath.ExpOp(e(arith.SubfOp(seen, row_largest))))))
            return e(arith.SelectOp(unset, e.const(0.0, total.type), scaled))

        total = k.reduce(self.map([totals, largests, self.spread(largest)], rescaled), axis, "sum")
        sums = [k.reduce(s, axis, "sum") for s in sums]
        if whole < self.layout.steps:  # the partial last tile, per row
            total, *sums, largest = self.online_step(x_of, sums_of)(k.index(whole), [total, *sums, largest])
        return largest, total, sums

    def for_each_column(self, body: Callable[[SSAValue], None]) -> None:
        """A last pass over the row's column tiles (the write pass)."""

        def step(column: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
            body(column)
            return []

        self.k.loop(self.layout.steps, [], step)

    def store(self, target: SSAValue, column: SSAValue, value: SSAValue, element) -> None:
        """Store a column tile, rounded to `element` when computed wider."""
        self.k.store(self.narrow(value, element), target, self.at(column))

    def narrow(self, value: SSAValue, element) -> SSAValue:
        """`value` rounded to `element` when computed wider (f16/bf16 rows compute in f32)."""
        if value.type.element_type == element:
            return value
        return self.map([value], lambda e, a: e(arith.TruncFOp(a[0], element)), element)


def _sum(e: Emitter, a: SSAValue, b: SSAValue):
    return arith.AddfOp(a, b) if is_float(a.type) else arith.AddiOp(a, b)


REDUCERS = {
    graph.ReduceSumOp: ("sum", lambda t: 0.0 if is_float(t) else 0, _sum),
    graph.ReduceMeanOp: ("sum", lambda t: 0.0, _sum),
    graph.ReduceMaxOp: (
        "max",
        lambda t: float("-inf") if is_float(t) else -(2 ** (t.width.data - 1)),
        lambda e, a, b: arith.MaximumfOp(a, b) if is_float(a.type) else arith.MaxSIOp(a, b),
    ),
}


def reduce_axis(op: Operation, p: ProgramLowering, source: SSAValue, shape: Sequence[int], axis: int,
                element, scale: float | None, reducer: type[Operation] | None = None, out_element=None,
                compute=None, strides: Sequence[int] | None = None) -> SSAValue:
    """One kernel reducing `source` (a buffer of `shape` and `element`s, contiguous or with
    `strides`) along `axis` into a new contiguous buffer of `out_element`s (default:
    `element`), the way `reducer` (default: the op's own type) reduces, accumulating in
    `compute` (default: RowKernel's: f32 for f16/bf16)."""
    kind, identity, combine = REDUCERS[reducer or type(op)]
    out_element = out_element or element
    layout = RowLayout.of(shape, axis, p.cost.elements)
    out_shape = [d for a, d in enumerate(shape) if a != axis]
    out = p.new_buffer(TensorType(out_element, out_shape))
    row = RowKernel(op, p, layout, [source, out], element, compute)
    x = row.k.partition(0, layout.view(element, strides), layout.tile)
    result = row.row_pass(identity(row.compute), kind, lambda c: row.load(x, c), lambda a, b: combine(None, a, b))
    if scale is not None:
        result = row.map([result], lambda e, a: e(arith.MulfOp(a[0], e.const(scale, row.compute))))
    result = row.narrow(result, out_element)
    row.k.store(result, row.k.partition(1, layout.reduced_view(out_element), layout.row_tile), row.k.program_ids + [row.k.index(0)])
    p.launch(row.k, [source, out])
    return out


ColumnTile = Callable[[SSAValue], SSAValue]
"""The tile of some row-layout value at a column step."""


def softmax_rows(row: RowKernel, x_of: ColumnTile, write: Callable[[SSAValue, SSAValue], None],
                 log: bool = False, causal: bool = False, output: SSAValue | None = None) -> None:
    """The passes of softmax / log_softmax over each row: max, sum of exp, write; rows of
    several column tiles that do not store exp take max and sum in one online pass.
    `causal` masks element (i, j) of the last two axes where j > i (attention scores).
    `output`: the partition softmax's own result is stored to in the compute element type
    (nothing else reads it): the sum pass stores exp(x - m) there and the last pass scales
    it in place, so exp is evaluated once per element instead of twice (the sum pass and the
    write pass each cost about as much as all memory traffic of a row tile)."""
    if causal:
        unmasked = x_of
        x_of = lambda c: row.causal_mask(unmasked(c), c)  # noqa: E731
    # Rows of several column tiles not storing exp: max and sum in one online pass.
    online = row.layout.steps > 1 and (output is None or log)
    if online:
        largest, total, _ = row.online_max_sum(x_of)
    else:
        largest = row.row_pass(float("-inf"), "max", x_of, arith.MaximumfOp)
    shifted = lambda c: row.map([x_of(c), row.spread(largest)], lambda e, a: e(arith.SubfOp(*a)))  # noqa: E731
    exp_shifted = lambda c: row.map([shifted(c)], lambda e, a: e(xmath.ExpOp(a[0])))  # noqa: E731
    if not online and output is not None and not log:

        def stored_exp(column: SSAValue) -> SSAValue:
            # Summed as loaded back: a tile both stored and reduced would be copied to the stack.
            row.k.store(exp_shifted(column), output, row.at(column))
            return row.k.load(output, row.at(column))

        total = row.row_pass(0.0, "sum", stored_exp, arith.AddfOp, stores=True)
        exp_shifted = lambda c: row.k.load(output, row.at(c))  # noqa: E731
    elif not online:
        total = row.row_pass(0.0, "sum", exp_shifted, arith.AddfOp)
    if log:
        log_total = row.map([total], lambda e, a: e(xmath.LogOp(a[0])))
        value = lambda c: row.map([shifted(c), row.spread(log_total)], lambda e, a: e(arith.SubfOp(*a)))  # noqa: E731
    else:
        # One division per row; each element is then a product (within an ulp of e / s).
        inverse = row.map([total], lambda e, a: e(arith.DivfOp(e.const(1.0, a[0].type), a[0])))
        value = lambda c: row.map([exp_shifted(c), row.spread(inverse)], lambda e, a: e(arith.MulfOp(*a)))  # noqa: E731
    row.for_each_column(lambda c: write(c, value(c)))


def column_partials_pay(p: ProgramLowering) -> bool:
    """Whether a row kernel whose online pass is its last (cross-entropy's losses) keeps
    per-column partials (RowKernel.column_partial_max_sum): on the GPU, where each column
    tile's two block-wide reductions (a barrier each) otherwise bound the pass. Measured on
    an H200, bf16 cross-entropy of GPT-2's [8192, 50257] logits: 0.903 -> 0.470 ms (torch
    0.568). Softmax, whose write pass then reads the row's statistics behind a barrier at
    every column tile, ran slower with them (1.212 -> 1.301 ms; [2048, 32768] 0.136 ->
    0.160) and keeps the per-row pass. The CPU's reductions are cheap: it keeps it too."""
    return bool(p.cost.matmul_min_tiles)


def stores_exp_once(p: ProgramLowering) -> bool:
    """Whether softmax stores exp(x - m) in its sum pass (softmax_rows' `output`): on the
    CPU, where exp costs more than another pass over a cache-resident row tile. The GPU
    (the target whose cost model asks for a matmul tile per multiprocessor) recomputes it: exp is cheap
    there and the extra store would be global memory traffic."""
    return not p.cost.matmul_min_tiles


def softmax_kernel(
    p: ProgramLowering, label: str, source: SSAValue, x_type: TensorType, axis: int,
    log: bool = False, causal: bool = False,
) -> SSAValue:
    """softmax / log_softmax of `source` along `axis` into a new buffer."""
    shape = shape_of(x_type)
    element = x_type.element_type
    layout = RowLayout.of(shape, axis % len(shape), p.cost.elements)
    out = p.new_buffer(x_type)
    row = RowKernel(label, p, layout, [source, out], element)
    x = row.k.partition(0, layout.view(element), layout.tile)
    y = row.k.partition(1, layout.view(element), layout.tile)
    own = y if element == row.compute and stores_exp_once(p) else None
    softmax_rows(row, lambda c: row.load(x, c), lambda c, value: row.store(y, c, value, element), log, causal, own)
    marks = {RESIDENT_MARK: DictionaryAttr({"log": BoolAttr.from_bool(log)})} if resident(p, layout, element, causal) else {}
    # The write pass reads each column tile before writing it: safe in place.
    p.launch(row.k, [source, out], in_place=[0], attributes=marks)
    return out


RESIDENT_MARK = "tile.resident_softmax"


def resident(p: ProgramLowering, layout: RowLayout, element, causal: bool) -> bool:
    """Whether a softmax kernel is marked RESIDENT_MARK ({log}): rows of f32, f16 or bf16
    along the last axis, longer than one column tile and within the cost model's
    resident_row_bytes, one row per kernel instance. The GPU lowers it as a kernel that
    copies each row into shared memory once and runs both passes there
    (tile_to_gpu/resident_rows.py); elsewhere the mark changes nothing."""
    length = layout.shape[layout.axis]
    return (
        not causal and (element == f32 or isinstance(element, Float16Type | BFloat16Type))
        and layout.axis == len(layout.shape) - 1 and layout.steps > 1 and layout.tile[-2] == 1
        and length * element_bytes(element) <= p.cost.resident_row_bytes
    )  # fmt: skip


@register_tile_lowering(graph.SoftmaxOp, graph.LogSoftmaxOp)
def lower_softmax(op: Operation, p: ProgramLowering) -> None:
    x = op.operands[0]
    log = isinstance(op, graph.LogSoftmaxOp)
    out = softmax_kernel(p, op.name.removeprefix("graph."), p.buffer_of(x), x.type, op.params()["axis"], log)
    p.bind(op.results[0], out)


def normalize_rows(row: RowKernel, x_of: ColumnTile, params_of: Sequence[ColumnTile],
                   write: Callable[[SSAValue, SSAValue], None], centered: bool, eps: float) -> None:
    """layernorm (centered) / rmsnorm over each row:
    y = (x - mean?) / sqrt(mean((x - mean?)^2) + eps) * gamma (+ beta)."""
    length = row.layout.shape[row.layout.axis]
    inverse_length = 1.0 / length if length else math.nan  # empty rows: nothing is written
    if centered:
        total = row.row_pass(0.0, "sum", x_of, arith.AddfOp)
        mean = row.map([total], lambda e, a: e(arith.MulfOp(a[0], e.const(inverse_length, a[0].type))))
        centre = lambda c: row.map([x_of(c), row.spread(mean)], lambda e, a: e(arith.SubfOp(*a)))  # noqa: E731
    else:
        centre = x_of
    squares = row.row_pass(0.0, "sum", lambda c: row.map([centre(c)], lambda e, a: e(arith.MulfOp(a[0], a[0]))), arith.AddfOp)

    def inverse_deviation(e: Emitter, a: Sequence[SSAValue]) -> SSAValue:
        variance = e(arith.MulfOp(a[0], e.const(inverse_length, a[0].type)))
        deviation = e(xmath.SqrtOp(e(arith.AddfOp(variance, e.const(eps, a[0].type)))))
        return e(arith.DivfOp(e.const(1.0, a[0].type), deviation))

    # One division per row; each element is then a product (a division per element cost
    # as much as the rest of the write pass).
    scale = row.map([squares], inverse_deviation)

    def normalized(e: Emitter, a: Sequence[SSAValue]) -> SSAValue:
        y = e(arith.MulfOp(e(arith.MulfOp(a[0], a[1])), a[2]))
        return e(arith.AddfOp(y, a[3])) if len(a) > 3 else y

    row.for_each_column(
        lambda c: write(c, row.map([centre(c), row.spread(scale), *(param(c) for param in params_of)], normalized))
    )


def _normalize(op: Operation, p: ProgramLowering, centered: bool) -> None:
    x_type = op.results[0].type
    shape = shape_of(x_type)
    element = x_type.element_type
    layout = RowLayout.of(shape, len(shape) - 1, p.cost.elements)
    buffers = [p.buffer_of(v) for v in op.operands]
    out = p.new_buffer(x_type)
    row = RowKernel(op, p, layout, [*buffers, out], element)
    k = row.k
    x = k.partition(0, layout.view(element), layout.tile)
    params = [k.partition(i, layout.row_vector_view(element), layout.tile) for i in range(1, len(buffers))]
    y = k.partition(len(buffers), layout.view(element), layout.tile)
    normalize_rows(
        row, lambda c: row.load(x, c), [lambda c, q=q: row.load(q, c) for q in params],
        lambda c, value: row.store(y, c, value, element), centered, op.params()["epsilon"],
    )
    p.launch(k, [*buffers, out], in_place=[0])
    p.bind(op.results[0], out)


@register_tile_lowering(graph.LayerNormOp)
def lower_layernorm(op: graph.LayerNormOp, p: ProgramLowering) -> None:
    _normalize(op, p, centered=True)


@register_tile_lowering(graph.RmsNormOp)
def lower_rmsnorm(op: graph.RmsNormOp, p: ProgramLowering) -> None:
    _normalize(op, p, centered=False)



def lower_row_fused(op: graph.FusedOp, p: ProgramLowering) -> None:
    """A group around a row op is one row kernel: the prologue (elementwise ops feeding
    x) is evaluated whenever a pass reads x, the epilogue on each written column tile."""
    body = op.body.block
    members = list(body.ops)[:-1]
    anchor = next(m for m in members if isinstance(m, ROW_ANCHORS))
    prologue, epilogue = members[: members.index(anchor)], members[members.index(anchor) + 1 :]
    x = anchor.operands[0]
    shape, element = shape_of(x.type), x.type.element_type
    axis = anchor.params()["axis"] % len(shape) if isinstance(anchor, graph.SoftmaxOp | graph.LogSoftmaxOp) else len(shape) - 1
    # Every pass loads each input and maps it: size tiles so all of them fit the kernel's
    # on-chip budget (about 3 passes x (inputs + maps) + the outputs + per-row statistics).
    tiles = 3 * (len(op.inputs) + 2) + 3 * len(op.outputs) + 16
    fitting = KERNEL_BYTE_BUDGET // max(element_bytes(element), 4) // tiles
    layout = RowLayout.of(shape, axis, min(p.cost.elements, previous_power_of_two(fitting)))
    inputs = [p.buffer_of(v) for v in op.inputs]
    outputs = [p.new_buffer(r.type) for r in op.outputs]
    row = RowKernel(anchor, p, layout, [*inputs, *outputs], element)
    k = row.k
    position = {arg: i for i, arg in enumerate(body.args)}
    partitions: dict[SSAValue, SSAValue] = {}

    def column_tile(arg: SSAValue, column: SSAValue) -> SSAValue:
        if arg not in partitions:
            strides = broadcast_strides(shape_of(arg.type), shape)
            partitions[arg] = k.partition(position[arg], layout.view(arg.type.element_type, strides), layout.tile)
        # Loaded as stored: the members' scalar rules widen what they compute wider (an
        # input of another element type than x, e.g. an i1 condition, is no row value).
        return k.load(partitions[arg], row.at(column))

    def chain(ops: Sequence[Operation], known: dict[SSAValue, SSAValue], wanted: SSAValue):
        """A tile.map computing `wanted` from the block arguments the `ops` chain reads."""
        needed = [a for a in body.args if any(a in o.operands for o in ops)]

        def scalar(e: Emitter, elements: Sequence[SSAValue]) -> SSAValue:
            values = {**dict(zip(known, elements)), **dict(zip(needed, elements[len(known) :]))}
            return emit_members(ops, e.block, values)[wanted]

        return needed, scalar

    if prologue:
        prologue_args, prologue_scalar = chain(prologue, {}, x)
        x_of = lambda c: row.map([column_tile(a, c) for a in prologue_args], prologue_scalar)  # noqa: E731
    else:
        x_of = lambda c: column_tile(x, c)  # noqa: E731
    output_partitions = [
        k.partition(len(inputs) + i, layout.view(r.type.element_type), layout.tile) for i, r in enumerate(op.outputs)
    ]

    def write(column: SSAValue, value: SSAValue) -> None:
        for yielded, target, result in zip(body.last_op.operands, output_partitions, op.outputs):
            if yielded is anchor.results[0]:
                tile_value = value
            else:
                args, scalar = chain(epilogue, {anchor.results[0]: None}, yielded)
                tile_value = row.map([value, *(column_tile(a, column) for a in args)], scalar,
                                     yielded.type.element_type)
            row.store(target, column, tile_value, result.type.element_type)

    if isinstance(anchor, graph.SoftmaxOp | graph.LogSoftmaxOp):
        # With no epilogue, the one output is softmax's own (see softmax_rows' `output`).
        alone = list(body.last_op.operands) == [anchor.results[0]] and op.outputs[0].type.element_type == row.compute
        own = output_partitions[0] if alone and stores_exp_once(p) else None
        softmax_rows(row, x_of, write, log=isinstance(anchor, graph.LogSoftmaxOp), output=own)
    else:
        params = [
            k.partition(position[v], layout.row_vector_view(v.type.element_type), layout.tile) for v in anchor.operands[1:]
        ]
        normalize_rows(row, x_of, [lambda c, q=q: row.load(q, c) for q in params], write,
                       centered=isinstance(anchor, graph.LayerNormOp), eps=anchor.params()["epsilon"])
    p.launch(k, [*inputs, *outputs], same_layout_inputs(op.inputs, op.outputs[-1].type, p))
    for result, buffer in zip(op.outputs, outputs):
        p.bind(result, buffer)

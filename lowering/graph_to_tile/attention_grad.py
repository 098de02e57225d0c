"""graph.attention_grad in `lower-graph-to-tile`. With `flash_attention` (the GPU pipeline),
16-bit attention the flash backward takes (flash_grad_shaped: heads in FLASH_GRAD_HEADS, or
up to the cost model's flash_grad_head) read along contiguous rows becomes three kernels
marked `tile.flash_attention_grad` (part = stats or dots, dq, dkv; four past 128), which lower-tile-to-gpu
replaces by its tensor-core kernels (tile_to_gpu/flash_attention_grad.py); their bodies
here are what they compute, in f32, rounding only the results. Any other attention_grad
is lowered as its expansion (transforms/expand_attention_grad.py), op by op.

With P = softmax(scale · q kᵀ [causal]) and, per query row, its log-sum-exp L and
D = rowsum(dout ∘ out), every probability is exp(scale · q kᵀ - L), so the gradient needs
no [Sq, Sk] buffer, only L and D ([batch..., Sq] f32 buffers, rows padded to whole blocks
of BLOCK: a block's tiles read its rows past the queries, which are masked):

- stats, one instance per (batch..., BLOCK queries): L by the online softmax over the key
  blocks (running max m and sum l of exp(s - m), L = m + log l), and D; or, where the op
  reads the forward's L (its `lse`, as graph.attention_lse's flash kernel leaves it:
  padded_lse), dots: D alone;
- dq, one instance per (batch..., BLOCK queries), over the key blocks (causal: up to the
  diagonal): p = exp(s - L), dp = dout vᵀ, ds = p (dp - D), dq += ds k; dq · scale;
- dkv, one instance per (batch..., BLOCK keys), over the query blocks (causal: from the
  diagonal), everything transposed: pᵀ = exp(sᵀ - Lᵀ), dpᵀ = v doutᵀ,
  dsᵀ = pᵀ (dpᵀ - Dᵀ), dv += pᵀ dout, dk += dsᵀ q; dk · scale.

Heads past SPLIT_HEAD (sm_90 only) split dkv into two kernels of the same instances: dk
(everything above but dv) and dv (pᵀ from sᵀ and L alone, dv += pᵀ dout: neither v, dpᵀ
nor D), so that each keeps one [64 x head] sum: dk's and dv's of a head of 256 take 128
registers a thread each, both together twice what a thread has.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import BoolAttr, DictionaryAttr, FloatAttr, StringAttr, TensorType, f32, f64, i1
from xdsl.ir import SSAValue

from strata.dialects import graph, tile
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import TensorViewType
from strata.lowering.graph_to_tile.attention import (
    STATS_BLOCK,
    elementwise,
    index_to_i64,
    key_blocks_seen,
    log_sum_exp,
    online_softmax_step,
    padded_rows,
    rows_of_chunks,
    stats_view,
)
from strata.lowering.graph_to_tile.program import ProgramLowering
from strata.lowering.scalar_rules import Emitter
from strata.lowering.tile_builder import KernelBuilder, contiguous_strides, next_power_of_two
from strata.transforms.expand_attention_grad import FLASH_GRAD_HEADS, empty_attention, expanded, flash_grad_shaped
from strata.transforms.vjp_context import GraphEmitter

BLOCK = STATS_BLOCK
"""Queries (stats, dq) or keys (dkv) per instance; the GPU kernels' block too."""
MARK = "tile.flash_attention_grad"
SPLIT_HEAD = FLASH_GRAD_HEADS[-1]
"""The deepest head whose dk and dv one dkv kernel sums; past it, the dk and dv kernels."""


@register_tile_lowering(graph.AttentionGradOp)
def lower_attention_grad(op: graph.AttentionGradOp, p: ProgramLowering) -> None:
    if (
        p.cost.flash_attention and not empty_attention(op.q.type, op.v.type)
        and flash_grad_shaped(op.q.type, op.v.type, p.cost.flash_grad_head)
        and rows_of_chunks(p, op.operands[:5])
    ):  # fmt: skip
        FlashGradKernels(op, p).lower()
    else:
        lower_expanded(op, p)


def lower_expanded(op: graph.AttentionGradOp, p: ProgramLowering) -> None:
    """The op's expansion into graph ops, each lowered by its own rule (in the 16-bit type
    where the flash kernels are on: the GPU's tensor cores; see expanded)."""
    p.lower_expansion(op.results, lambda add: expanded(GraphEmitter(add), op, widen=not p.cost.flash_attention))


def padded_lse(lse: SSAValue, p: ProgramLowering) -> bool:
    """Whether an lse ([batch..., Sq]) lies in its buffer as L's rows padded to whole
    blocks, as graph.attention_lse's flash kernel leaves it."""
    *batch, queries = shape_of(lse.type)
    view = p.view_of(lse)
    return (
        tuple(view.get_strides()) == contiguous_strides((*batch, padded_rows(queries))) and view.offset.data == 0
        and p.buffer_of(lse).type.get_shape()[0] >= prod(batch) * padded_rows(queries)
    )  # fmt: skip


class FlashGradKernels:
    """The three marked kernels of the module docstring for one op."""

    def __init__(self, op: graph.AttentionGradOp, p: ProgramLowering):
        self.op, self.p = op, p
        params = op.params()
        self.scale, self.causal = params["scale"], params["causal"]
        *self.batch, self.queries, self.depth = shape_of(op.q.type)
        self.keys, self.width = shape_of(op.v.type)[-2:]
        self.lead = (1,) * len(self.batch)
        self.rows = min(BLOCK, next_power_of_two(self.queries))
        self.columns = min(BLOCK, next_power_of_two(self.keys))
        self.depth_tile, self.width_tile = next_power_of_two(self.depth), next_power_of_two(self.width)
        self.stats_type = TensorType(f32, [*self.batch, padded_rows(self.queries), 1])
        self.stats_view = stats_view(op.q.type)

    def lower(self) -> None:
        p, op = self.p, self.op
        if op.lse is not None and padded_lse(op.lse, p):
            lse, row_dots = p.buffer_of(op.lse), p.mark_workspace(p.new_buffer(self.stats_type))
            self.dots_kernel(row_dots)
        else:  # L computed here (an lse laid out otherwise is the same L)
            lse, row_dots = (p.mark_workspace(p.new_buffer(self.stats_type)) for _ in range(2))
            self.stats_kernel(lse, row_dots)
        dq, dk, dv = (p.new_buffer(value.type) for value in op.results)
        self.dq_kernel(lse, row_dots, dq)
        if max(self.depth, self.width) <= SPLIT_HEAD:
            self.key_kernel("dkv", {"lse": lse, "dots": row_dots, "dk": dk, "dv": dv})
        else:
            self.key_kernel("dk", {"lse": lse, "dots": row_dots, "dk": dk})
            self.key_kernel("dv", {"lse": lse, "dv": dv})
        for value, buffer in zip(op.results, (dq, dk, dv)):
            p.bind(value, buffer)

    # Views and tiles.

    def operand_view(self, value: SSAValue, transposed: bool = False) -> TensorViewType:
        view = self.p.view_of(value)
        if not transposed:
            return view
        *outer, rows, columns = view.get_strides()
        *batch, height, width = view.get_shape()
        return TensorViewType((*batch, width, height), view.element_type, (*outer, columns, rows), view.offset.data)

    def stats_transposed(self) -> TensorViewType:
        """L or D as one row of queries per batch index ([batch..., 1, Sq])."""
        *outer, row_stride, _ = self.stats_view.get_strides()
        return TensorViewType((*self.batch, 1, self.queries), f32, (*outer, 1, row_stride))

    def launch(self, k: KernelBuilder, buffers: list[SSAValue], part: str) -> None:
        mark = {"part": StringAttr(part), "scale": FloatAttr(self.scale, f64), "causal": BoolAttr(self.causal, i1)}
        self.p.launch(k, buffers, attributes={MARK: DictionaryAttr(mark)})

    def loaded(self, k: KernelBuilder, partition: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        return k.extend(k.load(partition, indices), f32)

    def scores(self, k: KernelBuilder, a: SSAValue, b: SSAValue, query_origin: SSAValue, key_origin: SSAValue,
               transposed: bool) -> SSAValue:
        """scale · a b, -inf where the key is past the query (causal) or, transposed (keys
        down, queries across), where the query is past the last one."""
        shape = (*self.lead, a.type.get_shape()[-2], b.type.get_shape()[-1])
        products = k.add(tile.MmaOp(a, b, k.fill(0.0, shape, f32))).results[0]
        query_axis, key_axis = (len(shape) - 1, len(shape) - 2) if transposed else (len(shape) - 2, len(shape) - 1)
        query_ids, key_ids = k.iota(query_axis, shape), k.iota(key_axis, shape)
        queries, origin_q, origin_k = index_to_i64(k, k.index(self.queries)), index_to_i64(k, query_origin), index_to_i64(k, key_origin)
        scale, causal = self.scale, self.causal

        def body(block, a):
            e = Emitter(block)
            query, key = e(arith.AddiOp(a[1], origin_q)), e(arith.AddiOp(a[2], origin_k))
            outside = e(arith.CmpiOp(query, queries, "sge"))
            if causal:
                outside = e(arith.OrIOp(outside, e(arith.CmpiOp(key, query, "sgt"))))
            return e(arith.SelectOp(outside, e.const(float("-inf"), f32), e(arith.MulfOp(a[0], e.const(scale, f32)))))

        return k.map([products, query_ids, key_ids], f32, body)

    def probabilities(self, k: KernelBuilder, scores: SSAValue, lse: SSAValue) -> SSAValue:
        """p = exp(s - L), L broadcast to the scores' shape."""
        lse = k.broadcast(lse, scores.type.get_shape())
        return elementwise(k, [scores, lse], lambda e, a: e(xmath.ExpOp(e(arith.SubfOp(*a)))))

    def gradient_terms(self, k: KernelBuilder, scores: SSAValue, lse: SSAValue, d_probabilities: SSAValue,
                       row_dots: SSAValue) -> tuple[SSAValue, SSAValue]:
        """(p, ds) = (exp(s - L), p (dp - D)), L and D broadcast to the scores' shape."""
        shape = scores.type.get_shape()
        p = self.probabilities(k, scores, lse)
        ds = elementwise(
            k, [p, d_probabilities, k.broadcast(row_dots, shape)],
            lambda e, a: e(arith.MulfOp(a[0], e(arith.SubfOp(a[1], a[2])))),
        )  # fmt: skip
        return p, ds

    def store(self, k: KernelBuilder, value: SSAValue, partition: SSAValue, indices, result: SSAValue,
              scale: float = 1.0) -> None:
        element = result.type.element_type
        if scale != 1.0:
            value = elementwise(k, [value], lambda e, a: e(arith.MulfOp(a[0], e.const(scale, f32))))
        if element != f32:
            value = k.map([value], element, lambda block, a: Emitter(block)(arith.TruncFOp(a[0], element)))
        k.store(value, partition, indices)

    # The kernels.

    def stats_kernel(self, lse: SSAValue, row_dots: SSAValue) -> None:
        op, lead, rows, columns = self.op, self.lead, self.rows, self.columns
        buffers = [self.p.buffer_of(v) for v in (op.q, op.k, op.out, op.dout)] + [lse, row_dots]
        k = KernelBuilder(self.p.kernel_name("attention_grad_stats"), buffers, (*self.batch, -(-self.queries // BLOCK)))
        *batch_ids, block = k.program_ids
        zero = k.index(0)
        q_part = k.partition(0, self.operand_view(op.q), (*lead, rows, self.depth_tile))
        k_part = k.partition(1, self.operand_view(op.k, transposed=True), (*lead, self.depth_tile, columns))
        out_part = k.partition(2, self.operand_view(op.out), (*lead, rows, self.width_tile))
        dout_part = k.partition(3, self.operand_view(op.dout), (*lead, rows, self.width_tile))
        lse_part, dots_part = (k.partition(arg, self.stats_view, (*lead, rows, 1)) for arg in (4, 5))
        q_tile = self.loaded(k, q_part, [*batch_ids, block, zero])
        row_shape = (*lead, rows, 1)
        query_origin = k.add(arith.MuliOp(block, k.index(rows))).results[0]

        def step(key_block: SSAValue, state: Sequence[SSAValue]) -> list[SSAValue]:
            keys_t = self.loaded(k, k_part, [*batch_ids, zero, key_block])
            key_origin = k.add(arith.MuliOp(key_block, k.index(columns))).results[0]
            s = self.scores(k, q_tile, keys_t, query_origin, key_origin, transposed=False)
            return list(online_softmax_step(k, s, *state)[:2])

        start = [k.fill(float("-inf"), row_shape, f32), k.fill(0.0, row_shape, f32)]
        largest, total = k.loop(self.key_blocks_seen(k, block), start, step)
        k.store(log_sum_exp(k, largest, total), lse_part, [*batch_ids, block, zero])
        self.store_row_dots(k, out_part, dout_part, dots_part, [*batch_ids, block, zero])
        self.launch(k, buffers, "stats")

    def store_row_dots(self, k: KernelBuilder, out_part: SSAValue, dout_part: SSAValue, dots_part: SSAValue,
                       at: list[SSAValue]) -> None:
        """D = rowsum(dout ∘ out) of a block of queries."""
        products = elementwise(k, [self.loaded(k, out_part, at), self.loaded(k, dout_part, at)],
                               lambda e, a: e(arith.MulfOp(*a)))
        k.store(k.reduce(products, len(self.lead) + 1, "sum"), dots_part, at)

    def dots_kernel(self, row_dots: SSAValue) -> None:
        """D alone (the forward gave L)."""
        op, lead, rows = self.op, self.lead, self.rows
        buffers = [self.p.buffer_of(v) for v in (op.out, op.dout)] + [row_dots]
        k = KernelBuilder(self.p.kernel_name("attention_grad_dots"), buffers, (*self.batch, -(-self.queries // BLOCK)))
        *batch_ids, block = k.program_ids
        out_part = k.partition(0, self.operand_view(op.out), (*lead, rows, self.width_tile))
        dout_part = k.partition(1, self.operand_view(op.dout), (*lead, rows, self.width_tile))
        dots_part = k.partition(2, self.stats_view, (*lead, rows, 1))
        self.store_row_dots(k, out_part, dout_part, dots_part, [*batch_ids, block, k.index(0)])
        self.launch(k, buffers, "dots")

    def key_blocks_seen(self, k: KernelBuilder, query_block: SSAValue) -> SSAValue | int:
        return key_blocks_seen(k, query_block, self.rows, self.columns, self.keys, self.causal)

    def dq_kernel(self, lse: SSAValue, row_dots: SSAValue, dq: SSAValue) -> None:
        op, lead, rows, columns = self.op, self.lead, self.rows, self.columns
        buffers = [self.p.buffer_of(v) for v in (op.q, op.k, op.v, op.dout)] + [lse, row_dots, dq]
        k = KernelBuilder(self.p.kernel_name("attention_grad_dq"), buffers, (*self.batch, -(-self.queries // BLOCK)))
        *batch_ids, block = k.program_ids
        zero = k.index(0)
        dq_view = TensorViewType(shape_of(op.q.type), op.q.type.element_type, contiguous_strides(shape_of(op.q.type)))
        q_part = k.partition(0, self.operand_view(op.q), (*lead, rows, self.depth_tile))
        k_part = k.partition(1, self.operand_view(op.k), (*lead, columns, self.depth_tile))
        dout_part = k.partition(3, self.operand_view(op.dout), (*lead, rows, self.width_tile))
        lse_part, dots_part = (k.partition(arg, self.stats_view, (*lead, rows, 1)) for arg in (4, 5))
        dq_part = k.partition(6, dq_view, (*lead, rows, self.depth_tile))
        keys_t_part = k.partition(1, self.operand_view(op.k, transposed=True), (*lead, self.depth_tile, columns))
        values_t_part = k.partition(2, self.operand_view(op.v, transposed=True), (*lead, self.width_tile, columns))
        at = [*batch_ids, block, zero]
        q_tile, dout_tile = self.loaded(k, q_part, at), self.loaded(k, dout_part, at)
        lse_tile, dots_tile = k.load(lse_part, at), k.load(dots_part, at)
        query_origin = k.add(arith.MuliOp(block, k.index(rows))).results[0]

        def step(key_block: SSAValue, state: Sequence[SSAValue]) -> list[SSAValue]:
            key_origin = k.add(arith.MuliOp(key_block, k.index(columns))).results[0]
            s = self.scores(k, q_tile, self.loaded(k, keys_t_part, [*batch_ids, zero, key_block]), query_origin,
                            key_origin, transposed=False)
            shape = s.type.get_shape()
            dp = k.add(tile.MmaOp(dout_tile, self.loaded(k, values_t_part, [*batch_ids, zero, key_block]),
                                k.fill(0.0, shape, f32))).results[0]  # fmt: skip
            _, ds = self.gradient_terms(k, s, lse_tile, dp, dots_tile)
            return [k.add(tile.MmaOp(ds, self.loaded(k, k_part, [*batch_ids, key_block, zero]), state[0])).results[0]]

        (total,) = k.loop(self.key_blocks_seen(k, block), [k.fill(0.0, (*lead, rows, self.depth_tile), f32)], step)
        self.store(k, total, dq_part, at, op.dq, self.scale)
        self.launch(k, buffers, "dq")

    def key_kernel(self, part: str, outputs: dict[str, SSAValue]) -> None:
        """The dkv, dk or dv kernel (the module docstring): per BLOCK keys, over the query
        blocks, `outputs` its L, D and results by name (ARGUMENTS' order: q, k, v, dout, then these)."""
        op, lead, rows, columns = self.op, self.lead, self.rows, self.columns
        inputs = {"q": op.q, "k": op.k, "v": op.v, "dout": op.dout}
        if part == "dv":
            del inputs["v"]
        names = [*inputs, *outputs]
        buffers = [self.p.buffer_of(v) for v in inputs.values()] + list(outputs.values())
        k = KernelBuilder(self.p.kernel_name(f"attention_grad_{part}"), buffers, (*self.batch, -(-self.keys // BLOCK)))
        *batch_ids, block = k.program_ids
        zero = k.index(0)

        def partition(name: str, view: TensorViewType, tile_shape: tuple[int, ...]) -> SSAValue:
            return k.partition(names.index(name), view, (*lead, *tile_shape))

        def contiguous(value: SSAValue) -> TensorViewType:
            return TensorViewType(shape_of(value.type), value.type.element_type, contiguous_strides(shape_of(value.type)))

        at = [*batch_ids, block, zero]
        keys_tile = self.loaded(k, partition("k", self.operand_view(op.k), (columns, self.depth_tile)), at)
        q_t_part = partition("q", self.operand_view(op.q, transposed=True), (self.depth_tile, rows))
        lse_part = partition("lse", self.stats_transposed(), (1, rows))
        # Per sum: the operand it sums over (by name), its result, its tile width and factor.
        sums = {"dk": ("q", op.q, op.dk, self.depth_tile, self.scale), "dv": ("dout", op.dout, op.dv, self.width_tile, 1.0)}
        summed = {name: sums[name][1:] for name in outputs if name in sums}
        sum_parts = {name: partition(sums[name][0], self.operand_view(operand), (rows, width))
                     for name, (operand, _, width, _) in summed.items()}  # fmt: skip
        if "dk" in summed:
            values_tile = self.loaded(k, partition("v", self.operand_view(op.v), (columns, self.width_tile)), at)
            dout_t_part = partition("dout", self.operand_view(op.dout, transposed=True), (self.width_tile, rows))
            dots_part = partition("dots", self.stats_transposed(), (1, rows))
        key_origin = k.add(arith.MuliOp(block, k.index(columns))).results[0]
        first = self.first_query_block(k, key_origin)
        query_blocks = k.index(-(-self.queries // rows))

        def step(query_block: SSAValue, state: Sequence[SSAValue]) -> list[SSAValue]:
            query_origin = k.add(arith.MuliOp(query_block, k.index(rows))).results[0]
            row_at, column_at = [*batch_ids, query_block, zero], [*batch_ids, zero, query_block]
            s_t = self.scores(k, keys_tile, self.loaded(k, q_t_part, column_at), query_origin, key_origin, transposed=True)
            shape = s_t.type.get_shape()
            terms = {}
            if "dk" in summed:
                dout_t = self.loaded(k, dout_t_part, column_at)
                dp_t = k.add(tile.MmaOp(values_tile, dout_t, k.fill(0.0, shape, f32))).results[0]
                terms["dv"], terms["dk"] = self.gradient_terms(k, s_t, k.load(lse_part, column_at), dp_t,
                                                               k.load(dots_part, column_at))
            else:
                terms["dv"] = self.probabilities(k, s_t, k.load(lse_part, column_at))
            return [k.add(tile.MmaOp(terms[name], self.loaded(k, sum_parts[name], row_at), total)).results[0]
                    for name, total in zip(summed, state)]  # fmt: skip

        zeros = [k.fill(0.0, (*lead, columns, width), f32) for _, _, width, _ in summed.values()]
        totals = k.loop(query_blocks, zeros, step, start=first)
        for (name, (_, result, width, scale)), total in zip(summed.items(), totals):
            self.store(k, total, partition(name, contiguous(result), (columns, width)), at, result, scale)
        self.launch(k, buffers, part)

    def first_query_block(self, k: KernelBuilder, key_origin: SSAValue) -> SSAValue:
        """The first query block that sees the key block: 0, or (causal) the block of the
        query at the block's first key, as far as there are queries."""
        if not self.causal:
            return k.index(0)
        diagonal = k.add(arith.DivUIOp(key_origin, k.index(self.rows))).results[0]
        return k.add(arith.MinUIOp(diagonal, k.index(-(-self.queries // self.rows)))).results[0]

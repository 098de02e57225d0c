"""graph.attention in `lower-graph-to-tile`: one fused kernel with an online softmax (the
CPU), or three kernels (scores, softmax, values) where the cost model says
`fused_attention=false` (the GPU pipeline). With `flash_attention` (the GPU pipeline),
bf16/f16 attention with head sizes in FLASH_HEADS is the fused kernel marked
`tile.flash_attention` (k read transposed in place, no workspace), which lower-tile-to-gpu
replaces by its tensor-core flash kernel; the other attention takes the three kernels.
graph.attention_lse is the same kernels; its log-sum-exp is one more store of the fused
kernel, L = m + log l per query row, and beside the three kernels its expansion in graph
ops (transforms/expand_attention_grad.expanded_lse), op by op.

The fused kernel runs one instance per (batch..., block of QUERY_BLOCK queries). It walks
the keys in blocks of KEY_BLOCK, carrying per query row the running maximum m, the
running sum l of exp(s - m) and the unnormalized output acc:

    s    = scale · q kᵀ                  (QUERY_BLOCK x KEY_BLOCK, masked above the diagonal)
    m'   = max(m, rowmax(s))
    p    = exp(s - m')                   correction = exp(m - m')
    l'   = l · correction + rowsum(p)
    acc' = acc · correction + p v
    out  = acc / l                       (after the last key block)

so the scores never leave the kernel's stack tiles: no S x S buffer in the plan, one
read of q, k and v per query block. A causal kernel stops at the diagonal block. k is
transposed once into a workspace first (a copy kernel), so that each key block's kᵀ tile
is read row by row when the matmul packs it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import BFloat16Type, BoolAttr, DictionaryAttr, Float16Type, FloatAttr, TensorType, f32, f64, i1, i64
from xdsl.ir import Block, SSAValue

from strata.dialects import graph, tile
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import TILE_BYTES_BUDGET, TensorViewType, element_bytes
from strata.lowering.graph_to_tile.matmul import matmul_kernel, pretransposed
from strata.lowering.graph_to_tile.program import ProgramLowering
from strata.lowering.graph_to_tile.rows import softmax_kernel
from strata.lowering.scalar_rules import Emitter
from strata.lowering.tile_builder import KernelBuilder, contiguous_strides, next_power_of_two
from strata.transforms.expand_attention_grad import empty_attention, expanded_lse, flash_shaped
from strata.transforms.vjp_context import GraphEmitter

QUERY_BLOCK = 64
KEY_BLOCK = 128
STATS_BLOCK = 64
"""The flash backward's blocks of rows (graph_to_tile/attention_grad.py): its per-query
statistics L and D have their rows padded to whole blocks, which its tiles read past the
queries (masked)."""


Attention = graph.AttentionOp | graph.AttentionLseOp


@register_tile_lowering(graph.AttentionOp, graph.AttentionLseOp)
def lower_attention(op: Attention, p: ProgramLowering) -> None:
    if flash_taken(op, p):
        fused_kernel(op, p, flash=True)
    elif not p.cost.fused_attention or empty_attention(op.q.type, op.v.type) or not fused_tiles_fit(op):
        three_kernels(op, p)
        if isinstance(op, graph.AttentionLseOp):
            bind_expanded_lse(op, p)
    else:
        fused_kernel(op, p)


def bind_expanded_lse(op: graph.AttentionLseOp, p: ProgramLowering) -> None:
    """The log-sum-exp as its expansion in graph ops, each lowered by its own rule."""
    p.lower_expansion([op.lse], lambda add: [expanded_lse(GraphEmitter(add), op)])


def flash_taken(op: Attention, p: ProgramLowering) -> bool:
    """Whether the op becomes the kernel marked for the GPU's flash kernel."""
    return p.cost.flash_attention and not empty_attention(op.q.type, op.v.type) and flash_eligible(op, p)


def flash_eligible(op: Attention, p: ProgramLowering) -> bool:
    """bf16/f16 q, k and v with head sizes in FLASH_HEADS, read along contiguous rows of
    whole 16-byte chunks (other strides multiples of 8 elements)."""
    return flash_shaped(op.q.type, op.v.type) and rows_of_chunks(p, op.operands)


def rows_of_chunks(p: ProgramLowering, values: Sequence[SSAValue]) -> bool:
    """Whether each value lies in its buffer as contiguous rows of whole 16-byte chunks of
    16-bit elements (offset and other strides multiples of 8 elements): what the flash
    kernels' cp.async copies read."""
    views = [p.view_of(v) for v in values]
    return all(
        view.get_strides()[-1] == 1 and view.offset.data % 8 == 0 and all(s % 8 == 0 for s in view.get_strides()[:-1])
        for view in views
    )  # fmt: skip


def three_kernels(op: Attention, p: ProgramLowering) -> None:
    """softmax(scale · q kᵀ [causal]) v as three kernels; the scores and probabilities
    are workspace buffers, f32 for f16/bf16 q/k/v: only the result is rounded."""
    params = op.params()
    q, k = op.q.type, op.k.type
    wide = compute_element(q)
    scores_type = TensorType(wide, [*shape_of(q)[:-1], shape_of(k)[-2]])
    (scores,) = matmul_kernel(
        p, "attention_scores", p.operand(op.q), p.operand(op.k),
        scores_type, False, True, params["scale"],
    )  # fmt: skip
    p.mark_workspace(scores)
    probabilities = p.mark_workspace(
        softmax_kernel(p, "attention_softmax", scores, scores_type, -1, causal=params["causal"])
    )
    (out,) = matmul_kernel(
        p, "attention_values", (probabilities, scores_type, contiguous_strides(shape_of(scores_type))), p.operand(op.v),
        op.results[0].type, False, False, 1.0,
    )  # fmt: skip
    p.bind(op.results[0], out)


def compute_element(t: TensorType):
    """f16/bf16 attention computes in f32 and rounds only the result."""
    return f32 if isinstance(t.element_type, (Float16Type, BFloat16Type)) else t.element_type


def fused_tiles_fit(op: Attention) -> bool:
    """Whether every tile of the fused kernel (q, kᵀ, v, scores, output) fits the tile
    byte budget: large head sizes (f32 from 256, f64 from 128) take the three kernels."""
    *_, queries, depth = shape_of(op.q.type)
    keys, width = shape_of(op.v.type)[-2:]
    rows, columns = min(QUERY_BLOCK, next_power_of_two(queries)), min(KEY_BLOCK, next_power_of_two(keys))
    depth_tile, width_tile = next_power_of_two(depth), next_power_of_two(width)
    largest = max(rows * depth_tile, depth_tile * columns, columns * width_tile, rows * columns, rows * width_tile)
    return largest * element_bytes(compute_element(op.results[0].type)) <= TILE_BYTES_BUDGET


def fused_kernel(op: Attention, p: ProgramLowering, flash: bool = False) -> None:
    """The fused kernel (module docstring); `flash` marks it `tile.flash_attention` with
    its scale and causality, for lower-tile-to-gpu to replace by its tensor-core kernel.
    For graph.attention_lse it also stores each query row's L = m + log l (a fifth
    buffer, [batch..., Sq] f32)."""
    params = op.params()
    q_buffer, q_type, q_strides = p.operand(op.q)
    if flash:  # k itself, viewed transposed: the GPU kernel reads its rows
        k_buffer, k_type, k_strides = p.operand(op.k)
        *outer, keys_stride, depth_stride = k_strides
        k_type = TensorType(k_type.element_type, [*shape_of(k_type)[:-2], *reversed(shape_of(k_type)[-2:])])
        k_strides = (*outer, depth_stride, keys_stride)
    else:
        k_buffer, k_type, k_strides = pretransposed(p, "attention_transpose_b", *p.operand(op.k))  # [..., D, Sk]
    v_buffer, v_type, v_strides = p.operand(op.v)
    out_type = op.results[0].type
    *batch, queries, depth = shape_of(q_type)
    keys, width = shape_of(v_type)[-2:]
    lead = (1,) * len(batch)
    rows = min(QUERY_BLOCK, next_power_of_two(queries))
    depth_tile, width_tile = next_power_of_two(depth), next_power_of_two(width)
    # The flash mark's body (its meaning, past head 128 too) in half-width key blocks keeps
    # its tiles within the kernel's on-chip budget.
    columns = min(KEY_BLOCK if max(depth_tile, width_tile) <= 128 else KEY_BLOCK // 2, next_power_of_two(keys))
    element, compute = out_type.element_type, compute_element(out_type)

    out = p.new_buffer(out_type)
    buffers = [q_buffer, k_buffer, v_buffer, out]
    lse = None
    if isinstance(op, graph.AttentionLseOp):
        # Rows padded as the flash backward reads them, where only gradients read L.
        padded = flash and all(isinstance(use.operation, graph.AttentionGradOp) for use in op.lse.uses)
        lse_rows = padded_rows(queries) if padded else queries
        lse = p.new_buffer(TensorType(f32, [*batch, lse_rows]))
        buffers.append(lse)
    k = KernelBuilder(p.kernel_name("attention"), buffers, (*batch, -(-queries // rows)))
    *batch_ids, query_block = k.program_ids
    zero = k.index(0)

    def view(t: TensorType, strides: Sequence[int]) -> TensorViewType:
        return TensorViewType(shape_of(t), t.element_type, strides)

    q_part = k.partition(0, view(q_type, q_strides), (*lead, rows, depth_tile))
    k_part = k.partition(1, view(k_type, k_strides), (*lead, depth_tile, columns))
    v_part = k.partition(2, view(v_type, v_strides), (*lead, columns, width_tile))
    out_part = k.partition(3, view(out_type, contiguous_strides(shape_of(out_type))), (*lead, rows, width_tile))

    q_tile = k.extend(k.load(q_part, [*batch_ids, query_block, zero]), compute)
    row_shape, score_shape = (*lead, rows, 1), (*lead, rows, columns)
    carried = [
        k.fill(float("-inf"), row_shape, compute),
        k.fill(0.0, row_shape, compute),
        k.fill(0.0, (*lead, rows, width_tile), compute),
    ]

    def step(key_block: SSAValue, state: Sequence[SSAValue]) -> list[SSAValue]:
        largest, total, acc = state
        keys_t = k.extend(k.load(k_part, [*batch_ids, zero, key_block]), compute)
        values = k.extend(k.load(v_part, [*batch_ids, key_block, zero]), compute)
        products = k.add(tile.MmaOp(q_tile, keys_t, k.fill(0.0, score_shape, compute))).results[0]
        scores = scaled_and_masked(k, products, params["scale"], params["causal"], query_block, key_block, rows, columns)
        new_largest, new_total, probabilities, correction = online_softmax_step(k, scores, largest, total)
        rescaled = elementwise(k, [acc, k.broadcast(correction, acc.type.get_shape())], lambda e, a: e(arith.MulfOp(*a)))
        new_acc = k.add(tile.MmaOp(probabilities, values, rescaled)).results[0]
        return [new_largest, new_total, new_acc]

    largest, total, acc = k.loop(key_blocks_seen(k, query_block, rows, columns, keys, params["causal"]), carried, step)
    result = elementwise(k, [acc, k.broadcast(total, acc.type.get_shape())], lambda e, a: e(arith.DivfOp(*a)))
    if compute != element:
        result = k.map([result], element, lambda block, a: Emitter(block)(arith.TruncFOp(a[0], element)))
    k.store(result, out_part, [*batch_ids, query_block, zero])
    if lse is not None:
        lse_part = k.partition(4, TensorViewType((*batch, queries, 1), f32, (*contiguous_strides((*batch, lse_rows)), 1)),
                               row_shape)
        lse_tile = log_sum_exp(k, largest, total)
        if compute != f32:
            lse_tile = k.map([lse_tile], f32, lambda block, a: Emitter(block)(arith.TruncFOp(a[0], f32)))
        k.store(lse_tile, lse_part, [*batch_ids, query_block, zero])
    marks = {}
    if flash:
        marks["tile.flash_attention"] = DictionaryAttr(
            {"scale": FloatAttr(params["scale"], f64), "causal": BoolAttr(params["causal"], i1)}
        )
    p.launch(k, buffers, attributes=marks)
    p.bind(op.results[0], out)
    if lse is not None and padded:
        p.bind_view(op.lse, lse, contiguous_strides((*batch, lse_rows)), 0)
    elif lse is not None:
        p.bind(op.lse, lse)


def padded_rows(queries: int) -> int:
    """Rows of L and D per batch index: the queries, padded to whole STATS_BLOCKs."""
    return -(-queries // STATS_BLOCK) * STATS_BLOCK


def stats_view(q: TensorType) -> TensorViewType:
    """A per-query statistic (L, D) of attention with this q as the flash kernels read it:
    a column of queries per batch index, rows padded to whole blocks ([batch..., Sq, 1])."""
    *batch, queries, _ = shape_of(q)
    return TensorViewType((*batch, queries, 1), f32, contiguous_strides((*batch, padded_rows(queries), 1)))


def log_sum_exp(k: KernelBuilder, largest: SSAValue, total: SSAValue) -> SSAValue:
    """L = m + log l of the online softmax's row maxima m and sums l."""
    return elementwise(k, [largest, total], lambda e, a: e(arith.AddfOp(a[0], e(xmath.LogOp(a[1])))))


def online_softmax_step(k: KernelBuilder, scores: SSAValue, largest: SSAValue, total: SSAValue
                        ) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
    """One key block of the online softmax over the rows of a score tile: (the new row
    maxima m', the new row sums l' = l · exp(m - m') + rowsum(p), p = exp(s - m'), the
    correction exp(m - m') of what was summed before)."""
    row_axis = len(scores.type.get_shape()) - 1
    new_largest = elementwise(k, [largest, k.reduce(scores, row_axis, "max")], lambda e, a: e(arith.MaximumfOp(*a)))
    exp_difference = lambda e, a: e(xmath.ExpOp(e(arith.SubfOp(*a))))  # noqa: E731
    probabilities = elementwise(k, [scores, k.broadcast(new_largest, scores.type.get_shape())], exp_difference)
    correction = elementwise(k, [largest, new_largest], exp_difference)
    new_total = elementwise(
        k, [total, correction, k.reduce(probabilities, row_axis, "sum")],
        lambda e, a: e(arith.AddfOp(e(arith.MulfOp(a[0], a[1])), a[2])),
    )  # fmt: skip
    return new_largest, new_total, probabilities, correction


def key_blocks_seen(k: KernelBuilder, query_block: SSAValue, rows: int, columns: int, keys: int,
                    causal: bool) -> SSAValue | int:
    """The key blocks (of `columns` keys) query block `query_block` (of `rows` queries) sees:
    all, or (causal) those up to its last row's: 0 .. ((b + 1) · rows - 1) / columns."""
    blocks = -(-keys // columns)
    if not causal:
        return blocks
    last_row = k.add(arith.AddiOp(k.add(arith.MuliOp(query_block, k.index(rows))).results[0], k.index(rows - 1))).results[0]
    needed = k.add(arith.AddiOp(k.add(arith.DivUIOp(last_row, k.index(columns))).results[0], k.index(1))).results[0]
    return k.add(arith.MinUIOp(needed, k.index(blocks))).results[0]


def elementwise(k: KernelBuilder, inputs: Sequence[SSAValue], body) -> SSAValue:
    """The map `body(emitter, elements) -> element` over same-shaped tiles, of the first
    input's element type."""
    return k.map(inputs, inputs[0].type.element_type, lambda block, a: body(Emitter(block), a))


def scaled_and_masked(k: KernelBuilder, products: SSAValue, scale: float, causal: bool,
                      query_block: SSAValue, key_block: SSAValue, rows: int, columns: int) -> SSAValue:
    """scale · products, and -inf where the key index exceeds the query index (causal)."""
    shape = products.type.get_shape()
    element = products.type.element_type
    if not causal:
        return elementwise(k, [products], lambda e, a: e(arith.MulfOp(a[0], e.const(scale, element))))
    query_origin = index_to_i64(k, k.add(arith.MuliOp(query_block, k.index(rows))).results[0])
    key_origin = index_to_i64(k, k.add(arith.MuliOp(key_block, k.index(columns))).results[0])
    query_ids, key_ids = k.iota(len(shape) - 2, shape), k.iota(len(shape) - 1, shape)

    def body(block: Block, a: Sequence[SSAValue]) -> SSAValue:
        e = Emitter(block)
        scaled = e(arith.MulfOp(a[0], e.const(scale, element)))
        future = e(arith.CmpiOp(e(arith.AddiOp(a[2], key_origin)), e(arith.AddiOp(a[1], query_origin)), "sgt"))
        return e(arith.SelectOp(future, e.const(float("-inf"), element), scaled))

    return k.map([products, query_ids, key_ids], element, body)


def index_to_i64(k: KernelBuilder, value: SSAValue) -> SSAValue:
    return k.add(arith.IndexCastOp(value, i64)).results[0]

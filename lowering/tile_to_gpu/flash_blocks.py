"""The pieces the flash-attention kernels share (flash_attention.py, its backward's kernels
in flash_attention_grad.py and the wgmma forward in flash_attention_wgmma.py), none of
which depends on a kernel's part in attention: the streamed block loop and its copy
issuer, a fragments read from shared rows, score products and the products of a score
tile (p or ds) with a streamed operand, p as 16-bit fragments, the online-softmax row
update in base 2, the mask test and the stores of a lane's rows.

Every tile here is in mma.sync fragment layouts: a warp owns 16 rows, each lane two of
them (registers n with (n % 4) // 2 telling which) at the columns fragment_column says.
"""

from __future__ import annotations

from collections.abc import Callable
from math import log

from xdsl.dialects import arith, memref, scf
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import BFloat16Type, FloatAttr, IndexType, f32
from xdsl.ir import Block, Region, SSAValue

from strata.dialects.tile_types import TensorViewType
from strata.lowering.tile_to_gpu.fragments import MmaFragments, TensorCoreKind
from strata.lowering.tile_to_gpu.kernel import GpuKernelLowering
from strata.lowering.tile_to_gpu.ops import butterfly, i32_constant
from strata.lowering.tile_to_gpu.tensor_core_loop import (
    Operand,
    b16_b_fragments,
    issue_copies,
    k_major_fragments,
    stage_target,
)
from strata.lowering.tile_to_gpu.tensor_cores import multiply_fragments
from strata.lowering.tile_to_gpu.tiles import address


def a_fragment_pairs(terms: list[SSAValue], step: int) -> list[tuple[SSAValue, SSAValue]]:
    """The f32 pairs of a score tile in fragments (terms) that make the a fragment of keys
    16 step .. 16 step + 15: tiles 2 step and 2 step + 1, registers c0..c3 each."""
    return [(terms[8 * step + n], terms[8 * step + n + 1]) for n in (0, 2, 4, 6)]


def block_products(k: GpuKernelLowering, layout: MmaFragments, kind: TensorCoreKind, a: list[list[SSAValue]],
                   b: Operand, stage_row: SSAValue, lane: SSAValue) -> list[SSAValue]:
    """A warp's 16 rows (a fragments, one per 16 of depth) times the stage's rows of b
    (as many as `layout` has columns), transposed (b's rows as b fragments by plain
    ldmatrix): a [16 x n] tile in fragments."""
    sums = [constant(k, 0.0)] * (4 * layout.tiles_n)
    for depth, fragment in enumerate(a):
        b_fragments = k_major_fragments(k, b, layout.tiles_n, stage_row, lane, 16 * depth)
        multiply_fragments(k, layout, kind, [fragment], b_fragments, sums)
    return sums


def accumulate_products(k: GpuKernelLowering, layout: MmaFragments, kind: TensorCoreKind, p16: bool, terms: list[SSAValue],
                        b: Operand, stage_row: SSAValue, lane_row: SSAValue, lane_column: SSAValue,
                        sums: list[SSAValue]) -> list[SSAValue]:
    """sums + terms b: terms a [16 x n] score tile of this warp in fragments (p, or ds),
    b the stage's n rows of an operand read by ldmatrix.trans; the terms enter as
    p_fragments (two 16-bit fragments, one with p16)."""
    sums = list(sums)
    for step in range(len(terms) // 8):  # 16 rows of b (two 8-column score tiles) a step
        row = k.add(k.add(stage_row, lane_row), k.index(16 * step))
        b_fragments = b16_b_fragments(k, layout, b, row, k.index(0), lane_column)
        for fragment in p_fragments(k, kind.element, p16, a_fragment_pairs(terms, step)):
            multiply_fragments(k, layout, kind, [fragment], b_fragments, sums)
    return sums


def streamed_loop(k: GpuKernelLowering, lower: SSAValue, upper: SSAValue, state: list[SSAValue],
                  issue: Callable[[SSAValue, SSAValue], None],
                  body: Callable[[SSAValue, SSAValue, list[SSAValue]], list[SSAValue]], rows: int) -> list[SSAValue]:
    """scf.for over streamed blocks (of `rows` rows) lower .. upper carrying `state`: wait
    for the block's copies, issue the next block's (into the stage the block before it used,
    which every thread is done with after the barrier), then body(block, first shared row
    of its stage, state)."""

    def streamed(block: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
        k.inline_ptx("cp.async.wait_group.0", [])
        k.barriers.barrier()
        following = k.add(block, k.index(1))
        issue(following, k.emit(arith.RemUIOp(following, k.index(2))))
        stage_row = k.mul(k.emit(arith.RemUIOp(block, k.index(2))), k.index(rows))
        return body(block, stage_row, carried)

    return block_loop(k, lower, upper, state, streamed)


def block_loop(k: GpuKernelLowering, lower: SSAValue, upper: SSAValue, state: list[SSAValue],
               body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
    """scf.for over blocks lower .. upper carrying `state` through body(block, state)."""
    loop_body = Block(arg_types=[IndexType(), *(v.type for v in state)])
    outer, k.cursor = k.cursor, loop_body
    k.emit(scf.YieldOp(*body(loop_body.args[0], list(loop_body.args[1:]))))
    k.cursor = outer
    loop = scf.ForOp(lower, upper, k.index(1), state, Region(loop_body))
    k.emit(loop)
    return list(loop.results)


def online_softmax_rows(k: GpuKernelLowering, t: list[SSAValue], largest: list[SSAValue], totals: list[SSAValue],
                        factor: SSAValue | None = None
                        ) -> tuple[list[SSAValue], list[SSAValue], list[SSAValue], list[SSAValue]]:
    """One block of the online softmax (base 2) over this lane's two rows of a score tile t
    in fragments (a row's values are spread over the 4 lanes of a quad): (new row maxima,
    new per-lane row sums, p = 2^(t - m'), the corrections 2^(m - m') of what was summed).
    Given a positive `factor`, t and the maxima are in units of 1 / factor: p = 2^(t factor
    - m' factor), one fma each."""
    nothing, minus_infinity = constant(k, 0.0), constant(k, float("-inf"))
    new_largest, new_totals, probabilities, corrections = [], [], list(t), []
    for row in range(2):
        mine = [n for n in range(len(t)) if (n % 4) // 2 == row]
        row_max = butterfly(k, fold(k, [t[n] for n in mine], arith.MaximumfOp), 4, lambda a, b: k.emit(arith.MaximumfOp(a, b)))
        new = k.emit(arith.MaximumfOp(largest[row], row_max))
        # A row with every key masked so far keeps m = -inf: exponents against 0 instead of NaN.
        finite = k.emit(arith.SelectOp(k.emit(arith.CmpfOp(new, minus_infinity, "oeq")), nothing, new))
        difference = k.emit(arith.SubfOp(largest[row], finite))
        if factor is None:
            for n in mine:
                probabilities[n] = exp2(k, k.emit(arith.SubfOp(t[n], finite)))
        else:
            offset = k.emit(arith.NegfOp(k.emit(arith.MulfOp(finite, factor))))
            for n in mine:
                probabilities[n] = exp2(k, k.emit(xmath.FmaOp(t[n], factor, offset)))
            difference = k.emit(arith.MulfOp(difference, factor))
        correction = exp2(k, difference)
        row_sum = fold(k, [probabilities[n] for n in mine], arith.AddfOp)
        new_totals.append(k.emit(arith.AddfOp(k.emit(arith.MulfOp(totals[row], correction)), row_sum)))
        new_largest.append(new)
        corrections.append(correction)
    return new_largest, new_totals, probabilities, corrections


def exp2(k: GpuKernelLowering, value: SSAValue) -> SSAValue:
    """2^value by `ex2.approx.ftz.f32`: the flash kernels' exponents are at most 0 (up to a
    rounding) and their results are summed beside a 1 (the row's maximum), so flushing
    results below 2^-126 to zero changes a row by less than f32 resolves; it saves ptxas's
    subnormal scaling (a compare and two predicated multiplies per exponent)."""
    return k.inline_ptx("ex2.approx.ftz.f32", [value], 1, f32)[0]


def copy_issuer(k: GpuKernelLowering, streams: list[Operand], blocks: SSAValue) -> Callable[[SSAValue, SSAValue], None]:
    """issue(block, stage): the cp.async copies of each stream's tile of `block` (those
    below `blocks`) into its shared `stage`, committed as one group."""

    def issue(block: SSAValue, stage: SSAValue) -> None:
        def copies() -> None:
            for stream in streams:
                issue_copies(k, stream, block, stage_target(k, stream, stage))

        k.guarded(k.emit(arith.CmpiOp(block, blocks, "ult")), copies)
        k.inline_ptx("cp.async.commit_group", [])

    return issue


def a_fragments(k: GpuKernelLowering, target: Callable[[SSAValue, SSAValue], SSAValue], row: SSAValue,
                lane_column: SSAValue, depth: int) -> list[list[SSAValue]]:
    """A warp's 16 rows of a shared operand (lane l addresses row `row` = warp row + l % 16 at
    column `lane_column`, 0 or 8; target(row, column) is the shared address) as mma.sync a
    fragments (the warpgroup mma's a fragments too), one per 16 columns of `depth`."""
    return [
        k.inline_ptx("ldmatrix.sync.aligned.m8n8.x4.shared.b16", [target(row, k.add(lane_column, k.index(16 * step)))], 4)
        for step in range(depth // 16)
    ]  # fmt: skip


def padded_target(k: GpuKernelLowering, shared: SSAValue) -> Callable[[SSAValue, SSAValue], SSAValue]:
    """Shared addresses of (row, column) of a tile in rows padded as its buffer's shape says."""
    return lambda row, column: address(k, shared, [row, column])


def p_fragments(k: GpuKernelLowering, element, p16: bool, pairs: list[tuple[SSAValue, SSAValue]]) -> list[list[SSAValue]]:
    """f32 pairs of p as a fragments of 16-bit pairs. By default two fragments, high + low:
    p = high + low to 16 (bf16) or 22 (f16) bits, so that p v rounds like f32 p, as the
    reference computes it (one fragment would round p to 8 or 11 bits). With `p16`, the
    high fragment alone: p rounded to the inputs' type, as FlashAttention and PyTorch's
    SDPA do, for half the p v products."""
    bf16 = isinstance(element, BFloat16Type)
    pack = "cvt.rn.bf16x2.f32" if bf16 else "cvt.rn.f16x2.f32"
    high, low = [], []
    for first, second in pairs:
        word = k.inline_ptx(pack, [second, first], 1)[0]  # the first (lower k) element in the low half
        high.append(word)
        if p16:
            continue
        if bf16:
            sixteen, upper = i32_constant(k, 16), i32_constant(k, -65536)
            rounded = [k.emit(arith.BitcastOp(k.emit(arith.ShLIOp(word, sixteen)), f32)),
                       k.emit(arith.BitcastOp(k.emit(arith.AndIOp(word, upper)), f32))]  # fmt: skip
        else:
            rounded = k.inline_ptx("unpack.f16x2.f32", [word], 2, f32)
        residuals = [k.emit(arith.SubfOp(value, back)) for value, back in zip((first, second), rounded)]
        low.append(k.inline_ptx(pack, [residuals[1], residuals[0]], 1)[0])
    return [high] if p16 else [high, low]


def constant(k: GpuKernelLowering, value: float) -> SSAValue:
    return k.emit(arith.ConstantOp(FloatAttr(value, f32)))


def fold(k: GpuKernelLowering, values: list[SSAValue], op) -> SSAValue:
    total = values[0]
    for value in values[1:]:
        total = k.emit(op(total, value))
    return total


def outside(k: GpuKernelLowering, query: SSAValue, key: SSAValue, keys: int, causal: bool,
            queries: int | None = None) -> SSAValue:
    """Whether the (query, key) score is masked: a key past the keys, (given `queries`) a
    query past the queries, or (causal) a key past the query."""
    beyond = k.emit(arith.CmpiOp(key, k.index(keys), "uge"))
    if queries is not None:
        beyond = k.emit(arith.OrIOp(beyond, k.emit(arith.CmpiOp(query, k.index(queries), "uge"))))
    if causal:
        beyond = k.emit(arith.OrIOp(beyond, k.emit(arith.CmpiOp(key, query, "ugt"))))
    return beyond


def fragment_column(k: GpuKernelLowering, thread_in_group: SSAValue, n: int) -> SSAValue:
    """The column (within its tile row) of register n of this lane's accumulator fragments."""
    tile_column, register = divmod(n, 4)
    return k.add(k.mul(thread_in_group, k.index(2)), k.index(8 * tile_column + register % 2))


def store_rows(k: GpuKernelLowering, buffer_view: tuple[SSAValue, TensorViewType], sums: list[SSAValue],
               factors: list[SSAValue], rows: list[SSAValue], thread_in_group: SSAValue, batch_ids: list[SSAValue],
               extent: int) -> None:
    """sums (this lane's fragments of a [64 x width] tile) times each row's factor, rounded
    to the buffer's type, stored into the lane's two rows where they are below `extent`."""
    buffer, view = buffer_view
    origin = [*batch_ids, k.index(0), k.index(0)]
    for row in range(2):
        def store(row=row) -> None:
            for n, value in enumerate(sums):
                if (n % 4) // 2 != row:
                    continue
                rounded = k.emit(arith.TruncFOp(k.emit(arith.MulfOp(value, factors[row])), view.element_type))
                indices = [*[k.index(0)] * len(batch_ids), rows[row], fragment_column(k, thread_in_group, n)]
                k.emit(memref.StoreOp.get(rounded, buffer, [k.element_offset(view, origin, indices)]))

        k.guarded(k.emit(arith.CmpiOp(rows[row], k.index(extent), "ult")), store)


def log_sum_exp(k: GpuKernelLowering, largest: SSAValue, total: SSAValue) -> SSAValue:
    """A row's natural log-sum-exp L = (m + log2 l) · ln 2 from its base-2 online softmax:
    m the largest t = scale · log2(e) · s, l the row's sum of 2^(t - m) (over its quad)."""
    return k.emit(arith.MulfOp(k.emit(arith.AddfOp(largest, k.emit(xmath.Log2Op(total)))), constant(k, log(2.0))))


def store_row_stats(k: GpuKernelLowering, buffer_view: tuple[SSAValue, TensorViewType], values: list[SSAValue],
                    rows: list[SSAValue], thread_in_group: SSAValue, batch_ids: list[SSAValue], extent: int) -> None:
    """A value per row of this lane's two (the same in the four lanes of its quad) stored by
    the quad's first lane into a [batch..., rows, 1] buffer, where the row is below `extent`."""
    buffer, view = buffer_view
    origin = [*batch_ids, k.index(0), k.index(0)]
    first_of_quad = k.emit(arith.CmpiOp(thread_in_group, k.index(0), "eq"))
    for row, value in zip(rows, values):
        inside = k.emit(arith.AndIOp(first_of_quad, k.emit(arith.CmpiOp(row, k.index(extent), "ult"))))
        at = k.element_offset(view, origin, [*[k.index(0)] * len(batch_ids), row, k.index(0)])
        k.guarded(inside, lambda value=value, at=at: k.emit(memref.StoreOp.get(value, buffer, [at])))

"""graph.attention on tensor cores: the kernel lower-graph-to-tile marks `tile.flash_attention`
(its fused online-softmax kernel over bf16/f16 q, k, v; see graph_to_tile/attention.py) is
replaced here by a flash-attention kernel; the marked kernel's body is its meaning, which
this kernel computes with the same online softmax, in f32, rounding only the output.

One block of 4 warps per (batch..., 64 queries); warp w owns query rows 16w .. 16w + 15 and
keeps everything about them in registers, in mma.sync fragment layouts:

- q (64 x D) is copied to shared memory once (cp.async) and read into a fragments (ldmatrix);
- key blocks of 64 stream through two shared stages of k (64 x D) and v (64 x Dv), the
  copies of block j + 1 in flight while block j is used (past head 128: blocks of 32 keys,
  16 at head 256 for the stages to fit, key_rows; and q's fragments read from shared
  memory again at each block rather than held, beside o's 128 registers at head 256);
- t = scale · log2(e) · q kᵀ: mma.sync with k's rows as b fragments (plain ldmatrix on k
  rows: k is b transposed, tensor_core_loop.k_major_fragments); in the key blocks that need
  it, keys past the end and (causal) past the query masked to -inf;
- the running row maximum m (quad shuffles: a row's values are spread over 4 lanes), the
  row sums l (per lane; summed over the quad at the end), o = o · 2^(m - m') + p v, with
  p = 2^(t - m') converted to 16-bit pairs that are exactly the a fragments of the next
  mma (an s accumulator tile's layout is an a fragment's), v's b fragments by ldmatrix.trans;
- out = o / l, rounded to the output type, stored by the lanes that hold it.

The key blocks run in two loops: first those wholly inside the keys and (causal) left of
the block's first query, unmasked, then the rest, masked. A causal block stops at the
diagonal key block, and causal blocks are launched heaviest first. No scores leave the
registers: the plan has no S x S workspace.

The pieces of this kernel that do not depend on its part in attention (the streamed block
loop, the copy issuer, a fragments from shared rows, score and p/ds products, the
online-softmax row update, the mask, the row stores) are in flash_blocks.py: the
backward's kernels (flash_attention_grad.py) are built from the same ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import e, log2, prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, DenseArrayBase, DictionaryAttr, Float16Type, FloatAttr, IntegerAttr, f32
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.dialects.tile_types import TensorViewType
from strata.lowering.tile_to_gpu.flash_blocks import (
    a_fragments,
    accumulate_products,
    block_products,
    constant,
    copy_issuer,
    fragment_column,
    log_sum_exp,
    online_softmax_rows,
    outside,
    padded_target,
    store_row_stats,
    store_rows,
    streamed_loop,
)
from strata.lowering.tile_to_gpu.fragments import MmaFragments, TensorCoreKind, ldmatrix_lanes
from strata.lowering.tile_to_gpu.kernel import DYNAMIC_SHARED_LIMIT, GpuKernelLowering, argument_views
from strata.lowering.tile_to_gpu.ops import butterfly
from strata.lowering.tile_to_gpu.tensor_core_loop import Operand, aligned_rows, issue_copies, stage_target
from strata.lowering.tile_to_loops.kernel import Partition
from strata.support.errors import StrataError

QUERIES = 64
KEYS = 64
THREADS = 128
CHUNK = 8
"""16-bit elements per 16-byte copy; rows of shared tiles are padded by one chunk."""
MARK = "tile.flash_attention"
LOG2_E = log2(e)
MAX_HEAD = 256
HELD_HEAD = 128
"""The largest q/k head whose q fragments stay in registers across the key blocks."""


def key_rows(depth: int, width: int) -> int:
    """Keys a block: 64 up to head 128; past it 32 (a [16 x 64] score tile beside head 144's
    o and q spilled), or 16 where q and two stages of 32 keys of k and v, in rows padded by
    a chunk, would pass the shared memory a block may have (head 256)."""
    def shared_bytes(rows: int) -> int:
        return 2 * (QUERIES * (depth + CHUNK) + 2 * rows * (depth + CHUNK + width + CHUNK))

    largest = KEYS if max(depth, width) <= HELD_HEAD else KEYS // 2
    return next(rows for rows in (largest, largest // 2) if shared_bytes(rows) <= DYNAMIC_SHARED_LIMIT)


@dataclass(frozen=True)
class Flash:
    """What the kernel needs of the marked kernel: its buffers, views and parameters."""

    q: tuple[SSAValue, TensorViewType]
    k: tuple[SSAValue, TensorViewType]
    v: tuple[SSAValue, TensorViewType]
    out: tuple[SSAValue, TensorViewType]
    scale: float
    causal: bool
    p16: bool
    """p rounded to the inputs' 16-bit type before p v (lower-tile-to-gpu{attention_p16=true})."""
    lse: tuple[SSAValue, TensorViewType] | None = None
    """Where each query row's log-sum-exp goes ([batch..., Sq, 1] f32; graph.attention_lse)."""

    @staticmethod
    def of(lowering: FlashAttentionLowering) -> Flash:
        kernel = lowering.kernel
        mark = kernel.attributes[MARK]
        views = argument_views(kernel)
        args = kernel.body.block.args
        if not (
            isinstance(mark, DictionaryAttr) and isinstance(mark.data.get("scale"), FloatAttr)
            and isinstance(mark.data.get("causal"), IntegerAttr) and len(args) in (4, 5) and all(a in views for a in args)
            and fits(kernel, [views[a] for a in args])
        ):  # fmt: skip
            raise StrataError(
                f"lower-tile-to-gpu: @{kernel.sym_name.data}: {MARK} needs {{scale: f64, causal: bool}} on a kernel "
                "of four viewed buffers of one 16-bit type (q, k transposed, v, out) with heads of 16 to 256, and "
                f"optionally an f32 [batch..., Sq, 1] log-sum-exp, and a grid of {QUERIES}-query blocks, as "
                "lower-graph-to-tile writes it"
            )
        q, k_transposed, v, out, *lse = args
        return Flash(
            (lowering.values[q], views[q]), (lowering.values[k_transposed], key_rows_view(views[k_transposed])),
            (lowering.values[v], views[v]), (lowering.values[out], views[out]), mark.data["scale"].value.data, bool(mark.data["causal"].value.data),
            lowering.p16, (lowering.values[lse[0]], views[lse[0]]) if lse else None,
        )  # fmt: skip


def key_rows_view(keys_transposed: TensorViewType) -> TensorViewType:
    """k as rows of keys ([batch..., keys, depth]) from the kernel's kᵀ view: its last two axes swapped."""
    *outer, depth_stride, keys_stride = keys_transposed.get_strides()
    *batch, depth, keys = keys_transposed.get_shape()
    return TensorViewType((*batch, keys, depth), keys_transposed.element_type, (*outer, keys_stride, depth_stride),
                          keys_transposed.offset.data)


def fits(kernel: tile.KernelOp, views: list[TensorViewType]) -> bool:
    """Whether the views (q, k transposed, v, out, and the log-sum-exp if given) and the grid
    are what this kernel computes: one 16-bit type, q/k heads of 16..256 in steps of 16, v
    heads likewise, keys and batch axes that agree, an f32 [batch..., Sq, 1] log-sum-exp,
    one grid point per (batch..., 64 queries)."""
    views, lse = views[:4], views[4:]
    q, k_transposed, v, out = (view.get_shape() for view in views)
    element = views[0].element_type
    *batch, queries, depth = q
    keys, width = v[-2:]
    return (
        isinstance(element, BFloat16Type | Float16Type) and all(view.element_type == element for view in views)
        and all(16 <= size <= MAX_HEAD and size % 16 == 0 for size in (depth, width))
        and tuple(k_transposed) == (*batch, depth, keys) and tuple(v) == (*batch, keys, width)
        and tuple(out) == (*batch, queries, width)
        and all(view.element_type == f32 and tuple(view.get_shape()) == (*batch, queries, 1) for view in lse)
        and tuple(kernel.grid_shape()) == (*batch, -(-queries // QUERIES))
    )  # fmt: skip


class FlashAttentionLowering(GpuKernelLowering):
    """A kernel marked `tile.flash_attention`, lowered as the flash kernel of the module
    docstring instead of op by op."""

    query_rows = QUERIES
    """Queries per block: the launch grid has one block per query_rows of them."""
    block_threads = THREADS

    def __init__(self, kernel: tile.KernelOp, *options, p16: bool = False):
        super().__init__(kernel, self.block_threads, *options)
        self.p16 = p16

    def launch_grid(self) -> tuple[int, ...]:
        """(batch..., query blocks of query_rows) from the marked kernel's grid of 64-query tiles."""
        *batch, tiles = self.kernel.grid_shape()
        return (*batch, -(-tiles // (self.query_rows // QUERIES)))

    def carry_kernel_attributes(self, function) -> None:
        super().carry_kernel_attributes(function)
        function.attributes["tile.grid"] = DenseArrayBase.from_list(self.kernel.grid.elt_type, list(self.launch_grid()))

    def bind_program_ids(self, flat: SSAValue) -> None:
        """Reads the mark (the kernel's buffers are bound by now), then the program ids:
        causal blocks run heaviest first, query blocks from the last (which sees every key
        block) to the first, batch fastest, so that the blocks left for the end of the
        launch are short ones."""
        self.flash = Flash.of(self)
        if not self.flash.causal:
            self.program_ids = self.delinearize(flat, self.launch_grid(), wrap=True)
            return
        *batch, query_blocks = self.launch_grid()
        batch_count = self.index(prod(batch))
        last = self.index(query_blocks - 1)
        query_block = self.emit(arith.SubiOp(last, self.emit(arith.DivUIOp(flat, batch_count))))
        batch_ids = self.delinearize(self.emit(arith.RemUIOp(flat, batch_count)), batch, wrap=True)
        self.program_ids = [*batch_ids, query_block]

    def lower_body(self) -> None:
        flash_kernel(self, self.flash)


def operand(k: GpuKernelLowering, buffer_view: tuple[SSAValue, TensorViewType], rows: int, indices,
            columns: int | None = None) -> Operand:
    """The tiles of `rows` rows of a buffer's view at `indices`, `columns` wide: by default its
    rows' length; wider, the chunks past the rows are copied as zeros (issue_copies)."""
    buffer, view = buffer_view
    shape = (*(1,) * (len(view.get_shape()) - 2), rows, columns or view.get_shape()[-1])
    partition = Partition(buffer, view, shape)
    if not aligned_rows(partition, CHUNK):
        raise StrataError(f"lower-tile-to-gpu: @{k.kernel.sym_name.data}: flash attention needs rows of 16-byte chunks")
    return Operand(partition, list(indices), CHUNK, CHUNK)


def flash_kernel(k: GpuKernelLowering, flash: Flash) -> None:
    *batch_ids, query_block = k.program_ids
    element = flash.q[1].element_type
    kind = TensorCoreKind(element, 16, 2)
    queries, depth = flash.q[1].get_shape()[-2:]
    keys, width = flash.v[1].get_shape()[-2:]
    zero = k.index(0)
    block_keys = key_rows(depth, width)
    q = operand(k, flash.q, QUERIES, [*batch_ids, query_block, zero])
    keys_operand = operand(k, flash.k, block_keys, [*batch_ids, None, zero])
    values = operand(k, flash.v, block_keys, [*batch_ids, None, zero])
    q.shared = k.shared_alloca([QUERIES, depth + CHUNK], element, dynamic=True)
    keys_operand.shared = k.shared_alloca([2 * block_keys, depth + CHUNK], element, dynamic=True)
    values.shared = k.shared_alloca([2 * block_keys, width + CHUNK], element, dynamic=True)

    blocks = k.index(-(-keys // block_keys))
    if flash.causal:  # query block b sees the key blocks up to its own last query
        per_query_block = k.index(QUERIES // block_keys)
        first_on_diagonal = k.mul(query_block, per_query_block)
        blocks = k.emit(arith.MinUIOp(k.add(first_on_diagonal, per_query_block), blocks))

    issue = copy_issuer(k, [keys_operand, values], blocks)
    issue_copies(k, q, zero, stage_target(k, q, zero))
    k.inline_ptx("cp.async.commit_group", [])
    issue(zero, zero)
    k.inline_ptx("cp.async.wait_group.1", [])
    k.barriers.barrier()

    scores = MmaFragments((QUERIES, block_keys), 4, 1)
    output = MmaFragments((QUERIES, width), 4, 1)
    warp_row, _, group, thread_in_group = scores.lane_origin(k)
    lane, lane_row, lane_column = ldmatrix_lanes(k, CHUNK)
    def read_q() -> list[list[SSAValue]]:
        return a_fragments(k, padded_target(k, q.shared), k.add(warp_row, lane_row), lane_column, depth)

    held = read_q() if depth <= HELD_HEAD else None
    first_row = k.add(k.mul(query_block, k.index(QUERIES)), k.add(warp_row, group))
    rows = [first_row, k.add(first_row, k.index(8))]

    minus_infinity, nothing = constant(k, float("-inf")), constant(k, 0.0)
    state = [minus_infinity, minus_infinity, nothing, nothing] + [nothing] * (4 * output.tiles_n)
    # Key blocks wholly inside the keys and (causal) wholly left of the block's first query
    # need no mask: they run in a loop of their own, the rest (the last partial block, the
    # diagonal) in a masked one.
    unmasked = k.index(keys // block_keys)
    if flash.causal:
        unmasked = k.emit(arith.MinUIOp(first_on_diagonal, unmasked))
    context = KeyBlocks(flash, kind, keys_operand, values, scores, output, read_q if held is None else (lambda: held), rows,
                        lane, lane_row, lane_column, thread_in_group, issue, block_keys)
    state = key_block_loop(k, context, zero, unmasked, state, masked=False)
    state = key_block_loop(k, context, unmasked, blocks, state, masked=True)
    totals = [butterfly(k, total, 4, lambda a, b: k.emit(arith.AddfOp(a, b))) for total in state[2:4]]
    store_output(k, flash, state[4:], state[:2], totals, rows, thread_in_group, batch_ids, queries)


@dataclass
class KeyBlocks:
    """What every key block's code uses: the kernel's operands, fragment layouts, this
    lane's q fragments and rows, and how to issue the copies of a block."""

    flash: Flash
    kind: TensorCoreKind
    keys: Operand
    values: Operand
    scores: MmaFragments
    output: MmaFragments
    q_fragments: Callable[[], list[list[SSAValue]]]
    """This warp's q as a fragments: held in registers, or read again where a block uses them."""
    rows: list[SSAValue]
    lane: SSAValue
    lane_row: SSAValue
    lane_column: SSAValue
    thread_in_group: SSAValue
    issue: Callable[[SSAValue, SSAValue], None]
    """Issues the copies of key block (block, stage) and commits them."""
    block_keys: int


def key_block_loop(k: GpuKernelLowering, c: KeyBlocks, lower: SSAValue, upper: SSAValue, state: list[SSAValue],
                   masked: bool) -> list[SSAValue]:
    """The streamed loop over key blocks lower .. upper carrying (row maxima, row sums, o):
    s = q kᵀ, the online softmax, o += p v."""

    def step(block: SSAValue, stage_row: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
        s = block_products(k, c.scores, c.kind, c.q_fragments(), c.keys, stage_row, c.lane)
        new_largest, new_totals, probabilities, corrections = softmax_block(
            k, c.flash, s, block, c.rows, c.thread_in_group, carried[:2], carried[2:4], masked, c.block_keys
        )  # fmt: skip
        acc = rescaled(k, carried[4:], corrections)
        acc = accumulate_products(k, c.output, c.kind, c.flash.p16, probabilities, c.values, stage_row, c.lane_row,
                                  c.lane_column, acc)
        return [*new_largest, *new_totals, *acc]

    return streamed_loop(k, lower, upper, state, c.issue, step, c.block_keys)


def softmax_block(k: GpuKernelLowering, flash: Flash, s: list[SSAValue], block: SSAValue,
                  rows: list[SSAValue], thread_in_group: SSAValue, largest: list[SSAValue], totals: list[SSAValue],
                  masked: bool, block_keys: int = KEYS
                  ) -> tuple[list[SSAValue], list[SSAValue], list[SSAValue], list[SSAValue]]:
    """The online softmax of key block `block`'s scores s in fragments (online_softmax_rows),
    in base-2 units: exp(scale (s - m)) = 2^(c s - c m), c the attention's scale times
    log2(e). With a positive scale the maxima are of the raw scores and each exponent is one
    fma (s · c - m · c); otherwise of t = s · c. `masked`: keys past the end and (causal)
    past the query are -inf (blocks of `block_keys` keys)."""
    scale = constant(k, flash.scale * LOG2_E)
    raw = flash.scale > 0
    t = s if raw else [k.emit(arith.MulfOp(value, scale)) for value in s]
    if masked:
        t = masked_scores(k, flash, t, block, rows, thread_in_group, block_keys)
    return online_softmax_rows(k, t, largest, totals, scale if raw else None)


def rescaled(k: GpuKernelLowering, acc: list[SSAValue], corrections: list[SSAValue]) -> list[SSAValue]:
    """A [rows x width] accumulator in fragments times each of this lane's two rows' correction."""
    return [k.emit(arith.MulfOp(value, corrections[(n % 4) // 2])) for n, value in enumerate(acc)]


def masked_scores(k: GpuKernelLowering, flash: Flash, t: list[SSAValue], block: SSAValue, rows: list[SSAValue],
                  thread_in_group: SSAValue, block_keys: int = KEYS) -> list[SSAValue]:
    """The scores t of key block `block` (`block_keys` keys), -inf for keys past the end and
    (causal) past the query row."""
    minus_infinity = constant(k, float("-inf"))
    keys = flash.v[1].get_shape()[-2]
    first_key = k.mul(block, k.index(block_keys))
    return [
        k.emit(arith.SelectOp(outside(k, rows[(n % 4) // 2], k.add(first_key, fragment_column(k, thread_in_group, n)),
                                      keys, flash.causal), minus_infinity, value))
        for n, value in enumerate(t)
    ]  # fmt: skip


def store_output(k: GpuKernelLowering, flash: Flash, acc: list[SSAValue], largest: list[SSAValue],
                 totals: list[SSAValue], rows: list[SSAValue], thread_in_group: SSAValue, batch_ids: list[SSAValue],
                 queries: int) -> None:
    """out = acc / l, rounded to the output type, stored where the query row exists; and
    (graph.attention_lse) each row's log-sum-exp, from its maximum m (of the raw scores
    where the scale is positive: softmax_block) and sum l."""
    inverse = [k.emit(arith.DivfOp(constant(k, 1.0), total)) for total in totals]
    store_rows(k, flash.out, acc, inverse, rows, thread_in_group, batch_ids, queries)
    if flash.lse is None:
        return
    if flash.scale > 0:
        scale = constant(k, flash.scale * LOG2_E)
        largest = [k.emit(arith.MulfOp(value, scale)) for value in largest]
    lse = [log_sum_exp(k, value, total) for value, total in zip(largest, totals)]
    store_row_stats(k, flash.lse, lse, rows, thread_in_group, batch_ids, queries)

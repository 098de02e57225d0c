"""graph.attention_grad on tensor cores: the three kernels lower-graph-to-tile marks
`tile.flash_attention_grad` (part = stats, dq, dkv; graph_to_tile/attention_grad.py, whose
bodies are their meaning) are replaced here by flash-attention backward kernels, in the
mma.sync fragment layouts of the forward kernel (flash_attention.py): one block of 4 warps
per 64 rows, warp w owning rows 16w .. 16w + 15, the operands of the other side streamed
in blocks of 64 rows (32 where a head passes 64: stream_rows) through two shared stages
(cp.async), every [64 x 64] (or [64 x 32]) score tile kept in registers. Scores are in
base 2 (t = scale · log2(e) · q kᵀ, p = 2^(t - L · log2 e)).

- stats (per 64 queries): the forward's online softmax over the key blocks without p v:
  L = (m + log2 l) · ln 2, natural as the tile body writes it; D = rowsum(dout ∘ out),
  each warp's rows read a row at a time by consecutive lanes; dots: D alone, where the
  forward's flash kernel stored L (graph.attention_lse);
- dq (per 64 queries, over key blocks as the forward, heaviest first when causal): q and
  dout are a fragments held in registers; s = q kᵀ and dp = dout vᵀ take k's and v's rows
  as b fragments (plain ldmatrix), ds = p (dp - D) becomes the a fragments of
  dq += ds k, k's rows as b by ldmatrix.trans;
- dkv (per 64 keys, over the query blocks from the diagonal when causal, heaviest first):
  everything transposed, k and v the resident a fragments: sᵀ = k qᵀ, dpᵀ = v doutᵀ, pᵀ
  and dsᵀ from L and D of each query column, dv += pᵀ dout and dk += dsᵀ q.

p and ds enter their products as one 16-bit fragment with `attention_p16`, else as high +
low fragments (flash_blocks.p_fragments). Blocks wholly inside the sequences and off
the diagonal run unmasked; only the diagonal and the partial last blocks are masked.

Heads up to 64 keep the resident operands' a fragments in registers for the whole loop;
larger ones (up to 128) read them from shared memory again at each block (held_fragments):
dkv's two [16 x 128] sums are 128 registers a lane already. On sm_90 (warpgroup_mma) the
stats, dq and dkv kernels of heads of 64 and 128 run on the warpgroup mma instead
(flash_attention_grad_wgmma.py, built on this module's Kernel), as do heads past 128,
whose dkv comes as a dk and a dv kernel (parts only the warpgroup lowering builds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import gcd, prod

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import BFloat16Type, DictionaryAttr, Float16Type, FloatAttr, IntegerAttr, StringAttr
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.dialects.tile_types import TensorViewType
from strata.lowering.graph_to_tile.attention_grad import MARK
from strata.lowering.tile_to_gpu.flash_attention import CHUNK, LOG2_E, THREADS, operand
from strata.lowering.tile_to_gpu.flash_blocks import (
    a_fragments,
    accumulate_products,
    block_products,
    constant,
    copy_issuer,
    exp2,
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
from strata.lowering.tile_to_gpu.kernel import GpuKernelLowering
from strata.lowering.tile_to_gpu.threads import WARP
from strata.lowering.tile_to_gpu.ops import butterfly
from strata.lowering.tile_to_gpu.tensor_core_loop import Operand, issue_copies, stage_target
from strata.support.errors import StrataError
from strata.transforms.expand_attention_grad import DEEPEST_FLASH_GRAD_HEAD

BLOCK = 64
"""Rows of a kernel's own (resident) tiles: queries in stats and dq, keys in dkv."""
MAX_HEAD = 128
"""The largest head of these kernels (sm_90's warpgroup kernels take deeper ones; the dots
part, D alone a row at a time, takes every head a backward kernel does)."""
HELD_HEAD = 64
"""The largest head whose resident a fragments stay in registers across the blocks."""
HEAVIEST_LAST = {"stats": True, "dq": True, "dkv": False, "dk": False, "dv": False}
"""Causal parts whose blocks differ in work: whether the last block (query blocks: it sees
every key block) or the first (key blocks: every query block sees it) is the heaviest."""
ARGUMENTS = {"stats": ("q", "k", "out", "dout", "lse", "dots"), "dots": ("out", "dout", "dots"),
             "dq": ("q", "k", "v", "dout", "lse", "dots", "dq"), "dkv": ("q", "k", "v", "dout", "lse", "dots", "dk", "dv"),
             "dk": ("q", "k", "v", "dout", "lse", "dots", "dk"), "dv": ("q", "k", "dout", "lse", "dv")}  # fmt: skip
"""The marked kernels' arguments, as lower-graph-to-tile launches them (dk and dv: heads past
128, the warpgroup kernels only)."""


@dataclass(frozen=True)
class FlashGrad:
    """What a kernel needs of its marked kernel: its part, buffers (with their row views)
    and the attention's parameters."""

    part: str
    buffers: dict[str, tuple[SSAValue, TensorViewType]]
    scale: float
    causal: bool
    p16: bool

    @property
    def queries(self) -> int:
        return self.buffers["dout"][1].get_shape()[-2]

    @property
    def keys(self) -> int:
        return self.buffers["k"][1].get_shape()[-2]

    @staticmethod
    def of(lowering: FlashAttentionGradLowering) -> FlashGrad:
        kernel = lowering.kernel
        mark = kernel.attributes[MARK]
        marked = marked_arguments(kernel)
        if not (
            marked is not None
            and isinstance(mark.data.get("scale"), FloatAttr) and isinstance(mark.data.get("causal"), IntegerAttr)
        ):  # fmt: skip
            raise StrataError(
                f"lower-tile-to-gpu: @{kernel.sym_name.data}: {MARK} needs {{part: stats|dots|dq|dkv|dk|dv, scale: f64, causal: "
                "bool} on a kernel of viewed buffers as lower-graph-to-tile writes it"
            )
        part, arguments = marked
        buffers = {name: (lowering.values[arg], view) for name, (arg, view) in arguments.items()}
        grad = FlashGrad(part, buffers, mark.data["scale"].value.data, bool(mark.data["causal"].value.data), lowering.p16)
        deepest = DEEPEST_FLASH_GRAD_HEAD if part == "dots" else lowering.deepest_head
        if part not in lowering.parts or not grad.fits(kernel.grid_shape(), deepest):
            raise StrataError(
                f"lower-tile-to-gpu: @{kernel.sym_name.data}: {MARK} takes one 16-bit type with heads of 16 to "
                f"{deepest} (multiples of 16) and a grid of {BLOCK}-row blocks, part {'|'.join(lowering.parts)} "
                f"(got {part}{'; dk and dv are the warpgroup mma kernels' if part in ('dk', 'dv') else ''})"
            )
        return grad

    def fits(self, grid: Sequence[int], deepest: int) -> bool:
        tensors = [view for name, (_, view) in self.buffers.items() if name not in ("lse", "dots")]
        element = tensors[0].element_type
        heads = [self.buffers[name][1].get_shape()[-1] for name in ("q", "k", "dout") if name in self.buffers]
        *batch, _ = self.buffers["dout"][1].get_shape()[:-1]
        rows = self.keys if self.part in ("dkv", "dk", "dv") else self.queries
        return (
            isinstance(element, BFloat16Type | Float16Type) and all(view.element_type == element for view in tensors)
            and all(16 <= head <= deepest and head % 16 == 0 for head in heads)
            and tuple(grid) == (*batch, -(-rows // BLOCK))
        )  # fmt: skip


def marked_arguments(kernel: tile.KernelOp) -> tuple[str, dict[str, tuple[SSAValue, TensorViewType]]] | None:
    """(the part, each argument by its name in ARGUMENTS with its view as rows, row_view) of
    a kernel marked as lower-graph-to-tile writes it, else None."""
    mark = kernel.attributes[MARK]
    part = mark.data.get("part") if isinstance(mark, DictionaryAttr) else None
    names = ARGUMENTS.get(part.data) if isinstance(part, StringAttr) else None
    args = kernel.body.block.args
    views: dict[SSAValue, TensorViewType] = {}
    for op in kernel.body.block.ops:
        if isinstance(op, tile.MakeTensorViewOp):
            views.setdefault(op.buffer, op.result.type)
    if names is None or len(args) != len(names) or not all(a in views for a in args):
        return None
    # L and D ([batch..., Sq, 1]) are as they are; a transposed k of one key is [..., head, 1].
    return part.data, {name: (a, views[a] if name in ("lse", "dots") else row_view(views[a])) for name, a in zip(names, args)}


def stream_rows(head: int) -> int:
    """Rows of a streamed block: 64 up to head 64, 32 past it. One rule for heads 80 to 128:
    at 128 two resident [64 x head] tiles and two stages of two streamed 64-row ones would
    take 104 KiB, past the 96 KiB a block may have (32-row ones: 68 KiB), and 32-row blocks
    halve the score and dp tiles' registers beside the larger sums."""
    return BLOCK if head <= HELD_HEAD else BLOCK // 2


def row_view(view: TensorViewType) -> TensorViewType:
    """A view as rows along its last axis: itself, or (a transposed view, last stride not 1)
    its last two axes swapped back."""
    *outer, rows, columns = view.get_strides()
    if columns == 1:
        return view
    *batch, height, width = view.get_shape()
    return TensorViewType((*batch, width, height), view.element_type, (*outer, columns, rows), view.offset.data)


class FlashAttentionGradLowering(GpuKernelLowering):
    """A kernel marked `tile.flash_attention_grad`, lowered as the module docstring's kernel
    of its part instead of op by op."""

    deepest_head = MAX_HEAD
    """The largest head of the stats, dq and dkv kernels this lowering builds."""
    parts = ("stats", "dots", "dq", "dkv")
    """The parts it builds."""

    def __init__(self, kernel: tile.KernelOp, *options, p16: bool = False):
        super().__init__(kernel, THREADS, *options)
        self.p16 = p16

    def bind_program_ids(self, flat: SSAValue) -> None:
        """Reads the mark; causal blocks run heaviest first, batch fastest, so that the blocks
        left for the end of the launch are short ones: stats and dq from the last query block
        (the most key blocks), dkv from the first key block (the most query blocks)."""
        self.grad = FlashGrad.of(self)
        *batch, blocks = self.kernel.grid_shape()
        if self.grad.causal and self.grad.part in HEAVIEST_LAST:
            count = self.index(prod(batch))
            rank = self.emit(arith.DivUIOp(flat, count))
            block = self.emit(arith.SubiOp(self.index(blocks - 1), rank)) if HEAVIEST_LAST[self.grad.part] else rank
            batch_ids = self.delinearize(self.emit(arith.RemUIOp(flat, count)), batch, wrap=True) if batch else []
            self.program_ids = [*batch_ids, block]
        else:
            self.program_ids = self.delinearize(flat, self.kernel.grid_shape(), wrap=True)

    def lower_body(self) -> None:
        Kernel(self, self.grad).emit()


class Kernel:
    """The code of one part; its lanes' layout (warp rows, fragment lanes) is shared."""

    def __init__(self, k: GpuKernelLowering, grad: FlashGrad):
        self.k, self.grad = k, grad
        *self.batch_ids, self.block = k.program_ids
        self.element = grad.buffers["dout"][1].element_type
        self.kind = TensorCoreKind(self.element, 16, 2)
        self.head = max(grad.buffers[name][1].get_shape()[-1] for name in ("q", "dout") if name in grad.buffers)
        self.stream = self.streamed_rows()
        self.per_block = BLOCK // self.stream
        """Streamed blocks per resident block's rows."""
        self.scores = MmaFragments((BLOCK, self.stream), 4, 1)
        self.warp_row, _, self.group, self.thread_in_group = self.scores.lane_origin(k)
        self.lane, self.lane_row, self.lane_column = ldmatrix_lanes(k, CHUNK)
        first = k.add(k.mul(self.block, k.index(BLOCK)), k.add(self.warp_row, self.group))
        self.rows = [first, k.add(first, k.index(8))]
        """This lane's two rows of its warp's 16 (queries; keys in dkv)."""

    def emit(self) -> None:
        {"stats": self.stats, "dots": self.row_dots, "dq": self.dq, "dkv": self.dkv}[self.grad.part]()

    def streamed_rows(self) -> int:
        """Rows of a streamed block (stream_rows)."""
        return stream_rows(self.head)

    # Operands and streaming.

    def operand(self, name: str, at_block: bool) -> Operand:
        """The tiles of a buffer: this block's 64 rows, or the loop's streamed blocks, each
        tile_columns() wide."""
        k = self.k
        buffer, view = self.grad.buffers[name]
        indices = [*self.batch_ids, self.block if at_block else None, k.index(0)]
        return operand(k, (buffer, view), BLOCK if at_block else self.stream, indices, self.tile_columns())

    def tile_columns(self) -> int | None:
        """The columns of a tile in shared memory (None: its buffer's rows' length)."""
        return None

    def resident(self, operands: Sequence[Operand]) -> None:
        k = self.k
        for resident in operands:
            resident.shared = k.shared_alloca([BLOCK, resident.columns + CHUNK], self.element, dynamic=True)
            issue_copies(k, resident, k.index(0), stage_target(k, resident, k.index(0)))
        k.inline_ptx("cp.async.commit_group", [])

    def streamed(self, operands: Sequence[Operand], blocks: SSAValue) -> Callable[[SSAValue, SSAValue], None]:
        """Two shared stages for each operand; returns issue(block, stage)."""
        for stream in operands:
            stream.shared = self.k.shared_alloca([2 * self.stream, stream.columns + CHUNK], self.element, dynamic=True)
        return copy_issuer(self.k, list(operands), blocks)

    def loop(self, lower: SSAValue, upper: SSAValue, state: list[SSAValue], issue: Callable[[SSAValue, SSAValue], None],
             body: Callable[[SSAValue, SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
        return streamed_loop(self.k, lower, upper, state, issue, body, self.stream)

    def a_fragments(self, shared: SSAValue, depth: int) -> list[list[SSAValue]]:
        """This warp's 16 rows of a resident operand as a fragments, one per 16 columns."""
        return a_fragments(self.k, padded_target(self.k, shared), self.k.add(self.warp_row, self.lane_row), self.lane_column,
                           depth)

    def held_fragments(self, resident: Operand) -> Callable[[], list[list[SSAValue]]]:
        """The a fragments of a resident operand where a block's code uses them: read once,
        here, and held in registers (heads up to HELD_HEAD), or read again at each use."""
        if self.head <= HELD_HEAD:
            fragments = self.a_fragments(resident.shared, resident.columns)
            return lambda: fragments
        return lambda: self.a_fragments(resident.shared, resident.columns)

    def products(self, a: list[list[SSAValue]], b: Operand, stage_row: SSAValue) -> list[SSAValue]:
        """a (this warp's 16 rows) times the stage's 64 rows of b, transposed: [16 x 64]."""
        return block_products(self.k, self.scores, self.kind, a, b, stage_row, self.lane)

    def accumulate(self, layout: MmaFragments, terms: list[SSAValue], b: Operand, stage_row: SSAValue,
                   sums: list[SSAValue]) -> list[SSAValue]:
        """sums + terms (a [16 x stream] score tile in fragments) times the stage's rows of b."""
        return accumulate_products(self.k, layout, self.kind, self.grad.p16, terms, b, stage_row, self.lane_row,
                                   self.lane_column, sums)

    def column(self, n: int) -> SSAValue:
        """The score column (within the block) of register n of this lane."""
        return fragment_column(self.k, self.thread_in_group, n)

    def outside(self, query: SSAValue, key: SSAValue) -> SSAValue:
        """Whether a (query, key) score is masked: past the keys or queries, or (causal) a key past the query."""
        return outside(self.k, query, key, self.grad.keys, self.grad.causal, self.grad.queries)

    def stat_at(self, name: str, query: SSAValue) -> tuple[SSAValue, list[SSAValue]]:
        """(the buffer, [offset]) of L or D of a query of this batch index."""
        k = self.k
        buffer, view = self.grad.buffers[name]
        *outer, query_stride, _ = view.get_strides()
        offset = k.add(k.mul(query, k.index(query_stride)), k.index(view.offset.data))
        for index, stride in zip(self.batch_ids, outer):
            offset = k.add(offset, k.mul(index, k.index(stride)))
        return buffer, [offset]

    def stat(self, name: str, query: SSAValue) -> SSAValue:
        """L or D of a query of this batch index (rows are padded to whole blocks: a row past
        the queries reads whatever is there, and is masked)."""
        return self.k.emit(memref.LoadOp.get(*self.stat_at(name, query)))

    def store(self, name: str, sums: list[SSAValue], factor: float, extent: int) -> None:
        """sums · factor, rounded, into this lane's rows of the output (rows < extent)."""
        scale = constant(self.k, factor)
        store_rows(self.k, self.grad.buffers[name], sums, [scale, scale], self.rows, self.thread_in_group,
                   self.batch_ids, extent)

    def blocks(self, size: int) -> SSAValue:
        """Streamed blocks over `size` rows."""
        return self.k.index(-(-size // self.stream))

    def ranges(self, first: SSAValue, diagonal_end: SSAValue | None, total: int) -> list[tuple[SSAValue, SSAValue, bool]]:
        """(lower, upper, masked) ranges of streamed blocks first .. blocks(total): a masked
        diagonal block first (causal dkv), unmasked whole blocks, then the masked rest."""
        k = self.k
        whole = k.index(total // self.stream)
        ranges = []
        if diagonal_end is not None:
            ranges.append((first, diagonal_end, True))
            first = diagonal_end
        middle_end = k.emit(arith.MaxUIOp(first, whole))
        return [*ranges, (first, middle_end, False), (middle_end, self.blocks(total), True)]

    def key_blocks(self) -> tuple[SSAValue, SSAValue]:
        """(the key blocks this query block sees: all, or causal up to the diagonal; how many
        of them run unmasked: wholly inside the keys and, causal, left of the diagonal)."""
        k, grad = self.k, self.grad
        seen, unmasked = self.blocks(grad.keys), k.index(grad.keys // self.stream)
        if grad.causal:
            first_on_diagonal = k.mul(self.block, k.index(self.per_block))
            seen = k.emit(arith.MinUIOp(k.add(first_on_diagonal, k.index(self.per_block)), seen))
            unmasked = k.emit(arith.MinUIOp(first_on_diagonal, unmasked))
        return seen, unmasked

    def query_scores(self, s: list[SSAValue], block: SSAValue, masked: bool) -> list[SSAValue]:
        """t = scale · log2(e) · s of this warp's queries and key block `block` (s = q kᵀ), -inf where masked."""
        k = self.k
        scale = constant(k, self.grad.scale * LOG2_E)
        t = [k.emit(arith.MulfOp(value, scale)) for value in s]
        if not masked:
            return t
        first_key, minus_infinity = k.mul(block, k.index(self.stream)), constant(k, float("-inf"))
        return [k.emit(arith.SelectOp(self.outside(self.rows[(n % 4) // 2], k.add(first_key, self.column(n))),
                                      minus_infinity, value)) for n, value in enumerate(t)]  # fmt: skip

    # The parts.

    def stats(self) -> None:
        k = self.k
        q, keys = self.operand("q", True), self.operand("k", False)
        self.resident([q])
        key_blocks, unmasked = self.key_blocks()
        issue = self.streamed([keys], key_blocks)
        issue(k.index(0), k.index(0))
        k.inline_ptx("cp.async.wait_group.1", [])
        k.barriers.barrier()
        q_fragments = self.held_fragments(q)
        minus_infinity, nothing = constant(k, float("-inf")), constant(k, 0.0)

        def body(masked: bool):
            def step(block: SSAValue, stage_row: SSAValue, state: list[SSAValue]) -> list[SSAValue]:
                t = self.query_scores(self.products(q_fragments(), keys, stage_row), block, masked)
                largest, totals, _, _ = online_softmax_rows(k, t, state[:2], state[2:])
                return [*largest, *totals]

            return step

        state = [minus_infinity, minus_infinity, nothing, nothing]
        state = self.loop(k.index(0), unmasked, state, issue, body(False))
        self.store_stats(self.loop(unmasked, key_blocks, state, issue, body(True)))

    def store_stats(self, state: list[SSAValue]) -> None:
        """L of this lane's rows from their online softmax's state (two row maxima, two
        per-lane sums), then D of the block's rows."""
        k = self.k
        totals = [butterfly(k, total, 4, lambda a, b: k.emit(arith.AddfOp(a, b))) for total in state[2:]]
        lse = [log_sum_exp(k, largest, total) for largest, total in zip(state[:2], totals)]
        store_row_stats(k, self.grad.buffers["lse"], lse, self.rows, self.thread_in_group, self.batch_ids,
                        self.grad.queries)
        self.row_dots()

    def store_stat(self, name: str, query: SSAValue, value: SSAValue) -> None:
        self.k.emit(memref.StoreOp.get(value, *self.stat_at(name, query)))

    def row_dots(self) -> None:
        """D = rowsum(dout ∘ out) of each warp's 16 rows, coalesced: a row at a time in groups
        of gcd(32, width) lanes (consecutive lanes on consecutive columns, each group's lanes
        covering the row in whole steps), folded over the group by shuffles."""
        k, grad = self.k, self.grad
        width = grad.buffers["out"][1].get_shape()[-1]
        lanes = gcd(WARP, width)
        rows_per_step = WARP // lanes
        group_row = k.emit(arith.DivUIOp(self.lane, k.index(lanes)))
        column = k.emit(arith.RemUIOp(self.lane, k.index(lanes)))
        first = k.add(k.mul(self.block, k.index(BLOCK)), self.warp_row)
        origin = [*self.batch_ids, k.index(0), k.index(0)]
        zeros = [k.index(0)] * len(self.batch_ids)
        leader = k.emit(arith.CmpiOp(column, k.index(0), "eq"))
        for step in range(16 // rows_per_step):
            row = k.add(k.add(first, k.index(step * rows_per_step)), group_row)
            inside = k.emit(arith.CmpiOp(row, k.index(grad.queries), "ult"))
            clamped = k.emit(arith.SelectOp(inside, row, k.index(0)))
            total = constant(k, 0.0)
            for part in range(width // lanes):
                at = k.add(column, k.index(part * lanes))
                values = []
                for name in ("out", "dout"):
                    buffer, view = grad.buffers[name]
                    loaded = k.emit(memref.LoadOp.get(buffer, [k.element_offset(view, origin, [*zeros, clamped, at])]))
                    values.append(k.emit(arith.ExtFOp(loaded, total.type)))
                total = k.emit(arith.AddfOp(total, k.emit(arith.MulfOp(*values))))
            total = butterfly(k, total, lanes, lambda a, b: k.emit(arith.AddfOp(a, b)))
            k.guarded(k.emit(arith.AndIOp(inside, leader)), lambda row=row, total=total: self.store_stat("dots", row, total))

    def row_stats(self) -> tuple[list[SSAValue], list[SSAValue]]:
        """(L · log2 e, D) of this lane's two query rows."""
        log2e = constant(self.k, LOG2_E)
        lse = [self.k.emit(arith.MulfOp(self.stat("lse", row), log2e)) for row in self.rows]
        return lse, [self.stat("dots", row) for row in self.rows]

    def query_terms(self, s: list[SSAValue], dp: list[SSAValue], block: SSAValue, masked: bool, lse: list[SSAValue],
                    dots: list[SSAValue]) -> tuple[list[SSAValue], list[SSAValue]]:
        """(p, ds) of this warp's queries and key block `block` from s = q kᵀ and dp = dout vᵀ
        (row_stats: L and D of the lane's rows)."""
        t = self.query_scores(s, block, masked)
        return self.probabilities(t, dp, lambda n: lse[(n % 4) // 2], lambda n: dots[(n % 4) // 2])

    def key_terms(self, s: list[SSAValue], dp: list[SSAValue] | None, block: SSAValue,
                  masked: bool) -> tuple[list[SSAValue], list[SSAValue]]:
        """(pᵀ, dsᵀ) of this warp's keys and query block `block` from s = k qᵀ and dp = v doutᵀ,
        with L and D of each query column; without dp, (pᵀ, []) from L alone."""
        k = self.k
        log2e, scale = constant(k, LOG2_E), constant(k, self.grad.scale * LOG2_E)
        t = [k.emit(arith.MulfOp(value, scale)) for value in s]
        first_query = k.mul(block, k.index(self.stream))
        columns = [k.add(first_query, self.column(n)) for n in range(len(t))]
        if masked:
            minus_infinity = constant(k, float("-inf"))
            t = [k.emit(arith.SelectOp(self.outside(columns[n], self.rows[(n % 4) // 2]), minus_infinity, value))
                 for n, value in enumerate(t)]  # fmt: skip
            # Query columns past the last read the last one's L and D (rows past the
            # queries hold nothing): finite, and masked anyway.
            last_query = k.index(self.grad.queries - 1)
            columns = [k.emit(arith.MinUIOp(column, last_query)) for column in columns]
        lse = {n: k.emit(arith.MulfOp(self.stat("lse", columns[n]), log2e)) for n in range(len(t)) if n % 4 < 2}
        dots = {n: self.stat("dots", columns[n]) for n in range(len(t)) if n % 4 < 2 and dp is not None}
        return self.probabilities(t, dp, lambda n: lse[n - n % 4 + n % 2], lambda n: dots[n - n % 4 + n % 2])

    def probabilities(self, t: list[SSAValue], dp: list[SSAValue] | None, lse: Callable[[int], SSAValue],
                      dots: Callable[[int], SSAValue]) -> tuple[list[SSAValue], list[SSAValue]]:
        """(p, ds) = (2^(t - L log2 e), p (dp - D)) with L and D of register n's row or column
        (no dp: ds is [])."""
        k = self.k
        p = [exp2(k, k.emit(arith.SubfOp(value, lse(n)))) for n, value in enumerate(t)]
        if dp is None:
            return p, []
        ds = [k.emit(arith.MulfOp(p[n], k.emit(arith.SubfOp(dp[n], dots(n))))) for n in range(len(t))]
        return p, ds

    def dq(self) -> None:
        k, grad = self.k, self.grad
        q, dout = self.operand("q", True), self.operand("dout", True)
        keys, values = self.operand("k", False), self.operand("v", False)
        self.resident([q, dout])
        key_blocks, unmasked = self.key_blocks()
        issue = self.streamed([keys, values], key_blocks)
        issue(k.index(0), k.index(0))
        k.inline_ptx("cp.async.wait_group.1", [])
        k.barriers.barrier()
        q_fragments, dout_fragments = self.held_fragments(q), self.held_fragments(dout)
        lse, dots = self.row_stats()
        layout = MmaFragments((BLOCK, q.columns), 4, 1)

        def body(masked: bool):
            def step(block: SSAValue, stage_row: SSAValue, sums: list[SSAValue]) -> list[SSAValue]:
                s = self.products(q_fragments(), keys, stage_row)
                ds = self.query_terms(s, self.products(dout_fragments(), values, stage_row), block, masked, lse, dots)[1]
                return self.accumulate(layout, ds, keys, stage_row, sums)

            return step

        sums = [constant(k, 0.0)] * (4 * layout.tiles_n)
        sums = self.loop(k.index(0), unmasked, sums, issue, body(False))
        sums = self.loop(unmasked, key_blocks, sums, issue, body(True))
        self.store("dq", sums, grad.scale, grad.queries)

    def dkv(self) -> None:
        k, grad = self.k, self.grad
        keys, values = self.operand("k", True), self.operand("v", True)
        q, dout = self.operand("q", False), self.operand("dout", False)
        self.resident([keys, values])
        query_blocks = self.blocks(grad.queries)
        first = k.index(0)
        if grad.causal:  # the first query block that sees this block's first key
            first = k.emit(arith.MinUIOp(k.mul(self.block, k.index(self.per_block)), query_blocks))
        issue = self.streamed([q, dout], query_blocks)
        issue(first, k.emit(arith.RemUIOp(first, k.index(2))))
        k.inline_ptx("cp.async.wait_group.1", [])
        k.barriers.barrier()
        key_fragments, value_fragments = self.held_fragments(keys), self.held_fragments(values)
        dk_layout, dv_layout = MmaFragments((BLOCK, keys.columns), 4, 1), MmaFragments((BLOCK, values.columns), 4, 1)

        def body(masked: bool):
            def step(block: SSAValue, stage_row: SSAValue, sums: list[SSAValue]) -> list[SSAValue]:
                s = self.products(key_fragments(), q, stage_row)
                p, ds = self.key_terms(s, self.products(value_fragments(), dout, stage_row), block, masked)
                dk_sums, dv_sums = sums[:4 * dk_layout.tiles_n], sums[4 * dk_layout.tiles_n:]
                dv_sums = self.accumulate(dv_layout, p, dout, stage_row, dv_sums)
                dk_sums = self.accumulate(dk_layout, ds, q, stage_row, dk_sums)
                return [*dk_sums, *dv_sums]

            return step

        sums = [constant(k, 0.0)] * (4 * (dk_layout.tiles_n + dv_layout.tiles_n))
        diagonal_end = k.emit(arith.MinUIOp(k.add(first, k.index(self.per_block)), query_blocks)) if grad.causal else None
        for lower, upper, masked in self.ranges(first, diagonal_end, grad.queries):
            sums = self.loop(lower, upper, sums, issue, body(masked))
        self.store("dk", sums[:4 * dk_layout.tiles_n], grad.scale, grad.keys)
        self.store("dv", sums[4 * dk_layout.tiles_n:], 1.0, grad.keys)

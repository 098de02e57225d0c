"""Softmax over long rows kept in shared memory: the kernel lower-graph-to-tile marks
`tile.resident_softmax` (a softmax or log_softmax whose rows are longer than one column
tile but fit shared memory; graph_to_tile/rows.py) is replaced here by a kernel that reads
each row from global memory once. The marked kernel's body is its meaning; this kernel
computes the same passes (an online maximum and sum, then the write pass) in f32.

The generic row kernel walks a long row in column tiles twice, and each column tile of
its first pass ends in two block-wide reductions: 8192 x 50257 bf16 logits ran at 0.58 of
torch.softmax, latency-bound, its second read of each row partly missing L2. Here one
block of 512 threads takes one row, in 16-byte chunks (a row of an odd length starts
anywhere in one, so the row is widened to the chunks that cover it):

- the chunks go to dynamic shared memory by cp.async, all in flight at once, chunk i by
  thread i mod 512; the buffer's last chunk, where the buffer ends inside it, element by
  element (no read past an allocation); first barrier;
- thread 0 writes -inf around the row (what the chunks hold of the neighbouring rows), so
  the passes read whole chunks unmasked; second barrier;
- each thread folds its chunks (t, t + 512, ...) online: a chunk's maximum, then each of
  its elements' exp against the new maximum; the warps combine (m, l) by butterflies and
  the warps' pairs meet in shared memory behind the third barrier;
- the write pass reads the chunks again and stores exp(x - m) / l (or x - m - log l),
  rounded to the row's type, as 16-byte stores where a chunk lies inside the row, element
  by element at the row's two ends.

exp is 2^(d · log2 e) by ex2.approx.ftz, d = x - m <= 0 (as the flash kernels compute it).
A row of up to 112 KiB leaves room for two blocks per multiprocessor (sm_90: 227 KiB), so
one block's copies fly while the other computes. The kernel reads its row wholly before
writing any of it: it runs in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith, memref
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import BFloat16Type, DictionaryAttr, Float16Type, FloatAttr, IntegerAttr, f32, i1, i32
from xdsl.ir import SSAValue

from strata.dialects import tile
from strata.dialects.tile_types import TensorViewType, element_bytes
from strata.lowering.graph_to_tile.rows import RESIDENT_MARK
from strata.lowering.tile_to_gpu.flash_attention import LOG2_E
from strata.lowering.tile_to_gpu.flash_blocks import block_loop, constant, exp2
from strata.lowering.tile_to_gpu.kernel import WARPGROUP_SHARED_LIMIT, GpuKernelLowering, argument_views
from strata.lowering.tile_to_gpu.ops import butterfly
from strata.lowering.tile_to_gpu.threads import WARP
from strata.support.errors import StrataError
from strata.lowering.tile_to_gpu.tiles import address

THREADS = 512
CHUNK_BYTES = 16
CHUNKS_AT_ONCE = 2
"""Chunks a thread takes per loop step of a pass."""


@dataclass(frozen=True)
class ResidentRows:
    """What the marked kernel computes: the rows of `x` (a buffer and its [kept..., length]
    view, contiguous along the row) into the same positions of `y`, log_softmax if `log`."""

    x: tuple[SSAValue, TensorViewType]
    y: tuple[SSAValue, TensorViewType]
    log: bool

    @property
    def length(self) -> int:
        return self.x[1].get_shape()[-1]

    @property
    def element(self):
        return self.x[1].element_type

    @property
    def per_chunk(self) -> int:
        return CHUNK_BYTES // element_bytes(self.element)

    @property
    def chunks(self) -> int:
        """16-byte chunks covering a row wherever in a chunk it starts."""
        return -(-(self.per_chunk - 1 + self.length) // self.per_chunk)

    @staticmethod
    def of(lowering: GpuKernelLowering) -> ResidentRows:
        kernel = lowering.kernel
        mark = kernel.attributes[RESIDENT_MARK]
        views = argument_views(kernel)
        args = kernel.body.block.args
        if not (
            isinstance(mark, DictionaryAttr) and isinstance(mark.data.get("log"), IntegerAttr)
            and len(args) == 2 and all(a in views for a in args) and fits(kernel, [views[a] for a in args])
        ):  # fmt: skip
            raise StrataError(
                f"lower-tile-to-gpu: @{kernel.sym_name.data}: {RESIDENT_MARK} needs {{log: bool}} on a kernel of two "
                "viewed buffers of one float type (x, y) with equal [rows..., length] views contiguous along the row, "
                "rows that fit shared memory, and one grid point per row, as lower-graph-to-tile writes it"
            )
        x, y = args
        return ResidentRows((lowering.values[x], views[x]), (lowering.values[y], views[y]), bool(mark.data["log"].value.data))


def fits(kernel: tile.KernelOp, views: list[TensorViewType]) -> bool:
    """Whether the two views and the grid are this kernel's: one f32/f16/bf16 type, the same
    shape, strides and offset (a row's chunks of x and of y start alike), unit strides along
    the row, a row of at most row_bytes_limit, a grid of the rows."""
    x, y = views
    element = x.element_type
    *kept, length = x.get_shape()
    return (
        (element == f32 or isinstance(element, BFloat16Type | Float16Type)) and y.element_type == element
        and (tuple(y.get_shape()), tuple(y.get_strides()), y.offset) == (tuple(x.get_shape()), tuple(x.get_strides()), x.offset)
        and x.get_strides()[-1] == 1
        and 0 < length * element_bytes(element) <= row_bytes_limit()
        and tuple(kernel.grid_shape()) == (tuple(kept) or (1,))
    )  # fmt: skip


def row_bytes_limit() -> int:
    """The longest row (in bytes) whose chunks, the warps' statistics and a spare chunk fit
    the shared memory of one sm_90 block."""
    return WARPGROUP_SHARED_LIMIT - 2 * CHUNK_BYTES - 2 * (THREADS // WARP) * 4


class ResidentSoftmaxLowering(GpuKernelLowering):
    """A kernel marked `tile.resident_softmax`, lowered as the kernel of the module docstring."""

    def __init__(self, kernel: tile.KernelOp, *options):
        super().__init__(kernel, THREADS, *options)

    def shared_limit(self) -> int:
        return WARPGROUP_SHARED_LIMIT

    def bind_program_ids(self, flat: SSAValue) -> None:
        self.rows = ResidentRows.of(self)
        super().bind_program_ids(flat)

    def lower_body(self) -> None:
        resident_softmax(self, self.rows)


def resident_softmax(k: GpuKernelLowering, r: ResidentRows) -> None:
    x_view = r.x[1]
    start = k.element_offset(x_view, [*k.program_ids, k.index(0)], [k.index(0)] * len(x_view.get_shape()))
    c = RowChunks(r, k.emit(arith.RemUIOp(start, k.index(r.per_chunk))), k.emit(arith.DivUIOp(start, k.index(r.per_chunk))),
                  k.shared_alloca([r.chunks * r.per_chunk], r.element, dynamic=True))
    copy_row(k, c)
    k.inline_ptx("cp.async.commit_group", [])
    k.inline_ptx("cp.async.wait_group.0", [])
    k.barriers.barrier()
    k.guarded(k.emit(arith.CmpiOp(k.thread, k.index(0), "eq")), lambda: pad_row(k, c))
    k.barriers.barrier()
    largest, total = row_statistics(k, c)
    write_row(k, c, largest, total)


@dataclass(frozen=True)
class RowChunks:
    """A row in shared memory: `row` holds the 16-byte chunks of the buffer from
    `first_chunk` on; the row's first element is element `shift` of the first; around the
    row, -inf (pad_row)."""

    rows: ResidentRows
    shift: SSAValue
    first_chunk: SSAValue
    row: SSAValue

    def values(self, k: GpuKernelLowering, chunk: SSAValue) -> list[SSAValue]:
        """The chunk's elements as f32, read by one 16-byte shared load."""
        words = k.inline_ptx("ld.shared.v4.b32", [address(k, self.row, [k.mul(chunk, k.index(self.rows.per_chunk))])], 4)
        return unpacked(k, self.rows.element, words)

    def first_position(self, k: GpuKernelLowering, chunk: SSAValue) -> SSAValue:
        """The row position of the chunk's first element (below 0 for the row's first chunk
        when it starts inside it: as an unsigned index, past every position)."""
        return k.emit(arith.SubiOp(k.mul(chunk, k.index(self.rows.per_chunk)), self.shift))

    def last_chunk(self, k: GpuKernelLowering, chunk: SSAValue) -> SSAValue:
        last = k.index(self.rows.chunks - 1)
        return k.emit(arith.SelectOp(k.emit(arith.CmpiOp(chunk, last, "ult")), chunk, last))


def copy_row(k: GpuKernelLowering, c: RowChunks) -> None:
    """The chunks covering the row into shared memory, chunk i by thread i mod THREADS:
    cp.async where the chunk lies inside the buffer; the buffer's last chunk, where the
    buffer ends inside it, element by element (a copy must not read past the buffer);
    none past the buffer's end (they hold no element of the row)."""
    r = c.rows
    x = r.x[0]
    size = prod(x.type.get_shape())
    for first in range(0, r.chunks, THREADS):
        chunk = k.add(k.thread, k.index(first))
        source = k.mul(k.add(c.first_chunk, chunk), k.index(r.per_chunk))
        remaining = k.emit(arith.SubiOp(k.index(size), source))

        def copy(chunk=chunk, source=source, remaining=remaining) -> None:
            target = k.mul(chunk, k.index(r.per_chunk))
            whole = k.emit(arith.CmpiOp(remaining, k.index(r.per_chunk), "sge"))
            full = k.emit(arith.ConstantOp(IntegerAttr(CHUNK_BYTES, i32)))
            k.guarded(whole, lambda: k.inline_ptx("cp.async.cg.shared.global.16",
                                                  [address(k, c.row, [target]), address(k, x, [source]), full]))
            for e in range(r.per_chunk - 1):
                def element(e=e) -> None:
                    value = k.emit(memref.LoadOp.get(x, [k.add(source, k.index(e))]))
                    k.emit(memref.StoreOp.get(value, c.row, [k.add(target, k.index(e))]))

                k.guarded(k.all_of([k.emit(arith.CmpiOp(remaining, k.index(e), "sgt")),
                                    k.emit(arith.CmpiOp(remaining, k.index(r.per_chunk), "slt"))]), element)

        if r.chunks - first < THREADS:
            k.guarded(k.emit(arith.CmpiOp(chunk, k.index(r.chunks), "ult")), copy)
        else:
            copy()


def pad_row(k: GpuKernelLowering, c: RowChunks) -> None:
    """-inf in the shared chunks before the row's first element and after its last (what
    the chunks copied of the neighbouring rows, or nothing past the buffer): the passes
    then read whole chunks unmasked."""
    r = c.rows
    padding = k.emit(arith.ConstantOp(FloatAttr(float("-inf"), r.element)))
    end = k.add(c.shift, k.index(r.length))
    for e in range(r.per_chunk - 1):
        k.guarded(k.emit(arith.CmpiOp(k.index(e), c.shift, "ult")),
                  lambda e=e: k.emit(memref.StoreOp.get(padding, c.row, [k.index(e)])))
    for e in range(2 * r.per_chunk - 1):
        at = k.add(end, k.index(e))
        k.guarded(k.emit(arith.CmpiOp(at, k.index(r.chunks * r.per_chunk), "ult")),
                  lambda at=at: k.emit(memref.StoreOp.get(padding, c.row, [at])))


def for_each_chunk(k: GpuKernelLowering, r: ResidentRows, state: list[SSAValue], body) -> list[SSAValue]:
    """This thread's chunks t, t + THREADS, ... through body(chunk, state, tail) -> state,
    CHUNKS_AT_ONCE a step: a loop over the steps whose chunks all exist, then (tail=True)
    the last step's, some of which may be past the row's last chunk."""
    per_step = THREADS * CHUNKS_AT_ONCE

    def step(index: SSAValue, carried: list[SSAValue], tail: bool) -> list[SSAValue]:
        for part in range(CHUNKS_AT_ONCE):
            chunk = k.add(k.mul(index, k.index(per_step)), k.add(k.index(part * THREADS), k.thread))
            carried = body(chunk, carried, tail)
        return carried

    whole_steps = r.chunks // per_step
    if whole_steps:
        state = block_loop(k, k.index(0), k.index(whole_steps), state, lambda i, carried: step(i, carried, False))
    return step(k.index(whole_steps), state, True) if r.chunks % per_step else state


def row_statistics(k: GpuKernelLowering, c: RowChunks) -> tuple[SSAValue, SSAValue]:
    """The row's maximum m and l = sum(exp(x - m)), the same in every thread: per thread
    an online pass over its chunks (a chunk's maximum, then its exps against the new
    maximum), then butterflies in each warp and the warps' pairs through shared memory."""

    def step(chunk: SSAValue, carried: list[SSAValue], tail: bool) -> list[SSAValue]:
        largest, total = carried
        values = c.values(k, c.last_chunk(k, chunk) if tail else chunk)
        new = largest
        for v in values:
            new = k.emit(arith.MaximumfOp(new, v))
        base = finite(k, new)
        grown = k.emit(arith.MulfOp(total, exp(k, k.emit(arith.SubfOp(largest, base)))))
        for v in values:
            grown = k.emit(arith.AddfOp(grown, exp(k, k.emit(arith.SubfOp(v, base)))))
        if not tail:
            return [new, grown]
        exists = k.emit(arith.CmpiOp(chunk, k.index(c.rows.chunks), "ult"))
        return [k.emit(arith.SelectOp(exists, new, largest)), k.emit(arith.SelectOp(exists, grown, total))]

    largest, total = for_each_chunk(k, c.rows, [constant(k, float("-inf")), constant(k, 0.0)], step)
    largest_in_warp = butterfly(k, largest, WARP, lambda a, b: k.emit(arith.MaximumfOp(a, b)))
    total = combine(k, [largest], [total], largest_in_warp)[1]
    total = butterfly(k, total, WARP, lambda a, b: k.emit(arith.AddfOp(a, b)))
    warps = THREADS // WARP
    stats = k.shared_alloca([2 * warps], f32)
    warp = k.emit(arith.DivUIOp(k.thread, k.index(WARP)))
    first_lane = k.emit(arith.CmpiOp(k.emit(arith.RemUIOp(k.thread, k.index(WARP))), k.index(0), "eq"))

    def publish() -> None:
        k.emit(memref.StoreOp.get(largest_in_warp, stats, [warp]))
        k.emit(memref.StoreOp.get(total, stats, [k.add(warp, k.index(warps))]))

    k.guarded(first_lane, publish)
    k.barriers.barrier()
    maxima = [k.emit(memref.LoadOp.get(stats, [k.index(w)])) for w in range(warps)]
    totals = [k.emit(memref.LoadOp.get(stats, [k.index(warps + w)])) for w in range(warps)]
    return combine(k, maxima, totals)


def write_row(k: GpuKernelLowering, c: RowChunks, largest: SSAValue, total: SSAValue) -> None:
    """The write pass: exp(x - m) / l (log_softmax: x - m - log l) of each chunk, rounded
    and stored as one 16-byte store where the chunk lies wholly inside the row (y's
    chunks start where x's do: `fits`), element by element at the row's two ends."""
    r, y = c.rows, c.rows.y[0]
    if r.log:
        log_total = k.emit(xmath.LogOp(total))
        result = lambda v: k.emit(arith.SubfOp(k.emit(arith.SubfOp(v, largest)), log_total))  # noqa: E731
    else:
        inverse = k.emit(arith.DivfOp(constant(k, 1.0), total))
        result = lambda v: k.emit(arith.MulfOp(exp(k, k.emit(arith.SubfOp(v, largest))), inverse))  # noqa: E731

    def write(chunk: SSAValue) -> None:
        results = [result(v) for v in c.values(k, chunk)]
        first = c.first_position(k, chunk)
        length = k.index(r.length)
        inside = [k.emit(arith.CmpiOp(k.add(first, k.index(e)), length, "ult")) for e in range(r.per_chunk)]
        whole = k.emit(arith.AndIOp(inside[0], inside[-1]))  # a chunk's positions are consecutive
        at = k.mul(k.add(c.first_chunk, chunk), k.index(r.per_chunk))
        k.guarded(whole, lambda: k.inline_ptx("st.global.v4.b32", [address(k, y, [at]), *packed(k, r.element, results)]))

        def each_element() -> None:
            for e, (valid, value) in enumerate(zip(inside, results)):
                rounded = value if r.element == f32 else k.emit(arith.TruncFOp(value, r.element))
                k.guarded(valid, lambda rounded=rounded, e=e: k.emit(memref.StoreOp.get(rounded, y, [k.add(at, k.index(e))])))

        k.guarded(k.emit(arith.XOrIOp(whole, k.emit(arith.ConstantOp(IntegerAttr(1, i1))))), each_element)

    def step(chunk: SSAValue, carried: list[SSAValue], tail: bool) -> list[SSAValue]:
        if tail:
            k.guarded(k.emit(arith.CmpiOp(chunk, k.index(r.chunks), "ult")), lambda: write(chunk))
        else:
            write(chunk)
        return []

    for_each_chunk(k, r, [], step)


def exp(k: GpuKernelLowering, value: SSAValue) -> SSAValue:
    """e^value as 2^(value · log2 e) by ex2.approx.ftz (flash_blocks.exp2): the exponents
    are differences from the row's maximum (at most 0), and a result below 2^-126 beside
    the maximum's 1 is below what f32 resolves."""
    return exp2(k, k.emit(arith.MulfOp(value, constant(k, LOG2_E))))


def unpacked(k: GpuKernelLowering, element, words: list[SSAValue]) -> list[SSAValue]:
    """The f32 values of 32-bit words holding f32, or two bf16 / f16 each (low half first)."""
    if element == f32:
        return [k.emit(arith.BitcastOp(w, f32)) for w in words]
    values = []
    for word in words:
        if isinstance(element, Float16Type):
            values += k.inline_ptx("unpack.f16x2.f32", [word], 2, f32)
            continue
        low = k.emit(arith.ShLIOp(word, k.emit(arith.ConstantOp(IntegerAttr(16, i32)))))
        high = k.emit(arith.AndIOp(word, k.emit(arith.ConstantOp(IntegerAttr(-65536, i32)))))
        values += [k.emit(arith.BitcastOp(low, f32)), k.emit(arith.BitcastOp(high, f32))]
    return values


def packed(k: GpuKernelLowering, element, values: list[SSAValue]) -> list[SSAValue]:
    """f32 values as 32-bit words of `element`s, rounded to nearest even (low half first)."""
    if element == f32:
        return [k.emit(arith.BitcastOp(v, i32)) for v in values]
    pack = "cvt.rn.f16x2.f32" if isinstance(element, Float16Type) else "cvt.rn.bf16x2.f32"
    return [k.inline_ptx(pack, [values[i + 1], values[i]], 1)[0] for i in range(0, len(values), 2)]


def finite(k: GpuKernelLowering, largest: SSAValue) -> SSAValue:
    """A maximum still -inf taken as 0: exponents against it are -inf (terms 0), not NaN."""
    unset = k.emit(arith.CmpfOp(largest, constant(k, float("-inf")), "oeq"))
    return k.emit(arith.SelectOp(unset, constant(k, 0.0), largest))


def combine(k: GpuKernelLowering, maxima: list[SSAValue], totals: list[SSAValue],
            largest: SSAValue | None = None) -> tuple[SSAValue, SSAValue]:
    """(m, l) of several partial (m_i, l_i): m = max m_i (or the given `largest`, at least
    each), l = sum l_i · exp(m_i - m) (a part whose m_i is -inf adds its l_i, which is 0)."""
    if largest is None:
        largest = maxima[0]
        for m in maxima[1:]:
            largest = k.emit(arith.MaximumfOp(largest, m))
    base = finite(k, largest)
    total = None
    for m, l in zip(maxima, totals):
        scaled = k.emit(arith.MulfOp(l, exp(k, k.emit(arith.SubfOp(m, base)))))
        total = scaled if total is None else k.emit(arith.AddfOp(total, scaled))
    return largest, total

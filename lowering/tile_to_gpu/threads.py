"""How lower-tile-to-gpu spreads the elements of a tile over a block's threads: thread
loops, straight-line code when each thread takes a few elements, and micro-tiles of an
accumulator. The per-thread code is built as block code, whose shared accesses are recorded
and placed with the barriers they need (barriers.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue

from strata.dialects import tile
from strata.lowering.tile_to_gpu.barriers import Accesses, Barriers, BlockAccesses, Owner
from strata.lowering.tile_to_gpu.element_keys import ElementKeys
from strata.lowering.tile_to_loops.kernel import KernelLowering, static_value
from strata.support.errors import StrataError

UNROLL_LIMIT = 16
"""Thread loops with at most this many elements per thread become straight-line code."""
WARP = 32
MIN_ROW_LANES = 8
"""The fewest lanes that share a row in straight-line code (row_lanes): eight f32 lanes read
one whole 32-byte sector of a row per load."""
MMA_VECTOR = 4
"""Elements of a micro-tile row read together (one 16-byte shared load of f32)."""


def unravel(flat: int, shape: Sequence[int]) -> list[int]:
    """Row-major indices of a flat position in a static shape."""
    indices = []
    for size in reversed(shape):
        indices.insert(0, flat % size)
        flat //= size
    return indices


@dataclass
class RegionValues:
    """Element values and element indices of straight-line block code in one region."""

    elements: dict = field(default_factory=dict)
    indices: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MicroTiles:
    """An accumulator tile of `shape` ([1.., rows, columns]) spread over a block: thread t
    owns rows per_row * (t // thread_columns) + r and columns per_column * (t % thread_columns) + c
    (threads past `active` own nothing)."""

    shape: tuple[int, ...]
    per_row: int
    per_column: int

    @staticmethod
    def of(shape: Sequence[int], threads: int) -> MicroTiles:
        rows, columns = shape[-2], shape[-1]
        per_thread = max(1, (rows * columns) // threads)
        per_column = min(columns, 2 * MMA_VECTOR if per_thread >= 64 else MMA_VECTOR, per_thread)
        per_row = min(rows, max(1, per_thread // per_column))
        return MicroTiles(tuple(shape), per_row, min(columns, per_thread // per_row))

    @property
    def thread_columns(self) -> int:
        return self.shape[-1] // self.per_column

    @property
    def active(self) -> int:
        """Threads that own a micro-tile (all of them unless the tile is small)."""
        return (self.shape[-2] // self.per_row) * self.thread_columns

    def cells(self, k: ThreadMappedLowering) -> list[list[SSAValue]]:
        """This thread's cells as tile indices, row-major."""
        ti = k.emit(arith.DivUIOp(k.thread, k.index(self.thread_columns)))
        tj = k.emit(arith.RemUIOp(k.thread, k.index(self.thread_columns)))
        first_row, first_column = k.mul(ti, k.index(self.per_row)), k.mul(tj, k.index(self.per_column))
        zeros = [k.index(0)] * (len(self.shape) - 2)
        rows = [k.add(first_row, k.index(r)) for r in range(self.per_row)]
        columns = [k.add(first_column, k.index(c)) for c in range(self.per_column)]
        return [[*zeros, r, c] for r in rows for c in columns]


class ThreadMappedLowering(KernelLowering):
    """A kernel lowering whose tiles are spread over the `block_size` threads of a block.
    Code at the uniform level runs on every thread alike; per-thread code is block code
    (`block_code`), placed with the barriers its accesses need."""

    def __init__(self, kernel: tile.KernelOp, block_size: int, barriers: Barriers):
        super().__init__(kernel)
        self.block_size = block_size
        self.barriers = barriers
        self.keys = ElementKeys()
        self.thread: SSAValue | None = None
        """This thread's index in the block (tid.x), bound by the kernel's `lower`."""
        self.threads: SSAValue | None = None
        """The block size as a value, bound with `thread`."""
        self.block: BlockAccesses | None = None
        """While block code is built: its accesses."""
        self.element_cache: dict[tuple, SSAValue] = {}
        """Element values the code being built can use, by `ElementKeys.element_key`."""
        self.region = RegionValues()
        """Values of straight-line block code in the region being lowered (see thread_loop)."""
        self.cell: tuple[MicroTiles, int] | None = None
        """While for_each_cell runs (mma.py): the micro-tile layout and the cell."""
        self.inside: SSAValue | None = None
        """In straight-line block code: whether the current element is inside the tile's
        valid extent (None: it is); effects are guarded by it, reads are not."""

    # -- block code -------------------------------------------------------------------------

    def block_code(
        self, build: Callable[[], None], owner: Owner = None, straight_line: bool = False
    ) -> tuple[Block, Accesses]:
        """Per-thread code built by `build` into a new block (one index argument), and the
        accesses it made; the caller wraps the block and `place`s it (or `place_inline`s
        straight-line code, whose element values stay available to later code of the
        region). Inside, an access at `block.owned_indices` to a tile of shape `owner` is
        owned by the thread."""
        block = Block(arg_types=[IndexType()])
        saved = (self.cursor, self.block, self.element_cache)
        self.cursor, self.block = block, BlockAccesses(owner)
        self.element_cache = self.region.elements if straight_line else {}
        build()
        accesses = self.block.accesses
        self.cursor, self.block, self.element_cache = saved
        return block, accesses

    def place(self, op: Operation, accesses: Accesses) -> None:
        """Emits block code `op` at the uniform level with the barriers it needs."""
        self.barriers.before(accesses)
        self.emit(op)
        self.barriers.after(accesses)

    def place_inline(self, block: Block, accesses: Accesses) -> None:
        """Emits straight-line block code (the ops of `block`) at the uniform level."""
        self.barriers.before(accesses)
        for op in list(block.ops):
            op.detach()
            self.cursor.add_op(op)
        self.barriers.after(accesses)

    def note_read(self, buffer: SSAValue, indices: Sequence[SSAValue], owner: Owner = ...) -> None:
        """A read of `buffer` at `indices` by the block code being built; `owner` defaults
        to the thread's, for its own element (a read at the clamped index of an element
        outside the extent is not: it may be another thread's)."""
        if self.block is None:
            raise StrataError(f"lower-tile-to-gpu: @{self.kernel.sym_name.data}: a tile is read outside block code")
        if owner is ...:
            owner = self.block.owner_of(buffer, indices) if self.inside is None else None
        self.block.accesses.reads.append((buffer, owner))

    def note_write(self, buffer: SSAValue, indices: Sequence[SSAValue], owner: Owner = ...) -> None:
        """A write, made under `effect`: a clamped index only writes when it is the element's."""
        if owner is ...:
            owner = self.block.owner_of(buffer, indices)
        self.block.accesses.writes.append((buffer, owner))

    def forget_region_values(self) -> None:
        """A shared tile was overwritten in place: element values read before are stale."""
        self.region.elements.clear()

    def effect(self, emit: Callable[[], object]) -> None:
        """A side effect (a store) of the current element: only inside the valid extent."""
        if self.inside is None:
            emit()
        else:
            self.guarded(self.inside, emit)

    def all_of(self, conditions: Sequence[SSAValue]) -> SSAValue | None:
        """The conjunction of i1 values (None for none: always true)."""
        result = None
        for condition in conditions:
            result = condition if result is None else self.emit(arith.AndIOp(result, condition))
        return result

    # -- elements on threads ----------------------------------------------------------------

    def each_element(self, shape: Sequence[int], extents: Sequence[SSAValue], body: Callable[[list[SSAValue]], None]) -> None:
        self.thread_loop(shape, extents, body)

    def thread_loop(self, shape: Sequence[int], extents: Sequence[SSAValue], body: Callable[[list[SSAValue]], None]) -> None:
        """body(tile indices) for every element of `shape` inside `extents`, the elements
        spread over the block's threads (tid + k * block, last axis fastest). `body` reads
        first and makes its stores through `effect`.

        A few elements per thread: straight-line code, each element read once per region
        (a row read by a max, a sum and the final store is loaded once). Else a loop
        `for e = tid; e < elements; e += block` guarded on the axes the extent may cut."""
        shape = tuple(shape)
        iterations = self.straight_line_iterations(shape)
        if iterations is not None:
            def unrolled() -> None:
                for iteration in range(iterations):
                    indices, self.inside = self.element_indices(shape, extents, iteration)
                    self.block.owned_indices = tuple(indices)
                    body(indices)
                self.inside = None

            block, accesses = self.block_code(unrolled, owner=shape, straight_line=True)
            self.place_inline(block, accesses)
            return

        def build() -> None:
            indices = self.delinearize(self.cursor.args[0], shape)
            self.block.owned_indices = tuple(indices)
            inside = self.all_of([
                self.emit(arith.CmpiOp(index, extent, "ult"))
                for index, extent, size in zip(indices, extents, shape)
                if static_value(extent) != size
            ])  # fmt: skip
            if inside is None:
                body(indices)
            else:
                self.guarded(inside, lambda: body(indices))

        block, accesses = self.block_code(lambda: (build(), self.emit(scf.YieldOp())), owner=shape)
        loop = scf.ForOp(self.thread, self.index(prod(shape)), self.threads, [], Region(block))
        self.place(loop, accesses)

    def straight_line_iterations(self, shape: Sequence[int]) -> int | None:
        """Elements per thread when a thread loop over `shape` is better unrolled: every
        thread takes the same few elements, so values can stay in registers."""
        count = prod(shape)
        if count % self.block_size or count // self.block_size > UNROLL_LIMIT:
            return None
        return count // self.block_size

    def element_indices(self, shape: tuple[int, ...], extents: Sequence[SSAValue], iteration: int):
        """(tile indices, inside) of this thread's element `iteration` of `shape`
        (tid + iteration * block, last axis fastest) in straight-line code. Indices on axes
        the extent may cut are clamped into it (reads stay in bounds; effects check
        `inside`). Made once per region for structurally equal extents, so every piece of
        straight-line code over the same tile reads the same index values."""
        key = (shape, tuple(self.keys.extent_key(e, size) for e, size in zip(extents, shape)), iteration)
        if key not in self.region.indices:
            first = iteration * self.block_size
            lanes = self.row_lanes(shape)
            if lanes is not None:
                row, lane = self.row_and_lane(shape, lanes)
                column = self.add(lane, self.index(iteration * lanes)) if iteration else lane
                indices = [*row, column]
            elif len(shape) > 1 and shape[-1] % self.block_size == 0:
                # The block covers part of one row: the leading indices are constants.
                column = self.add(self.thread, self.index(first % shape[-1])) if first % shape[-1] else self.thread
                indices = [*(self.index(i) for i in unravel(first // shape[-1], shape[:-1])), column]
            else:
                indices = self.delinearize(self.add(self.thread, self.index(first)), shape)
            inside = self.clamp(indices, extents, shape)
            self.region.indices[key] = (indices, inside)
        return self.region.indices[key]

    def row_lanes(self, shape: Sequence[int]) -> int | None:
        """Lanes per row when straight-line code over `shape` gives every thread elements of
        one row only: rows shorter than the block, split over L consecutive threads (L at
        least MIN_ROW_LANES and dividing a warp), lane l of them taking columns l, l + L, ...
        A row reduction is then a butterfly over L lanes with no shared memory, and the row
        stays in registers from its reductions to its store. None: the block-strided order
        (element tid + iteration * block)."""
        iterations = self.straight_line_iterations(shape)
        if iterations is None or len(shape) < 2 or shape[-1] >= self.block_size or shape[-1] % iterations:
            return None
        lanes = shape[-1] // iterations
        return lanes if lanes >= MIN_ROW_LANES and WARP % lanes == 0 else None

    def row_and_lane(self, shape: Sequence[int], lanes: int) -> tuple[list[SSAValue], SSAValue]:
        """This thread's row (indices of the leading axes) and lane in it (row_lanes), made
        once per region."""
        key = ("row lanes", tuple(shape))
        if key not in self.region.indices:
            row = self.delinearize(self.emit(arith.DivUIOp(self.thread, self.index(lanes))), shape[:-1])
            self.region.indices[key] = (row, self.emit(arith.RemUIOp(self.thread, self.index(lanes))))
        return self.region.indices[key]

    def clamp(self, indices: list[SSAValue], extents: Sequence[SSAValue], shape: Sequence[int]) -> SSAValue | None:
        """Clamps `indices` (in place) into `extents` on the axes an extent may cut, so
        reads stay in bounds; returns whether the element is inside (None: always)."""
        checks = []
        for axis, (extent, size) in enumerate(zip(extents, shape)):
            if static_value(extent) == size:
                continue
            checks.append(self.emit(arith.CmpiOp(indices[axis], extent, "ult")))
            last = self.emit(arith.SubiOp(extent, self.index(1)))
            indices[axis] = self.emit(arith.MinUIOp(indices[axis], last))
        return self.all_of(checks)

    def for_each_cell(self, layout: MicroTiles, extents: Sequence[SSAValue], body: Callable[[list[SSAValue]], None]) -> None:
        """body(indices) for each of this thread's cells of `layout`, in straight-line code:
        indices clamped into `extents` for reads, `inside` set for effects, `cell` telling
        register tiles which of their values to give."""
        for position, indices in enumerate(layout.cells(self)):
            self.inside, self.cell = self.clamp(indices, extents, layout.shape), (layout, position)
            body(indices)
        self.inside, self.cell = None, None

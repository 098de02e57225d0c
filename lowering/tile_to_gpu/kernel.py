"""The GPU kernel lowering: `GpuKernelLowering` turns one tile.kernel into a GPU kernel
function, with the per-op lowerings in GPU_LOWERINGS (ops.py adds reductions, checks and
loops; mma.py adds tile.mma). lower.py is the pass and describes the whole mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from strata.dialects import tile, token
from strata.dialects.tile_types import element_bytes
from strata.support.errors import StrataError
from strata.lowering.tile_to_gpu.tiles import MicroTiles, PartialsTile, RegisterTile, register_tile_in
from strata.lowering.tile_to_loops.kernel import (
    LOWERINGS,
    BroadcastTile,
    BufferTile,
    KernelLowering,
    LoadedTile,
    MappedTile,
    Partition,
    Tile,
    mapped_tile,
    static_value,
)

DEFAULT_BLOCK_SIZE = 256
DEFAULT_MMA_BLOCK_SIZE = 128
UNROLL_LIMIT = 16
"""Thread loops with at most this many elements per thread become straight-line code."""
WARP = 32
SHARED_MEMORY_SPACE = 3
SHARED_BYTES_LIMIT = 48 * 1024
NVVM_PREFIX = "llvm.nvvm."
SPECIAL_REGISTERS = ("ctaid.x", "tid.x")
BARRIER = "llvm.nvvm.barrier0"
INTRINSIC_TYPES: dict[str, tuple[tuple[Attribute, ...], tuple[Attribute, ...]]] = {
    **{f"{NVVM_PREFIX}read.ptx.sreg.{name}": ((), (i32,)) for name in SPECIAL_REGISTERS},
    BARRIER: ((), ()),
}
"""The NVVM intrinsics a GPU kernel calls, as private func declarations (shuffles are
added by tile_to_gpu_ops)."""

Owner = tuple | None
"""Which thread touches an element: a key shared by accesses that give every element the
same thread (a thread loop's tile shape, an mma micro-tile layout), or None (any thread)."""


@dataclass
class Accesses:
    """The shared-memory (and token-ordered global) accesses of one piece of block code."""

    reads: list[tuple[SSAValue, Owner]] = field(default_factory=list)
    writes: list[tuple[SSAValue, Owner]] = field(default_factory=list)


@dataclass
class PendingAccesses:
    """Accesses since the last barrier, per buffer."""

    written: dict[SSAValue, set] = field(default_factory=dict)
    read: dict[SSAValue, set] = field(default_factory=dict)

    def conflicts(self, accesses: Accesses) -> bool:
        def crosses(owner: Owner, others: set) -> bool:
            return any(owner is None or other is None or other != owner for other in others)

        for buffer, owner in accesses.reads:
            if crosses(owner, self.written.get(buffer, set())):
                return True
        for buffer, owner in accesses.writes:
            if crosses(owner, self.read.get(buffer, set()) | self.written.get(buffer, set())):
                return True
        return False

    def record(self, accesses: Accesses) -> None:
        for buffer, owner in accesses.reads:
            self.read.setdefault(buffer, set()).add(owner)
        for buffer, owner in accesses.writes:
            self.written.setdefault(buffer, set()).add(owner)

    def merge(self, other: PendingAccesses) -> None:
        for mine, theirs in ((self.written, other.written), (self.read, other.read)):
            for buffer, owners in theirs.items():
                mine.setdefault(buffer, set()).update(owners)

    def copy(self) -> PendingAccesses:
        fresh = PendingAccesses()
        fresh.merge(self)
        return fresh

    def __bool__(self) -> bool:
        return bool(self.written or self.read)


@dataclass
class LoopHead:
    """What a loop body does before its first barrier: the next iteration does it first,
    so it is checked against what is pending at the end of the body."""

    accesses: Accesses = field(default_factory=Accesses)
    before_first_barrier: bool = True


@dataclass
class RegionValues:
    """Element values and element indices of straight-line block code in one region."""

    elements: dict = field(default_factory=dict)
    indices: dict = field(default_factory=dict)


def unravel(flat: int, shape: Sequence[int]) -> list[int]:
    """Row-major indices of a flat position in a static shape."""
    indices = []
    for size in reversed(shape):
        indices.insert(0, flat % size)
        flat //= size
    return indices


def body_fingerprint(op: tile.MapOp) -> tuple:
    """The structure of a map body: op names, properties, attributes and operand sources
    (block argument, earlier body result, or an outside value by identity)."""
    block = op.body.block
    positions = {arg: ("arg", i) for i, arg in enumerate(block.args)}
    parts = []
    for index, inner in enumerate(block.ops):
        sources = tuple(positions.get(v, ("outside", v)) for v in inner.operands)
        parts.append((inner.name, str(inner.properties), str(inner.attributes), sources,
                      tuple(str(r.type) for r in inner.results)))
        positions.update({r: ("op", index, n) for n, r in enumerate(inner.results)})
    return tuple(parts)


class GpuKernelLowering(KernelLowering):
    """One tile.kernel → one GPU kernel function (see module docstring)."""

    def __init__(self, kernel: tile.KernelOp, block_size: int, naive_barriers: bool = False):
        super().__init__(kernel)
        self.block_size = block_size
        self.naive_barriers = naive_barriers
        self.pending_stores: list[tuple[tile.StoreViewTkoOp, Partition, Tile]] = []
        self.element_cache: dict[tuple[int, tuple[SSAValue, ...]], SSAValue] = {}
        self.pending = PendingAccesses()
        self.accesses: Accesses | None = None
        self.owned_indices: tuple[SSAValue, ...] | None = None
        self.owner: Owner = None
        self.shared_bytes = 0
        self.barrier_count = 0
        self.intrinsics: dict[str, tuple[tuple[Attribute, ...], tuple[Attribute, ...]]] = {}
        self.ordered_buffers: set[SSAValue] = set()
        """Buffers that tokens order a store before a load of (see `ordered_buffers`): their
        global accesses join the barrier bookkeeping."""
        self.status_argument: SSAValue | None = None
        self.loop_heads: list[LoopHead] = []
        """One per enclosing loop body, innermost last."""
        self.region = RegionValues()
        """Values of straight-line block code in the region being lowered (see thread_loop)."""
        self.cell: tuple[object, int] | None = None
        """While for_each_cell runs (tile_to_gpu_mma): the micro-tile layout and the cell."""
        self.inside: SSAValue | None = None
        """In straight-line block code: whether the current element is inside the tile's
        valid extent (None: it is); effects are guarded by it, reads are not."""
        self.load_keys: dict[int, tuple] = {}
        """Per loaded tile: its tile position and the store epoch of its buffer (tile_key)."""
        self.store_epochs: dict[SSAValue, int] = {}
        """Per global buffer, how many store groups wrote it so far."""
        self.value_keys: dict[SSAValue, object] = {}
        self.tile_keys: dict[int, tuple[Tile, object]] = {}
        """Memoized value_key and tile_key results."""

    # -- intrinsics and block-level helpers ----------------------------------------------

    def call(self, name: str, args: Sequence[SSAValue], types=None) -> SSAValue | None:
        signature = types or INTRINSIC_TYPES[name]
        self.intrinsics[name] = signature
        return self.emit(func.CallOp(name, list(args), list(signature[1])))

    def special_register(self, name: str) -> SSAValue:
        value = self.call(f"{NVVM_PREFIX}read.ptx.sreg.{name}", [])
        value.name_hint = name.split(".")[0]
        return self.emit(arith.IndexCastOp(value, IndexType()))

    def barrier(self, settle: bool = True) -> None:
        """bar.sync (at the uniform level only). `settle`: every pending access is
        complete; block code that synchronizes internally passes False, because its
        accesses are checked against the pending ones before it, as a whole."""
        self.call(BARRIER, [])
        self.barrier_count += 1
        if settle:
            self.pending = PendingAccesses()
            for head in self.loop_heads:
                head.before_first_barrier = False

    def synchronize(self, accesses: Accesses) -> None:
        """A barrier before block code with `accesses` if it conflicts with pending ones."""
        if self.naive_barriers:
            if accesses.writes and self.pending:
                self.barrier()
        elif self.pending.conflicts(accesses):
            self.barrier()

    def after(self, accesses: Accesses) -> None:
        self.pending.record(accesses)
        for head in self.loop_heads:
            if head.before_first_barrier:
                head.accesses.reads += accesses.reads
                head.accesses.writes += accesses.writes
        if self.naive_barriers and accesses.writes:
            self.barrier()

    def shared_alloca(self, shape: Sequence[int], element_type: Attribute) -> SSAValue:
        self.shared_bytes += prod(shape) * element_bytes(element_type)
        return self.at_entry(
            memref.AllocaOp.get(element_type, 16, shape, memory_space=IntegerAttr(SHARED_MEMORY_SPACE, i64))
        )

    @staticmethod
    def is_shared(buffer: SSAValue) -> bool:
        space = buffer.type.memory_space if isinstance(buffer.type, MemRefType) else None
        return isinstance(space, IntegerAttr) and space.value.data == SHARED_MEMORY_SPACE

    def block_code(
        self, build: Callable[[], None], owner: Owner = None, straight_line: bool = False
    ) -> tuple[Block, Accesses]:
        """Per-thread code built by `build` into a new block (one index argument), and the
        accesses it made; the caller wraps the block and `place`s it (or `place_inline`s
        straight-line code, whose element values stay available to later code of the
        region). Inside, an access at `owned_indices` to a tile of shape `owner` is owned
        by the thread."""
        block = Block(arg_types=[IndexType()])
        saved = (self.cursor, self.accesses, self.owned_indices, self.owner, self.element_cache)
        self.cursor, self.accesses = block, Accesses()
        self.element_cache = self.region.elements if straight_line else {}
        self.owned_indices, self.owner = None, owner
        build()
        accesses = self.accesses
        self.cursor, self.accesses, self.owned_indices, self.owner, self.element_cache = saved
        return block, accesses

    def place(self, op: Operation, accesses: Accesses) -> None:
        """Emits block code `op` at the uniform level with the barriers it needs."""
        self.synchronize(accesses)
        self.emit(op)
        self.after(accesses)

    def place_inline(self, block: Block, accesses: Accesses) -> None:
        """Emits straight-line block code (the ops of `block`) at the uniform level."""
        self.synchronize(accesses)
        for op in list(block.ops):
            op.detach()
            self.cursor.add_op(op)
        self.after(accesses)

    def effect(self, emit: Callable[[], object]) -> None:
        """A side effect (a store) of the current element: only inside the valid extent."""
        if self.inside is None:
            emit()
        else:
            self.guarded(self.inside, emit)

    def each_element(self, shape: Sequence[int], extents: Sequence[SSAValue], body: Callable[[list[SSAValue]], None]) -> None:
        self.thread_loop(shape, extents, body)

    def all_of(self, conditions: Sequence[SSAValue]) -> SSAValue | None:
        """The conjunction of i1 values (None for none: always true)."""
        result = None
        for condition in conditions:
            result = condition if result is None else self.emit(arith.AndIOp(result, condition))
        return result

    def for_each_cell(self, layout: MicroTiles, extents: Sequence[SSAValue], body: Callable[[list[SSAValue]], None]) -> None:
        """body(indices) for each of this thread's cells of `layout`, in straight-line code:
        indices clamped into `extents` for reads, `inside` set for effects, `cell` telling
        register tiles which of their values to give."""
        for position, indices in enumerate(layout.cells(self)):
            self.inside, self.cell = self.clamp(indices, extents, layout.shape), (layout, position)
            body(indices)
        self.inside, self.cell = None, None

    def spill(self, value: Tile, shape: Sequence[int], element) -> BufferTile:
        """`value`, an expression over a register tile, written to a shared-memory tile."""
        layout = register_tile_in(value).layout
        buffer = self.shared_alloca(shape, element)
        owner = ("micro-tiles", layout)

        def write() -> None:
            def store(indices: list[SSAValue]) -> None:
                element_value = self.read(value, indices)
                self.note_write(buffer, indices, owner)
                self.effect(lambda: self.emit(memref.StoreOp.get(element_value, buffer, indices)))

            self.for_each_cell(layout, value.extents, store)

        code, accesses = self.block_code(write)
        self.place_inline(code, accesses)
        return BufferTile(buffer, value.extents)

    def forget_region_values(self) -> None:
        """A shared tile was overwritten in place: element values read before are stale."""
        self.region.elements.clear()

    def note_read(self, buffer: SSAValue, indices: Sequence[SSAValue], owner: Owner = ...) -> None:
        if self.accesses is None:
            raise StrataError(f"lower-tile-to-gpu: @{self.kernel.sym_name.data}: a tile is read outside block code")
        if owner is ...:
            owner = self.owner if self.is_owned(buffer, indices) else None
        self.accesses.reads.append((buffer, owner))

    def note_write(self, buffer: SSAValue, indices: Sequence[SSAValue], owner: Owner = ...) -> None:
        """A write, made under `effect`: a clamped index only writes when it is the element's."""
        if owner is ...:
            owner = self.owner if self.is_owned(buffer, indices, guarded=True) else None
        self.accesses.writes.append((buffer, owner))

    def is_owned(self, buffer: SSAValue, indices: Sequence[SSAValue], guarded: bool = False) -> bool:
        """The element is the thread's own (a read at the clamped index of an element outside
        the extent is not: it may be another thread's)."""
        return (
            self.owned_indices is not None
            and (guarded or self.inside is None)
            and tuple(indices) == self.owned_indices
            and tuple(buffer.type.get_shape()) == self.owner
        )

    # -- thread loops ---------------------------------------------------------------------

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
        key = (shape, tuple(self.extent_key(e, size) for e, size in zip(extents, shape)), iteration)
        if key not in self.region.indices:
            first = iteration * self.block_size
            if len(shape) > 1 and shape[-1] % self.block_size == 0:
                # The block covers part of one row: the leading indices are constants.
                column = self.add(self.thread, self.index(first % shape[-1])) if first % shape[-1] else self.thread
                indices = [*(self.index(i) for i in unravel(first // shape[-1], shape[:-1])), column]
            else:
                indices = self.delinearize(self.add(self.thread, self.index(first)), shape)
            inside = self.clamp(indices, extents, shape)
            self.region.indices[key] = (indices, inside)
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

    def extent_key(self, extent: SSAValue, size: int) -> object:
        """value_key of an extent of an axis of `size`, up to the identities of min on
        extents: min(e, c) = e for a constant c >= size, min(e, e) = e."""
        constant = static_value(extent)
        if constant is not None:
            return size if constant >= size else constant
        owner = extent.owner
        if isinstance(owner, arith.MinSIOp | arith.MinUIOp):
            left, right = self.extent_key(owner.lhs, size), self.extent_key(owner.rhs, size)
            if left == size or left == right:
                return right
            if right == size:
                return left
            return ("min", left, right)
        return self.value_key(extent)

    def value_key(self, value: SSAValue) -> object:
        """A structural key of an index value (constants by value, arith by operation and
        operand keys, anything else by identity): equal keys, equal values."""
        if value not in self.value_keys:
            constant = static_value(value)
            owner = value.owner
            if constant is not None:
                key = constant
            elif isinstance(owner, Operation) and owner.dialect_name() == "arith" and len(owner.results) == 1:
                operands = tuple(self.value_key(v) for v in owner.operands)
                key = (owner.name, str(owner.properties), str(value.type), operands)
            else:
                key = value
            self.value_keys[value] = key
        return self.value_keys[value]

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
                    self.owned_indices = tuple(indices)
                    body(indices)
                self.inside = None

            block, accesses = self.block_code(unrolled, owner=shape, straight_line=True)
            self.place_inline(block, accesses)
            return

        def build() -> None:
            indices = self.delinearize(self.cursor.args[0], shape)
            self.owned_indices = tuple(indices)
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

    # -- kernel structure ---------------------------------------------------------------

    def lower(self) -> func.FuncOp:
        kernel = self.kernel
        begin, _ = self.bind_arguments()
        self.ordered_buffers = {self.values[b] for b in ordered_buffers(kernel)}
        block = self.add(begin, self.special_register("ctaid.x"))
        self.thread = self.special_register("tid.x")
        self.threads = self.index(self.block_size)
        self.bind_program_ids(block)
        self.lower_region(kernel.body.block)
        self.emit(func.ReturnOp())
        if self.shared_bytes > SHARED_BYTES_LIMIT:
            raise StrataError(
                f"lower-tile-to-gpu: kernel @{kernel.sym_name.data} needs {self.shared_bytes} bytes of "
                f"shared memory (limit {SHARED_BYTES_LIMIT}): use smaller tiles "
                "(lower-graph-to-tile{tile_elements=... matmul_m=... matmul_n=... matmul_k=...})"
            )
        function = func.FuncOp(kernel.sym_name.data, (list(self.entry.arg_types), []), Region(self.entry))
        function.attributes["gpu.kernel"] = UnitAttr()
        function.attributes["gpu.block_size"] = IntegerAttr(self.block_size, i64)
        function.attributes["gpu.shared_bytes"] = IntegerAttr(self.shared_bytes, i64)
        function.attributes["gpu.barriers"] = IntegerAttr(self.barrier_count, i64)
        if self.status_argument is not None:
            function.attributes["gpu.status"] = UnitAttr()
            function.attributes["tile.error"] = StringAttr("; ".join(self.error_messages))
        self.carry_kernel_attributes(function)
        return function

    def lower_region(self, block: Block) -> None:
        """The ops of a kernel or loop body (up to its terminator); stores are deferred to
        the next op with effects so that stores of one tile position share a loop."""
        for op in block.ops:
            if isinstance(op, tile.ReturnOp | scf.YieldOp):
                break
            if not isinstance(op, DEFERRABLE):
                self.flush_stores()
            self.lower_op(op)
        self.flush_stores()

    def lower_op(self, op: Operation) -> None:
        if not isinstance(op, REGISTER_CONSUMERS):
            for operand in op.operands:
                value = self.values.get(operand)
                if isinstance(value, Tile) and register_tile_in(value) is not None:
                    t = operand.type
                    self.values[operand] = self.spill(value, t.get_shape(), t.element_type)
        handler = GPU_LOWERINGS.get(type(op))
        if handler is not None:
            handler(self, op)
        else:
            super().lower_op(op)

    def fail_status(self) -> SSAValue:
        """The kernel's status word in global memory (a trailing argument), made on first use."""
        if self.status_argument is None:
            self.status_argument = self.entry.insert_arg(MemRefType(i32, [1]), len(self.entry.args))
            self.status_argument.name_hint = "status"
        return self.status_argument

    # -- tiles ------------------------------------------------------------------------------

    def read(self, value: Tile, indices) -> SSAValue:
        if isinstance(value, BufferTile) and self.is_shared(value.buffer):
            self.note_read(value.buffer, indices)
        elif isinstance(value, LoadedTile) and value.buffer in self.ordered_buffers:
            self.note_read(value.buffer, ())
        if isinstance(value, RegisterTile):
            if self.cell is None or self.cell[0] != value.layout:
                raise StrataError(f"lower-tile-to-gpu: @{self.kernel.sym_name.data}: a register tile read off its cells")
            return value.values[self.cell[1]]
        if isinstance(value, PartialsTile):
            key = (self.tile_key(value), tuple(self.value_key(i) for i in indices))
            if key not in self.element_cache:
                self.element_cache[key] = value.combine_partials(self, indices)
            return self.element_cache[key]
        if not isinstance(value, LoadedTile | MappedTile):
            return super().read(value, indices)
        key = (self.tile_key(value), tuple(self.value_key(i) for i in indices))
        if key not in self.element_cache:
            self.element_cache[key] = super().read(value, indices)
        return self.element_cache[key]

    def tile_key(self, value: Tile) -> object:
        """A structural key of a lazy tile: loads of one tile position (until a store to
        the buffer), maps with the same body over equal inputs, and broadcasts of equal
        tiles have equal keys, so their elements are computed once per region."""
        if id(value) in self.tile_keys:
            return self.tile_keys[id(value)][1]
        match value:
            case LoadedTile():
                key = self.load_keys.get(id(value), id(value))
            case MappedTile():
                key = ("map", body_fingerprint(value.op), tuple(self.tile_key(t) for t in value.inputs))
            case BroadcastTile():
                key = ("broadcast", self.tile_key(value.input), tuple(value.broadcast_axes))
            case BufferTile():
                key = ("buffer", value.buffer)
            case _:
                key = id(value)
        self.tile_keys[id(value)] = (value, key)  # keeps `value` alive: ids stay unique
        return key

    def materialize(self, value: Tile, shape: Sequence[int], element_type) -> BufferTile:
        buffer = self.shared_alloca(shape, element_type)
        self.copy_into(value, buffer, value.extents)
        return BufferTile(buffer, value.extents)

    def copy_into(self, value: Tile, buffer: SSAValue, extents: Sequence[SSAValue]) -> None:
        def copy(indices: list[SSAValue]) -> None:
            element = self.read(value, indices)
            self.note_write(buffer, indices)
            self.effect(lambda: self.emit(memref.StoreOp.get(element, buffer, indices)))

        self.thread_loop(buffer.type.get_shape(), extents, copy)

    # -- stores -----------------------------------------------------------------------------

    def flush_stores(self) -> None:
        groups: dict[tuple, list[tuple[tile.StoreViewTkoOp, Partition, Tile]]] = {}
        for store in self.pending_stores:
            op, partition, _ = store
            key = (partition.tile_shape, tuple(partition.view.get_shape()), tuple(op.indices))
            groups.setdefault(key, []).append(store)
        self.pending_stores = []
        for stores in groups.values():
            self.store_group(stores)

    def store_group(self, stores) -> None:
        first_op, partition, _ = stores[0]
        extents = self.valid_extents(partition, self.origin(partition, first_op.indices))
        origins = [self.origin(part, op.indices) for op, part, _ in stores]
        registers = [r for r in (register_tile_in(v) for _, _, v in stores) if r is not None]
        if registers and not (
            all(r.layout == registers[0].layout for r in registers)
            and tuple(partition.tile_shape) == registers[0].layout.shape
        ):
            stores = [
                (op, part, self.spill(v, op.tile.type.get_shape(), op.tile.type.element_type) if register_tile_in(v) else v)
                for op, part, v in stores
            ]
            registers = []

        def store_all(indices: list[SSAValue]) -> None:
            values = [self.read(value, indices) for _, _, value in stores]
            for (_, part, _), element, origin in zip(stores, values, origins):
                offset = self.element_offset(part.view, origin, indices)
                if part.buffer in self.ordered_buffers:
                    self.note_write(part.buffer, indices, None)
                store = memref.StoreOp.get(element, part.buffer, [offset])
                self.effect(lambda store=store: self.emit(store))

        if registers:
            # An epilogue of an accumulator in registers: each thread stores its own cells.
            code, accesses = self.block_code(lambda: self.for_each_cell(registers[0].layout, extents, store_all))
            self.place_inline(code, accesses)
        else:
            self.thread_loop(partition.tile_shape, extents, store_all)
        for _, part, _ in stores:
            self.store_epochs[part.buffer] = self.store_epochs.get(part.buffer, 0) + 1


def _deferred_store(k: GpuKernelLowering, op: tile.StoreViewTkoOp) -> None:
    partition: Partition = k.values[op.view]
    k.pending_stores.append((op, partition, k.tile_of(op.tile)))
    k.values[op.result_token] = None


def _lazy_map(k: GpuKernelLowering, op: tile.MapOp) -> None:
    """Never materialized: each element is computed once per region where it is read
    (the element cache), however many uses the map has."""
    k.values[op.result] = mapped_tile(k, op)


def _load(k: GpuKernelLowering, op: tile.LoadViewTkoOp) -> None:
    """A load of a buffer that tokens order after a store of this kernel first has the
    pending stores emitted (the bookkeeping then sees their writes before its reads)."""
    if k.values[op.view].buffer in k.ordered_buffers:
        k.flush_stores()
    LOWERINGS[tile.LoadViewTkoOp](k, op)
    loaded = k.values[op.result]
    # Loads of one tile position read the same elements until a store to the buffer.
    k.load_keys[id(loaded)] = (op.view, tuple(k.values[i] for i in op.indices), k.store_epochs.get(loaded.buffer, 0))


def buffer_of(view: SSAValue) -> SSAValue:
    """The kernel argument a partition view cuts."""
    return view.owner.view.owner.buffer


def ordered_buffers(kernel: tile.KernelOp) -> set[SSAValue]:
    """Kernel arguments read by a load whose token follows a store to the same argument:
    the token orders a write before a read, which other threads may make. Loop-carried
    tokens follow every store of the loop."""
    stored: dict[SSAValue, frozenset[SSAValue]] = {}
    ordered: set[SSAValue] = set()

    def walk(block: Block) -> None:
        for op in block.ops:
            if isinstance(op, tile.StoreViewTkoOp):
                stored[op.result_token] = stored.get(op.token, frozenset()) | {buffer_of(op.view)}
            elif isinstance(op, tile.LoadViewTkoOp) and buffer_of(op.view) in stored.get(op.token, ()):
                ordered.add(buffer_of(op.view))
            elif isinstance(op, token.JoinOp):
                stored[op.result] = frozenset().union(*(stored.get(t, frozenset()) for t in op.tokens))
            elif isinstance(op, scf.ForOp):
                inside = frozenset(buffer_of(s.view) for s in op.body.walk() if isinstance(s, tile.StoreViewTkoOp))
                for init, arg, result in zip(op.iter_args, op.body.block.args[1:], op.results):
                    stored[arg] = stored[result] = stored.get(init, frozenset()) | inside
                walk(op.body.block)

    walk(kernel.body.block)
    return ordered


GPU_LOWERINGS: dict[type[Operation], Callable[[GpuKernelLowering, Operation], None]] = {
    tile.StoreViewTkoOp: _deferred_store,
    tile.MapOp: _lazy_map,
    tile.LoadViewTkoOp: _load,
}
"""GPU-specific lowerings; reductions, checks and loops are added by tile_to_gpu_ops,
mma by tile_to_gpu_mma."""

REGISTER_CONSUMERS = (tile.MapOp, tile.StoreViewTkoOp, tile.MmaOp)
"""Ops that take an expression over a register tile as it is (others get it spilled)."""

DEFERRABLE = (
    tile.StoreViewTkoOp, tile.MapOp, tile.LoadViewTkoOp, tile.BroadcastOp, tile.IotaOp,
    tile.GatherOp, tile.MakeTensorViewOp, tile.MakePartitionViewOp, tile.ProgramIdOp,
    token.MakeOp, token.JoinOp, arith.ConstantOp,
)  # fmt: skip
"""Ops that neither touch memory nor materialize a tile: pending stores may move past them."""


def intrinsic_declarations(intrinsics: dict[str, tuple]) -> list[func.FuncOp]:
    return [
        func.FuncOp(name, (list(inputs), list(outputs)), Region(), visibility="private")
        for name, (inputs, outputs) in sorted(intrinsics.items())
    ]


def gpu_kernels(module: ModuleOp) -> list[func.FuncOp]:
    """The GPU kernel functions of a lowered module (they carry gpu.kernel)."""
    return [f for f in module.ops if isinstance(f, func.FuncOp) and "gpu.kernel" in f.attributes]

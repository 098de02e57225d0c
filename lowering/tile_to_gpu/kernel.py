"""The GPU kernel lowering: `GpuKernelLowering` turns one tile.kernel into a GPU kernel
function, with the per-op lowerings in GPU_LOWERINGS (ops.py adds reductions and loops;
mma.py adds tile.mma). Its base, `ThreadMappedLowering` (threads.py), spreads tiles over the
block's threads; barriers.py places the barriers. lower.py is the pass and describes the
whole mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
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
from strata.dialects.tile_types import TensorViewType, element_bytes
from strata.lowering.tile_to_gpu import epilogue, row_stores, shifted_rows
from strata.lowering.tile_to_gpu.barriers import Barriers, ordered_buffers
from strata.lowering.tile_to_gpu.threads import ThreadMappedLowering
from strata.lowering.tile_to_gpu.tiles import PartialsTile, RegisterTile, register_tile_in
from strata.lowering.tile_to_loops.kernel import (
    LOWERINGS,
    BufferTile,
    LoadedTile,
    MappedTile,
    Partition,
    Tile,
    atomic_add,
    mapped_tile,
)
from strata.support.errors import StrataError

DEFAULT_BLOCK_SIZE = 256
DEFAULT_MMA_BLOCK_SIZE = 128
DEFAULT_MMA_STAGES = 4
"""Shared-memory stages of a tensor-core matmul's cp.async k loop (tensor_core_loop.py)."""
SHARED_MEMORY_SPACE = 3
SHARED_BYTES_LIMIT = 48 * 1024
DYNAMIC_SHARED_LIMIT = 96 * 1024
"""Static plus dynamic shared memory of one block: under the 99 KiB an sm_86/sm_89 block
may opt into (sm_80: 163 KiB, sm_90: 227 KiB)."""
WARPGROUP_SHARED_LIMIT = 227 * 1024
"""Shared memory of one block on sm_90, where the warpgroup mma runs (warpgroup_loop.py)."""
WARPGROUP_MMA = "gpu.warpgroup_mma"
"""A kernel attribute: the kernel runs wgmma, an sm_90a instruction (PTX for sm_90a)."""
GROUPED_ROWS = 8
"""Output tile rows per group in a matmul's block order (bind_program_ids)."""
NVVM_PREFIX = "llvm.nvvm."
INLINE_PTX_PREFIX = "ptx."
"""A private function named ptx.<instruction> is that PTX instruction, as inline assembly
(the NVVM translation writes its operand list)."""
SPECIAL_REGISTERS = ("ctaid.x", "nctaid.x", "tid.x")
BARRIER = "llvm.nvvm.barrier0"
INTRINSIC_TYPES: dict[str, tuple[tuple[Attribute, ...], tuple[Attribute, ...]]] = {
    **{f"{NVVM_PREFIX}read.ptx.sreg.{name}": ((), (i32,)) for name in SPECIAL_REGISTERS},
    BARRIER: ((), ()),
}
"""The NVVM intrinsics a GPU kernel calls, as private func declarations (shuffles are
added by ops.py)."""

Store = tuple[tile.StoreViewTkoOp, Partition, Tile]
"""A deferred store: the op, the partition it stores into and the tile it stores."""


class GpuKernelLowering(ThreadMappedLowering):
    """One tile.kernel → one GPU kernel function: the function with its intrinsics and
    shared memory, lazy tiles read element by element, and stores deferred so that the
    stores of one tile position share one thread loop."""

    def __init__(self, kernel: tile.KernelOp, block_size: int, naive_barriers: bool = False,
                 mma_stages: int = DEFAULT_MMA_STAGES, tf32: bool = False, warpgroup_mma: bool = False):
        super().__init__(kernel, block_size, Barriers(naive_barriers, lambda: self.call(BARRIER, [])))
        self.pending_stores: list[Store] = []
        self.shared_bytes = 0
        self.dynamic_shared_bytes = 0
        self.mma_stages = mma_stages
        """Shared-memory stages of a pipelined tensor-core k loop (tensor_core_loop.py)."""
        self.tf32 = tf32
        """f32 mma may run on tensor cores as TF32 (fragments.py)."""
        self.warpgroup_mma = warpgroup_mma
        """A 16-bit matmul's k loop may run on sm_90's warpgroup mma (warpgroup_loop.py)."""
        self.warpgroup_mma_used = False
        self.intrinsics: dict[str, tuple[tuple[Attribute, ...], tuple[Attribute, ...]]] = {}
        self.status_argument: SSAValue | None = None
        self.cross_tile = None
        """In a persistent matmul (persistent_matmul.py), the `CrossTilePrefetch` its k loop
        issues the next tile's first copies through (warpgroup_loop.py)."""

    # -- intrinsics and shared memory -----------------------------------------------------

    def call(self, name: str, args: Sequence[SSAValue], types=None) -> SSAValue | None:
        signature = types or INTRINSIC_TYPES[name]
        self.intrinsics[name] = signature
        return self.emit(func.CallOp(name, list(args), list(signature[1])))

    def inline_ptx(self, instruction: str, operands: Sequence[SSAValue], results: int = 0,
                   result_type: Attribute = i32) -> list[SSAValue]:
        """The PTX `instruction` (a name of the NVVM translation's INLINE_PTX table) on
        `operands`, as a call of @ptx.<instruction>; its `results` results of `result_type`."""
        signature = (tuple(v.type for v in operands), (result_type,) * results)
        call = self.call(INLINE_PTX_PREFIX + instruction, operands, signature)
        return list(call.owner.results) if results else []

    def special_register(self, name: str) -> SSAValue:
        value = self.call(f"{NVVM_PREFIX}read.ptx.sreg.{name}", [])
        value.name_hint = name.split(".")[0]
        return self.emit(arith.IndexCastOp(value, IndexType()))

    def shared_alloca(self, shape: Sequence[int], element_type: Attribute, dynamic: bool = False) -> SSAValue:
        """A shared-memory buffer: static, or (`dynamic`, or where static shared memory would
        pass its 48 KiB) at the next 16-byte aligned offset of the kernel's dynamic shared
        memory, which is launched with its size (up to DYNAMIC_SHARED_LIMIT in all)."""
        size = prod(shape) * element_bytes(element_type)
        dynamic = dynamic or self.shared_bytes + size > SHARED_BYTES_LIMIT
        alloca = memref.AllocaOp.get(element_type, 16, shape, memory_space=IntegerAttr(SHARED_MEMORY_SPACE, i64))
        if dynamic:
            alloca.attributes["gpu.dynamic_offset"] = IntegerAttr(self.dynamic_shared_bytes, i64)
            self.dynamic_shared_bytes += -(-size // 16) * 16
        else:
            self.shared_bytes += size
        return self.at_entry(alloca)

    @staticmethod
    def is_shared(buffer: SSAValue) -> bool:
        space = buffer.type.memory_space if isinstance(buffer.type, MemRefType) else None
        return isinstance(space, IntegerAttr) and space.value.data == SHARED_MEMORY_SPACE

    # -- kernel structure ---------------------------------------------------------------

    def lower(self) -> func.FuncOp:
        kernel = self.kernel
        begin, end = self.bind_arguments()
        self.barriers.ordered_buffers = {self.values[b] for b in ordered_buffers(kernel)}
        block = self.add(begin, self.special_register("ctaid.x"))
        self.thread = self.special_register("tid.x")
        self.threads = self.index(self.block_size)
        self.lower_tiles(block, end)
        self.emit(func.ReturnOp())
        self.drop_unread_shared()
        limit = self.shared_limit()
        if self.shared_bytes + self.dynamic_shared_bytes > limit:
            raise StrataError(
                f"lower-tile-to-gpu: kernel @{kernel.sym_name.data} needs {self.shared_bytes} bytes of static and "
                f"{self.dynamic_shared_bytes} of dynamic shared memory (limit {limit} in all): "
                "use fewer stages (lower-tile-to-gpu{mma_stages=...}) or smaller tiles "
                "(lower-graph-to-tile{tile_elements=... matmul_m=... matmul_n=... matmul_k=...})"
            )
        function = func.FuncOp(kernel.sym_name.data, (list(self.entry.arg_types), []), Region(self.entry))
        function.attributes["gpu.kernel"] = UnitAttr()
        function.attributes["gpu.block_size"] = IntegerAttr(self.block_size, i64)
        function.attributes["gpu.shared_bytes"] = IntegerAttr(self.shared_bytes, i64)
        if self.dynamic_shared_bytes:
            function.attributes["gpu.dynamic_shared_bytes"] = IntegerAttr(self.dynamic_shared_bytes, i64)
        function.attributes["gpu.barriers"] = IntegerAttr(self.barriers.count, i64)
        if self.warpgroup_mma_used:
            function.attributes[WARPGROUP_MMA] = UnitAttr()
        if self.status_argument is not None:
            function.attributes["gpu.status"] = UnitAttr()
            function.attributes["tile.error"] = StringAttr("; ".join(self.error_messages))
        self.carry_kernel_attributes(function)
        return function

    def lower_tiles(self, block: SSAValue, end: SSAValue) -> None:
        """The kernel body for grid point `block`: one tile per block (persistent_matmul.py
        loops over several)."""
        self.bind_program_ids(block)
        self.lower_body()

    def shared_limit(self) -> int:
        """Shared memory the kernel may take in all: sm_90's where it runs the warpgroup mma."""
        return WARPGROUP_SHARED_LIMIT if self.warpgroup_mma_used else DYNAMIC_SHARED_LIMIT

    def stages_unpaired_epilogue(self, layout, stores: list[Store]) -> bool:
        """Whether an accumulator epilogue of 16-bit results whose rows cannot take paired
        stores (an odd row length: GPT-2's [tokens, 50257] logits) goes through shared
        memory, where there is room: from the fragment layout each lane would store lone
        16-bit elements 4 bytes apart, a warp touching eight rows at once (the logits matmul
        ran at 218 TFLOP/s against 503 for the same k with paired stores); from shared memory
        the block stores whole rows, consecutive lanes on consecutive elements."""
        if epilogue.pairs_apply(layout, stores, self.is_shared) or self.stages_shifted_rows(layout, stores):
            return False
        sizes = [prod(op.tile.type.get_shape()) * element_bytes(op.tile.type.element_type) for op, _, _ in stores]
        return all(
            isinstance(op.tile.type.element_type, BFloat16Type | Float16Type) and not self.is_shared(part.buffer)
            for op, part, _ in stores
        ) and self.shared_bytes + self.dynamic_shared_bytes + sum(sizes) + 16 * len(sizes) <= self.shared_limit()

    def stages_row_chunks(self, layout, stores: list[Store]) -> bool:
        """Whether a warpgroup matmul's epilogue goes through shared memory and out in
        16-byte chunks of rows (row_stores.py), where its rows allow and there is room."""
        return self.stages_warpgroup_epilogue(row_stores.rows_apply(layout, stores, self.is_shared), layout, stores)

    def stages_shifted_rows(self, layout, stores: list[Store]) -> bool:
        """Whether a warpgroup matmul's 16-bit epilogue whose rows do not start 16 bytes
        aligned goes out in the global 16-byte chunks its rows cover (shifted_rows.py)."""
        return self.stages_warpgroup_epilogue(shifted_rows.shifted_rows_apply(layout, stores, self.is_shared), layout,
                                              stores)

    def stages_warpgroup_epilogue(self, applies: bool, layout, stores: list[Store]) -> bool:
        """Whether a staged epilogue path that `applies` is taken: in a warpgroup matmul, with
        no store that tokens order before a load of this kernel, and room for the staged tiles."""
        return (
            applies and self.warpgroup_mma_used
            and not any(part.buffer in self.barriers.ordered_buffers for _, part, _ in stores)
            and self.shared_bytes + self.dynamic_shared_bytes + row_stores.staging_bytes(layout, stores) <= self.shared_limit()
        )  # fmt: skip

    def drop_unread_shared(self) -> None:
        """Erases static shared buffers that are only written (the shared row of results a
        row-lane reduction keeps for readers that all took the register instead), and the
        guards their stores leave empty."""
        for alloca in [op for op in self.entry.ops if isinstance(op, memref.AllocaOp)]:
            uses = [use.operation for use in alloca.memref.uses]
            if "gpu.dynamic_offset" in alloca.attributes or not self.is_shared(alloca.memref):
                continue
            if not all(isinstance(use, memref.StoreOp) and use.memref is alloca.memref for use in uses):
                continue
            for store in uses:
                guard = store.parent_op()
                store.detach()
                store.erase()
                if isinstance(guard, scf.IfOp) and not guard.results and all(
                    isinstance(op, scf.YieldOp) for region in guard.regions for block in region.blocks for op in block.ops
                ):
                    guard.detach()
                    guard.erase()
            self.shared_bytes -= prod(alloca.memref.type.get_shape()) * element_bytes(alloca.memref.type.element_type)
            alloca.detach()
            alloca.erase()

    def lower_body(self) -> None:
        """The kernel's code after its prologue: its body, op by op."""
        self.lower_region(self.kernel.body.block)

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

    def bind_program_ids(self, flat: SSAValue) -> None:
        """Row-major program ids, except for a kernel with tile.mma over a grid of more than
        GROUPED_ROWS tile rows and at least 2 tile columns: its blocks run in groups of
        GROUPED_ROWS tile rows, column by column within a group, so the blocks resident at
        one time read a few row panels of a and column panels of b, which then stay in L2.
        Batch axes count as more tile rows (batch-major): GPT-2's logits, [8, 1024, 768] @
        wᵀ with w shared, are 8 x 8 tile rows that each swept all of w's 77 MB when only a
        matrix's own rows were grouped."""
        self.program_ids = self.program_ids_at(flat)

    def program_ids_at(self, flat: SSAValue) -> list[SSAValue]:
        """The program ids of grid point `flat` in bind_program_ids' order."""
        grid = self.kernel.grid_shape()
        has_mma = any(isinstance(op, tile.MmaOp) for op in self.kernel.walk())
        rows = prod(grid[:-1])
        if not has_mma or len(grid) < 2 or rows <= GROUPED_ROWS or grid[-1] < 2:
            return self.delinearize(flat, grid, wrap=True)
        columns = grid[-1]
        position = self.emit(arith.RemUIOp(flat, self.index(rows * columns)))
        per_group = self.index(GROUPED_ROWS * columns)
        first_row = self.mul(self.emit(arith.DivUIOp(position, per_group)), self.index(GROUPED_ROWS))
        group_rows = self.emit(arith.MinUIOp(self.emit(arith.SubiOp(self.index(rows), first_row)), self.index(GROUPED_ROWS)))
        in_group = self.emit(arith.RemUIOp(position, per_group))
        row = self.add(first_row, self.emit(arith.RemUIOp(in_group, group_rows)))
        column = self.emit(arith.DivUIOp(in_group, group_rows))
        return [*self.delinearize(row, grid[:-1], wrap=True), column]

    # -- lazy tiles and deferred stores ------------------------------------------------

    def read(self, value: Tile, indices) -> SSAValue:
        """An element of `value`, noting the access where barriers depend on it. Elements of
        loaded, mapped and partials tiles are computed once for the code being built."""
        if isinstance(value, BufferTile) and self.is_shared(value.buffer):
            self.note_read(value.buffer, indices)
        elif isinstance(value, LoadedTile) and value.buffer in self.barriers.ordered_buffers:
            self.note_read(value.buffer, ())
        if isinstance(value, RegisterTile):
            if self.cell is None or self.cell[0] != value.layout:
                raise StrataError(f"lower-tile-to-gpu: @{self.kernel.sym_name.data}: a register tile read off its cells")
            return value.values[self.cell[1]]
        if not isinstance(value, PartialsTile | LoadedTile | MappedTile):
            return super().read(value, indices)
        key = self.keys.element_key(value, indices)
        if key not in self.element_cache:
            if isinstance(value, PartialsTile):
                self.element_cache[key] = value.combine_partials(self, indices)
            else:
                self.element_cache[key] = super().read(value, indices)
        return self.element_cache[key]

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

    def flush_stores(self) -> None:
        """Emits the deferred stores, one thread loop per tile position."""
        groups: dict[tuple, list[Store]] = {}
        for store in self.pending_stores:
            op, partition, _ = store
            key = (partition.tile_shape, tuple(partition.view.get_shape()), tuple(op.indices))
            groups.setdefault(key, []).append(store)
        self.pending_stores = []
        for stores in groups.values():
            self.store_group(stores)

    def store_group(self, stores: list[Store]) -> None:
        """Stores of one tile position: every value is computed before the first store (an
        in-place kernel reads what it overwrites)."""
        first_op, partition, _ = stores[0]
        extents = self.valid_extents(partition, self.origin(partition, first_op.indices))
        origins = [self.origin(part, op.indices) for op, part, _ in stores]
        registers = [r for r in (register_tile_in(v) for _, _, v in stores) if r is not None]
        if registers and (not (
            all(r.layout == registers[0].layout for r in registers)
            and tuple(partition.tile_shape) == registers[0].layout.shape
        ) or self.stages_unpaired_epilogue(registers[0].layout, stores)):
            stores = [
                (op, part, self.spill(v, op.tile.type.get_shape(), op.tile.type.element_type) if register_tile_in(v) else v)
                for op, part, v in stores
            ]
            registers = []

        def store_all(indices: list[SSAValue]) -> None:
            values = [self.read(value, indices) for _, _, value in stores]
            for (_, part, _), element, origin in zip(stores, values, origins):
                offset = self.element_offset(part.view, origin, indices)
                if part.buffer in self.barriers.ordered_buffers:
                    self.note_write(part.buffer, indices, None)
                store = memref.StoreOp.get(element, part.buffer, [offset])
                self.effect(lambda store=store: self.emit(store))

        if registers and self.stages_row_chunks(registers[0].layout, stores):
            row_stores.store_rows(self, registers[0].layout, stores, extents, origins)
        elif registers and self.stages_shifted_rows(registers[0].layout, stores):
            shifted_rows.store_shifted_rows(self, registers[0].layout, stores, extents, origins)
        elif registers and epilogue.pairs_apply(registers[0].layout, stores, self.is_shared):
            code, accesses = self.block_code(lambda: epilogue.store_pairs(self, registers[0].layout, stores, extents, origins))
            self.place_inline(code, accesses)
        elif registers:
            # An epilogue of an accumulator in registers: each thread stores its own cells.
            code, accesses = self.block_code(lambda: self.for_each_cell(registers[0].layout, extents, store_all))
            self.place_inline(code, accesses)
        else:
            self.thread_loop(partition.tile_shape, extents, store_all)
        for _, part, _ in stores:
            self.keys.note_stored(part.buffer)


def _deferred_store(k: GpuKernelLowering, op: tile.StoreViewTkoOp) -> None:
    partition: Partition = k.values[op.view]
    k.pending_stores.append((op, partition, k.tile_of(op.tile)))
    k.values[op.result_token] = None


def _scatter_add(k: GpuKernelLowering, op: tile.ScatterAddTkoOp) -> None:
    """Each element of the valid extent added into its picked row atomically (`atom.global.add`)
    by the thread the thread loop gives it, after this kernel's pending stores (token order)."""
    k.flush_stores()
    buffer, extents, added = k.scatter_target(op)

    def add(indices: list[SSAValue]) -> None:
        element, offset = added(indices)
        if buffer in k.barriers.ordered_buffers:
            k.note_write(buffer, indices, None)
        k.effect(lambda: k.emit(atomic_add(element, buffer, offset)))

    k.thread_loop(op.tile.type.get_shape(), extents, add)
    k.keys.note_stored(buffer)
    k.values[op.result_token] = None


def _lazy_map(k: GpuKernelLowering, op: tile.MapOp) -> None:
    """Never materialized: each element is computed once per region where it is read
    (the element cache), however many uses the map has."""
    k.values[op.result] = mapped_tile(k, op)


def _load(k: GpuKernelLowering, op: tile.LoadViewTkoOp) -> None:
    """A load of a buffer that tokens order after a store of this kernel first has the
    pending stores emitted (the bookkeeping then sees their writes before its reads)."""
    if k.values[op.view].buffer in k.barriers.ordered_buffers:
        k.flush_stores()
    LOWERINGS[tile.LoadViewTkoOp](k, op)
    k.keys.note_load(k.values[op.result], op.view, [k.values[i] for i in op.indices])


GPU_LOWERINGS: dict[type[Operation], Callable[[GpuKernelLowering, Operation], None]] = {
    tile.StoreViewTkoOp: _deferred_store,
    tile.ScatterAddTkoOp: _scatter_add,
    tile.MapOp: _lazy_map,
    tile.LoadViewTkoOp: _load,
}
"""GPU-specific lowerings; reductions and loops are added by ops.py, mma by mma.py."""

REGISTER_CONSUMERS = (tile.MapOp, tile.StoreViewTkoOp, tile.MmaOp)
"""Ops that take an expression over a register tile as it is (others get it spilled)."""

DEFERRABLE = (
    tile.StoreViewTkoOp, tile.MapOp, tile.LoadViewTkoOp, tile.BroadcastOp, tile.IotaOp,
    tile.GatherOp, tile.MakeTensorViewOp, tile.MakePartitionViewOp, tile.ProgramIdOp,
    token.MakeOp, token.JoinOp, arith.ConstantOp,
)  # fmt: skip
"""Ops that neither touch memory nor materialize a tile: pending stores may move past them."""


def argument_views(kernel: tile.KernelOp) -> dict[SSAValue, TensorViewType]:
    """The view each of the kernel's buffer arguments is made into (tile.make_tensor_view):
    what a marked kernel's own lowering reads its operands' shapes and strides from."""
    return {op.buffer: op.result.type for op in kernel.body.block.ops if isinstance(op, tile.MakeTensorViewOp)}


def intrinsic_declarations(intrinsics: dict[str, tuple]) -> list[func.FuncOp]:
    return [
        func.FuncOp(name, (list(inputs), list(outputs)), Region(), visibility="private")
        for name, (inputs, outputs) in sorted(intrinsics.items())
    ]


def gpu_kernels(module: ModuleOp) -> list[func.FuncOp]:
    """The GPU kernel functions of a lowered module (they carry gpu.kernel)."""
    return [f for f in module.ops if isinstance(f, func.FuncOp) and "gpu.kernel" in f.attributes]

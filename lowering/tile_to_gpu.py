"""`lower-tile-to-gpu`: elementwise tile.kernels become GPU kernel functions (first slice of issue 7).

Input: the tile level (`fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile,
token-dce`). Every tile.kernel must be *elementwise*: only tensor/partition views, tile loads,
`tile.map`, tile stores, tokens and scalar arith/math. Anything else (tile.mma, tile.reduce,
tile.broadcast, tile.iota, tile.gather, tile.check, scf.for: matmul, reductions, softmax and
norms, attention, embedding, dropout, cross-entropy) raises a StrataError naming the kernel
and the op: not on the GPU yet.

Before (see lower-tile-to-loops for the full tile form):

    tile.kernel @k(%a: memref<7000xf32>, %c: memref<7000xf32>) attributes {grid = array<i64: 2, 1>} {
      ... %x = tile.load_view_tko ... %y = tile.map %x {...} ... tile.store_view_tko %y ...
    }

After: one function per kernel; the tile grid is the CUDA grid (one block per tile, a 1-D
grid of prod(grid) blocks, `begin + ctaid.x` delinearized row-major into the program ids) and the
threads of a block split the tile's elements with a thread-strided loop:

    func.func private @llvm.nvvm.read.ptx.sreg.ctaid.x() -> i32     // + tid.x, ntid.x
    func.func @k(%a: memref<7000xf32>, %c: memref<7000xf32>, %begin: index, %end: index)
        attributes {gpu.kernel, gpu.block_size = 256 : i64, tile.grid = array<i64: 2, 1>} {
      %ctaid = func.call @llvm.nvvm.read.ptx.sreg.ctaid.x() : () -> i32   // → index
      %block = arith.addi %begin, %ctaid                                 // flat grid point
      %tid   = func.call @llvm.nvvm.read.ptx.sreg.tid.x() : () -> i32
      %ntid  = func.call @llvm.nvvm.read.ptx.sreg.ntid.x() : () -> i32
      // program ids from %block; valid extent of the edge tile: min(tile, size - origin)
      scf.for %e = %tid to %tile_elements step %ntid {
        %j = arith.remui %e, %c1024 ; %i = arith.divui %e, %c1024    // last axis fastest
        %in = arith.cmpi ult, %j, %cols ...                          // only partial axes
        scf.if %in { <loads, map bodies> ... memref.store ... }
      }
      func.return
    }

Design notes:
- **Thread and block ids** are `func.call`s to private declarations named after the NVVM
  intrinsics (`llvm.nvvm.read.ptx.sreg.{tid,ntid,ctaid}.x`, i32 results); loops-to-nvvm
  declares them as LLVM functions, so the calls *are* the intrinsic calls. No new dialect.
- **Thread loop**: consecutive threads take consecutive flat elements of the tile, the last
  tile axis fastest, so a warp reads and writes contiguous memory along the contiguous axis
  (coalesced). The loop runs over the tile's static element count (tile dims are powers of
  two: the index arithmetic is shifts and masks) and a bounds predicate (`scf.if`) keeps the
  valid extent of edge tiles; on full axes there is no predicate.
- **All stores of a kernel** that share a partition shape and position run in the same thread
  loop; within one element each load and map body is evaluated once (a per-element cache)
  and every value is computed before the first store, so a kernel the memory planner runs in
  place (output over a dying input) still reads the input first. Nothing is materialized: no
  per-thread stack tiles, no shared memory.
- **No barriers** are needed: every element is read and written by the same thread. Barriers
  placed from token dependencies arrive with tiles that cross threads (reductions, mma,
  shared-memory staging); tokens carry no runtime value here.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    ModuleOp,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from strata.dialects import tile, token
from strata.errors import StrataError
from strata.lowering.tile_to_loops import (
    LOWERINGS,
    KernelLowering,
    LoadedTile,
    MappedTile,
    Partition,
    Tile,
)

GPU_PIPELINE_STEPS = (
    "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile,token-dce,"
    "lower-tile-to-gpu,plan-memory,verify-memory-plan"
)
"""The CUDA path from graph to GPU kernels plus the memory plan (runtime/cuda.py, strata-translate)."""

DEFAULT_BLOCK_SIZE = 256
SREG_PREFIX = "llvm.nvvm.read.ptx.sreg."
SPECIAL_REGISTERS = ("ctaid.x", "tid.x", "ntid.x")

ELEMENTWISE_OPS = (
    tile.ProgramIdOp,
    tile.MakeTensorViewOp,
    tile.MakePartitionViewOp,
    tile.LoadViewTkoOp,
    tile.StoreViewTkoOp,
    tile.MapOp,
    tile.ReturnOp,
    token.MakeOp,
    token.JoinOp,
)

WHAT_USES = {
    "tile.mma": "matmul / attention",
    "tile.reduce": "reductions, softmax, norms, cross-entropy",
    "tile.broadcast": "row-wise ops (softmax, norms)",
    "tile.iota": "dropout / causal masks",
    "tile.gather": "embedding",
    "tile.check": "embedding / cross-entropy range checks",
    "scf.for": "multi-pass row kernels and matmul K loops",
}


def check_elementwise(kernel: tile.KernelOp) -> None:
    """Raise a StrataError if `kernel` is not an elementwise kernel of this slice."""
    unsupported: list[str] = []
    for op in kernel.body.walk():
        if op is kernel or isinstance(op, ELEMENTWISE_OPS + (tile.YieldOp, scf.YieldOp)):
            continue
        if op.dialect_name() in ("arith", "math") or op.name in unsupported:
            continue
        unsupported.append(op.name)
    if unsupported:
        names = ", ".join(f"'{n}'" for n in unsupported)
        hints = sorted({WHAT_USES[n] for n in unsupported if n in WHAT_USES})
        used_by = f" ({'; '.join(hints)})" if hints else ""
        raise StrataError(
            f"lower-tile-to-gpu: kernel @{kernel.sym_name.data} is not on the GPU yet: it uses "
            f"{names}{used_by}; the GPU backend lowers only elementwise kernels so far "
            "(elementwise ops, fused elementwise groups, reshape, constants; issue 7)"
        )


def special_register_declarations() -> list[func.FuncOp]:
    return [
        func.FuncOp(SREG_PREFIX + name, ((), (i32,)), Region(), visibility="private")
        for name in SPECIAL_REGISTERS
    ]


class GpuKernelLowering(KernelLowering):
    """One elementwise tile.kernel → one GPU kernel function (see module docstring)."""

    def __init__(self, kernel: tile.KernelOp, block_size: int):
        super().__init__(kernel)
        self.block_size = block_size
        self.pending_stores: list[tuple[tile.StoreViewTkoOp, Partition, Tile]] = []
        self.element_cache: dict[tuple[int, tuple[SSAValue, ...]], SSAValue] = {}

    def special_register(self, name: str) -> SSAValue:
        call = self.emit(func.CallOp(SREG_PREFIX + name, [], [i32]))
        call.name_hint = name.split(".")[0]
        return self.emit(arith.IndexCastOp(call, IndexType()))

    def lower(self) -> func.FuncOp:
        kernel = self.kernel
        body = kernel.body.block
        # Like the CPU kernels, a [begin, end) range of the flattened grid trails the
        # buffers (tile.launch's verifier expects it): block b runs grid point begin + b,
        # and the runtime launches end - begin blocks.
        begin, _ = self.bind_arguments()
        block = self.add(begin, self.special_register("ctaid.x"))
        self.thread = self.special_register("tid.x")
        self.threads = self.special_register("ntid.x")
        self.bind_program_ids(block)
        for op in body.ops:
            self.lower_op(op)
        self.emit_stores()
        self.emit(func.ReturnOp())
        function = func.FuncOp(kernel.sym_name.data, (list(self.entry.arg_types), []), Region(self.entry))
        function.attributes["gpu.kernel"] = UnitAttr()
        function.attributes["gpu.block_size"] = IntegerAttr(self.block_size, i64)
        self.carry_kernel_attributes(function)
        return function

    def lower_op(self, op: Operation) -> None:
        handler = GPU_LOWERINGS.get(type(op))
        if handler is not None:
            handler(self, op)
        else:
            super().lower_op(op)

    def read(self, value: Tile, indices) -> SSAValue:
        """Each load and map body once per element (a map read by two stores or twice in
        one expression is not recomputed)."""
        if not isinstance(value, LoadedTile | MappedTile):
            return super().read(value, indices)
        key = (id(value), tuple(indices))
        if key not in self.element_cache:
            self.element_cache[key] = super().read(value, indices)
        return self.element_cache[key]

    def emit_stores(self) -> None:
        groups: dict[tuple, list[tuple[tile.StoreViewTkoOp, Partition, Tile]]] = {}
        for store in self.pending_stores:
            op, partition, _ = store
            key = (partition.tile_shape, tuple(partition.view.get_shape()), tuple(op.indices))
            groups.setdefault(key, []).append(store)
        for stores in groups.values():
            self.emit_store_group(stores)

    def emit_store_group(self, stores) -> None:
        first_op, partition, _ = stores[0]
        origin = self.origin(partition, first_op.indices)
        extents = self.valid_extents(partition, origin)
        store_origins = [self.origin(part, op.indices) for op, part, _ in stores]
        shape = partition.tile_shape
        loop = Block(arg_types=[IndexType()])
        outer, self.cursor = self.cursor, loop
        # Row-major delinearization by the static tile shape: last axis fastest.
        rest, indices = loop.args[0], []
        for axis in reversed(range(len(shape))):
            if axis == 0:
                indices.insert(0, rest)
            else:
                size = self.index(shape[axis])
                indices.insert(0, self.emit(arith.RemUIOp(rest, size)))
                rest = self.emit(arith.DivUIOp(rest, size))
        inside = None
        for axis, (index, extent) in enumerate(zip(indices, extents)):
            full = partition.view.get_shape()[axis] % shape[axis] == 0
            if not full:
                check = self.emit(arith.CmpiOp(index, extent, "ult"))
                inside = check if inside is None else self.emit(arith.AndIOp(inside, check))
        if inside is not None:
            guarded = Block()
            self.emit(scf.IfOp(inside, [], Region(guarded)))
            self.cursor = guarded
        self.element_cache = {}
        values = [self.read(value, indices) for _, _, value in stores]
        for (_, part, _), element, store_origin in zip(stores, values, store_origins):
            offset = self.element_offset(part.view, store_origin, indices)
            self.emit(memref.StoreOp.get(element, part.buffer, [offset]))
        self.element_cache = {}
        if inside is not None:
            self.emit(scf.YieldOp())
        self.cursor = loop
        self.emit(scf.YieldOp())
        self.cursor = outer
        count = self.index(prod(shape))
        self.emit(scf.ForOp(self.thread, count, self.threads, [], Region(loop)))


def _deferred_store(k: GpuKernelLowering, op: tile.StoreViewTkoOp) -> None:
    partition: Partition = k.values[op.view]
    k.pending_stores.append((op, partition, k.tile_of(op.tile)))
    k.values[op.result_token] = None


def _lazy_map(k: GpuKernelLowering, op: tile.MapOp) -> None:
    """Never materialized: the per-element cache shares a map read twice."""
    inputs = [k.tile_of(v) for v in op.inputs]
    k.values[op.result] = MappedTile(op, inputs, [])


GPU_LOWERINGS = {
    tile.StoreViewTkoOp: _deferred_store,
    tile.MapOp: _lazy_map,
}
assert all(op in LOWERINGS for op in ELEMENTWISE_OPS)


@dataclass(frozen=True)
class LowerTileToGpuPass(ModulePass):
    """Replace every (elementwise) tile.kernel by a GPU kernel function (see module docstring)."""

    name = "lower-tile-to-gpu"

    block_size: int = DEFAULT_BLOCK_SIZE

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.block_size < 32 or self.block_size > 1024 or self.block_size % 32:
            raise StrataError(
                f"lower-tile-to-gpu: block_size must be a multiple of 32 in [32, 1024], got {self.block_size}"
            )
        kernels = [k for k in op.ops if isinstance(k, tile.KernelOp)]
        for kernel in kernels:
            check_elementwise(kernel)
        if kernels and not any(
            isinstance(f, func.FuncOp) and f.sym_name.data.startswith(SREG_PREFIX) for f in op.ops
        ):
            for declaration in special_register_declarations():
                op.body.block.add_op(declaration)
        for kernel in kernels:
            function = GpuKernelLowering(kernel, self.block_size).lower()
            op.body.block.insert_op_after(function, kernel)
            op.body.block.erase_op(kernel)


def gpu_kernels(module: ModuleOp) -> list[func.FuncOp]:
    """The GPU kernel functions of a lowered module (they carry gpu.kernel)."""
    return [f for f in module.ops if isinstance(f, func.FuncOp) and "gpu.kernel" in f.attributes]

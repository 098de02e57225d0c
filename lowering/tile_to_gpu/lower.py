"""`lower-tile-to-gpu`: every tile.kernel becomes a GPU kernel function.

Input: the tile level (`fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile,
token-dce`). Output: loops-level functions (scf/memref/arith/math/func) marked `gpu.kernel`,
which the NVVM translation (lowering/nvvm/translate.py) turns into NVVM IR.

Before (see lower-tile-to-loops for the full tile form):

    tile.kernel @k(%a: memref<561xf32>, %c: memref<561xf32>) attributes {grid = array<i64: 1>} {
      ... %x = tile.load_view_tko ... %m = tile.reduce %x {axes = array<i64: 1>, kind = "max"}
      ... %y = tile.map %x, (tile.broadcast %m) {...} ... tile.store_view_tko %y ...
    }

After: one function per kernel; one CUDA block per grid point (`begin + ctaid.x`,
delinearized row-major into the program ids), and the block's threads cooperate on each tile
(here a 32x64 tile: lane groups of 8 threads per row for the reduction, then straight-line
code for the 8 elements each thread stores):

    func.func @k(%a: memref<561xf32>, %c: memref<561xf32>, %begin: index, %end: index)
        attributes {gpu.kernel, gpu.block_size = 256 : i64, gpu.shared_bytes = 128 : i64, ...} {
      %m = memref.alloca() : memref<32x1xf32, 3>                    // shared memory
      %tid = func.call @llvm.nvvm.read.ptx.sreg.tid.x() : () -> i32   // + ctaid.x
      scf.for %o = ... {                                             // reduce: 8 lanes per row
        %p = scf.for %r = %lane to %c64 step %c8 iter_args(...) { <load, max> }
        %s = func.call @llvm.nvvm.shfl.sync.bfly.f32(%full, %p, %c4, %c31)  // + 2, 1
        scf.if %lane_is_0 { memref.store %s, %m[...] }
      }
      func.call @llvm.nvvm.barrier0() : () -> ()                     // %m crosses threads
      <element tid + 256 k, k = 0..7: loads, map, memref.load %m; scf.if inside { store }>
      func.return
    }

How tiles map to threads:
- **Lazy tiles.** Loads, maps, broadcasts, iota and gathers are never materialized: thread t
  evaluates a tile expression at elements t, t + block, ... (last tile axis fastest, so a
  warp touches contiguous memory). With at most UNROLL_LIMIT elements per thread this is
  straight-line code whose element values stay available to the rest of the region (loads
  of one tile position and maps with the same body share them: see `thread_loop` in
  threads.py and element_keys.py); otherwise a thread loop. All stores of a kernel that
  share a tile position are emitted together and compute every value before the first
  store (in-place kernels: `store_group` in kernel.py).
- **Shared-memory tiles** (`memref.alloca` in memory space 3): reduction partials and
  results, loop-carried tiles, mma operands. Their writes are cooperative.
- **Reductions** (`tile.reduce`, ops.py): over rows at least a block long, each thread
  folds its elements, a `shfl.sync.bfly` butterfly combines the warp and the warps'
  partials stay in shared memory until read (`PartialsTile`); otherwise each output element
  gets a group of G lanes (a power of two, G = block / outputs, at most the reduced extent)
  that fold strided slices, combine within the warp, and across warps in a scratch row.
- **mma** (mma.py): a and b are staged k-major in shared memory; each thread owns an
  RM x RN micro-tile of the accumulator (`MicroTiles`), kept in registers through the
  kernel's k loop and the epilogue (`RegisterTile`), and runs the k loop with `fma`.
  bf16/f16 operands run on tensor cores instead (`mma.sync` fragments, fragments.py and
  tensor_cores.py; a cp.async-pipelined k loop for aligned operands, tensor_core_loop.py).
- **Barriers** (barriers.py) are placed from the dependencies between accesses, not after
  every write. Every shared access is recorded with its thread mapping: *owned* when the
  thread touches exactly its own element of a tile of the code's shape (so the same thread
  wrote it), else *crossing*. A barrier goes in front of the first access that reads what another thread
  wrote (RAW) or writes what another thread read or wrote (WAR/WAW), at the uniform level,
  and one barrier settles every pending access; a loop body ends with one when what is
  pending conflicts with the next iteration's first accesses. Global memory joins this
  bookkeeping only where tokens order it: a buffer loaded with a token that follows a store
  to that buffer (`ordered_buffers`) has its stores and loads checked like shared ones.
  `{barriers = "naive"}` instead puts a barrier after every piece of block code that writes
  (shared, or token-ordered global) memory, and before it when anything is pending, for
  comparison (FileCheck).
- **Marked kernels** keep their meaning in their body but are lowered whole by kernels of
  their own: flash attention forward and backward (`tile.flash_attention`,
  `tile.flash_attention_grad`) and softmax rows held in shared memory
  (`tile.resident_softmax`, resident_rows.py).
- **tile.check** stores 1 into a trailing `memref<1xi32>` status argument (the runtime
  raises the kernel's `tile.error` message); execution continues with clamped indices, so
  that no thread leaves early and no barrier is skipped: a `bar.sync` that not all threads
  of the block reach deadlocks or is undefined.

Shared memory per kernel is limited to 48 KiB (static shared memory); a kernel that needs
more is reported with its name and size.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from strata.dialects import tile
from strata.lowering.tile_to_gpu import (
    flash_attention,
    flash_attention_grad,
    flash_attention_grad_wgmma,
    flash_attention_wgmma,
    persistent_matmul,
    resident_rows,
    warpgroup_loop,
)
# ops and mma are imported for their registrations in GPU_LOWERINGS.
from strata.lowering.tile_to_gpu import mma, ops  # noqa: F401
from strata.lowering.tile_to_gpu.kernel import (
    DEFAULT_BLOCK_SIZE,
    DEFAULT_MMA_BLOCK_SIZE,
    DEFAULT_MMA_STAGES,
    GpuKernelLowering,
    intrinsic_declarations,
)
from strata.lowering.tile_to_gpu.threads import WARP
from strata.support.errors import StrataError


@dataclass(frozen=True)
class LowerTileToGpuPass(ModulePass):
    """Replace every tile.kernel by a GPU kernel function (see module docstring)."""

    name = "lower-tile-to-gpu"

    block_size: int = DEFAULT_BLOCK_SIZE
    mma_block_size: int = DEFAULT_MMA_BLOCK_SIZE
    """Threads of a kernel with tile.mma: fewer threads, larger register micro-tiles."""
    mma_stages: int = DEFAULT_MMA_STAGES
    """Shared-memory stages of a tensor-core matmul's cp.async k loop (2 to 8; fewer where
    they would not fit DYNAMIC_SHARED_LIMIT)."""
    tf32: bool = False
    """f32 matmuls on tensor cores as TF32 (operands rounded to 10 mantissa bits, f32
    accumulation): faster, less precise; off unless asked for (strata.compile(allow_tf32=True))."""
    warpgroup_mma: bool = False
    """16-bit matmuls with 64 or 128-row, 64-deep tiles on sm_90's warpgroup mma (wgmma,
    warpgroup_loop.py; two threads per output row), the flash-attention forward of heads
    32 to 256 and its backward where every head is the same, 32 to 128 (flash_attention_wgmma.py,
    flash_attention_grad_wgmma.py); the PTX is then for sm_90a only."""
    attention_p16: bool = False
    """The flash kernel rounds its probabilities p to the inputs' 16-bit type before p v, as
    FlashAttention does: half the p v products, p to 8 (bf16) or 11 (f16) bits instead of
    16 or 22; off unless asked for (strata.compile(allow_16bit_attention_p=True))."""
    tensor_maps: bool = False
    """The warpgroup flash forward copies q, k and v through tensor maps (one thread's
    cp.async.bulk.tensor per strip, tensor_maps.py) rather than every thread's cp.async,
    where their views allow it; the CUDA runtime encodes the maps."""
    persistent_matmuls: bool = True
    """Warpgroup matmuls whose blocks loop over tiles, copying the next tile's first k steps
    during this tile's last (persistent_matmul.py); false: one tile per block."""
    barriers: str = "tracked"
    """"tracked" (from access dependencies) or "naive" (around every block code that writes)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for option, size in (("block_size", self.block_size), ("mma_block_size", self.mma_block_size)):
            if size < WARP or size > 1024 or size & (size - 1):
                raise StrataError(f"lower-tile-to-gpu: {option} must be a power of two in [32, 1024], got {size}")
        if not 2 <= self.mma_stages <= 8:
            raise StrataError(f"lower-tile-to-gpu: mma_stages must be in [2, 8], got {self.mma_stages}")
        if self.barriers not in ("tracked", "naive"):
            raise StrataError(f"lower-tile-to-gpu: barriers must be 'tracked' or 'naive', got '{self.barriers}'")
        declared = {f.sym_name.data for f in op.ops if isinstance(f, func.FuncOp)}
        needed: dict[str, tuple] = {}
        for kernel in [k for k in op.ops if isinstance(k, tile.KernelOp)]:
            has_mma = any(isinstance(inner, tile.MmaOp) for inner in kernel.walk())
            threads = self.mma_block_size if has_mma else self.block_size
            warpgroup_threads = self.warpgroup_mma and has_mma and warpgroup_loop.warpgroup_threads(kernel, self.tf32)
            options = (self.barriers == "naive", self.mma_stages, self.tf32)
            if flash_attention.MARK in kernel.attributes:
                wgmma = self.warpgroup_mma and flash_attention_wgmma.takes(kernel)
                flash = flash_attention_wgmma.WarpgroupFlashLowering if wgmma else flash_attention.FlashAttentionLowering
                extra = {"tensor_maps": self.tensor_maps} if wgmma else {}
                lowering = flash(kernel, *options, p16=self.attention_p16, **extra)
            elif flash_attention_grad.MARK in kernel.attributes:
                wgmma = self.warpgroup_mma and flash_attention_grad_wgmma.takes(kernel)
                grad = flash_attention_grad_wgmma.WarpgroupFlashGradLowering if wgmma else flash_attention_grad.FlashAttentionGradLowering
                lowering = grad(kernel, *options, p16=self.attention_p16)
            elif resident_rows.RESIDENT_MARK in kernel.attributes:
                lowering = resident_rows.ResidentSoftmaxLowering(kernel, *options)
            elif warpgroup_threads:
                persistent = self.persistent_matmuls and persistent_matmul.takes(kernel)
                matmul = persistent_matmul.PersistentMatmulLowering if persistent else GpuKernelLowering
                lowering = matmul(kernel, warpgroup_threads, *options, warpgroup_mma=True)
            else:
                lowering = GpuKernelLowering(kernel, threads, *options)
            function = lowering.lower()
            needed.update(lowering.intrinsics)
            op.body.block.insert_op_after(function, kernel)
            op.body.block.erase_op(kernel)
        for declaration in intrinsic_declarations({n: t for n, t in needed.items() if n not in declared}):
            op.body.block.add_op(declaration)

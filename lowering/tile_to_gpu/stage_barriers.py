"""Shared-memory stages handed between a block's threads by mbarriers (sm_90).

A pipelined loop copies step b's tiles into stage b % S of S shared stages while the
tensor cores read earlier ones. Instead of a block-wide barrier per step, each stage has
two mbarriers, and the u-th use of a stage is phase u of both:

- full: every thread's copies into the stage have landed (each thread arrives through
  `cp.async.mbarrier.arrive.noinc` once its own copies complete; the count is the block's
  threads);
- empty: every thread is done with the products that read it (`mbarrier.arrive`).

A thread copies step b (b ≥ S) only after phase b / S - 1 of the stage's empty barrier
(try_wait on the other parity passes at once on a fresh barrier), and reads it after phase
b / S of its full one. A thread waits only for the step it uses and for the release of the
stage it refills, so the warpgroups of a block need not run in step.

    thread 0: mbarrier.init (count = block threads) x 2S; bar.sync      (initialize)
    fill(b):    wait empty[b % S] parity (b / S + 1) % 2; cp.async ...;
                cp.async.mbarrier.arrive.noinc full[b % S]
    acquire(b): wait full[b % S] parity (b / S) % 2; fence.proxy.async (wgmma reads
                through the async proxy what cp.async wrote through the generic one)
    release(b): mbarrier.arrive empty[b % S]

With copies by the tensor memory accelerator (tensor_maps.py; `BulkStagePipeline`) one
thread fills a stage: the full barrier counts its one arrival, which also tells the
barrier how many bytes the copies bring (expect_tx), and completes when they have landed.

    fill(b):    (the copying thread) wait empty[b % S] parity (b / S + 1) % 2;
                mbarrier.arrive.expect_tx full[b % S], bytes; cp.async.bulk.tensor ...
    acquire(b): wait full[b % S] parity (b / S) % 2 (the copies wrote through the async
                proxy, which wgmma reads; ldmatrix sees them once the phase completed)
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from strata.lowering.tile_to_gpu.kernel import GpuKernelLowering
from strata.lowering.tile_to_gpu.ops import i32_constant
from strata.lowering.tile_to_gpu.warpgroup_loop import shared_address

MBARRIER_BYTES = 8


def barrier_bytes(stages: int) -> int:
    """Shared bytes of the full and empty mbarriers of `stages` stages (8-byte aligned)."""
    return 2 * stages * MBARRIER_BYTES


class StagePipeline:
    """The module docstring's protocol over `stages` stages, its mbarriers at the shared
    address `barriers` (index, 8-byte aligned, barrier_bytes(stages) long)."""

    def __init__(self, k: GpuKernelLowering, barriers: SSAValue, stages: int, consumers: int | None = None):
        self.k, self.barriers, self.stages = k, barriers, stages
        self.consumers = consumers or k.block_size
        """The threads that release a stage (all of the block's but a producer warpgroup's)."""

    def barrier(self, kind: int, stage: SSAValue) -> SSAValue:
        """The shared address (i32) of mbarrier `kind` (0: full, 1: empty) of `stage`."""
        k = self.k
        first = k.index(kind * self.stages * MBARRIER_BYTES)
        return shared_address(k, k.add(self.barriers, k.add(first, k.mul(stage, k.index(MBARRIER_BYTES)))))

    def fill_arrivals(self) -> int:
        """Arrivals that complete a phase of a full barrier: every thread's, each once its copies landed."""
        return self.k.block_size

    def initialize(self) -> None:
        """Thread 0 sets every barrier's arrival count; the block barrier after it publishes them."""
        k = self.k
        counts = (i32_constant(k, self.fill_arrivals()), i32_constant(k, self.consumers))

        def init() -> None:
            for kind in (0, 1):
                for stage in range(self.stages):
                    k.inline_ptx("mbarrier.init.shared.b64", [self.barrier(kind, k.index(stage)), counts[kind]])
            self.published()

        k.guarded(k.emit(arith.CmpiOp(k.thread, k.index(0), "eq")), init)
        k.barriers.barrier()

    def published(self) -> None:
        """What makes the initialized barriers visible beyond this thread's generic proxy:
        the block barrier, for threads that use them through ordinary instructions."""

    def stage(self, step: SSAValue) -> SSAValue:
        return self.k.emit(arith.RemUIOp(step, self.k.index(self.stages)))

    def parity(self, step: SSAValue, flip: int = 0) -> SSAValue:
        """The parity of step's phase of its stage's barriers (b / S mod 2), xor `flip`."""
        k = self.k
        phase = k.emit(arith.AndIOp(k.emit(arith.DivUIOp(step, k.index(self.stages))), k.index(1)))
        if flip:
            phase = k.emit(arith.XOrIOp(phase, k.index(1)))
        return k.emit(arith.IndexCastOp(phase, i32))

    def fill(self, step: SSAValue, copies: Callable[[SSAValue, SSAValue], None], size: int = 0) -> None:
        """This thread's copies of `step` (copies(stage, full barrier) issues them), once the
        stage's previous step is released; they arrive on the full barrier as they land.
        (`size`: the copies' bytes, for BulkStagePipeline.)"""
        k, stage = self.k, self.stage(step)
        k.inline_ptx("mbarrier.wait.parity", [self.barrier(1, stage), self.parity(step, flip=1)])
        copies(stage, self.barrier(0, stage))
        k.inline_ptx("cp.async.mbarrier.arrive.noinc.shared.b64", [self.barrier(0, stage)])

    def acquire(self, step: SSAValue) -> None:
        """Waits until step's copies landed, and fences them for the async proxy (wgmma)."""
        self.k.inline_ptx("mbarrier.wait.parity", [self.barrier(0, self.stage(step)), self.parity(step)])
        self.k.inline_ptx("fence.proxy.async.shared::cta", [])

    def release(self, step: SSAValue) -> None:
        self.k.inline_ptx("mbarrier.arrive.shared.b64", [self.barrier(1, self.stage(step))])


class BulkStagePipeline(StagePipeline):
    """The protocol with one copying thread and tensor-map copies (module docstring): fill
    runs on that thread only, with the bytes its copies bring."""

    def fill_arrivals(self) -> int:
        return 1

    def published(self) -> None:
        """The copies complete transactions on the barriers through the async proxy, which
        sees the initialization after this fence (and the block barrier)."""
        self.k.inline_ptx("fence.mbarrier_init.release.cluster", [])

    def fill(self, step: SSAValue, copies: Callable[[SSAValue, SSAValue], None], size: int = 0) -> None:
        k, stage = self.k, self.stage(step)
        k.inline_ptx("mbarrier.wait.parity", [self.barrier(1, stage), self.parity(step, flip=1)])
        full = self.barrier(0, stage)
        k.inline_ptx("mbarrier.arrive.expect_tx.shared.b64", [full, i32_constant(k, size)])
        copies(stage, full)

    def acquire(self, step: SSAValue) -> None:
        self.k.inline_ptx("mbarrier.wait.parity", [self.barrier(0, self.stage(step)), self.parity(step)])

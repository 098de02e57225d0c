"""The next tile's first copies during this tile's last k steps, in a persistent matmul.

A persistent matmul kernel (persistent_matmul.py) runs several output tiles one after the
other in each block. Its k loop (warpgroup_loop.py) keeps copies S - 2 steps ahead of the
products; in a block that runs one tile, the last S - 2 steps have nothing to copy and the
first S - 2 steps of every tile wait for copies issued only when it starts. Here the steps
are counted across the block's tiles instead: step kt of a tile whose block has done G
steps before uses stage (G + kt) % S, and where kt + S - 2 passes the tile's last step the
copy is of the next tile's step kt + S - 2 - steps, into the stage that step will read. So
the next tile's first copies fly during this tile's last steps and its epilogue:

    before the tile loop:  copies of the first tile's steps 0 .. S - 3 (stages 0 .. S - 3)
    tile loop (t = first; t < tiles; t += blocks), iter_args(G):
      k steps kt < steps - (S - 2):   wait; barrier; copy this tile's step kt + S - 2;
                                      commit; products of stage (G + kt) % S
      the last S - 2 k steps:         wait; barrier; copy the next tile's step
                                      kt + S - 2 - steps (where there is a next tile);
                                      commit; products of stage (G + kt) % S
      epilogue; yield G + steps

Two loops rather than one with a branch per step: on an H200 the branch made 4096^3 run
slower than one tile per block (0.67 against 0.70 of cuBLAS), the two loops faster (0.72
against 0.69).
Each step still commits one group and the stage refilled at global step g is the one read
at g - 2, as in a block of one tile, so the waits and the barrier per step keep their
meaning. The copies of the next tile are addressed with its program ids: the operands'
tile indices must be this tile's program ids or constants.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from xdsl.dialects import arith
from xdsl.ir import Block, SSAValue

from strata.lowering.tile_to_gpu.kernel import GpuKernelLowering
from strata.lowering.tile_to_gpu.tensor_core_loop import Operand
from strata.lowering.tile_to_loops.kernel import static_value

T = TypeVar("T")
Copies = Callable[[tuple[Operand, Operand], SSAValue, SSAValue], Callable[[], None]]
"""copies(operands, k step, stage): the code issuing the operands' copies of that step."""


@dataclass
class CrossTilePrefetch:
    """A persistent matmul's tile schedule as its k loop sees it (module docstring)."""

    done_steps: SSAValue
    """k steps of the block's earlier tiles (index)."""
    ids: list[SSAValue]
    """This tile's program ids."""
    next_ids: list[SSAValue]
    """The program ids of the block's next tile, valid where `next_valid` (i1)."""
    next_valid: SSAValue
    before_loop: Block
    """The block before the tile loop, where the first tile's copies are issued."""
    first_ids: list[SSAValue]
    """The program ids of the block's first tile, valid where `first_valid` (i1)."""
    first_valid: SSAValue
    steps: int = 0
    """k steps per tile, once a k loop has taken the schedule (`takes`)."""

    def takes(self, operands: Sequence[Operand], steps: SSAValue, stages: int) -> bool:
        """Whether a k loop of `steps` with `stages` stages over `operands` can copy across
        tiles: a fixed number of steps, at least the S - 2 copied ahead, and tile indices
        that are program ids or constants. Records the steps."""
        count = static_value(steps)
        movable = all(
            i is None or any(i is p for p in self.ids) or static_value(i) is not None
            for operand in operands for i in operand.indices
        )  # fmt: skip
        if count is None or count < stages - 2 or not movable:
            return False
        self.steps = count
        return True

    def moved(self, operand: Operand, ids: Sequence[SSAValue]) -> Operand:
        """`operand` at the tile of program ids `ids`."""
        def at(index: SSAValue | None) -> SSAValue | None:
            return next((new for old, new in zip(self.ids, ids) if index is old), index)

        return replace(operand, indices=[at(i) for i in operand.indices])

    def before_tile_loop(self, k: GpuKernelLowering, build: Callable[[], T]) -> T:
        """build() with its code placed before the tile loop (it may use nothing of a tile)."""
        outer, k.cursor = k.cursor, self.before_loop
        try:
            return build()
        finally:
            k.cursor = outer

    def issue_first_steps(self, k: GpuKernelLowering, operands: tuple[Operand, Operand], count: int,
                          copies: Copies) -> None:
        """Before the tile loop: the copies of the first tile's steps 0 .. count - 1, one
        commit group each."""
        first = (self.moved(operands[0], self.first_ids), self.moved(operands[1], self.first_ids))

        def issue() -> None:
            for step in range(count):
                k.guarded(self.first_valid, copies(first, k.index(step), k.index(step)))
                k.inline_ptx("cp.async.commit_group", [])

        self.before_tile_loop(k, issue)

    def stage_of(self, k: GpuKernelLowering, step: SSAValue, stages: int) -> SSAValue:
        """The stage of this tile's k step `step`: that of its step counted over the block's tiles."""
        return k.emit(arith.RemUIOp(k.add(self.done_steps, step), k.index(stages)))

    def segments(self, k: GpuKernelLowering, operands: tuple[Operand, Operand], stages: int,
                 copies: Copies) -> list[tuple[SSAValue, SSAValue, Callable[[SSAValue], None]]]:
        """The k loop as (first step, end, copies ahead of a step): the steps that copy this
        tile's step S - 2 ahead, then the last S - 2, which copy the next tile's first
        steps (where there is a next tile). Each commits one group."""
        ahead_by = stages - 2
        following = (self.moved(operands[0], self.next_ids), self.moved(operands[1], self.next_ids))

        def this_tile(step: SSAValue) -> None:
            ahead = k.add(step, k.index(ahead_by))
            copies(operands, ahead, self.stage_of(k, ahead, stages))()
            k.inline_ptx("cp.async.commit_group", [])

        def next_tile(step: SSAValue) -> None:
            ahead = k.add(step, k.index(ahead_by))
            next_step = k.emit(arith.SubiOp(ahead, k.index(self.steps)))
            k.guarded(self.next_valid, copies(following, next_step, self.stage_of(k, ahead, stages)))
            k.inline_ptx("cp.async.commit_group", [])

        split = self.steps - ahead_by
        parts = [(0, split, this_tile), (split, self.steps, next_tile)]
        return [(k.index(first), k.index(end), copy) for first, end, copy in parts if end > first]


def usable_prefetch(k: GpuKernelLowering, operands: Sequence[Operand], steps: SSAValue,
                    stages: int) -> CrossTilePrefetch | None:
    """The kernel's cross-tile schedule when its k loop can take it, else None."""
    prefetch = k.cross_tile
    return prefetch if isinstance(prefetch, CrossTilePrefetch) and prefetch.takes(operands, steps, stages) else None

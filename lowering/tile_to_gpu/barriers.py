"""Barrier placement for lower-tile-to-gpu: a bar.sync goes where one thread's access may
conflict with another thread's earlier one, not after every write (lower.py states the rule).

Block code records each of its accesses with its `Owner`; `Barriers` keeps what is pending
since the last barrier and emits one in front of block code that conflicts with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import scf
from xdsl.ir import Block, SSAValue

from strata.dialects import tile, token

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
class BlockAccesses:
    """The accesses of the block code being built. An access to the element at
    `owned_indices` of a tile of shape `owner` is the thread's own."""

    owner: Owner
    owned_indices: tuple[SSAValue, ...] | None = None
    accesses: Accesses = field(default_factory=Accesses)

    def owner_of(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> Owner:
        """`owner` for an access to the thread's own element of `buffer`, else None."""
        owned = (
            self.owned_indices is not None
            and tuple(indices) == self.owned_indices
            and tuple(buffer.type.get_shape()) == self.owner
        )
        return self.owner if owned else None


@dataclass
class LoopHead:
    """What a loop body does before its first barrier: the next iteration does it first,
    so it is checked against what is pending at the end of the body."""

    accesses: Accesses = field(default_factory=Accesses)
    before_first_barrier: bool = True


@dataclass
class LoopEntry:
    """The bookkeeping where a loop starts, which is still in effect after the loop when
    it runs no iteration."""

    pending: PendingAccesses
    heads_open: list[bool]
    """Per enclosing loop head, whether it was still before its first barrier."""


class Barriers:
    """The barrier bookkeeping of one kernel: the accesses pending since the last barrier,
    the heads of the enclosing loop bodies, and how many barriers `emit_barrier` emitted.
    `naive`: a barrier after every piece of block code that writes, and before it when
    anything is pending (for comparison)."""

    def __init__(self, naive: bool, emit_barrier: Callable[[], None]):
        self.naive = naive
        self.emit_barrier = emit_barrier
        self.count = 0
        self.pending = PendingAccesses()
        self.loop_heads: list[LoopHead] = []
        """One per enclosing loop body, innermost last."""
        self.ordered_buffers: set[SSAValue] = set()
        """Buffers that tokens order a store before a load of (see `ordered_buffers`): their
        global accesses join the bookkeeping."""

    def barrier(self, settle: bool = True) -> None:
        """bar.sync (at the uniform level only). `settle`: every pending access is
        complete; block code that synchronizes internally passes False, because its
        accesses are checked against the pending ones before it, as a whole."""
        self.emit_barrier()
        self.count += 1
        if settle:
            self.pending = PendingAccesses()
            for head in self.loop_heads:
                head.before_first_barrier = False

    def before(self, accesses: Accesses) -> None:
        """A barrier in front of block code with `accesses` if it conflicts with pending ones."""
        if self.naive:
            if accesses.writes and self.pending:
                self.barrier()
        elif self.pending.conflicts(accesses):
            self.barrier()

    def after(self, accesses: Accesses) -> None:
        """Block code with `accesses` was emitted: they are pending, and they are the first
        accesses of the loop bodies that have had no barrier yet."""
        self.pending.record(accesses)
        for head in self.loop_heads:
            if head.before_first_barrier:
                head.accesses.reads += accesses.reads
                head.accesses.writes += accesses.writes
        if self.naive and accesses.writes:
            self.barrier()

    def enter_loop(self) -> LoopEntry:
        """A loop body starts: a new loop head."""
        entry = LoopEntry(self.pending.copy(), [head.before_first_barrier for head in self.loop_heads])
        self.loop_heads.append(LoopHead())
        return entry

    def end_loop_body(self) -> None:
        """A loop body ends: a barrier if what is pending conflicts with the next
        iteration's first accesses."""
        head = self.loop_heads.pop()
        if self.pending and (self.naive or self.pending.conflicts(head.accesses)):
            self.barrier()

    def leave_loop(self, entry: LoopEntry, always_runs: bool) -> None:
        """After a loop: one that may run no iteration leaves what was pending at `entry`
        pending, and opens no barrier for the enclosing loops."""
        if always_runs:
            return
        self.pending.merge(entry.pending)
        for head, was_open in zip(self.loop_heads, entry.heads_open):
            head.before_first_barrier = was_open


def buffer_of(view: SSAValue) -> SSAValue:
    """The kernel argument a partition view cuts, or a tensor view views."""
    made = view.owner if isinstance(view.owner, tile.MakeTensorViewOp) else view.owner.view.owner
    return made.buffer


WRITES = (tile.StoreViewTkoOp, tile.ScatterAddTkoOp)
"""Tile ops that write a view."""


def ordered_buffers(kernel: tile.KernelOp) -> set[SSAValue]:
    """Kernel arguments read by a load whose token follows a store to the same argument:
    the token orders a write before a read, which other threads may make. Loop-carried
    tokens follow every store of the loop."""
    stored: dict[SSAValue, frozenset[SSAValue]] = {}
    ordered: set[SSAValue] = set()

    def walk(block: Block) -> None:
        for op in block.ops:
            if isinstance(op, WRITES):
                stored[op.result_token] = stored.get(op.token, frozenset()) | {buffer_of(op.view)}
            elif isinstance(op, tile.LoadViewTkoOp) and buffer_of(op.view) in stored.get(op.token, ()):
                ordered.add(buffer_of(op.view))
            elif isinstance(op, token.JoinOp):
                stored[op.result] = frozenset().union(*(stored.get(t, frozenset()) for t in op.tokens))
            elif isinstance(op, scf.ForOp):
                inside = frozenset(buffer_of(s.view) for s in op.body.walk() if isinstance(s, WRITES))
                for init, arg, result in zip(op.iter_args, op.body.block.args[1:], op.results):
                    stored[arg] = stored[result] = stored.get(init, frozenset()) | inside
                walk(op.body.block)

    walk(kernel.body.block)
    return ordered

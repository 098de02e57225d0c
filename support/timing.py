"""Where compile time goes: `recording()` collects the (label, seconds) of every `timed`
section run inside it, in order, on this thread only; outside it `timed` costs a clock read
at most. No record outlives its `with` block, so one compile's times never leak into the
next.

    with recording() as timings:            # strata-run --timing, strata-opt --timing
        exe = strata.compile(module)         # passes, LLVM optimize, MCJIT finalize, ...
    for line in timings.report(total=...):
        print(line, file=sys.stderr)
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Timings:
    entries: list[tuple[str, float, int]] = field(default_factory=list)
    """(label, seconds, how many times it ran in those seconds), in the order recorded."""

    def add(self, label: str, seconds: float, count: int = 1) -> None:
        self.entries.append((label, seconds, count))

    def report(self, total: float | None = None) -> list[str]:
        """One line per label (repeats summed, the count shown where above 1) in order of
        first appearance; with `total`, an `other` line for time no section recorded, then
        the total. Milliseconds."""
        sums: dict[str, tuple[float, int]] = {}
        for label, seconds, count in self.entries:
            before, runs = sums.get(label, (0.0, 0))
            sums[label] = (before + seconds, runs + count)
        rows = [(label if count == 1 else f"{label} (x{count})", s) for label, (s, count) in sums.items()]
        if total is not None:
            rows += [("other", max(total - sum(s for _, s in rows), 0.0)), ("total", total)]
        width = max((len(label) for label, _ in rows), default=0)
        return [f"timing: {label:<{width}} {seconds * 1e3:10.3f} ms" for label, seconds in rows]


_CURRENT: ContextVar[Timings | None] = ContextVar("strata_timings", default=None)


@contextmanager
def recording() -> Iterator[Timings]:
    """Collect the `timed` sections run inside the block (nested blocks collect their own)."""
    timings = Timings()
    token = _CURRENT.set(timings)
    try:
        yield timings
    finally:
        _CURRENT.reset(token)


def record(label: str, seconds: float, count: int = 1) -> None:
    """Add a measured section (`count` runs of it) to the enclosing `recording()`, if any."""
    if (timings := _CURRENT.get()) is not None:
        timings.add(label, seconds, count)


@contextmanager
def timed(label: str) -> Iterator[None]:
    """Time the block as `label` for the enclosing `recording()`, if any."""
    if _CURRENT.get() is None:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        record(label, time.perf_counter() - start)

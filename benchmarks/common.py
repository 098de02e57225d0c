"""Shared helpers for the CPU benchmarks: timing, correctness checks, tables, machine info.

Each benchmark compares Strata with a baseline measured in the same run, so ratios are
meaningful even where absolute times move between machines. A ratio column is
t(baseline) / t(strata): above 1, Strata is faster.
"""

from __future__ import annotations

import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""Environment variables that set the baselines' thread counts: part of the command line."""


WARMUP_SECONDS = 0.3
"""Warm-up runs last at least this long: the previous implementation's thread pool
(OpenBLAS's, an OpenMP team's) keeps spinning for a while after its last call and would
steal this one's cores on two-core machines."""


def timeit(fn: Callable[[], object], repeat: int = 10, warmup: int = 2) -> float:
    """Median wall time of `fn()` in seconds over `repeat` runs, after `warmup` runs (and
    at least WARMUP_SECONDS of them)."""
    start = time.perf_counter()
    for _ in range(warmup):
        fn()
    while time.perf_counter() - start < WARMUP_SECONDS:
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def check(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> None:
    """Abort the benchmark unless `got` matches the reference `want` (shape, np.allclose)."""
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
        error = np.max(np.abs(got - want)) if got.shape == want.shape else "n/a"
        sys.exit(
            f"ABORT: {name}: the result differs from the reference "
            f"(shapes {got.shape} vs {want.shape}, max abs error {error}, rtol={rtol}, atol={atol})"
        )


def kernel_count(executable) -> int:
    """The number of `tile.launch` ops in a compiled CPU executable's lowered module."""
    return sum(op.name == "tile.launch" for op in executable.module.walk())


def warm_up_jit() -> None:
    """Compile a trivial program once, so that the JIT's one-time set-up (LLVM targets,
    libm and libgomp loading) is not charged to the first compile a benchmark times."""
    import strata

    warm = strata.Graph("warm")
    warm.output(warm.input("x", (4,)) * 2.0)
    strata.compile(warm.build(), target="cpu")


def load_torch():
    """PyTorch if installed (using every core), else None; prints which."""
    try:
        import torch
    except ImportError:
        print("PyTorch: not installed")
        return None
    torch.set_num_threads(os.cpu_count() or 1)
    print(f"PyTorch: {torch.__version__}, {torch.get_num_threads()} threads")
    return torch


def print_header(title: str) -> None:
    """The benchmark's title, the machine it runs on and the command that reproduces it."""
    processor = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        model = ""
    load = os.getloadavg()[0]  # other work on the machine skews every column
    print(f"# {title}")
    print(
        f"machine: {' '.join(filter(None, (processor, model)))}, {os.cpu_count()} cores, "
        f"{platform.system()}, 1-min load average {load:.2f}"
    )
    print(f"python {platform.python_version()}, numpy {np.__version__}")
    threads = [f"{k}={os.environ[k]}" for k in THREAD_VARIABLES if k in os.environ]
    print(f"command: {shlex.join([*threads, sys.executable, *sys.argv])}")


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A Markdown table; floats with three significant digits."""
    cells = [list(headers)] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [" | ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]
    lines.insert(1, " | ".join("-" * w for w in widths))
    print("\n".join(f"| {line} |" for line in lines))

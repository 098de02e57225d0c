"""Compile time against program size: a chain of N elementwise ops,

    x = tanh(x) * 0.5 + x        (3 graph ops a step: tanh, scale, add)

compiled for the CPU with `strata.compile`, each stage timed (support.timing: every pass,
verification, LLVM optimization, MCJIT). The time per op should stay flat as N grows
(fuse-elementwise caps its groups at MAX_GROUP_OPS ops, so LLVM sees kernels of bounded
size). Each run uses a fresh JIT cache.

    python benchmarks/compile_scaling.py --ops 250 500 1000 2000
"""

from __future__ import annotations

import argparse
import resource
import time

import strata
from strata import ops
from strata.runtime import cpu
from strata.support.timing import recording


def build(n_ops: int, size: int = 1024):
    g = strata.Graph("chain")
    x = g.input("x", (size,))
    for _ in range(max(n_ops // 3, 1)):
        x = ops.tanh(x) * 0.5 + x
    g.output(x)
    return g.build()


def measure(n_ops: int, max_group_ops: int | None = None) -> tuple[float, float, float, list[str], int]:
    """(build seconds, compile seconds (wall, then CPU time of this process: on a busy
    machine the latter is the steadier), the compile's timing report, kernels)."""
    start = time.perf_counter()
    module = build(n_ops)
    build_time = time.perf_counter() - start
    # An explicit cap runs fuse-elementwise with it first; the pipeline's own run then
    # finds the groups formed.
    pipeline = None if max_group_ops is None else f"fuse-patterns,canonicalize,cse,fuse-elementwise{{max_group_ops={max_group_ops}}}"
    cpu._JIT_CACHE.clear()
    with recording() as timings:
        start, cpu_start = time.perf_counter(), time.process_time()
        exe = strata.compile(module, target="cpu", pipeline=pipeline)
        total, cpu_time = time.perf_counter() - start, time.process_time() - cpu_start
    kernels = sum(1 for op in exe.module.walk() if op.name == "tile.launch")
    return build_time, total, cpu_time, timings.report(total), kernels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument(
        "--max-group-ops", type=int, nargs="+", default=[None],
        help="fuse-elementwise's cap (default: its own); several: each size is compiled with each in turn",
    )
    parser.add_argument("--breakdown", action="store_true", help="print each stage's time")
    args = parser.parse_args()
    print(f"{'ops':>6} {'cap':>6} {'build s':>8} {'compile s':>10} {'cpu s':>7} {'cpu ms/op':>10} {'kernels':>8} {'maxrss MB':>10}")
    for n in args.ops:
        for cap in args.max_group_ops:
            build_time, total, cpu_time, report, kernels = measure(n, cap)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"{n:>6} {cap or 'dflt':>6} {build_time:8.2f} {total:10.2f} {cpu_time:7.2f} "
                f"{cpu_time / n * 1e3:10.2f} {kernels:>8} {rss:10.0f}", flush=True,
            )  # fmt: skip
            if args.breakdown:
                for line in report:
                    print("       " + line)


if __name__ == "__main__":
    main()

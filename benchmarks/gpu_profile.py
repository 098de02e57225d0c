"""Where a compiled CUDA program's time goes: each kernel of `executable.launches` timed
alone with CUDA events (median of --repeat launches), then the slowest kernels and the
totals per op family (the kernel name without its `<function>_` prefix and `_<n>` suffix).

    from gpu_profile import profile
    profile(strata.compile(module, target="cuda").run, top=25)     # after exe.set_inputs(...)

    python benchmarks/gpu_training.py --profile                    # the GPT-2 train step's kernels
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict


def kernel_times(executable, repeat: int = 5) -> list[tuple[str, float, tuple]]:
    """(kernel name, median ms, grid) per launch, in launch order."""
    from numba import cuda

    times = []
    for name, function, grid, threads, shared, arguments in executable.launches:
        samples = []
        for _ in range(repeat + 1):
            start, end = cuda.event(), cuda.event()
            start.record()
            executable.launcher(function, grid, threads, shared, arguments)
            end.record()
            end.synchronize()
            samples.append(cuda.event_elapsed_time(start, end))
        times.append((name, statistics.median(samples[1:]), grid))
    return times


def family(name: str) -> str:
    """`train_step_matmul_epilogue_145` -> `matmul_epilogue`."""
    parts = re.sub(r"_\d+$", "", name).split("_")
    known = ("matmul", "softmax", "layernorm", "rmsnorm", "attention", "embedding", "cross", "reduce", "fused",
             "gelu", "add", "mul", "concat", "slice", "transpose", "copy", "log", "select", "broadcast", "scatter")
    for i, part in enumerate(parts):
        if part in known:
            return "_".join(parts[i:])
    return "_".join(parts[-2:])


def profile(executable, top: int = 25, repeat: int = 5) -> list[tuple[str, float, tuple]]:
    times = kernel_times(executable, repeat)
    total = sum(t for _, t, _ in times)
    print(f"{len(times)} kernels, {total:.2f} ms when launched one by one")
    print("slowest kernels:")
    for name, t, grid in sorted(times, key=lambda x: -x[1])[:top]:
        print(f"  {t:8.3f} ms  {100 * t / total:5.1f}%  {name}  grid {grid}")
    families: dict[str, list[float]] = defaultdict(list)
    for name, t, _ in times:
        families[family(name)].append(t)
    print("by op family:")
    for name, ts in sorted(families.items(), key=lambda x: -sum(x[1])):
        print(f"  {sum(ts):8.3f} ms  {100 * sum(ts) / total:5.1f}%  {len(ts):4d} kernels  {name}")
    return times

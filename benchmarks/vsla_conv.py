"""The vsla convolution (Model A) on the CPU: Strata's direct and FFT paths against
numpy.convolve (direct) and scipy.signal.fftconvolve (if scipy is installed), same run,
two f64 vectors of length n each; and which path "auto" picks (FFT from
lower-vsla-to-graph's fft_threshold elements of the shorter operand).

    python benchmarks/vsla_conv.py [--sizes 16 64 256 1024 4096 16384 65536 262144 1048576]

Times are medians of --repeat calls of the compiled program (inputs bound per call), in
ms; "compile s" is strata.compile's wall time. The direct paths are O(n²) and run up to
--direct-max only. Each result is checked against numpy's before it is timed.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from common import check, print_header, print_table, timeit

import strata
from strata import vsla
from strata.transforms.vsla_to_graph import FFT_THRESHOLD


def compiled(n: int, method: str):
    g = strata.Graph(f"conv_{method}")
    g.output(vsla.conv(g.input("a", (n,), "f64"), g.input("b", (n,), "f64"), method))
    start = time.perf_counter()
    exe = strata.compile(g.build(), target="cpu")
    return exe, time.perf_counter() - start


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", nargs="+", type=int, default=[16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576])
    p.add_argument("--direct-max", type=int, default=16384)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    try:
        from scipy.signal import fftconvolve
    except ImportError:
        fftconvolve = None
    print_header("vsla.conv: direct and FFT vs numpy.convolve and scipy.signal.fftconvolve (f64)")
    print(f"auto picks the FFT from {FFT_THRESHOLD} elements of the shorter operand")
    rng = np.random.default_rng(0)
    rows = []
    for n in args.sizes:
        a, b = rng.standard_normal(n), rng.standard_normal(n)
        want = fftconvolve(a, b) if fftconvolve is not None else np.convolve(a, b)
        row = [n]
        timings = {}
        for method in ("direct", "fft"):
            if method == "direct" and n > args.direct_max:
                row += ["-", "-"]
                continue
            exe, seconds = compiled(n, method)
            check(f"{method} {n}", exe(a, b)[0], want, rtol=1e-9, atol=1e-9 * np.sqrt(n))
            timings[method] = timeit(lambda: exe(a, b), repeat=args.repeat)
            row += [timings[method] * 1e3, seconds]
        numpy_ms = timeit(lambda: np.convolve(a, b), repeat=args.repeat) * 1e3 if n <= args.direct_max else "-"
        scipy_ms = timeit(lambda: fftconvolve(a, b), repeat=args.repeat) * 1e3 if fftconvolve is not None else "-"
        faster = min(timings, key=timings.get)
        row += [numpy_ms, scipy_ms, "fft" if n >= FFT_THRESHOLD else "direct", faster]
        rows.append(row)
    print_table(["n", "direct ms", "direct compile s", "fft ms", "fft compile s", "numpy.convolve ms",
                 "scipy fftconvolve ms", "auto picks", "faster here"], rows)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

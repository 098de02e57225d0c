"""f32 matmul n x n x n: Strata CPU vs numpy (its BLAS) and PyTorch, in GFLOP/s."""

from __future__ import annotations

import argparse

import numpy as np
from common import check, load_torch, print_header, print_table, timeit

import strata
from strata import ops


def build(n: int, transpose_b: bool):
    g = strata.Graph("matmul")
    a, b = g.input("a", (n, n)), g.input("b", (n, n))
    g.output(ops.matmul(a, b, transpose_b=transpose_b))
    return g.build()


def bench(n: int, transpose_b: bool, repeat: int, torch) -> list[object]:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    bb = b.T if transpose_b else b  # a view: BLAS reads it transposed, no copy
    exe = strata.compile(build(n, transpose_b), target="cpu")
    impls = {"strata": lambda: exe(a, b)[0], "numpy": lambda: a @ bb}
    if torch is not None:
        ta, tbb = torch.from_numpy(a), torch.from_numpy(bb)
        impls["torch"] = lambda: (ta @ tbb).numpy()
    want = a @ bb
    for name, fn in impls.items():
        check(f"n={n} ({name})", fn(), want, rtol=1e-4, atol=1e-3 * np.sqrt(n))

    times = {name: timeit(fn, repeat=repeat) for name, fn in impls.items()}
    gflops = {name: 2 * n**3 / t / 1e9 for name, t in times.items()}
    row = [n, "A @ B^T" if transpose_b else "A @ B", times["strata"] * 1e3, gflops["strata"]]
    for name in list(impls)[1:]:  # the baselines, in header order
        row += [gflops[name], times[name] / times["strata"]]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", action="store_true", help="also n = 2048")
    parser.add_argument("--repeat", type=int, default=10, help="repeats at n = 512 (more below)")
    args = parser.parse_args()
    print_header("CPU matmul, f32, C = A @ B (or A @ B^T)")
    torch = load_torch()

    sizes = [128, 256, 512, 1024] + ([2048] if args.large else [])
    cases = [(n, False) for n in sizes] + [(512, True)]
    rows = [bench(n, t, max(3, args.repeat * 512 // n), torch) for n, t in cases]
    headers = ["n", "case", "strata ms", "strata GFLOP/s", "numpy GFLOP/s", "t(numpy) / t(strata)"]
    if torch is not None:
        headers += ["torch GFLOP/s", "t(torch) / t(strata)"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()

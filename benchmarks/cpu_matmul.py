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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", action="store_true", help="also n = 2048")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    print_header("CPU matmul, f32, C = A @ B (or A @ B^T)")
    torch = load_torch()

    cases = [(n, False) for n in (128, 256, 512, 1024, *((2048,) if args.large else ()))]
    rows = []
    for n, transpose_b in [*cases, (512, True)]:
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
        exe = strata.compile(build(n, transpose_b), target="cpu")
        bb = b.T if transpose_b else b  # a view: BLAS reads it transposed, no copy
        (c,) = exe(a, b)
        check(f"n={n}", c, a @ bb, rtol=1e-4, atol=1e-3 * np.sqrt(n))
        impls = {"strata": lambda: exe(a, b), "numpy": lambda: a @ bb}
        if torch is not None:
            ta, tbb = torch.from_numpy(a), torch.from_numpy(bb)
            impls["torch"] = lambda: ta @ tbb
        repeat = max(3, args.repeat * 512 // n)
        times = {name: timeit(fn, repeat=repeat) for name, fn in impls.items()}
        gflops = {name: 2 * n**3 / t / 1e9 for name, t in times.items()}
        row = [n, "A @ B^T" if transpose_b else "A @ B", times["strata"] * 1e3, gflops["strata"], gflops["numpy"],
               times["numpy"] / times["strata"]]
        if torch is not None:
            row += [gflops["torch"], times["torch"] / times["strata"]]
        rows.append(row)
    headers = ["n", "case", "strata ms", "strata GFLOP/s", "numpy GFLOP/s", "t(numpy) / t(strata)"]
    if torch is not None:
        headers += ["torch GFLOP/s", "t(torch) / t(strata)"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()

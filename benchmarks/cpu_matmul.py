"""f32 matmul: Strata CPU vs numpy (its BLAS) and PyTorch, in GFLOP/s.

Cases: C = A @ B, square n x n x n for n = 64 ... 2048; at n = 512 also A @ B^T and
A^T @ B (the transposed operand passed as stored, the op reading it transposed; numpy and
torch get a transposed view, which BLAS reads without a copy); and a batched,
attention-like 8 x 128 x 64 @ 8 x 64 x 128. Repeats scale with 1/n^3 from --repeat at
n = 512 (at least 3), so n = 2048 stays affordable.

    python benchmarks/cpu_matmul.py [--sizes 512 1024] [--no-extra]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import check, load_torch, print_header, print_table, timeit

import strata
from strata import ops

SIZES = (64, 128, 256, 512, 1024, 2048)


def build(a_shape, b_shape, transpose_a: bool, transpose_b: bool):
    g = strata.Graph("matmul")
    a, b = g.input("a", a_shape), g.input("b", b_shape)
    g.output(ops.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b))
    return g.build()


def swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def bench(label: str, a_shape, b_shape, transpose_a: bool, transpose_b: bool, repeat: int, torch) -> list[object]:
    """a and b as stored (a transposed operand is stored transposed)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(a_shape, dtype=np.float32), rng.standard_normal(b_shape, dtype=np.float32)
    aa, bb = swap(a) if transpose_a else a, swap(b) if transpose_b else b  # views
    batch, (m, k), n = int(np.prod(aa.shape[:-2])), aa.shape[-2:], bb.shape[-1]
    flops = 2 * batch * m * n * k
    exe = strata.compile(build(a_shape, b_shape, transpose_a, transpose_b), target="cpu")
    impls = {"strata": lambda: exe(a, b)[0], "numpy": lambda: aa @ bb}
    if torch is not None:
        taa, tbb = torch.from_numpy(a), torch.from_numpy(b)
        taa, tbb = taa.transpose(-1, -2) if transpose_a else taa, tbb.transpose(-1, -2) if transpose_b else tbb
        impls["torch"] = lambda: (taa @ tbb).numpy()
    want = aa @ bb
    for name, fn in impls.items():
        check(f"{label} ({name})", fn(), want, rtol=1e-4, atol=1e-3 * np.sqrt(k))

    times = {name: timeit(fn, repeat=repeat, warmup=1 if flops > 2 * 1024**3 else 2) for name, fn in impls.items()}
    gflops = {name: flops / t / 1e9 for name, t in times.items()}
    row = [label, times["strata"] * 1e3, gflops["strata"]]
    for name in list(impls)[1:]:  # the baselines, in header order
        row += [gflops[name], times[name] / times["strata"]]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="square A @ B sizes")
    parser.add_argument("--no-extra", action="store_true", help="only the square A @ B cases")
    parser.add_argument("--repeat", type=int, default=10, help="repeats at n = 512 (more below, fewer above)")
    args = parser.parse_args()
    print_header("CPU matmul, f32")
    torch = load_torch()

    def repeats(flops: int) -> int:
        return max(3, min(200, round(args.repeat * 2 * 512**3 / flops)))

    cases = [(f"{n}x{n}x{n}  A @ B", (n, n), (n, n), False, False) for n in args.sizes]
    if not args.no_extra:
        cases += [
            ("512x512x512  A @ B^T", (512, 512), (512, 512), False, True),
            ("512x512x512  A^T @ B", (512, 512), (512, 512), True, False),
            ("8 x (128x64 @ 64x128)  batched", (8, 128, 64), (8, 64, 128), False, False),
        ]
    rows = []
    for label, a_shape, b_shape, ta, tb in cases:
        m, k = (a_shape[-1], a_shape[-2]) if ta else a_shape[-2:]
        n = b_shape[-2] if tb else b_shape[-1]
        flops = 2 * int(np.prod(a_shape[:-2])) * m * n * k
        rows.append(bench(label, a_shape, b_shape, ta, tb, repeats(flops), torch))
    headers = ["case", "strata ms", "strata GFLOP/s", "numpy GFLOP/s", "t(numpy) / t(strata)"]
    if torch is not None:
        headers += ["torch GFLOP/s", "t(torch) / t(strata)"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()

"""An 8-op elementwise chain over three f32 vectors: Strata CPU vs numpy (and PyTorch).

    y = relu(x * a + b) * sigmoid(x) - tanh(x) * 0.5

Graph ops: mul, add, relu, sigmoid, mul, tanh, scale, sub. The `kernels` column counts
the `tile.launch` ops Strata runs: 8 without fusion, 1 when the chain is fused. GB/s counts
the inputs and the output once (16 bytes an element), whatever the temporaries.

The copy rows measure this machine's memory bandwidth in the same run, at the same N:
torch `dst.copy_(src)` (all threads) and numpy `np.copyto(dst, src)` (one thread), their
GB/s counting the read and the write (8 bytes an element). "% of copy BW" is a row's GB/s
(counted as above: inputs read + output written) over the faster copy's at that N: how
close the chain runs to what streaming the same bytes costs.
"""

from __future__ import annotations

import argparse

import numpy as np
from common import check, kernel_count, load_torch, print_header, print_table, timeit

import strata
from strata import ops


def build(n: int):
    g = strata.Graph("chain")
    x, a, b = g.input("x", (n,)), g.input("a", (n,)), g.input("b", (n,))
    g.output(ops.relu(x * a + b) * ops.sigmoid(x) - ops.tanh(x) * 0.5)
    return g.build()


def numpy_chain(x, a, b):
    return np.maximum(x * a + b, 0) * (1 / (1 + np.exp(-x))) - np.tanh(x) * 0.5


def numpy_chain_out(x, a, b, t, s):
    """The same math into two preallocated scratch vectors; the result is `t`."""
    np.multiply(x, a, out=t)
    np.add(t, b, out=t)
    np.maximum(t, 0, out=t)
    np.negative(x, out=s)
    np.exp(s, out=s)
    np.add(s, 1, out=s)
    np.divide(t, s, out=t)  # relu(...) * sigmoid(x)
    np.tanh(x, out=s)
    np.multiply(s, 0.5, out=s)
    return np.subtract(t, s, out=t)


def bench(n: int, repeat: int, torch) -> list[list[object]]:
    """One row per implementation at size n."""
    rng = np.random.default_rng(0)
    x, a, b = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    exe = strata.compile(build(n), target="cpu")
    unfused = strata.compile(build(n), target="cpu", fusion=False)
    t, s = np.empty_like(x), np.empty_like(x)
    impls = {
        "strata": lambda: exe(x, a, b)[0],
        "strata unfused": lambda: unfused(x, a, b)[0],
        "numpy": lambda: numpy_chain(x, a, b),
        "numpy out=": lambda: numpy_chain_out(x, a, b, t, s),
    }
    if torch is not None:
        tx, ta, tb = (torch.from_numpy(v) for v in (x, a, b))
        impls["torch"] = lambda: (
            torch.relu(tx * ta + tb) * torch.sigmoid(tx) - torch.tanh(tx) * 0.5
        ).numpy()
    want = numpy_chain(x, a, b)
    for name, fn in impls.items():
        check(f"N={n} ({name})", fn(), want, rtol=1e-5, atol=1e-6)

    times = {name: timeit(fn, repeat=repeat) for name, fn in impls.items()}

    # The copy baselines: bytes read + written, 8 an element.
    dst = np.empty_like(x)
    copies = {"copy (numpy np.copyto)": lambda: np.copyto(dst, x)}
    if torch is not None:
        tdst = torch.from_numpy(dst)
        copies["copy (torch copy_)"] = lambda: tdst.copy_(tx)
    copy_times = {name: timeit(fn, repeat=repeat) for name, fn in copies.items()}
    copy_bandwidth = max(8 * n / seconds / 1e9 for seconds in copy_times.values())
    size = f"2^{n.bit_length() - 1}"
    rows = [
        [size, name, seconds * 1e3, seconds * 1e9 / n, 16 * n / seconds / 1e9, seconds / times["strata"],
         100 * 16 * n / seconds / 1e9 / copy_bandwidth,
         {"strata": kernel_count(exe), "strata unfused": kernel_count(unfused)}.get(name, "")]
        for name, seconds in times.items()
    ]
    rows += [[size, name, seconds * 1e3, seconds * 1e9 / n, 8 * n / seconds / 1e9, "", "", ""]
             for name, seconds in copy_times.items()]  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="repeats at N = 2^20 (fewer above)")
    args = parser.parse_args()
    print_header("CPU elementwise chain (8 graph ops, 3 inputs, f32)")
    torch = load_torch()
    rows = []
    for n in (1 << 20, 1 << 24):
        rows += bench(n, max(3, args.repeat * (1 << 20) // n), torch)
    print_table(["N", "impl", "ms", "ns/elem", "GB/s", "t / t(strata)", "% of copy BW", "kernels"], rows)


if __name__ == "__main__":
    main()

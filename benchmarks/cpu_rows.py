"""Row kernels over the last axis, f32: softmax, log_softmax, layernorm and rmsnorm, Strata CPU vs numpy (and PyTorch).

    python benchmarks/cpu_rows.py [--ops softmax rmsnorm] [--shapes 4096x1024 32768x128]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import check, load_torch, print_header, print_table, timeit

import strata
from strata import ops

EPSILON = 1e-5
OPS = ("softmax", "log_softmax", "layernorm", "rmsnorm")
SHAPES = ("4096x1024", "512x4096", "32768x128")


def build(kind: str, rows: int, cols: int):
    g = strata.Graph(kind)
    x = g.input("x", (rows, cols))
    if kind == "softmax":
        g.output(ops.softmax(x))
    elif kind == "log_softmax":
        g.output(ops.log_softmax(x))
    elif kind == "rmsnorm":
        g.output(ops.rmsnorm(x, g.input("gamma", (cols,)), epsilon=EPSILON))
    else:
        g.output(ops.layernorm(x, g.input("gamma", (cols,)), g.input("beta", (cols,)), epsilon=EPSILON))
    return g.build()


def numpy_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def numpy_log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def numpy_rmsnorm(x, gamma):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPSILON) * gamma


def numpy_layernorm(x, gamma, beta):
    centered = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(centered * centered, axis=-1, keepdims=True)  # biased
    return centered / np.sqrt(variance + EPSILON) * gamma + beta


def bench(kind: str, shape: tuple[int, int], repeat: int, torch) -> list[object]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=np.float32)
    gamma_beta = list(rng.standard_normal((2, shape[1]), dtype=np.float32))
    inputs, reference = {
        "softmax": ([x], numpy_softmax),
        "log_softmax": ([x], numpy_log_softmax),
        "layernorm": ([x, *gamma_beta], numpy_layernorm),
        "rmsnorm": ([x, gamma_beta[0]], numpy_rmsnorm),
    }[kind]
    exe = strata.compile(build(kind, *shape), target="cpu")
    impls = {"strata": lambda: exe(*inputs)[0], "numpy": lambda: reference(*inputs)}
    if torch is not None:
        tx, *affine = (torch.from_numpy(a) for a in inputs)
        F = torch.nn.functional
        impls["torch"] = {
            "softmax": lambda: torch.softmax(tx, dim=-1).numpy(),
            "log_softmax": lambda: torch.log_softmax(tx, dim=-1).numpy(),
            "layernorm": lambda: F.layer_norm(tx, shape[-1:], *affine, eps=EPSILON).numpy(),
            "rmsnorm": lambda: F.rms_norm(tx, shape[-1:], *affine, eps=EPSILON).numpy(),
        }[kind]
    want = reference(*inputs)
    for name, fn in impls.items():
        check(f"{kind} {shape} ({name})", fn(), want, rtol=1e-4, atol=1e-5)

    times = {name: timeit(fn, repeat=repeat) for name, fn in impls.items()}
    row = [kind, "x".join(map(str, shape)), times["strata"] * 1e3]
    for name in list(impls)[1:]:  # the baselines, in header order
        row += [times[name] * 1e3, times[name] / times["strata"]]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS))
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), metavar="ROWSxCOLS")
    args = parser.parse_args()
    try:
        shapes = [tuple(int(n) for n in text.lower().split("x")) for text in args.shapes]
    except ValueError:
        parser.error(f"--shapes: expected ROWSxCOLS, got {args.shapes}")
    if any(len(s) != 2 for s in shapes):
        parser.error(f"--shapes: expected ROWSxCOLS, got {args.shapes}")
    print_header("CPU row kernels, f32, over the last axis")
    torch = load_torch()

    cases = [(kind, shape) for kind in args.ops for shape in shapes]
    rows = [bench(kind, shape, args.repeat, torch) for kind, shape in cases]
    headers = ["op", "shape", "strata ms", "numpy ms", "t(numpy) / t(strata)"]
    if torch is not None:
        headers += ["torch ms", "t(torch) / t(strata)"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()

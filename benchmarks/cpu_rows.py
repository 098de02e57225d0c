"""Row kernels over the last axis, f32: softmax and layernorm, Strata CPU vs numpy (and PyTorch)."""

from __future__ import annotations

import argparse

import numpy as np
from common import check, load_torch, print_header, print_table, timeit

import strata
from strata import ops

EPSILON = 1e-5


def build(kind: str, rows: int, cols: int):
    g = strata.Graph(kind)
    x = g.input("x", (rows, cols))
    if kind == "softmax":
        g.output(ops.softmax(x))
    else:
        g.output(ops.layernorm(x, g.input("gamma", (cols,)), g.input("beta", (cols,)), epsilon=EPSILON))
    return g.build()


def numpy_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def numpy_layernorm(x, gamma, beta):
    centered = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(centered * centered, axis=-1, keepdims=True)  # biased
    return centered / np.sqrt(variance + EPSILON) * gamma + beta


def torch_impl(torch, kind: str, args):
    ts = [torch.from_numpy(a) for a in args]
    if kind == "softmax":
        return lambda: torch.softmax(ts[0], dim=-1)
    return lambda: torch.nn.functional.layer_norm(ts[0], ts[0].shape[-1:], ts[1], ts[2], eps=EPSILON)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    print_header("CPU row kernels, f32, over the last axis")
    torch = load_torch()

    rows = []
    for kind in ("softmax", "layernorm"):
        for shape in ((4096, 1024), (512, 4096)):
            rng = np.random.default_rng(0)
            x = rng.standard_normal(shape, dtype=np.float32)
            inputs = [x] if kind == "softmax" else [x, *rng.standard_normal((2, shape[1]), dtype=np.float32)]
            exe = strata.compile(build(kind, *shape), target="cpu")
            reference = numpy_softmax if kind == "softmax" else numpy_layernorm
            (y,) = exe(*inputs)
            check(f"{kind} {shape}", y, reference(*inputs), rtol=1e-4, atol=1e-5)
            impls = {"strata": lambda: exe(*inputs), "numpy": lambda: reference(*inputs)}
            if torch is not None:
                impls["torch"] = torch_impl(torch, kind, inputs)
                check(f"{kind} {shape} (torch)", impls["torch"]().numpy(), y, rtol=1e-4, atol=1e-5)
            times = {name: timeit(fn, repeat=args.repeat) for name, fn in impls.items()}
            row = [kind, "x".join(map(str, shape)), times["strata"] * 1e3, times["numpy"] * 1e3,
                   times["numpy"] / times["strata"]]
            if torch is not None:
                row += [times["torch"] * 1e3, times["torch"] / times["strata"]]
            rows.append(row)
    headers = ["op", "shape", "strata ms", "numpy ms", "t(numpy) / t(strata)"]
    if torch is not None:
        headers += ["torch ms", "t(torch) / t(strata)"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()

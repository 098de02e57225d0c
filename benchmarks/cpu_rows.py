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


def bench(kind: str, shape: tuple[int, int], repeat: int, torch) -> list[object]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=np.float32)
    if kind == "softmax":
        inputs, reference = [x], numpy_softmax
    else:
        inputs, reference = [x, *rng.standard_normal((2, shape[1]), dtype=np.float32)], numpy_layernorm
    exe = strata.compile(build(kind, *shape), target="cpu")
    impls = {"strata": lambda: exe(*inputs)[0], "numpy": lambda: reference(*inputs)}
    if torch is not None:
        tx, *affine = (torch.from_numpy(a) for a in inputs)
        if kind == "softmax":
            impls["torch"] = lambda: torch.softmax(tx, dim=-1).numpy()
        else:
            layer_norm = torch.nn.functional.layer_norm
            impls["torch"] = lambda: layer_norm(tx, shape[-1:], *affine, eps=EPSILON).numpy()
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
    args = parser.parse_args()
    print_header("CPU row kernels, f32, over the last axis")
    torch = load_torch()

    cases = [(kind, shape) for kind in ("softmax", "layernorm") for shape in ((4096, 1024), (512, 4096))]
    rows = [bench(kind, shape, args.repeat, torch) for kind, shape in cases]
    headers = ["op", "shape", "strata ms", "numpy ms", "t(numpy) / t(strata)"]
    if torch is not None:
        headers += ["torch ms", "t(torch) / t(strata)"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()

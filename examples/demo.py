"""Strata's main job on the bundled transformer block, end to end:
load (or build) -> verify -> cpu-pipeline -> JIT -> execute -> check -> report.

    ./scripts/demo.sh            # loads examples/transformer_block.mlir
    ./scripts/demo.sh --build    # builds the same block with the builder API
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np

import strata
from strata.check import compare
from strata.support.dtypes import tensor_dtype
from strata.runtime.reference.interpreter import find_entry

HERE = Path(__file__).resolve().parent


def graph_op_counts(module) -> Counter:
    return Counter(op.name for op in module.walk() if op.name.startswith("graph."))


def scaled_inputs(function, seed: int = 0) -> list[np.ndarray]:
    """Random inputs with weights scaled by 1/sqrt(fan-in), so activations stay O(1)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for t in function.function_type.inputs.data:
        shape = tuple(t.get_shape())
        fan_in = shape[0] if len(shape) == 2 else 1
        arrays.append((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(tensor_dtype(t)))
    return arrays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true", help="build with the builder API")
    args = parser.parse_args()

    if args.build:
        from transformer_block import build_transformer_block

        source, module = "builder API", build_transformer_block().build()
    else:
        path = HERE / "transformer_block.mlir"
        source, module = str(path.relative_to(HERE.parent)), strata.parse_module(path.read_text())
    before = graph_op_counts(module)
    print(f"program      {source}: {sum(before.values())} graph ops, verified")

    start = time.perf_counter()
    exe = strata.compile(module, target="cpu")
    kernels = sum(1 for op in exe.module.walk() if op.name == "tile.launch")
    print(f"compile      cpu-pipeline -> LLVM -> MCJIT: {kernels} kernel launches, "
          f"{(time.perf_counter() - start) * 1e3:.0f} ms")

    inputs = scaled_inputs(find_entry(module))
    exe(*inputs)
    start = time.perf_counter()
    (out,) = exe(*inputs)
    print(f"execute      cpu: {(time.perf_counter() - start) * 1e3:.2f} ms, "
          f"output {list(out.shape)} {out.dtype}, mean {out.mean():+.5f}, std {out.std():.5f}")

    start = time.perf_counter()
    (reference,) = strata.interpret(module, *inputs)
    elapsed = (time.perf_counter() - start) * 1e3
    (check,) = compare([out], [reference])
    print(f"check        vs numpy reference interpreter ({elapsed:.2f} ms): {check}")
    print("op histogram " + ", ".join(f"{n.removeprefix('graph.')}×{c}" for n, c in before.most_common()))


if __name__ == "__main__":
    main()

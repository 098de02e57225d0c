"""`strata-fuzz --mode vsla`: random programs of the variable-shape algebra (dialects/vsla.py),
run by the reference interpreter (the vsla ops' own numpy meaning) and on each target
through lower-vsla-to-graph, compared element by element.

A program starts from two to four f64 inputs of rank 1 or 2 with extents 0 to 9 (empty
operands included) and applies 3 to `max_ops` ops drawn uniformly: ambient add, sub and
hadamard of two values of one rank, scale, relu and tanh, conv (either method, along the
last axis with equal batch axes), kron of vectors, stack, window (size and stride 1 to 3),
sum and mean. Draws the verifier refuses (a Model A value meeting a Model B one, batch axes
that differ) are simply not taken; the results are the last value and up to two others.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp

import strata
from strata import vsla
from strata.check import compare
from strata.support.errors import BuildError, StrataError
from strata.tools.fuzz.differential import Outcome

MAX_ELEMENTS = 4096
"""Values past this many elements are not made (kron and stack grow fast)."""


def generate_vsla(seed: int, max_ops: int = 12):
    """(module, inputs, op names) of program `seed`, the same on every machine."""
    rng = np.random.default_rng([seed, 13])
    g = strata.Graph(f"vsla_{seed}")
    inputs, values, names = [], [], []
    for i in range(int(rng.integers(2, 5))):
        shape = tuple(int(d) for d in rng.integers(0, 10, size=int(rng.integers(1, 3))))
        inputs.append(rng.standard_normal(shape))
        values.append(g.input(f"x{i}", shape, "f64"))

    def pick(rank: int | None = None):
        candidates = [v for v in values if rank is None or len(v.shape) == rank]
        return candidates[int(rng.integers(len(candidates)))] if candidates else None

    builders = {
        "add": lambda: vsla.add(*pair()), "sub": lambda: vsla.sub(*pair()), "hadamard": lambda: vsla.hadamard(*pair()),
        "scale": lambda: vsla.scale(pick(), float(rng.uniform(-2, 2))), "relu": lambda: vsla.relu(pick()),
        "tanh": lambda: vsla.tanh(pick()), "conv": lambda: vsla.conv(*pair(), method=("direct", "fft")[int(rng.integers(2))]),
        "kron": lambda: vsla.kron(pick(1), pick(1)), "stack": lambda: vsla.stack(same_rank(int(rng.integers(1, 4)))),
        "window": lambda: vsla.window(pick(), int(rng.integers(1, 4)), int(rng.integers(1, 4))),
        "sum": lambda: vsla.sum(pick(2), int(rng.integers(2))), "mean": lambda: vsla.mean(pick(2), int(rng.integers(2))),
    }  # fmt: skip

    def same_rank(count: int) -> list:
        first = pick()
        return [first, *(pick(len(first.shape)) for _ in range(count - 1))]

    def pair():
        return same_rank(2)

    target = int(rng.integers(3, max_ops + 1))
    for _ in range(8 * max_ops):
        if len(names) >= target:
            break
        name = list(builders)[int(rng.integers(len(builders)))]
        try:
            value = builders[name]()
        except (BuildError, TypeError, AttributeError):  # a draw the rules refuse, or no operand of that rank
            continue
        if np.prod(value.shape) <= MAX_ELEMENTS:
            values.append(value)
            names.append(name)
    made = values[len(inputs):] or values[:1]
    results = [made[-1], *[made[int(i)] for i in rng.permutation(len(made) - 1)[: int(rng.integers(0, 3))]]]
    g.output(*results)
    return g.build(), inputs, names


CONFIGURATIONS = ("cpu", "cpu-unfused")


def fuzz_vsla(seed: int, configurations=CONFIGURATIONS, max_ops: int = 12) -> tuple[Outcome, list[str], ModuleOp]:
    """The program of `seed` on every configuration (cpu, cpu-unfused) against the
    reference: (outcome, op names, the program, printed only where a failure is reported)."""
    module, inputs, names = generate_vsla(seed, max_ops)
    try:
        want = strata.interpret(module, *inputs)
    except StrataError as e:
        return Outcome("skipped", "reference", str(e)), names, module
    for configuration in configurations:
        try:
            got = strata.compile(module, target="cpu", fusion=configuration != "cpu-unfused")(*inputs)
        except StrataError as e:
            return Outcome("rejected", configuration, str(e)), names, module
        except Exception as e:  # noqa: BLE001 - anything else is a compiler bug to report
            return Outcome("internal", configuration, f"{type(e).__name__}: {e}"), names, module
        scale = max((float(np.max(np.abs(w))) for w in want if w.size), default=1.0)
        for index, (g, w) in enumerate(zip(got, want)):
            close = g.shape == w.shape and np.allclose(g, w, rtol=1e-9, atol=1e-9 * max(scale, 1.0))
            if not close:
                detail = str(compare([g], [w])[0]).replace("result0", f"result{index}")
                return Outcome("mismatch", configuration, detail), names, module
    return Outcome("ok"), names, module

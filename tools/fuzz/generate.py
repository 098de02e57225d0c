"""`generate(seed)`: one random program, the same for the same seed on every machine.

Ops are drawn uniformly from the catalogue (`ops.OP_BUILDERS`); each draws its operands
among the values made so far (recent ones more often, so programs are deep and values
are shared) or makes new inputs. The results are the last value plus a few others, unused
ones first, so programs have several outputs and no dead ends.
"""

from __future__ import annotations

import numpy as np

from strata.support.errors import BuildError
from strata.tools.fuzz.ops import OP_BUILDERS
from strata.tools.fuzz.values import FLOATS, Generator, Program

OP_NAMES = tuple(OP_BUILDERS)


def generate(seed: int, max_ops: int = 25, only: tuple[str, ...] | None = None,
             floats: tuple[str, ...] = FLOATS) -> Program:
    """The program of `seed`: 3 to `max_ops` ops (`only`: drawn from these op names;
    `floats`: the float element types used)."""
    g = Generator(seed, max_ops, floats)
    names = only or OP_NAMES
    target = int(g.rng.integers(3, max_ops + 1))
    attempts = 0
    while len(g.op_names) < target and attempts < 20 * max_ops:
        attempts += 1
        build = OP_BUILDERS[g.pick(names)]
        try:
            build(g)
        except BuildError as e:
            # The generator asked for something the op does not take: its own bug.
            raise AssertionError(f"fuzz seed {seed}: the generator built an invalid op: {e}") from None
    made = [v for v in g.values if v.tensor.value.owner is not None and not _is_argument(v)]
    if not made:
        made = [g.values[-1]] if g.values else [g.new_input((3,), "f32")]
    results = [made[-1]]
    unused = [v for v in made[:-1] if not v.tensor.value.uses]
    extra = unused or made[:-1]
    for index in g.rng.permutation(len(extra))[: int(g.rng.integers(0, 3))]:
        results.append(extra[int(index)])
    g.graph.output(*(v.tensor for v in results))
    return Program(seed, g.graph.build(), [np.asarray(a) for a in g.inputs], results, g.op_names)


def _is_argument(value) -> bool:
    from xdsl.ir import BlockArgument

    return isinstance(value.tensor.value, BlockArgument)

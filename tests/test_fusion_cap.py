"""fuse-elementwise caps its groups (transforms/fuse_elementwise.py MAX_GROUP_OPS): a long
chain becomes several kernels, each within the cap, cut where one value crosses, with the
numerics unchanged."""

from __future__ import annotations

import numpy as np

import strata
from strata import ops
from strata.dialects import graph
from strata.targets.passes import run_pipeline
from strata.transforms.fuse_elementwise import MAX_GROUP_OPS


def chain(n_steps: int):
    g = strata.Graph("chain")
    x = g.input("x", (64,))
    for _ in range(n_steps):
        x = ops.tanh(x) * 0.5 + x
    g.output(x)
    return g.build()


def test_a_long_chain_is_cut_into_capped_single_output_groups():
    module = chain(100)  # 300 ops
    run_pipeline(module, "fuse-patterns,canonicalize,cse,fuse-elementwise")
    groups = [op for op in module.walk() if isinstance(op, graph.FusedOp)]
    sizes = [len(list(op.body.block.ops)) - 1 for op in groups]
    assert sum(sizes) == 300 and len(groups) == 5
    assert all(MAX_GROUP_OPS <= s <= MAX_GROUP_OPS + MAX_GROUP_OPS // 4 for s in sizes[:-1])
    assert all(len(op.results) == 1 for op in groups)  # each cut passes x alone


def test_a_chain_within_the_cap_stays_one_kernel():
    module = chain(10)
    run_pipeline(module, "fuse-patterns,canonicalize,cse,fuse-elementwise")
    assert sum(isinstance(op, graph.FusedOp) for op in module.walk()) == 1


def test_a_cut_chain_computes_what_the_reference_does():
    module = chain(60)  # 180 ops: three kernels
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    (expected,) = strata.interpret(module, x)
    (got,) = strata.compile(module, target="cpu")(x)
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)

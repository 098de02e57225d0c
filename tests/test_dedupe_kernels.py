"""dedupe-kernels in the CPU pipeline (numerics unchanged when launches share a kernel,
in place or not), and where run_pipeline verifies (STRATA_VERIFY_EACH_STEP)."""

from __future__ import annotations

import numpy as np

import strata
from strata import ops
from strata.dialects import tile
from strata.lowering.tile_to_loops.kernel import kernel_functions
from strata.targets import passes
from strata.targets.cpu import CpuPipelinePass
from strata.transforms.dedupe_kernels import dedupe_kernels


def shared_kernels_program() -> strata.Graph:
    """Three relus of one shape (the second and third run in place over a dying input),
    a relu of another shape and two scales by different constants."""
    g = strata.Graph("shared")
    x, y, z = g.input("x", (3, 1000)), g.input("y", (3, 1000)), g.input("z", (7,))
    a = ops.relu(x)
    b = ops.relu(ops.exp(y))  # in place over exp's buffer
    c = ops.relu(ops.tanh(a))
    g.output(ops.scale(a, 2.0), ops.scale(b, 3.0), c, ops.relu(z))
    return g


def test_shared_kernels_keep_numerics():
    module = shared_kernels_program().build()
    exe = strata.compile(module, target="cpu", fusion=False)
    launches = [op for op in exe.module.walk() if isinstance(op, tile.LaunchOp)]
    kernels = kernel_functions(exe.module)
    relus = {op.kernel.string_value() for op in launches if "relu" in op.kernel.string_value()}
    assert len(relus) == 2  # (3, 1000) and (7,)
    assert len(kernels) < len(launches)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 3, 1000), dtype=np.float32)
    z = rng.standard_normal(7, dtype=np.float32)
    got = exe(x, y, z)
    a = np.maximum(x, 0)
    want = (a * 2, np.maximum(np.exp(y), 0) * 3, np.maximum(np.tanh(a), 0), np.maximum(z, 0))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_dedupe_is_idempotent_and_keeps_distinct_kernels():
    module = shared_kernels_program().build()
    passes.run_pipeline(module, "lower-graph-to-tile,token-dce")
    before = [op.sym_name.data for op in module.ops if isinstance(op, tile.KernelOp)]
    renamed = dedupe_kernels(module)
    after = [op.sym_name.data for op in module.ops if isinstance(op, tile.KernelOp)]
    assert set(renamed.values()) <= set(after) and not set(renamed) & set(after)
    assert len(after) == len(before) - len(renamed) and renamed
    assert dedupe_kernels(module) == {}
    launched = {op.kernel.string_value() for op in module.walk() if isinstance(op, tile.LaunchOp)}
    assert launched == set(after)


def count_verifications(monkeypatch) -> list[str]:
    calls: list[str] = []
    original = passes.verify

    def counting(module):
        calls.append("verify")
        original(module)

    monkeypatch.setattr(passes, "verify", counting)
    passes.run_pipeline(shared_kernels_program().build(), CpuPipelinePass.STEPS)
    return calls


def test_pipeline_verifies_graph_steps_lowerings_and_the_end(monkeypatch):
    monkeypatch.delenv(passes.VERIFY_EACH_STEP_ENV, raising=False)
    # lower-vsla-to-graph, 5 graph-level steps, lower-graph-to-tile, lower-tile-to-loops,
    # verify-memory-plan.
    assert len(count_verifications(monkeypatch)) == 9


def test_verify_each_step_env(monkeypatch):
    monkeypatch.setenv(passes.VERIFY_EACH_STEP_ENV, "1")
    assert len(count_verifications(monkeypatch)) == len(passes.split_spec(CpuPipelinePass.STEPS))

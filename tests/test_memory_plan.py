"""plan-memory: plans are safe, aligned, below naive and deterministic; execution
allocates nothing; shape buckets share arenas."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import strata
from strata import ops
from strata.dialects.context import parse_module
from strata.targets.cpu import CpuPipelinePass
from strata.targets.passes import run_pipeline
from strata.runtime.cpu import jit_kernels
from strata.transforms.plan_memory import programs, read_plan
from strata.transforms.verify_memory_plan import plan_errors, used_steps

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
from transformer_block import build_transformer_block  # noqa: E402


def random_program(seed: int) -> str:
    """A random DAG mixing elementwise, matmul, softmax, reductions and shape ops."""
    rng = np.random.default_rng(seed)
    g = strata.Graph(f"dag_{seed}")
    values = [g.input("x", (16, 16)), g.input("y", (16, 16))]
    makers = [
        lambda a, b: a + b, lambda a, b: a * b, lambda a, b: ops.matmul(a, b),
        lambda a, b: ops.softmax(a), lambda a, b: ops.exp(a), lambda a, b: a.T,
        lambda a, b: ops.reduce_sum(a, 1, keepdims=True) + b,
        lambda a, b: ops.reshape(ops.reshape(a, (256,)), (16, 16)), lambda a, b: ops.tanh(b) - a,
    ]  # fmt: skip
    for _ in range(14):
        a, b = (values[int(rng.integers(len(values)))] for _ in range(2))
        values.append(makers[int(rng.integers(len(makers)))](a, b))
    g.output(values[-1], values[len(values) // 2])
    return str(g.build())


def planned(text: str, steps: str = CpuPipelinePass.STEPS):
    module = parse_module(text)
    run_pipeline(module, steps)
    (program,) = programs(module)
    return program, read_plan(program)


@pytest.mark.parametrize("strategy", ["first-fit", "best-fit"])
@pytest.mark.parametrize("seed", range(10))
def test_random_plans_are_safe_aligned_below_naive_and_deterministic(seed, strategy):
    text = random_program(seed)
    steps = CpuPipelinePass.STEPS.replace("plan-memory", f"plan-memory{{strategy={strategy}}}")
    program, plan = planned(text, steps)
    assert plan_errors(plan, used_steps(program)) == []
    assert all(v["offset"] % 64 == 0 for v in plan["values"])
    assert plan["arenas"]["activations"] + plan["arenas"]["workspace"] <= plan["naive_bytes"]
    assert planned(text, steps)[1] == plan
    inputs = [np.random.default_rng(seed).standard_normal((16, 16)).astype(np.float32) * 0.1 for _ in range(2)]
    got = strata.compile(text, target="cpu")(*inputs)
    want = strata.interpret(text, *inputs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_transformer_block_activations_well_under_half_of_naive():
    # Attention in three kernels: the planner must overlap its scores with the rest (the
    # CPU's fused attention has no scores buffer to plan).
    steps = CpuPipelinePass.STEPS.replace("lower-graph-to-tile", "lower-graph-to-tile{fused_attention=false}")
    _, plan = planned(str(build_transformer_block(batch=2, seq=64, d_model=128, heads=4, d_ff=512).build()), steps)
    assert plan["arenas"]["activations"] < 0.4 * plan["naive_bytes"]
    assert plan["arenas"]["activations"] + plan["arenas"]["workspace"] <= plan["naive_bytes"] / 2


def test_generated_code_never_allocates():
    for example in ("mlp.mlir", "transformer_block.mlir"):
        module = parse_module((ROOT / "examples" / example).read_text())
        run_pipeline(module, CpuPipelinePass.STEPS)
        ir = jit_kernels(module).llvm_ir()
        for allocator in ("@malloc", "@free", "@calloc", "@realloc"):
            assert allocator not in ir


def largest_allocation_during(call) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    result = call()
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return peak, result


def test_execute_allocates_only_the_returned_copies():
    text = str(build_transformer_block(batch=2, seq=64, d_model=128, heads=4, d_ff=512).build())
    exe = strata.compile(text, target="cpu")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(t.get_shape()).astype(np.float32) * 0.1 for t in parse_module(text).body.block.first_op.function_type.inputs.data]
    exe(*args)
    peak, (out,) = largest_allocation_during(lambda: exe(*args))
    assert peak < out.nbytes + 64 * 1024, peak


def test_profiles_switch_buckets_without_allocating():
    modules = [str(build_transformer_block(batch=1, seq=s, d_model=64, heads=4, d_ff=128).build()) for s in (8, 16, 32)]
    profiles = strata.compile_profiles(modules)
    arenas = {name: a.ctypes.data for name, a in profiles.arenas.items()}
    rng = np.random.default_rng(1)
    calls = []
    for text in modules:
        function = parse_module(text).body.block.first_op
        calls.append([rng.standard_normal(t.get_shape()).astype(np.float32) * 0.1 for t in function.function_type.inputs.data])
    for args in calls:
        profiles(*args)
    for text, args in zip(modules * 2, calls * 2):
        peak, (out,) = largest_allocation_during(lambda args=args: profiles(*args))
        assert peak < out.nbytes + 64 * 1024
        np.testing.assert_allclose(out, strata.interpret(text, *args)[0], rtol=1e-4, atol=1e-5)
    assert {name: a.ctypes.data for name, a in profiles.arenas.items()} == arenas
    with pytest.raises(strata.InputError, match="no profile for input shapes"):
        profiles(np.zeros((1, 12, 64), np.float32), *calls[0][1:])


def test_strata_run_writes_plan_json_and_svg(tmp_path):
    bin_dir = Path(sys.executable).parent
    result = subprocess.run(
        [str(bin_dir / "strata-run"), str(ROOT / "examples" / "transformer_block.mlir"),
         "--plan-json", str(tmp_path / "plan.json"), "--plan-svg", str(tmp_path / "plan.svg")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert set(plan) == {"alignment", "kernels", "arenas", "naive_bytes", "values"}
    assert set(plan["arenas"]) == {"params", "activations", "workspace", "grads", "external"}
    assert plan["kernels"] == 11 and plan["alignment"] == 64
    assert set(plan["values"][0]) == {"name", "arena", "offset", "bytes", "first", "last"}
    svg = (tmp_path / "plan.svg").read_text()
    assert svg.startswith("<svg") and "activations" in svg and svg.count("<rect") > len(plan["values"])


def test_values_written_in_place_name_the_value_whose_storage_they_share():
    # exp -> softmax -> relu with fusion off: each row/elementwise kernel writes over its
    # input, which dies there; the returned value lives in the external arena on its own.
    g = strata.Graph("chain")
    x = g.input("x", (64, 33))
    g.output(ops.relu(ops.softmax(ops.exp(x * 2.0), axis=-1)) + 1.0)
    program, plan = planned(str(g.build()), CpuPipelinePass.STEPS.replace("fuse-patterns,", "").replace("fuse-elementwise,", ""))
    by_name = {v["name"]: v for v in plan["values"]}
    sharing = [v for v in plan["values"] if "shares" in v]
    assert sharing, plan["values"]
    for value in sharing:
        root = by_name[value["shares"]]
        assert "shares" not in root
        assert (root["arena"], root["offset"], root["bytes"]) == (value["arena"], value["offset"], value["bytes"])
        assert root["first"] <= value["first"] and value["last"] <= root["last"]
    unshared = [v for v in plan["values"] if "shares" not in v]
    assert len({(v["arena"], v["offset"], v["first"]) for v in unshared}) == len(unshared)

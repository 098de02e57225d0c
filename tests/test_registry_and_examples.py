"""The per-op registry is complete; canonicalization keeps numerics; examples agree."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import strata
from strata.dialects.graph import GRAPH_OPS
from strata.dialects.opinfo import op_info
from strata.dialects.context import parse_module
from strata.targets.passes import run_pipeline

ROOT = Path(__file__).resolve().parent.parent
CANONICALIZE_TESTS = ROOT / "tests" / "filecheck" / "graph" / "canonicalize.mlir"


@pytest.mark.parametrize("op_type", GRAPH_OPS, ids=lambda t: t.name)
def test_every_op_has_reference_semantics(op_type):
    assert op_info(op_type).reference is not None


def random_args(function, rng):
    args = []
    for t in function.function_type.inputs.data:
        shape = tuple(t.get_shape())
        args.append(rng.standard_normal(shape).astype(np.float32))
    return args


@pytest.mark.parametrize("chunk", CANONICALIZE_TESTS.read_text().split("// -----"))
def test_canonicalize_preserves_results(chunk):
    """Every canonicalize.mlir case computes the same values before and after."""
    rng = np.random.default_rng(0)
    original = parse_module(chunk)
    canonical = parse_module(chunk)
    run_pipeline(canonical, "canonicalize")
    for function in original.ops:
        name = function.sym_name.data
        args = random_args(function, rng)
        try:
            before = strata.interpret(original, *args, entry=name)
        except strata.ExecutionError:
            with pytest.raises(strata.ExecutionError):
                strata.interpret(canonical, *args, entry=name)
            continue
        after = strata.interpret(canonical, *args, entry=name)
        for b, a in zip(before, after):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_transformer_block_file_matches_builder_script():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from transformer_block import build_transformer_block
    finally:
        sys.path.pop(0)
    built = build_transformer_block().build()
    stored = parse_module((ROOT / "examples" / "transformer_block.mlir").read_text())
    assert str(built) == str(stored)


def test_demo_runs_and_reports():
    import subprocess

    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "verified" in result.stdout and "ok" in result.stdout


def test_dsl_example_matches_transformers_trains_and_verifies():
    import re
    import subprocess

    pytest.importorskip("transformers")
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "dsl_models.py"), "--steps", "10"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    difference = float(re.search(r"logits vs transformers: max \|diff\| (\S+)", result.stdout).group(1))
    first, last = map(float, re.search(r"training: loss (\S+) -> (\S+)", result.stdout).groups())
    assert difference < 1e-4 and last < first
    assert "verify-backward @ScaledTanh: ok" in result.stdout

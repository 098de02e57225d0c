"""A pass that fails with an internal error (a bug) writes a crash reproducer: the IR it
was given and the pipeline that reproduces the crash (targets/reproducer.py); the error
stays an internal error whose message says where the file is and how to rerun it."""

from __future__ import annotations

import os
import re
import shlex

import pytest

import strata
from strata.dialects.context import parse_module
from strata.targets.passes import run_pipeline
from strata.targets.reproducer import PassCrash
from strata.tools import opt
from strata.transforms.fuse_elementwise import FuseElementwisePass
from strata.transforms.token_dce import TokenDcePass

CHAIN = """func.func @f(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.transpose"(%1) <{permutation = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %3 = "graph.transpose"(%2) <{permutation = array<i64: 1, 0>}> : (tensor<8x4xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}
"""


def crash(self, ctx, op):
    raise RuntimeError("injected failure")


RERUN = re.compile(r"reproducer written to (\S+); rerun with: strata-opt (\S+) -p '([^']*)'")


def test_an_internal_error_in_a_pass_writes_a_reproducer_of_the_ir_it_was_given(monkeypatch, tmp_path):
    monkeypatch.setenv("STRATA_CRASH_DIR", str(tmp_path))
    monkeypatch.setattr(TokenDcePass, "apply", crash)
    module = parse_module(CHAIN)
    with pytest.raises(PassCrash) as info:
        run_pipeline(module, "canonicalize,fuse-elementwise,lower-graph-to-tile,token-dce,lower-tile-to-loops")
    assert not isinstance(info.value, strata.StrataError)  # still an internal error
    message = str(info.value)
    assert "pass 'token-dce' crashed: RuntimeError: injected failure" in message
    path, rerun_path, spec = RERUN.search(message).groups()
    assert path == rerun_path == info.value.reproducer
    assert os.path.dirname(path) == str(tmp_path) and re.fullmatch(r"strata-crash-.*\.mlir", os.path.basename(path))
    assert spec == "token-dce,lower-tile-to-loops"  # the failing pass and the rest
    text = open(path).read()
    assert text.startswith("// Strata crash reproducer: pass 'token-dce' crashed: RuntimeError: injected failure\n")
    assert f"// rerun with: strata-opt {path} -p '{spec}'\n" in text
    reproduced = parse_module(text)  # the IR token-dce received: canonicalized, fused, at the tile level
    names = {op.name for op in reproduced.walk()}
    assert "tile.kernel" in names and "graph.transpose" not in names and not any(n.startswith("scf.") for n in names)
    # Without the injected failure, the rerun command goes through.
    monkeypatch.undo()
    run_pipeline(reproduced, spec)


def test_strata_compile_reports_the_crash_as_an_internal_error(monkeypatch, tmp_path):
    monkeypatch.setenv("STRATA_CRASH_DIR", str(tmp_path / "made"))
    monkeypatch.setattr(FuseElementwisePass, "apply", crash)
    with pytest.raises(PassCrash, match="pass 'fuse-elementwise' crashed: .*reproducer written to"):
        strata.compile(CHAIN, target="cpu")
    (written,) = os.listdir(tmp_path / "made")
    assert "graph.add" in open(tmp_path / "made" / written).read()


def test_strata_opt_prints_the_rerun_command_and_exits_non_zero(monkeypatch, tmp_path, capsys):
    source = tmp_path / "in.mlir"
    source.write_text(CHAIN)
    reproducer = tmp_path / "crash.mlir"
    monkeypatch.setattr(FuseElementwisePass, "apply", crash)
    code = opt.main([str(source), "-p", "canonicalize,fuse-elementwise,cse", "--crash-reproducer", str(reproducer)])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert err.startswith("strata-opt: internal error (please report): pass 'fuse-elementwise' crashed: RuntimeError")
    assert err.endswith(f"reproducer written to {reproducer}; rerun with: strata-opt {reproducer} -p 'fuse-elementwise,cse'")
    assert "graph.transpose" not in reproducer.read_text()  # canonicalize ran before
    monkeypatch.undo()
    code = opt.main(shlex.split(err.split("rerun with: strata-opt ")[1]))
    out = capsys.readouterr().out
    assert code == 0 and "graph.fused" in out


def test_diagnostics_are_not_crashes(monkeypatch, tmp_path):
    """A StrataError or a VerifyException raised by a pass is a diagnostic about the input:
    no reproducer, the same error as before."""
    from xdsl.utils.exceptions import VerifyException

    monkeypatch.setenv("STRATA_CRASH_DIR", str(tmp_path))

    def reject(self, ctx, op):
        raise VerifyException("not supported here")

    monkeypatch.setattr(FuseElementwisePass, "apply", reject)
    with pytest.raises(strata.IRError, match="not supported here"):
        run_pipeline(parse_module(CHAIN), "fuse-elementwise")
    assert os.listdir(tmp_path) == []


def test_a_reproducer_that_cannot_be_written_still_reports_the_crash(monkeypatch, tmp_path):
    monkeypatch.setattr(FuseElementwisePass, "apply", crash)
    with pytest.raises(PassCrash, match="crashed: RuntimeError: injected failure; no reproducer written") as info:
        run_pipeline(parse_module(CHAIN), "fuse-elementwise", reproducer=str(tmp_path / "missing" / "r.mlir"))
    assert info.value.reproducer is None

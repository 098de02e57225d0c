"""What the command-line tools promise beyond their results: --version, stdin as '-',
--list-passes, --timing breakdowns on stderr, and Strata's dialects and passes in plain
xdsl-opt (the xdsl.universe entry point)."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from xdsl.universe import Universe

import strata
from strata.support.timing import Timings, recording, timed
from strata.targets.passes import PIPELINES, STRATA_PASSES
from strata.universe import STRATA_UNIVERSE

BIN = Path(sys.executable).parent
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TIMING_LINE = re.compile(r"^timing: (.+?) +(\d+\.\d{3}) ms$")

RELU = """func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
"""


def run_tool(tool: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / tool), *args], input=stdin, capture_output=True, text=True, timeout=120)


def assert_one_line_error(result: subprocess.CompletedProcess, tool: str, *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{tool}: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def timing_lines(stderr: str) -> dict[str, float]:
    """label -> ms of every `timing:` line (all of stderr must be such lines)."""
    matches = [TIMING_LINE.match(line) for line in stderr.strip().splitlines()]
    assert matches and all(matches), stderr
    return {m.group(1): float(m.group(2)) for m in matches}


# --version


def test_package_version_is_the_distributions():
    assert strata.__version__ == version("strata-compiler")
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", strata.__version__)


def test_package_version_falls_back_when_not_installed():
    probe = (
        "import importlib.metadata as m\n"
        "def missing(name): raise m.PackageNotFoundError(name)\n"
        "m.version = missing\n"
        "import strata; print(strata.__version__)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0+unknown"


@pytest.mark.parametrize("tool", ["strata-opt", "strata-run", "strata-translate"])
def test_tools_print_their_version(tool):
    result = run_tool(tool, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{tool} {strata.__version__}"


# stdin


def test_opt_reads_stdin_as_dash(tmp_path):
    path = tmp_path / "relu.mlir"
    path.write_text(RELU)
    from_file = run_tool("strata-opt", str(path), "-p", "cpu-pipeline")
    for args in (["-"], []):
        from_stdin = run_tool("strata-opt", *args, "-p", "cpu-pipeline", stdin=RELU)
        assert from_stdin.returncode == 0, from_stdin.stderr
        assert from_stdin.stdout == from_file.stdout


@pytest.mark.parametrize("args", [["-"], []])
def test_opt_diagnostics_on_stdin_name_stdin(args):
    bad = RELU.replace('"graph.relu"(%x) : (tensor<4x8xf32>)', '"graph.relu"(%x) : (tensor<4x9xf32>)')
    result = run_tool("strata-opt", *args, stdin=bad)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("strata-opt: stdin:2:"), result.stderr


# --list-passes


def test_list_passes_lists_every_strata_pass_and_pipeline_once():
    result = run_tool("strata-opt", "--list-passes")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name in [*STRATA_PASSES, *PIPELINES]:
        ours = [line for line in lines if re.match(rf"  {re.escape(name)}(\{{| |$)", line)]
        assert len(ours) == 1, (name, ours)
        assert len(ours[0].split()) > 1, f"{name} has no description"
    assert "  plan-memory{strategy: str = " in result.stdout
    upstream = lines[lines.index("Upstream xDSL passes:") + 1 :]
    assert "  canonicalize" in upstream and "  cse" in upstream


# pipelines


def test_opt_expands_named_pipelines_for_print_between_passes():
    result = run_tool("strata-opt", "-", "-p", "cpu-pipeline{fusion=false}", "--print-between-passes", stdin=RELU)
    assert result.returncode == 0, result.stderr
    after = re.findall(r"^IR after ([\w-]+):$", result.stdout, re.M)
    steps = [s for s in PIPELINES["cpu-pipeline"].STEPS.split(",") if not s.startswith("fuse-")]
    assert after == steps[:-1]  # the last step's IR is the output


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["-p", "cpu-pipeline{fusion=maybe}"], ["invalid pass pipeline 'cpu-pipeline{fusion=maybe}'"]),
        (["-p", "cpu-pipeline,bogus"], ["bogus"]),
        (["--timing", "-p", "cpu-pipeline{bogus=1}"], ["cpu-pipeline{bogus=1}"]),
    ],
)
def test_opt_bad_pipelines_are_one_line_errors(args, fragments):
    assert_one_line_error(run_tool("strata-opt", "-", *args, stdin=RELU), "strata-opt", *fragments)


def test_opt_targets_are_only_those_that_work():
    result = run_tool("strata-opt", "--help")
    assert re.search(r"Available targets are: mlir\s*\n", result.stdout), result.stdout
    refused = run_tool("strata-opt", "-", "-p", "cpu-pipeline", "-t", "llvm", stdin=RELU)
    assert refused.returncode == 2 and "invalid choice: 'llvm'" in refused.stderr


# --timing


def test_run_timing_breaks_compile_time_down_on_stderr():
    result = run_tool("strata-run", "-", "--timing", "--repeat", "2", stdin=RELU)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^compile: \d+\.\d{3} ms$", result.stdout, re.M)
    assert re.search(r"^run: median \d+\.\d{3} ms over 2 runs$", result.stdout, re.M)
    assert "timing:" not in result.stdout
    times = timing_lines(result.stderr)
    labels = list(times)
    steps = [s.split("{")[0] for s in PIPELINES["cpu-pipeline"].STEPS.split(",")]
    assert labels[: len(steps)] == steps
    # each step verified once (the last step's verification is the result's)
    assert labels[len(steps)] == f"verify (x{len(steps)})"
    assert labels.index("translate to LLVM IR") < labels.index("llvm optimize (O2)") < labels.index("jit (MCJIT finalize)")
    assert labels[-2:] == ["other", "total"]
    assert sum(ms for label, ms in times.items() if label != "total") == pytest.approx(times["total"], abs=0.02)


def test_run_timing_counts_a_user_pipeline_step_by_step():
    result = run_tool("strata-run", "-", "--timing", "-p", "canonicalize,cse", "--target", "reference", stdin=RELU)
    assert result.returncode == 0, result.stderr
    assert list(timing_lines(result.stderr)) == ["canonicalize", "cse", "verify (x2)", "other", "total"]


def test_opt_timing_prints_each_pass_on_stderr():
    result = run_tool("strata-opt", "-", "-p", "cpu-pipeline", "--timing", stdin=RELU)
    assert result.returncode == 0, result.stderr
    assert "timing:" not in result.stdout and "func.func @f" in result.stdout
    labels = list(timing_lines(result.stderr))
    assert labels[:3] == ["lower-vsla-to-graph", "expand-attention-grad", "fuse-patterns"]
    assert labels[-3:] == ["verify (x13)", "other", "total"]
    assert "cpu-pipeline" not in labels


def test_timed_sections_go_only_to_the_enclosing_recording():
    with timed("outside"):
        pass
    with recording() as first:
        with timed("a"):
            pass
        with recording() as inner:
            with timed("b"):
                pass
        with timed("a"):
            pass
    with recording() as second:
        pass
    assert [label for label, _, _ in first.entries] == ["a", "a"]
    assert [label for label, _, _ in inner.entries] == ["b"]
    assert second.entries == []


def test_timings_report_sums_repeats_and_accounts_for_the_rest():
    timings = Timings([("cse", 0.001, 1), ("verify", 0.002, 2), ("cse", 0.003, 1), ("dce", 0.0005, 1)])
    lines = timings.report(total=0.010)
    assert [TIMING_LINE.match(line).groups() for line in lines] == [
        ("cse (x2)", "4.000"), ("verify (x2)", "2.000"), ("dce", "0.500"), ("other", "3.500"), ("total", "10.000"),
    ]  # fmt: skip


# xdsl-opt


def test_strata_universe_is_in_the_multiverse():
    multiverse = Universe.get_multiverse()
    assert {"graph", "tile", "token"} <= set(STRATA_UNIVERSE.all_dialects) <= set(multiverse.all_dialects)
    assert set(STRATA_PASSES) | set(PIPELINES) == set(STRATA_UNIVERSE.all_passes)
    assert set(STRATA_UNIVERSE.all_passes) <= set(multiverse.all_passes)


@pytest.mark.parametrize(
    "args, expected",
    [
        ([], "graph.matmul %x, %w1"),
        (["-p", "canonicalize"], "graph.matmul %x, %w1"),
        (["-p", "lower-graph-to-tile"], "tile.kernel @mlp_"),
        (["-p", "cpu-pipeline"], "tile.plan"),
    ],
)
def test_xdsl_opt_handles_strata_ir(args, expected):
    result = run_tool("xdsl-opt", str(EXAMPLES / "mlp.mlir"), *args)
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout

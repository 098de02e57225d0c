"""strata-run / strata-opt / strata-translate: results, exit codes and diagnostics."""

from __future__ import annotations

import io
import os
import pickle
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import strata

BIN = Path(sys.executable).parent
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

MATMUL = """func.func @f(%x: tensor<4x8xf32> {graph.name = "x"}, %w: tensor<8x3xf32> {graph.name = "w"}) -> tensor<4x3xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
"""

EMBED = """func.func @e(%t: tensor<5x2xf32>, %ids: tensor<3xi64>) -> tensor<3x2xf32> {
  %0 = "graph.embedding"(%t, %ids) : (tensor<5x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}
"""


def run_tool(tool: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / tool), *args], input=stdin, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def matmul_file(tmp_path: Path) -> Path:
    path = tmp_path / "matmul.mlir"
    path.write_text(MATMUL)
    return path


def assert_diagnostic(result: subprocess.CompletedProcess, code: int, *fragments: str):
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_run_inputs_outputs_round_trip(matmul_file, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    np.savez(tmp_path / "in.npz", arg0=x, arg1=w)
    result = run_tool(
        "strata-run", str(matmul_file), "--inputs", str(tmp_path / "in.npz"),
        "--outputs", str(tmp_path / "out.npz"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "result0: shape [4, 3] float32" in result.stdout
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_allclose(out["result0"], x @ w, rtol=1e-5)


def test_run_generates_missing_inputs_from_seed(matmul_file, tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    result = run_tool("strata-run", str(matmul_file), "--seed", "3", "--outputs", str(tmp_path / "o.npz"))
    assert result.returncode == 0, result.stderr
    with np.load(tmp_path / "o.npz") as out:
        np.testing.assert_allclose(out["result0"], x @ w, rtol=1e-5)


def test_run_check_and_timing(matmul_file):
    result = run_tool("strata-run", str(matmul_file), "--check", "--timing", "--repeat", "3")
    assert result.returncode == 0, result.stderr
    assert re.search(r"result0: max \|Δ\| = [0-9.e+-]+, max rel = [0-9.e+-]+  ok", result.stdout)
    assert "compile:" in result.stdout and "median" in result.stdout and "over 3 runs" in result.stdout


def test_run_cpu_target_check(matmul_file):
    result = run_tool("strata-run", str(matmul_file), "--target", "cpu", "--check", "--timing")
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout and "compile:" in result.stdout


def test_run_cpu_runtime_check_exits_1(tmp_path):
    path = tmp_path / "embed.mlir"
    path.write_text(EMBED)
    np.savez(tmp_path / "in.npz", arg1=np.array([0, 9, 1]))
    result = run_tool("strata-run", str(path), "--target", "cpu", "--inputs", str(tmp_path / "in.npz"))
    assert_diagnostic(result, 1, f"{path}:2:3", "'graph.embedding': an id is outside [0, 5)")


def test_run_examples_with_pipeline():
    for example in ("mlp.mlir", "transformer_block.mlir"):
        result = run_tool("strata-run", str(EXAMPLES / example), "-p", "canonicalize,cse", "--check")
        assert result.returncode == 0, result.stderr
        assert "MISMATCH" not in result.stdout


def test_run_pipeline_runs_before_the_entry_is_looked_up(matmul_file):
    # autodiff adds @f_grad (the product and the gradients of x and w), checked against the reference.
    text = matmul_file.read_text()
    matmul_file.write_text(text.replace(") -> tensor<4x3xf32> {", ") -> tensor<4x3xf32> attributes {graph.differentiate} {", 1))
    result = run_tool("strata-run", str(matmul_file), "-p", "autodiff", "--entry", "f_grad", "--check")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(" ok") == 3


def test_run_wrong_input_shape_names_argument(matmul_file, tmp_path):
    np.savez(tmp_path / "in.npz", arg1=np.zeros((3, 8), np.float32))
    result = run_tool("strata-run", str(matmul_file), "--inputs", str(tmp_path / "in.npz"))
    assert_diagnostic(result, 2, "arg1 (w)", "tensor<8x3xf32>", "[3, 8]")


def test_run_wrong_input_dtype_names_argument(matmul_file, tmp_path):
    np.savez(tmp_path / "in.npz", arg0=np.zeros((4, 8), np.float64))
    result = run_tool("strata-run", str(matmul_file), "--inputs", str(tmp_path / "in.npz"))
    assert_diagnostic(result, 2, "arg0 (x)", "float64")


def test_run_unknown_input_key(matmul_file, tmp_path):
    np.savez(tmp_path / "in.npz", x=np.zeros((4, 8), np.float32))
    result = run_tool("strata-run", str(matmul_file), "--inputs", str(tmp_path / "in.npz"))
    assert_diagnostic(result, 2, "unknown keys ['x']", "arg0, arg1")


def test_run_invalid_ir_names_op_and_location(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(MATMUL.replace("8x3", "9x3"))
    result = run_tool("strata-run", str(path))
    assert_diagnostic(result, 2, f"{path}:2:3: error: 'graph.matmul'", "contraction sizes differ")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("func.func @f( {", "bad.mlir:1:"),
        ('func.func @f() {\n  %0 = "graph.frobnicate"() : () -> tensor<f32>\n  func.return\n}', "graph.frobnicate"),
        ("builtin.module {\n}", "no func.func"),
    ],
)  # fmt: skip
def test_run_unparsable_or_unknown_op(tmp_path, text, fragment):
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    assert_diagnostic(run_tool("strata-run", str(path)), 2, fragment)


def test_run_unknown_pass(matmul_file):
    result = run_tool("strata-run", str(matmul_file), "-p", "no-such-pass")
    assert_diagnostic(result, 2, "no-such-pass")


def test_run_time_failure_exits_1(tmp_path):
    path = tmp_path / "embed.mlir"
    path.write_text(EMBED)
    np.savez(tmp_path / "in.npz", arg1=np.array([0, 9, 1]))
    result = run_tool("strata-run", str(path), "--target", "reference", "--inputs", str(tmp_path / "in.npz"))
    assert_diagnostic(result, 1, "'graph.embedding'", "id 9", "outside [0, 5)", f"{path}:2:3")


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--target", "reference", "--plan-json", "plan.json"], "need a compiled target"),
        (["--entry", "nope"], "no function @nope"),
        (["--repeat", "0", "--timing"], "--repeat must be >= 1"),
    ],
)
def test_run_usage_errors(matmul_file, args, fragment):
    assert_diagnostic(run_tool("strata-run", str(matmul_file), *args), 2, fragment)


def test_run_cuda_target(matmul_file):
    """Without a GPU: a one-line diagnostic and exit 2; with one: the matmul runs and checks."""
    result = run_tool("strata-run", str(matmul_file), "--target", "cuda", "--check")
    assert "Traceback" not in result.stderr
    if result.returncode == 2:
        assert "target 'cuda' is not available yet" in result.stderr
    else:
        assert result.returncode == 0 and "ok" in result.stdout, result.stdout + result.stderr


def test_run_missing_file():
    assert_diagnostic(run_tool("strata-run", "/nonexistent/x.mlir"), 2, "No such file")


def test_run_reads_stdin():
    result = run_tool("strata-run", "-", stdin=MATMUL)
    assert result.returncode == 0, result.stderr


def test_opt_prints_and_reports(matmul_file, tmp_path):
    result = run_tool("strata-opt", str(matmul_file), "--print-op-generic")
    assert result.returncode == 0
    assert '"graph.matmul"(%x, %w) <{transpose_a = false, transpose_b = false' in result.stdout
    bad = tmp_path / "bad.mlir"
    bad.write_text(MATMUL.replace("8x3", "9x3"))
    assert_diagnostic(run_tool("strata-opt", str(bad)), 2, f"{bad}:2:3", "'graph.matmul'")
    assert_diagnostic(run_tool("strata-opt", str(matmul_file), "-p", "bogus"), 2, "bogus")


def test_translate_emits_vectorized_llvm_ir_and_asm(tmp_path):
    path = tmp_path / "add.mlir"
    path.write_text(MATMUL.replace("8x3", "4x8").replace("tensor<4x3xf32>", "tensor<4x8xf32>").replace(
        '"graph.matmul"', '"graph.add"'))
    ir = run_tool("strata-translate", str(path), "--emit=llvm-ir")
    assert ir.returncode == 0, ir.stderr
    assert "@f_add_0(ptr noalias" in ir.stdout and "fadd <" in ir.stdout  # vectorized
    asm = run_tool("strata-translate", str(path), "--emit=asm")
    assert asm.returncode == 0, asm.stderr
    assert "f_add_0:" in asm.stdout


def test_translate_ptx_of_a_matmul(matmul_file):
    result = run_tool("strata-translate", str(matmul_file), "--emit=ptx", "--arch", "sm_80")
    assert result.returncode == 0, result.stderr
    assert ".target sm_80" in result.stdout and "bar.sync" in result.stdout and "fma.rn.f32" in result.stdout


def test_gpu_kernel_over_the_shared_memory_limit_is_a_clear_error(tmp_path):
    # CPU-sized f64 tiles (64x64x64: 96 KiB staged, past 48 KiB of static shared memory in
    # dynamic shared memory) do not fit a block's 96 KiB in all.
    path = tmp_path / "big.mlir"
    t = "tensor<128x128xf64>"
    path.write_text(f'func.func @f(%a: {t}, %b: {t}) -> {t} {{\n  %0 = "graph.matmul"(%a, %b) : ({t}, {t}) -> {t}\n'
                    f"  func.return %0 : {t}\n}}\n")
    result = run_tool("strata-opt", str(path), "-p", "lower-graph-to-tile,token-dce,lower-tile-to-gpu")
    assert_diagnostic(result, 2, "kernel @f_matmul_0 needs", "of dynamic shared memory (limit 98304 in all)", "smaller tiles")


def test_compile_reference_executable_matches_interpret():
    text = (EXAMPLES / "mlp.mlir").read_text()
    module = strata.parse_module(text)
    rng = np.random.default_rng(5)
    from strata.runtime.reference.interpreter import find_entry

    args = [
        rng.standard_normal(t.get_shape()).astype(np.float32) * 0.05
        for t in find_entry(module).function_type.inputs.data
    ]
    exe = strata.compile(text, target="reference", pipeline="canonicalize,cse")
    (got,) = exe(*args)
    (want,) = strata.interpret(text, *args)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(strata.InputError, match="takes 7 arguments, got 1"):
        exe(args[0])


def test_translate_entry_picks_one_program(tmp_path):
    t = "tensor<8xf32>"
    path = tmp_path / "two.mlir"
    path.write_text(f'func.func @f(%x: {t}) -> {t} {{\n  %0 = "graph.exp"(%x) : ({t}) -> {t}\n  func.return %0 : {t}\n}}\n'
                    f'func.func @g(%x: {t}) -> {t} {{\n  %0 = "graph.tanh"(%x) : ({t}) -> {t}\n  func.return %0 : {t}\n}}\n')
    both = run_tool("strata-translate", str(path), "--emit=llvm-ir")
    only_g = run_tool("strata-translate", str(path), "--emit=llvm-ir", "--entry", "g")
    assert both.returncode == only_g.returncode == 0, both.stderr + only_g.stderr
    assert "f_exp_0" in both.stdout and "g_tanh_0" in both.stdout
    assert "g_tanh_0" in only_g.stdout and "f_exp_0" not in only_g.stdout
    assert_diagnostic(run_tool("strata-translate", str(path), "--emit=llvm-ir", "--entry", "h"), 2, "no function @h")


@pytest.mark.parametrize("tool", ["strata-run", "strata-opt"])
@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("canonicalize{", "Expected argument name here"),
        (",,,", "Expected pass name here"),
        ("canonicalize,,cse", "Expected pass name here"),
        ('mlir-opt{executable="sh" arguments="-c","echo ran"}', "Unrecognized passes: ['mlir-opt']"),
    ],
)
def test_malformed_or_unvetted_pipelines_are_diagnostics(matmul_file, tool, spec, fragment):
    result = run_tool(tool, str(matmul_file), "-p", spec)
    assert_diagnostic(result, 2, fragment)
    assert "ran" not in result.stdout


def test_the_api_reports_a_bad_pipeline_as_a_strata_error():
    # xDSL's spec parser raises a BaseException subclass; the API turns it into an Exception.
    with pytest.raises(strata.StrataError, match="invalid pass pipeline 'canonicalize{'"):
        strata.compile(MATMUL, pipeline="canonicalize{")
    with pytest.raises(strata.StrataError, match="mlir-opt"):
        strata.compile(MATMUL, pipeline="mlir-opt")


def assert_one_line(result: subprocess.CompletedProcess, code: int, *fragments: str):
    assert_diagnostic(result, code, *fragments)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_opt_failure_leaves_an_existing_output_untouched(tmp_path):
    bad, out = tmp_path / "bad.mlir", tmp_path / "existing.mlir"
    bad.write_text("garbage\n")
    out.write_text("keep me\n")
    assert_one_line(run_tool("strata-opt", str(bad), "-o", str(out)), 2, "bad.mlir:", "error: Operation garbage")
    assert out.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir", "existing.mlir"]


@pytest.mark.parametrize(
    "tool, flag",
    [
        ("strata-opt", "-o"), ("strata-translate", "-o"), ("strata-run", "--outputs"),
        ("strata-run", "--plan-json"), ("strata-run", "--plan-svg"),
    ],
)  # fmt: skip
def test_an_output_equal_to_the_input_is_refused(matmul_file, tool, flag):
    extra = ["--emit=llvm-ir"] if tool == "strata-translate" else []
    result = run_tool(tool, str(matmul_file), *extra, flag, str(matmul_file))
    assert_one_line(result, 2, "is the input file; refusing to overwrite it")
    assert matmul_file.read_text() == MATMUL


def test_outputs_go_to_exactly_the_path_given(matmul_file, tmp_path):
    out = tmp_path / "out"
    result = run_tool("strata-run", str(matmul_file), "--outputs", str(out), "--plan-json", str(tmp_path / "p"))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matmul.mlir", "out", "p"]
    with np.load(out) as npz:
        assert npz["result0"].shape == (4, 3)
    opt = run_tool("strata-opt", str(matmul_file), "-o", str(tmp_path / "o.mlir"))
    assert opt.returncode == 0 and "graph.matmul" in (tmp_path / "o.mlir").read_text()


@pytest.mark.parametrize("flag", ["--outputs", "--plan-json", "--plan-svg"])
@pytest.mark.parametrize("path", ["/dev/full", "/nonexistent-dir/out.npz"])
def test_an_unwritable_output_is_a_diagnostic(matmul_file, flag, path):
    if path == "/dev/full" and not os.path.exists(path):
        pytest.skip("no /dev/full")
    assert_one_line(run_tool("strata-run", str(matmul_file), flag, path), 2, f"cannot write {path}")


def test_translate_unwritable_output_is_a_diagnostic(matmul_file, tmp_path):
    result = run_tool("strata-translate", str(matmul_file), "--emit=llvm-ir", "-o", str(tmp_path / "no" / "x.ll"))
    assert_one_line(result, 2, "cannot write")


def _npy_bytes(array: np.ndarray) -> bytes:
    stream = io.BytesIO()
    np.save(stream, array)
    return stream.getvalue()


def _bad_npz(kind: str, path: Path) -> None:
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        np.savez(path, arg0=np.ones((4, 8), np.float32))
        path.write_bytes(path.read_bytes()[:100])
    elif kind == "npy":
        np.save(open(path, "wb"), np.ones((4, 8), np.float32))
    elif kind == "pickle":
        path.write_bytes(pickle.dumps({"arg0": [1, 2]}))
    elif kind == "object-array":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("arg0.npy", _npy_bytes(np.array([{"a": 1}], dtype=object)))
    elif kind == "absurd-header":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("arg0.npy", b"\x93NUMPY\x02\x00" + (200000).to_bytes(4, "little") + b"{" + b" " * 199998 + b"\n")
    elif kind == "unterminated-header":  # found by strata-fuzz --mode npz: a tokenizer error
        header = _npy_bytes(np.ones((4, 8), np.float32)).replace(b"'shape': (4, 8)", b"'shape': ('a',  ")
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("arg0.npy", header)
    elif kind == "bad-deflate":
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
            z.writestr("arg0.npy", _npy_bytes(np.ones((4, 8), np.float32)))
        data = bytearray(path.read_bytes())
        data[120:140] = b"\xff" * 20
        path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "kind", ["empty", "truncated", "npy", "pickle", "object-array", "absurd-header", "unterminated-header", "bad-deflate"]
)
def test_bad_npz_inputs_are_one_line_diagnostics(matmul_file, tmp_path, kind):
    path = tmp_path / "in.npz"
    _bad_npz(kind, path)
    result = run_tool("strata-run", str(matmul_file), "--inputs", str(path))
    assert_one_line(result, 2, f"{path}: ")


def test_input_shapes_are_checked_from_the_header_before_the_data(matmul_file, tmp_path):
    # Claims 4e6 x 8e4 floats (1.28 TB) but holds none: only the header may be read.
    header = _npy_bytes(np.ones((4, 8), np.float32)).replace(b"'shape': (4, 8), ", b"'shape': (4000000, 80000), ")
    path = tmp_path / "in.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("arg0.npy", header)
    result = run_tool("strata-run", str(matmul_file), "--inputs", str(path))
    assert_one_line(result, 2, "arg0 (x)", "must be tensor<4x8xf32>", "[4000000, 80000]")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("func.func @s(%x: f32) -> f32 {\n  func.return %x : f32\n}\n", "arg0 of @s is f32"),
        ("func.func private @d(tensor<4xf32>) -> tensor<4xf32>\n", "@d is a declaration without a body"),
        ("builtin.module {\n" * 3000 + "}\n" * 3000, "nested too deeply"),
        ("func.func @f() attributes {a = " + "[" * 4000 + "]" * 4000 + "} {\n  func.return\n}\n", "nested too deeply"),
    ],
)  # fmt: skip
def test_unrunnable_or_deeply_nested_input_is_a_diagnostic(tmp_path, text, fragment):
    path = tmp_path / "in.mlir"
    path.write_text(text)
    assert_one_line(run_tool("strata-run", str(path)), 2, fragment)
    if "nested" in fragment:
        assert_one_line(run_tool("strata-opt", str(path)), 2, fragment)


def test_check_tolerance_follows_the_least_precise_step(tmp_path):
    """An f32 softmax cast to f64 is f32-accurate: --check must not hold it to f64's 1e-9."""
    path = tmp_path / "f.mlir"
    path.write_text(
        "func.func @f(%x: tensor<4x33xf32>) -> tensor<4x33xf64> {\n"
        "  %0 = graph.softmax %x {axis = -1 : i64} : (tensor<4x33xf32>) -> tensor<4x33xf32>\n"
        "  %1 = graph.cast %0 : (tensor<4x33xf32>) -> tensor<4x33xf64>\n"
        "  func.return %1 : tensor<4x33xf64>\n}\n"
    )
    for seed in range(5):
        result = run_tool("strata-run", str(path), "--check", "--seed", str(seed))
        assert result.returncode == 0 and "ok" in result.stdout, result.stdout + result.stderr

"""Misuse of the Python API: clear StrataErrors naming the argument, executables that are
safe to call from several threads, a bounded JIT cache, atomic output files."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import strata
from strata.runtime import cpu
from strata.support.files import OutputError, refuse_overwriting_input, write_atomically

MLP = """func.func @f(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %1 = "graph.tanh"(%0) : (tensor<64x16xf32>) -> tensor<64x16xf32>
  func.return %1 : tensor<64x16xf32>
}
"""


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: strata.compile(None), strata.InputError, "strata.compile: module_or_text must be .* got NoneType"),
        (lambda: strata.interpret(42), strata.InputError, "strata.interpret: module_or_text must be .* got int"),
        (lambda: strata.compile(MLP, target=3), strata.InputError, "strata.compile: target must be a target name"),
        (lambda: strata.compile(MLP, entry=1), strata.InputError, "strata.compile: entry must be a string"),
        (lambda: strata.compile(MLP, target="tpu"), strata.StrataError, "tpu"),
        (lambda: strata.compile_profiles(MLP), strata.InputError, "compile_profiles: modules_or_texts must be a list"),
    ],
)  # fmt: skip
def test_api_misuse_is_a_strata_error_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("run", [strata.interpret, strata.compile])
def test_scalar_arguments_and_declarations_are_ir_errors(run):
    scalar = "func.func @s(%x: f32) -> f32 {\n  func.return %x : f32\n}\n"
    with pytest.raises(strata.IRError, match=r"arg0 of @s is f32: entry functions take tensors only"):
        run(scalar)
    declaration = "func.func private @d(tensor<4xf32>) -> tensor<4xf32>\n"
    with pytest.raises(strata.IRError, match="@d is a declaration without a body"):
        run(declaration)


def test_deeply_nested_input_is_an_ir_error():
    text = "builtin.module {\n" * 3000 + "}\n" * 3000
    with pytest.raises(strata.IRError, match="nested too deeply"):
        strata.compile(text)


def test_one_executable_called_from_two_threads_gives_each_its_own_results():
    exe = strata.compile(MLP, target="cpu")
    rng = np.random.default_rng(0)
    inputs = [
        (rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((32, 16)).astype(np.float32))
        for _ in range(2)
    ]
    expected = [strata.interpret(MLP, *args)[0] for args in inputs]
    failures: list[str] = []
    start = threading.Barrier(2)

    def work(k: int) -> None:
        start.wait()
        for _ in range(200):
            (out,) = exe(*inputs[k])
            if not np.allclose(out, expected[k], rtol=1e-4, atol=1e-5):
                failures.append(f"thread {k}: wrong result")
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_jit_cache_is_bounded_and_evicts_least_recently_used(monkeypatch):
    monkeypatch.setattr(cpu, "JIT_CACHE_SIZE", 2)
    monkeypatch.setattr(cpu, "_JIT_CACHE", type(cpu._JIT_CACHE)())
    texts = [MLP.replace('"graph.tanh"', f'"graph.{op}"') for op in ("tanh", "exp", "relu")]
    exes = [strata.compile(t, target="cpu") for t in texts]
    assert len(cpu._JIT_CACHE) == 2
    assert exes[0].run.jit not in cpu._JIT_CACHE.values()  # the oldest went
    x, w = np.ones((64, 32), np.float32), np.full((32, 16), 0.01, np.float32)
    # An evicted module stays alive (and runnable) as long as its executable does.
    np.testing.assert_allclose(exes[0](x, w)[0], np.tanh(x @ w), rtol=1e-5)
    again = strata.compile(texts[2], target="cpu")
    assert again.run.jit is exes[2].run.jit  # a hit


def test_write_atomically_replaces_only_on_success(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def fail(stream):
        stream.write(b"half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_atomically(path, fail)
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.txt"]  # no temporary file left behind
    write_atomically(path, "new")
    assert path.read_text() == "new"
    with pytest.raises(OutputError, match="cannot write .*missing"):
        write_atomically(tmp_path / "missing" / "x.txt", "data")
    with pytest.raises(OutputError, match="is a directory"):
        write_atomically(tmp_path, "data")
    with pytest.raises(OutputError, match="is the input file"):
        refuse_overwriting_input(str(path), str(path), "-o")
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    write_atomically(link, "through the link")
    assert link.is_symlink() and path.read_text() == "through the link"
    if os.path.exists("/dev/null"):  # a device is written directly (even by a zip writer)
        write_atomically("/dev/null", lambda stream: np.savez(stream, a=np.ones(3)))

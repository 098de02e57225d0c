"""The on-disk compile cache of the CPU target (runtime/compile_cache.py) and the CPU
runtime's thread count: a hit in a new process runs the same code as a compile, a changed
key misses, a damaged entry is compiled again, concurrent writers leave one valid entry.

tests/conftest.py points STRATA_CACHE_DIR at a temporary directory and turns the cache
off; these tests turn it on in a directory of their own.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import strata
from strata import ops
from strata.runtime import compile_cache, cpu
from strata.support.timing import recording

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import strata
    from strata.support.timing import recording
    text = open(sys.argv[1]).read()
    with recording() as timings:
        exe = strata.compile(text, target="cpu")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s, dtype=np.float32) for s in exe.run.inputs.shapes]
    outs = exe(*args)
    np.save(sys.argv[2], np.concatenate([o.reshape(-1) for o in outs]))
    launches = sum(op.name == "tile.launch" for op in exe.module.walk())  # lowered on demand
    print(json.dumps({"labels": [e[0] for e in timings.entries], "launches": launches,
                      "threads": strata.get_num_threads()}))
""")


def build_program(n: int = 256) -> str:
    """A matmul large enough to run on several threads, libm calls (tanh, erf, exp) and a
    non-splat constant (a tile.buffer with an initial value)."""
    g = strata.Graph("f")
    x, w = g.input("x", (n, n)), g.input("w", (n, n))
    bias = g.constant(np.linspace(-1, 1, n, dtype=np.float32))
    h = ops.gelu(ops.tanh(x @ w) + bias)
    g.output(ops.softmax(h * 2.0), h)
    return str(g.build())


PROGRAM = build_program()


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("STRATA_CACHE_DIR", str(directory))
    monkeypatch.setenv("STRATA_CACHE", "1")
    return directory


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[str, bytes, list[np.ndarray]]:
    """PROGRAM's entry (its file name and bytes) and its results, compiled once."""
    directory = tmp_path_factory.mktemp("stored")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STRATA_CACHE_DIR", str(directory))
        patch.setenv("STRATA_CACHE", "1")
        exe, _ = compiled()
    (entry,) = entries(directory)
    return entry.name, entry.read_bytes(), run(exe)


def seed(directory: Path, stored) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / stored[0]).write_bytes(stored[1])
    return directory / stored[0]


def compiled(text: str = PROGRAM, **options) -> tuple[strata.Executable, bool]:
    """The executable, and whether it came from the cache (the pipeline did not run)."""
    with recording() as timings:
        exe = strata.compile(text, target="cpu", **options)
    labels = [label for label, *_ in timings.entries]
    return exe, "lower-tile-to-loops" not in labels


def run(exe: strata.Executable) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return list(exe(*(rng.standard_normal(s, dtype=np.float32) for s in exe.run.inputs.shapes)))


def same_bits(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(x.tobytes() == y.tobytes() and x.shape == y.shape for x, y in zip(a, b))


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.entry"))


def run_script(tmp_path: Path, name: str, env: dict[str, str]) -> subprocess.Popen:
    program = tmp_path / "program.mlir"
    program.write_text(PROGRAM)
    script = tmp_path / "compile.py"
    script.write_text(SCRIPT)
    return subprocess.Popen(
        [sys.executable, str(script), str(program), str(tmp_path / f"{name}.npy")],
        env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def finished(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_a_new_process_hits_and_computes_the_same_bits(tmp_path):
    directory = str(tmp_path / "cache")
    uncached = finished(run_script(tmp_path, "uncached", {"STRATA_CACHE": "0"}))
    cold = finished(run_script(tmp_path, "cold", {"STRATA_CACHE": "1", "STRATA_CACHE_DIR": directory}))
    warm = finished(run_script(tmp_path, "warm", {"STRATA_CACHE": "1", "STRATA_CACHE_DIR": directory, "STRATA_NUM_THREADS": "1"}))
    assert "compile cache lookup" not in uncached["labels"] and "llvm optimize (O2)" in cold["labels"]
    assert "lower-tile-to-loops" not in warm["labels"] and "llvm optimize (O2)" not in warm["labels"]
    assert len(entries(Path(directory))) == 1
    assert warm["launches"] == cold["launches"] == uncached["launches"] > 0
    assert warm["threads"] == 1
    results = [np.load(tmp_path / f"{name}.npy") for name in ("uncached", "cold", "warm")]
    assert results[0].tobytes() == results[1].tobytes() == results[2].tobytes()


def test_a_hit_loads_object_code_and_lowers_again_only_on_demand(cache, stored, monkeypatch):
    seed(cache, stored)
    monkeypatch.setattr(cpu, "_JIT_CACHE", type(cpu._JIT_CACHE)())  # no in-process sharing
    exe, hit = compiled()
    assert hit and callable(exe.run._lowered)  # not lowered yet
    assert same_bits(run(exe), stored[2])
    assert exe.plan["arenas"] and sum(op.name == "tile.launch" for op in exe.module.walk()) == len(exe.run.launches)
    shared = strata.compile(PROGRAM, target="cpu", fusion=False)  # fusion off: a miss, compiled in-process
    again, hit = compiled(fusion=False)
    assert hit and again.run.jit is shared.run.jit  # the in-process JitModule of the same kernels


@pytest.mark.parametrize(
    "change",
    ["another program", "a changed location", "fusion off", "another toolchain", "another Strata source"],
)
def test_a_changed_key_misses(cache, stored, monkeypatch, change):
    seed(cache, stored)
    text, options = PROGRAM, {}
    if change == "another program":
        text = build_program(128)
    elif change == "a changed location":
        text = "\n" + PROGRAM  # the same ops one line further down (their error messages quote it)
    elif change == "fusion off":
        options = {"fusion": False}
    elif change == "another toolchain":
        monkeypatch.setattr(cpu, "_toolchain", lambda: "xdsl 0 | another LLVM on another CPU")
    else:
        monkeypatch.setattr(compile_cache, "strata_fingerprint", lambda: "0.1.0 edited")
    exe, hit = compiled(text, **options)
    assert not hit and len(entries(cache)) == 2
    assert run(exe)  # it runs
    assert compiled()[1]  # the original entry is still there


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "bad payload"])
def test_a_damaged_entry_is_compiled_again_and_rewritten(cache, stored, damage):
    data = bytearray(stored[1])
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "flipped byte":
        data[len(data) * 2 // 3] ^= 0x40
    else:  # a valid checksum over something that does not decode
        data = compile_cache.MAGIC + hashlib.sha256(b"junk").digest() + b"junk"
    seed(cache, stored).write_bytes(bytes(data))
    exe, hit = compiled()
    assert not hit and same_bits(run(exe), stored[2])
    assert entries(cache)[0].read_bytes() == stored[1]  # rewritten whole


def test_concurrent_writers_leave_one_valid_entry(tmp_path):
    directory = tmp_path / "cache"
    env = {"STRATA_CACHE": "1", "STRATA_CACHE_DIR": str(directory)}
    processes = [run_script(tmp_path, f"writer{k}", env) for k in range(3)]
    for process in processes:
        finished(process)
    results = [np.load(tmp_path / f"writer{k}.npy").tobytes() for k in range(3)]
    assert results[0] == results[1] == results[2]
    assert len(entries(directory)) == 1 and not list(directory.glob("*.tmp"))
    payload = entries(directory)[0].read_bytes()[len(compile_cache.MAGIC) + 32 :]
    program, _, object_code = cpu.CpuProgram.unpack(payload)
    assert object_code and program.launches


def test_clear_cache_removes_entries_only(cache, stored):
    seed(cache, stored)
    (cache / "other.entry").write_bytes(b"")
    (cache / "notes.txt").write_text("not ours")
    assert strata.cache_dir() == cache
    assert strata.clear_cache() == 2
    assert entries(cache) == [] and (cache / "notes.txt").exists()


@pytest.mark.parametrize("value", ["0", "off", "OFF"])
def test_strata_cache_off_writes_nothing(cache, monkeypatch, value):
    monkeypatch.setenv("STRATA_CACHE", value)
    exe, hit = compiled()
    assert not hit and not cache.exists() and run(exe)


def test_cache_dir_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("STRATA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert strata.cache_dir() == tmp_path / "strata"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert strata.cache_dir() == Path.home() / ".cache" / "strata"


def test_an_unwritable_cache_warns_once_and_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("STRATA_CACHE", "1")
    monkeypatch.setenv("STRATA_CACHE_DIR", str(blocker / "cache"))  # cannot be a directory
    monkeypatch.setattr(compile_cache, "_warned", False)
    with pytest.warns(RuntimeWarning, match="compile cache"):
        exe, _ = compiled()
    assert run(exe)


def test_set_num_threads_keeps_the_numerics(cache, stored):
    seed(cache, stored)
    exe = compiled()[0]
    assert any(len(cpu.grid_chunks(l.spec.grid_size, cpu.WORKER_COUNT)) > 1 for l in exe.run.launches) or cpu.WORKER_COUNT == 1
    before = strata.get_num_threads()
    expected = stored[2]
    try:
        strata.set_num_threads(1)
        assert strata.get_num_threads() == 1
        assert same_bits(run(exe), expected)  # an executable compiled before the change
        strata.set_num_threads(3)
        assert same_bits(run(exe), expected)
    finally:
        strata.set_num_threads(before)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "two", True, None])
def test_set_num_threads_refuses_what_is_not_a_count(bad):
    with pytest.raises(strata.StrataError, match=r"strata.set_num_threads: n must be a positive integer"):
        strata.set_num_threads(bad)

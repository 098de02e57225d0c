"""The CPU runtime's parallel launches: kernels split over an OpenMP team (the kernels'
`.parallel` entries, lowering/llvm/parallel.py) must report a failed check from any
thread and give the same bits as one thread."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata import ops
from strata.lowering.llvm.parallel import openmp_library
from strata.runtime import cpu

pytestmark = pytest.mark.skipif(openmp_library() is None, reason="no libgomp on this system: the Python pool runs")


@pytest.fixture
def two_threads():
    before = strata.get_num_threads()
    strata.set_num_threads(2)
    yield
    strata.set_num_threads(before)


def embedding_program(rows: int, vocabulary: int = 64, width: int = 256):
    g = strata.Graph("lookup")
    table, ids = g.input("table", (vocabulary, width)), g.input("ids", (rows,), "i64")
    g.output(ops.embedding(table, ids))
    return g.build()


def test_launches_worth_splitting_take_the_openmp_entry(two_threads):
    exe = strata.compile(embedding_program(4096), target="cpu")
    assert any(launch.parallel is not None for launch in exe.run.launches)


@pytest.mark.parametrize("bad_row", [0, 2047, 4095])
def test_a_failed_check_on_any_thread_raises(two_threads, bad_row):
    exe = strata.compile(embedding_program(4096), target="cpu")
    table = np.arange(64 * 256, dtype=np.float32).reshape(64, 256)
    ids = np.arange(4096, dtype=np.int64) % 64
    np.testing.assert_array_equal(exe(table, ids)[0], table[ids])
    ids[bad_row] = 64
    with pytest.raises(strata.ExecutionError, match=r"an id is outside \[0, 64\)"):
        exe(table, ids)


def test_one_and_two_threads_give_the_same_bits(two_threads):
    g = strata.Graph("block")
    x, w = g.input("x", (256, 192)), g.input("w", (192, 320))
    g.output(ops.softmax(ops.gelu(x @ w)))
    program = g.build()
    exe = strata.compile(program, target="cpu")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s, dtype=np.float32) for s in ((256, 192), (192, 320))]
    two = exe(*args)[0]
    strata.set_num_threads(1)
    one = exe(*args)[0]
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(two, strata.interpret(program, *args)[0], rtol=1e-4, atol=1e-6)


def test_the_llvm_ir_has_a_parallel_entry_per_kernel():
    llvm_ir = cpu.jit_kernels(strata.compile(embedding_program(4096), target="cpu").module).llvm_ir()
    kernels = [line for line in llvm_ir.splitlines() if line.startswith("define") and "lookup_" in line]
    assert any(".parallel" in line for line in kernels) and len(kernels) >= 2
    assert "@GOMP_parallel" in llvm_ir

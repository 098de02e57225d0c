"""Memory safety below the graph level: tile IR that would read or write out of bounds,
write the caller's arrays or call a kernel with the wrong prototype is rejected with a
diagnostic, never run (each malicious program goes through `strata-run` in a subprocess:
a diagnostic and an exit code, never a signal)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import FunctionType, IndexType, i32

import strata
from strata.lowering.llvm.translate import translate_module
from strata.lowering.tile_to_loops.kernel import kernel_functions
from strata.runtime.cpu import CpuExecutable, allocate_arenas
from strata.support.errors import StrataError

from test_loops_to_llvm import parse

BIN = Path(sys.executable).parent

VIEW = "!tile.tensor_view<16xf32, strides [1], offset 0>"
PART = f"!tile.partition_view<4, {VIEW}>"


def copy_program(grid: int, index: str = "%i", launch: str = "%a, %c") -> str:
    """@main copies a 16-element input through a kernel over 4-element tiles."""
    return f"""tile.kernel @k(%a: memref<16xf32>, %c: memref<16xf32>) attributes {{grid = array<i64: {grid}>}} {{
  %i = tile.program_id 0 : index
  %far = arith.constant 100000 : index
  %neg = arith.constant -5 : index
  %va = tile.make_tensor_view %a : memref<16xf32> -> {VIEW}
  %vc = tile.make_tensor_view %c : memref<16xf32> -> {VIEW}
  %pa = tile.make_partition_view %va : {VIEW} -> {PART}
  %pc = tile.make_partition_view %vc : {VIEW} -> {PART}
  %t0 = token.make : !token.token
  %x, %t1 = tile.load_view_tko %pa[%i] token %t0 : {PART} -> !tile.tile<4xf32>
  %t2 = tile.store_view_tko %x, %pc[{index}] token %t1 : !tile.tile<4xf32>, {PART}
  tile.return
}}
func.func @main(%a: memref<16xf32>) -> memref<16xf32> {{
  %c = tile.buffer : memref<16xf32>
  tile.launch @k({launch}) : memref<16xf32>, memref<16xf32>
  func.return %c : memref<16xf32>
}}
"""


def run_tool(tool: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / tool), *args], capture_output=True, text=True, timeout=120)


def test_well_formed_copy_program_verifies(tmp_path):
    path = tmp_path / "ok.mlir"
    path.write_text(copy_program(4))
    result = run_tool("strata-opt", str(path))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "grid, index, launch, line, fragment",
    [
        (100, "%i", "%a, %c", 10, "'tile.load_view_tko': tile index 0..99 along axis 0 is outside the partition's 4 tiles"),
        (4, "%far", "%a, %c", 11, "'tile.store_view_tko': tile index 100000 along axis 0 is outside"),
        (4, "%neg", "%a, %c", 11, "'tile.store_view_tko': tile index -5 along axis 0 is outside"),
        (4, "%i", "%c, %a", 16, "'tile.launch': @k writes its argument 1, which is the program's argument 0"),
    ],
)
def test_run_rejects_unsafe_tile_program(tmp_path, grid, index, launch, line, fragment):
    path = tmp_path / "bad.mlir"
    path.write_text(copy_program(grid, index, launch))
    result = run_tool("strata-run", str(path))
    assert result.returncode == 2, (result.returncode, result.stderr)  # never a signal (< 0)
    assert "Traceback" not in result.stderr
    assert f"{path}:{line}:3: error: {fragment}" in result.stderr, result.stderr


@pytest.mark.parametrize("index", [-1, 8, 100000])
def test_translate_rejects_constant_out_of_range_memref_index(index):
    module = parse(f"""func.func @k(%m: memref<2x4xf32>) -> i32 {{
  %i = arith.constant 1 : index
  %j = arith.constant {index} : index
  %v = arith.constant 1.0 : f32
  memref.store %v, %m[%i, %j] : memref<2x4xf32>
  %z = arith.constant 0 : i32
  func.return %z : i32
}}""")
    with pytest.raises(StrataError, match=rf"@k: 'memref.store' at constant index {index} along axis 1 of memref<2x4xf32> \(valid 0..3\)"):
        translate_module(module)


def test_translate_accepts_constant_in_range_memref_index():
    module = parse("""func.func @k(%m: memref<2x4xf32>) -> f32 {
  %i = arith.constant 1 : index
  %j = arith.constant 3 : index
  %v = memref.load %m[%i, %j] : memref<2x4xf32>
  func.return %v : f32
}""")
    translate_module(module)


MATMUL = """func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
"""


@pytest.mark.parametrize("break_it", ["extra argument", "no result", "i64 grid range"])
def test_bind_checks_kernel_calling_convention(break_it):
    exe = strata.compile(MATMUL, target="cpu").run
    assert isinstance(exe, CpuExecutable)
    unbound = CpuExecutable(exe.lowered, bind=False)
    kernel = kernel_functions(unbound.module)[0]
    inputs, outputs = list(kernel.function_type.inputs.data), list(kernel.function_type.outputs.data)
    assert outputs == [i32] and isinstance(inputs[-1], IndexType)
    if break_it == "extra argument":
        inputs.append(IndexType())
    elif break_it == "no result":
        outputs = []
    else:
        inputs[-1] = i32
    kernel.properties["function_type"] = FunctionType.from_lists(inputs, outputs)
    with pytest.raises(StrataError, match=rf"kernel @{kernel.sym_name.data} does not have the runtime's calling convention"):
        unbound.bind(allocate_arenas(unbound.plan["arenas"]))


def test_bind_refuses_a_kernel_writing_an_input():
    """Defence in depth under the launch verifier: binding an (unverified) program whose
    launch writes an input slot fails instead of writing the caller's array."""
    exe = strata.compile(MATMUL, target="cpu").run
    unbound = CpuExecutable(exe.lowered, bind=False)
    program = unbound.lowered.program
    launch = next(op for op in program.body.block.ops if op.name == "tile.launch")
    x = program.body.block.args[0]
    output = launch.operands[-1]
    launch.operands = [*launch.operands[:-1], x]  # write the input instead (types differ: unverified)
    assert output is not x
    with pytest.raises(StrataError, match="writes its argument 2, the program's input 0"):
        unbound.bind(allocate_arenas(unbound.plan["arenas"]))


GUARDED_MATMUL = """
import ctypes, mmap, sys
import numpy as np
import strata
from strata import ops

libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = mmap.PAGESIZE


def guarded(rows, columns, seed):
    # An f32 array ending exactly where a page that may not be touched begins.
    size = rows * columns * 4
    pages = -(-size // PAGE) + 1
    memory = mmap.mmap(-1, pages * PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    assert libc.mprotect(base + (pages - 1) * PAGE, PAGE, 0) == 0
    array = np.frombuffer(memory, np.float32, rows * columns, (pages - 1) * PAGE - size).reshape(rows, columns)
    array[...] = np.random.default_rng(seed).standard_normal((rows, columns))
    return array


m, k, n = 133, 64, 81  # edge tiles of 5 rows and 17 columns
g = strata.Graph("guarded")
g.output(ops.matmul(g.input("x", (m, k)), g.input("w", (n, k)), transpose_b=True))
x, w = guarded(m, k, 0), guarded(n, k, 1)
got = strata.compile(g.build(), target="cpu")(x, w)[0]
np.testing.assert_allclose(got, x @ w.T, rtol=1e-4, atol=1e-4)
print("ok")
"""


def test_edge_tiles_of_a_matmul_read_nothing_past_their_operands():
    """Operands ending at a page nobody may touch: an edge tile of x @ wᵀ whose valid rows
    and columns are not a multiple of the loops' blocking must not read past them (it
    did: a block of 2 rows or 4 columns over a run-time extent, a SIGSEGV here)."""
    result = subprocess.run([sys.executable, "-c", GUARDED_MATMUL], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]

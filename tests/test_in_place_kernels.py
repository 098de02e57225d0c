"""Kernels the memory planner runs in place (`tile.aliased`): translated as a dispatcher
over an always-inlined body (lowering/llvm/in_place.py), so that the in-place launch
addresses one pointer and vectorizes, and a launch on separate arrays still works."""

from __future__ import annotations

import ctypes

import numpy as np

import strata
from strata import ops
from strata.dialects.context import parse_module
from strata.lowering.llvm.jit import JitModule
from strata.lowering.llvm.translate import translate_module

KERNEL = """
func.func @scale(%x: memref<1000xf32>, %y: memref<1000xf32>, %begin: index, %end: index) -> i32
    attributes {tile.grid = array<i64: 1>, tile.in_place = array<i64: 0>, tile.aliased} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<1000xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %y[%i] : memref<1000xf32>
  }
  %ok = arith.constant 0 : i32
  func.return %ok : i32
}
"""


def test_an_aliased_kernel_dispatches_on_pointer_equality():
    llvm_ir = str(translate_module(parse_module(KERNEL)))
    dispatcher = llvm_ir[llvm_ir.index('define i32 @"scale"') :]
    dispatcher = dispatcher[: dispatcher.index("}")]
    assert "icmp eq ptr" in dispatcher and dispatcher.count('call i32 @"scale.general"') == 2
    assert 'define internal i32 @"scale.general"' in llvm_ir and "alwaysinline" in llvm_ir
    assert "noalias" not in llvm_ir  # the body may be called with overlapping arrays


def test_both_versions_compute_the_same():
    jit = JitModule(translate_module(parse_module(KERNEL)))
    kernel = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(
        jit.function_address("scale")
    )
    x = np.arange(1000, dtype=np.float32)
    y = np.zeros_like(x)
    assert kernel(x.ctypes.data, y.ctypes.data, 0, 1) == 0
    np.testing.assert_array_equal(y, 2 * np.arange(1000, dtype=np.float32))
    assert kernel(x.ctypes.data, x.ctypes.data, 0, 1) == 0  # in place
    np.testing.assert_array_equal(x, y)


def test_an_unfused_chain_runs_in_place_and_matches_the_reference():
    g = strata.Graph("chain")
    x = g.input("x", (4097,))
    g.output(ops.tanh(ops.exp(ops.relu(x * 2.0)) * 0.5))
    program = g.build()
    exe = strata.compile(program, target="cpu", fusion=False)
    assert any("tile.aliased" in f.attributes for f in exe.module.ops)
    data = np.random.default_rng(0).standard_normal(4097, dtype=np.float32)
    np.testing.assert_allclose(exe(data)[0], strata.interpret(program, data)[0], rtol=2e-6, atol=1e-7)

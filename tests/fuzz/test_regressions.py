"""Programs strata-fuzz found failing, minimized, kept as regressions (each names the
seed that found it and where the fix lives)."""

from __future__ import annotations

import numpy as np
import pytest

import strata


@pytest.mark.parametrize("fusion", [True, False], ids=["fused", "unfused"])
def test_scale_of_scale_is_bit_exact(fusion):
    """Seed 7763: canonicalization composed scale 3 then 0.75 into one scale by 2.25, one
    ulp off the two-step product (transforms/graph_canonicalize.py now composes only
    exact factors)."""
    text = """
    func.func @f(%x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
      %0 = graph.scale %x {value = 3.000000e+00 : f64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
      %1 = graph.scale %0 {value = 7.500000e-01 : f64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
      func.return %1 : tensor<2x4x4xf32>
    }"""
    x = np.random.default_rng(7763).uniform(-4, 4, (2, 4, 4)).astype(np.float32)
    (got,) = strata.compile(text, fusion=fusion)(x)
    np.testing.assert_array_equal(got, (x * np.float32(3.0)) * np.float32(0.75))


def test_gradient_of_a_mean_over_no_elements():
    """Seed 200005 (--mode grad): the reduce_mean VJP divided by the element count, 0 for
    an empty axis — an internal ZeroDivisionError in autodiff (transforms/vjp_rules_reductions.py)."""
    g = strata.Graph("f")
    x = g.input("x", (3, 0), "f64")
    g.output(strata.ops.reduce_mean(strata.ops.reduce_mean(x, [1]), [0]))
    value, gradient = strata.value_and_grad(g.build(), argnums=0)(np.zeros((3, 0)))
    assert np.isnan(value) and gradient.shape == (3, 0)


@pytest.mark.parametrize("target", ["reference", "cpu"])
def test_gradient_of_a_cross_entropy_over_no_rows(target):
    """Seed 70098 (--mode grad): the cross_entropy VJP divided by the row count, 0 for an
    empty batch — an internal ZeroDivisionError in autodiff (transforms/vjp_rules_nn.py)."""
    g = strata.Graph("f")
    logits, labels = g.input("logits", (0, 1), "f32"), g.input("labels", (0,), "i64")
    g.output(strata.ops.cross_entropy(logits, labels))
    value, gradient = strata.value_and_grad(g.build(), argnums=0, target=target)(
        np.zeros((0, 1), np.float32), np.zeros((0,), np.int64)
    )
    assert np.isnan(value) and gradient.shape == (0, 1)


@pytest.mark.parametrize("fusion", [True, False], ids=["fused", "unfused"])
def test_bf16_product_rounded_back_compiles(fusion):
    """Seed 93297: bf16 add, relu and scale by 3 before a transpose of [5, 1, 4, 16]
    aborted the process in LLVM's x86 code generator: from fpext operands instcombine made
    the f32 product rounded back to bfloat a <4 x bfloat> fmul, which LegalizeDAG cannot
    handle (lowering/llvm/emitter.py now widens bfloat by its bits)."""
    text = """
    func.func @f(%x: tensor<5x1x4x16xbf16>, %b: tensor<1x1x1x16xbf16>) -> tensor<1x4x16x5xbf16> {
      %0 = graph.add %x, %b : (tensor<5x1x4x16xbf16>, tensor<1x1x1x16xbf16>) -> tensor<5x1x4x16xbf16>
      %1 = graph.relu %0 : (tensor<5x1x4x16xbf16>) -> tensor<5x1x4x16xbf16>
      %2 = graph.scale %1 {value = 3.000000e+00 : f64} : (tensor<5x1x4x16xbf16>) -> tensor<5x1x4x16xbf16>
      %3 = graph.transpose %2 {permutation = array<i64: 1, 2, 3, 0>} : (tensor<5x1x4x16xbf16>) -> tensor<1x4x16x5xbf16>
      func.return %3 : tensor<1x4x16x5xbf16>
    }"""
    import ml_dtypes

    rng = np.random.default_rng(93297)
    x, b = (rng.standard_normal(shape).astype(ml_dtypes.bfloat16) for shape in ((5, 1, 4, 16), (1, 1, 1, 16)))
    (got,) = strata.compile(text, fusion=fusion)(x, b)
    (want,) = strata.interpret(text, x, b)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))

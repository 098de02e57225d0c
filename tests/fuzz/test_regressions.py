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

"""strata.grad / strata.value_and_grad: loss and gradients against closed forms computed
with numpy, for traced builder functions and for modules, on the CPU and the reference."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata import ops


def half_squared_norm(x, w):
    y = x @ w
    return ops.reduce_sum(y * y, axes=(0, 1)) * 0.5


def closed_form(x: np.ndarray, w: np.ndarray):
    """The loss 0.5·|x w|² and its gradients (x w) wᵀ and xᵀ (x w)."""
    y = x @ w
    return 0.5 * np.sum(y * y), y @ w.T, x.T @ y


TOLERANCE = {np.float32: dict(rtol=2e-4, atol=1e-4), np.float64: dict(rtol=1e-10, atol=1e-10)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (7, 17, 5), (33, 7, 17)])
@pytest.mark.parametrize("target", ["cpu", "reference"])
def test_value_and_grad_of_a_traced_function_matches_the_closed_form(m, k, n, dtype, target):
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    x, w = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    value, (dx, dw) = strata.value_and_grad(half_squared_norm, argnums=(0, 1), target=target)(x, w)
    loss, expected_dx, expected_dw = closed_form(x.astype(np.float64), w.astype(np.float64))
    assert value.shape == () and value.dtype == dtype
    assert dx.shape == x.shape and dw.shape == w.shape and dw.dtype == dtype
    np.testing.assert_allclose(value, loss, **TOLERANCE[dtype])
    np.testing.assert_allclose(dx, expected_dx, **TOLERANCE[dtype])
    np.testing.assert_allclose(dw, expected_dw, **TOLERANCE[dtype])


def test_grad_returns_one_gradient_for_an_int_argnums_and_accepts_negative_indices():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((9, 4)), rng.standard_normal((4, 3))
    dw = strata.grad(half_squared_norm, argnums=-1)(x, w)
    np.testing.assert_allclose(dw, closed_form(x, w)[2], rtol=1e-10)


def test_a_module_with_an_integer_argument_differentiates_the_float_ones():
    text = """
func.func @loss(%logits: tensor<5x7xf32>, %labels: tensor<5xi64>) -> tensor<f32> {
  %0 = "graph.cross_entropy"(%logits, %labels) : (tensor<5x7xf32>, tensor<5xi64>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
"""
    rng = np.random.default_rng(1)
    logits, labels = rng.standard_normal((5, 7)).astype(np.float32), rng.integers(0, 7, 5)
    value, dlogits = strata.value_and_grad(text)(logits, labels)
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(value, -np.mean(np.log(probabilities[np.arange(5), labels])), rtol=1e-5)
    expected = probabilities.copy()
    expected[np.arange(5), labels] -= 1.0
    np.testing.assert_allclose(dlogits, expected / 5, rtol=1e-4, atol=1e-6)
    with pytest.raises(strata.BuildError, match="argument 1 of @loss is i64, not a float"):
        strata.grad(text, argnums=1)(logits, labels)


def test_each_argument_signature_compiles_once():
    value_and_gradient = strata.value_and_grad(half_squared_norm)
    rng = np.random.default_rng(2)
    for shape in [(3, 4), (3, 4), (6, 4)]:
        value_and_gradient(rng.standard_normal(shape), rng.standard_normal((4, 2)))
    assert len(value_and_gradient.compiled) == 2


def test_a_loss_that_is_not_a_float_scalar_is_a_build_error():
    with pytest.raises(strata.BuildError, match="must return one float scalar"):
        strata.grad(lambda x: x * 2.0)(np.ones((2, 3), np.float32))
    with pytest.raises(strata.BuildError, match="argnums 2 is out of range for 2 arguments"):
        strata.grad(half_squared_norm, argnums=2)(np.ones((2, 3)), np.ones((3, 1)))
    with pytest.raises(strata.InputError, match="argument 0 has unsupported dtype uint8"):
        strata.grad(half_squared_norm)(np.ones((2, 3), np.uint8), np.ones((3, 1)))

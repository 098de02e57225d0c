"""A compiled training step: the update matches numpy on reference gradients; training
reduces the loss; parameters are updated in place."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import strata
from strata import ops

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import train_mlp  # noqa: E402


def linear_loss(g: strata.Graph) -> strata.Tensor:
    x, y = g.input("x", (7, 5), "f64"), g.input("y", (7,), "i64")
    w, b = g.param("w", (3, 5), "f64"), g.param("b", (3,), "f64")
    return ops.cross_entropy(ops.matmul(x, w, transpose_b=True) + b, y)


def numpy_gradients(w, b, x, y):
    logits = x @ w.T + b
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    loss = -np.mean(np.log(p[np.arange(len(y)), y]))
    p[np.arange(len(y)), y] -= 1
    d = p / len(y)
    return loss, d.T @ x, d.sum(0)


@pytest.mark.parametrize("optimizer", [strata.SGD(lr=0.3, momentum=0.5), strata.Adam(lr=0.05)], ids=["sgd", "adam"])
@pytest.mark.parametrize("target", ["cpu", "reference"])
def test_steps_match_numpy_optimizer(optimizer, target):
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 5)), rng.standard_normal(3)
    trainer = strata.Trainer(linear_loss, optimizer, {"w": w, "b": b}, target=target)
    w_param, b_param = trainer.params["w"], trainer.params["b"]
    ws, bs = w.copy(), b.copy()
    state = {k: [np.zeros_like(v) for _ in optimizer.state_names] for k, v in (("w", ws), ("b", bs))}
    for step in range(1, 4):
        x, y = rng.standard_normal((7, 5)), rng.integers(0, 3, 7)
        loss = trainer.step(x=x, y=y)
        want_loss, gw, gb = numpy_gradients(ws, bs, x, y)
        assert loss == pytest.approx(want_loss, rel=1e-10)
        for name, p, g in (("w", ws, gw), ("b", bs, gb)):
            s = state[name]
            if isinstance(optimizer, strata.SGD):
                s[0][...] = optimizer.momentum * s[0] + g
                p -= optimizer.lr * s[0]
            else:
                s[0][...] = optimizer.beta1 * s[0] + (1 - optimizer.beta1) * g
                s[1][...] = optimizer.beta2 * s[1] + (1 - optimizer.beta2) * g * g
                lr = optimizer.lr * np.sqrt(1 - optimizer.beta2**step) / (1 - optimizer.beta1**step)
                p -= lr * s[0] / (np.sqrt(s[1]) + optimizer.eps)
        np.testing.assert_allclose(trainer.params["w"], ws, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(trainer.params["b"], bs, rtol=1e-9, atol=1e-12)
    assert trainer.params["w"] is w_param and trainer.params["b"] is b_param  # updated in place


def test_update_is_fused_with_the_step():
    module, params, inputs = strata.build_train_step(linear_loss, strata.Adam())
    assert params == ["w", "b"] and inputs == ["x", "y"]
    function = module.body.block.first_op
    assert [r for r in function.function_type.outputs.data][0].get_shape() == ()
    assert len(function.function_type.outputs.data) == 1 + 2 + 2 * 2  # loss, params, m and v


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_train_mlp_example_loss_falls(optimizer):
    losses = train_mlp.train(optimizer, steps=150, report_every=0)
    assert np.mean(losses[-20:]) < 0.6 * np.mean(losses[:5])


def test_loss_must_be_a_scalar_and_parameters_given():
    with pytest.raises(strata.BuildError, match="float scalar"):
        strata.build_train_step(lambda g: g.param("w", (2,)) * 2.0, strata.SGD())
    with pytest.raises(strata.BuildError, match="no initial value"):
        strata.Trainer(linear_loss, strata.SGD(), {"w": np.zeros((3, 5))})

"""graph.dropout's run-time step: the mask is a function of (seed, step, index) on every
target, step 0 is the step-less draw, the backward pass recomputes the forward's mask, and
`strata.compile(fresh_dropout=True)` and `strata.Trainer` draw fresh masks each call."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import strata
from strata import ops
from strata.gradcheck import check_gradients
from strata.runtime.reference.kernels import dropout_keep_mask
from strata.support.errors import BuildError, InputError
from targets import compile_for_test

GAMMA = 0xD1B54A32D192ED03


def program(shape, dtype="f32", p=0.5, seed=11):
    g = strata.Graph("f")
    x, step = g.input("x", shape, dtype), g.input("step", (), "i64")
    g.output(ops.dropout(x, p, seed, step), ops.dropout(x, p, seed))
    return g.build()


@pytest.mark.parametrize("dtype", ["f32", "f64", "bf16"])
@pytest.mark.parametrize("shape", [(1,), (7,), (17, 33)])
def test_step_rekeys_the_mask_on_every_target(dtype, shape):
    module = program(shape, dtype)
    x = np.ones(shape, {"f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16}[dtype])
    exe = compile_for_test(str(module))
    masks = []
    for step in (0, 1, 2, 2**40):
        stepped, plain = strata.interpret(module, x, np.int64(step))
        compiled = exe(x, np.int64(step))
        np.testing.assert_array_equal(np.asarray(compiled[0], np.float64), np.asarray(stepped, np.float64))
        expected = dropout_keep_mask((11 + step * GAMMA) & (2**64 - 1), shape, 0.5)
        np.testing.assert_array_equal(np.asarray(stepped, np.float64) != 0, expected)
        if step == 0:
            np.testing.assert_array_equal(np.asarray(stepped, np.float64), np.asarray(plain, np.float64))
        masks.append(expected)
    if np.prod(shape) >= 17:
        assert not np.array_equal(masks[1], masks[2]) and not np.array_equal(masks[0], masks[1])


def test_gradient_recomputes_the_stepped_mask():
    g = strata.Graph("loss")
    x, w, step = g.input("x", (6, 9), "f64"), g.param("w", (9, 5), "f64"), g.input("step", (), "i64")
    h = ops.dropout(ops.tanh(x @ w), 0.3, 5, step)
    g.output(ops.reduce_sum(h * h, (0, 1)))
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal((6, 9)), rng.standard_normal((9, 5)), np.int64(3)]
    report = check_gradients(g.build(), inputs=inputs)
    assert report.ok(1e-6), str(report)


def test_builder_rejects_a_bad_step():
    g = strata.Graph("f")
    x = g.input("x", (4,))
    with pytest.raises(BuildError, match="step must be a rank-0 i64 tensor"):
        ops.dropout(x, 0.5, 1, g.input("s", (2,), "i64"))


def test_fresh_dropout_draws_new_masks_each_call_reproducibly():
    g = strata.Graph("f")
    x = g.input("x", (33, 17))
    g.output(ops.dropout(x, 0.5, 4) * 1.0)
    module = g.build()
    ones = np.ones((33, 17), np.float32)
    fresh = strata.compile(module, fresh_dropout=True)
    first, second = fresh(ones)[0], fresh(ones)[0]
    assert not np.array_equal(first, second)
    again = strata.compile(module, fresh_dropout=True)
    np.testing.assert_array_equal(again(ones)[0], first)
    np.testing.assert_array_equal(again(ones)[0], second)
    plain = strata.compile(module)
    np.testing.assert_array_equal(plain(ones)[0], plain(ones)[0])
    np.testing.assert_array_equal(plain(ones)[0], first)  # call 0 is step 0: the step-less mask
    with pytest.raises(InputError, match="fresh_dropout must be a bool"):
        strata.compile(module, fresh_dropout="yes")


def test_trainer_draws_a_fresh_mask_every_step():
    def loss(g):
        x, w = g.input("x", (16, 8)), g.param("w", (8, 8))
        h = x @ w
        return ops.reduce_mean(ops.dropout(h, 0.5, 9) * h, (0, 1))

    rng = np.random.default_rng(0)
    x, w0 = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 8)).astype(np.float32)
    runs = []
    for _ in range(2):
        trainer = strata.Trainer(loss, strata.SGD(lr=0.0, momentum=0.0), {"w": w0})
        assert "dropout_step" in trainer.input_names
        runs.append([trainer.step(x=x) for _ in range(4)])
    assert len(set(runs[0])) == 4  # the parameters do not move (lr 0): only the masks change
    assert runs[0] == runs[1]


def test_a_loss_with_its_own_dropout_step_argument():
    def clashing(g):
        x, w = g.input("x", (4, 4)), g.param("w", (4, 4))
        mine = g.input("dropout_step", (), "i64")
        return ops.reduce_mean(ops.dropout(x @ w, 0.5, 1, mine) + ops.dropout(x @ w, 0.5, 2), (0, 1))

    with pytest.raises(strata.IRError, match="already has an argument named 'dropout_step'"):
        strata.Trainer(clashing, strata.SGD(lr=0.0), {"w": np.eye(4, dtype=np.float32)})

    def own_step_only(g):
        x, w = g.input("x", (16, 8)), g.param("w", (8, 8))
        step = g.input("dropout_step", (), "i64")
        return ops.reduce_mean(ops.dropout(x @ w, 0.5, 1, step) * (x @ w), (0, 1))

    trainer = strata.Trainer(own_step_only, strata.SGD(lr=0.0, momentum=0.0), {"w": np.eye(8, dtype=np.float32)})
    x = np.random.default_rng(3).standard_normal((16, 8)).astype(np.float32)
    same = [trainer.step(x=x, dropout_step=np.int64(5)) for _ in range(2)]
    assert same[0] == same[1]  # the caller's step, not the Trainer's counter

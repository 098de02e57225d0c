"""strata.lazy autograd, keyed RNG, checkpointing, optimizers and compiled steps."""

import gc
import weakref

import numpy as np
import pytest

import strata
import strata.lazy as lt
from strata import ops
from strata.lazy import rng
from strata.lazy.autograd import BACKWARD_FUNCTIONS
from strata.lazy.nn import functional as F
from strata.transforms.autodiff import RECOMPUTED


def mlp_loss(x, w1, b1, gamma, w2, labels):
    h = F.gelu(F.layer_norm(F.linear(x, w1, b1), (w1.shape[0],), gamma))
    logits = F.log_softmax(h @ w2, dim=-1) + F.softmax(h, dim=-1).sum(dim=1, keepdim=True)
    return F.cross_entropy(logits, labels) + (F.tanh(h) * h).mean()


def test_gradients_match_finite_differences_in_f64():
    r = np.random.default_rng(0)
    values = [r.standard_normal(s) for s in [(7, 5), (17, 5), (17,), (17,), (17, 3)]]
    labels = lt.tensor(r.integers(0, 3, 7))
    params = [lt.tensor(v, requires_grad=True) for v in values[1:]]
    x = lt.tensor(values[0])
    loss = mlp_loss(x, *params, labels)
    loss.backward()
    grads = [p.grad.numpy() for p in params]

    def loss_at(arrays):
        return mlp_loss(x, *(lt.tensor(a) for a in arrays), labels).item()

    eps = 1e-6
    for i, g in enumerate(grads):
        for index in [(0,) * g.ndim, tuple(s - 1 for s in g.shape)]:
            plus = [v.copy() for v in values[1:]]
            minus = [v.copy() for v in values[1:]]
            plus[i][index] += eps
            minus[i][index] -= eps
            numeric = (loss_at(plus) - loss_at(minus)) / (2 * eps)
            assert g[index] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (i, index)


def test_attention_gradients_match_the_matmul_softmax_formulation():
    r = np.random.default_rng(1)
    arrays = [r.standard_normal((2, 6, 4)) for _ in range(3)]
    future = lt.tensor(np.triu(np.full((6, 6), -np.inf), 1))
    weights = lt.tensor(r.standard_normal((2, 6, 4)))

    def gradients(attention):
        q, k, v = (lt.tensor(a, requires_grad=True) for a in arrays)
        (attention(q, k, v) * weights).sum().backward()
        return [t.grad.numpy() for t in (q, k, v)]

    fused = gradients(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    composed = gradients(lambda q, k, v: F.softmax(q @ k.transpose(1, 2) * 0.5 + future, dim=-1) @ v)
    for got, want in zip(fused, composed):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_backward_is_lazy_and_grads_accumulate_until_reset():
    w = lt.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    lt.reset_stats()
    (w * w).sum().backward()
    assert lt.stats()["launches"] == 0 and not w.grad.node.materialized
    (w * 3.0).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.array([1.0, 2.0, 3.0]) + 3)
    w.grad = None
    (w * 3.0).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 3.0, 3.0])


def test_retain_grad_no_grad_and_detach():
    x = lt.tensor(np.array([[1.0, -2.0], [3.0, 4.0]]), requires_grad=True)
    h = x * 2.0
    h.retain_grad()
    (F.relu(h) * h).sum().backward()
    expected_dh = np.where(np.array([[2.0, -4.0], [6.0, 8.0]]) > 0, 2 * np.array([[2.0, -4.0], [6.0, 8.0]]), 0)
    np.testing.assert_allclose(h.grad.numpy(), expected_dh)
    np.testing.assert_allclose(x.grad.numpy(), 2 * expected_dh)
    with lt.no_grad():
        assert not (x * 2.0).requires_grad
    assert not x.detach().requires_grad and (x * 2.0).requires_grad
    with pytest.raises(lt.GradientError, match="does not require grad"):
        x.detach().sum().backward()


def test_backward_twice_needs_retain_graph():
    x = lt.tensor(np.array([0.5, 1.5]), requires_grad=True)
    loss = x.exp().sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.5, 1.5]))
    with pytest.raises(lt.BackwardGraphFreedError, match="retain_graph"):
        loss.backward()


def test_a_saved_tensor_modified_in_place_is_a_version_error_naming_it():
    x = lt.tensor(np.array([0.5, 1.5]), requires_grad=True)
    y = x.exp()  # exp saves its result
    y.mul_(2.0)
    with pytest.raises(lt.SavedTensorModifiedError, match=r"result of exp.*version 0, now 1"):
        y.sum().backward()
    w = lt.tensor(np.ones(2), name="w")
    z = (x * w).sum()  # mul saves both operands
    w[0] = 3.0
    with pytest.raises(lt.SavedTensorModifiedError, match=r'tensor "w".*mul'):
        z.backward()


def test_in_place_writes_on_values_with_history_are_differentiated():
    x = lt.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    h = x * 1.0
    h[1:].mul_(x[:2])  # h = [x0, x1*x0, x2*x1]
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 + 2.0, 1.0 + 3.0, 2.0])  # d(x0 + x1 x0 + x2 x1)


def test_keyed_rng_is_reproducible_and_fresh_per_draw():
    lt.manual_seed(7)
    first = [lt.randn(17).numpy(), F.dropout(lt.ones(1000), 0.5).numpy()]
    second = [lt.randn(17).numpy(), F.dropout(lt.ones(1000), 0.5).numpy()]
    lt.manual_seed(7)
    again = [lt.randn(17).numpy(), F.dropout(lt.ones(1000), 0.5).numpy()]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], second[0]) and not np.array_equal(first[1], second[1])
    assert set(np.unique(first[1])) == {0.0, 2.0} and 400 < (first[1] == 0).sum() < 600


def test_dropout_mask_is_graph_dropouts_mask_for_the_derived_seed():
    key = rng.RandomKey(seed=3, draw=5, op=2, kind="dropout", p=0.25)
    mask = rng.generate(key, (7, 17), "f32")
    g = strata.Graph("d")
    g.output(ops.dropout(g.input("x", (7, 17)), 0.25, rng.derived_seed(key)))
    (expected,) = strata.interpret(g.build(), np.ones((7, 17), np.float32))
    np.testing.assert_array_equal(mask, expected)


def test_checkpoint_recomputes_with_the_same_dropout_mask():
    def block(x, w):
        return F.dropout(F.tanh(x @ w), 0.3).exp()

    def grads(checkpointed):
        lt.manual_seed(11)
        x = lt.tensor(np.linspace(-1, 1, 7 * 5).reshape(7, 5))
        w = lt.tensor(np.linspace(-1, 1, 5 * 17).reshape(5, 17), requires_grad=True)
        y = lt.checkpoint(block, x, w) if checkpointed else block(x, w)
        (y * y).sum().backward()
        recomputed = any(RECOMPUTED in op.attributes for op in list(BACKWARD_FUNCTIONS.values())[-1].walk())
        return w.grad.numpy(), recomputed

    (plain, plain_recomputed), (checkpointed, recomputed) = grads(False), grads(True)
    np.testing.assert_allclose(checkpointed, plain, rtol=1e-12)
    assert recomputed and not plain_recomputed
    with pytest.raises(lt.CheckpointImpureRegionError, match="add_"):
        lt.checkpoint(lambda t: t.add_(1.0), lt.zeros(3))


def test_sgd_matches_the_update_rule():
    w0, g_x = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([[1.0, 2.0], [3.0, 4.0]])
    w = lt.tensor(w0, requires_grad=True)
    opt = lt.optim.SGD([w], lr=0.1, momentum=0.9)
    velocity, expected = np.zeros_like(w0), w0.copy()
    for _ in range(3):
        opt.zero_grad()
        (w * lt.tensor(g_x)).sum().backward()
        opt.step()
        velocity = 0.9 * velocity + g_x
        expected -= 0.1 * velocity
    lt.mark_step()
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-12)


def training_setup(p_dropout=0.1, seed=0):
    r = np.random.default_rng(seed)
    x, y = lt.tensor(r.standard_normal((17, 7)).astype(np.float32)), lt.tensor(r.integers(0, 3, 17))
    w1 = lt.tensor(r.standard_normal((16, 7)).astype(np.float32) * 0.3, requires_grad=True)
    w2 = lt.tensor(r.standard_normal((3, 16)).astype(np.float32) * 0.3, requires_grad=True)
    opt = lt.optim.Adam([w1, w2], lr=0.05)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(F.linear(F.dropout(F.relu(F.linear(x, w1)), p_dropout), w2), y)
        loss.backward()
        opt.step()
        return loss

    return step, (x, y), (w1, w2)


def test_a_training_loop_compiles_once_per_distinct_graph_then_hits_the_cache():
    step, batch, _ = training_setup()
    lt.manual_seed(0)
    lt.reset_stats()
    losses = []
    for _ in range(5):
        losses.append(step(*batch).item())  # forward graph
        lt.mark_step()  # backward + update graph
    assert lt.stats() == {"compiles": 2, "cache_hits": 8, "launches": 10}
    assert losses[-1] < losses[0]


def test_compiled_step_compiles_once_and_matches_the_lazy_loop():
    results = []
    for compiled in (False, True):
        step, batch, params = training_setup(p_dropout=0.0)  # eager and staged draws differ in op nonce
        step = lt.compile(step) if compiled else step
        lt.manual_seed(0)
        lt.reset_stats()
        losses = [step(*batch).item() for _ in range(5)]
        lt.mark_step()
        results.append((losses, [p.numpy() for p in params], lt.stats()))
    (lazy_losses, lazy_params, _), (losses, params, stats) = results
    assert stats == {"compiles": 1, "cache_hits": 4, "launches": 5}
    np.testing.assert_allclose(losses, lazy_losses, rtol=1e-5)
    for a, b in zip(params, lazy_params):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_compiled_step_gradients_and_unread_effects_match_the_lazy_loop():
    results = []
    for compiled in (False, True):
        step, batch, params = training_setup(p_dropout=0.0)
        step = lt.compile(step) if compiled else step
        for _ in range(3):
            step(*batch).item()
        step(*batch)  # nothing read: mark_step() commits the update and the gradients
        with lt.no_grad():
            params[0].mul_(1.0)  # a written base written again: the gradients stay pending
        lt.reset_stats()
        lt.mark_step()
        assert lt.stats()["launches"] == 1
        assert all(p.grad.node.materialized for p in params)
        results.append([(p.numpy(), p.grad.numpy()) for p in params])
    assert params[0].grad is params[0].grad  # wrapped once, when first read
    eager, staged = results
    for (value, grad), (eager_value, eager_grad) in zip(staged, eager):
        np.testing.assert_allclose(value, eager_value, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(grad, eager_grad, rtol=1e-4, atol=1e-6)


def test_compiled_step_results_are_freed_without_the_cycle_collector():
    step, batch, (w1, _) = training_setup(p_dropout=0.0)
    step = lt.compile(step)
    for _ in range(3):
        step(*batch).item()
    gc.disable()
    try:
        before = weakref.ref(w1._base.node)
        step(*batch).item()
        lt.mark_step()
        assert before() is None  # refcounting freed the previous step's results
    finally:
        gc.enable()


def test_compiled_step_draws_fresh_reproducible_masks():
    def run():
        step, batch, _ = training_setup(p_dropout=0.5)
        step = lt.compile(step)
        lt.manual_seed(3)
        return [step(*batch).item() for _ in range(3)]

    first, second = run(), run()
    assert first == second
    lt.manual_seed(3)
    batch = training_setup(p_dropout=0.5)[1]
    without_update = lt.compile(lambda x: F.dropout(x, 0.5))
    masks = [without_update(batch[0]).numpy() for _ in range(2)]
    assert not np.array_equal(masks[0], masks[1])


def test_compiled_step_rejects_host_reads_and_restages_for_new_shapes():
    w = lt.tensor(np.ones(3), requires_grad=True)

    def peek(x):
        return (x * w).sum().item()

    with pytest.raises(lt.HostReadInCompileError, match="staging"):
        lt.compile(peek)(lt.ones(3, dtype="f64"))
    scaled = lt.compile(lambda x: x * 2.0)
    lt.reset_stats()
    assert scaled(lt.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    assert scaled(lt.tensor([3.0, 4.0, 5.0])).tolist() == [6.0, 8.0, 10.0]
    assert scaled(lt.tensor([5.0, 6.0])).tolist() == [10.0, 12.0]
    assert lt.stats()["compiles"] == 2 and len(scaled.variants) == 2


def test_compiled_calls_share_a_program_only_for_equal_functions_and_arguments():
    x, y = lt.tensor([1.0, 2.0]), lt.tensor([3.0, 4.0])
    lt.reset_stats()
    scaled, scaled_again = lt.compile(lambda a: a * 1.5), lt.compile(lambda a: a * 1.5)
    assert scaled(x).tolist() == [1.5, 3.0] and scaled_again(y).tolist() == [4.5, 6.0]
    assert lt.stats()["compiles"] == 1  # equal staged structure: one program
    assert np.signbit(lt.compile(lambda a: a * -0.0)(x).numpy()).all()
    assert not np.signbit(lt.compile(lambda a: a * 0.0)(x).numpy()).any()
    assert scaled(lt.tensor([1.0, 2.0], dtype="f64")).numpy().dtype == np.float64
    assert scaled(lt.tensor([1.0, 2.0, 3.0])).tolist() == [1.5, 3.0, 4.5]
    assert lt.stats()["compiles"] == 5  # a scalar's sign, a dtype, a shape: new programs
    a, b, c = lt.tensor([1.0]), lt.tensor([10.0]), lt.tensor([100.0])
    combine = lt.compile(lambda: a + 2.0 * b + 3.0 * c)
    assert combine().tolist() == [321.0]
    b.copy_(a)  # b's recipe is now a's: the call reads one value twice
    assert combine().tolist() == [303.0]
    b.copy_(lt.tensor([10.0]))
    c.copy_(b)  # two distinct values again, aliased the other way
    assert combine().tolist() == [51.0]
    assert lt.stats()["compiles"] == 8


def test_compiled_step_restages_when_captured_state_stops_sharing_a_recipe():
    a, b = lt.tensor([1.0]), lt.tensor([10.0])
    b.copy_(a)  # b now shares a's recipe: staging reads it once
    combine = lt.compile(lambda: a + 2.0 * b)
    np.testing.assert_allclose(combine().numpy(), [3.0])
    b.copy_(lt.tensor([10.0]))
    np.testing.assert_allclose(combine().numpy(), [21.0])
    assert len(combine.variants[()]) == 2


def test_compiled_step_restages_when_a_gradient_it_accumulates_into_is_reset():
    """A variant staged with `w.grad` set adds into that tensor; after `w.grad = None` the
    step must assign a fresh gradient, not keep adding into the dropped tensor."""
    w = lt.tensor(np.ones(3))
    w.requires_grad = True
    x = lt.tensor(np.arange(3.0))

    def step(x):
        loss = (w * x).sum()
        loss.backward()
        return loss

    staged = lt.compile(step)
    staged(x)
    staged(x)
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 2.0, 4.0])
    w.grad = None
    staged(x)
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 1.0, 2.0])
    staged(x)
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 2.0, 4.0])


def test_a_compiled_step_called_inside_another_counts_as_its_write():
    """Staging `outer` replays the already staged `inner`, which writes w in place: the
    write is part of `outer` (each call advances w once) and staging leaves w as it was."""
    w = lt.tensor([1.0])
    inner = lt.compile(lambda: w.add_(1.0))
    inner()

    def twice_after_inner():
        inner()
        return w * 2.0

    outer = lt.compile(twice_after_inner)
    np.testing.assert_array_equal(outer().numpy(), [6.0])
    np.testing.assert_array_equal(w.numpy(), [3.0])
    np.testing.assert_array_equal(outer().numpy(), [8.0])
    assert w.version == 3


def test_compiled_step_restages_when_arguments_stop_aliasing():
    combine = lt.compile(lambda x, y: x + 2.0 * y)
    x, y = lt.tensor([1.0]), lt.tensor([10.0])
    np.testing.assert_allclose(combine(x, x).numpy(), [3.0])
    np.testing.assert_allclose(combine(x, y).numpy(), [21.0])
    np.testing.assert_allclose(combine(y, y).numpy(), [30.0])  # aliased again: the first variant
    assert len(next(iter(combine.variants.values()))) == 2


def test_compiled_step_writing_one_alias_and_reading_the_other():
    def accumulate(x, y):
        x.add_(1.0)
        return y * 1.0

    step = lt.compile(accumulate)
    x, y = lt.tensor([1.0]), lt.tensor([5.0])
    np.testing.assert_allclose(step(x, x).numpy(), [2.0])
    np.testing.assert_allclose(step(x, y).numpy(), [5.0])
    np.testing.assert_allclose(x.numpy(), [3.0])


def test_compiled_step_with_unchanged_aliasing_reuses_its_variant():
    state = lt.tensor([1.0, 2.0])
    alias = state[:]  # a view of the same base, staged and replayed as one
    step = lt.compile(lambda x, view: (state.mul_(2.0), x + view)[1])
    x = lt.tensor([1.0, 1.0])
    lt.reset_stats()
    expected_state = np.array([1.0, 2.0])
    for _ in range(4):
        expected_state = expected_state * 2.0
        np.testing.assert_allclose(step(x, alias).numpy(), 1.0 + expected_state)
    np.testing.assert_allclose(state.numpy(), expected_state)
    assert len(next(iter(step.variants.values()))) == 1
    assert lt.stats()["compiles"] == 1

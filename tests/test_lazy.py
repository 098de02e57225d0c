"""strata.lazy: values against numpy, views and in-place writes through aliases, the
forcing rule, the compile cache, host-coercion and version errors, failure state.
Autograd, RNG, checkpointing and compiled steps: tests/test_lazy_autograd.py."""

import numpy as np
import pytest

import strata
import strata.lazy as lt
from strata.lazy.nn import functional as F
from strata.runtime.cuda import cuda_available


def arrays(*shapes, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 17])
def test_arithmetic_broadcasting_and_scalars_match_numpy(n, dtype):
    a, b, c = arrays((n, 3), (3,), (n, 1), dtype=dtype, seed=n)
    x, y, z = lt.tensor(a), lt.tensor(b), lt.tensor(c)
    got = ((x + y) * z - x / (y * y + 1.0) + 2.0 - (-x) * 0.5).numpy()
    want = (a + b) * c - a / (b * b + 1.0) + 2.0 - (-a) * 0.5
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose((1.0 - x).numpy(), 1.0 - a, rtol=1e-6)
    np.testing.assert_allclose((3.0 / (x * x + 1.0)).numpy(), 3.0 / (a * a + 1.0), rtol=1e-5)


@pytest.mark.parametrize("n", [1, 7, 17])
def test_matmul_reductions_and_nn_functions_match_numpy(n):
    a, w, v = arrays((n, 5), (5, 4), (5,), seed=n)
    x, wt = lt.tensor(a), lt.tensor(w)
    h = x @ wt
    np.testing.assert_allclose(h.numpy(), a @ w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose((x @ lt.tensor(v)).numpy(), a @ v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.sum(dim=1, keepdim=True).numpy(), (a @ w).sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h.mean().item(), (a @ w).mean(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.max(dim=0).numpy(), (a @ w).max(0), rtol=1e-6)
    shifted = (a @ w) - (a @ w).max(1, keepdims=True)
    softmax = np.exp(shifted) / np.exp(shifted).sum(1, keepdims=True)
    np.testing.assert_allclose(F.softmax(h, dim=1).numpy(), softmax, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(F.log_softmax(h, dim=-1).numpy(), np.log(softmax), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(F.relu(h).numpy(), np.maximum(a @ w, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(F.tanh(x).numpy(), np.tanh(a), rtol=1e-5, atol=1e-6)
    mean, var = a.mean(1, keepdims=True), a.var(1, keepdims=True)
    np.testing.assert_allclose(F.layer_norm(x, (5,)).numpy(), (a - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-4)


def test_embedding_cross_entropy_and_integer_tensors():
    table = arrays((6, 3))[0]
    ids = lt.tensor([[0, 5], [2, 2]])
    assert ids.dtype == "i64"
    np.testing.assert_allclose(F.embedding(ids, lt.tensor(table)).numpy(), table[[[0, 5], [2, 2]]])
    logits, labels = arrays((7, 4), seed=3)[0], np.array([0, 3, 1, 2, 3, 0, 1])
    log_p = logits - logits.max(1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(1, keepdims=True))
    got = F.cross_entropy(lt.tensor(logits), lt.tensor(labels)).item()
    assert got == pytest.approx(-log_p[np.arange(7), labels].mean(), rel=1e-5)
    assert (ids + 1).tolist() == [[1, 6], [3, 3]]


def numpy_attention(q, k, v, scale, causal):
    scores = scale * q @ np.swapaxes(k, -1, -2)
    if causal:
        scores = np.where(np.triu(np.ones(scores.shape[-2:], bool), 1), -np.inf, scores)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True) @ v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scaled_dot_product_attention_matches_numpy(dtype):
    q, k, v = arrays((2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 6), dtype=dtype)
    got = F.scaled_dot_product_attention(lt.tensor(q), lt.tensor(k), lt.tensor(v), is_causal=True).numpy()
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, numpy_attention(q, k, v, 0.5, causal=True), rtol=rtol, atol=rtol)
    q_longer, k_shorter, v_shorter = arrays((3, 7, 4), (3, 2, 4), (3, 2, 6), dtype=dtype, seed=1)
    got = F.scaled_dot_product_attention(lt.tensor(q_longer), lt.tensor(k_shorter), lt.tensor(v_shorter), scale=0.3).numpy()
    np.testing.assert_allclose(got, numpy_attention(q_longer, k_shorter, v_shorter, 0.3, causal=False), rtol=rtol, atol=rtol)
    with pytest.raises(strata.BuildError, match="scaled_dot_product_attention"):
        F.scaled_dot_product_attention(lt.tensor(q), lt.tensor(k[..., :3]), lt.tensor(v))


def test_views_read_their_base():
    a = np.arange(7 * 17, dtype=np.float64).reshape(7, 17)
    x = lt.tensor(a)
    np.testing.assert_array_equal(x[2].numpy(), a[2])
    np.testing.assert_array_equal(x[1:6:2, ::3].numpy(), a[1:6:2, ::3])
    np.testing.assert_array_equal(x[..., -1].numpy(), a[..., -1])
    np.testing.assert_array_equal(x.T[3].numpy(), a.T[3])
    np.testing.assert_array_equal(x.reshape(17, 7)[16].numpy(), a.reshape(17, 7)[16])
    np.testing.assert_array_equal(x.view(-1)[5:9].numpy(), a.ravel()[5:9])
    np.testing.assert_array_equal(x.transpose(0, 1).permute(1, 0).numpy(), a)
    assert x[3, 4].item() == a[3, 4]


def test_writes_through_views_reach_every_alias_and_advance_the_version():
    a = np.arange(7 * 17, dtype=np.float32).reshape(7, 17)
    x = lt.tensor(a)
    row, column, window, flat = x[2], x[:, 5], x.T[3:6, 1:4], x.view(-1)
    before = x * 1.0  # a value: later writes must not change it
    row.add_(100.0)
    column.mul_(-1.0)
    window.zero_()
    flat[0:3] = lt.tensor([7.0, 8.0, 9.0])
    x[6, 16] = 0.5
    expected = a.copy()
    expected[2] += 100
    expected[:, 5] *= -1
    expected.T[3:6, 1:4] = 0
    expected.ravel()[0:3] = [7, 8, 9]
    expected[6, 16] = 0.5
    np.testing.assert_array_equal(x.numpy(), expected)
    np.testing.assert_array_equal(row.numpy(), expected[2])
    np.testing.assert_array_equal(column.numpy(), expected[:, 5])
    np.testing.assert_array_equal(flat.numpy(), expected.ravel())
    np.testing.assert_array_equal(before.numpy(), a)
    assert x.version == row.version == 5


def test_copy_fill_and_broadcasting_in_place_ops():
    x = lt.zeros(3, 4, dtype="f64")
    x.copy_(np.arange(4.0))
    x[1].fill_(2.5)
    x.sub_(lt.tensor([[1.0], [2.0], [3.0]], dtype="f64"), alpha=2.0)
    expected = np.tile(np.arange(4.0), (3, 1))
    expected[1] = 2.5
    expected -= 2 * np.array([[1.0], [2.0], [3.0]])
    np.testing.assert_array_equal(x.numpy(), expected)
    assert x.dtype == "f64"


def test_reading_a_value_forces_only_its_dependency_closure_and_mark_step_forces_the_rest():
    pending, other = lt.tensor(np.ones(5, np.float32)), lt.tensor(np.full(5, 2.0, np.float32))
    pending.add_(1.0)
    derived = other * 3.0
    lt.reset_stats()
    assert derived.tolist() == [6.0] * 5
    assert not pending.node.materialized  # an unrelated pending write did not run
    assert lt.stats()["launches"] == 1
    lt.mark_step()
    assert pending.node.materialized
    assert pending.tolist() == [2.0] * 5


def test_same_computation_recorded_twice_compiles_once():
    def compute(a):
        x = lt.tensor(a)
        return (F.relu(x * 1.5 - 0.25) @ x.T).sum(dim=0)

    lt.reset_stats()
    values = [compute(arrays((7, 17), seed=s)[0]).numpy() for s in range(5)]
    assert lt.stats() == {"compiles": 1, "cache_hits": 4, "launches": 5}
    assert not np.allclose(values[0], values[1])


def test_python_scalars_are_specialized_by_bit_pattern():
    x = lt.tensor(np.ones(3, np.float32))
    lt.reset_stats()
    assert not np.signbit((x * 0.0).numpy()).any()
    assert np.signbit((x * -0.0).numpy()).all()  # -0.0 == 0.0, yet a different graph
    assert np.isnan((x * float("nan")).numpy()).all()
    assert np.isnan((x * float("nan")).numpy()).all()
    assert lt.stats()["compiles"] == 3 and lt.stats()["cache_hits"] == 1


def test_host_coercion_of_a_pending_tensor_says_to_call_item():
    t = lt.tensor([1.0, 2.0]).sum()
    for convert in (bool, float, int, np.asarray):
        with pytest.raises(lt.TensorHostCoercionError, match=r"\.item\(\)"):
            convert(t)
    assert t.item() == 3.0
    assert float(t) == 3.0  # computed already: nothing implicit happens
    assert "pending" not in repr(t)


def test_bad_input_raises_errors_naming_the_op_and_tensors():
    x, y = lt.tensor(np.ones((2, 3), np.float32), name="x"), lt.tensor(np.ones((4, 5), np.float32))
    with pytest.raises(strata.BuildError, match="matmul"):
        x @ y
    with pytest.raises(strata.BuildError, match="add"):
        x + lt.tensor(np.ones(3))  # f32 + f64: no implicit promotion
    with pytest.raises(IndexError, match="out of range"):
        x[2]
    with pytest.raises(IndexError, match="embedding"):
        x[lt.tensor([0])]
    with pytest.raises(strata.BuildError, match="reshape"):
        x.reshape(4, 2)
    with pytest.raises(lt.LeafMutationError, match='"x"'):
        x.requires_grad_()
        x.add_(1.0)


def test_a_failed_execution_commits_nothing_and_leaves_other_work_usable():
    table = lt.tensor(np.eye(3, dtype=np.float32))
    bad = F.embedding(lt.tensor([0, 7]), table)  # id 7 is out of range: a run-time error
    good = table * 2.0
    with pytest.raises(lt.LazyExecutionError, match="embedding"):
        bad.numpy()
    assert not bad.node.materialized
    np.testing.assert_array_equal(good.numpy(), 2 * np.eye(3))
    with pytest.raises(lt.LazyExecutionError):
        bad.numpy()  # still pending, fails the same way


def test_cuda_device_needs_a_gpu():
    if cuda_available():
        pytest.skip("a GPU is present")
    with pytest.raises(lt.DeviceUnavailableError, match="cuda"):
        lt.zeros(3, device="cuda")
    with pytest.raises(lt.DeviceUnavailableError, match="tpu"):
        lt.zeros(3, device="tpu")

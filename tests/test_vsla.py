"""The variable-shape algebra (dialects/vsla.py, transforms/vsla_to_graph.py): the unit and
property tests of its specification on the reference interpreter (the vsla ops' own numpy
meaning), on the CPU and, with a GPU, on CUDA (lowered to graph ops), PTX for the GPU
without one, capacity programs, gradients against finite differences, and the builder's
errors."""

from __future__ import annotations

import numpy as np
import pytest

from targets import gpu_ptx
from test_gpu import needs_gpu, needs_ptx_tools

import strata
from strata import ops, vsla
from strata.transforms.vsla_to_graph import LowerVslaToGraphPass, twiddles
from strata.targets.passes import run_pipeline

TARGETS = ["reference", "cpu", pytest.param("cuda", marks=needs_gpu)]
TOLERANCE = {np.float64: dict(rtol=1e-12, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-5)}


def run(build, inputs, target, dtype=np.float64):
    """build(graph, *input tensors) -> outputs, compiled for `target` and run on `inputs`."""
    g = strata.Graph("f")
    name = {np.float64: "f64", np.float32: "f32"}[dtype]
    tensors = [g.input(f"x{i}", np.shape(x), name) for i, x in enumerate(inputs)]
    outputs = build(*tensors)
    g.output(*(outputs if isinstance(outputs, tuple) else (outputs,)))
    arrays = [np.asarray(x, dtype) for x in inputs]
    return strata.compile(g.build(), target=target)(*arrays)


@pytest.mark.parametrize("target", TARGETS)
def test_ambient_addition_and_subtraction(target):
    added, subtracted = run(lambda a, b: (vsla.add(a, b), vsla.sub(a, b)), [[1, 2, 3], [4, 5]], target)
    np.testing.assert_array_equal(added, [5, 7, 3])
    np.testing.assert_array_equal(subtracted, [-3, -3, 3])
    (cancelled,) = run(lambda a, b: vsla.sub(a, b), [[1, 2, 3], [1, 2, 3]], target)
    assert cancelled.shape == (3,)  # trailing zeros stay until shrink
    assert vsla.shrink(cancelled).shape == (0,)


@pytest.mark.parametrize("target", TARGETS)
def test_ambient_promotion_in_two_dimensions(target):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 5)), rng.standard_normal((4, 3))
    (y,) = run(lambda x, z: vsla.add(x, z), [a, b], target)
    want = np.zeros((4, 5))
    want[:2, :5] += a
    want[:4, :3] += b
    np.testing.assert_allclose(y, want, **TOLERANCE[np.float64])


@pytest.mark.parametrize("target", TARGETS)
def test_hadamard_is_zero_past_the_shorter_operand(target):
    (y,) = run(lambda a, b: vsla.hadamard(a, b), [[1, 2, 3], [4, 5]], target)
    np.testing.assert_array_equal(y, [4, 10, 0])


@pytest.mark.parametrize("target", TARGETS)
def test_kronecker_is_not_commutative(target):
    forward, backward = run(lambda a, b: (vsla.kron(a, b), vsla.kron(b, a)), [[1, 2], [0, 1]], target)
    np.testing.assert_array_equal(forward, [0, 1, 0, 2])
    np.testing.assert_array_equal(backward, [0, 0, 1, 2])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_direct_and_fft_convolutions_agree_above_the_threshold(target, dtype):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(600), rng.standard_normal(520)  # auto: the FFT (from 512)
    direct, fft, auto = run(
        lambda x, y: (vsla.conv(x, y, "direct"), vsla.conv(x, y, "fft"), vsla.conv(x, y)), [a, b], target, dtype
    )
    want = np.convolve(a.astype(dtype).astype(np.float64), b.astype(dtype).astype(np.float64))
    for got in (direct, fft, auto):
        assert got.shape == (1119,) and got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=1e-9 if dtype == np.float64 else 1e-6, atol=1e-9 if dtype == np.float64 else 1e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("m, n", [(1, 1), (1, 2), (2, 3), (3, 1)])  # FFT lengths 1, 2, 4, 4
def test_fft_at_the_smallest_lengths(target, m, n):
    rng = np.random.default_rng(m * 10 + n)
    a, b = rng.standard_normal(m), rng.standard_normal(n)
    (y,) = run(lambda x, z: vsla.conv(x, z, "fft"), [a, b], target)
    np.testing.assert_allclose(y, np.convolve(a, b), rtol=1e-12, atol=1e-12)


def test_fft_plans_are_cached_by_length():
    g = strata.Graph("f")
    a, b, c = (g.input(n, (100,), "f64") for n in "abc")
    g.output(vsla.conv(a, b, "fft"), vsla.conv(b, c, "fft"))  # both L = 256
    module = g.build()
    before = twiddles.cache_info()
    run_pipeline(module, "lower-vsla-to-graph")
    after = twiddles.cache_info()
    constants = [op for op in module.walk() if op.name == "graph.constant" and op.result.type.get_shape() != ()]
    assert len(constants) == 2 * 8  # (cos, sin) for n = 256, 128, ..., 2: once, not once per conv
    assert after.hits + after.misses - before.hits - before.misses == 8


def test_auto_takes_the_fft_for_a_short_kernel_over_a_long_signal():
    g = strata.Graph("f")
    g.output(vsla.conv(g.input("kernel", (8,), "f64"), g.input("signal", (600000,), "f64")))  # 8 x 600008 > 2^22
    module = g.build()
    run_pipeline(module, "lower-vsla-to-graph")
    names = {op.name for op in module.walk()}
    assert "graph.reduce_sum" not in names and "graph.concat" in names  # FFT stages, no outer product


@pytest.mark.parametrize("target", TARGETS)
def test_empty_operands(target):
    results = run(
        lambda e, x: (vsla.conv(e, x), vsla.kron(x, e), vsla.add(e, x), vsla.stack([e, x]), vsla.hadamard(e, x)),
        [np.zeros(0), [1.0, 2.0]], target,
    )  # fmt: skip
    conv, kron, added, stacked, product = results
    assert conv.shape == (0,) and kron.shape == (0,)
    np.testing.assert_array_equal(added, [1, 2])
    np.testing.assert_array_equal(stacked, [[0, 0], [1, 2]])
    np.testing.assert_array_equal(product, [0, 0])


@pytest.mark.parametrize("target", TARGETS)
def test_heterogeneous_stacking(target):
    rng = np.random.default_rng(3)
    parts = [rng.standard_normal((2, 3)), rng.standard_normal((1, 4)), rng.standard_normal((3, 1))]
    (y,) = run(lambda *xs: vsla.stack(list(xs)), parts, target)
    assert y.shape == (3, 3, 4)
    for i, part in enumerate(parts):
        np.testing.assert_array_equal(y[i, : part.shape[0], : part.shape[1]], part)
        assert not y[i][part.shape[0]:].any() and not y[i][:, part.shape[1]:].any()


@pytest.mark.parametrize("target", TARGETS)
def test_window_pyramid_of_two_to_the_l_tensors(target):
    levels, item = 4, (3,)
    stream = np.arange(2**levels * 3, dtype=np.float64).reshape(2**levels, *item)

    def pyramid(x):
        outputs = []
        for _ in range(levels):
            x = vsla.window(x, 2)
            outputs.append(x)
        return tuple(outputs)

    outputs = run(pyramid, [stream], target)
    assert len(outputs) == levels  # the cascade's height
    for level, y in enumerate(outputs, start=1):
        assert y.shape == (2 ** (levels - level), *(2,) * level, *item)
        np.testing.assert_array_equal(y.reshape(-1), stream.reshape(-1))  # windows keep the order
    (top,) = run(lambda x: vsla.sum(vsla.window(x, 3), 1), [stream[:7]], target)  # 7 items: 2 windows, one dropped
    np.testing.assert_array_equal(top, stream[:6].reshape(2, 3, 3).sum(axis=1))


@pytest.mark.parametrize("target", TARGETS)
def test_reductions_and_unary_ops(target):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5))
    results = run(
        lambda t: (vsla.sum(t, 0), vsla.mean(t, -1), vsla.relu(t), vsla.exp(t), vsla.tanh(t), vsla.sigmoid(t),
                   vsla.gelu(t), vsla.log(vsla.exp(t)), vsla.scale(t, 2.5)),
        [x], target,
    )  # fmt: skip
    from math import erf

    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))
    wants = (x.sum(0), x.mean(-1), np.maximum(x, 0), np.exp(x), np.tanh(x), 1 / (1 + np.exp(-x)), gelu(x), x, 2.5 * x)
    for got, want in zip(results, wants):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def with_trailing_zeros(rng, shape, zeros):
    x = rng.standard_normal(shape)
    x[tuple(slice(d - z, d) for d, z in zip(shape, zeros))] = 0
    for axis, z in enumerate(zeros):
        index = [slice(None)] * len(shape)
        index[axis] = slice(shape[axis] - z, shape[axis])
        x[tuple(index)] = 0
    return x


@pytest.mark.parametrize("seed", range(5))
def test_shrink_is_idempotent_and_minimal(seed):
    rng = np.random.default_rng(seed)
    x = with_trailing_zeros(rng, (5, 6, 4), (seed % 3, 2, 1))
    once = vsla.shrink(x)
    np.testing.assert_array_equal(vsla.shrink(once), once)
    assert once.shape == (5 - seed % 3, 4, 3) == vsla.minimal_shape(x)
    assert vsla.minimal_shape(np.zeros((3, 2))) == (0, 0)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(3))
def test_adding_zero_preserves_value_shape_rank_and_trailing_zeros(target, seed):
    rng = np.random.default_rng(10 + seed)
    t = with_trailing_zeros(rng, (4, 6), (1, 2))
    zero = np.zeros((2 + seed, 3))
    (y,) = run(lambda a, z: vsla.add(a, z), [t, zero], target)
    assert y.shape == t.shape and y.ndim == t.ndim
    np.testing.assert_array_equal(y, t)
    assert vsla.minimal_shape(y) == vsla.minimal_shape(t)


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_gradients_of_the_semirings_and_structural_ops_match_finite_differences(method):
    rng = np.random.default_rng(5)
    a, b, c = rng.standard_normal(6), rng.standard_normal(4), rng.standard_normal((3, 2))

    def loss(x, y, z):
        conv = vsla.conv(x, y, method)
        kron = vsla.kron(y, x)
        stacked = vsla.stack([x, y])
        windowed = vsla.window(vsla.add(z, vsla.scale(z, 2.0)), 2)
        return (ops.reduce_sum(vsla.hadamard(conv, conv), axes=(0,)) + ops.reduce_sum(vsla.tanh(kron), axes=(0,))
                + ops.reduce_sum(vsla.mean(stacked, 0), axes=(0,)) + ops.reduce_sum(windowed * windowed, axes=(0, 1, 2)))  # fmt: skip

    value, grads = strata.value_and_grad(loss, argnums=(0, 1, 2))(a, b, c)
    g = strata.Graph("loss")
    g.output(loss(g.input("a", (6,), "f64"), g.input("b", (4,), "f64"), g.input("c", (3, 2), "f64")))
    module = g.build()

    def numeric(index, arrays):
        base = [np.array(v) for v in arrays]
        gradient = np.zeros_like(base[index])
        for position in np.ndindex(base[index].shape):
            shifted = []
            for sign in (1, -1):
                moved = [v.copy() for v in base]
                moved[index][position] += sign * 1e-6
                shifted.append(strata.interpret(module, *moved)[0])
            gradient[position] = (shifted[0] - shifted[1]) / 2e-6
        return gradient

    for index, gradient in enumerate(grads):
        np.testing.assert_allclose(gradient, numeric(index, [a, b, c]), rtol=1e-6, atol=1e-6)


@needs_ptx_tools
def test_vsla_programs_compile_to_ptx():
    text = """func.func @main(%a: tensor<70xf32>, %b: tensor<65xf32>, %c: tensor<3x5xf32>, %d: tensor<4x2xf32>)
    -> (tensor<134xf32>, tensor<134xf32>, tensor<4550xf32>, tensor<2x4x5xf32>, tensor<4x5xf32>) {
  %0 = vsla.conv %a, %b {method = "direct"} : (tensor<70xf32>, tensor<65xf32>) -> tensor<134xf32>
  %1 = vsla.conv %a, %b {method = "fft"} : (tensor<70xf32>, tensor<65xf32>) -> tensor<134xf32>
  %2 = vsla.kron %a, %b : (tensor<70xf32>, tensor<65xf32>) -> tensor<4550xf32>
  %3 = vsla.stack %c, %d : (tensor<3x5xf32>, tensor<4x2xf32>) -> tensor<2x4x5xf32>
  %4 = vsla.hadamard %c, %d : (tensor<3x5xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
  func.return %0, %1, %2, %3, %4 : tensor<134xf32>, tensor<134xf32>, tensor<4550xf32>, tensor<2x4x5xf32>, tensor<4x5xf32>
}"""
    assert ".entry" in gpu_ptx(text)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda a, m: vsla.add(a, m), "ambient promotion extends extents, never ranks"),
        (lambda a, m: vsla.kron(m, m), "Model B multiplies vectors"),
        (lambda a, m: vsla.conv(a, a, method="fast"), "method must be one of auto, direct, fft"),
        (lambda a, m: vsla.window(m, 0), "size and stride must be >= 1, got size 0, stride 0"),
        (lambda a, m: vsla.window(m, 2, 0), "size and stride must be >= 1, got size 2, stride 0"),
        (lambda a, m: vsla.sum(a, 0), "rank 0"),
    ],
)
def test_builder_errors_name_the_op(build, message):
    g = strata.Graph("f")
    a, m = g.input("a", (3,)), g.input("m", (2, 2))
    with pytest.raises(strata.BuildError, match=message):
        build(a, m)


def test_pass_leaves_graph_programs_alone():
    g = strata.Graph("f")
    x = g.input("x", (4,))
    g.output(ops.relu(x))
    module = g.build()
    text = str(module)
    LowerVslaToGraphPass().apply(None, module)
    assert str(module) == text


def reference_outputs(build, arrays):
    g = strata.Graph("logical")
    tensors = [g.input(f"x{i}", a.shape, "f64") for i, a in enumerate(arrays)]
    outputs = build(*tensors)
    g.output(*(outputs if isinstance(outputs, tuple) else (outputs,)))
    return strata.interpret(g.build(), *arrays)


def every_op(a, b):
    return (vsla.conv(a, b, "direct"), vsla.conv(a, b, "fft"), vsla.add(a, b), vsla.kron(a, b), vsla.kron(b, a),
            vsla.exp(a), vsla.sigmoid(b), vsla.log(vsla.exp(b)), vsla.mean(vsla.stack([a, b]), 1),
            vsla.sum(vsla.window(a, 3), 1), vsla.hadamard(a, vsla.tanh(b)))  # fmt: skip


@pytest.mark.parametrize("target", TARGETS)
def test_one_program_runs_every_logical_shape_within_its_capacities(target):
    program = vsla.compile(every_op, capacities=[(16,), (9,)], dtype="f64", target=target)
    executable, buffers = program.executable, [id(b) for b in program.buffers + program.extras]
    rng = np.random.default_rng(6)
    for m, n in [(16, 9), (3, 2), (1, 1), (0, 4), (7, 9), (16, 0), (5, 5)]:  # big, then smaller: the slack is reused
        arrays = [rng.standard_normal(m), rng.standard_normal(n)]
        got = program(*arrays)
        for y, want in zip(got, reference_outputs(every_op, arrays)):
            assert y.shape == want.shape
            np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    assert program.executable is executable  # compiled once
    assert [id(b) for b in program.buffers + program.extras] == buffers  # bound once


def test_capacity_programs_in_two_dimensions():
    def build(x, y):
        return vsla.add(x, y), vsla.mean(x, 0), vsla.window(vsla.stack([x, y]), 1), vsla.exp(y)

    program = vsla.compile(build, capacities=[(6, 5), (4, 7)], dtype="f64")
    rng = np.random.default_rng(7)
    for shapes in [((6, 5), (4, 7)), ((2, 3), (3, 1)), ((1, 5), (4, 2))]:
        arrays = [rng.standard_normal(s) for s in shapes]
        for y, want in zip(program(*arrays), reference_outputs(build, arrays)):
            np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


def test_capacity_errors():
    program = vsla.compile(lambda a: vsla.relu(a), capacities=[(4, 3)])
    with pytest.raises(strata.InputError, match=r"argument 0 has shape \[5, 3\], outside its capacity \[4, 3\]"):
        program(np.ones((5, 3), np.float32))
    with pytest.raises(strata.InputError, match="expected 1 arguments, got 2"):
        program(np.ones((1, 1)), np.ones(1))
    with pytest.raises(strata.BuildError, match="vsla ops only, not graph.relu"):
        vsla.compile(lambda a: ops.relu(a), capacities=[(4,)])


def test_repeated_runs_are_bit_identical():
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal(700), rng.standard_normal(600)
    g = strata.Graph("f")
    x, y = g.input("a", (700,), "f64"), g.input("b", (600,), "f64")
    g.output(vsla.conv(x, y), vsla.mean(vsla.stack([x, y]), 0))
    exe = strata.compile(g.build(), target="cpu")
    first = exe(a, b)
    for _ in range(3):
        for again, reference in zip(exe(a, b), first):
            assert again.tobytes() == reference.tobytes()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_batched_convolution_runs_along_the_last_axis(target, method):
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 3, 9)), rng.standard_normal((2, 3, 5))
    (y,) = run(lambda x, z: vsla.conv(x, z, method), [a, b], target)
    want = np.stack([np.stack([np.convolve(a[i, j], b[i, j]) for j in range(3)]) for i in range(2)])
    assert y.shape == (2, 3, 13)
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("m, n", [(1, 1), (1, 2), (2, 2)])  # L = 1 (no stages), 2, 4 with a batch of 4
def test_batched_fft_at_the_smallest_lengths(target, m, n):
    """Found by strata-fuzz --mode vsla: a batched FFT of L = 1 misread its rows."""
    rng = np.random.default_rng(m * 10 + n)
    a, b = rng.standard_normal((4, m)), rng.standard_normal((4, n))
    (y,) = run(lambda x, z: vsla.conv(x, z, "fft"), [a, b], target)
    np.testing.assert_allclose(y, np.stack([np.convolve(a[i], b[i]) for i in range(4)]), rtol=1e-12, atol=1e-12)


def test_batch_axes_must_match():
    g = strata.Graph("f")
    with pytest.raises(strata.BuildError, match=r"the batch axes differ: lhs \[2\], rhs \[3\]"):
        vsla.conv(g.input("a", (2, 4)), g.input("b", (3, 4)))


@pytest.mark.parametrize("target", TARGETS)
def test_overlapping_and_spaced_windows(target):
    stream = np.arange(30, dtype=np.float64).reshape(10, 3)
    sliding, pairs, spaced, short = run(
        lambda s: (vsla.window(s, 3, 1), vsla.window(s, 4, 2), vsla.window(s, 2, 3), vsla.window(s, 11, 1)), [stream], target
    )
    np.testing.assert_array_equal(sliding, np.stack([stream[i:i + 3] for i in range(8)]))
    np.testing.assert_array_equal(pairs, np.stack([stream[2 * i:2 * i + 4] for i in range(4)]))
    np.testing.assert_array_equal(spaced, np.stack([stream[3 * i:3 * i + 2] for i in range(3)]))
    assert short.shape == (0, 11, 3)  # shorter than one window


def test_gradient_of_a_sliding_window_sums_the_overlaps():
    x = np.random.default_rng(12).standard_normal((6, 2))
    gradient = strata.grad(lambda s: ops.reduce_sum(vsla.window(s, 3, 1), axes=(0, 1, 2)))(x)
    np.testing.assert_allclose(gradient, np.array([1, 2, 3, 3, 2, 1], float)[:, None] * np.ones((6, 2)))


def test_capacity_program_with_a_sliding_window():
    def build(s):
        return vsla.sum(vsla.window(s, 3, 2), 1)

    program = vsla.compile(build, capacities=[(12, 2)], dtype="f64")
    rng = np.random.default_rng(13)
    for items in (12, 7, 3, 2):
        stream = rng.standard_normal((items, 2))
        (got,) = program(stream)
        (want,) = reference_outputs(build, [stream])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_mixing_the_models_is_a_build_error_at_the_call():
    g = strata.Graph("f")
    a, b = g.input("a", (3,)), g.input("b", (2,))
    product = vsla.kron(a, b)
    with pytest.raises(strata.BuildError, match="mixes Model A .* and Model B"):
        vsla.conv(vsla.relu(product), b)
    g.output(product)
    assert "vsla.conv" not in str(g.build())  # the refused op is not kept

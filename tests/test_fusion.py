"""fuse-elementwise keeps numerics and cuts kernels: reference before/after, CPU after."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import strata
from strata import ops
from strata.check import compare
from strata.dialects.context import parse_module
from strata.targets.passes import run_pipeline
from xdsl.ir import Operation
from strata.support.dtypes import tensor_dtype
from programs import random_array
from targets import TARGET, compile_for_test

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
UNARY = [ops.exp, ops.tanh, ops.sigmoid, ops.neg, ops.abs, ops.relu, ops.silu, ops.erf, ops.gelu]
BINARY = [ops.add, ops.sub, ops.mul, ops.maximum, ops.minimum]


def random_program(seed: int) -> strata.Graph:
    """A random DAG of elementwise ops on broadcasting inputs, with a matmul in the middle
    (a fusion barrier) and several results."""
    rng = np.random.default_rng(seed)
    g = strata.Graph(f"random_{seed}")
    values = [g.input("x", (7, 33)), g.input("row", (33,)), g.input("col", (7, 1))]
    w = g.input("w", (33, 33))
    for step in range(12):
        if step == 6:
            values.append(ops.matmul(ops.broadcast_to(values[-1], (7, 33)), w))
            continue
        pick = lambda: values[int(rng.integers(len(values)))]  # noqa: E731
        if rng.random() < 0.5:
            values.append(UNARY[int(rng.integers(len(UNARY)))](pick()))
        else:
            values.append(BINARY[int(rng.integers(len(BINARY)))](pick(), pick()))
    g.output(*values[-3:])
    return g


def inputs_for(module, seed=0):
    rng = np.random.default_rng(seed)
    function = module.body.block.first_op
    return [(rng.standard_normal(t.get_shape()) * 0.5).astype(np.float32) for t in function.function_type.inputs.data]


@pytest.mark.parametrize("seed", range(12))
def test_random_dags_fused_match_unfused(seed):
    module = random_program(seed).build()
    text = str(module)
    args = inputs_for(module, seed)
    fused = parse_module(text)
    run_pipeline(fused, "fuse-elementwise")
    assert any(op.name == "graph.fused" for op in fused.walk())
    want = strata.interpret(text, *args)
    for comparison in compare(strata.interpret(fused, *args), want):
        assert comparison.max_abs == 0.0, comparison
    for comparison in compare(compile_for_test(text)(*args), want):
        assert comparison.ok, comparison


def kernel_count(text: str) -> int:
    exe = compile_for_test(text)
    return sum(1 for op in exe.module.walk() if op.name == "tile.launch")


def test_elementwise_chain_is_one_kernel():
    g = strata.Graph("chain")
    x, a, b = g.input("x", (1000,)), g.input("a", (1000,)), g.input("b", (1000,))
    g.output(ops.relu(x * a + b) * ops.sigmoid(x) - ops.tanh(x) / 2.0)
    assert kernel_count(str(g.build())) == 1


def test_example_kernel_counts():
    """MLP: one kernel per layer (bias and activation are matmul epilogues). Transformer
    block: layernorm ×2, q/k/v projections, attention (the scores, causal mask, softmax
    and probabilities @ v recognized as one graph.attention: on the CPU a copy kernel
    transposing k, then one fused kernel; on the GPU three kernels: scores, softmax,
    values), the head-merging transpose, output projection (+ residual), MLP up (+ bias +
    gelu), MLP down (+ bias + residual); the head-splitting transposes are absorbed into
    the matmuls that read them: 11 launches on the CPU, 12 on the GPU."""
    assert kernel_count((EXAMPLES / "mlp.mlir").read_text()) == 3
    expected = 12 if TARGET == "cuda" else 11
    assert kernel_count((EXAMPLES / "transformer_block.mlir").read_text()) == expected


def test_matmul_epilogue_and_absorbed_transpose_match_reference():
    g = strata.Graph("block")
    x, w, b = g.input("x", (2, 17, 12)), g.input("w", (12, 24)), g.input("b", (24,))
    h = ops.gelu(x @ w + b)  # matmul + bias + gelu: one kernel
    heads = h.reshape(2, 17, 4, 6).transpose(0, 2, 1, 3)  # read in place by the next matmul
    scores = ops.matmul(heads, heads, transpose_b=True, alpha=0.5) + x[:, :, :1].reshape(2, 1, 17, 1)
    g.output(scores, h)
    text = str(g.build())
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s).astype(np.float32) * 0.3 for s in [(2, 17, 12), (12, 24), (24,)]]
    got = compile_for_test(text)(*args)
    for comparison in compare(got, strata.interpret(text, *args)):
        assert comparison.ok, comparison
    assert kernel_count(text) == 3  # x @ w epilogue, the slice, scores with its epilogue


@pytest.mark.parametrize("seed", range(4))
def test_fuse_patterns_keep_numerics(seed):
    """Transposes and scalar factors folded into matmul flags compute the same values."""
    rng = np.random.default_rng(seed)
    g = strata.Graph("patterns")
    x, w = g.input("x", (2, 9, 7)), g.input("w", (2, 5, 7))
    c = g.constant(float(rng.uniform(1, 4)))
    y = ops.matmul(ops.scale(x, 0.5), w.T) / c  # -> transpose_b, alpha = 0.5 / c
    z = ops.matmul(y.T, ops.scale(y, 3.0))  # -> transpose_a, alpha = 3
    g.output(z, y)
    text = str(g.build())
    folded = parse_module(text)
    run_pipeline(folded, "fuse-patterns,canonicalize")
    assert not any(op.name in ("graph.transpose", "graph.scale", "graph.div") for op in folded.walk())
    args = [rng.standard_normal(s).astype(np.float64).astype(np.float32) for s in [(2, 9, 7), (2, 5, 7)]]
    want = strata.interpret(text, *args)
    for comparison in compare(strata.interpret(folded, *args), want):
        assert comparison.ok, comparison
    for comparison in compare(compile_for_test(text)(*args), want):
        assert comparison.ok, comparison


def test_recognized_attention_and_gelu_keep_numerics():
    """The example's explicit causal attention and a hand-written tanh GELU are recognized
    and compute what the explicit forms compute."""
    import sys

    sys.path.insert(0, str(EXAMPLES))
    from transformer_block import build_transformer_block

    g = build_transformer_block(batch=2, seq=9, d_model=16, heads=2, d_ff=32)
    text = str(g.build())
    recognized = parse_module(text)
    run_pipeline(recognized, "fuse-patterns")
    assert any(op.name == "graph.attention" and op.params()["causal"] for op in recognized.walk())
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(t.get_shape()).astype(np.float32) * 0.3 for t in recognized.body.block.first_op.function_type.inputs.data]
    want = strata.interpret(text, *args)
    for comparison in compare(strata.interpret(recognized, *args), want):
        assert comparison.ok, comparison
    h = strata.Graph("gelu")
    x = h.input("x", (33,))
    h.output(0.5 * x * (1.0 + ops.tanh(0.7978845608028654 * (x + 0.044715 * (x * x * x)))))
    gelu_text = str(h.build())
    folded = parse_module(gelu_text)
    run_pipeline(folded, "fuse-patterns,canonicalize")
    assert [op.name for op in folded.walk() if op.name.startswith("graph.")] == ["graph.gelu"]
    xs = np.linspace(-5, 5, 33, dtype=np.float32)
    np.testing.assert_allclose(strata.interpret(folded, xs)[0], strata.interpret(gelu_text, xs)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("row_op", ["softmax", "log_softmax", "layernorm", "rmsnorm"])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("shape", [(1, 1), (7, 33), (2, 5, 1000), (3, 3000)], ids=str)
def test_row_kernels_with_prologue_and_epilogue(row_op, dtype, shape):
    """op(prologue(x)) then an epilogue is one kernel and computes the unfused values."""
    g = strata.Graph("rows")
    x = g.input("x", shape, dtype)
    b = g.input("b", shape[-1:], dtype)
    pre = ops.scale(x, 0.5) + b  # prologue, with a broadcast operand
    if row_op in ("layernorm", "rmsnorm"):
        gamma = g.param("gamma", shape[-1:], dtype)
        y = ops.layernorm(pre, gamma, b) if row_op == "layernorm" else ops.rmsnorm(pre, gamma)
    else:
        y = getattr(ops, row_op)(pre)
    g.output(ops.tanh(y) * x)  # epilogue, reading x again
    text = str(g.build())
    assert kernel_count(text) == 1
    rng = np.random.default_rng(5)
    function = parse_module(text).body.block.first_op
    args = [rng.standard_normal(t.get_shape()).astype(tensor_dtype(t)) for t in function.function_type.inputs.data]
    for comparison in compare(compile_for_test(text)(*args), strata.interpret(text, *args)):
        assert comparison.ok, comparison


def dominance_violations(module) -> list[str]:
    """Uses whose definition is not earlier in the same block or an enclosing one."""
    problems = []
    for op in module.walk():
        for value in op.operands:
            owner = value.owner
            defining_block = owner if not isinstance(owner, Operation) else owner.parent_block()
            block, user = op.parent_block(), op
            while block is not None and block is not defining_block:
                user = block.parent_op()
                block = user.parent_block() if user is not None else None
            if block is None:
                problems.append(f"{op.name} uses a value defined outside its scope")
            elif isinstance(owner, Operation) and list(block.ops).index(owner) > list(block.ops).index(user):
                problems.append(f"{op.name} uses {owner.name} before it is defined")
    return problems


def row_group_program() -> str:
    g = strata.Graph("rows")
    x, b = g.input("x", (7, 3000)), g.input("b", (3000,))
    g.output(ops.tanh(ops.softmax(ops.scale(x, 0.5) + b)) * x)
    return str(g.build())


@pytest.mark.parametrize("example", ["mlp.mlir", "transformer_block.mlir", "row group"])
def test_tile_and_loop_levels_respect_dominance(example):
    text = row_group_program() if example == "row group" else (EXAMPLES / example).read_text()
    module = parse_module(text)
    run_pipeline(module, "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile")
    assert dominance_violations(module) == []
    run_pipeline(module, "token-dce,lower-tile-to-loops")
    assert dominance_violations(module) == []


ROW_GROUPS_CHANGING_TYPE = {
    "log_softmax_compare": """
  func.func @f(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xi1> {
    %0 = graph.log_softmax %y {axis = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
    %1 = graph.compare %0, %x {predicate = "gt"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
    func.return %1 : tensor<2xi1>
  }""",
    "rmsnorm_select": """
  func.func @f(%x: tensor<5x5x31xf32>, %g: tensor<31xf32>, %c: tensor<i1>, %o: tensor<1x5x31xf32>) -> tensor<5x5x31xf32> {
    %0 = graph.rmsnorm %x, %g {epsilon = 1.000000e-03 : f64} : (tensor<5x5x31xf32>, tensor<31xf32>) -> tensor<5x5x31xf32>
    %1 = graph.select %c, %o, %0 : (tensor<i1>, tensor<1x5x31xf32>, tensor<5x5x31xf32>) -> tensor<5x5x31xf32>
    func.return %1 : tensor<5x5x31xf32>
  }""",
    "rmsnorm_compare_i1": """
  func.func @f(%x: tensor<9x1xf64>, %g: tensor<1xf64>, %b: tensor<9x1xi1>) -> tensor<9x1xi1> {
    %0 = graph.rmsnorm %x, %g : (tensor<9x1xf64>, tensor<1xf64>) -> tensor<9x1xf64>
    %1 = graph.constant dense<0.000000e+00> : tensor<f64>
    %2 = graph.compare %0, %1 {predicate = "gt"} : (tensor<9x1xf64>, tensor<f64>) -> tensor<9x1xi1>
    %3 = graph.compare %2, %b {predicate = "ne"} : (tensor<9x1xi1>, tensor<9x1xi1>) -> tensor<9x1xi1>
    func.return %3 : tensor<9x1xi1>
  }""",
    "rmsnorm_cast_bf16": """
  func.func @f(%x: tensor<7x1x3xf64>, %g: tensor<3xf64>, %b: tensor<1x3xf64>) -> (tensor<7x1x3xf64>, tensor<7x1x3xbf16>) {
    %0 = graph.rmsnorm %x, %g {epsilon = 1.000000e-01 : f64} : (tensor<7x1x3xf64>, tensor<3xf64>) -> tensor<7x1x3xf64>
    %1 = graph.add %0, %b : (tensor<7x1x3xf64>, tensor<1x3xf64>) -> tensor<7x1x3xf64>
    %2 = graph.cast %1 : (tensor<7x1x3xf64>) -> tensor<7x1x3xbf16>
    %3 = graph.constant dense<1.000000e+00> : tensor<bf16>
    %4 = graph.add %2, %3 : (tensor<7x1x3xbf16>, tensor<bf16>) -> tensor<7x1x3xbf16>
    func.return %1, %4 : tensor<7x1x3xf64>, tensor<7x1x3xbf16>
  }""",
    "cast_f64_log_softmax": """
  func.func @f(%x: tensor<129x5xf64>) -> tensor<129x5xf32> {
    %0 = graph.cast %x : (tensor<129x5xf64>) -> tensor<129x5xf32>
    %1 = graph.log_softmax %0 : (tensor<129x5xf32>) -> tensor<129x5xf32>
    func.return %1 : tensor<129x5xf32>
  }""",
    "f16_prologue_layernorm_f16_epilogue": """
  func.func @f(%x: tensor<4x33xf16>, %g: tensor<33xf32>, %b: tensor<33xf32>) -> tensor<4x33xf16> {
    %0 = graph.cast %x : (tensor<4x33xf16>) -> tensor<4x33xf32>
    %1 = graph.layernorm %0, %g, %b : (tensor<4x33xf32>, tensor<33xf32>, tensor<33xf32>) -> tensor<4x33xf32>
    %2 = graph.cast %1 : (tensor<4x33xf32>) -> tensor<4x33xf16>
    func.return %2 : tensor<4x33xf16>
  }""",
}


@pytest.mark.parametrize("fusion", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("name", ROW_GROUPS_CHANGING_TYPE)
def test_row_groups_with_neighbours_of_another_element_type(name, fusion):
    """A row op fused with a prologue or epilogue member of another element type (i1
    compare/select, casts to and from f64/bf16/f16): each member computes in its own type."""
    text = ROW_GROUPS_CHANGING_TYPE[name]
    function = parse_module(text).body.block.first_op
    rng = np.random.default_rng(3)
    args = [random_array(rng, t.get_shape(), str(t.element_type)) for t in function.function_type.inputs.data]
    if fusion:
        assert kernel_count(text) == 1
    got, want = compile_for_test(text, fusion=fusion)(*args), strata.interpret(text, *args)
    for comparison, g, w in zip(compare(got, want), got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert comparison.ok, comparison


def test_log_softmax_loss_gradient_fuses_without_cycle():
    """The gradient of a log_softmax loss: the compare/select group reads the log_softmax
    result, and the reduce_sum of its other select feeds an elementwise consumer of that
    log_softmax. Taking that consumer into the log_softmax's group as an epilogue would make
    the group consume its own result (lower-graph-to-tile used to crash with a KeyError)."""
    g = strata.Graph("loss")
    x, labels = g.param("x", (4, 5)), g.input("labels", (4,), "i64")
    lp = ops.log_softmax(x)
    onehot = ops.compare(ops.reshape(labels, (4, 1)), g.constant(np.arange(5), "i64"), "eq")
    g.output(ops.reduce_mean(ops.neg(ops.reduce_sum(ops.select(onehot, lp, g.constant(0.0)), [1])), [0]))
    module = g.build()
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((4, 5)).astype(np.float32), np.array([3, 0, 4, 1])
    loss, grad = strata.value_and_grad(module, argnums=0)(xs, ys)

    (want_loss,) = strata.interpret(module, xs, ys)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5, atol=1e-6)

    def reference(x64: np.ndarray) -> float:
        shifted = x64 - x64.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        return -log_probs[np.arange(4), ys].mean()

    x64, eps = xs.astype(np.float64), 1e-6
    numeric = np.zeros_like(x64)
    for index in np.ndindex(x64.shape):
        step = np.zeros_like(x64)
        step[index] = eps
        numeric[index] = (reference(x64 + step) - reference(x64 - step)) / (2 * eps)
    np.testing.assert_allclose(loss, reference(x64), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-5)

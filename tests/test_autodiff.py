"""autodiff: every op's VJP rule against f64 central finite differences (strata.gradcheck),
at several shapes with broadcasting and odd sizes; every matmul transpose/alpha/batch
combination; an MLP, a pre-LayerNorm transformer block and a small language model; random
DAGs; the checkpoint policy; integer arguments; strata-run --check-grad; @f_grad compiled
for the CPU; torch.autograd where torch is installed."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import UnitAttr

import strata
from strata import ops
from strata.check import compare
from strata.dialects import graph
from strata.dialects.graph import GRAPH_OPS
from strata.dialects.opinfo import op_info
from strata.gradcheck import check_gradients
from strata.runtime.reference.interpreter import find_entry
from strata.transforms.autodiff import differentiate, saved_forward_values

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
F64 = "f64"
TOLERANCE = 1e-6


@dataclass
class Case:
    """One gradient check: `body` applied to arguments of the given (shape, dtype)s."""

    op: str
    name: str
    args: list[tuple[tuple[int, ...], str]]
    body: Callable
    inputs: Callable[[np.random.Generator], list[np.ndarray]] | None = None

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}"


def program(args, body, name: str = "f"):
    g = strata.Graph(name)
    tensors = [g.input(f"a{i}", shape, dtype) for i, (shape, dtype) in enumerate(args)]
    out = body(*tensors)
    g.output(*(out if isinstance(out, tuple) else (out,)))
    return g.build()


def assert_gradients_match(module, inputs=None, tolerance=TOLERANCE, **kwargs):
    report = check_gradients(module, inputs=inputs, **kwargs)
    assert report.arguments, "nothing was checked"
    assert report.ok(tolerance), str(report)
    return report


def normal(*shapes):
    return lambda rng: [rng.standard_normal(s) for s in shapes]


def positive(shape):
    return lambda rng: [np.abs(rng.standard_normal(shape)) + 0.5]


def away_from_zero(rng, shape):
    x = rng.standard_normal(shape)
    return np.sign(x) * (np.abs(x) + 0.5)


def fmt(shape) -> str:
    return "x".join(map(str, shape)) or "scalar"


# ---------------------------------------------------------------------------------------
# Per-op cases.

SHAPES = [(), (1,), (7,), (3, 17)]
UNARY = ["neg", "abs", "exp", "tanh", "sigmoid", "relu", "silu", "erf"]
POSITIVE_DOMAIN = ["log", "sqrt", "rsqrt"]
BROADCAST_PAIRS = [((7,), (7,)), ((3, 17), (17,)), ((3, 1), (1, 17)), ((2, 3, 7), (3, 1)), ((), (1, 7))]


def unary_cases():
    for name, shape in itertools.product(UNARY, SHAPES):
        yield Case(name, fmt(shape), [(shape, F64)], getattr(ops, name))
    for name, shape in itertools.product(POSITIVE_DOMAIN, SHAPES):
        yield Case(name, fmt(shape), [(shape, F64)], getattr(ops, name), positive(shape))
    for approximate, shape in itertools.product(("none", "tanh"), SHAPES):
        yield Case("gelu", f"{approximate}-{fmt(shape)}", [(shape, F64)],
                   lambda x, a=approximate: ops.gelu(x, a))  # fmt: skip
    for shape in SHAPES:
        yield Case("scale", fmt(shape), [(shape, F64)], lambda x: ops.scale(x, -2.5))
    for shape in SHAPES:
        yield Case("dropout", fmt(shape), [(shape, F64)], lambda x: ops.dropout(x, 0.3, 7))
    yield Case("dropout", "p0", [((7,), F64)], lambda x: ops.dropout(x, 0.0, 1))


def binary_inputs(name, lhs, rhs):
    if name == "div":
        return lambda rng: [rng.standard_normal(lhs), away_from_zero(rng, rhs)]
    if name == "pow":
        return lambda rng: [np.abs(rng.standard_normal(lhs)) + 0.5, rng.standard_normal(rhs)]
    return None


def binary_cases():
    for name, (lhs, rhs) in itertools.product(
        ["add", "sub", "mul", "div", "maximum", "minimum", "pow"], BROADCAST_PAIRS
    ):
        yield Case(name, f"{fmt(lhs)}-{fmt(rhs)}", [(lhs, F64), (rhs, F64)], getattr(ops, name),
                   binary_inputs(name, lhs, rhs))  # fmt: skip
    yield Case("maximum", "tie", [((7,), F64)], lambda x: ops.maximum(x, x))
    yield Case("minimum", "tie", [((7,), F64)], lambda x: ops.minimum(x, x))


def select_cases():
    for cond, a, b in [((7,), (7,), (7,)), ((3, 17), (17,), (3, 1)), ((1,), (2, 7), ())]:
        yield Case("select", f"{fmt(cond)}-{fmt(a)}-{fmt(b)}", [(cond, "i1"), (a, F64), (b, F64)], ops.select)
    yield Case("compare", "as-max", [((3, 7), F64), ((7,), F64)],
               lambda a, b: ops.select(ops.compare(a, b, "gt"), a, ops.broadcast_to(b, (3, 7))))  # fmt: skip
    yield Case("cast", "f64-f32-f64", [((3, 7), F64)], lambda x: ops.cast(ops.cast(x, "f32"), F64) * x)
    yield Case("cast", "int-source", [((7,), "i64"), ((7,), F64)], lambda i, x: ops.cast(i, F64) * x)
    yield Case("constant", "added", [((3, 7), F64)],
               lambda x: x * x.graph.constant(np.arange(7.0), F64) + 1.5)  # fmt: skip


REDUCTIONS = [((7,), (0,), False), ((3, 17), (1,), True), ((3, 17), (-1,), False),
              ((2, 3, 7), (0, 2), False), ((2, 3, 7), (1,), True), ((1, 7), (0, 1), False)]  # fmt: skip


def reduction_cases():
    for name, (shape, axes, keepdims) in itertools.product(
        ["reduce_sum", "reduce_mean", "reduce_max"], REDUCTIONS
    ):
        yield Case(name, f"{fmt(shape)}-axes{axes}-keep{int(keepdims)}", [(shape, F64)],
                   lambda x, n=name, a=axes, k=keepdims: getattr(ops, n)(x, a, k))  # fmt: skip


MATMUL_BATCHES = [((), ()), ((2,), (2,)), ((2,), ()), ((), (3,)), ((2, 1), (3,))]


def matmul_cases():
    m, k, n = 3, 5, 7
    for ta, tb, alpha, (batch_a, batch_b) in itertools.product(
        (False, True), (False, True), (1.0, 0.5), MATMUL_BATCHES
    ):
        a = (*batch_a, *((k, m) if ta else (m, k)))
        b = (*batch_b, *((n, k) if tb else (k, n)))
        yield Case("matmul", f"ta{int(ta)}-tb{int(tb)}-alpha{alpha}-{fmt(a)}-{fmt(b)}",
                   [(a, F64), (b, F64)],
                   lambda x, y, ta=ta, tb=tb, al=alpha: ops.matmul(x, y, ta, tb, al))  # fmt: skip
    yield Case("matmul", "vector-like-1x17-17x1", [((1, 17), F64), ((17, 1), F64)], ops.matmul)


def row_op_cases():
    for name, (shape, axis) in itertools.product(
        ["softmax", "log_softmax"], [((7,), -1), ((3, 17), -1), ((3, 17), 0), ((2, 3, 5), 1)]
    ):
        yield Case(name, f"{fmt(shape)}-axis{axis}", [(shape, F64)],
                   lambda x, n=name, a=axis: getattr(ops, n)(x, a))  # fmt: skip
    for shape in [(7,), (3, 17), (2, 3, 5)]:
        d = (shape[-1],)
        yield Case("layernorm", fmt(shape), [(shape, F64), (d, F64), (d, F64)], ops.layernorm)
        yield Case("rmsnorm", fmt(shape), [(shape, F64), (d, F64)], ops.rmsnorm)


def attention_cases():
    for q, k, v, causal in [
        ((5, 4), (5, 4), (5, 3), True),
        ((2, 4, 8), (2, 6, 8), (2, 6, 3), False),
        ((2, 5, 4), (2, 5, 4), (2, 5, 4), True),
        ((1, 2, 3, 4), (1, 2, 7, 4), (1, 2, 7, 5), True),
    ]:
        yield Case("attention", f"{fmt(q)}-{fmt(k)}-{fmt(v)}-causal{int(causal)}",
                   [(q, F64), (k, F64), (v, F64)],
                   lambda a, b, c, causal=causal: ops.attention(a, b, c, 0.5, causal))  # fmt: skip


def lookup_cases():
    repeated = np.array([1, 3, 1, 6, 1])
    yield Case("embedding", "7x3-repeated-ids", [((7, 3), F64), ((5,), "i64")], ops.embedding,
               lambda rng: [rng.standard_normal((7, 3)), repeated])  # fmt: skip
    yield Case("embedding", "17x4-ids2x3-i32", [((17, 4), F64), ((2, 3), "i32")], ops.embedding)
    yield Case("embedding", "1x5", [((1, 5), F64), ((4,), "i64")], ops.embedding)
    for (n, c), dtype in [((5, 7), "i64"), ((1, 17), "i32"), ((3, 1), "i64")]:
        yield Case("cross_entropy", f"{n}x{c}-{dtype}", [((n, c), F64), ((n,), dtype)], ops.cross_entropy)


def shape_cases():
    for source, target in [((3, 17), (17, 3)), ((2, 3, 5), (30,)), ((), (1, 1))]:
        yield Case("reshape", f"{fmt(source)}-{fmt(target)}", [(source, F64)],
                   lambda x, t=target: ops.reshape(x, t))  # fmt: skip
    for shape, permutation in [((3, 17), (1, 0)), ((2, 3, 5), (2, 0, 1)), ((7,), (0,))]:
        yield Case("transpose", f"{fmt(shape)}-{permutation}", [(shape, F64)],
                   lambda x, p=permutation: ops.transpose(x, p))  # fmt: skip
    for source, target in [((17,), (3, 17)), ((3, 1), (2, 3, 7)), ((), (4,)), ((1, 7), (1, 7))]:
        yield Case("broadcast_to", f"{fmt(source)}-{fmt(target)}", [(source, F64)],
                   lambda x, t=target: ops.broadcast_to(x, t))  # fmt: skip
    for shape, bounds in [
        ((17,), [(2, 15, 3)]),
        ((3, 17), [(1, 3, 1), (0, 17, 2)]),
        ((7,), [(0, 7, 1)]),
        ((2, 3, 7), [(0, 2, 1), (1, 2, 1), (3, 7, 4)]),
        ((7,), [(6, 7, 1)]),
        ((17,), [(0, 16, 5)]),
    ]:
        starts, limits, steps = zip(*bounds)
        yield Case("slice", f"{fmt(shape)}-{bounds}", [(shape, F64)],
                   lambda x, s=starts, l=limits, t=steps: ops.slice_(x, s, l, t))  # fmt: skip
    for shapes, axis in [([(3, 7), (2, 7)], 0), ([(3, 1), (3, 5), (3, 2)], -1), ([(7,)], 0)]:
        yield Case("concat", f"{'-'.join(map(fmt, shapes))}-axis{axis}", [(s, F64) for s in shapes],
                   lambda *xs, a=axis: ops.concat(xs, a))  # fmt: skip


CASES = [
    *unary_cases(), *binary_cases(), *select_cases(), *reduction_cases(), *matmul_cases(),
    *row_op_cases(), *attention_cases(), *lookup_cases(), *shape_cases(),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_vjp_matches_finite_differences(case: Case):
    module = program(case.args, case.body)
    inputs = case.inputs(np.random.default_rng(1)) if case.inputs else None
    assert_gradients_match(module, inputs)


def test_every_float_op_has_a_rule_and_a_case():
    covered = {c.op for c in CASES}
    for op_type in GRAPH_OPS:
        assert op_info(op_type).vjp is not None, op_type.name
        assert op_type.name.removeprefix("graph.") in covered, op_type.name


# ---------------------------------------------------------------------------------------
# Rules checked exactly where finite differences cannot: ties, kinks, mixed precision.


def gradient_of(module, args, cotangents, entry="f"):
    differentiate(module, entry)
    return strata.interpret(module, *args, *cotangents, entry=f"{entry}_grad")[len(cotangents) :]


def test_reduce_max_splits_ties_evenly():
    module = program([((2, 3), F64)], lambda x: ops.reduce_max(x, 1))
    x = np.array([[1.0, 3.0, 3.0], [5.0, 5.0, 5.0]])
    (dx,) = gradient_of(module, [x], [np.array([2.0, 3.0])])
    np.testing.assert_array_equal(dx, [[0, 1, 1], [1, 1, 1]])


def test_maximum_and_minimum_split_ties_between_operands():
    module = program([((3,), F64), ((3,), F64)], lambda a, b: ops.maximum(a, b) + ops.minimum(a, b) * 3.0)
    da, db = gradient_of(module, [np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 0.0])], [np.ones(3)])
    np.testing.assert_array_equal(da, [2.0, 3.0, 1.0])
    np.testing.assert_array_equal(db, [2.0, 1.0, 3.0])


def test_empty_slice_gives_zeros():
    module = program([((5,), F64)], lambda x: (x[2:2], x * 2.0))
    (dx,) = gradient_of(module, [np.arange(5.0)], [np.zeros(0), np.ones(5)])
    np.testing.assert_array_equal(dx, 2.0)


def test_relu_and_abs_have_zero_slope_at_zero():
    module = program([((3,), F64)], lambda x: ops.relu(x) + ops.abs(x))
    (dx,) = gradient_of(module, [np.array([-1.0, 0.0, 2.0])], [np.ones(3)])
    np.testing.assert_array_equal(dx, [-1.0, 0.0, 2.0])


def test_cast_between_float_types_casts_the_cotangent_back():
    module = program([((4,), "f32"), ((4,), F64)], lambda x, w: ops.cast(x, F64) * w)
    x, w, g = np.arange(4, dtype=np.float32), np.linspace(1, 2, 4), np.full(4, 3.0)
    dx, dw = gradient_of(module, [x, w], [g])
    assert dx.dtype == np.float32 and dw.dtype == np.float64
    np.testing.assert_allclose(dx, (3 * w).astype(np.float32))
    np.testing.assert_allclose(dw, 3 * x)


# ---------------------------------------------------------------------------------------
# Composite programs.


def mlp_loss(g: strata.Graph, n=4, d_in=7, hidden=5, classes=3, dtype=F64):
    x, labels = g.input("x", (n, d_in), dtype), g.input("labels", (n,), "i64")
    w1, b1 = g.param("w1", (hidden, d_in), dtype), g.param("b1", (hidden,), dtype)
    w2, b2 = g.param("w2", (hidden, classes), dtype), g.param("b2", (classes,), dtype)
    hidden_state = ops.relu(ops.matmul(x, w1, transpose_b=True) + b1)
    logits = ops.gelu(hidden_state, "tanh") @ w2 + b2
    return ops.cross_entropy(logits, labels), logits


def test_mlp_with_cross_entropy():
    g = strata.Graph("mlp")
    g.output(*mlp_loss(g))
    assert_gradients_match(g.build())


def load_transformer_block():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from transformer_block import build_transformer_block
    finally:
        sys.path.pop(0)
    return build_transformer_block(batch=1, seq=3, d_model=8, heads=2, d_ff=16).build()


def test_pre_layernorm_transformer_block():
    assert_gradients_match(load_transformer_block(), probes=12)


def test_language_model_with_attention_rmsnorm_embedding_dropout():
    """Tokens -> embedding -> rmsnorm -> causal graph.attention -> residual -> layernorm ->
    silu MLP with dropout -> tied output projection -> cross-entropy loss."""
    vocabulary, seq, d = 11, 5, 6
    g = strata.Graph("lm")
    tokens, targets = g.input("tokens", (2, seq), "i32"), g.input("targets", (2 * seq,), "i32")
    table = g.param("table", (vocabulary, d), F64)
    gamma, beta = g.param("gamma", (d,), F64), g.param("beta", (d,), F64)
    w_qkv, w_ff = g.param("w_qkv", (d, 3 * d), F64), g.param("w_ff", (d, d), F64)
    x = ops.embedding(table, tokens)
    qkv = ops.rmsnorm(x, gamma) @ w_qkv
    q, k, v = (qkv[:, :, i * d : (i + 1) * d] for i in range(3))
    x = x + ops.attention(q, k, v, 1 / math.sqrt(d), causal=True)
    x = x + ops.dropout(ops.silu(ops.layernorm(x, gamma, beta) @ w_ff), 0.25, 3)
    logits = ops.matmul(x.reshape(2 * seq, d), table, transpose_b=True)
    g.output(ops.cross_entropy(logits, targets))
    assert_gradients_match(g.build(), probes=12)


# ---------------------------------------------------------------------------------------
# Random DAGs: fan-out, broadcasting, reductions and matmuls mixed at random.

DAG_UNARY = [ops.tanh, ops.sigmoid, ops.silu, ops.neg, lambda x: ops.scale(x, 0.7), ops.exp]
DAG_BINARY = [ops.add, ops.sub, ops.mul, ops.maximum]


def random_dag(seed: int):
    rng = np.random.default_rng(seed)
    g = strata.Graph("dag")
    values = [g.input("x", (4, 5), F64), g.input("row", (1, 5), F64), g.input("col", (4, 1), F64)]
    w = g.input("w", (5, 5), F64)
    for _ in range(12):
        kind = rng.integers(4)
        a = values[rng.integers(len(values))]
        if kind == 0:
            values.append(DAG_UNARY[rng.integers(len(DAG_UNARY))](a))
        elif kind == 1:
            b = values[rng.integers(len(values))]
            values.append(DAG_BINARY[rng.integers(len(DAG_BINARY))](a, b))
        elif kind == 2 and a.shape == (4, 5):
            values.append(ops.tanh(ops.matmul(a, w, transpose_b=bool(rng.integers(2)), alpha=0.3)))
        elif a.shape == (4, 5):
            values.append(ops.reduce_mean(a, 1, keepdims=True))
    g.output(values[-1], values[-2], ops.reduce_sum(values[len(values) // 2], (0, 1)))
    return g.build()


@pytest.mark.parametrize("seed", range(8))
def test_random_dag(seed):
    assert_gradients_match(random_dag(seed), seed=seed)


# ---------------------------------------------------------------------------------------
# The pass itself: contract, dead gradients, integer arguments, checkpointing.


def test_gradient_signature_follows_the_contract():
    g = strata.Graph("f")
    x, ids, table = g.input("x", (3, 4), F64), g.input("ids", (3,), "i64"), g.param("t", (5, 4), F64)
    g.output(ops.embedding(table, ids) * x, ops.cast(ids, "i32"))
    module = g.build()
    gradient = differentiate(module, "f")
    signature = gradient.function_type
    types = [str(t) for t in signature.inputs.data]
    assert types == ["tensor<3x4xf64>", "tensor<3xi64>", "tensor<5x4xf64>", "tensor<3x4xf64>", "tensor<3xi32>"]
    assert [str(t) for t in signature.outputs.data] == [
        "tensor<3x4xf64>", "tensor<3xi32>", "tensor<3x4xf64>", "tensor<5x4xf64>"
    ]  # fmt: skip
    assert "graph.differentiate" not in gradient.attributes


def test_argument_without_a_path_gets_zeros_and_no_backward_ops():
    module = program([((3, 4), F64), ((3, 4), F64)], lambda x, y: ops.select(ops.compare(x, y, "lt"), y, y * 2.0))
    gradient = differentiate(module, "f")
    dx, dy = strata.interpret(module, np.zeros((3, 4)), np.ones((3, 4)), np.ones((3, 4)), entry="f_grad")[1:]
    np.testing.assert_array_equal(dx, 0)
    np.testing.assert_array_equal(dy, 1)
    assert not any(isinstance(op, graph.MatmulOp) for op in gradient.walk())
    forward_ops = len(list(find_entry(module, "f").body.block.ops))
    assert len(list(gradient.body.block.ops)) < 2 * forward_ops + 8


def test_pass_via_pipeline_and_marked_functions_only():
    text = """
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> attributes {graph.differentiate} {
      %0 = "graph.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      func.return %0 : tensor<3xf32>
    }
    func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
      func.return %x : tensor<3xf32>
    }
    """
    module = strata.parse_module(text)
    from strata.targets.passes import run_pipeline

    run_pipeline(module, "autodiff")
    names = [f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)]
    assert names == ["f", "f_grad", "g"]
    x = np.array([0.0, 1.0, -1.0], dtype=np.float32)
    _, dx = strata.interpret(module, x, np.ones(3, np.float32), entry="f_grad")
    np.testing.assert_allclose(dx, np.exp(x), rtol=1e-6)


def test_fused_program_is_rejected_with_a_diagnostic():
    module = program([((4,), "f32")], lambda x: ops.tanh(ops.exp(x)))
    from strata.targets.passes import run_pipeline

    run_pipeline(module, "fuse-elementwise")
    with pytest.raises(Exception, match="graph.fused' has no VJP rule"):
        differentiate(module, "f")


def block_with_marked_residuals():
    """The transformer block with graph.checkpoint on its residual stream (the adds whose
    value has two forward uses): what checkpoint=marked saves."""
    module = load_transformer_block()
    for op in find_entry(module, "transformer_block").body.block.ops:
        if isinstance(op, graph.AddOp) and op.results[0].uses.get_length() > 1:
            op.attributes["graph.checkpoint"] = UnitAttr()
    return module


def transformer_gradients(checkpoint: str):
    module = block_with_marked_residuals()
    gradient = differentiate(module, "transformer_block", checkpoint)
    forward = find_entry(module, "transformer_block")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(tuple(t.get_shape())).astype(np.float32) for t in gradient.function_type.inputs.data]
    return strata.interpret(module, *args, entry=gradient.sym_name.data), saved_forward_values(forward, gradient)


def saved_bytes(values) -> int:
    return sum(math.prod(v.type.get_shape()) * 4 for v in values)


@pytest.mark.parametrize("policy", ["none", "marked"])
def test_recompute_policy_gives_the_same_gradients_with_fewer_saved_values(policy):
    saving_all, saved_by_all = transformer_gradients("all")
    recomputing, saved = transformer_gradients(policy)
    for a, b in zip(saving_all, recomputing):
        np.testing.assert_array_equal(a, b)
    assert len(saved) < len(saved_by_all)
    assert saved_bytes(saved) < saved_bytes(saved_by_all)


def test_marked_policy_saves_only_marked_values_and_constants():
    module = block_with_marked_residuals()
    forward = find_entry(module, "transformer_block")
    gradient = differentiate(module, "transformer_block", "marked")
    owners = {type(v.owner) for v in saved_forward_values(forward, gradient)}
    assert owners == {graph.AddOp, graph.ConstantOp}
    assert all(isinstance(v.owner, graph.ConstantOp) or "graph.checkpoint" in v.owner.attributes
               for v in saved_forward_values(forward, gradient))  # fmt: skip


def test_marked_policy_shrinks_the_planned_activations_arena():
    from strata.targets.passes import run_pipeline
    from strata.transforms.plan_memory import read_plan

    def activations(policy: str) -> int:
        module = block_with_marked_residuals()
        differentiate(module, "transformer_block", policy)
        run_pipeline(module, "canonicalize,cse,fuse-elementwise,lower-graph-to-tile,token-dce,plan-memory")
        return read_plan(find_entry(module, "transformer_block_grad"))["arenas"]["activations"]

    assert activations("marked") < activations("all")


def test_graph_checkpoint_attribute_keeps_a_value_saved():
    def gradient_reads_tanh(mark: bool) -> bool:
        module = program([((3, 4), F64)], lambda x: ops.exp(ops.tanh(x)) * 2.0)
        forward = find_entry(module, "f")
        tanh = next(op for op in forward.walk() if isinstance(op, graph.TanhOp))
        if mark:
            tanh.attributes["graph.checkpoint"] = UnitAttr()
        gradient = differentiate(module, "f", "none")
        return any(isinstance(v.owner, graph.TanhOp) for v in saved_forward_values(forward, gradient))

    assert gradient_reads_tanh(mark=True)
    assert not gradient_reads_tanh(mark=False)


@pytest.mark.parametrize("policy", ["none", "marked"])
def test_recompute_policy_passes_gradient_check(policy):
    module = block_with_marked_residuals()
    differentiate(module, "transformer_block", policy)
    assert_gradients_match(module, probes=6)


def test_unknown_checkpoint_policy_is_rejected():
    module = program([((3,), F64)], ops.exp)
    with pytest.raises(Exception, match="checkpoint must be one of"):
        differentiate(module, "f", "some")


# ---------------------------------------------------------------------------------------
# strata-run --check-grad.

GOOD = """func.func @f(%x: tensor<3x4xf32>, %w: tensor<4x2xf32>) -> tensor<3x2xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %1 = "graph.tanh"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}
"""

WRONG_GRADIENT = """func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "graph.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
func.func @f_grad(%x: tensor<3xf32>, %g: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "graph.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0, %g : tensor<3xf32>, tensor<3xf32>
}
"""


@pytest.mark.parametrize(
    "text, code, expected",
    [(GOOD, 0, "arg1: worst relative error"), (WRONG_GRADIENT, 1, "arg0: worst relative error"),
     (GOOD.replace("graph.tanh", "graph.tanhh"), 2, "")],
    ids=["correct", "wrong-gradient", "invalid-ir"],
)  # fmt: skip
def test_strata_run_check_grad_exit_codes(tmp_path, text, code, expected):
    path = tmp_path / "f.mlir"
    path.write_text(text)
    result = subprocess.run([str(BIN / "strata-run"), str(path), "--check-grad"],
                            capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert result.returncode == code, result.stdout + result.stderr
    assert expected in result.stdout
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------------------------------
# @f_grad compiled for the CPU, against the reference.


@pytest.mark.parametrize("build", ["mlp", "layernorm-attention"])
def test_gradient_program_runs_on_the_cpu(build):
    g = strata.Graph("f")
    if build == "mlp":
        g.output(*mlp_loss(g, n=8, d_in=16, hidden=32, classes=10, dtype="f32"))
    else:
        x, gamma, beta = g.input("x", (2, 6, 8)), g.param("gamma", (8,)), g.param("beta", (8,))
        h = ops.layernorm(x, gamma, beta)
        g.output(ops.reduce_mean(ops.attention(h, h, x, 0.35, causal=True) * x, (0, 1, 2)))
    module = g.build()
    differentiate(module, "f")
    rng = np.random.default_rng(0)
    args = [
        rng.integers(0, 10, t.get_shape()).astype(np.int64) if "i64" in str(t)
        else rng.standard_normal(tuple(t.get_shape())).astype(np.float32)
        for t in find_entry(module, "f_grad").function_type.inputs.data
    ]  # fmt: skip
    text = str(module)
    got = strata.compile(text, target="cpu", entry="f_grad")(*args)
    want = strata.interpret(text, *args, entry="f_grad")
    for comparison in compare(got, want):
        assert comparison.ok, str(comparison)


# ---------------------------------------------------------------------------------------
# torch.autograd, where installed.


def test_matches_torch_autograd():
    torch = pytest.importorskip("torch")
    g = strata.Graph("f")
    g.output(mlp_loss(g)[0])
    module = g.build()
    differentiate(module, "f")
    rng = np.random.default_rng(0)
    x, w1, b1, w2, b2 = (rng.standard_normal(s) for s in [(4, 7), (5, 7), (5,), (5, 3), (3,)])
    labels = np.array([0, 2, 1, 2])
    ours = strata.interpret(module, x, labels, w1, b1, w2, b2, np.array(1.0), entry="f_grad")[1:]
    params = [torch.tensor(a, requires_grad=True) for a in (x, w1, b1, w2, b2)]
    tx, tw1, tb1, tw2, tb2 = params
    hidden = torch.relu(tx @ tw1.T + tb1)
    logits = torch.nn.functional.gelu(hidden, approximate="tanh") @ tw2 + tb2
    torch.nn.functional.cross_entropy(logits, torch.tensor(labels)).backward()
    for mine, theirs in zip(ours, params):
        np.testing.assert_allclose(mine, theirs.grad.numpy(), rtol=1e-10, atol=1e-12)

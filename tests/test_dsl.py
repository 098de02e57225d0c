"""The module DSL: standard modules against numpy, GPT-2 and Llama against `transformers`,
Hugging Face import/export, training through autodiff, PTX, explicit backward checks,
save/@checkpoint marks and located errors (the FileCheck tests in tests/filecheck/dsl/
pin one diagnostic per error code)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strata
from strata import dsl
from strata.dialects import graph
from strata.runtime.cuda import cuda_available
from strata.transforms.autodiff import differentiate
from targets import gpu_ptx

RNG = np.random.default_rng(7)
needs_gpu = pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")
MODULES = "from std.modules import Linear, RMSNorm, LayerNorm, GeluMLP, SwiGLU_MLP, CausalSelfAttention\n"


def run(program, entry: str, inputs: list[np.ndarray], dtype: str = "f32", **keywords):
    """(outputs, params) of `entry` on the CPU, with random params."""
    module = program.instantiate(entry, dtype=dtype, **keywords)
    function = module.ops.first
    params = [RNG.standard_normal(t.get_shape()).astype(dtype_of(dtype)) * 0.5
              for t in function.function_type.inputs.data[len(inputs):]]
    outputs = strata.compile(module)(*inputs, *params)
    reference = strata.interpret(module, *inputs, *params)
    for out, ref in zip(outputs if isinstance(outputs, (list, tuple)) else [outputs], reference):
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    names = [a.data["graph.name"].data for a in function.arg_attrs.data[len(inputs):]]
    return (outputs[0] if isinstance(outputs, (list, tuple)) else outputs), dict(zip(names, params))


def dtype_of(name: str):
    return {"f32": np.float32, "f64": np.float64}[name]


# ------------------------------------------------------------------ numpy references


def layernorm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def rmsnorm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def silu(x):
    return x / (1 + np.exp(-x))


def rotate(x, theta):
    t, d = x.shape[-2:]
    angles = np.outer(np.arange(t), theta ** (-np.arange(d // 2) * 2 / d))
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], -1)


def attention(x, p, heads, kv_heads, bias, rope):
    b, t, d = x.shape
    dh = d // heads
    qkv = x @ p["qkv_weight"].T + (p["qkv_bias"] if bias else 0)
    q, k, v = np.split(qkv, [heads * dh, heads * dh + kv_heads * dh], -1)
    q, k, v = (m.reshape(b, t, h, dh).transpose(0, 2, 1, 3) for m, h in ((q, heads), (k, kv_heads), (v, kv_heads)))
    if rope:
        q, k = rotate(q, 10000.0), rotate(k, 10000.0)
    k, v = np.repeat(k, heads // kv_heads, 1), np.repeat(v, heads // kv_heads, 1)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh) + np.triu(np.full((t, t), -np.inf), 1)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    heads_out = (probs @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
    return heads_out @ p["out_weight"].T + (p["out_bias"] if bias else 0)


# ------------------------------------------------------------------ standard modules


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("shape", [(1, 7), (3, 5, 7), (17, 33)])
@pytest.mark.parametrize("bias", [False, True])
def test_linear(dtype, shape, bias):
    program = dsl.load(MODULES)
    x = RNG.standard_normal(shape).astype(dtype_of(dtype))
    out, p = run(program, "Linear", [x], dtype, in_dim=shape[-1], out_dim=9, bias=bias, shapes={"in": shape})
    expected = x @ p["weight"].T + (p["bias"] if bias else 0)
    np.testing.assert_allclose(out, expected, rtol=1e-4 if dtype == "f32" else 1e-10, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 1), (7, 17), (2, 3, 33)])
def test_norms(shape):
    program = dsl.load(MODULES)
    x = RNG.standard_normal(shape).astype(np.float32)
    out, p = run(program, "RMSNorm", [x], dim=shape[-1], eps=1e-5, shapes={"in": shape})
    np.testing.assert_allclose(out, rmsnorm(x, p["weight"], 1e-5), rtol=1e-4, atol=1e-5)
    out, p = run(program, "LayerNorm", [x], dim=shape[-1], shapes={"in": shape})
    np.testing.assert_allclose(out, layernorm(x, p["weight"], p["bias"], 1e-5), rtol=1e-4, atol=1e-4)


def test_mlps():
    program = dsl.load(MODULES)
    x = RNG.standard_normal((2, 7, 16)).astype(np.float32)
    out, p = run(program, "GeluMLP", [x], d_model=16, d_ff=24, shapes={"in": x.shape})
    hidden = gelu_tanh(x @ p["fc.weight"].T + p["fc.bias"])
    np.testing.assert_allclose(out, hidden @ p["proj.weight"].T + p["proj.bias"], rtol=1e-4, atol=1e-4)
    out, p = run(program, "SwiGLU_MLP", [x], d_model=16, d_ff=12, shapes={"in": x.shape})
    gate, up = np.split(x @ p["up_weight"].T, 2, -1)
    np.testing.assert_allclose(out, (silu(gate) * up) @ p["down_weight"].T, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("heads, kv_heads, bias, rope", [(4, 4, True, False), (4, 2, False, True), (4, 1, False, True)])
def test_causal_self_attention(heads, kv_heads, bias, rope):
    program = dsl.load(MODULES)
    x = RNG.standard_normal((2, 7, 16)).astype(np.float32)
    out, p = run(program, "CausalSelfAttention", [x], d_model=16, num_heads=heads, num_kv_heads=kv_heads,
                 bias=bias, rope=rope, B=2, T=7)
    np.testing.assert_allclose(out, attention(x, p, heads, kv_heads, bias, rope), rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ models against transformers


def hf_pair(entry: str):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    if entry == "GPT2":
        config = transformers.GPT2Config(vocab_size=61, n_positions=16, n_embd=32, n_layer=2, n_head=4,
                                         bos_token_id=0, eos_token_id=0)
        model = transformers.GPT2LMHeadModel(config)
    else:
        config = transformers.LlamaConfig(vocab_size=61, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                          num_key_value_heads=2, intermediate_size=40, tie_word_embeddings=entry == "LlamaTied")
        model = transformers.LlamaForCausalLM(config)
    return torch, config, model.eval()


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=needs_gpu)])
@pytest.mark.parametrize("entry", ["GPT2", "Llama", "LlamaTied"])
def test_models_match_transformers(entry, target):
    torch, config, model = hf_pair(entry)
    name = "GPT2" if entry == "GPT2" else "Llama"
    program = dsl.load("from std.models import GPT2, Llama\n")
    arguments = program.hf_arguments(name, config)
    state = model.state_dict()
    params = program.import_hf(name, state, **arguments)
    module = program.instantiate(name, B=2, T=7, **arguments)
    ids = RNG.integers(0, config.vocab_size, (2, 7)).astype(np.int32)
    (logits,) = strata.compile(module, target=target)(ids, *params.values())
    expected = model(torch.tensor(ids, dtype=torch.long)).logits.detach().numpy()
    np.testing.assert_allclose(logits, expected, rtol=0, atol=1e-4)
    exported = program.export_hf(name, params, **arguments)
    for key, value in exported.items():
        np.testing.assert_array_equal(value, state[key].numpy())
    tied = {"lm_head.weight"} if name == "GPT2" or config.tie_word_embeddings else set()
    assert set(state) - set(exported) == tied


def test_import_reports_a_missing_weight():
    torch, config, model = hf_pair("GPT2")
    program = dsl.load("from std.models import GPT2\n")
    arguments = program.hf_arguments("GPT2", config)
    state = dict(model.state_dict())
    del state["transformer.h.1.mlp.c_fc.bias"]
    with pytest.raises(dsl.DslError, match=r"E010.*blocks\.1\.mlp\.fc\.bias.*transformer\.h\.1\.mlp\.c_fc\.bias"):
        program.import_hf("GPT2", state, **arguments)


TRAIN = """
from std.models import GPT2, Llama

model LanguageModelLoss(vocab: int, layers: int, llama: bool):
  params:
    lm: Llama(vocab_size=vocab, d_model=32, n_layers=layers, num_heads=4, num_kv_heads=2, d_ff=40) if llama
    gpt: GPT2(vocab_size=vocab, n_positions=16, d_model=32, n_layers=layers, num_heads=4) if not llama
  forward:
    inputs:
      ids: [B, T, int32]
      labels: [N, int32]
    out: []
    graph:
      if llama:
        ids -> lm -> view([N, vocab]) -> logits
      else:
        ids -> gpt -> view([N, vocab]) -> logits
      (logits, labels) -> cross_entropy() -> out
"""


@pytest.mark.parametrize("llama", [False, True])
def test_models_train_one_step_through_autodiff(llama):
    program = dsl.load(TRAIN)
    module = program.instantiate("LanguageModelLoss", vocab=37, layers=2, llama=llama, B=2, T=8, N=16)
    value_and_grad = strata.value_and_grad(module, argnums=tuple(range(2, len(module.ops.first.args))))
    ids = RNG.integers(0, 37, (2, 8)).astype(np.int32)
    labels = np.roll(ids, -1, 1).reshape(-1)
    params = [RNG.standard_normal(t.get_shape()).astype(np.float32) * 0.1
              for t in module.ops.first.function_type.inputs.data[2:]]
    loss, grads = value_and_grad(ids, labels, *params)
    assert len(grads) == len(params) and all(g.shape == p.shape for g, p in zip(grads, params))
    stepped = [p - 0.5 * g for p, g in zip(params, grads)]
    after, _ = value_and_grad(ids, labels, *stepped)
    assert np.isfinite(loss) and after < loss


@pytest.mark.parametrize("entry", ["GPT2", "Llama"])
def test_models_compile_to_ptx(entry):
    pytest.importorskip("numba")
    program = dsl.load("from std.models import GPT2, Llama\n")
    sizes = dict(vocab_size=61, d_model=32, n_layers=1, num_heads=4)
    if entry == "GPT2":
        sizes["n_positions"] = 16
    else:
        sizes.update(num_kv_heads=2, d_ff=40)
    ptx = gpu_ptx(str(program.instantiate(entry, B=2, T=8, **sizes)))
    assert ".entry" in ptx


# ------------------------------------------------------------------ backward, checkpointing, errors

LINEAR = """
module MyLinear(in_dim: int, out_dim: int):
  params:
    weight: [out_dim, in_dim]
    bias: [out_dim]
  forward:
    in: [N, in_dim]
    out: [N, out_dim]
    graph:
      in -> matmul(weight, transpose=NT) -> y
      (y, bias) -> add() -> out
    save: [in]
  backward:
    d_out: [N, out_dim]
    d_in: [N, in_dim]
    graph:
      (d_out, weight) -> matmul() -> d_in
      (d_out, saved.in) -> matmul(transpose=TN) -> d_weight
      d_out -> reduce_sum(dims=[0]) -> d_bias

module ScaledLinear(in_dim: int, out_dim: int) extends MyLinear:
  backward:
    d_out: [N, out_dim]
    graph:
      (d_out, weight) -> matmul() -> d_in
      (d_out, saved.in) -> matmul(transpose=TN) -> scale(2.0) -> d_weight
      d_out -> reduce_sum(dims=[0]) -> d_bias
"""


def test_verify_backward_accepts_a_correct_backward_and_catches_a_wrong_one():
    program = dsl.load(LINEAR)
    good = program.verify_backward("MyLinear", in_dim=5, out_dim=3, N=4)
    assert good.ok(), str(good)
    assert [g.name for g in good.gradients] == ["d_in", "d_weight", "d_bias"]
    bad = program.verify_backward("ScaledLinear", in_dim=5, out_dim=3, N=4)
    assert not bad.ok()
    worst = {g.name: g.versus_finite_differences for g in bad.gradients}
    assert worst["d_weight"] > 0.1 and worst["d_in"] < 1e-6


def test_save_and_checkpoint_mark_values_for_autodiff():
    program = dsl.load(MODULES + """
module Marked(d: int):
  params:
    w: [d, d]
  forward:
    in: [N, d]
    out: [N, d]
    graph:
      in -> linear(w) -> tanh() -> h @checkpoint
      h -> linear(w) -> out
""")
    module = program.instantiate("Marked", d=6, N=3)
    marked = [op for op in module.walk() if "graph.checkpoint" in op.attributes]
    assert [type(op) for op in marked] == [graph.TanhOp]
    block = program.instantiate("SwiGLU_MLP", d_model=8, d_ff=6, shapes={"in": (2, 8)})
    assert not any("graph.checkpoint" in op.attributes for op in block.walk())  # save: [in] is an argument
    args = [RNG.standard_normal((3, 6)).astype(np.float32), RNG.standard_normal((6, 6)).astype(np.float32),
            RNG.standard_normal((3, 6)).astype(np.float32)]
    gradients = {}
    for policy in ("all", "marked"):
        copy = module.clone()
        gradient = differentiate(copy, "Marked", checkpoint=policy)
        gradients[policy] = strata.interpret(copy, *args, entry=gradient.sym_name.data)
    for a, b in zip(gradients["all"], gradients["marked"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("text, code, where", [
    ("module M(:\n", "E001", ":1:10"),
    (MODULES + "module M(d: int):\n  forward:\n    in: [N]\n    out: [N]\n    graph:\n      in -> nope() -> out\n", "E014", ":7:13"),
    (MODULES + "module M(d: int):\n  params:\n    w: [d, d]\n    w: [d]\n  forward:\n    in: [d]\n    out: [d]\n"
     "    graph:\n      in -> out\n", "E009", ":5:5"),
])
def test_errors_are_located(text, code, where):
    with pytest.raises(dsl.DslError) as caught:
        dsl.load(text).instantiate("M", d=4, N=4)
    assert caught.value.code == code and where in str(caught.value)
    assert "^" in str(caught.value).splitlines()[-1]


def test_instantiate_names_a_missing_dim_and_an_unknown_keyword():
    program = dsl.load(MODULES)
    with pytest.raises(dsl.DslError, match="E012.*needs T"):
        program.instantiate("CausalSelfAttention", d_model=8, num_heads=2, num_kv_heads=2, B=1)
    with pytest.raises(dsl.DslError, match="E002.*no parameter or input dim Q"):
        program.instantiate("CausalSelfAttention", d_model=8, num_heads=2, num_kv_heads=2, B=1, T=2, Q=3)
    with pytest.raises(dsl.DslError, match="E027.*multiple of num_kv_heads"):
        program.instantiate("CausalSelfAttention", d_model=12, num_heads=3, num_kv_heads=2, B=1, T=2)


def test_trainer_trains_a_dsl_model():
    module = dsl.load(TRAIN).instantiate("LanguageModelLoss", vocab=23, layers=1, llama=True, B=2, T=8, N=16)
    function = module.ops.first
    names = [a.data["graph.name"].data for a in function.arg_attrs.data]
    init = {n: RNG.standard_normal(t.get_shape()).astype(np.float32) * 0.1
            for n, t in zip(names[2:], function.function_type.inputs.data[2:])}
    trainer = strata.Trainer(module, strata.Adam(lr=3e-2), init)
    ids = RNG.integers(0, 23, (2, 8)).astype(np.int32)
    losses = [trainer.step(ids=ids, labels=np.roll(ids, -1, 1).reshape(-1)) for _ in range(10)]
    assert losses[-1] < 0.9 * losses[0]


def test_import_from_a_safetensors_checkpoint_directory(tmp_path):
    torch, config, model = hf_pair("Llama")
    model.save_pretrained(tmp_path, safe_serialization=True)
    program = dsl.load("from std.models import Llama\n")
    arguments = program.hf_arguments("Llama", config)
    from_disk = program.import_hf("Llama", tmp_path, **arguments)
    in_memory = program.import_hf("Llama", model.state_dict(), **arguments)
    assert list(from_disk) == list(in_memory)
    for name in in_memory:
        np.testing.assert_array_equal(from_disk[name], in_memory[name])
    with pytest.raises(dsl.DslError, match="E010.*no .safetensors checkpoint"):
        program.import_hf("Llama", tmp_path / "missing", **arguments)
    (tmp_path / "broken.safetensors").write_bytes(b"not a checkpoint")
    with pytest.raises(dsl.DslError, match="E010.*not a readable safetensors file"):
        program.import_hf("Llama", tmp_path, **arguments)

"""The PyTorch front end: models exported with torch.export, imported into graph IR,
compiled for the CPU and compared with PyTorch on the CPU (docs/torch-frontend.md)."""

from __future__ import annotations

import copy
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import strata  # noqa: E402
from strata.frontends.torch import SUPPORTED_OPS, from_torch, import_program  # noqa: E402
from strata.runtime.cuda import cuda_available  # noqa: E402
from strata.support.errors import UnsupportedOpError  # noqa: E402

needs_gpu = pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU (numba.cuda.is_available() is False)")


def close_to_torch(got, expected, tolerance: float = 1e-4) -> None:
    """Within `tolerance` relative to max |expected|."""
    got = got.detach().numpy() if isinstance(got, torch.Tensor) else np.asarray(got)
    expected = expected.detach().numpy()
    assert got.shape == expected.shape and got.dtype == expected.dtype
    error = np.abs(got.astype(np.float64) - expected).max() / max(np.abs(expected).max(), 1e-30)
    assert error <= tolerance, f"relative error {error:.3g} > {tolerance}"


def arguments(module) -> list[tuple[str, str]]:
    function = module.body.block.first_op
    return [(a.data["graph.name"].data, a.data["graph.role"].data) for a in function.arg_attrs.data]


# --- an MLP ---------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(7, 17), nn.Linear(17, 33), nn.Linear(33, 5)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.gelu(self.fc2(h)) + F.silu(h).sum(-1, keepdim=True)
        return F.softmax(self.fc3(h), dim=-1), F.log_softmax(self.fc3(h), dim=-1)


def test_mlp_matches_torch():
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(9, 7)
    compiled = strata.compile_torch(model, (x,))
    expected = model(x)
    got = compiled(x)
    assert isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], torch.Tensor)
    for g, e in zip(got, expected):
        close_to_torch(g, e)
    # the inputs first, then every parameter by its PyTorch name
    names = arguments(compiled.module)
    assert names[0] == ("x", "input")
    assert names[1:] == [(n, "param") for n, _ in model.named_parameters()]


def test_mlp_float64():
    torch.manual_seed(1)
    model = MLP().double().eval()
    x = torch.randn(3, 7, dtype=torch.float64)
    compiled = strata.compile_torch(model, (x,))
    assert "f64" in str(compiled.module) and "f32" not in str(compiled.module)
    for g, e in zip(compiled(x), model(x)):
        close_to_torch(g, e, 1e-12)


@pytest.mark.parametrize("dtype,tolerance", [("float16", 4e-3), ("bfloat16", 3e-2)])
def test_half_precision_mlp(dtype, tolerance):
    torch.manual_seed(10)
    dtype = getattr(torch, dtype)
    model = nn.Sequential(nn.Linear(7, 17), nn.GELU(), nn.LayerNorm(17), nn.Linear(17, 5)).to(dtype).eval()
    x = torch.randn(3, 7, dtype=dtype)
    got = strata.compile_torch(model, (x,))(x)
    assert got.dtype == dtype
    with torch.no_grad():
        close_to_torch(got.float(), model(x).float(), tolerance)


def test_torch_transformer_encoder_layer():
    torch.manual_seed(11)
    model = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=24, batch_first=True).eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        close_to_torch(strata.compile_torch(model, (x,))(x), model(x))


def test_numpy_inputs_and_a_new_shape_compiles_again():
    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(7, 17), nn.Tanh(), nn.Linear(17, 3)).eval()
    compiled = strata.compile_torch(model, (torch.randn(4, 7),))
    x = np.random.default_rng(0).standard_normal((4, 7)).astype(np.float32)
    close_to_torch(compiled(x), model(torch.from_numpy(x)))
    y = torch.randn(6, 7)
    close_to_torch(compiled(y), model(y))
    assert len(compiled.programs) == 2


def test_cross_entropy_gradients_with_ignored_labels():
    torch.manual_seed(18)
    logits = torch.randn(6, 5, requires_grad=True)
    labels = torch.tensor([0, -100, 4, 2, 1, -100])
    imported = import_program(nn.CrossEntropyLoss(), (logits.detach(), labels))
    assert "graph.cross_entropy" in str(imported.module)
    loss, gradient = strata.value_and_grad(imported.module, argnums=0)(logits.detach().numpy(), labels.numpy())
    expected = F.cross_entropy(logits, labels)
    expected.backward()
    assert abs(float(loss) - expected.item()) < 1e-6
    close_to_torch(gradient, logits.grad)


def test_losses_gather_and_padding():
    """cross_entropy and nll_loss keep PyTorch's ignore_index (-100: padded labels)."""

    class Losses(nn.Module):
        def forward(self, x, y, index):
            log_probs = x.log_softmax(-1)
            return (F.cross_entropy(x, y), F.cross_entropy(x, y, reduction="sum"), F.cross_entropy(x, y, reduction="none"),
                    F.nll_loss(log_probs, y.clamp(min=0), ignore_index=2), torch.gather(x, 1, index),
                    torch.gather(x, 0, index[:3]), F.pad(x, (1, 2, -1, 1), value=3.0), F.pad(y, (0, 1), value=-100))  # fmt: skip

    torch.manual_seed(17)
    x, y, index = torch.randn(6, 5), torch.tensor([0, -100, 4, 2, 1, -100]), torch.randint(0, 5, (6, 2))
    compiled = strata.compile_torch(Losses(), (x, y, index))
    for got, expected in zip(compiled(x, y, index), Losses()(x, y, index), strict=True):
        close_to_torch(got, expected)


def test_gpt2_loss_with_ignored_labels(gpt2):
    ids = torch.randint(0, 97, (2, 7), generator=torch.Generator().manual_seed(4))
    labels = ids.clone()
    labels[0, :2] = -100
    compiled = strata.compile_torch(gpt2, (ids,), example_kwargs={"labels": labels})
    with torch.no_grad():
        expected = gpt2(ids, labels=labels)
    got = compiled(ids, labels=labels)
    close_to_torch(got.loss, expected.loss)
    close_to_torch(got.logits, expected.logits)


def test_cross_entropy_and_slicing():
    class Loss(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(7, 11)

        def forward(self, x, labels):
            logits = self.fc(x)
            return F.cross_entropy(logits, labels), logits[:, -1], logits[1:5:2]

    torch.manual_seed(3)
    model = Loss().eval()
    x, labels = torch.randn(8, 7), torch.randint(0, 11, (8,))
    compiled = strata.compile_torch(model, (x, labels))

    for g, e in zip(compiled(x, labels), model(x, labels)):
        close_to_torch(g, e)


def test_gradients_of_an_imported_loss():
    """strata.value_and_grad differentiates an imported module (the autodiff pass)."""

    class Loss(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.norm, self.fc2 = nn.Linear(7, 17), nn.LayerNorm(17), nn.Linear(17, 5)

        def forward(self, x, labels):
            return F.cross_entropy(self.fc2(F.gelu(self.norm(self.fc1(x)))), labels)

    torch.manual_seed(14)
    model = Loss()
    x, labels = torch.randn(9, 7), torch.randint(0, 5, (9,))
    imported = import_program(model, (x, labels))
    first = len(imported.input_names)
    value_and_grad = strata.value_and_grad(imported.module, argnums=list(range(first, first + len(imported.params))))
    loss, gradients = value_and_grad(x.numpy(), labels.numpy(), *imported.params.values())
    expected = model(x, labels)
    expected.backward()
    assert abs(float(loss) - expected.item()) < 1e-5
    for got, parameter in zip(gradients, model.parameters()):
        close_to_torch(got, parameter.grad)


def test_embedding_padding_row_gets_no_gradient():
    """nn.Embedding(padding_idx=...) imports with its padding row: the table's gradient
    matches autograd's, whose padding row is 0 although padded ids occur."""

    class Bag(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.head = nn.Embedding(11, 6, padding_idx=3), nn.Linear(6, 4)

        def forward(self, ids, labels):
            return F.cross_entropy(self.head(self.embed(ids)).mean(1), labels)

    torch.manual_seed(15)
    model = Bag()
    ids, labels = torch.tensor([[3, 1, 3, 7], [0, 3, 10, 2], [5, 5, 3, 9]]), torch.tensor([0, 3, 1])
    imported = import_program(model, (ids, labels))
    first = len(imported.input_names)
    value_and_grad = strata.value_and_grad(imported.module, argnums=list(range(first, first + len(imported.params))))
    loss, gradients = value_and_grad(ids.numpy(), labels.numpy(), *imported.params.values())
    model(ids, labels).backward()
    assert not model.embed.weight.grad[3].any()
    for got, parameter in zip(gradients, model.parameters()):
        close_to_torch(got, parameter.grad)


def test_embedding_scaled_by_frequency_is_refused():
    model = nn.Embedding(11, 6, scale_grad_by_freq=True)
    with pytest.raises(UnsupportedOpError, match="scale_grad_by_freq"):
        import_program(model, (torch.tensor([1, 2, 2]),))


# --- a Llama-style block: RMSNorm, rotary embeddings, causal attention, SwiGLU -----------


class RMSNorm(nn.Module):
    """As in Llama: computed in f32, written out as pow/mean/rsqrt/mul."""

    def __init__(self, size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(size))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, dim: int = 24, heads: int = 3, hidden: int = 40):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.attention_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def rotary(self, x, cos, sin):
        return x * cos + rotate_half(x) * sin

    def forward(self, x):
        b, s, d = x.shape
        positions = torch.arange(s, dtype=torch.float32)
        freqs = torch.outer(positions, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        h = self.attention_norm(x)
        q, k, v = (w(h).view(b, s, self.heads, self.head_dim).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        q, k = self.rotary(q, cos, sin), self.rotary(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, d))
        h = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


@pytest.mark.parametrize("seq", [1, 17])
def test_llama_block_matches_torch(seq):
    torch.manual_seed(4)
    model = LlamaBlock().eval()
    x = torch.randn(2, seq, 24)
    compiled = strata.compile_torch(model, (x,))
    text = str(compiled.module)
    assert text.count("graph.rmsnorm") == 2  # recognized from pow/mean/rsqrt/mul
    assert "causal = true" in text
    # the rotary tables are folded at import time: no cos/sin in the graph
    close_to_torch(compiled(x), model(x))


# --- GPT-2 from transformers ---------------------------------------------------------------


def random_gpt2(seed: int, **sizes):
    """transformers' GPT2LMHeadModel with random weights (vocabulary 97), for inference."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(seed)
    config = transformers.GPT2Config(n_head=2, vocab_size=97, use_cache=False, bos_token_id=0, eos_token_id=0, **sizes)
    return transformers.GPT2LMHeadModel(config).eval()


@pytest.fixture(scope="module")
def gpt2():
    return random_gpt2(5, n_layer=2, n_embd=32, n_positions=64)


@pytest.mark.parametrize("batch,seq", [(1, 1), (1, 17), (3, 1), (3, 17)])
def test_gpt2_matches_torch(gpt2, batch, seq):
    ids = torch.randint(0, 97, (batch, seq), generator=torch.Generator().manual_seed(seq))
    compiled = strata.compile_torch(gpt2, (ids,))
    text = str(compiled.module)
    assert text.count("graph.attention") == 2 and text.count('approximate = "tanh"') == 2
    names = [n for n, role in arguments(compiled.module) if role == "param"]
    assert "transformer.h.0.attn.c_attn.weight" in names and "lm_head.weight" in names
    with torch.no_grad():
        expected = gpt2(ids).logits
    got = compiled(ids)
    close_to_torch(got.logits, expected)


def test_gpt2_with_a_padding_mask(gpt2):
    """An attention_mask input: the mask is indexed at import-time indices (embedding) and
    applied in decomposed attention; fully masked rows (left padding) give 0 as in PyTorch."""
    ids = torch.randint(0, 97, (2, 6), generator=torch.Generator().manual_seed(3))
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1]])
    compiled = strata.compile_torch(gpt2, (ids,), example_kwargs={"attention_mask": mask})
    with torch.no_grad():
        expected = gpt2(ids, attention_mask=mask).logits
    close_to_torch(compiled(ids, attention_mask=mask).logits, expected)
    other = torch.tensor([[0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])  # same shapes: no new compile
    with torch.no_grad():
        expected = gpt2(ids, attention_mask=other).logits
    close_to_torch(compiled(ids, attention_mask=other).logits, expected)
    assert len(compiled.programs) == 1


def test_transformers_llama_matches_torch():
    """LlamaForCausalLM: RMSNorm, rotary tables (folded), grouped-query attention, SwiGLU."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(8)
    config = transformers.LlamaConfig(vocab_size=101, hidden_size=32, intermediate_size=56, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                      use_cache=False)  # fmt: skip
    model = transformers.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 101, (2, 9), generator=torch.Generator().manual_seed(1))
    compiled = strata.compile_torch(model, (ids,))
    text = str(compiled.module)
    assert text.count("graph.rmsnorm") == 5 and text.count("graph.attention") == 2
    with torch.no_grad():
        expected = model(ids).logits
    close_to_torch(compiled(ids).logits, expected)


@pytest.mark.parametrize("name", ["llama", "encoder", "masks", "assorted"])
def test_core_aten_programs_import(name):
    """Programs decomposed to core ATen (run_decompositions) import too: attention arrives
    as bmm, where, _softmax and any."""
    torch.manual_seed(12)
    model, args = {
        "llama": lambda: (LlamaBlock().eval(), (torch.randn(2, 5, 24),)),
        "encoder": lambda: (nn.TransformerEncoderLayer(16, 2, 24, batch_first=True).eval(), (torch.randn(2, 5, 16),)),
        "masks": lambda: (Masks(), (torch.randn(2, 4, 5, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 3),
                                    torch.randn(2, 1, 5, 7))),
        "assorted": lambda: (Assorted().eval(), (torch.randn(4, 6), torch.tensor([1, 0, 9, 3, 3]))),
    }[name]()  # fmt: skip
    program = torch.export.export(model, args).run_decompositions()
    compiled = strata.compile_torch(program, args)
    expected = model(*args)
    got = compiled(*args)
    for g, e in zip(got if isinstance(got, (tuple, list)) else [got], expected if isinstance(expected, tuple) else [expected]):
        close_to_torch(g, e)


# --- errors ----------------------------------------------------------------------------------


class Sorts(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x):
        return torch.cumsum(self.fc(x), dim=-1)  # an op the table does not have


def test_unsupported_op_names_the_op_and_where():
    with pytest.raises(UnsupportedOpError) as caught:
        from_torch(Sorts().eval(), (torch.randn(2, 5),))
    message = str(caught.value)
    assert "aten.cumsum.default" in message
    assert "test_torch_import.py:" in message and "torch.cumsum(self.fc(x), dim=-1)" in message
    assert "Sorts" in message
    assert "Supported ops:" in message and "addmm" in message and "scaled_dot_product_attention" in message
    assert isinstance(caught.value, strata.StrataError)


def test_ops_on_constants_fold_whatever_the_op():
    class Folded(nn.Module):
        def forward(self, x):
            mask = torch.ones(4, 4).triu(1).bool()
            return x.masked_fill(mask, -1.0) + torch.arange(4).cumsum(0)  # cumsum of a constant

    x = torch.randn(4, 4)
    close_to_torch(strata.compile_torch(Folded(), (x,))(x), Folded()(x))


def test_supported_ops_table():
    for op in ("addmm", "linear", "layer_norm", "embedding", "scaled_dot_product_attention", "split",
               "view", "permute", "transpose", "expand", "slice", "masked_fill", "where", "gelu",
               "dropout", "_to_copy", "cat", "rms_norm", "softmax", "log_softmax", "cross_entropy_loss"):  # fmt: skip
        assert op in SUPPORTED_OPS


def test_import_strata_needs_no_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import strata\n"
        "g = strata.Graph('f'); x = g.input('x', (2,)); g.output(x * 2.0); g.build()\n"
        "print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr


# --- strata-import --------------------------------------------------------------------------


def test_strata_import_round_trip(tmp_path, gpt2):
    ids = torch.randint(0, 97, (2, 5), generator=torch.Generator().manual_seed(0))

    class Logits(nn.Module):  # a saved program's outputs must be plain tensors to load again
        def __init__(self):
            super().__init__()
            self.model = gpt2

        def forward(self, ids):
            return self.model(ids).logits

    program = torch.export.export(Logits().eval(), (ids,))
    torch.export.save(program, tmp_path / "model.pt2")
    mlir, params = tmp_path / "model.mlir", tmp_path / "params.npz"
    result = subprocess.run(
        [sys.executable, "-m", "strata.tools.import_torch", str(tmp_path / "model.pt2"), "-o", str(mlir),
         "--params-out", str(params)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    module = strata.parse_module(mlir.read_text())
    assert arguments(module)[0] == ("ids", "input")
    stored = dict(np.load(params))
    assert set(stored) == {f"arg{i}" for i in range(1, len(arguments(module)))}
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, arg0=ids.numpy(), **stored)  # strata-run takes one --inputs file
    out = tmp_path / "out.npz"
    result = subprocess.run(
        [sys.executable, "-m", "strata.tools.run", str(mlir), "--inputs", str(inputs), "--outputs", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with torch.no_grad():
        expected = gpt2(ids).logits
    close_to_torch(np.load(out)["result0"], expected)


def test_strata_import_reports_a_bad_file(tmp_path):
    bad = tmp_path / "bad.pt2"
    bad.write_text("not a program")
    result = subprocess.run([sys.executable, "-m", "strata.tools.import_torch", str(bad)],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("strata-import: ") and "bad.pt2" in result.stderr


# --- assorted ops ------------------------------------------------------------------------


class Assorted(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(6)
        self.ln = nn.LayerNorm((2, 3), elementwise_affine=False)
        self.table = nn.Parameter(torch.randn(10, 6))
        with torch.no_grad():
            self.bn.running_mean.normal_()
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x, ids):  # x [4, 6], ids [5]
        a, b = x.chunk(2, dim=-1)
        rows = torch.stack([r * (i + 1) for i, r in enumerate(x.unbind(0))], dim=1)  # [6, 4]
        y = self.bn(x).clamp(-1.0, 1.0) + torch.where(x > 0, x, 0.1 * x)
        z = self.ln(x.reshape(4, 2, 3)).reshape(4, 6)
        picked = self.table.index_select(0, ids)  # [5, 6]
        stats = x.amax(-1) + x.max() + x.mean() + x.narrow(1, 1, 2).sum(-1) + (x ** 2).sum(1).sqrt()
        batched = torch.bmm(x.view(2, 2, 6), x.view(2, 6, 2)) + torch.baddbmm(torch.ones(2, 2, 2), x.view(2, 2, 6), x.view(2, 6, 2), alpha=0.5)
        vector = torch.matmul(x, x[0]) + torch.mv(x, x[1]) + x.new_ones(4) * torch.dot(x[0], x[1])
        return (a * b, rows, y + z, picked @ x.t(), stats, batched, vector, torch.cat([a, b, torch.zeros(4, 1)], -1),
                x.masked_fill(x < 0, float("-inf")).softmax(-1), torch.rsub(x, 2.0), x.abs().pow(-0.5), x.abs().pow(1.7))


def test_assorted_ops_match_torch():
    torch.manual_seed(6)
    model = Assorted().eval()
    x, ids = torch.randn(4, 6), torch.tensor([1, 0, 9, 3, 3])
    compiled = strata.compile_torch(model, (x, ids))
    expected = model(x, ids)
    got = compiled(x, ids)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        close_to_torch(g, e)


class Activations(nn.Module):
    def forward(self, x):
        return (F.leaky_relu(x, 0.2), F.relu6(x * 4), F.hardtanh(x, -0.5, 0.7), F.elu(x, 0.7), F.celu(x, 1.3),
                F.selu(x), F.softplus(x * 10, beta=2.0, threshold=5.0), F.mish(x), F.hardsigmoid(x * 4),
                F.hardswish(x * 4), torch.log1p(x.abs()), torch.expm1(x), torch.sign(x), x.amin(-1), x.min(),
                torch.logsumexp(x, -1), x.var(-1), x.std(0, keepdim=True), x.var(), torch.var(x, 1, correction=0),
                torch.linalg.vector_norm(x, dim=-1), x.norm(dim=0), torch.linalg.vector_norm(x, 1, dim=-1))  # fmt: skip


def test_activations_and_statistics_match_torch():
    torch.manual_seed(15)
    x = torch.randn(5, 9)
    compiled = strata.compile_torch(Activations(), (x,))
    for got, expected in zip(compiled(x), Activations()(x), strict=True):
        close_to_torch(got, expected)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 5, 3, padding=1)
        self.c2 = nn.Conv2d(5, 7, (3, 2), stride=2, dilation=(1, 2), bias=False)
        self.c3 = nn.Conv1d(4, 6, 3, padding="same")
        self.depthwise = nn.Conv2d(3, 6, 3, groups=3, padding=(0, 1))
        self.fc = nn.Linear(7, 4)

    def forward(self, x, seq):
        h = self.c2(F.max_pool2d(F.relu(self.c1(x)), 2))
        pooled = F.avg_pool2d(h, 2, stride=1, padding=1)
        features = F.adaptive_avg_pool2d(h, 1).flatten(1)
        t = F.max_pool1d(self.c3(seq), 3, stride=2, padding=1) + F.max_pool1d(seq, 2, ceil_mode=True).sum()
        return (self.fc(features), pooled, t, F.avg_pool1d(seq, 2), F.adaptive_avg_pool2d(x, (3, 4)),
                self.depthwise(x))  # fmt: skip


def test_convolutions_and_pooling_match_torch():
    """Convolutions (strided, grouped, depthwise), pooling and adaptive pooling, as exported."""
    torch.manual_seed(16)
    model = CNN().eval()
    x, seq = torch.randn(2, 3, 12, 16), torch.randn(2, 4, 11)
    compiled = strata.compile_torch(model, (x, seq))
    with torch.no_grad():
        for got, expected in zip(compiled(x, seq), model(x, seq), strict=True):
            close_to_torch(got, expected)


class Masks(nn.Module):
    def forward(self, q, k, v, bias):
        keep = torch.ones(5, 7, dtype=torch.bool).tril(diagonal=2)  # neither empty nor causal
        gqa = F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True)
        return (F.scaled_dot_product_attention(q, k, v, attn_mask=keep),
                F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3),
                F.scaled_dot_product_attention(q, k, v, attn_mask=torch.zeros(5, 7)),
                gqa)  # fmt: skip


class WrittenOut(nn.Module):
    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1) / 8**0.5
        causal = torch.full((5, 5), float("-inf")).triu(1)
        other = torch.arange(25.0).view(5, 5) / 25
        return (F.softmax(scores + causal, dim=-1) @ v,  # recognized: graph.attention, causal
                F.softmax(scores + other, dim=-1) @ v)   # another mask: stays matmul + softmax  # fmt: skip


def test_written_out_attention():
    torch.manual_seed(13)
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 5, 8), torch.randn(2, 3, 5, 4)
    compiled = strata.compile_torch(WrittenOut(), (q, k, v))
    text = str(compiled.module)
    assert text.count("graph.attention") == 1 and "causal = true" in text and text.count("graph.softmax") == 1
    for got, expected in zip(compiled(q, k, v), WrittenOut()(q, k, v)):
        close_to_torch(got, expected)


def test_attention_masks_match_torch():
    torch.manual_seed(7)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 3)
    bias = torch.randn(2, 1, 5, 7)
    compiled = strata.compile_torch(Masks(), (q, k, v, bias))
    for got, expected in zip(compiled(q, k, v, bias), Masks()(q, k, v, bias)):
        close_to_torch(got, expected)


def test_the_docs_table_names_every_supported_op():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "torch-frontend.md").read_text()
    table = text.split("## Supported ops", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    listed = {name for row in rows for name in re.findall(r"`([^`]+)`", row)}
    assert listed == set(SUPPORTED_OPS)


def test_gpt2_eager_attention_matches_torch():
    """transformers' eager attention: matmul, a folded causal mask applied with where, softmax."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(9)
    config = transformers.GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=50, n_positions=32, use_cache=False,
                                     bos_token_id=0, eos_token_id=0, attn_implementation="eager")  # fmt: skip
    model = transformers.GPT2LMHeadModel(config).eval()
    ids = torch.randint(0, 50, (2, 11), generator=torch.Generator().manual_seed(2))
    compiled = strata.compile_torch(model, (ids,))
    text = str(compiled.module)
    assert "graph.attention" in text and "causal = true" in text and "graph.softmax" not in text
    with torch.no_grad():
        expected = model(ids).logits
    close_to_torch(compiled(ids).logits, expected)


def test_gpt2_example_generates_the_same_tokens():
    from pathlib import Path

    example = Path(__file__).resolve().parent.parent / "examples" / "gpt2.py"
    result = subprocess.run([sys.executable, str(example), "--tokens", "3", "--prompt", "4"],
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "same tokens" in result.stdout


@pytest.fixture(scope="module")
def gpt2_one_layer():
    """A one-layer GPT-2 (everything a block has, half the compile time of `gpt2`)."""
    return random_gpt2(6, n_layer=1, n_embd=16, n_positions=16)


@pytest.mark.parametrize("dtype,tolerance", [(torch.float32, 1e-4), (torch.float64, 1e-9)])
def test_gpt2_loss_gradients_match_autograd(gpt2_one_layer, dtype, tolerance):
    """Training through the importer, at the gradient level: GPT-2's language-model loss
    (labels with ignored positions), differentiated by Strata's autodiff, against PyTorch's
    autograd, for every parameter (f32, and f64 to a tighter tolerance). The tied
    embedding / output weight arrives as two arguments: their gradients add up to
    PyTorch's one."""
    model = copy.deepcopy(gpt2_one_layer).to(dtype)

    class Loss(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, ids, labels):
            if dtype == torch.float32:
                return self.model(ids, labels=labels).loss
            # transformers computes its loss in f32 (logits.float()): the same loss, in f64
            logits = self.model(ids).logits[:, :-1]
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))

    ids = torch.randint(0, 97, (2, 9), generator=torch.Generator().manual_seed(5))
    labels = ids.clone()
    labels[0, :3] = -100
    imported = import_program(Loss().eval(), (ids, labels))
    names = list(imported.params)
    first = len(imported.input_names)
    value_and_grad = strata.value_and_grad(imported.module, argnums=list(range(first, first + len(names))))
    loss, gradients = value_and_grad(ids.numpy(), labels.numpy(), *imported.params.values())
    expected = Loss()(ids, labels)
    expected.backward()
    assert expected.dtype == dtype and loss.dtype == np.dtype(str(dtype).removeprefix("torch."))
    assert abs(float(loss) - expected.item()) <= tolerance / 10 * abs(expected.item())
    parameters = dict(model.named_parameters(remove_duplicate=False))
    by_name = {name.removeprefix("model."): g for name, g in zip(names, gradients)}
    tied = by_name.pop("transformer.wte.weight") + by_name.pop("lm_head.weight")
    close_to_torch(tied, parameters["lm_head.weight"].grad, tolerance)
    assert set(by_name) == {name for name in parameters if name not in ("transformer.wte.weight", "lm_head.weight")}
    for name, gradient in by_name.items():
        close_to_torch(gradient, parameters[name].grad, tolerance)


def test_parameters_are_bound_once_on_the_cpu():
    """The compiled model passes numpy views of the model's own parameter tensors: no
    copy, so a change to a weight in place shows in the next call."""
    torch.manual_seed(19)
    model = nn.Sequential(nn.Linear(7, 5), nn.Tanh()).eval()
    x = torch.randn(3, 7)
    compiled = strata.compile_torch(model, (x,))
    assert not compiled.device_params
    weight, bias = compiled.params
    assert np.shares_memory(weight, model[0].weight.detach().numpy())
    assert np.shares_memory(bias, model[0].bias.detach().numpy())
    with torch.no_grad():
        model[0].weight.mul_(2.0)
        close_to_torch(compiled(x), model(x))


@needs_gpu
@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-4), (torch.bfloat16, 3e-2)], ids=["f32", "bf16"])
def test_gpt2_on_cuda_binds_the_parameters_once(gpt2, monkeypatch, dtype, tolerance):
    """target "cuda": the parameters are copied to the device once, at compile time (bf16
    as its uint16 bits); every call passes those device arrays, which the kernels read in
    place (their pointers are in the launch arguments), and no parameter is copied from
    the host again."""
    import copy

    gpt2 = copy.deepcopy(gpt2).to(dtype)
    ids = torch.randint(0, 97, (3, 17), generator=torch.Generator().manual_seed(6))
    compiled = strata.compile_torch(gpt2, (ids,), target="cuda")
    runtime = compiled.executable.run  # the CudaExecutable
    params = compiled.params
    first = len(compiled.imported.input_names)
    slots = range(first, first + len(params))
    assert len(params) == len(compiled.imported.params) and not any(isinstance(p, np.ndarray) for p in params)
    names = list(compiled.imported.params)
    if dtype == torch.float32:  # tied: copied once (bf16 parameters reach numpy as copies, one per name)
        assert params[names.index("transformer.wte.weight")] is params[names.index("lm_head.weight")]

    def copied_from_the_host(*args, **kwargs):
        raise AssertionError("a parameter was copied from the host at a call")

    for slot in slots:  # the runtime's own buffer for an argument, written when a host array is passed
        monkeypatch.setattr(runtime.inputs[slot], "copy_to_device", copied_from_the_host)
    with torch.no_grad():
        expected = gpt2(ids).logits.float()
    for _ in range(2):
        close_to_torch(compiled(ids).logits.float(), expected, tolerance)
        assert [runtime.pointers[s] for s in slots] == [p.device_ctypes_pointer.value for p in params]
    if torch.cuda.is_available():  # a CUDA tensor input is read in place too
        close_to_torch(compiled(ids.cuda()).logits.float(), expected, tolerance)
        assert len(compiled.programs) == 1

"""Model forwards: the bundled MLP and transformer blocks, Strata CPU vs numpy (and PyTorch eager).

The numpy and PyTorch versions below write out the same math as the graph programs.
"compile s" is the wall time of `strata.compile` (lowering plus LLVM JIT), measured after
one throwaway compile so that the JIT's one-time set-up is not charged to the first model.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from common import check, kernel_count, load_torch, print_header, print_table, timeit, warm_up_jit

import strata

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))
from transformer_block import build_transformer_block


def numpy_layernorm(x, gamma, beta, epsilon=1e-5):
    centered = x - x.mean(axis=-1, keepdims=True)
    return centered / np.sqrt(np.mean(centered * centered, axis=-1, keepdims=True) + epsilon) * gamma + beta


def numpy_erf(x):
    """Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7): numpy has no erf."""
    a = np.abs(x)
    t = 1 / (1 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return np.sign(x) * (1 - poly * np.exp(-a * a))


def numpy_mlp(x, w1, b1, w2, b2, w3, b3):
    h = np.maximum(x @ w1.T + b1, 0)
    h = h @ w2 + b2
    h = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))  # gelu, tanh form
    return h @ w3.T + b3


def numpy_block(heads, x, ln1_g, ln1_b, w_q, w_k, w_v, w_o, ln2_g, ln2_b, w_1, b_1, w_2, b_2):
    batch, seq, d_model = x.shape
    head = d_model // heads

    def split_heads(t):
        return t.reshape(batch, seq, heads, head).transpose(0, 2, 1, 3)

    h = numpy_layernorm(x, ln1_g, ln1_b)
    q, k, v = (split_heads(h @ w) for w in (w_q, w_k, w_v))
    scores = np.where(np.triu(np.ones((seq, seq), bool), k=1), -1e9, q @ k.transpose(0, 1, 3, 2) / math.sqrt(head))
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    context = (e / e.sum(axis=-1, keepdims=True)) @ v
    x = x + context.transpose(0, 2, 1, 3).reshape(batch, seq, d_model) @ w_o
    h = numpy_layernorm(x, ln2_g, ln2_b) @ w_1 + b_1
    return x + (0.5 * h * (1 + numpy_erf(h / math.sqrt(2)))) @ w_2 + b_2


def torch_mlp(torch, x, w1, b1, w2, b2, w3, b3):
    F = torch.nn.functional
    h = F.gelu(torch.relu(F.linear(x, w1, b1)) @ w2 + b2, approximate="tanh")
    return F.linear(h, w3, b3)


def torch_block(torch, heads, x, ln1_g, ln1_b, w_q, w_k, w_v, w_o, ln2_g, ln2_b, w_1, b_1, w_2, b_2):
    F = torch.nn.functional
    batch, seq, d_model = x.shape
    head = d_model // heads

    def split_heads(t):
        return t.reshape(batch, seq, heads, head).permute(0, 2, 1, 3)

    h = F.layer_norm(x, (d_model,), ln1_g, ln1_b)
    q, k, v = (split_heads(h @ w) for w in (w_q, w_k, w_v))
    future = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=x.device), diagonal=1)
    scores = (q @ k.transpose(-1, -2) / math.sqrt(head)).masked_fill(future, -1e9)
    context = torch.softmax(scores, dim=-1) @ v
    x = x + context.permute(0, 2, 1, 3).reshape(batch, seq, d_model) @ w_o
    h = F.layer_norm(x, (d_model,), ln2_g, ln2_b)
    return x + F.gelu(h @ w_1 + b_1) @ w_2 + b_2


def input_shapes(program) -> list[tuple[int, ...]]:
    module = strata.parse_module(program) if isinstance(program, str) else program
    function = next(op for op in module.walk() if op.name == "func.func")
    return [t.get_shape() for t in function.function_type.inputs.data]


def models():
    """(name, program as text or module, numpy version, PyTorch version); heads as built."""
    large = build_transformer_block(batch=4, seq=128, d_model=256, heads=8, d_ff=1024).build()
    return [
        ("mlp.mlir (32x512)", (EXAMPLES / "mlp.mlir").read_text(), numpy_mlp, torch_mlp),
        ("transformer_block.mlir (2x16x64)", (EXAMPLES / "transformer_block.mlir").read_text(),
         lambda *a: numpy_block(4, *a), lambda torch, *a: torch_block(torch, 4, *a)),
        ("transformer block 4x128x256, 8 heads, ff 1024", large,
         lambda *a: numpy_block(8, *a), lambda torch, *a: torch_block(torch, 8, *a)),
    ]


def bench(name: str, program, numpy_fn, torch_fn, repeat: int, torch) -> list[object]:
    start = time.perf_counter()
    exe = strata.compile(program, target="cpu")
    compile_s = time.perf_counter() - start
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(s, dtype=np.float32) * (1.0 if i == 0 else 0.1)
        for i, s in enumerate(input_shapes(program))
    ]
    unfused = strata.compile(program, target="cpu", fusion=False)
    impls = {
        "strata": lambda: exe(*inputs)[0],
        "unfused": lambda: unfused(*inputs)[0],
        "numpy": lambda: numpy_fn(*inputs),
    }
    if torch is not None:
        tensors = [torch.from_numpy(a) for a in inputs]
        impls["torch"] = lambda: torch_fn(torch, *tensors).numpy()
    want = numpy_fn(*inputs)
    for impl, fn in impls.items():
        check(f"{name} ({impl})", fn(), want, rtol=1e-3, atol=1e-4)

    times = {impl: timeit(fn, repeat=repeat) for impl, fn in impls.items()}
    row = [name, compile_s, f"{kernel_count(exe)} ({kernel_count(unfused)})", times["strata"] * 1e3]
    for impl in list(impls)[1:]:  # the baselines, in header order
        row += [times[impl] * 1e3, times[impl] / times["strata"]]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print_header("CPU model forwards, f32")
    torch = load_torch()

    warm_up_jit()

    rows = [bench(*model, args.repeat, torch) for model in models()]
    headers = ["model", "compile s", "kernels (unfused)", "strata ms", "unfused ms",
               "t(unfused) / t(strata)", "numpy ms", "t(numpy) / t(strata)"]
    if torch is not None:
        headers += ["torch ms", "t(torch) / t(strata)"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()

"""Training on the CPU, f32: forward + backward (every parameter's gradient) and a whole
SGD training step, Strata vs PyTorch eager doing the same math.

Models: the transformer block 4x128x256 (8 heads, ff 1024; the math of
examples/transformer_block.py) under a mean-squared-error loss, and the 3-layer MLP
32x512 of examples/mlp.mlir under a cross-entropy loss over its 10 classes.

- "fwd+bwd": `strata.value_and_grad` (the `autodiff` pass, compiled) against
  `loss.backward()` with `requires_grad` on the parameters only. Strata's @loss_grad
  also returns the gradients of the float inputs (it has no argnums pruning), so it does
  a little more work than torch. Every parameter's gradient is checked against torch's.
- "train step": `strata.Trainer` with SGD (momentum 0.9): forward, backward and the
  update in one compiled program, copied back into the parameter arrays; against
  torch's zero_grad + forward + backward + `torch.optim.SGD.step()`. The parameters after
  one step from the same start are checked against torch's.

"compile s" is the wall time of building and compiling the program (autodiff included),
measured after one throwaway compile so the JIT's one-time set-up is not charged to it.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from common import load_torch, print_header, print_table, timeit, warm_up_jit
from cpu_models import torch_block

import strata
from strata import ops

LR, MOMENTUM = 1e-2, 0.9


# --- the models, as Strata builder functions on a Graph and as torch functions ---------

def block_params(batch=4, seq=128, d_model=256, heads=8, d_ff=1024):
    """(inputs, params): name -> shape, in argument order."""
    inputs = {"x": (batch, seq, d_model), "y": (batch, seq, d_model)}
    params = {
        "ln1_gamma": (d_model,), "ln1_beta": (d_model,),
        "w_q": (d_model, d_model), "w_k": (d_model, d_model), "w_v": (d_model, d_model), "w_o": (d_model, d_model),
        "ln2_gamma": (d_model,), "ln2_beta": (d_model,),
        "w_1": (d_model, d_ff), "b_1": (d_ff,), "w_2": (d_ff, d_model), "b_2": (d_model,),
    }  # fmt: skip
    return inputs, params, heads


def strata_block_loss(g: strata.Graph, inputs, params, heads) -> strata.Tensor:
    """examples/transformer_block.py's block, then mean((block(x) - y)^2)."""
    x, y = (g.input(n, s) for n, s in inputs.items())
    p = {n: g.param(n, s) for n, s in params.items()}
    batch, seq, d_model = inputs["x"]
    head = d_model // heads

    def split_heads(t):
        return t.reshape(batch, seq, heads, head).transpose(0, 2, 1, 3)

    h = ops.layernorm(x, p["ln1_gamma"], p["ln1_beta"])
    q, k, v = (split_heads(h @ p[w]) for w in ("w_q", "w_k", "w_v"))
    scores = ops.matmul(q, k, transpose_b=True, alpha=1 / math.sqrt(head))
    future = np.triu(np.ones((seq, seq), dtype=bool), k=1)
    masked = ops.select(g.constant(future, "i1"), g.constant(-1e9), scores)
    context = ops.softmax(masked) @ v
    x = x + context.transpose(0, 2, 1, 3).reshape(batch, seq, d_model) @ p["w_o"]
    h = ops.layernorm(x, p["ln2_gamma"], p["ln2_beta"])
    out = x + (ops.gelu(h @ p["w_1"] + p["b_1"]) @ p["w_2"] + p["b_2"])
    d = out - y
    return ops.reduce_mean(d * d, axes=(0, 1, 2))


def torch_block_loss(torch, heads, x, y, *params):
    """cpu_models.py's torch block (the same math as examples/transformer_block.py), then
    mean((block(x) - y)^2)."""
    out = torch_block(torch, heads, x, *params)
    return ((out - y) ** 2).mean()


def mlp_params():
    inputs = {"x": (32, 512), "labels": (32,)}
    params = {"w1": (512, 512), "b1": (512,), "w2": (512, 256), "b2": (256,), "w3": (10, 256), "b3": (10,)}
    return inputs, params, None


def strata_mlp_loss(g: strata.Graph, inputs, params, _) -> strata.Tensor:
    """examples/mlp.mlir, then cross-entropy against integer labels."""
    x, labels = g.input("x", inputs["x"]), g.input("labels", inputs["labels"], "i64")
    p = {n: g.param(n, s) for n, s in params.items()}
    h = ops.relu(ops.matmul(x, p["w1"], transpose_b=True) + p["b1"])
    h = ops.gelu(h @ p["w2"] + p["b2"], approximate="tanh")
    return ops.cross_entropy(ops.matmul(h, p["w3"], transpose_b=True) + p["b3"], labels)


def torch_mlp_loss(torch, _, x, labels, w1, b1, w2, b2, w3, b3):
    F = torch.nn.functional
    h = torch.relu(F.linear(x, w1, b1))
    h = F.gelu(h @ w2 + b2, approximate="tanh")
    return F.cross_entropy(F.linear(h, w3, b3), labels)


MODELS = {
    "block": ("transformer block 4x128x256, 8 heads, ff 1024", block_params, strata_block_loss, torch_block_loss),
    "mlp": ("MLP 32x512 (mlp.mlir), cross-entropy", mlp_params, strata_mlp_loss, torch_mlp_loss),
}


def make_data(inputs, params, rng):
    data = {}
    for name, shape in inputs.items():
        data[name] = (rng.integers(0, 10, shape).astype(np.int64) if name == "labels"
                      else rng.standard_normal(shape, dtype=np.float32))  # fmt: skip
    init = {}
    for name, shape in params.items():
        if "gamma" in name:
            init[name] = np.ones(shape, np.float32) + 0.1 * rng.standard_normal(shape, dtype=np.float32)
        else:
            fan_in = shape[-1] if len(shape) == 1 else shape[0]
            init[name] = (rng.standard_normal(shape, dtype=np.float32) / np.sqrt(fan_in)).astype(np.float32)
    return data, init


def agree(name: str, got: np.ndarray, want: np.ndarray, rtol: float) -> float:
    """Abort unless |got - want| <= rtol * max|want| elementwise (gradients sum many
    terms in different orders, so a tolerance relative to the tensor's scale); the
    relative error found."""
    error = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    if got.shape != want.shape or error > rtol:
        sys.exit(f"ABORT: {name}: differs from torch (shapes {got.shape} vs {want.shape}, "
                 f"max error {error:.2e} of the largest magnitude, tolerance {rtol})")
    return error


def bench(key: str, repeat: int, torch, rtol: float) -> list[list[object]]:
    title, shapes, strata_loss, torch_loss = MODELS[key]
    inputs, params, extra = shapes()
    data, init = make_data(inputs, params, np.random.default_rng(0))

    def build_loss(g):
        return strata_loss(g, inputs, params, extra)

    # fwd+bwd: value_and_grad over the loss module, one gradient per parameter.
    graph = strata.Graph("loss")
    graph.output(build_loss(graph))
    module = graph.build()
    names = [*inputs, *params]
    argnums = [names.index(n) for n in params]
    start = time.perf_counter()
    value_and_grad = strata.value_and_grad(module, argnums=argnums)
    arguments = [*data.values(), *init.values()]
    loss, grads = value_and_grad(*arguments)  # compiles on the first call
    grad_compile = time.perf_counter() - start

    # The training step: SGD with momentum, one compiled program.
    start = time.perf_counter()
    trainer = strata.Trainer(build_loss, strata.SGD(lr=LR, momentum=MOMENTUM), init)
    step_compile = time.perf_counter() - start

    row_grad = [title, "fwd+bwd", grad_compile]
    row_step = ["", "train step (SGD)", step_compile]
    impls_grad = {"strata": lambda: value_and_grad(*arguments)}
    impls_step = {"strata": lambda: trainer.step(**data)}
    errors = ["", ""]
    if torch is not None:
        t_data = [torch.from_numpy(a) for a in data.values()]
        t_params = [torch.tensor(a, requires_grad=True) for a in init.values()]

        def torch_grad():
            for p in t_params:
                p.grad = None
            value = torch_loss(torch, extra, *t_data, *t_params)
            value.backward()
            return value

        optimizer = torch.optim.SGD(t_params, lr=LR, momentum=MOMENTUM)

        def torch_step():
            optimizer.zero_grad(set_to_none=True)
            value = torch_loss(torch, extra, *t_data, *t_params)
            value.backward()
            optimizer.step()
            return value

        # Check: the loss, every gradient, then every parameter after one SGD step.
        want = float(torch_grad().detach())
        agree(f"{title} loss", np.array(float(loss)), np.array(want), rtol)
        worst = max(agree(f"{title} d{n}", g, p.grad.numpy(), rtol) for n, g, p in zip(params, grads, t_params))
        errors[0] = f"{worst:.1e}"
        first = trainer.step(**data)
        agree(f"{title} train-step loss", np.array(first), np.array(float(torch_step().detach())), rtol)
        worst = max(agree(f"{title} {n} after a step", trainer.params[n], p.detach().numpy(), rtol)
                    for n, p in zip(params, t_params))  # fmt: skip
        errors[1] = f"{worst:.1e}"
        impls_grad["torch"] = torch_grad
        impls_step["torch"] = torch_step

    for row, impls, error in ((row_grad, impls_grad, errors[0]), (row_step, impls_step, errors[1])):
        times = {name: timeit(fn, repeat=repeat, warmup=1) for name, fn in impls.items()}
        row.append(times["strata"] * 1e3)
        if "torch" in times:
            row += [times["torch"] * 1e3, times["torch"] / times["strata"], error]
    return [row_grad, row_step]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--rtol", type=float, default=2e-3,
                        help="gradient tolerance, relative to each tensor's largest magnitude")
    args = parser.parse_args()
    print_header("CPU training, f32: forward + backward and an SGD step")
    torch = load_torch()

    warm_up_jit()

    rows = [row for key in args.models for row in bench(key, args.repeat, torch, args.rtol)]
    headers = ["model", "what", "compile s", "strata ms"]
    if torch is not None:
        headers += ["torch ms", "t(torch) / t(strata)", "max rel error vs torch"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()

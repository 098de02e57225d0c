"""Steady-state training step time on the CPU, f32: strata.lazy against strata.Trainer
and PyTorch eager doing the same math.

    python benchmarks/lazy_step.py [--models mlp transformer] [--repeat 10] [--steps 20]

Models: the two of examples/lazy_train.py, imported from it — the 16-32-4 MLP on a
batch of 64 (without its dropout: each implementation draws different masks) and the
tiny causal transformer language model (2 blocks, width 32, 2 heads, 16 sequences of
16 tokens). Every implementation trains with SGD (momentum 0.9) on one fixed batch and
reads the loss on the host every step:

- "lazy.compile": `strata.lazy.compile` stages `opt.zero_grad(); loss = model(x, y);
  loss.backward(); opt.step()` once; a step is one call, `loss.item()` and
  `lt.mark_step()`.
- "lazy eager": the same step function without staging: every step records the ops
  again, and the compile cache finds the programs compiled before.
- "Trainer": `strata.Trainer` over a builder-API loss with the same math (the
  examples/train_mlp.py style): one compiled program per step, arrays copied back.
- "torch": PyTorch eager, `torch.optim.SGD`.

Before timing, one step from the same parameters is checked: every implementation's
loss and updated parameters must agree with torch's. "first step s" is that step's wall
time, staging and compiling included (less where strata's on-disk compile cache already
holds the program; STRATA_CACHE=0 measures a cold compile). "ms/step" is the median
over --repeat samples of the mean of --steps consecutive steps, the implementations
sampled in turn (each sample after a warm-up of its own), so that the machine's speed
changing during the run reaches all of them alike; "launches/step" counts the compiled
programs strata.lazy runs per timed step; the last column is t / t(lazy.compile): above
1, the staged lazy step is faster.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from common import WARMUP_SECONDS, load_torch, print_header, print_table, warm_up_jit

import strata
import strata.lazy as lt
from strata import ops

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from lazy_train import (  # noqa: E402 - the examples directory is not a package
    BATCH, CLASSES, CONTEXT, FEATURES, HEADS, HIDDEN, LAYERS, MLP, SEQUENCES, VOCAB, WIDTH, TinyLM, clusters,
    counting_sequences, lm_init, mlp_init,
)  # fmt: skip

MOMENTUM = 0.9
LEARNING_RATES = {"mlp": 0.03, "transformer": 0.1}
HEAD = WIDTH // HEADS


# --- the models as builder-API losses for strata.Trainer ------------------------------

def trainer_mlp_loss(g: strata.Graph) -> strata.Tensor:
    x, y = g.input("x", (BATCH, FEATURES)), g.input("y", (BATCH,), "i64")
    w = {name: g.param(name, shape) for name, shape in shapes(mlp_init).items()}
    hidden = ops.relu(ops.matmul(x, w["w1"], transpose_b=True) + w["b1"])
    return ops.cross_entropy(ops.matmul(hidden, w["w2"], transpose_b=True) + w["b2"], y)


def trainer_lm_loss(g: strata.Graph) -> strata.Tensor:
    tokens, targets = (g.input(name, (SEQUENCES, CONTEXT), "i64") for name in ("x", "y"))
    w = {name: g.param(name, shape) for name, shape in shapes(lm_init).items()}

    def linear(h, weight, bias=None):
        out = ops.matmul(h, w[weight], transpose_b=True)
        return out if bias is None else out + w[bias]

    def split_heads(h):
        return h.reshape(SEQUENCES, CONTEXT, HEADS, HEAD).transpose(0, 2, 1, 3)

    h = ops.embedding(w["embed"], tokens) + w["position"]
    for i in range(LAYERS):
        normed = ops.layernorm(h, w[f"block{i}_ln1_w"], w[f"block{i}_ln1_b"])
        q, k, v = (split_heads(linear(normed, f"block{i}_{name}")) for name in "qkv")
        heads = ops.attention(q, k, v, scale=HEAD**-0.5, causal=True)
        h = h + linear(heads.transpose(0, 2, 1, 3).reshape(SEQUENCES, CONTEXT, WIDTH), f"block{i}_o")
        normed = ops.layernorm(h, w[f"block{i}_ln2_w"], w[f"block{i}_ln2_b"])
        h = h + linear(ops.gelu(linear(normed, f"block{i}_fc", f"block{i}_fc_b")), f"block{i}_out", f"block{i}_out_b")
    logits = linear(ops.layernorm(h, w["final_ln_w"], w["final_ln_b"]), "head")
    return ops.cross_entropy(logits.reshape(SEQUENCES * CONTEXT, VOCAB), targets.reshape(SEQUENCES * CONTEXT))


def shapes(init) -> dict[str, tuple[int, ...]]:
    """Parameter name -> shape, in the order the lazy model's init makes them."""
    return {name: value.shape for name, value in init(np.random.default_rng(0)).items()}


# --- the models in PyTorch --------------------------------------------------------------

def torch_mlp_loss(torch, w, x, y):
    F = torch.nn.functional
    return F.cross_entropy(F.linear(torch.relu(F.linear(x, w["w1"], w["b1"])), w["w2"], w["b2"]), y)


def torch_lm_loss(torch, w, tokens, targets):
    F = torch.nn.functional
    h = F.embedding(tokens, w["embed"]) + w["position"]
    for i in range(LAYERS):
        normed = F.layer_norm(h, (WIDTH,), w[f"block{i}_ln1_w"], w[f"block{i}_ln1_b"])
        q, k, v = (F.linear(normed, w[f"block{i}_{n}"]).view(SEQUENCES, CONTEXT, HEADS, HEAD).transpose(1, 2)
                   for n in "qkv")
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = h + F.linear(heads.transpose(1, 2).reshape(SEQUENCES, CONTEXT, WIDTH), w[f"block{i}_o"])
        normed = F.layer_norm(h, (WIDTH,), w[f"block{i}_ln2_w"], w[f"block{i}_ln2_b"])
        hidden = F.gelu(F.linear(normed, w[f"block{i}_fc"], w[f"block{i}_fc_b"]))
        h = h + F.linear(hidden, w[f"block{i}_out"], w[f"block{i}_out_b"])
    logits = F.linear(F.layer_norm(h, (WIDTH,), w["final_ln_w"], w["final_ln_b"]), w["head"])
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


MODELS = {
    "mlp": (f"MLP {FEATURES}-{HIDDEN}-{CLASSES}, batch {BATCH}", lambda init: MLP(init, dropout=0.0), mlp_init,
            clusters, trainer_mlp_loss, torch_mlp_loss),
    "transformer": (f"transformer LM {LAYERS}x{WIDTH}, {SEQUENCES}x{CONTEXT} tokens", TinyLM, lm_init,
                    counting_sequences, trainer_lm_loss, torch_lm_loss),
}  # fmt: skip
"""key -> (title, lazy model from init arrays, init, batch, Trainer loss, torch loss)."""


def lazy_step(model, lr: float, staged: bool):
    """The PyTorch loop's step on a lazy model; returns step(x, y) -> loss (a float)."""
    optimizer = lt.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM)

    def train_step(x, y):
        optimizer.zero_grad()
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        return loss

    step = lt.compile(train_step) if staged else train_step

    def run(x, y) -> float:
        loss = step(x, y).item()
        lt.mark_step()
        return loss

    return run


def agree(what: str, got: np.ndarray, want: np.ndarray, rtol: float) -> None:
    """Abort unless |got - want| <= rtol * max|want| (sums run in different orders)."""
    error = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    if got.shape != want.shape or error > rtol:
        sys.exit(f"ABORT: {what} differs from torch (max error {error:.2e} of the largest magnitude, tolerance {rtol})")


def bench(key: str, torch, repeat: int, steps: int, rtol: float) -> list[list[object]]:
    title, lazy_model, init_of, batch_of, trainer_loss, torch_loss = MODELS[key]
    lr = LEARNING_RATES[key]
    init = init_of(np.random.default_rng(0))
    x, y = batch_of(np.random.default_rng(1))

    def first_step(make):
        """(step function, loss of the first step, parameters after it, its wall time)."""
        start = time.perf_counter()
        step, parameters = make()
        loss = step()
        return step, loss, parameters(), time.perf_counter() - start

    def make_lazy(staged):
        def make():
            model = lazy_model(init)
            run, inputs = lazy_step(model, lr, staged), (lt.tensor(x), lt.tensor(y))
            return (lambda: run(*inputs)), (lambda: {n: t.numpy() for n, t in model.weights.items()})

        return make

    def make_trainer():
        trainer = strata.Trainer(trainer_loss, strata.SGD(lr=lr, momentum=MOMENTUM), init)
        return (lambda: trainer.step(x=x, y=y)), (lambda: dict(trainer.params))

    def make_torch():
        weights = {n: torch.tensor(a, requires_grad=True) for n, a in init.items()}
        optimizer = torch.optim.SGD(weights.values(), lr=lr, momentum=MOMENTUM)
        inputs = (torch.from_numpy(x), torch.from_numpy(y))

        def step():
            optimizer.zero_grad(set_to_none=True)
            loss = torch_loss(torch, weights, *inputs)
            loss.backward()
            optimizer.step()
            return loss.item()

        return step, (lambda: {n: t.detach().numpy() for n, t in weights.items()})

    makers = {"lazy.compile": make_lazy(True), "lazy eager": make_lazy(False), "Trainer": make_trainer}
    if torch is not None:
        makers["torch"] = make_torch
    firsts = {name: first_step(make) for name, make in makers.items()}
    if torch is not None:
        _, want_loss, want_params, _ = firsts["torch"]
        for name, (_, loss, params, _) in firsts.items():
            agree(f"{title}: the first loss of {name}", np.array(loss), np.array(want_loss), rtol)
            for n, value in params.items():
                agree(f"{title}: {n} after one step of {name}", value, want_params[n], rtol)

    # Round-robin samples: a change in the machine's speed during the run (two cores shared
    # with other work) reaches every implementation alike instead of skewing one ratio.
    samples: dict[str, list[float]] = {name: [] for name in firsts}
    launches = dict.fromkeys(firsts, 0)
    for _ in range(repeat):
        for name, (step, _, _, _) in firsts.items():
            warm_up(step)
            lt.reset_stats()
            start = time.perf_counter()
            for _ in range(steps):
                step()
            samples[name].append((time.perf_counter() - start) / steps)
            launches[name] += lt.stats()["launches"]
    rows = []
    times = {name: statistics.median(s) for name, s in samples.items()}
    for name, (_, _, _, first) in firsts.items():
        per_step = f"{launches[name] / (repeat * steps):.2f}" if name.startswith("lazy") else ""
        rows.append([title if not rows else "", name, first, times[name] * 1e3, per_step])
    for row in rows:
        row.append(times[row[1]] / times["lazy.compile"])
    return rows


def warm_up(step) -> None:
    """Steps for WARMUP_SECONDS: the previous implementation's thread pool stops spinning."""
    start = time.perf_counter()
    while time.perf_counter() - start < WARMUP_SECONDS:
        step()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--repeat", type=int, default=10, help="timed samples per implementation (the median is reported)")
    parser.add_argument("--steps", type=int, default=20, help="training steps per timed sample")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="agreement with torch after one step, relative to each tensor's largest magnitude")
    args = parser.parse_args()
    print_header("CPU training step, f32: strata.lazy vs strata.Trainer vs PyTorch eager (SGD, momentum 0.9)")
    torch = load_torch()
    warm_up_jit()
    rows = [row for key in args.models for row in bench(key, torch, args.repeat, args.steps, args.rtol)]
    print_table(["model", "implementation", "first step s", "ms/step", "launches/step", "t / t(lazy.compile)"], rows)
    print("target: t(Trainer) / t(lazy.compile) >= 1/1.1 (lazy within 1.1x of Trainer); t(torch) / t(lazy.compile) > 1")


if __name__ == "__main__":
    main()

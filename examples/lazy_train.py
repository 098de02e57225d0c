"""Train a small MLP and a tiny causal transformer language model with strata.lazy,
each written as a PyTorch training loop.

    python examples/lazy_train.py [--model mlp|transformer|both] [--steps 100]
        [--optimizer adam|sgd] [--eager] [--device cpu|cuda]

- mlp: 4 Gaussian clusters in 16 dimensions, a 16-32-4 MLP with dropout, cross-entropy.
- transformer: next-token prediction on counting sequences (a random start token and a
  random stride of 1, 2 or 3, modulo the vocabulary): an embedding, two pre-norm blocks
  of causal self-attention (`F.scaled_dot_product_attention`) and a GELU MLP, a final
  layer norm and projection. Only the first target of each sequence is unpredictable
  (the stride is not known yet), so the loss falls from log(16) ≈ 2.8 towards
  log(3)/16 ≈ 0.07.

Each step (`opt.zero_grad(); loss = model(x, y); loss.backward(); opt.step()`) is staged
once by `strata.lazy.compile` and replayed as one compiled program; `--eager` runs the
same loop without staging (every step records the ops again; the compile cache still
makes it one compile per distinct graph). The loss is printed every 10 steps; the engine
statistics at the end of each model show the compiles and the cache hits after them.
`--device cuda` runs on the GPU where `strata.runtime.cuda` finds one (on the CPU
otherwise, saying so).

benchmarks/lazy_step.py imports the models from here and times their steps against
`strata.Trainer` and PyTorch.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Iterator

import numpy as np

import strata.lazy as lt
from strata.lazy.nn import functional as F
from strata.runtime.cuda import cuda_available

FEATURES, HIDDEN, CLASSES, BATCH = 16, 32, 4, 64
"""The MLP and its data."""
VOCAB, CONTEXT, WIDTH, HEADS, LAYERS, SEQUENCES = 16, 16, 32, 2, 2, 16
"""The language model (WIDTH split over HEADS heads; MLP width 4 * WIDTH) and its batch."""
LEARNING_RATES = {("mlp", "adam"): 3e-3, ("mlp", "sgd"): 0.03, ("transformer", "adam"): 1e-2, ("transformer", "sgd"): 0.1}
"""(model, optimizer) -> the learning rate the example trains with."""


class Model:
    """Named parameters (leaf tensors made from initial arrays) and a loss: `model(x, y)`."""

    def __init__(self, init: dict[str, np.ndarray], device: str = "cpu"):
        self.weights = {name: lt.tensor(value, device=device, requires_grad=True, name=name) for name, value in init.items()}

    def parameters(self) -> list[lt.Tensor]:
        return list(self.weights.values())


class MLP(Model):
    """linear-relu-dropout-linear, cross-entropy against class labels."""

    def __init__(self, init: dict[str, np.ndarray], device: str = "cpu", dropout: float = 0.1):
        super().__init__(init, device)
        self.dropout = dropout

    def __call__(self, x: lt.Tensor, y: lt.Tensor) -> lt.Tensor:
        w = self.weights
        hidden = F.dropout(F.relu(F.linear(x, w["w1"], w["b1"])), p=self.dropout)
        return F.cross_entropy(F.linear(hidden, w["w2"], w["b2"]), y)


def mlp_init(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w1": (rng.standard_normal((HIDDEN, FEATURES)) * 0.25).astype(np.float32),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": (rng.standard_normal((CLASSES, HIDDEN)) * 0.25).astype(np.float32),
        "b2": np.zeros(CLASSES, np.float32),
    }


class TinyLM(Model):
    """A causal transformer language model; `model(tokens, targets)` is the mean
    next-token cross-entropy over every position."""

    def __call__(self, tokens: lt.Tensor, targets: lt.Tensor) -> lt.Tensor:
        w = self.weights
        h = F.embedding(tokens, w["embed"]) + w["position"]
        for i in range(LAYERS):
            h = h + self.attention(F.layer_norm(h, WIDTH, w[f"block{i}_ln1_w"], w[f"block{i}_ln1_b"]), i)
            normed = F.layer_norm(h, WIDTH, w[f"block{i}_ln2_w"], w[f"block{i}_ln2_b"])
            hidden = F.gelu(F.linear(normed, w[f"block{i}_fc"], w[f"block{i}_fc_b"]))
            h = h + F.linear(hidden, w[f"block{i}_out"], w[f"block{i}_out_b"])
        logits = F.linear(F.layer_norm(h, WIDTH, w["final_ln_w"], w["final_ln_b"]), w["head"])
        return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))

    def attention(self, h: lt.Tensor, i: int) -> lt.Tensor:
        batch, length, _ = h.shape
        q, k, v = (
            F.linear(h, self.weights[f"block{i}_{name}"]).reshape(batch, length, HEADS, WIDTH // HEADS).transpose(1, 2)
            for name in "qkv"
        )
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.linear(heads.transpose(1, 2).reshape(batch, length, WIDTH), self.weights[f"block{i}_o"])


def lm_init(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def normal(*shape: int, scale: float) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    ones, zeros = np.ones(WIDTH, np.float32), np.zeros(WIDTH, np.float32)
    init = {"embed": normal(VOCAB, WIDTH, scale=0.3), "position": normal(CONTEXT, WIDTH, scale=0.1)}
    for i in range(LAYERS):
        init |= {f"block{i}_ln1_w": ones, f"block{i}_ln1_b": zeros, f"block{i}_ln2_w": ones, f"block{i}_ln2_b": zeros}
        init |= {f"block{i}_{name}": normal(WIDTH, WIDTH, scale=WIDTH**-0.5) for name in "qkvo"}
        init |= {
            f"block{i}_fc": normal(4 * WIDTH, WIDTH, scale=WIDTH**-0.5), f"block{i}_fc_b": np.zeros(4 * WIDTH, np.float32),
            f"block{i}_out": normal(WIDTH, 4 * WIDTH, scale=(4 * WIDTH) ** -0.5), f"block{i}_out_b": zeros,
        }  # fmt: skip
    return init | {"final_ln_w": ones, "final_ln_b": zeros, "head": normal(VOCAB, WIDTH, scale=WIDTH**-0.5)}


def clusters(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One batch of (points, labels) from 4 Gaussian clusters."""
    centers = rng.standard_normal((CLASSES, FEATURES)) * 0.6
    labels = rng.integers(0, CLASSES, BATCH)
    return (centers[labels] + rng.standard_normal((BATCH, FEATURES))).astype(np.float32), labels


def counting_sequences(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, next tokens) of SEQUENCES sequences start + stride * t (mod VOCAB)."""
    start, stride = rng.integers(0, VOCAB, (SEQUENCES, 1)), rng.integers(1, 4, (SEQUENCES, 1))
    sequences = (start + stride * np.arange(CONTEXT + 1)) % VOCAB
    return sequences[:, :-1], sequences[:, 1:]


def train(model: Model, batches: Iterator[tuple[lt.Tensor, lt.Tensor]], optimizer: lt.optim.Optimizer,
          steps: int, eager: bool) -> list[float]:
    """The PyTorch loop; returns the losses printed (every 10 steps and the last)."""

    def train_step(x: lt.Tensor, y: lt.Tensor) -> lt.Tensor:
        optimizer.zero_grad()
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        return loss

    step = train_step if eager else lt.compile(train_step)
    losses = []
    for i, (x, y) in zip(range(steps), batches):
        loss = step(x, y)
        if i % 10 == 0 or i == steps - 1:
            losses.append(loss.item())
            print(f"step {i:4d}  loss {losses[-1]:.4f}")
        lt.mark_step()  # commits the update even on steps whose loss nobody reads
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("mlp", "transformer", "both"), default="both")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    parser.add_argument("--eager", action="store_true", help="do not stage the step with strata.lazy.compile")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args()
    device = args.device
    if device == "cuda" and not cuda_available():
        print("--device cuda: strata.runtime.cuda finds no GPU here; running on cpu")
        device = "cpu"

    rng = np.random.default_rng(0)
    lt.manual_seed(0)
    for name in ("mlp", "transformer") if args.model == "both" else (args.model,):
        if name == "mlp":
            model: Model = MLP(mlp_init(rng), device)
            points, labels = clusters(rng)
            batches = itertools.repeat((lt.tensor(points, device=device), lt.tensor(labels, device=device)))
        else:
            model = TinyLM(lm_init(rng), device)
            batches = (
                (lt.tensor(tokens, device=device), lt.tensor(targets, device=device))
                for tokens, targets in (counting_sequences(rng) for _ in itertools.count())
            )
        lr = LEARNING_RATES[name, args.optimizer]
        if args.optimizer == "adam":
            optimizer: lt.optim.Optimizer = lt.optim.Adam(model.parameters(), lr=lr)
        else:
            optimizer = lt.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        print(f"== {name} on {device} ({'eager' if args.eager else 'strata.lazy.compile'}, {args.optimizer} lr {lr})")
        lt.reset_stats()
        start = time.perf_counter()
        losses = train(model, batches, optimizer, args.steps, args.eager)
        print(f"{name}: loss {losses[0]:.4f} -> {losses[-1]:.4f} in {time.perf_counter() - start:.1f} s; engine: {lt.stats()}")


if __name__ == "__main__":
    main()

"""Train a 2-layer MLP classifier on synthetic data with a compiled training step.

    python examples/train_mlp.py [--optimizer adam|sgd] [--steps 300]

The data: 4 Gaussian clusters in 16 dimensions. Each step (forward, cross-entropy,
backward through `autodiff`, and the optimizer update) is one compiled CPU program.
"""

from __future__ import annotations

import argparse

import numpy as np

import strata
from strata import ops

FEATURES, HIDDEN, CLASSES, BATCH = 16, 32, 4, 64


def loss(g: strata.Graph) -> strata.Tensor:
    x, y = g.input("x", (BATCH, FEATURES)), g.input("y", (BATCH,), "i64")
    w1, b1 = g.param("w1", (HIDDEN, FEATURES)), g.param("b1", (HIDDEN,))
    w2, b2 = g.param("w2", (CLASSES, HIDDEN)), g.param("b2", (CLASSES,))
    hidden = ops.relu(ops.matmul(x, w1, transpose_b=True) + b1)
    return ops.cross_entropy(ops.matmul(hidden, w2, transpose_b=True) + b2, y)


def initial_parameters(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w1": rng.standard_normal((HIDDEN, FEATURES)) / np.sqrt(FEATURES),
        "b1": np.zeros(HIDDEN),
        "w2": rng.standard_normal((CLASSES, HIDDEN)) / np.sqrt(HIDDEN),
        "b2": np.zeros(CLASSES),
    }


def batches(rng: np.random.Generator):
    centers = rng.standard_normal((CLASSES, FEATURES)) * 0.4
    while True:
        y = rng.integers(0, CLASSES, BATCH)
        x = (centers[y] + rng.standard_normal((BATCH, FEATURES))).astype(np.float32)
        yield x, y.astype(np.int64)


def train(optimizer_name: str = "adam", steps: int = 300, seed: int = 0, report_every: int = 50) -> list[float]:
    rng = np.random.default_rng(seed)
    optimizer = strata.Adam(lr=1e-2) if optimizer_name == "adam" else strata.SGD(lr=0.1, momentum=0.9)
    trainer = strata.Trainer(loss, optimizer, initial_parameters(rng))
    losses = []
    for step, (x, y) in zip(range(1, steps + 1), batches(rng)):
        losses.append(trainer.step(x=x, y=y))
        if report_every and (step == 1 or step % report_every == 0):
            print(f"step {step:4d}  loss {losses[-1]:.4f}")
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    train(args.optimizer, args.steps)

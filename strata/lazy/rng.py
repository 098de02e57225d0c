"""Keyed random numbers.

Every random op draws with a key `(seed, draw, op)`: `seed` from `manual_seed`, `draw` a
counter the engine advances once per random execution (each eager `randn`/`dropout`
call, each call of a compiled step), `op` the op's position among the random ops of a
compiled step (0 outside one). The samples are a pure function of the key, never of a
generator state threaded from op to op, so:

- the same seed replays the same sequence of draws (reproducible runs);
- every step draws new masks (the draw counter moved);
- a recomputation (checkpointing, a repeated force) reuses the draw it recorded and
  gets the very same values.

Values are generated on the host when a force first needs them and enter the compiled
graph as inputs, so the compiled program is the same for every step (one compile, then
cache hits). Dropout masks use the counter-based mixer of graph.dropout
(docs/dropout-rng.md) on a 64-bit seed derived from the key: the mask of a draw is the
mask graph.dropout would compute with `seed = derived_seed(key)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strata.runtime.reference.kernels import dropout_keep_mask
from strata.support.dtypes import numpy_dtype, element_type_for


@dataclass(frozen=True)
class RandomKey:
    seed: int
    draw: int
    op: int
    kind: str
    """"normal" (standard normal samples) or "dropout" (a scaled keep mask)."""
    p: float = 0.0


class Generator:
    """The engine's RNG basis: the seed and the draw counter."""

    def __init__(self, seed: int = 0):
        self.seed, self.draws = seed, 0

    def manual_seed(self, seed: int) -> None:
        self.seed, self.draws = int(seed), 0

    def next_draw(self) -> int:
        self.draws += 1
        return self.draws

    def key(self, kind: str, p: float = 0.0, op: int = 0, draw: int | None = None) -> RandomKey:
        return RandomKey(self.seed, self.next_draw() if draw is None else draw, op, kind, p)


def derived_seed(key: RandomKey) -> int:
    """A 64-bit seed (as a signed int, like graph.dropout's) mixing the whole key."""
    entropy = [key.seed & (2**63 - 1), key.draw, key.op]
    state = np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0]
    return int(state.view(np.int64))


def generate(key: RandomKey, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """The samples of `key` with this shape and element type."""
    target = numpy_dtype(element_type_for(dtype))
    if key.kind == "normal":
        rng = np.random.default_rng([key.seed & (2**63 - 1), key.draw, key.op])
        return rng.standard_normal(shape).astype(target)
    keep = dropout_keep_mask(derived_seed(key), shape, key.p)
    scale = np.asarray(1.0 / (1.0 - key.p)).astype(target)
    return np.where(keep, scale, np.zeros((), target)).astype(target)

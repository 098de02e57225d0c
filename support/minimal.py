"""Minimal representatives of variable-shape tensors (the vsla dialect's equivalence under
trailing zeros), on host arrays: numpy only, usable from every layer."""

from __future__ import annotations

import numpy as np


def minimal_shape(x: np.ndarray) -> tuple[int, ...]:
    """The shape of x's minimal representative: every axis cut after its last nonzero
    hyperplane (an all-zero tensor: zeros)."""
    x = np.asarray(x)
    shape = []
    for axis in range(x.ndim):
        others = tuple(a for a in range(x.ndim) if a != axis)
        nonzero = np.flatnonzero(np.any(x != 0, axis=others)) if x.size else np.zeros(0, int)
        shape.append(int(nonzero[-1]) + 1 if nonzero.size else 0)
    return tuple(shape)


def shrink(x: np.ndarray) -> np.ndarray:
    """x's minimal representative (a copy): trailing zero hyperplanes removed on every axis."""
    x = np.asarray(x)
    return x[tuple(slice(0, d) for d in minimal_shape(x))].copy()

"""Views: how a view tensor sees its base, and how a write through it is functionalized.

A view is its base seen through a chain of steps, each one of the shape ops
`("slice_", starts, limits, steps)`, `("reshape", shape)` or `("transpose", permutation)`
(an integer index is a slice followed by a reshape that drops the axis). Reading a view
applies the chain to the base's current value; writing through one builds a new value for
the *whole base*: the positions the view covers take the written values, all others keep
the old ones (`scatter`). Which base position each view element is comes from running the
same chain over `arange(base size)` in numpy (`index_map`); the scatter is then a gather
(graph.embedding over the written values) and a graph.select on a constant mask.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from strata.frontends import builder as ops
from strata.frontends.builder import Graph, Tensor as Built

ViewStep = tuple
"""("slice_", starts, limits, steps) | ("reshape", shape) | ("transpose", permutation)"""


def apply_numpy(array: np.ndarray, step: ViewStep) -> np.ndarray:
    kind, *args = step
    if kind == "slice_":
        starts, limits, steps = args
        return array[tuple(slice(a, b, c) for a, b, c in zip(starts, limits, steps))]
    if kind == "reshape":
        return array.reshape(args[0])
    return array.transpose(args[0])


def step_params(step: ViewStep) -> tuple[str, dict]:
    """The lazy op and parameters that read `step`."""
    kind, *args = step
    if kind == "slice_":
        return kind, {"starts": args[0], "limits": args[1], "steps": args[2]}
    if kind == "reshape":
        return kind, {"shape": args[0]}
    return kind, {"permutation": args[0]}


def basic_index(shape: tuple[int, ...], index: object, label: str):
    """`x[index]` for ints, slices with positive steps and one Ellipsis: the slice bounds
    per axis and the axes the result keeps (an int drops its axis)."""
    items = list(index) if isinstance(index, tuple) else [index]
    ellipses = [at for at, i in enumerate(items) if i is Ellipsis]  # `is`: a tensor's == is an op
    if len(ellipses) > 1:
        raise IndexError(f"{label}[{index!r}]: at most one Ellipsis")
    if ellipses:
        at = ellipses[0]
        items[at : at + 1] = [slice(None)] * (len(shape) - len(items) + 1)
    if len(items) > len(shape):
        raise IndexError(f"{label}[{index!r}]: {len(items)} indices for {len(shape)} axes")
    items += [slice(None)] * (len(shape) - len(items))
    bounds, kept = [], []
    for axis, (item, size) in enumerate(zip(items, shape)):
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            position = int(item) + size if item < 0 else int(item)
            if not 0 <= position < size:
                raise IndexError(f"{label}[{index!r}]: index {item} is out of range for axis {axis} of size {size}")
            bounds.append((position, position + 1, 1))
        elif isinstance(item, slice):
            start, stop, step = item.indices(size)
            if step < 1:
                raise IndexError(f"{label}[{index!r}]: slice steps must be positive, got {step}")
            bounds.append((start, max(start, stop), step))
            kept.append(axis)
        else:
            raise IndexError(
                f"{label}[{index!r}]: only ints, slices and ... index a lazy tensor "
                f"(use nn.functional.embedding to gather rows by a tensor of ids)"
            )
    starts, limits, steps = (tuple(b) for b in zip(*bounds)) if bounds else ((), (), ())
    return starts, limits, steps, kept


def index_map(base_shape: Sequence[int], steps: Sequence[ViewStep]) -> np.ndarray:
    """For each element of the view, its flat (row-major) position in the base."""
    positions = np.arange(math.prod(base_shape), dtype=np.int64).reshape(base_shape)
    for step in steps:
        positions = apply_numpy(positions, step)
    return positions


def scatter(g: Graph, base: Built, update: Built, steps: Sequence[ViewStep]) -> Built:
    """`base` with the view `steps` selects replaced by `update` (the view's shape)."""
    shape = base.shape
    positions = index_map(shape, steps).ravel()
    count = math.prod(shape)
    if positions.size == 0:
        return base
    if positions.size == count and np.array_equal(positions, np.arange(count)):
        return ops.reshape(update, shape)  # the view covers the base in order
    source = np.zeros(count, dtype=np.int64)
    source[positions] = np.arange(positions.size)
    table = ops.reshape(update, (positions.size, 1))
    gathered = ops.reshape(ops.embedding(table, g.constant(source.reshape(shape), "i64")), shape)
    if positions.size == count:
        return gathered
    covered = np.zeros(count, dtype=np.bool_)
    covered[positions] = True
    return ops.select(g.constant(covered.reshape(shape), "i1"), gathered, base)

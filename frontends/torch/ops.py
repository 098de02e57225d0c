"""The translation table: ATen op (overload packet name) -> a function building graph ops.

Every function is called as `translate(importer, node, *args, **kwargs)` with the node's
arguments already translated: graph `Tensor`s, `Const`s (tensors known at import time),
and plain Python values. It returns the node's value (a Tensor, a Const, a tuple of them
for ops with several results, or None for assertions).

The translations are grouped by concern, each module holding its part of the table
(filled by its `@translates("name", ...)` decorators):

    ops_elementwise  arithmetic, activations, comparisons, logic, casts; the GELU (tanh
                     form) and RMSNorm patterns
    ops_reductions   sums, means, extrema, any/all, statistics, norms
    ops_shape        views, transposes, slices, splits, concatenation, padding;
                     constants (factory ops) and checks of the trace
    ops_nn           matmuls, attention and its written-out pattern, softmax,
                     normalization, dropout, embeddings, gathers, losses
    ops_conv         convolutions and pooling

`TRANSLATIONS` joins the parts (an op translated by two of them is an error);
`ops_common` has what they share.
"""

from __future__ import annotations

from collections.abc import Callable

from strata.frontends.torch import ops_conv, ops_elementwise, ops_nn, ops_reductions, ops_shape


def _joined(*parts: dict[str, Callable]) -> dict[str, Callable]:
    table: dict[str, Callable] = {}
    for part in parts:
        twice = table.keys() & part.keys()
        if twice:
            raise AssertionError(f"ATen ops with two translations: {sorted(twice)}")
        table.update(part)
    return table


TRANSLATIONS: dict[str, Callable] = _joined(
    ops_elementwise.TRANSLATIONS, ops_reductions.TRANSLATIONS, ops_shape.TRANSLATIONS, ops_nn.TRANSLATIONS,
    ops_conv.TRANSLATIONS,
)
"""ATen op (overload packet name) -> its translation."""

SUPPORTED_OPS: tuple[str, ...] = tuple(sorted(TRANSLATIONS))
"""Every ATen op (overload packet) with a translation."""

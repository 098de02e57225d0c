"""Comparing a target's results with the reference interpreter's (strata-run --check)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strata.support.dtypes import LOW_PRECISION

TOLERANCES = {
    np.dtype(np.float64): (1e-9, 1e-7),
    np.dtype(np.float32): (1e-4, 1e-3),
    **{dtype: (1e-2, 1e-2) for dtype in LOW_PRECISION},
}
"""(absolute, relative) per float dtype: |Δ| <= abs + rel·|ref|. Integers must be equal."""


@dataclass
class Comparison:
    index: int
    max_abs: float
    max_rel: float
    ok: bool

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "MISMATCH"
        return (
            f"result{self.index}: max |Δ| = {self.max_abs:.3e}, "
            f"max rel = {self.max_rel:.3e}  {verdict}"
        )


def loosest_float(module) -> np.dtype | None:
    """The least precise float element type of any value in `module` (None: no floats):
    a result is only as exact as the least precise step before it (an f32 softmax cast
    to f64 is not f64-accurate)."""
    from xdsl.dialects.builtin import TensorType

    from strata.support.dtypes import tensor_dtype

    found = {
        tensor_dtype(v.type)
        for op in module.walk()
        for v in (*op.operands, *op.results)
        if isinstance(v.type, TensorType) and tensor_dtype(v.type) in TOLERANCES
    }
    return max(found, key=lambda d: TOLERANCES[d][1], default=None)


def compare(results, references, loosest: np.dtype | None = None) -> list[Comparison]:
    """Each result against its reference, with the tolerances of its own dtype or of
    `loosest` (see `loosest_float`) where those are wider."""
    comparisons = []
    for i, (got, ref) in enumerate(zip(results, references)):
        atol, rtol = TOLERANCES.get(ref.dtype, (0.0, 0.0))
        if loosest is not None and ref.dtype in TOLERANCES:
            atol, rtol = max(atol, TOLERANCES[loosest][0]), max(rtol, TOLERANCES[loosest][1])
        got64 = np.asarray(got).astype(np.float64)
        ref64 = np.asarray(ref).astype(np.float64)
        same_shape = got64.shape == ref64.shape
        if same_shape and got64.size:
            delta = np.abs(got64 - ref64)
            both_nan = np.isnan(got64) & np.isnan(ref64)
            equal = (got64 == ref64) | both_nan
            delta = np.where(equal, 0.0, delta)
            max_abs = float(np.nanmax(np.where(np.isnan(delta), np.inf, delta)))
            rel = delta / np.maximum(np.abs(ref64), np.finfo(np.float64).tiny)
            max_rel = float(np.nanmax(np.where(np.isnan(rel), np.inf, rel)))
            ok = bool(np.all(equal | (delta <= atol + rtol * np.abs(ref64))))
        else:
            max_abs = max_rel = 0.0 if same_shape else float("inf")
            ok = same_shape
        comparisons.append(Comparison(i, max_abs, max_rel, ok))
    return comparisons

"""The random-program generator's state: values with the facts tracked about them.

`generate.generate(seed)` builds one `func.func` through the builder: a DAG of 3-25 ops drawn from
the whole catalogue, over every element type, with NumPy broadcasting, odd and zero
sizes, several results and values used more than once. Two facts tracked per value keep
the comparison with the reference meaningful rather than noisy:

* **bounds** (an interval holding every element): operations are only chosen where their
  inputs are well-conditioned — `log`/`sqrt`/`rsqrt` of values >= 0.25, division by values
  away from zero, `exp` below 8, magnitudes below 10^4 — so a rounding difference upstream
  cannot grow into a different answer;
* **an error bound**: how far a correct target may be from the reference, propagated op by
  op (each op's sensitivity on the operands' intervals, plus its own rounding). Values with
  bound 0 are *exact*: every correct target computes them bit for bit (inputs, constants,
  and what shape ops, select, neg/abs/max/min, integer arithmetic and single correctly
  rounded steps make of exact operands). Only exact values are compared (`compare`) or
  cast to integers, so a boolean never flips on a last-bit difference; exact results must
  equal the reference, the others lie within their bound (`differential`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from strata.frontends.builder import Graph, Tensor
from strata.support.dtypes import numpy_dtype, element_type_for

FLOATS = ("f32", "f64", "f16", "bf16")
INTEGERS = ("i32", "i64")
DTYPE_WEIGHTS = {"f32": 6, "f64": 2, "f16": 2, "bf16": 2, "i32": 1, "i64": 1, "i1": 1}
SIZES = (1, 1, 2, 3, 4, 5, 7, 8, 16, 17, 33)
MAX_ELEMENTS = 4096
BOUND = 1e4
"""Largest magnitude a float value may reach."""
INTEGER_BOUND = 2**20


UNIT_ROUNDOFF = {"f64": 2.0**-53, "f32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8}
OWN_ERROR_ULPS = 16
"""An op's own error in its computing precision (f64 for f64, else f32), in ulps of the
result's bound: generous for transcendental approximations (a few ulp) and reassociated
sums. f16/bf16 results add half an ulp of their own type (one rounding at the end)."""


@dataclass
class Value:
    tensor: Tensor
    lo: float
    hi: float
    inherited: float
    """A bound on the absolute error the operands' errors cause in this value."""
    own: float = 0.0
    """The op's own error relative to the value (its rounding or approximation)."""

    @property
    def error(self) -> float:
        """A bound on |this value on a correct target - the reference's|; 0: computed
        bit for bit alike (exact)."""
        return self.inherited + self.own * self.magnitude

    @property
    def tolerance(self) -> tuple[float, float]:
        """(absolute, relative): this value may differ from the reference's by
        absolute + relative x |reference| (differential.py scales it)."""
        return self.inherited, self.own

    @property
    def shape(self) -> tuple[int, ...]:
        return self.tensor.shape

    @property
    def dtype(self) -> str:
        return self.tensor.dtype

    @property
    def magnitude(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    @property
    def exact(self) -> bool:
        return self.error == 0


@dataclass
class Program:
    """A generated program: its module, inputs (one array per argument), and for each
    result the facts the comparison needs."""

    seed: int
    module: object
    inputs: list[np.ndarray]
    results: list[Value]
    op_names: list[str] = field(default_factory=list)


class Generator:
    def __init__(self, seed: int, max_ops: int = 25, floats: tuple[str, ...] = FLOATS):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.graph = Graph("fuzz")
        self.values: list[Value] = []
        self.inputs: list[np.ndarray] = []
        self.op_names: list[str] = []
        self.max_ops = max_ops
        self.excluded = frozenset(FLOATS) - frozenset(floats)
        self.zero_sizes = self.rng.random() < 0.04

    # -- random choices -------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, items):
        return items[int(self.rng.integers(len(items)))]

    def dtype(self, kinds: tuple[str, ...] | None = None) -> str:
        names = [n for n in DTYPE_WEIGHTS if (kinds is None or n in kinds) and n not in self.excluded]
        weights = np.array([DTYPE_WEIGHTS[n] for n in names], dtype=float)
        return names[int(self.rng.choice(len(names), p=weights / weights.sum()))]

    def shape(self, rank: int | None = None) -> tuple[int, ...]:
        if rank is None:
            rank = int(self.rng.choice([0, 1, 2, 3, 4, 5, 7], p=[0.05, 0.25, 0.35, 0.2, 0.1, 0.03, 0.02]))
        while True:
            dims = tuple(int(self.pick(SIZES)) for _ in range(rank))
            if self.zero_sizes and dims and self.chance(0.5):
                dims = tuple(0 if i == int(self.rng.integers(rank)) else d for i, d in enumerate(dims))
            if math.prod(dims) <= MAX_ELEMENTS:
                return dims

    def broadcast_partner(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A shape that broadcasts with `shape` to `shape`: some sizes 1, leading axes dropped."""
        dims = [1 if self.chance(0.3) else d for d in shape]
        drop = int(self.rng.integers(len(dims) + 1)) if self.chance(0.3) else 0
        return tuple(dims[drop:])

    # -- values ----------------------------------------------------------------------------

    def new_input(self, shape: tuple[int, ...], dtype: str, positive: bool = False, below: int = 8) -> Value:
        name = f"x{len(self.inputs)}"
        role_param = self.chance(0.2)
        t = (self.graph.param if role_param else self.graph.input)(name, shape, dtype)
        if dtype == "i1":
            array, lo, hi = self.rng.random(shape) < 0.5, 0, 1
        elif dtype in INTEGERS:
            array, lo, hi = self.rng.integers(0, below, shape), 0, below - 1
        elif positive:
            array, lo, hi = self.rng.uniform(0.5, 4.0, shape), 0.5, 4.0
        else:
            array, lo, hi = np.clip(self.rng.standard_normal(shape), -4, 4), -4.0, 4.0
        self.inputs.append(np.asarray(array).astype(numpy_dtype(element_type_for(dtype))))
        return self.add(Value(t, lo, hi, 0.0))

    def add(self, value: Value) -> Value:
        self.values.append(value)
        return value

    def existing(self, accept: Callable[[Value], bool]) -> Value | None:
        candidates = [v for v in self.values if accept(v)]
        if not candidates:
            return None
        # Recent values more often: deeper programs.
        weights = np.arange(1, len(candidates) + 1, dtype=float) ** 2
        return candidates[int(self.rng.choice(len(candidates), p=weights / weights.sum()))]

    def operand(self, dtypes: tuple[str, ...], accept: Callable[[Value], bool] = lambda v: True,
                positive: bool = False) -> Value:
        """An existing value of one of `dtypes` that `accept`s, or a new input."""
        dtypes = tuple(d for d in dtypes if d not in self.excluded)
        found = self.existing(lambda v: v.dtype in dtypes and accept(v))
        if found is not None and self.chance(0.85):
            return found
        return self.new_input(self.shape(), self.pick(dtypes), positive=positive)

    def partner(self, of: Value, accept: Callable[[Value], bool] = lambda v: True, positive: bool = False) -> Value:
        """A second operand of `of`'s element type whose shape broadcasts with it."""
        found = self.existing(
            lambda v: v.dtype == of.dtype and broadcasts(v.shape, of.shape) and accept(v)
        )
        if found is not None and self.chance(0.6):
            return found
        return self.new_input(self.broadcast_partner(of.shape), of.dtype, positive=positive)

    def result(self, tensor: Tensor, lo: float, hi: float, error: float, rounding: str) -> Value:
        """Record an op's result. `error` is what its operands' errors become through it;
        `rounding` says what the op adds:

        - "exact": nothing (shape ops, neg, max...);
        - "rounded": one correctly rounded step, alike everywhere on exact operands;
        - "approximate": always a little, relative to the result (transcendentals);
        - "cancelling": always a little, relative to the result's bound, since terms of
          both signs may cancel (sums, matmul, log_softmax, norms, attention)."""
        own = own_error(tensor.dtype)
        if rounding == "cancelling":
            error, own = error + own * max(abs(lo), abs(hi)), 0.0
        elif not (rounding == "approximate" or (rounding == "rounded" and error > 0)):
            own = 0.0
        self.op_names.append(tensor.value.owner.name)
        return self.add(Value(tensor, float(lo), float(hi), float(error), own))


def own_error(dtype: str) -> float:
    """An op's own relative error on `dtype`: OWN_ERROR_ULPS in the precision it
    computes in (f64 for f64, else f32), plus the final rounding of f16/bf16."""
    if dtype not in UNIT_ROUNDOFF:
        return 0.0
    computing = UNIT_ROUNDOFF["f64" if dtype == "f64" else "f32"]
    return 2 * OWN_ERROR_ULPS * computing + (UNIT_ROUNDOFF[dtype] if dtype in ("f16", "bf16") else 0.0)


def broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether `a` broadcasts to exactly `b`."""
    if len(a) > len(b):
        return False
    return all(x == y or x == 1 for x, y in zip(reversed(a), reversed(b)))


def within(v: Value, lo: float, hi: float) -> bool:
    return lo <= v.lo and v.hi <= hi


def fits(lo: float, hi: float, dtype: str) -> bool:
    """Whether values in [lo, hi] are in the range `dtype` may hold here."""
    limit = BOUND if dtype in FLOATS else INTEGER_BOUND
    return max(abs(lo), abs(hi)) <= limit and not (math.isnan(lo) or math.isnan(hi))



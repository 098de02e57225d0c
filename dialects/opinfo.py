"""Per-op knowledge, registered once per op and looked up by passes and runtimes.

Each graph op class maps to one `OpInfo`. Facts live next to the code that owns them and
register themselves here when their module is imported:

| fact | registered by |
| --- | --- |
| reference semantics (numpy) | runtime/reference/kernels.py |
| canonicalization patterns | transforms/graph_canonicalize.py |
| VJP rule | transforms/vjp_rules_*.py |
| scalar arith/math rule (elementwise ops) | lowering/scalar_rules.py |
| tile-kernel lowering | lowering/graph_to_tile/*.py |

So no pass grows an if/elif chain over op names, and a lower layer (canonicalization's
constant folding) can use a higher layer's fact (the reference semantics) without
importing it. `strata.targets` imports every registering module, and `import strata`
imports `strata.targets`, so the registry is complete in any program that imported Strata.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation
from xdsl.pattern_rewriter import RewritePattern

from strata.support.dtypes import LOW_PRECISION, tensor_dtype
from strata.support.errors import IRError
from strata.support.locations import location_prefix

ReferenceFn = Callable[..., object]
"""(op, *numpy operands) -> numpy result, for the op's element types."""


@dataclass
class OpInfo:
    reference: ReferenceFn | None = None
    canonicalization: tuple[RewritePattern, ...] | None = None
    """Rewrite patterns xDSL's `canonicalize` pass applies to this op."""
    scalar: Callable[..., object] | None = None
    """(emitter, op, operand elements) -> result element, as arith/math ops."""
    tile_lowering: Callable[..., object] | None = None
    """(op, lowering context) -> emits the op's tile kernels and launches."""
    vjp: Callable | None = None
    """(VjpContext) -> one cotangent (or None) per operand: the op's reverse-mode rule."""


_REGISTRY: dict[type[Operation], OpInfo] = {}


def _entry(op_type: type[Operation]) -> OpInfo:
    return _REGISTRY.setdefault(op_type, OpInfo())


def _registrar(field: str):
    def register(*op_types: type[Operation]) -> Callable[[Callable], Callable]:
        def decorate(fn: Callable) -> Callable:
            for op_type in op_types:
                entry = _entry(op_type)
                if getattr(entry, field) is not None:
                    raise ValueError(f"{op_type.name} already has a registered {field}")
                setattr(entry, field, fn)
            return fn

        return decorate

    return register


register_reference = _registrar("reference")
"""Decorator: the numpy meaning of each of the given op types."""
register_scalar = _registrar("scalar")
"""Decorator: the arith/math rule computing one element of an elementwise op."""
register_tile_lowering = _registrar("tile_lowering")
"""Decorator: how an op becomes tile kernels."""
register_vjp = _registrar("vjp")
"""Decorator: the vector-Jacobian product of each of the given op types."""


def register_canonicalization(op_type: type[Operation], patterns: Sequence[RewritePattern]) -> None:
    """The canonicalization patterns of `op_type` (once per op type)."""
    entry = _entry(op_type)
    if entry.canonicalization is not None:
        raise ValueError(f"{op_type.name} already has registered canonicalization patterns")
    entry.canonicalization = tuple(patterns)


def op_info(op: Operation | type[Operation]) -> OpInfo:
    return _REGISTRY.get(op if isinstance(op, type) else type(op), OpInfo())


def evaluate(op: Operation, operands: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """One graph op on numpy operands, via its registered reference semantics; one array
    per result. f16/bf16 operands are computed in f32 and each result rounded once."""
    reference = op_info(op).reference
    if reference is None:
        raise IRError(f"{location_prefix(op)}error: '{op.name}' has no reference semantics")
    widened = [a.astype(np.float32) if a.dtype in LOW_PRECISION else a for a in operands]
    with np.errstate(all="ignore"):
        produced = reference(op, *widened)
    results = produced if isinstance(produced, tuple) else (produced,)
    return tuple(
        np.asarray(r).astype(tensor_dtype(v.type), copy=False) for r, v in zip(results, op.results)
    )

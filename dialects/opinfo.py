"""Per-op knowledge, registered once per op and looked up by passes and runtimes.

Each graph op class maps to one `OpInfo`. Facts live next to the code that owns them
and register themselves here — the reference semantics (runtime/reference/kernels.py),
the scalar arith/math rule of elementwise ops (lowering/scalar_rules.py), the tile-kernel
lowering (lowering/graph_to_tile*.py); later VJP rules and aliasing — so no pass grows an
if/elif chain over op names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation

ReferenceFn = Callable[..., object]
"""(op, *numpy operands) -> numpy result, for the op's element types."""

PROVIDERS = (
    "strata.runtime.reference.kernels",
    "strata.lowering.scalar_rules",
    "strata.lowering.graph_to_tile",
    "strata.lowering.graph_to_tile_matmul",
    "strata.lowering.graph_to_tile_indexed",
    "strata.lowering.graph_to_tile_rows",
    "strata.transforms.vjp_rules",
)
"""Modules that register facts; imported on first lookup."""


@dataclass
class OpInfo:
    reference: ReferenceFn | None = None
    scalar: Callable[..., object] | None = None
    """(emitter, op, operand elements) -> result element, as arith/math ops."""
    tile_lowering: Callable[..., object] | None = None
    """(op, lowering context) -> emits the op's tile kernels and launches."""
    vjp: Callable | None = None
    """(VjpContext) -> one cotangent (or None) per operand: the op's reverse-mode rule."""


_REGISTRY: dict[type[Operation], OpInfo] = {}
_loaded = False


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


def op_info(op: Operation | type[Operation]) -> OpInfo:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in PROVIDERS:
            importlib.import_module(module)
    return _REGISTRY.get(op if isinstance(op, type) else type(op), OpInfo())

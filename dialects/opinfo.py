"""Per-op knowledge, registered once per op and looked up by passes and runtimes.

Each graph op class maps to one `OpInfo`. Facts live next to the code that owns them
and register themselves here (the reference semantics in runtime/reference/kernels.py;
later VJP rules, tiling and aliasing), so no pass grows an if/elif chain over op names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation

ReferenceFn = Callable[..., object]
"""(op, *numpy operands) -> numpy result, for the op's element types."""

PROVIDERS = ("strata.runtime.reference.kernels",)
"""Modules that register facts; imported on first lookup."""


@dataclass
class OpInfo:
    reference: ReferenceFn | None = None


_REGISTRY: dict[type[Operation], OpInfo] = {}
_loaded = False


def _entry(op_type: type[Operation]) -> OpInfo:
    return _REGISTRY.setdefault(op_type, OpInfo())


def register_reference(*op_types: type[Operation]) -> Callable[[ReferenceFn], ReferenceFn]:
    """Decorator: `fn` is the numpy meaning of each of `op_types`."""

    def decorate(fn: ReferenceFn) -> ReferenceFn:
        for op_type in op_types:
            entry = _entry(op_type)
            if entry.reference is not None:
                raise ValueError(f"{op_type.name} already has reference semantics")
            entry.reference = fn
        return fn

    return decorate


def op_info(op: Operation | type[Operation]) -> OpInfo:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in PROVIDERS:
            importlib.import_module(module)
    return _REGISTRY.get(op if isinstance(op, type) else type(op), OpInfo())

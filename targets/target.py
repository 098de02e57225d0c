"""What a target is, and the registry the API and the tools look targets up in.

A target owns everything needed to take a verified graph module to running code: its
named pipeline (the passes from graph down to its kernels and memory plan), the
`strata-translate --emit` kinds it can produce, and the executable that runs the result.
Adding a target is one module that subclasses `Target` and calls `register_target`, plus
one import in `targets/__init__.py`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import ClassVar, Protocol

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from strata.runtime.program import LoweredProgram
from strata.support.errors import StrataError
from strata.targets.passes import PipelinePass, run_pipeline


class Runnable(Protocol):
    """What `Target.compile` returns: called with the entry's arguments, it returns one
    array per result. `module` is the lowered module, `plan` its memory plan (None for
    targets without one)."""

    module: ModuleOp
    plan: dict | None

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]: ...


class Target(abc.ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    pipeline: ClassVar[type[PipelinePass] | None] = None
    """The named pipeline from graph to what the executable runs (None: runs the graph)."""
    emits: ClassVar[tuple[str, ...]] = ()
    """The `strata-translate --emit` kinds this target produces."""

    def lower(self, module: ModuleOp, fusion: bool = True, **options: object) -> None:
        """Run the target's pipeline on `module` in place (`options`: the pipeline's own)."""
        if self.pipeline is not None:
            run_pipeline(module, self.pipeline(fusion=fusion, **options).steps())

    def lowered_program(self, module: ModuleOp, entry: str | None, fusion: bool = True, **options: object) -> LoweredProgram:
        """A lowered copy of `module` with its entry's signature and memory plan."""
        lower: Callable[[ModuleOp], None] = lambda m: self.lower(m, fusion, **options)
        return LoweredProgram.lower(module, entry, lower)

    @abc.abstractmethod
    def compile(self, module: ModuleOp, entry: str | None = None, fusion: bool = True) -> Runnable:
        """`module`'s entry ready to run (`module` itself is left as it is)."""

    def emit(self, module: ModuleOp, kind: str, arch: str | None = None) -> str:
        """`module` lowered and translated to `kind` (one of `emits`); `arch` selects the
        GPU architecture where the target has one."""
        raise StrataError(f"target '{self.name}' cannot emit '{kind}'")


_TARGETS: dict[str, Target] = {}


def register_target(target: Target) -> Target:
    if target.name in _TARGETS:
        raise ValueError(f"a target named '{target.name}' is already registered")
    _TARGETS[target.name] = target
    return target


def target_names() -> tuple[str, ...]:
    return tuple(_TARGETS)


def target_named(name: str) -> Target:
    """The registered target `name`, or a StrataError listing the known ones."""
    if name not in _TARGETS:
        raise StrataError(f"unknown target '{name}' (expected {', '.join(_TARGETS)})")
    return _TARGETS[name]


def emit_kinds() -> tuple[str, ...]:
    return tuple(kind for target in _TARGETS.values() for kind in target.emits)


def target_for_emit(kind: str) -> Target:
    """The target producing `--emit=kind`."""
    for target in _TARGETS.values():
        if kind in target.emits:
            return target
    raise StrataError(f"no target emits '{kind}' (kinds: {', '.join(emit_kinds())})")

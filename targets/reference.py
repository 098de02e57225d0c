"""The reference target: the numpy interpreter runs the graph program op by op. It is
the oracle every compiled target is tested against.

    strata.compile(module, target="reference")  strata-run --target reference
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from strata.runtime.reference import interpreter
from strata.targets.target import Target, register_target


class ReferenceProgram:
    """A graph function run by the interpreter (no lowering, no memory plan)."""

    plan = None

    def __init__(self, module: ModuleOp, entry: str | None):
        self.module = module
        self.function = interpreter.find_entry(module, entry)

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]:
        return interpreter.run_function(self.module, self.function, args)


class ReferenceTarget(Target):
    name = "reference"
    description = "the numpy reference interpreter (the oracle; slow, exact semantics)"

    def compile(self, module: ModuleOp, entry: str | None = None, fusion: bool = True) -> ReferenceProgram:
        return ReferenceProgram(module, entry)


REFERENCE = register_target(ReferenceTarget())

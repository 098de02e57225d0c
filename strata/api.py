"""The Python entry points: interpret and compile."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from strata.dialects.context import as_module
from strata.runtime.reference import interpreter
from strata.support.errors import StrataError
from strata.targets import target_named
from strata.targets.cpu import CPU
from strata.targets.passes import run_pipeline


def interpret(module_or_text: ModuleOp | str, *args: object, entry: str | None = None):
    """Run a function on the numpy reference interpreter; a tuple of result arrays."""
    return interpreter.interpret(as_module(module_or_text), *args, entry=entry)


@dataclass
class Executable:
    """A program ready to run: `exe(*arrays)` returns a tuple of arrays."""

    module: ModuleOp
    entry: str | None
    target: str
    run: Callable[..., tuple[np.ndarray, ...]]
    """The target's runtime object (e.g. `CudaExecutable`, whose `launch()` runs only the
    kernels); calling it runs the program."""
    plan: dict | None = None
    """The memory plan (the plan JSON of docs/interfaces.md) of compiled targets."""

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]:
        return self.run(*args)

    def run_on_device(self, *args: object) -> tuple:
        """target "cuda": run on numpy or device arrays (`__cuda_array_interface__`: torch,
        CuPy, Numba), the results left on the device as Numba device arrays (views of the
        executable's arenas, valid until its next call)."""
        if not hasattr(self.run, "run_on_device"):
            raise StrataError(f"run_on_device needs target 'cuda', not '{self.target}'")
        return self.run.run_on_device(*args)


def compile(
    module_or_text: ModuleOp | str,
    target: str = "cpu",
    entry: str | None = None,
    pipeline: str | None = None,
    fusion: bool = True,
) -> Executable:
    """Compile a module for a registered target: "cpu" (JIT through cpu-pipeline), "cuda",
    or "reference" (the numpy interpreter). `pipeline` runs on (a copy of) the graph first;
    `fusion=False` compiles one kernel per op (for ablations)."""
    module = with_pipeline(as_module(module_or_text), pipeline)
    compiled = target_named(target).compile(module, entry, fusion=fusion)
    return Executable(compiled.module, entry, target, compiled, compiled.plan)


def with_pipeline(module: ModuleOp, pipeline: str | None) -> ModuleOp:
    """`module`, or a copy with `pipeline` applied."""
    if not pipeline:
        return module
    module = module.clone()
    run_pipeline(module, pipeline)
    return module


def compile_profiles(modules_or_texts, entry: str | None = None, pipeline: str | None = None):
    """Compile one program for several shape buckets (one module per bucket) for the CPU;
    calls route by input shapes and share one set of arenas (no allocation on switching)."""
    modules = [with_pipeline(as_module(m), pipeline) for m in modules_or_texts]
    return CPU.profiles(modules, entry)

"""The Python entry points: interpret and compile."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from strata.errors import StrataError
from strata.ir import as_module
from strata.runtime.reference import interpreter


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
    plan: dict | None = None
    """The memory plan (spec/interfaces.md JSON) of compiled targets."""

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
    """Compile a module for `target`: "cpu" (JIT through cpu-pipeline), "cuda", or
    "reference" (the numpy interpreter). `pipeline` runs on the graph first; `fusion=False`
    compiles one kernel per op (for ablations)."""
    module = as_module(module_or_text)
    if target == "cpu":
        from strata.runtime.cpu import CpuExecutable

        executable = CpuExecutable(module, entry, pipeline, fusion=fusion)
        return Executable(executable.module, entry, target, executable, executable.plan)
    if target == "cuda":
        from strata.runtime.cuda import CudaExecutable

        executable = CudaExecutable(module, entry, pipeline, fusion=fusion)
        return Executable(executable.module, entry, target, executable, executable.plan)
    if target != "reference":
        raise StrataError(f"unknown target '{target}' (expected cpu, cuda or reference)")
    if pipeline:
        from strata.pipelines import run_pipeline

        run_pipeline(module, pipeline)
    function = interpreter.find_entry(module, entry)
    return Executable(
        module, entry, target, lambda *args: interpreter.run_function(module, function, args)
    )


def compile_profiles(modules_or_texts, entry: str | None = None, pipeline: str | None = None):
    """Compile one program for several shape buckets (one module per bucket) for the CPU;
    calls route by input shapes and share one set of arenas (no allocation on switching)."""
    from strata.runtime.cpu import CpuExecutable, CpuProfiles

    return CpuProfiles([CpuExecutable(as_module(m), entry, pipeline, bind=False) for m in modules_or_texts])

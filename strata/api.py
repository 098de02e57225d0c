"""The Python entry points: interpret and compile; the CPU runtime's thread count and the
compile cache (`set_num_threads`, `cache_dir`, `clear_cache`: docs/cpu-backend.md)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from strata.dialects.context import as_module
from strata.runtime.compile_cache import cache_dir, clear_cache
from strata.runtime.cpu import get_num_threads, set_num_threads
from strata.runtime.reference import interpreter
from strata.support.errors import InputError, IRError, StrataError
from strata.targets import target_named
from strata.targets.cpu import CPU
from strata.targets.passes import run_pipeline
from strata.transforms.dropout_step import add_dropout_step

__all__ = [
    "Executable", "cache_dir", "checked_entry", "checked_module", "clear_cache", "compile",
    "compile_profiles", "get_num_threads", "interpret", "set_num_threads", "with_pipeline",
]  # fmt: skip


def interpret(module_or_text: ModuleOp | str, *args: object, entry: str | None = None):
    """Run a function on the numpy reference interpreter; a tuple of result arrays."""
    module = checked_module(module_or_text, "interpret")
    checked_entry(module, _checked_name(entry, "entry", "interpret"))
    return interpreter.interpret(module, *args, entry=entry)


def checked_module(module_or_text: object, caller: str) -> ModuleOp:
    """`module_or_text` as a verified module; anything but a ModuleOp or text is an
    InputError naming the argument."""
    if not isinstance(module_or_text, (ModuleOp, str)):
        raise InputError(
            f"strata.{caller}: module_or_text must be an xDSL ModuleOp or .mlir text, "
            f"got {type(module_or_text).__name__}"
        )
    try:
        return as_module(module_or_text)
    except RecursionError:
        raise IRError(f"strata.{caller}: the module is nested too deeply to parse or verify") from None


def _checked_name(value: object, argument: str, caller: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InputError(f"strata.{caller}: {argument} must be a string, got {type(value).__name__} {value!r}")
    return value


def checked_entry(module: ModuleOp, entry: str | None = None) -> func.FuncOp:
    """The entry function, checked to be runnable: it has a body, and its arguments and
    results are tensors (an IRError naming the function and the argument otherwise)."""
    function = interpreter.find_entry(module, entry)
    name = function.sym_name.data
    if function.is_declaration:
        raise IRError(f"@{name} is a declaration without a body: there is nothing to run")
    for i, t in enumerate(function.function_type.inputs.data):
        if not isinstance(t, TensorType):
            raise IRError(
                f"{interpreter.argument_label(function, i)} of @{name} is {t}: entry functions "
                f"take tensors only (use tensor<{t}> for a scalar)"
            )
    for i, t in enumerate(function.function_type.outputs.data):
        if not isinstance(t, TensorType):
            raise IRError(f"result{i} of @{name} is {t}: entry functions return tensors only (use tensor<{t}>)")
    return function


@dataclass
class Executable:
    """A program ready to run: `exe(*arrays)` returns a tuple of arrays."""

    entry: str | None
    target: str
    run: Callable[..., tuple[np.ndarray, ...]]
    """The target's runtime object (e.g. `CudaExecutable`, whose `launch()` runs only the
    kernels); calling it runs the program."""
    plan: dict | None = None
    """The memory plan (the plan JSON of docs/interfaces.md) of compiled targets."""
    dropout_calls: itertools.count | None = None
    """With `fresh_dropout`: the next call's dropout step (appended to the arguments)."""

    @property
    def module(self) -> ModuleOp:
        """The lowered module (the target's `run.module`; after a CPU compile-cache hit it
        is computed on first access, by lowering the graph again)."""
        return self.run.module

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]:
        return self.run(*self._with_step(args))

    def _with_step(self, args: tuple) -> tuple:
        return args if self.dropout_calls is None else (*args, np.int64(next(self.dropout_calls)))

    def run_on_device(self, *args: object) -> tuple:
        """target "cuda": run on numpy or device arrays (`__cuda_array_interface__`: torch,
        CuPy, Numba), the results left on the device as Numba device arrays (views of the
        executable's arenas, valid until its next call)."""
        if not hasattr(self.run, "run_on_device"):
            raise StrataError(f"run_on_device needs target 'cuda', not '{self.target}'")
        return self.run.run_on_device(*self._with_step(args))


def compile(
    module_or_text: ModuleOp | str,
    target: str = "cpu",
    entry: str | None = None,
    pipeline: str | None = None,
    fusion: bool = True,
    allow_tf32: bool = False,
    fresh_dropout: bool = False,
    allow_16bit_attention_p: bool = False,
) -> Executable:
    """Compile a module for a registered target: "cpu" (JIT through cpu-pipeline), "cuda",
    or "reference" (the numpy interpreter). `pipeline` runs on (a copy of) the graph first;
    `fusion=False` compiles one kernel per op (for ablations). `allow_tf32` (target "cuda"
    only) runs f32 matmuls on tensor cores as TF32: operands rounded to 10 mantissa bits,
    f32 accumulation, relative errors around 1e-3 instead of 1e-6. `allow_16bit_attention_p`
    (target "cuda" only) lets the bf16/f16 flash-attention kernel round its probabilities
    to 16 bits before multiplying them with v, as FlashAttention does: half the p v
    products, outputs about an ulp further from the reference. `fresh_dropout` gives
    the entry's dropouts a step that counts the calls (0, 1, 2, ...: add-dropout-step), so
    each call draws fresh masks; without it every call repeats the same masks."""
    module = checked_module(module_or_text, "compile")
    if not isinstance(target, str):
        raise InputError(f"strata.compile: target must be a target name (str), got {type(target).__name__} {target!r}")
    _checked_name(entry, "entry", "compile")
    _checked_name(pipeline, "pipeline", "compile")
    module = with_pipeline(module, pipeline)
    checked_entry(module, entry)
    if not isinstance(allow_tf32, bool):
        raise InputError(f"strata.compile: allow_tf32 must be a bool, got {type(allow_tf32).__name__}")
    if allow_tf32 and target != "cuda":
        raise InputError(f"strata.compile: allow_tf32 is for target 'cuda' (TF32 tensor cores), not '{target}'")
    if not isinstance(allow_16bit_attention_p, bool):
        raise InputError(
            f"strata.compile: allow_16bit_attention_p must be a bool, got {type(allow_16bit_attention_p).__name__}"
        )
    if allow_16bit_attention_p and target != "cuda":
        raise InputError(f"strata.compile: allow_16bit_attention_p is for target 'cuda' (flash attention), not '{target}'")
    if not isinstance(fresh_dropout, bool):
        raise InputError(f"strata.compile: fresh_dropout must be a bool, got {type(fresh_dropout).__name__}")
    options = {name: True for name, wanted in (("allow_tf32", allow_tf32), ("allow_16bit_attention_p", allow_16bit_attention_p)) if wanted}
    stepped = fresh_dropout and _with_dropout_step(module, entry)
    if stepped:
        module = stepped
    compiled = target_named(target).compile(module, entry, fusion=fusion, **options)
    return Executable(entry, target, compiled, compiled.plan, itertools.count() if stepped else None)


def _with_dropout_step(module: ModuleOp, entry: str | None) -> ModuleOp | None:
    """A copy of `module` whose entry's dropouts take a `dropout_step` argument, or None
    when the entry has no step-less dropout."""
    copy = module.clone()
    return copy if add_dropout_step(interpreter.find_entry(copy, entry)) is not None else None


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
    if isinstance(modules_or_texts, (str, ModuleOp)) or not hasattr(modules_or_texts, "__iter__"):
        raise InputError(
            "strata.compile_profiles: modules_or_texts must be a list of modules or texts, "
            f"got {type(modules_or_texts).__name__}"
        )
    modules = [with_pipeline(checked_module(m, "compile_profiles"), pipeline) for m in modules_or_texts]
    for m in modules:
        checked_entry(m, entry)
    return CPU.profiles(modules, entry)

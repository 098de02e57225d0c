"""The module DSL from Python (docs/dsl.md).

    program = strata.dsl.load("model.module")            # a path, or the DSL text itself
    module = program.instantiate("GPT2", n_layers=2, B=2, T=8)    # graph IR (a ModuleOp)
    exe = strata.compile(module)                          # then as any Strata program

    arguments = program.hf_arguments("Llama", hf_config)          # constructor parameters
    params = program.import_hf("Llama", state_dict, **arguments)  # dotted name -> array (or a
                                                                  # .safetensors file / directory)
    report = program.verify_backward("MyLinear", B=4)    # explicit backward vs autodiff and FD
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from strata.frontends.dsl import hf
from strata.frontends.dsl.errors import DslError
from strata.frontends.dsl.program import Program as _Program
from strata.gradcheck import random_inputs
from strata.runtime.reference.interpreter import find_entry, run_function
from strata.transforms.autodiff import differentiate, gradient_name

__all__ = ["DslError", "Program", "BackwardReport", "load"]


def load(path_or_text: str | os.PathLike) -> Program:
    """A program from a `.module` file or from DSL text (anything with a newline or that
    names no existing file is text)."""
    if isinstance(path_or_text, os.PathLike) or ("\n" not in str(path_or_text) and Path(str(path_or_text)).is_file()):
        path = Path(path_or_text)
        return Program(_Program.load(path.read_text(), str(path)))
    if not isinstance(path_or_text, str):
        raise DslError("E001", f"strata.dsl.load takes a path or DSL text, got {type(path_or_text).__name__}")
    return Program(_Program.load(path_or_text))


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a `.safetensors` file, or of all such files in a directory."""
    files = sorted(path.glob("*.safetensors")) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise DslError("E010", f"{path}: no .safetensors checkpoint there")
    try:
        from safetensors.numpy import load_file
    except ImportError:
        raise DslError("E010", "reading a .safetensors checkpoint needs the safetensors package "
                       "(pip install 'strata-compiler[torch]')") from None
    tensors: dict[str, np.ndarray] = {}
    for file in files:
        try:
            tensors.update(load_file(str(file)))
        except Exception as e:  # noqa: BLE001 - a corrupt file's reason becomes the diagnostic
            raise DslError("E010", f"{file}: not a readable safetensors file ({type(e).__name__}: {e})") from None
    return tensors


@dataclass
class GradientCheck:
    name: str
    versus_autodiff: float
    versus_finite_differences: float


@dataclass
class BackwardReport:
    """Each gradient of an explicit backward against autodiff's (relative error over the
    largest entry) and against central differences along a random direction."""

    entry: str
    gradients: list[GradientCheck]
    tolerance: float

    def ok(self) -> bool:
        return all(max(g.versus_autodiff, g.versus_finite_differences) <= self.tolerance for g in self.gradients)

    def __str__(self) -> str:
        lines = [f"verify-backward @{self.entry}: {'ok' if self.ok() else 'MISMATCH'} (tolerance {self.tolerance:g})"]
        lines += [f"  {g.name}: vs autodiff {g.versus_autodiff:.2e}, vs finite differences {g.versus_finite_differences:.2e}"
                  for g in self.gradients]
        return "\n".join(lines)


class Program:
    """A loaded DSL program: its modules by name, instantiable as graph IR."""

    def __init__(self, program: _Program):
        self._program = program

    @property
    def modules(self) -> list[str]:
        return self._program.modules

    def instantiate(self, entry: str, *, dtype: str = "f32", shapes: Mapping[str, tuple[int, ...]] | None = None,
                    backward: bool = False, **keywords: object) -> ModuleOp:
        """Graph IR of `entry`: keywords are its constructor parameters and its inputs'
        symbolic dims; `backward=True` adds `@<entry>_backward` from its backward: graph."""
        return self._program.instantiate(entry, dtype=dtype, shapes=shapes, backward=backward, **keywords)

    def parameters(self, entry: str, **keywords: object) -> dict[str, tuple[int, ...]]:
        """The entry's params (dotted name -> shape), in argument order."""
        return {leaf.name: leaf.shape for leaf in self._program.instance(entry, **keywords).all_leaves()}

    def hf_arguments(self, entry: str, config: object) -> dict[str, object]:
        """Constructor parameters from a `transformers` config (or dict) via `hf_config:`."""
        return hf.constructor_arguments(self._program.table.declaration(entry, None), config)

    def import_hf(self, entry: str, state_dict: Mapping[str, object] | str | os.PathLike,
                  **keywords: object) -> dict[str, np.ndarray]:
        """Params (dotted name -> array) via `hf_mapping:` from a `transformers` state dict,
        or from a checkpoint on disk: a `.safetensors` file or a directory of them (as
        `save_pretrained` writes it; needs the `safetensors` package)."""
        decl = self._program.table.declaration(entry, None)
        if isinstance(state_dict, (str, os.PathLike)):
            state_dict = read_safetensors(Path(state_dict))
        return hf.import_weights(decl, self._program.instance(entry, **keywords), state_dict)

    def export_hf(self, entry: str, params: Mapping[str, np.ndarray], **keywords: object) -> dict[str, np.ndarray]:
        """A `transformers` state dict from params: `hf_mapping:` inverted."""
        decl = self._program.table.declaration(entry, None)
        return hf.export_weights(decl, self._program.instance(entry, **keywords), params)

    def verify_backward(self, entry: str, *, seed: int = 0, eps: float = 1e-6, tolerance: float = 1e-5,
                        shapes: Mapping[str, tuple[int, ...]] | None = None, **keywords: object) -> BackwardReport:
        """Check `entry`'s explicit backward: on random f64 inputs, params and output
        cotangents, each gradient it computes is compared with autodiff's and with
        central finite differences of Σ <cotangent, output>."""
        module = self.instantiate(entry, dtype="f64", shapes=shapes, backward=True, **keywords)
        forward = find_entry(module, entry)
        differentiate(module, entry)
        rng = np.random.default_rng(seed)
        args = random_inputs(forward, rng)
        outputs = run_function(module, forward, args)
        cotangents = [rng.standard_normal(o.shape) for o in outputs]
        mine = run_function(module, find_entry(module, f"{entry}_backward"), [*args, *cotangents])
        auto = run_function(module, find_entry(module, gradient_name(forward)), [*args, *cotangents])[len(outputs):]
        floats = [i for i, a in enumerate(args) if a.dtype.kind == "f"]
        labels = [forward.arg_attrs.data[i].data["graph.name"].data for i in floats]

        def loss(values: list[np.ndarray]) -> float:
            return float(sum(np.sum(c * o) for c, o in zip(cotangents, run_function(module, forward, values))))

        checks = []
        for index, label, gradient, reference in zip(floats, labels, mine, auto):
            direction = rng.standard_normal(args[index].shape)
            plus = [a + eps * direction if i == index else a for i, a in enumerate(args)]
            minus = [a - eps * direction if i == index else a for i, a in enumerate(args)]
            numeric = (loss(plus) - loss(minus)) / (2 * eps)
            analytic = float(np.sum(gradient * direction))
            scale = max(float(np.max(np.abs(reference), initial=0.0)), 1e-12)
            checks.append(GradientCheck(f"d_{label}", float(np.max(np.abs(gradient - reference), initial=0.0)) / scale,
                                        abs(analytic - numeric) / max(abs(numeric), abs(analytic), 1e-12)))
        return BackwardReport(entry, checks, tolerance)

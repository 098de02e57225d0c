"""PyTorch models through Strata: `strata.compile_torch` and `strata.from_torch`.

    model = GPT2LMHeadModel(config).eval()
    compiled = strata.compile_torch(model, (ids,))     # export, import, compile (CPU)
    logits = compiled(ids).logits                      # torch tensors, same structure as model(ids)

Needs PyTorch; `import strata` does not import it (strata/__init__.py reaches this module
only when one of these names is used).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.utils._pytree as pytree
from torch.export import ExportedProgram

from strata.api import Executable, compile
from strata.frontends.torch import ImportedProgram, import_program
from strata.frontends.torch.values import to_numpy
from strata.runtime.cuda import copied_as, require_cuda
from strata.support.errors import InputError

__all__ = ["TorchExecutable", "compile_torch", "from_torch"]


def from_torch(model, example_args: Sequence[object] = (), example_kwargs: dict | None = None):
    """The graph module (one func.func @forward) of `model` traced on `example_args`:
    its arguments are the model's tensor inputs, then every parameter, buffer and lifted
    constant (graph.role "param", graph.name the PyTorch name)."""
    return import_program(model, example_args, example_kwargs).module


def compile_torch(model: torch.nn.Module | ExportedProgram, example_args: Sequence[object] = (),
                  target: str = "cpu", example_kwargs: dict | None = None) -> TorchExecutable:  # fmt: skip
    """Export `model` on `example_args`, translate it to a graph module and compile it for
    `target`; the result is called like the model and returns torch tensors.

    Shapes are static: a call with other input shapes (or dtypes) exports and compiles
    the model again for them (kept, so each shape compiles once); an ExportedProgram
    has only its own shapes."""
    return TorchExecutable(model, example_args, example_kwargs, target)


def _array(value: object, target: str) -> object:
    """A numpy view of a CPU tensor (no copy when contiguous), or the value as an array;
    for target "cuda", a contiguous CUDA tensor as it is (read in place on the device)."""
    if isinstance(value, torch.Tensor):
        if target == "cuda" and value.is_cuda and value.is_contiguous():
            return value.detach()
        return to_numpy(value)
    return np.asarray(value)


def _tensor(array: np.ndarray) -> torch.Tensor:
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(array)


class TorchExecutable:
    """A compiled PyTorch model: `compiled(*args, **kwargs)` runs it with Strata.

    The parameters are bound once. On the CPU (and "reference"), their numpy views
    (sharing memory with the model's tensors) are passed to every call, never copied. For
    "cuda" they are copied to the device once, when a shape is compiled (`device_params`,
    shared by every shape's program), and each call passes those device arrays, which the
    kernels read in place: only the inputs travel to the device (bf16 ones as their uint16
    bits, which the runtime takes for bf16)."""

    def __init__(self, model, example_args, example_kwargs, target: str):
        if isinstance(example_args, torch.Tensor) or not isinstance(example_args, (tuple, list)):
            example_args = (example_args,)
        self.model = model
        self.target = target
        self.device_params: dict[tuple, object] = {}
        """target "cuda": the parameters' device arrays, by what identifies the host array
        they were copied from (its address, shape, strides and dtype)."""
        self.programs: dict[tuple, tuple[ImportedProgram, Executable, list[object]]] = {}
        self.imported, self.executable, self.params = self._compile(tuple(example_args), dict(example_kwargs or {}))

    @property
    def module(self):
        """The graph module of the first compiled shape."""
        return self.imported.module

    def _key(self, leaves: list[object]) -> tuple:
        return tuple(
            (tuple(leaf.shape), str(leaf.dtype).removeprefix("torch."))
            if isinstance(leaf, (torch.Tensor, np.ndarray))
            else repr(leaf)
            for leaf in leaves
        )

    def _compile(self, args: tuple, kwargs: dict) -> tuple[ImportedProgram, Executable, list[object]]:
        leaves, _ = pytree.tree_flatten((args, kwargs))
        # torch.export takes tensors: numpy inputs are traced as tensors sharing their memory
        args, kwargs = pytree.tree_map(lambda v: _tensor(v) if isinstance(v, np.ndarray) else v, (args, kwargs))
        imported = import_program(self.model, args, kwargs)
        executable = compile(imported.module, target=self.target)
        params = list(imported.params.values())
        if self.target == "cuda":
            params = [self._on_device(p) for p in params]
        program = (imported, executable, params)
        self.programs[self._key(leaves)] = program
        return program

    def _on_device(self, array: np.ndarray) -> object:
        """The device copy of a parameter, made the first time it is met (bf16 as its
        uint16 bits: Numba has no bf16)."""
        key = (array.__array_interface__["data"][0], array.shape, array.strides, array.dtype.str)
        if key not in self.device_params:
            contiguous = np.ascontiguousarray(array)
            self.device_params[key] = require_cuda().to_device(contiguous.view(copied_as(contiguous.dtype)))
        return self.device_params[key]

    def __call__(self, *args: object, **kwargs: object):
        leaves, _ = pytree.tree_flatten((args, kwargs))
        found = self.programs.get(self._key(leaves))
        if found is None:
            if isinstance(self.model, ExportedProgram):
                known = "; ".join(str(k) for k in self.programs)
                raise InputError(f"the exported program was traced for inputs {known}, not {self._key(leaves)}")
            found = self._compile(args, kwargs)
        imported, executable, params = found
        if len(leaves) != len(imported.input_is_tensor):
            raise InputError(f"the model was traced with {len(imported.input_is_tensor)} inputs, got {len(leaves)}")
        inputs = [_array(leaf, self.target) for leaf, is_tensor in zip(leaves, imported.input_is_tensor) if is_tensor]
        results = [_tensor(r) for r in executable(*inputs, *params)]
        try:
            return pytree.tree_unflatten(results, imported.out_spec)
        except Exception:  # noqa: BLE001 - an output structure that cannot be rebuilt
            return results[0] if len(results) == 1 else tuple(results)

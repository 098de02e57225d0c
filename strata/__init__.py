"""Strata: a multi-level tensor compiler on xDSL.

    import strata
    module = strata.parse_module(text)                 # verified xDSL ModuleOp
    outs = strata.interpret(module, x, w)              # numpy reference interpreter
    exe = strata.compile(module, target="cpu")         # also "cuda" and "reference"
    outs = exe(x, w)                                   # buffers bound once, reused

    g = strata.Graph("f"); x = g.input("x", (4, 8))    # the builder API (frontends/builder.py)
    g.output(strata.ops.relu(x * 2.0)); module = g.build()

    compiled = strata.compile_torch(model, (x,))      # PyTorch models (needs torch)
    module = strata.dsl.load(path).instantiate("GPT2", B=2, T=8)   # the module DSL

    strata.set_num_threads(4)                          # CPU runtime workers (STRATA_NUM_THREADS)
    strata.cache_dir(); strata.clear_cache()           # the on-disk compile cache (STRATA_CACHE=0: off)
"""

from importlib.metadata import PackageNotFoundError, version

from strata.api import (
    Executable,
    cache_dir,
    clear_cache,
    compile,
    compile_profiles,
    get_num_threads,
    interpret,
    set_num_threads,
)
from strata.dialects.context import parse_module
from strata.frontends import builder as ops
from strata import dsl, vsla
from strata.frontends.builder import Graph, Tensor, build_module
from strata.grad import grad, value_and_grad
from strata.support.errors import BuildError, ExecutionError, InputError, IRError, StrataError, UnsupportedOpError
from strata.training import SGD, Adam, Trainer, build_train_step

try:
    __version__ = version("strata-compiler")  # the distribution's name (pyproject.toml)
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "SGD",
    "Adam",
    "Trainer",
    "build_train_step",
    "BuildError",
    "Graph",
    "Tensor",
    "build_module",
    "cache_dir",
    "clear_cache",
    "ops",
    "dsl",
    "vsla",
    "ExecutionError",
    "Executable",
    "IRError",
    "InputError",
    "StrataError",
    "compile",
    "compile_profiles",
    "get_num_threads",
    "grad",
    "interpret",
    "parse_module",
    "set_num_threads",
    "value_and_grad",
    "UnsupportedOpError",
]

_TORCH_NAMES = ("compile_torch", "from_torch", "TorchExecutable")
"""strata/torch_api.py's entry points (not in __all__: `from strata import *` needs no torch)."""


def __getattr__(name: str):
    """The PyTorch entry points, imported on first use (so `import strata` needs no torch)."""
    if name in _TORCH_NAMES:
        from strata import torch_api

        return getattr(torch_api, name)
    raise AttributeError(f"module 'strata' has no attribute {name!r}")

"""Strata: a multi-level tensor compiler on xDSL.

    import strata
    module = strata.parse_module(text)                 # verified xDSL ModuleOp
    outs = strata.interpret(module, x, w)              # numpy reference interpreter
    exe = strata.compile(module, target="cpu")         # also "cuda" and "reference"
    outs = exe(x, w)                                   # buffers bound once, reused

    g = strata.Graph("f"); x = g.input("x", (4, 8))    # the builder API (frontends/builder.py)
    g.output(strata.ops.relu(x * 2.0)); module = g.build()
"""

from importlib.metadata import PackageNotFoundError, version

from strata.api import Executable, compile, compile_profiles, interpret
from strata.dialects.context import parse_module
from strata.frontends import builder as ops
from strata.frontends.builder import Graph, Tensor, build_module
from strata.grad import grad, value_and_grad
from strata.support.errors import BuildError, ExecutionError, InputError, IRError, StrataError
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
    "ops",
    "ExecutionError",
    "Executable",
    "IRError",
    "InputError",
    "StrataError",
    "compile",
    "compile_profiles",
    "grad",
    "interpret",
    "parse_module",
    "value_and_grad",
]

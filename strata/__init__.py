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

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("strata-compiler")  # the distribution's name (pyproject.toml)
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

_PUBLIC = {
    "strata.api": ("Executable", "cache_dir", "clear_cache", "compile", "compile_profiles", "get_num_threads",
                   "interpret", "set_num_threads"),
    "strata.dialects.context": ("parse_module",),
    "strata.frontends.builder": ("Graph", "Tensor", "build_module"),
    "strata.gradients": ("grad", "value_and_grad"),
    "strata.support.errors": ("BuildError", "ExecutionError", "InputError", "IRError", "StrataError",
                              "UnsupportedOpError"),
    "strata.training": ("SGD", "Adam", "Trainer", "build_train_step"),
    "strata.torch_api": ("compile_torch", "from_torch", "TorchExecutable"),
}
"""Where each public name lives. They are imported on first use (PEP 562), so a tool that
needs only the dialects and passes (strata-opt, run once per lit RUN line) does not pay for
the runtime, the front ends and torch: `import strata` itself loads nothing else."""
_HOME = {name: module for module, names in _PUBLIC.items() for name in names}
_SUBMODULES = {"ops": "strata.frontends.builder", "dsl": "strata.dsl", "vsla": "strata.vsla"}

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


def __getattr__(name: str):
    """A public name, imported from its module on first use (the PyTorch entry points need torch)."""
    if name in _HOME:
        value = getattr(import_module(_HOME[name]), name)
    elif name in _SUBMODULES:
        value = import_module(_SUBMODULES[name])
    else:
        raise AttributeError(f"module 'strata' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME, *_SUBMODULES})

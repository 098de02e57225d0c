"""`strata.lazy`: a lazy tensor engine with PyTorch's surface on Strata's compiler.

    import strata.lazy as lt
    from strata.lazy.nn import functional as F

    w = lt.randn(16, 4, requires_grad=True)
    loss = F.cross_entropy(x @ w, labels)      # records; nothing runs
    loss.backward()                            # records the backward pass
    with lt.no_grad():
        w.sub_(w.grad * 0.1)                   # an in-place write, functionalized
    print(loss.item())                         # forces what the loss needs, only
    lt.mark_step()                             # forces every pending write
    lt.stats()                                 # {'compiles': 2, 'cache_hits': 0, 'launches': 2}

Ops record a lazy graph; `.numpy()`, `.item()` and `.tolist()` compile (through
`strata.compile`, cached by normalized graph) and run only what the value depends on.
docs/lazy.md describes the model: forcing, the cache key, views and versions, autograd,
`compile`, the keyed RNG and the errors.
"""

from strata.lazy import nn, optim
from strata.lazy.autograd import checkpoint, enable_grad, is_grad_enabled, no_grad
from strata.lazy.creation import (
    arange, from_numpy, full, manual_seed, ones, ones_like, randn, tensor, zeros, zeros_like,
)  # fmt: skip
from strata.lazy.dtypes import bfloat16, bool_, float16, float32, float64, int32, int64
from strata.lazy.engine import ENGINE
from strata.lazy.errors import (
    BackwardGraphFreedError, CheckpointImpureRegionError, DeviceMismatchError, DeviceUnavailableError,
    GradientError, HostReadInCompileError, InvalidTraceTensorEscapeError, LazyError, LazyExecutionError,
    LeafMutationError, SavedTensorModifiedError, TensorHostCoercionError,
)  # fmt: skip
from strata.lazy.staging import compile
from strata.lazy.tensor import Tensor


def stats() -> dict[str, int]:
    """{"compiles", "cache_hits", "launches"} since the last `reset_stats()`: graphs
    compiled, forces served by an executable compiled before, executables run."""
    return dict(ENGINE.stats)


def reset_stats() -> None:
    ENGINE.reset_stats()


def mark_step() -> None:
    """Force every pending effect (each tensor written in place since the last step, the
    gradients backward assigned) and start a new step."""
    ENGINE.mark_step()


__all__ = [
    "BackwardGraphFreedError", "CheckpointImpureRegionError", "DeviceMismatchError", "DeviceUnavailableError",
    "GradientError", "HostReadInCompileError", "InvalidTraceTensorEscapeError", "LazyError", "LazyExecutionError",
    "LeafMutationError", "SavedTensorModifiedError", "Tensor", "TensorHostCoercionError", "arange", "bfloat16",
    "bool_", "checkpoint", "compile", "enable_grad", "float16", "float32", "float64", "from_numpy", "full",
    "int32", "int64", "is_grad_enabled", "manual_seed", "mark_step", "nn", "no_grad", "ones", "ones_like",
    "optim", "randn", "reset_stats", "stats", "tensor", "zeros", "zeros_like",
]  # fmt: skip

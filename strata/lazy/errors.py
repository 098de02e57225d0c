"""The exceptions of the lazy engine.

Every class derives from `LazyError`, itself a `strata.StrataError`, so one `except
strata.StrataError` catches them all; a shape or dtype mistake in an op is a
`strata.BuildError` (raised when the op is recorded, naming the op and its operands).
Messages name the tensor (`describe`) and the operation involved.
"""

from __future__ import annotations

from strata.support.errors import ExecutionError, StrataError


class LazyError(StrataError):
    """Base of the lazy engine's errors."""


class TensorHostCoercionError(LazyError, TypeError):
    """`bool(t)`, `float(t)`, `int(t)` or `np.asarray(t)` on a tensor whose value has not
    been computed: materialization is explicit (`.item()`, `.numpy()`, `.tolist()`)."""


class HostReadInCompileError(LazyError):
    """A value was read on the host (`.item()`, `.numpy()`) while `strata.lazy.compile`
    was staging a step function: staging records work, it cannot run it."""


class InvalidTraceTensorEscapeError(LazyError):
    """A compiled step function's recipe cannot be replayed: it reads a tensor that is
    neither an argument nor live state, or returns something that is not a tensor."""


class SavedTensorModifiedError(LazyError):
    """A tensor that an op saved for its backward pass was modified in place before
    `backward()`; the gradient would use a value the forward pass never saw."""


class LeafMutationError(LazyError):
    """An in-place op on a leaf tensor that requires grad while grad mode is on (wrap
    optimizer-style updates in `strata.lazy.no_grad()`)."""


class BackwardGraphFreedError(LazyError):
    """`backward()` through a graph whose saved state a previous `backward()` released
    (pass `retain_graph=True` to the first call to keep it)."""


class GradientError(LazyError):
    """`backward()` on something it cannot differentiate: a tensor that does not require
    grad, or a non-scalar without an explicit `gradient`."""


class CheckpointImpureRegionError(LazyError):
    """A function under `strata.lazy.checkpoint` mutated a tensor in place: its
    recomputation during backward would repeat the write."""


class DeviceUnavailableError(LazyError):
    """A tensor was placed on a device this machine cannot run (e.g. "cuda" without a
    GPU) or on a device the engine does not know."""


class DeviceMismatchError(LazyError):
    """One op or one forced value mixes tensors of different devices."""


class LazyExecutionError(LazyError, ExecutionError):
    """Compiling or running a forced graph failed. Nothing was committed: every tensor
    keeps its pending recipe and the same read raises again (see docs/lazy.md)."""


def describe(tensor: object) -> str:
    """'tensor "w" (3x4 f32)' or 'tensor #12 (3x4 f32)': how messages name a tensor."""
    shape = "x".join(str(d) for d in getattr(tensor, "shape", ())) or "scalar"
    name = getattr(tensor, "name", None)
    label = f'"{name}"' if name else f"#{getattr(tensor, 'serial', '?')}"
    return f"tensor {label} ({shape} {getattr(tensor, 'dtype', '?')})"

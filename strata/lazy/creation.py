"""Making tensors: from data, filled, random; the device check; seeding."""

from __future__ import annotations

import numpy as np

from strata.lazy.dtypes import DEFAULT_FLOAT, array_of, dims_of, dtype_name, numpy_dtype_of
from strata.lazy.engine import ENGINE, TARGETS
from strata.lazy.errors import DeviceUnavailableError
from strata.lazy.node import Node, storage
from strata.lazy.tensor import Tensor
from strata.runtime.cuda import cuda_available


def device_name(device: object) -> str:
    """"cpu", or "cuda" where `strata.runtime.cuda` finds a GPU ("cuda:0" means "cuda")."""
    name = str(device).split(":")[0]
    if name not in TARGETS:
        raise DeviceUnavailableError(f"unknown device {device!r} (expected one of {', '.join(TARGETS)})")
    if name == "cuda" and not cuda_available():
        raise DeviceUnavailableError("device 'cuda' is not available on this machine (no usable NVIDIA GPU); use 'cpu'")
    return name


def _make(node: Node, device: object, requires_grad: bool, name: str | None) -> Tensor:
    t = Tensor.wrap(node, device_name(device), name)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, dtype=None, device="cpu", requires_grad: bool = False, name: str | None = None) -> Tensor:
    """A tensor holding a copy of `data` (an array, a nested list, a number)."""
    if isinstance(data, Tensor):
        raise TypeError("tensor(): data is already a strata.lazy.Tensor; use .clone() or .detach()")
    return _make(storage(array_of(data, dtype)), device, requires_grad, name)


def from_numpy(array: np.ndarray, device="cpu", name: str | None = None) -> Tensor:
    """A tensor holding a copy of `array`, with its dtype."""
    return _make(storage(np.array(array)), device, False, name)


def full(shape, value, dtype=None, device="cpu", requires_grad: bool = False, name: str | None = None) -> Tensor:
    dims = dims_of(shape if isinstance(shape, tuple) else (shape,))
    name_ = dtype_name(dtype or DEFAULT_FLOAT)
    return _make(storage(np.full(dims, value, numpy_dtype_of(name_))), device, requires_grad, name)


def zeros(*shape, dtype=None, device="cpu", requires_grad: bool = False, name: str | None = None) -> Tensor:
    return full(dims_of(shape), 0, dtype, device, requires_grad, name)


def ones(*shape, dtype=None, device="cpu", requires_grad: bool = False, name: str | None = None) -> Tensor:
    return full(dims_of(shape), 1, dtype, device, requires_grad, name)


def zeros_like(t: Tensor, dtype=None) -> Tensor:
    return full(t.shape, 0, dtype or t.dtype, t.device)


def ones_like(t: Tensor, dtype=None) -> Tensor:
    return full(t.shape, 1, dtype or t.dtype, t.device)


def arange(end: int, dtype=None, device="cpu") -> Tensor:
    """0, 1, ..., end-1 (i64 unless `dtype` says otherwise)."""
    return _make(storage(np.arange(end, dtype=numpy_dtype_of(dtype_name(dtype or "i64")))), device, False, None)


def random_node(kind: str, shape: tuple[int, ...], dtype: str, p: float = 0.0) -> Node:
    """A keyed random value: drawn with the next draw nonce (or, while a step function is
    being staged, the staged step's own nonces)."""
    if ENGINE.staging is not None:
        key = ENGINE.staging.random_key(kind, p)
    else:
        key = ENGINE.generator.key(kind, p)
    return Node("random", (), (("kind", kind), ("p", p)), shape, dtype, payload=key)


def randn(*shape, dtype=None, device="cpu", requires_grad: bool = False, name: str | None = None) -> Tensor:
    """Standard normal samples from the keyed generator (see `manual_seed`)."""
    node = random_node("normal", dims_of(shape), dtype_name(dtype or DEFAULT_FLOAT))
    return _make(node, device, requires_grad, name)


def manual_seed(seed: int) -> None:
    """Reset the keyed generator: the same seed replays the same draws."""
    ENGINE.generator.manual_seed(seed)


"""`strata.lazy.Tensor`: a handle on a lazily computed value, with PyTorch's surface.

A tensor is a *base* (the storage-like identity that aliases share: its current recipe
and a version counter) seen through a chain of view steps. Ops record nodes and return at
once; only `.numpy()`, `.item()` and `.tolist()` compute (explicit materialization).

In-place ops are functionalized: the base gets a new recipe computing the written value
(through a view: the whole base with the view's positions replaced), its version counter
advances, and every alias of the base reads the new recipe from then on. Tensors computed
earlier keep the recipe they were made from, as values must.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from strata.lazy import autograd, views
from strata.lazy.dtypes import dims_of as _dims, dtype_name, numpy_dtype_of as _numpy_dtype
from strata.lazy.engine import ENGINE
from strata.lazy.errors import (
    CheckpointImpureRegionError, DeviceMismatchError, LeafMutationError, TensorHostCoercionError, describe,
)  # fmt: skip
from strata.lazy.node import MODE, Node, record, storage as _storage
from strata.support.errors import BuildError

_serials = itertools.count(1)

SAVES_INPUTS = frozenset({
    "mul", "div", "pow", "maximum", "minimum", "abs", "log", "rsqrt", "relu", "silu", "erf", "gelu",
    "matmul", "reduce_max", "layernorm", "rmsnorm", "embedding", "cross_entropy", "select", "scalar", "attention",
})  # fmt: skip
"""Ops whose backward reads their operands (what PyTorch saves for backward)."""
SAVES_RESULT = frozenset({"exp", "sqrt", "rsqrt", "tanh", "sigmoid", "softmax", "log_softmax", "div", "reduce_max"})
"""Ops whose backward reads their own result."""


class Base:
    """What aliases share: the current recipe, the version counter, the device, and the
    leaf handle when the base is a leaf that requires grad."""

    __slots__ = ("node", "version", "device", "leaf", "_leaf_ref")

    def __init__(self, node: Node, device: str):
        self.node, self.version, self.device = node, 0, device
        self.leaf: Tensor | None = None
        self._leaf_ref: tuple[Node, Node] | None = None

    def read(self) -> Node:
        """The current recipe (reported to a staging step function: state it reads)."""
        if ENGINE.staging is not None:
            ENGINE.staging.saw(self)
        return self.node

    def leaf_ref(self) -> Node:
        """The autograd boundary node of the leaf at its current version (one per version,
        so every use of the leaf in a forward pass meets at one gradient)."""
        node = self.read()
        if self._leaf_ref is None or self._leaf_ref[0] is not node or _stale(self._leaf_ref[1]):
            ref = record("leaf_ref", [node], grad=False, payload=self.leaf)
            ref.requires_grad = True
            self._leaf_ref = (node, ref)
        return self._leaf_ref[1]


def _stale(cached: Node) -> bool:
    """A node cached before the step function being staged began: staging records its
    own nodes so that everything it reads from outside is a base's recipe."""
    return ENGINE.staging is not None and not ENGINE.staging.made(cached)


class Tensor:
    """A lazy tensor (see the module docstring)."""

    __array_priority__ = 1000  # numpy scalars defer to our reflected operators
    __hash__ = object.__hash__  # == builds a comparison, as in PyTorch

    # What a tensor is unless `__init__` says otherwise: no view steps, tracked by
    # autograd, unnamed, no gradient (a bare node: one a compiled step assigned, not yet
    # wrapped by `grad`), no cached view recipe.
    _steps: tuple = ()
    _detached = False
    name: str | None = None
    _grad: Tensor | Node | None = None
    _view_cache: tuple[Node, Node] | None = None

    def __init__(self, base: Base, steps: tuple = (), shape=None, dtype=None, detached: bool = False, name: str | None = None):
        self._base = base
        self.shape: tuple[int, ...] = tuple(base.node.shape if shape is None else shape)
        self.dtype: str = base.node.dtype if dtype is None else dtype
        self.serial = next(_serials)
        if steps:
            self._steps = steps
        if detached:
            self._detached = True
        if name is not None:
            self.name = name

    @classmethod
    def wrap(cls, node: Node, device: str, name: str | None = None) -> Tensor:
        """A tensor with a fresh base holding `node` (every op's result: made without
        `__init__`'s generality)."""
        tensor = cls.__new__(cls)
        tensor._base = Base(node, device)
        tensor.shape, tensor.dtype = tuple(node.shape), node.dtype
        tensor.serial = next(_serials)
        if name is not None:
            tensor.name = name
        return tensor

    # --- identity and metadata -------------------------------------------------------
    @property
    def device(self) -> str:
        return self._base.device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        return math.prod(self.shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError(f"len() of a 0-d {describe(self)}")
        return self.shape[0]

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (leaves, and tensors that called retain_grad)."""
        grad = self._grad
        if isinstance(grad, Node):  # assigned by a compiled step, wrapped when first read (most never are)
            grad = self._grad = Tensor.wrap(grad, self.device)
        return grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"{describe(self)}.grad must be a strata.lazy.Tensor or None, got {type(value).__name__}")
        if ENGINE.staging is not None:
            ENGINE.staging.grad_changes(self)
        self._grad = value
        ENGINE.state_changes += 1

    @property
    def version(self) -> int:
        """How many in-place writes the base (shared by every alias) has received."""
        return self._base.version

    @property
    def requires_grad(self) -> bool:
        return self._base.leaf is self or self.node.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, flag: bool = True) -> Tensor:
        if self._steps or self._detached or (self._base.leaf is not self and self.node.requires_grad):
            raise BuildError(f"requires_grad_: {describe(self)} is not a leaf (a view or a computed value)")
        self._base.leaf = self if flag else None
        return self

    @property
    def is_leaf(self) -> bool:
        return self._base.leaf is self or not self.node.requires_grad

    @property
    def node(self) -> Node:
        """The recipe of this tensor's current value."""
        base = self._base
        source = base.leaf_ref() if base.leaf is not None else base.read()
        node = source
        if self._steps or self._detached:
            if self._view_cache is not None and self._view_cache[0] is source and not _stale(self._view_cache[1]):
                node = self._view_cache[1]
            else:
                for step in self._steps:
                    op, params = views.step_params(step)
                    node = record(op, [node], params)
                if self._detached:
                    node = record("detach", [node], grad=False)
                self._view_cache = (source, node)
        return node

    def __repr__(self) -> str:
        state = "materialized" if self.node.materialized else "pending"
        return f"tensor(shape={self.shape}, dtype={self.dtype}, device='{self.device}', {state})"

    # --- materialization (explicit only) ----------------------------------------------
    def numpy(self) -> np.ndarray:
        """Compute this value (its dependency closure only) and return a copy."""
        node = self.node
        ENGINE.force([node], self.device, self)
        return node.value.copy()

    def item(self):
        if self.numel() != 1:
            raise ValueError(f"item(): {describe(self)} has {self.numel()} elements, not 1")
        return self.numpy().reshape(()).item()

    def tolist(self):
        return self.numpy().tolist()

    def _host_value(self, conversion: str) -> np.ndarray:
        node = self.node
        if not node.materialized:
            raise TensorHostCoercionError(
                f"{conversion} of {describe(self)}, whose value is not computed yet: call .item() "
                f"(or .numpy()/.tolist()) to compute it explicitly"
            )
        return node.value

    def __bool__(self) -> bool:
        return bool(self._host_value("bool()"))

    def __float__(self) -> float:
        return float(self._host_value("float()"))

    def __int__(self) -> int:
        return int(self._host_value("int()"))

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        value = self._host_value("np.asarray()")
        return value.astype(dtype) if dtype is not None else value.copy()

    # --- recording ops ----------------------------------------------------------------
    def _op(self, op: str, others: Sequence[Tensor] = (), what: str | None = None, **params) -> Tensor:
        tensors = [self, *others]
        for t in others:
            if t.device != self.device:
                raise DeviceMismatchError(f"{what or op}: {describe(self)} is on {self.device}, {describe(t)} on {t.device}")
        node = record(op, [t.node for t in tensors], params, what=what)
        out = Tensor.wrap(node, self.device)
        if node.requires_grad:
            if op in SAVES_INPUTS:
                node.saved += tuple((describe(t), t._base, t._base.version) for t in tensors)
            if op in SAVES_RESULT:
                node.saved += ((f"the result of {what or op}", out._base, 0),)
        return out

    def _lift(self, other: object, op: str) -> Tensor:
        if isinstance(other, Tensor):
            return other
        if isinstance(other, np.ndarray):
            return Tensor.wrap(_storage(np.asarray(other, dtype=_numpy_dtype(self.dtype))), self.device)
        raise BuildError(f"{op}: the operand must be a strata.lazy.Tensor, an array or a number, got {type(other).__name__}")

    def _binary(self, op: str, other: object, reverse: bool = False, predicate: str | None = None) -> Tensor:
        if isinstance(other, (bool, int, float, np.number)) and not isinstance(other, np.ndarray):
            value = float(other) if self.dtype.startswith(("f", "bf")) else int(other)
            extra = {"predicate": predicate} if predicate else {}
            return self._op("scalar", what=op, name=op, value=value, reverse=reverse, **extra)
        other = self._lift(other, op)
        lhs, rhs = (other, self) if reverse else (self, other)
        extra = {"predicate": predicate} if predicate else {}
        return lhs._op(op, [rhs], **extra)

    def __add__(self, other): return self._binary("add", other)
    def __radd__(self, other): return self._binary("add", other, reverse=True)
    def __sub__(self, other): return self._binary("sub", other)
    def __rsub__(self, other): return self._binary("sub", other, reverse=True)
    def __mul__(self, other): return self._binary("mul", other)
    def __rmul__(self, other): return self._binary("mul", other, reverse=True)
    def __truediv__(self, other): return self._binary("div", other)
    def __rtruediv__(self, other): return self._binary("div", other, reverse=True)
    def __pow__(self, other): return self._binary("pow", other)
    def __rpow__(self, other): return self._binary("pow", other, reverse=True)
    def __lt__(self, other): return self._binary("compare", other, predicate="lt")
    def __le__(self, other): return self._binary("compare", other, predicate="le")
    def __gt__(self, other): return self._binary("compare", other, predicate="gt")
    def __ge__(self, other): return self._binary("compare", other, predicate="ge")
    def __eq__(self, other): return self._binary("compare", other, predicate="eq")  # type: ignore[override]
    def __ne__(self, other): return self._binary("compare", other, predicate="ne")  # type: ignore[override]
    def __neg__(self): return self._op("neg")

    def __matmul__(self, other: Tensor) -> Tensor:
        """PyTorch's matmul: a 1-d operand is a row (left) or a column (right) vector,
        dropped from the result again."""
        other = self._lift(other, "matmul")
        a = self.reshape(1, -1) if self.ndim == 1 else self
        b = other.reshape(-1, 1) if other.ndim == 1 else other
        out = a._op("matmul", [b])
        if self.ndim == 1 or other.ndim == 1:
            keep = out.shape[:-2] + (() if self.ndim == 1 else out.shape[-2:-1]) + (() if other.ndim == 1 else out.shape[-1:])
            out = out.reshape(keep)
        return out

    def __rmatmul__(self, other):
        return self._lift(other, "matmul") @ self

    def exp(self): return self._op("exp")
    def log(self): return self._op("log")
    def sqrt(self): return self._op("sqrt")
    def rsqrt(self): return self._op("rsqrt")
    def tanh(self): return self._op("tanh")
    def sigmoid(self): return self._op("sigmoid")
    def relu(self): return self._op("relu")
    def abs(self): return self._op("abs")
    def softmax(self, dim: int): return self._op("softmax", axis=dim)
    def log_softmax(self, dim: int): return self._op("log_softmax", axis=dim)

    def to(self, dtype: str) -> Tensor:
        """A copy converted to `dtype` (devices cannot be changed: one device per tensor)."""
        name = dtype_name(dtype)
        return self if name == self.dtype else self._op("cast", dtype=name)

    def float(self): return self.to("f32")
    def double(self): return self.to("f64")
    def long(self): return self.to("i64")
    def int(self): return self.to("i32")

    def _reduce(self, op: str, dim, keepdim: bool) -> Tensor:
        axes = tuple(range(self.ndim)) if dim is None else tuple(np.atleast_1d(dim).tolist())
        return self._op(op, what=op, axes=axes, keepdims=bool(keepdim))

    def sum(self, dim=None, keepdim: bool = False): return self._reduce("reduce_sum", dim, keepdim)
    def mean(self, dim=None, keepdim: bool = False): return self._reduce("reduce_mean", dim, keepdim)
    def amax(self, dim=None, keepdim: bool = False): return self._reduce("reduce_max", dim, keepdim)

    def max(self, dim=None, keepdim: bool = False) -> Tensor:
        """The maximum (over `dim`): values only, without PyTorch's indices."""
        return self._reduce("reduce_max", dim, keepdim)

    def expand(self, *shape) -> Tensor:
        """`shape` by broadcasting (a new value, not a view: writing to it is a plain write)."""
        dims = _dims(shape)
        dims = tuple(s if d == -1 else d for d, s in zip(dims, (None,) * (len(dims) - self.ndim) + self.shape))
        return self._op("broadcast_to", shape=dims)

    def detach(self) -> Tensor:
        """An alias of the same base that autograd does not track."""
        return Tensor(self._base, self._steps, self.shape, self.dtype, detached=True)

    def clone(self) -> Tensor:
        """A new base holding this value (writes to either do not reach the other)."""
        return self._op("clone")

    # --- views ------------------------------------------------------------------------
    def _view(self, step: tuple) -> Tensor:
        op, params = views.step_params(step)
        node = record(op, [self.node], params)
        return Tensor(self._base, self._steps + (step,), node.shape, node.dtype, detached=self._detached)

    def reshape(self, *shape) -> Tensor:
        dims = list(_dims(shape))
        if dims.count(-1) == 1:
            known = math.prod(d for d in dims if d != -1)
            dims[dims.index(-1)] = self.numel() // known if known else 0
        if math.prod(dims) != self.numel():
            raise BuildError(f"reshape: {describe(self)} has {self.numel()} elements, shape {tuple(dims)} has {math.prod(dims)}")
        return self if tuple(dims) == self.shape else self._view(("reshape", tuple(dims)))

    view = reshape

    def flatten(self) -> Tensor:
        return self.reshape(-1)

    def unsqueeze(self, dim: int) -> Tensor:
        dim = dim % (self.ndim + 1)
        return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])

    def squeeze(self, dim: int | None = None) -> Tensor:
        axes = [i for i, d in enumerate(self.shape) if d == 1 and (dim is None or i == dim % self.ndim)]
        return self.reshape(tuple(d for i, d in enumerate(self.shape) if i not in axes))

    def permute(self, *dims) -> Tensor:
        permutation = tuple(d % self.ndim for d in _dims(dims))
        if sorted(permutation) != list(range(self.ndim)):
            raise BuildError(f"permute: {permutation} is not a permutation of the axes of {describe(self)}")
        return self if permutation == tuple(range(self.ndim)) else self._view(("transpose", permutation))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        permutation = list(range(self.ndim))
        permutation[dim0], permutation[dim1] = permutation[dim1], permutation[dim0]
        return self.permute(permutation)

    @property
    def T(self) -> Tensor:
        return self.permute(tuple(reversed(range(self.ndim))))

    def __getitem__(self, index) -> Tensor:
        starts, limits, steps, kept = views.basic_index(self.shape, index, describe(self))
        view = self
        if (starts, limits, steps) != ((0,) * self.ndim, self.shape, (1,) * self.ndim):
            view = self._view(("slice_", starts, limits, steps))
        return view.reshape(tuple(view.shape[i] for i in kept))

    def __setitem__(self, index, value) -> None:
        self[index].copy_(value)

    # --- in-place ops -----------------------------------------------------------------
    def _assign(self, value: Node, what: str) -> Tensor:
        """Functionalize a write of `value` (broadcast to this view) into the base."""
        base = self._base
        if MODE.checkpoint_depth:
            raise CheckpointImpureRegionError(f"{what} on {describe(self)} inside strata.lazy.checkpoint")
        if base.leaf is not None and MODE.grad_enabled and not self._detached:
            raise LeafMutationError(
                f"{what} on {describe(self)}, a leaf that requires grad (or a view of one): "
                f"do the update under `with strata.lazy.no_grad():`"
            )
        if value.dtype != self.dtype:
            value = record("cast", [value], {"dtype": self.dtype}, what=what)
        if value.shape != self.shape:
            value = record("broadcast_to", [value], {"shape": self.shape}, what=what)
        if self._steps:
            value = record("view_scatter", [base.read(), value], {"steps": self._steps}, what=what)
        if ENGINE.staging is not None:
            ENGINE.staging.wrote(base)
        base.node = value
        base.version += 1
        ENGINE.state_changes += 1
        ENGINE.add_pending(base)
        return self

    def _inplace(self, op: str, other: object) -> Tensor:
        value = self._binary(op, other).node
        self._assign(value, f"{op}_")
        # The op read this base before its own write: that read is not a later modification.
        value.saved = tuple((t, b, b.version if b is self._base else v) for t, b, v in value.saved)
        return self

    def add_(self, other, alpha: float = 1.0) -> Tensor:
        return self._inplace("add", other if alpha == 1.0 else other * alpha)

    def sub_(self, other, alpha: float = 1.0) -> Tensor:
        return self._inplace("sub", other if alpha == 1.0 else other * alpha)

    def mul_(self, other) -> Tensor:
        return self._inplace("mul", other)

    def div_(self, other) -> Tensor:
        return self._inplace("div", other)

    def copy_(self, source) -> Tensor:
        source = source if isinstance(source, Tensor) else Tensor.wrap(_storage(np.asarray(source, _numpy_dtype(self.dtype))), self.device)
        return self._assign(source.node, "copy_")

    def fill_(self, value: float) -> Tensor:
        return self._assign(record("full", [], {"value": value, "shape": self.shape, "dtype": self.dtype}), "fill_")

    def zero_(self) -> Tensor:
        return self.fill_(0.0 if self.dtype.startswith(("f", "bf")) else 0)

    # --- autograd ---------------------------------------------------------------------
    def retain_grad(self) -> None:
        """Keep `.grad` for this non-leaf tensor in later backward passes."""
        if not self.is_leaf:
            autograd.RETAINED.add(self)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool = False) -> None:
        """Schedule the backward pass (lazy: nothing runs until a gradient or a value that
        depends on it is read, or `mark_step()`) and accumulate into `.grad`."""
        cotangent = gradient.node if isinstance(gradient, Tensor) else None
        pairs = autograd.backward(self.node, describe(self), cotangent, retain_graph)
        with autograd.no_grad():
            for holder, grad in pairs:
                if holder.grad is None:
                    holder.grad = Tensor.wrap(grad, holder.device)
                    ENGINE.add_pending(holder.grad._base)
                else:
                    if ENGINE.staging is not None:
                        ENGINE.staging.grad_accumulates(holder)
                    holder.grad._assign(record("add", [holder.grad.node, grad]), "grad accumulation")

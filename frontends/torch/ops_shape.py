"""Translations of shape ops: views and reshapes, transposes, broadcasts, slices, splits,
concatenation and constant padding; and of the ops that compute nothing from a graph
operand's values: factories (constants) and checks of the trace.

Decompositions: split/chunk/unbind → slices, stack → reshape + concat, padding → concat
with constants (negative amounts: slice).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.fx

from strata.frontends import builder as ops
from strata.frontends.builder import Tensor
from strata.frontends.torch.ops_common import axis, out_dtype, out_shape, registrar, reshaped, val
from strata.frontends.torch.values import Const, packet_name

TRANSLATIONS: dict[str, Callable] = {}
"""This module's part of the translation table (ops.py joins the parts)."""
translates = registrar(TRANSLATIONS)


# --- views ------------------------------------------------------------------------


@translates("view", "reshape", "_unsafe_view", "view_copy", "unsqueeze", "squeeze", "flatten",
            "unflatten", "_reshape_alias")  # fmt: skip
def _reshape(cx, node, x, *args, **kwargs):
    return reshaped(cx.tensor(x), out_shape(node))


@translates("permute", "permute_copy")
def _permute(cx, node, x, dims):
    x = cx.tensor(x)
    permutation = [axis(d, x.ndim) for d in dims]
    return x if permutation == list(range(x.ndim)) else ops.transpose(x, permutation)


@translates("transpose", "swapaxes")
def _transpose(cx, node, x, dim0, dim1):
    x = cx.tensor(x)
    permutation = list(range(x.ndim))
    d0, d1 = axis(dim0, x.ndim), axis(dim1, x.ndim)
    permutation[d0], permutation[d1] = permutation[d1], permutation[d0]
    return x if d0 == d1 else ops.transpose(x, permutation)


@translates("t")
def _t(cx, node, x):
    x = cx.tensor(x)
    return x if x.ndim < 2 else ops.transpose(x, list(range(x.ndim))[::-1])


@translates("expand", "expand_copy", "expand_as", "broadcast_to")
def _expand(cx, node, x, *args, **kwargs):
    x = cx.tensor(x)
    shape = out_shape(node)
    return x if x.shape == shape else ops.broadcast_to(x, shape)


# --- slices, splits and concatenation ---------------------------------------------


def _slice(x: Tensor, dim: int, start: int, limit: int, step: int = 1) -> Tensor:
    starts, limits, steps = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[dim], limits[dim], steps[dim] = start, limit, step
    if (start, limit, step) == (0, x.shape[dim], 1):
        return x
    return ops.slice_(x, starts, limits, steps)


@translates("slice", "slice_copy")
def _slice_tensor(cx, node, x, dim=0, start=None, end=None, step=1):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    start, end, step = slice(start, end, step).indices(x.shape[d])
    end = max(end, start)
    return _slice(x, d, start, end, step)


@translates("narrow")
def _narrow(cx, node, x, dim, start, length):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    start = axis(start, x.shape[d])
    return _slice(x, d, start, start + length)


@translates("select", "select_copy")
def _select(cx, node, x, dim, index):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    index = axis(index, x.shape[d])
    return reshaped(_slice(x, d, index, index + 1), out_shape(node))


def _pieces(cx, x: Tensor, dim: int, sizes: list[int]) -> tuple[Tensor, ...]:
    d = axis(dim, x.ndim)
    pieces, start = [], 0
    for size in sizes:
        pieces.append(_slice(x, d, start, start + size))
        start += size
    return tuple(pieces)


@translates("split", "split_with_sizes", "chunk", "tensor_split", "split_copy", "unsafe_split")
def _split(cx, node, x, _sizes, dim=0):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    return _pieces(cx, x, d, [int(v.shape[d]) for v in val(node)])


@translates("unbind")
def _unbind(cx, node, x, dim=0):
    x = cx.tensor(x)
    d = axis(dim, x.ndim)
    return tuple(reshaped(p, tuple(int(s) for s in v.shape)) for p, v in zip(_pieces(cx, x, d, [1] * x.shape[d]), val(node)))


@translates("cat", "concat", "concatenate")
def _cat(cx, node, tensors, dim=0):
    dtype = out_dtype(cx, node)
    inputs = [cx.tensor(t, dtype) for t in tensors]
    inputs = [t for t in inputs if not (t.ndim == 1 and t.shape[0] == 0)] or inputs[:1]
    if len(inputs) == 1:
        return inputs[0]
    return ops.concat(inputs, axis(dim, inputs[0].ndim))


@translates("stack")
def _stack(cx, node, tensors, dim=0):
    dtype = out_dtype(cx, node)
    inputs = [cx.tensor(t, dtype) for t in tensors]
    d = axis(dim, inputs[0].ndim + 1)
    inputs = [reshaped(t, t.shape[:d] + (1,) + t.shape[d:]) for t in inputs]
    return inputs[0] if len(inputs) == 1 else ops.concat(inputs, d)


# --- padding ----------------------------------------------------------------------


def padded(cx, x: Tensor, pads: list[tuple[int, int]], value: float) -> Tensor:
    """x with `value` added before and after each of its last len(pads) axes."""
    for i, (low, high) in enumerate(pads):
        a = x.ndim - len(pads) + i
        parts = []
        for size in (low, None, high):
            if size is None:
                parts.append(x)
            elif size:
                shape = list(x.shape)
                shape[a] = size
                parts.append(cx.tensor(Const(torch.full(shape, value)), x.dtype))
        x = ops.concat(parts, a) if len(parts) > 1 else x
    return x


@translates("constant_pad_nd", "pad")
def _pad(cx, node, x, pad, *rest, **kwargs):
    """Constant padding (negative amounts crop): pad = (last low, last high, next low, …)."""
    if packet_name(node.target) == "constant_pad_nd":  # (x, pad, value=0)
        mode, value = "constant", rest[0] if rest else kwargs.get("value", 0)
    else:  # pad(x, pad, mode="constant", value=None)
        mode = rest[0] if rest else kwargs.get("mode", "constant")
        value = rest[1] if len(rest) > 1 else kwargs.get("value")
    if mode != "constant":
        raise cx.error(f"padding mode {mode!r} is not supported (only 'constant')")
    x = cx.tensor(x, out_dtype(cx, node))
    count = len(pad) // 2
    pads = [(pad[2 * (count - 1 - i)], pad[2 * (count - 1 - i) + 1]) for i in range(count)]  # first axis first
    crops = [(max(-low, 0), max(-high, 0)) for low, high in pads]
    if any(a or b for a, b in crops):
        lead = x.ndim - count
        starts = [0] * lead + [a for a, _ in crops]
        limits = list(x.shape[:lead]) + [size - b for size, (_, b) in zip(x.shape[lead:], crops)]
        x = ops.slice_(x, starts, limits)
    return padded(cx, x, [(max(low, 0), max(high, 0)) for low, high in pads], float(value or 0))


# --- constants and checks of the trace --------------------------------------------


@translates("zeros_like", "ones_like", "full_like", "new_zeros", "new_ones", "new_full",
            "scalar_tensor", "full", "zeros", "ones", "arange", "eye", "linspace")  # fmt: skip
def _factory(cx, node, *args, **kwargs):
    """Ops whose result does not depend on a graph operand's values: evaluated by PyTorch
    on stand-ins of the operand's shape and type (folded when all operands are known)."""

    def stand_in(n: torch.fx.Node):
        value = cx.values[n]
        if isinstance(value, Const):
            return value.value
        meta = val(n)
        return torch.zeros(tuple(meta.shape), dtype=meta.dtype)

    args = torch.fx.node.map_arg(node.args, stand_in)
    kwargs = torch.fx.node.map_arg(node.kwargs, stand_in)
    return Const(node.target(*args, **kwargs))


@translates("_assert_tensor_metadata", "_assert_scalar", "_assert_async", "sym_constrain_range",
            "sym_constrain_range_for_size", "_functional_assert_async")  # fmt: skip
def _assertion(cx, node, *args, **kwargs):
    return None

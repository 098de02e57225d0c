"""Translations of convolutions and pooling, built from strided slices of the padded
input: a convolution is one matmul over patches (im2col) per group of channels, max and
average pooling the maximum or sum of the kernel's slices."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from strata.frontends import builder as ops
from strata.frontends.builder import Tensor
from strata.frontends.torch.ops_common import out_dtype, out_shape, registrar, reshaped, val
from strata.frontends.torch.ops_shape import padded
from strata.frontends.torch.values import packet_name

TRANSLATIONS: dict[str, Callable] = {}
"""This module's part of the translation table (ops.py joins the parts)."""
translates = registrar(TRANSLATIONS)


def _per_axis(value, count: int, name: str, cx) -> list[int]:
    values = list(value) if isinstance(value, (list, tuple)) else [value] * count
    if len(values) == 1:
        values *= count
    if len(values) != count or not all(isinstance(v, int) for v in values):
        raise cx.error(f"{name} {value!r} does not give one int per spatial axis")
    return values


def _windows(x: Tensor, kernel, stride, dilation, out_sizes):
    """For each kernel offset (row-major), the strided slice of x's last axes that the
    offset meets in every output position: [..., *out_sizes]."""
    count = len(kernel)
    lead = x.ndim - count
    for offset in itertools.product(*(range(k) for k in kernel)):
        starts = [0] * lead + [o * d for o, d in zip(offset, dilation)]
        limits = list(x.shape[:lead]) + [o * d + (n - 1) * s + 1 for o, d, n, s in zip(offset, dilation, out_sizes, stride)]
        yield ops.slice_(x, starts, limits, [1] * lead + list(stride))


def _same_padding(kernel, dilation) -> list[tuple[int, int]]:
    return [((d * (k - 1)) // 2, d * (k - 1) - (d * (k - 1)) // 2) for k, d in zip(kernel, dilation)]


@translates("conv1d", "conv2d", "conv3d", "convolution", "_convolution")
def _convolution(cx, node, x, weight, bias=None, stride=1, padding=0, dilation=1, *rest):
    """Convolution as one matmul over patches (im2col): the kernel's shifted strided
    slices of the padded input are concatenated along the channels, then multiplied by
    the weight reshaped to [out channels, kernel positions × in channels]."""
    if packet_name(node.target) in ("convolution", "_convolution"):
        transposed, groups = rest[0], rest[2]
        if transposed:
            raise cx.error("transposed convolutions are not supported")
    else:
        groups = rest[0] if rest else 1
    dtype = out_dtype(cx, node)
    x, w = cx.tensor(x, dtype), cx.tensor(weight, dtype)
    count = w.ndim - 2
    kernel = list(w.shape[2:])
    stride, dilation = _per_axis(stride, count, "stride", cx), _per_axis(dilation, count, "dilation", cx)
    if padding == "valid":
        pads = [(0, 0)] * count
    elif padding == "same":
        pads = _same_padding(kernel, dilation)
    else:
        pads = [(p, p) for p in _per_axis(padding, count, "padding", cx)]
    if x.ndim == count + 1:  # unbatched
        x = reshaped(x, (1, *x.shape))
    out_sizes = list(out_shape(node)[-count:])
    x = padded(cx, x, pads, 0.0)
    b = cx.tensor(bias, dtype) if bias is not None else None
    if groups == 1:
        y = _conv_matmul(cx, x, w, b, kernel, stride, dilation, out_sizes)
    else:  # one convolution per group of channels, concatenated
        c, o = x.shape[1] // groups, w.shape[0] // groups
        parts = []
        for g in range(groups):
            xg = ops.slice_(x, [0, g * c] + [0] * count, [x.shape[0], (g + 1) * c, *x.shape[2:]])
            wg = ops.slice_(w, [g * o] + [0] * (count + 1), [(g + 1) * o, *w.shape[1:]])
            bg = ops.slice_(b, [g * o], [(g + 1) * o]) if b is not None else None
            parts.append(_conv_matmul(cx, xg, wg, bg, kernel, stride, dilation, out_sizes))
        y = ops.concat(parts, 1)
    return reshaped(y, out_shape(node))


def _conv_matmul(cx, x: Tensor, w: Tensor, bias, kernel, stride, dilation, out_sizes) -> Tensor:
    """One convolution of padded x [N, C, *] with w [O, C, *kernel] (+ bias [O]):
    [N, O, *out_sizes]; the bias is added to the matmul's result (its fused epilogue)."""
    count = len(kernel)
    n, c = x.shape[0], x.shape[1]
    channels_last = [0, *range(2, count + 2), 1]
    columns = [ops.transpose(window, channels_last) for window in _windows(x, kernel, stride, dilation, out_sizes)]
    patches = ops.concat(columns, count + 1) if len(columns) > 1 else columns[0]  # [N, *out, K·C]
    width = math.prod(kernel) * c
    rows = reshaped(patches, (n * math.prod(out_sizes), width))
    matrix = reshaped(ops.transpose(w, channels_last), (w.shape[0], width))  # [O, K·C], offset-major
    y = ops.matmul(rows, matrix, transpose_b=True)
    if bias is not None:
        y = ops.add(y, bias)
    y = reshaped(y, (n, *out_sizes, w.shape[0]))
    return ops.transpose(y, [0, count + 1, *range(1, count + 1)])


@translates("max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "avg_pool1d", "avg_pool2d", "avg_pool3d")  # fmt: skip
def _pool(cx, node, x, kernel_size, stride=None, padding=0, *rest):
    """The maximum (or mean) of the kernel's shifted strided slices of the padded input."""
    name = packet_name(node.target)
    maximum = name.startswith("max")
    shape = out_shape(node) if not isinstance(val(node), (tuple, list)) else tuple(int(d) for d in val(node)[0].shape)
    x = cx.tensor(x, out_dtype(cx, node))
    count = int(name.split("pool")[1][0])
    kernel = _per_axis(kernel_size, count, "kernel_size", cx)
    stride = _per_axis(stride or kernel, count, "stride", cx)
    pads = [(p, p) for p in _per_axis(padding, count, "padding", cx)]
    if maximum:
        dilation = _per_axis(rest[0] if rest else 1, count, "dilation", cx)
    else:
        dilation = [1] * count
        count_include_pad = rest[1] if len(rest) > 1 else True
        divisor = rest[2] if len(rest) > 2 else None
        if any(p for p, _ in pads) and not count_include_pad and divisor is None:
            raise cx.error("average pooling that excludes padding from the count is not supported")
    out_sizes = list(shape[-count:])
    # ceil_mode: the last windows may run past the padded input
    sizes = [size + low + high for size, (low, high) in zip(x.shape[-count:], pads)]
    extents = [(n - 1) * s + d * (k - 1) + 1 for n, s, d, k in zip(out_sizes, stride, dilation, kernel)]
    if any(e > size for e, size in zip(extents, sizes)):
        if not maximum:
            raise cx.error("average pooling with ceil_mode windows past the input is not supported")
        pads = [(low, high + max(0, e - size)) for (low, high), e, size in zip(pads, extents, sizes)]
    x = padded(cx, x, pads, float("-inf") if maximum else 0.0)
    result = None
    for window in _windows(x, kernel, stride, dilation, out_sizes):
        result = window if result is None else (ops.maximum if maximum else ops.add)(result, window)
    if not maximum:
        result = ops.scale(result, 1.0 / (divisor or math.prod(kernel)))
    result = reshaped(result, shape)
    if name.endswith("with_indices"):
        return result, None
    return result


@translates("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "_adaptive_avg_pool2d",
            "_adaptive_avg_pool3d")  # fmt: skip
def _adaptive_avg_pool(cx, node, x, output_size):
    """Means over equal windows: the input's spatial sizes must be multiples of the output's."""
    x = cx.tensor(x, out_dtype(cx, node))
    out = out_shape(node)
    count = len(output_size) if isinstance(output_size, (list, tuple)) else 1
    sizes, targets = x.shape[-count:], out[-count:]
    if any(s % t for s, t in zip(sizes, targets)):
        raise cx.error(f"adaptive pooling from {sizes} to {targets} has unequal windows (not supported)")
    if all(t == 1 for t in targets):
        return reshaped(ops.reduce_mean(x, list(range(x.ndim - count, x.ndim)), True), out)
    kernel = [s // t for s, t in zip(sizes, targets)]
    result = None
    for window in _windows(x, kernel, kernel, [1] * count, list(targets)):
        result = window if result is None else ops.add(result, window)
    return reshaped(ops.scale(result, 1.0 / math.prod(kernel)), out)

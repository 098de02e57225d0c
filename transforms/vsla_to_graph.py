"""lower-vsla-to-graph: every vsla op (dialects/vsla.py) as graph ops, so that fusion,
autodiff, memory planning and every target apply to variable-shape programs.

    %y = vsla.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  becomes
    %h = graph.slice %a {starts = [0], limits = [2], steps = [1]} : (tensor<3xf32>) -> tensor<2xf32>
    %s = graph.add %h, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t = graph.slice %a {starts = [2], limits = [3], steps = [1]} : (tensor<3xf32>) -> tensor<1xf32>
    %y = graph.concat %s, %t {axis = 0 : i64} : (tensor<2xf32>, tensor<1xf32>) -> tensor<3xf32>

- **Ambient promotion** pads neither operand: a sum is split along each axis where the
  extents differ into the common part (summed, recursively) and the longer operand's tail
  (negated when it is a subtracted one), concatenated; zeros are written only where
  neither operand reaches. Slices are views and the concat's parts are computed in place
  (lower-graph-to-tile), so each operand is read once and the result written once. The
  Hadamard product multiplies the common part and extends it with zeros; stack extends
  each input with zeros.
- **Kronecker** (Model B) is the outer product by broadcasting, flattened: [m, 1] · [1, n].
- **Convolution** (Model A) runs in f64 and rounds once. *Direct*: the outer product P of
  the shorter operand (p) and the longer (q), each row i shifted right by i by a reshape of
  P extended with p zero columns (row-major flattening does the shift), then a sum over
  the rows: O(p·q) work and memory. *FFT*: both operands zero-extended to L =
  next_pow2(m + n - 1) and transformed together by log2(L) radix-2 decimation-in-frequency
  stages ([B, n] -> [2B, n / 2]: sums, and differences times the twiddles e^(-2πij/n));
  the spectra (in bit-reversed order) multiplied; then the inverse stages in the opposite
  order (each halves, so the inverse is scaled by 1/L), which also undo the bit reversal.
  Twiddle tables are computed once per L (`twiddles`, an lru_cache) and emitted once per
  function and L. "auto" takes the FFT when the shorter operand has at least
  `fft_threshold` elements (benchmarks/vsla_conv.py measures the crossover) or the direct
  path's outer product would pass DIRECT_MAX_ELEMENTS.
- **stack** zero-extends each input to the ambient shape and concatenates along a new
  leading axis; **window** is a reshape (after dropping the incomplete last window);
  **sum** and **mean** accumulate in f64; the unary ops are their graph namesakes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from math import prod

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, Float64Type, FunctionType, ModuleOp, StringAttr, i1, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from strata.dialects import graph, vsla
from strata.dialects.graph_base import shape_of, tensor
from strata.transforms.vjp_context import GraphEmitter

RUNTIME_INPUTS = "vsla.runtime_inputs"
FFT_THRESHOLD = 512
DIRECT_MAX_ELEMENTS = 1 << 22
""""auto" never materializes a direct convolution's p x (p + q) outer product past this
many elements (32 MiB of f64): a short kernel over a long signal takes the FFT."""
"""The shorter operand's length from which "auto" convolves by FFT."""
F64 = Float64Type()


def next_power_of_two(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


@lru_cache(maxsize=64)
def twiddles(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(cos, -sin) of 2πj/n for j < n/2: the real and imaginary parts of e^(-2πij/n), f64."""
    angles = 2 * np.pi * np.arange(n // 2) / n
    return np.cos(angles), -np.sin(angles)


@dataclass
class RuntimeInputs:
    """Capacity mode: the arguments a function gains for what depends on the logical
    shapes of one call, each described as "kind:op" (op: the vsla op's position among the
    function's vsla ops). Kinds: `mask` (i1, the op's result shape: true on the logical
    part), `kron_index` (i64, where each element of the Kronecker product comes from in the
    flattened outer product; the element past its end, a zero, for the slack) and
    `inverse_count` (f64, rank 0: 1 / the reduced axis's logical extent, or 0)."""

    function: func.FuncOp
    descriptions: list[str] = field(default_factory=list)

    def add(self, kind: str, op_index: int, t) -> SSAValue:
        block = self.function.body.block
        argument = block.insert_arg(t, len(block.args))
        self.function.function_type = FunctionType.from_lists(
            [a.type for a in block.args], list(self.function.function_type.outputs.data)
        )
        description = f"{kind}:{op_index}"
        if self.function.arg_attrs is not None:
            named = DictionaryAttr({"graph.name": StringAttr(description)})
            self.function.arg_attrs = ArrayAttr([*self.function.arg_attrs.data, named])
        self.descriptions.append(description)
        return argument


@dataclass
class VslaLowering:
    """Emits the graph ops standing for one vsla op in front of it."""

    emitter: GraphEmitter
    block: Block
    fft_threshold: int
    twiddle_values: dict[tuple[int, int], tuple[SSAValue, SSAValue]] = field(default_factory=dict)
    """(id of the block, n) -> the twiddle constants already emitted in that block."""
    runtime: RuntimeInputs | None = None
    """Capacity mode (LowerVslaToGraphPass.capacity): where the call's logical shapes come in."""
    op_index: int = 0

    def masked(self, y: SSAValue) -> SSAValue:
        """In capacity mode, y with its slack set to zero (a mask input); else y."""
        if self.runtime is None:
            return y
        mask = self.runtime.add("mask", self.op_index, tensor(shape_of(y.type), i1))
        return self.emit(graph.SelectOp, [mask, y, self.emitter.scalar(0.0, y.type.element_type)])

    def emit(self, op_type, operands, result_type=None, **params) -> SSAValue:
        return self.emitter.emit(op_type, operands, result_type, **params)

    def zeros(self, shape: Sequence[int], element) -> SSAValue:
        return self.emitter.full(0.0, tensor(shape, element))

    def zero_extend(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        """x with trailing zeros up to `shape`, axis by axis."""
        current = list(shape_of(x.type))
        for axis, target in enumerate(shape):
            if target > current[axis]:
                pad = [*current[:axis], target - current[axis], *current[axis + 1:]]
                x = self.emit(graph.ConcatOp, [x, self.zeros(pad, x.type.element_type)], axis=axis)
                current[axis] = target
        return x

    def leading(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        """x's leading block of `shape` (a slice, or x itself)."""
        if shape_of(x.type) == tuple(shape):
            return x
        rank = len(shape)
        return self.emit(graph.SliceOp, [x], starts=(0,) * rank, limits=tuple(shape), steps=(1,) * rank)

    def cast(self, x: SSAValue, element) -> SSAValue:
        if x.type.element_type == element:
            return x
        return self.emit(graph.CastOp, [x], tensor(shape_of(x.type), element))

    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        return self.emitter.reshape(x, shape)

    # -- the semirings --------------------------------------------------------------

    def outer(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """The outer product along the last axis, [..., m] x [..., n] -> [..., m, n]."""
        *lead, m = shape_of(a.type)
        n = shape_of(b.type)[-1]
        return self.emit(graph.MulOp, [self.reshape(a, (*lead, m, 1)), self.reshape(b, (*lead, 1, n))])

    def direct_conv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Σ over anti-diagonals of the outer product (module docstring), shorter first;
        leading axes are a batch."""
        if shape_of(a.type)[-1] > shape_of(b.type)[-1]:
            a, b = b, a
        *lead, p = shape_of(a.type)
        q = shape_of(b.type)[-1]
        products = self.emit(graph.ConcatOp, [self.outer(a, b), self.zeros((*lead, p, p), F64)], axis=len(lead) + 1)
        flat = self.reshape(products, (*lead, p * (q + p)))
        shifted = self.reshape(self.leading(flat, (*lead, p * (q + p - 1))), (*lead, p, q + p - 1))
        return self.emit(graph.ReduceSumOp, [shifted], axes=(len(lead),), keepdims=False)

    def twiddle(self, n: int) -> tuple[SSAValue, SSAValue]:
        key = (id(self.block), n)
        if key not in self.twiddle_values:
            real, imaginary = twiddles(n)
            t = tensor((n // 2,), F64)
            self.twiddle_values[key] = (self.emitter.constant(real, t), self.emitter.constant(imaginary, t))
        return self.twiddle_values[key]

    def halves(self, x: SSAValue, batch: int, half: int) -> tuple[SSAValue, SSAValue]:
        """Rows [batch, 2 * half] split into their first and second halves, [batch, half] each."""
        pairs = self.reshape(x, (batch, 2, half))
        first, second = (
            self.emit(graph.SliceOp, [pairs], starts=(0, i, 0), limits=(batch, i + 1, half), steps=(1, 1, 1))
            for i in (0, 1)
        )
        return self.reshape(first, (batch, half)), self.reshape(second, (batch, half))

    def butterfly(self, x, batch: int, n: int) -> tuple[SSAValue, SSAValue]:
        """One forward stage on (re, im) rows [batch, n]: [2 batch, n / 2]."""
        (a_re, b_re), (a_im, b_im) = (self.halves(part, batch, n // 2) for part in x)
        w_re, w_im = self.twiddle(n)
        e = self.emitter
        d_re, d_im = e.sub(a_re, b_re), e.sub(a_im, b_im)
        v_re = e.sub(e.mul(d_re, w_re), e.mul(d_im, w_im))
        v_im = e.add(e.mul(d_re, w_im), e.mul(d_im, w_re))
        return tuple(self.interleave(e.add(a, b), v, batch, n // 2) for a, b, v in ((a_re, b_re, v_re), (a_im, b_im, v_im)))

    def interleave(self, u: SSAValue, v: SSAValue, batch: int, half: int) -> SSAValue:
        """Rows u and v of [batch, half] as rows 2i and 2i + 1 of [2 batch, half]."""
        pairs = self.emit(graph.ConcatOp, [self.reshape(u, (batch, 1, half)), self.reshape(v, (batch, 1, half))], axis=1)
        return self.reshape(pairs, (2 * batch, half))

    def inverse_butterfly(self, y, batch: int, n: int) -> tuple[SSAValue, SSAValue]:
        """The inverse of `butterfly` on rows [2 batch, n / 2]: [batch, n], halved."""
        half = n // 2
        (u_re, v_re), (u_im, v_im) = (self.halves(self.reshape(part, (batch, n)), batch, half) for part in y)
        w_re, w_im = self.twiddle(n)
        e = self.emitter
        vw_re = e.add(e.mul(v_re, w_re), e.mul(v_im, w_im))
        vw_im = e.sub(e.mul(v_im, w_re), e.mul(v_re, w_im))
        return tuple(
            self.emit(graph.ConcatOp, [e.scale(e.add(u, vw), 0.5), e.scale(e.sub(u, vw), 0.5)], axis=1)
            for u, vw in ((u_re, vw_re), (u_im, vw_im))
        )

    def fft_conv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Both operands' rows (every leading index, a's then b's) transformed as one batch."""
        *lead, m = shape_of(a.type)
        n = shape_of(b.type)[-1]
        rows, length = prod(lead), next_power_of_two(m + n - 1)
        both = self.emit(graph.ConcatOp, [self.reshape(self.zero_extend(x, (*lead, length)), (rows, length)) for x in (a, b)], axis=0)
        x = (both, self.zeros((2 * rows, length), F64))
        batch, size = 2 * rows, length
        while size > 1:
            x = self.butterfly(x, batch, size)
            batch, size = 2 * batch, size // 2
        (fa_re, fb_re), (fa_im, fb_im) = (self.halves(self.reshape(part, (1, 2 * rows * length)), 1, rows * length) for part in x)
        e = self.emitter
        y = (e.sub(e.mul(fa_re, fb_re), e.mul(fa_im, fb_im)), e.add(e.mul(fa_re, fb_im), e.mul(fa_im, fb_re)))
        batch, size = rows * length // 2, 2
        while size <= length:
            y = self.inverse_butterfly(y, batch, size)
            batch, size = batch // 2, size * 2
        rows_out = self.leading(self.reshape(y[0], (rows, length)), (rows, m + n - 1))  # (no stages when L = 1)
        return self.reshape(rows_out, (*lead, m + n - 1))

    def conv(self, op: vsla.ConvOp) -> SSAValue:
        m, n = shape_of(op.lhs.type)[-1], shape_of(op.rhs.type)[-1]
        element = op.result.type.element_type
        if 0 in shape_of(op.result.type):
            return self.zeros(shape_of(op.result.type), element)
        method = op.params().get("method", "auto")
        if method == "auto":
            p, q = min(m, n), max(m, n)
            method = "fft" if p >= self.fft_threshold or p * (p + q) > DIRECT_MAX_ELEMENTS else "direct"
        a, b = self.cast(op.lhs, F64), self.cast(op.rhs, F64)
        if method == "fft":  # rounding leaves ~1e-16 in the slack
            return self.cast(self.masked(self.fft_conv(a, b)), element)
        return self.cast(self.direct_conv(a, b), element)

    def kron(self, op: vsla.KronOp) -> SSAValue:
        (m,), (n,) = shape_of(op.lhs.type), shape_of(op.rhs.type)
        if m == 0 or n == 0:
            return self.zeros((0,), op.result.type.element_type)
        flat = self.reshape(self.outer(op.lhs, op.rhs), (m * n,))
        if self.runtime is None:
            return flat
        # The logical n sets the layout: gather element i·n + j from i·N + j (N = capacity).
        index = self.runtime.add("kron_index", self.op_index, tensor((m * n,), i64))
        table = self.reshape(self.zero_extend(flat, (m * n + 1,)), (m * n + 1, 1))
        return self.reshape(self.emit(graph.EmbeddingOp, [table, index]), (m * n,))

    # -- ambient and structural ops ------------------------------------------------------

    def ambient_binary(self, op: vsla.AmbientBinaryOp) -> SSAValue:
        shape = shape_of(op.result.type)
        if isinstance(op, vsla.HadamardOp):
            common = tuple(min(a, b) for a, b in zip(shape_of(op.lhs.type), shape_of(op.rhs.type)))
            product = self.emit(graph.MulOp, [self.leading(op.lhs, common), self.leading(op.rhs, common)])
            return self.zero_extend(product, shape)
        return self.ambient_sum(op.lhs, op.rhs, isinstance(op, vsla.SubOp), 0)

    def ambient_sum(self, a: SSAValue, b: SSAValue, subtract: bool, axis: int) -> SSAValue:
        """a ± b at the ambient shape from `axis` on, neither operand padded: along each
        axis the common leading part is a ± b (recursively), the rest the longer operand's
        tail (negated for a subtracted b), zero-extended only where neither operand reaches."""
        a_shape, b_shape = shape_of(a.type), shape_of(b.type)
        if axis == len(a_shape):
            return self.emit(graph.SubOp if subtract else graph.AddOp, [a, b])
        if a_shape[axis] == b_shape[axis]:
            return self.ambient_sum(a, b, subtract, axis + 1)
        common = min(a_shape[axis], b_shape[axis])
        longer, sign = (a, False) if a_shape[axis] > b_shape[axis] else (b, subtract)
        head = self.ambient_sum(self.cut(a, axis, 0, common), self.cut(b, axis, 0, common), subtract, axis + 1)
        tail = self.cut(longer, axis, common, shape_of(longer.type)[axis])
        if sign:
            tail = self.emitter.neg(tail)
        ambient = [max(x, y) for x, y in zip(a_shape, b_shape)]
        tail = self.zero_extend(tail, [*shape_of(tail.type)[:axis + 1], *ambient[axis + 1:]])
        return self.emit(graph.ConcatOp, [head, tail], axis=axis)

    def cut(self, x: SSAValue, axis: int, start: int, limit: int) -> SSAValue:
        """x[start:limit] along `axis` (a slice, or x itself)."""
        shape = shape_of(x.type)
        if (start, limit) == (0, shape[axis]):
            return x
        starts, limits = [0] * len(shape), list(shape)
        starts[axis], limits[axis] = start, limit
        return self.emit(graph.SliceOp, [x], starts=tuple(starts), limits=tuple(limits), steps=(1,) * len(shape))

    def stack(self, op: vsla.StackOp) -> SSAValue:
        item = shape_of(op.result.type)[1:]
        rows = [self.reshape(self.zero_extend(x, item), (1, *item)) for x in op.inputs]
        return rows[0] if len(rows) == 1 else self.emit(graph.ConcatOp, rows, axis=0)

    def window(self, op: vsla.WindowOp) -> SSAValue:
        """Side-by-side windows are a reshape of the whole ones; overlapping (or spaced)
        ones a gather of the stream's items by a constant index [count, size]."""
        count, size, *item = shape_of(op.result.type)
        stride = op.params().get("stride", size)
        if stride == size or count <= 1:
            whole = self.leading(op.x, (count * size, *item))
            return self.masked(self.reshape(whole, (count, size, *item)))
        items = shape_of(op.x.type)[0]
        width = prod(item)
        starts = np.arange(count)[:, None] * stride + np.arange(size)[None, :]
        ids = self.emitter.constant(starts, tensor((count, size), i64))
        gathered = self.emit(graph.EmbeddingOp, [self.reshape(op.x, (items, width)), ids])
        return self.masked(self.reshape(gathered, (count, size, *item)))

    def reduce(self, op: vsla.ReduceOp) -> SSAValue:
        element = op.result.type.element_type
        axis = op.params()["axis"] % len(shape_of(op.x.type))
        if shape_of(op.x.type)[axis] == 0:
            return self.zeros(shape_of(op.result.type), element)
        graph_op = graph.ReduceSumOp if isinstance(op, vsla.SumOp) or self.runtime else graph.ReduceMeanOp
        reduced = self.emit(graph_op, [self.cast(op.x, F64)], axes=(axis,), keepdims=False)
        if self.runtime is not None and isinstance(op, vsla.MeanOp):  # over the logical extent
            reduced = self.emitter.mul(reduced, self.runtime.add("inverse_count", self.op_index, tensor((), F64)))
        return self.cast(reduced, element)


ZERO_AT_ZERO = (vsla.ReluOp, vsla.TanhOp, vsla.GeluOp)
"""Unary ops with f(0) = 0: their slack stays zero without a mask."""


def lower_unary(lowering: VslaLowering, op: vsla.UnaryOp) -> SSAValue:
    y = lowering.emit(UNARY[type(op)], [op.x])
    return y if isinstance(op, ZERO_AT_ZERO) else lowering.masked(y)


UNARY = {
    vsla.ReluOp: graph.ReluOp, vsla.ExpOp: graph.ExpOp, vsla.LogOp: graph.LogOp, vsla.TanhOp: graph.TanhOp,
    vsla.SigmoidOp: graph.SigmoidOp, vsla.GeluOp: graph.GeluOp,
}  # fmt: skip
LOWERINGS: dict[type[Operation], Callable[[VslaLowering, Operation], SSAValue]] = {
    vsla.AddOp: VslaLowering.ambient_binary,
    vsla.SubOp: VslaLowering.ambient_binary,
    vsla.HadamardOp: VslaLowering.ambient_binary,
    vsla.ScaleOp: lambda lowering, op: lowering.emitter.scale(op.x, op.params()["factor"]),
    vsla.ConvOp: VslaLowering.conv,
    vsla.KronOp: VslaLowering.kron,
    vsla.StackOp: VslaLowering.stack,
    vsla.WindowOp: VslaLowering.window,
    vsla.SumOp: VslaLowering.reduce,
    vsla.MeanOp: VslaLowering.reduce,
    **{v: lower_unary for v in UNARY},
}


@dataclass(frozen=True)
class LowerVslaToGraphPass(ModulePass):
    """Rewrite every vsla op into graph ops (see module docstring)."""

    name = "lower-vsla-to-graph"

    fft_threshold: int = FFT_THRESHOLD
    """conv{method="auto"} takes the FFT from this many elements of the shorter operand."""
    capacity: bool = False
    """The shapes are capacities: the program runs on any logical shapes within them, its
    inputs zero-extended to the capacity. Where the slack would stop being zero or the
    logical shape matters (exp, log, sigmoid, FFT conv, window, mean, kron), the function
    gains arguments for the call's logical shapes, listed in its `vsla.runtime_inputs`
    attribute (RuntimeInputs; strata.vsla.compile fills them)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        twiddle_values: dict = {}
        for function in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            runtime = RuntimeInputs(function) if self.capacity else None
            vsla_ops = [o for o in function.walk() if isinstance(o, vsla.VslaOp)]
            for index, vop in enumerate(vsla_ops):
                block = vop.parent_block()
                emitter = GraphEmitter(lambda new, at=vop, block=block: block.insert_op_before(new, at))
                lowering = VslaLowering(emitter, block, self.fft_threshold, twiddle_values, runtime, index)
                result = LOWERINGS[type(vop)](lowering, vop)
                vop.results[0].replace_all_uses_with(result)
                block.erase_op(vop)
            if runtime is not None and vsla_ops:
                function.attributes[RUNTIME_INPUTS] = ArrayAttr([StringAttr(d) for d in runtime.descriptions])


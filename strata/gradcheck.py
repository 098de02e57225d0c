"""Gradient checking: @f_grad against central finite differences, in f64.

    report = check_gradients(module_or_text)      # @f_grad made by autodiff if missing
    print(report); assert report.ok()             # worst relative error per argument

The program is first promoted to f64 (every float tensor type, constants included), so
both sides run at double precision on the reference interpreter. With random cotangents
c_j for f's results, the scalar L(x) = Σ_j <c_j, f_j(x)> has gradient @f_grad(x, c); each
probed element i of a float argument is compared with (L(x + ε e_i) - L(x - ε e_i)) / 2ε.
An argument's error is max_i |ad_i - fd_i| / max(max |ad|, max |fd|, 1e-6): the worst
deviation relative to that argument's largest gradient entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import Float64Type, ModuleOp, TensorType
from xdsl.rewriter import Rewriter

from strata.dialects import graph
from strata.dialects.graph_base import is_float
from strata.dialects.context import as_module, verify
from strata.support.dtypes import dense_to_numpy, numpy_to_dense, tensor_dtype
from strata.runtime.reference.interpreter import argument_label, find_entry, run_function
from strata.transforms.autodiff import DIFFERENTIATE, differentiate, gradient_name

DEFAULT_TOLERANCE = 1e-6
GRADIENT_FLOOR = 1e-6
"""Below this, an argument's gradient counts as zero and the error is absolute."""


@dataclass
class ArgumentCheck:
    index: int
    label: str
    relative_error: float
    max_abs_error: float
    probed: int

    def __str__(self) -> str:
        return (
            f"{self.label}: worst relative error {self.relative_error:.3e} "
            f"(max |Δ| {self.max_abs_error:.3e}, {self.probed} elements probed)"
        )


@dataclass
class GradientReport:
    function: str
    arguments: list[ArgumentCheck]

    @property
    def worst(self) -> float:
        return max((a.relative_error for a in self.arguments), default=0.0)

    def ok(self, tolerance: float = DEFAULT_TOLERANCE) -> bool:
        return self.worst <= tolerance

    def __str__(self) -> str:
        lines = [f"gradient check of @{self.function} (f64, central differences):"]
        lines += [f"  {a}" for a in self.arguments] or ["  no floating-point arguments"]
        return "\n".join(lines)


def promote_to_f64(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with every float tensor type (and constant) made f64."""
    promoted = module.clone()
    for op in promoted.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    _promote_value(arg)
        for result in op.results:
            _promote_value(result)
        if isinstance(op, graph.ConstantOp):
            op.properties["value"] = numpy_to_dense(dense_to_numpy(op.value), op.results[0].type)
        if isinstance(op, func.FuncOp):
            op.function_type = func.FunctionType.from_lists(
                [_f64(t) for t in op.function_type.inputs.data],
                [_f64(t) for t in op.function_type.outputs.data],
            )
    verify(promoted)
    return promoted


def _f64(t: TensorType) -> TensorType:
    if isinstance(t, TensorType) and is_float(t.element_type):
        return TensorType(Float64Type(), t.get_shape())
    return t


def _promote_value(value) -> None:
    if _f64(value.type) != value.type:
        Rewriter.replace_value_with_new_type(value, _f64(value.type))


def differentiated_function(module: ModuleOp, entry: str | None) -> func.FuncOp:
    """@entry; by default the first function marked graph.differentiate, else the first."""
    if entry is not None:
        return find_entry(module, entry)
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    marked = [f for f in functions if DIFFERENTIATE in f.attributes]
    return (marked or functions or [find_entry(module)])[0]


def index_bound(function: func.FuncOp, index: int) -> int:
    """Integer arguments are drawn in [0, bound): the table or class count where the
    argument is embedding ids or cross_entropy labels, else 8."""
    bounds = [8]
    for use in function.args[index].uses:
        if isinstance(use.operation, graph.EmbeddingOp):
            bounds.append(use.operation.table.type.get_shape()[0])
        if isinstance(use.operation, graph.CrossEntropyOp):
            bounds.append(use.operation.logits.type.get_shape()[1])
    return min(bounds)


def random_inputs(function: func.FuncOp, rng: np.random.Generator) -> list[np.ndarray]:
    inputs = []
    for i, t in enumerate(function.function_type.inputs.data):
        shape, dtype = tuple(t.get_shape()), tensor_dtype(t)
        if dtype == np.bool_:
            inputs.append(rng.random(shape) < 0.5)
        elif dtype.kind == "i":
            inputs.append(rng.integers(0, index_bound(function, i), size=shape).astype(dtype))
        else:
            inputs.append(rng.standard_normal(shape))
    return inputs


def check_gradients(
    module_or_text: ModuleOp | str,
    entry: str | None = None,
    seed: int = 0,
    eps: float = 1e-6,
    inputs: Sequence[np.ndarray] | None = None,
    probes: int = 32,
) -> GradientReport:
    """Compare @entry_grad (made by `autodiff` when the module has none) with central
    finite differences of @entry, in f64, on random inputs (or `inputs`, converted to
    f64 where float). At most `probes` elements of each float argument are probed,
    chosen at random; the report has the worst relative error per argument."""
    module = promote_to_f64(as_module(module_or_text))
    forward = differentiated_function(module, entry)
    name = forward.sym_name.data
    if not any(isinstance(f, func.FuncOp) and f.sym_name.data == gradient_name(forward) for f in module.ops):
        differentiate(module, name)
    gradient = find_entry(module, gradient_name(forward))

    rng = np.random.default_rng(seed)
    args = random_inputs(forward, rng) if inputs is None else [_as_f64(a) for a in inputs]
    outputs = run_function(module, forward, args)
    cotangents = [rng.standard_normal(o.shape) if o.dtype.kind == "f" else np.zeros_like(o) for o in outputs]
    float_cotangents = [c for c, o in zip(cotangents, outputs) if o.dtype.kind == "f"]
    analytic = iter(run_function(module, gradient, [*args, *cotangents])[len(outputs) :])

    def outputs_at(perturbed: list[np.ndarray]) -> list[np.ndarray]:
        return [r for r in run_function(module, forward, perturbed) if r.dtype.kind == "f"]

    checks = []
    for i, arg in enumerate(args):
        if arg.dtype.kind == "f":
            check = _check_argument(outputs_at, float_cotangents, args, i, next(analytic), eps, probes, rng)
            checks.append(ArgumentCheck(i, argument_label(forward, i), *check))
    return GradientReport(name, checks)


def _as_f64(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def _check_argument(outputs_at, cotangents, args, index, analytic, eps, probes, rng) -> tuple[float, float, int]:
    """(worst relative error, max |Δ|, probed count) for one float argument."""
    arg = args[index]
    count = min(arg.size, probes)
    positions = rng.choice(arg.size, size=count, replace=False) if count < arg.size else np.arange(arg.size)
    numeric = np.empty(count)
    for k, flat in enumerate(positions):
        numeric[k] = _central_difference(outputs_at, cotangents, args, index, int(flat), eps)
    if count == 0:
        return 0.0, 0.0, 0
    exact = analytic.reshape(-1)[positions]
    delta = np.abs(exact - numeric)
    if not np.all(np.isfinite(delta)) or not np.all(np.isfinite(analytic)):
        return float("inf"), float("inf"), count
    scale = max(float(np.max(np.abs(analytic))), float(np.max(np.abs(numeric))), GRADIENT_FLOOR)
    worst = float(np.max(delta))
    return worst / scale, worst, count


def _central_difference(outputs_at, cotangents, args, index, flat, eps) -> float:
    """dL/dx_flat with L = Σ <c, f(x)>, differencing the outputs before the sum: elements
    the perturbation does not reach cancel exactly instead of adding rounding noise."""
    ends = []
    for step in (eps, -eps):
        shifted = args[index].copy()
        shifted.reshape(-1)[flat] += step
        ends.append(outputs_at([*args[:index], shifted, *args[index + 1 :]]))
    return sum(float(np.sum(c * (hi - lo))) for c, hi, lo in zip(cotangents, *ends)) / (2 * eps)

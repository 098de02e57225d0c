"""Run one program on the reference and on every target; say how they differ.

Targets ("configurations"):

* `cpu` — `strata.compile(target="cpu")`, fused (the default pipeline);
* `cpu-unfused` — the same with `fusion=False` (one kernel per op);
* `ptx` — the GPU pipeline to PTX through libNVVM (its barrier check included) and
  `ptxas -arch=sm_90` (compile only: CI has no GPU);
* `cuda` — run on the GPU.

Every compiled configuration runs twice on the same inputs (a second call must not see
the first one's state). A result is compared with the reference's exactly when its
tolerance is 0 and within `TOLERANCE_FACTOR` x its tolerance otherwise (`Value.tolerance`:
the error its operands' errors can cause plus its op's own, relative to the value)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

import numpy as np

import strata
from strata.support.errors import StrataError
from strata.tools.fuzz.values import Program

CONFIGURATIONS = ("cpu", "cpu-unfused", "ptx", "ptx-sm90a", "cuda")
PTX_CONFIGURATIONS = ("ptx", "ptx-sm90a")
"""Compiled to PTX and through ptxas only: the GPU pipeline for sm_90, and with the warpgroup
mma (wgmma matmuls and flash attention) for sm_90a, what an H100 or H200 runs."""
TOLERANCE_FACTOR = 4.0
"""Both sides may err by the bound, and the bound is an estimate."""


@dataclass(frozen=True)
class Outcome:
    kind: str
    """"ok", "skipped" (the reference rejected the program: a generator bug), "mismatch",
    "rejected" (a target refused a program the reference ran), "internal" (an exception
    that is not a StrataError) or "abort" (the process died)."""
    configuration: str = ""
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.kind not in ("ok", "skipped")

    def signature(self) -> str:
        """What a shrunk program must still show: kind, configuration and the message's
        first words (no numbers, which change as the program shrinks)."""
        words = [w for w in self.detail.split()[:6] if not any(c.isdigit() for c in w)]
        return f"{self.kind}:{self.configuration}:{' '.join(words)}"


def available_configurations() -> tuple[str, ...]:
    """Those this machine can run: PTX needs ptxas (and libNVVM), cuda a GPU."""
    found = ["cpu", "cpu-unfused"]
    if _ptxas():
        found.extend(PTX_CONFIGURATIONS)
    try:
        from numba import cuda

        if cuda.is_available():
            found.append("cuda")
    except ImportError:
        pass
    return tuple(found)


def _ptxas() -> str | None:
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda-13.0")
    candidate = os.path.join(cuda_home, "bin", "ptxas")
    return shutil.which("ptxas") or (candidate if os.path.exists(candidate) else None)


def run_program(program: Program, configurations: tuple[str, ...]) -> Outcome:
    """Compare every configuration with the reference; the first failure found."""
    return run_module(program.module, program.inputs, [v.tolerance for v in program.results], configurations)


GRADIENT_TOLERANCE = {"f64": 1e-8, "f32": 2e-3, "f16": 6e-2, "bf16": 1.2e-1}
"""Gradients get no propagated bound: they may differ by this (for the program's least
precise float type) times the largest magnitude among all the gradients, or among the
forward results times GRADIENT_FLOOR where that is larger."""
GRADIENT_FLOOR = 1e-3
"""Where every gradient cancels to ~0 (seed 97161: a softmax over copies of one value has
none at all), what is left is rounding noise of the terms that cancelled, whose size
follows the forward results (cotangents are at most 1 in magnitude), not the gradients'."""


def run_gradient_module(module, inputs: list[np.ndarray], bounds, configurations) -> Outcome:
    """Differentiate the program (`autodiff`), then compare `@fuzz_grad` like
    `run_module`: the forward results with `bounds`, the gradients with
    GRADIENT_TOLERANCE; cotangents are drawn from the result types."""
    from strata.check import loosest_float
    from strata.support.dtypes import element_name_of_dtype, tensor_dtype
    from strata.transforms.autodiff import differentiate

    differentiated = module.clone()
    try:
        gradient = differentiate(differentiated, "fuzz")
    except StrataError as e:
        return Outcome("rejected", "autodiff", f"{type(e).__name__}: {_first_line(e)}")
    except Exception as e:  # noqa: BLE001
        return Outcome("internal", "autodiff", f"{type(e).__name__}: {_first_line(e)}")
    rng = np.random.default_rng(0)
    argument_types = gradient.function_type.inputs.data[len(inputs):]
    cotangents = [
        rng.uniform(-1, 1, t.get_shape()).astype(tensor_dtype(t)) if tensor_dtype(t).kind == "f"
        else np.zeros(t.get_shape(), tensor_dtype(t))
        for t in argument_types
    ]  # fmt: skip
    # A gradient is only as accurate as the least precise step on its way (an f64
    # argument used through f32 ops), and its noise is relative to all the cotangents
    # summed into it, not to its own magnitude (which may cancel to ~0).
    loosest = loosest_float(module)
    tolerance = GRADIENT_TOLERANCE.get(element_name_of_dtype(loosest), 0.0) if loosest is not None else 0.0
    gradient_types = gradient.function_type.outputs.data[len(bounds):]
    scaled = [(0.0, 0.0, tolerance if tensor_dtype(t).kind == "f" else 0.0) for t in gradient_types]
    return run_module(differentiated, [*inputs, *cotangents], [*bounds, *scaled], configurations, entry="fuzz_grad")


def run_module(module, inputs: list[np.ndarray], bounds, configurations, entry: str | None = None) -> Outcome:
    """Each configuration against the reference; `bounds`: per result, (absolute,
    relative) or (absolute, relative, relative to the largest magnitude of the results
    that have this third part)."""
    try:
        reference = strata.interpret(module, *inputs, entry=entry)
    except StrataError as e:
        return Outcome("skipped", "reference", _first_line(e))
    except Exception as e:  # noqa: BLE001 - the oracle itself failed: an internal error
        return Outcome("internal", "reference", f"{type(e).__name__}: {_first_line(e)}")
    for configuration in configurations:
        outcome = _run_configuration(module, inputs, reference, bounds, configuration, entry)
        if outcome.failed:
            return outcome
    return Outcome("ok")


def _run_configuration(module, inputs, reference, bounds, configuration: str, entry: str | None) -> Outcome:
    try:
        if configuration in PTX_CONFIGURATIONS:
            _compile_ptx(module, warpgroup_mma=configuration == "ptx-sm90a")
            return Outcome("ok")
        target = "cuda" if configuration == "cuda" else "cpu"
        fusion = configuration != "cpu-unfused"
        executable = strata.compile(module.clone(), target=target, entry=entry, fusion=fusion)
        for attempt in ("first call", "second call"):
            results = executable(*[a.copy() for a in inputs])
            mismatch = _compare(results, reference, bounds)
            if mismatch:
                return Outcome("mismatch", configuration, f"{attempt}: {mismatch}")
    except StrataError as e:
        return Outcome("rejected", configuration, f"{type(e).__name__}: {_first_line(e)}")
    except Exception as e:  # noqa: BLE001 - what the fuzzer is looking for
        return Outcome("internal", configuration, f"{type(e).__name__}: {_first_line(e)}")
    return Outcome("ok")


def _compare(results, reference, bounds) -> str:
    if len(results) != len(reference):
        return f"{len(results)} results, the reference has {len(reference)}"
    # Tolerances relative to the largest magnitude apply to that of all such results (the
    # gradients), and never to less than GRADIENT_FLOOR of the other results' largest.
    def largest_of(gradients: bool) -> float:
        return max(
            (float(np.nanmax(np.abs(np.asarray(w, np.float64)), initial=0.0))
             for w, b in zip(reference, bounds) if (len(b) > 2 and b[2]) == gradients and np.asarray(w).size
             and np.asarray(w).dtype.kind == "f"),
            default=0.0,
        )  # fmt: skip

    largest = max(largest_of(True), GRADIENT_FLOOR * largest_of(False))
    for i, (got, want, bound) in enumerate(zip(results, reference, bounds)):
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"result{i} is {got.dtype}{list(got.shape)}, the reference's {want.dtype}{list(want.shape)}"
        g64, w64 = got.astype(np.float64), want.astype(np.float64)
        same = (g64 == w64) | (np.isnan(g64) & np.isnan(w64))
        absolute, relative, of_largest = (*bound, 0.0)[:3]
        allowed = TOLERANCE_FACTOR * (absolute + relative * np.abs(w64) + of_largest * largest)
        with np.errstate(invalid="ignore"):
            bad = ~same & ~(np.abs(g64 - w64) <= allowed)
        if bad.any():
            where = tuple(int(j) for j in np.argwhere(bad)[0])
            return (
                f"result{i}[{', '.join(map(str, where))}] = {got[where]!r}, the reference's "
                f"{want[where]!r} (allowed |delta| {allowed[where]:.3g}; {int(bad.sum())} elements differ)"
            )
    return ""


def _compile_ptx(module, warpgroup_mma: bool) -> None:
    from strata.lowering.nvvm.translate import module_to_ptx
    from strata.targets.cuda import GpuPipelinePass
    from strata.targets.passes import run_pipeline

    module = module.clone()
    # As strata.compile lowers for an H100/H200: tensor maps come with the warpgroup mma.
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=warpgroup_mma, tensor_maps=warpgroup_mma).steps())
    ptx = module_to_ptx(module, "sm_90")[1]
    if not ptx:
        return
    arch = "sm_90a" if ".target sm_90a" in ptx else "sm_90"  # sm_90a where a kernel runs wgmma
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(ptx)
        f.flush()
        done = subprocess.run([_ptxas(), f"-arch={arch}", f.name, "-o", os.devnull], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"ptxas rejected the PTX: {_first_line(done.stderr)}")


def _first_line(error: object) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:400] if text else type(error).__name__

"""Strata's passes by name, the named pipelines, and the runner that applies a pipeline
with verification between steps. Used by strata-opt, strata-run, strata-translate and
every target.

A named pipeline (`cpu-pipeline`, `gpu-pipeline`) is a pass too, so it runs alone
(`strata-opt -p cpu-pipeline`); each target module defines its own with `PipelinePass` and
registers it with `register_pipeline`. `expand_pipelines` spells a pipeline spec out into
the steps it runs, which is what strata-opt hands to xDSL so `--print-between-passes`
shows every step.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassOptionInfo, PassPipeline, PassPipelineCallbackType, get_pass_option_infos
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from strata.dialects.context import make_context, verify

# Imported for its registrations: the graph ops' canonicalization patterns.
from strata.transforms import graph_canonicalize  # noqa: F401
from strata.lowering.graph_to_tile.lower import LowerGraphToTilePass
from strata.lowering.tile_to_gpu.lower import LowerTileToGpuPass
from strata.lowering.tile_to_loops.lower import LowerTileToLoopsPass
from strata.support.errors import IRError, StrataError, one_line
from strata.support.timing import record, timed
from strata.transforms.autodiff import AutodiffPass
from strata.transforms.dedupe_kernels import DedupeKernelsPass, is_kernel
from strata.transforms.expand_attention_grad import ExpandAttentionGradPass
from strata.transforms.expand_math import ExpandMathPass
from strata.transforms.dropout_step import AddDropoutStepPass
from strata.transforms.fuse_elementwise import FuseElementwisePass
from strata.transforms.fuse_fma import FuseFmaPass
from strata.transforms.fuse_patterns import FusePatternsPass
from strata.transforms.plan_memory import PlanMemoryPass
from strata.transforms.share_attention_lse import ShareAttentionLsePass
from strata.transforms.split_loops import SplitLoopsPass
from strata.transforms.token_dce import TokenDcePass
from strata.transforms.verify_memory_plan import VerifyMemoryPlanPass
from strata.transforms.vsla_to_graph import LowerVslaToGraphPass
from strata.targets.reproducer import PassCrash, ReproducingPipeline

PassFactory = Callable[[], type[ModulePass]]

STRATA_PASSES: dict[str, PassFactory] = {
    p.name: (lambda p=p: p)
    for p in (
        AutodiffPass, FusePatternsPass, FuseElementwisePass, LowerGraphToTilePass, TokenDcePass, DedupeKernelsPass,
        LowerTileToLoopsPass, ExpandMathPass, PlanMemoryPass, VerifyMemoryPlanPass, FuseFmaPass,
        SplitLoopsPass, LowerTileToGpuPass, LowerVslaToGraphPass, AddDropoutStepPass,
        ExpandAttentionGradPass, ShareAttentionLsePass,
    )
}  # fmt: skip
"""Strata's own passes by name (the named pipelines are kept in PIPELINES)."""

FUSION_PASSES = ("fuse-patterns", "fuse-elementwise")


VERIFY_EACH_STEP_ENV = "STRATA_VERIFY_EACH_STEP"
"""Set to 1 to verify after every step of a pipeline run by `run_pipeline` or a named
pipeline (read at each verification point), not only where `verify_between` does by
default."""


def verifies_after(previous: ModulePass, module: ModuleOp, following: ModulePass | None) -> bool:
    """Where a pipeline verifies by default: after every step while the module is still
    at the graph level (no kernels yet: hundreds of ops, cheap), after each lowering to a
    new level (`lower-*`), and after the last step. Steps within the tile or loops level
    (token-dce, dedupe-kernels, expand-math, plan-memory, ...) are checked by the next
    verification: a loops-level module of ~10^4 ops costs ~0.4 s to verify."""
    if following is None or previous.name.startswith("lower-"):
        return True
    if os.environ.get(VERIFY_EACH_STEP_ENV, "") not in ("", "0"):
        return True
    return not any(is_kernel(op) for op in module.ops)


def verify_between(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
    """Each level a pipeline produces must verify (the tile constraints included), not
    only the final one: the module is verified after the steps `verifies_after` names
    (every step with STRATA_VERIFY_EACH_STEP=1)."""
    if previous is not None and verifies_after(previous, module, following):
        verify(module)


@dataclass(frozen=True)
class PipelinePass(ModulePass):
    """A named pipeline: a pass that runs STEPS (an xdsl-opt pipeline spec) in order,
    verifying between them as `verify_between` does."""

    STEPS: ClassVar[str]

    fusion: bool = True
    """False drops fuse-patterns and fuse-elementwise: one kernel per op (for ablations)."""

    def steps(self) -> str:
        if self.fusion:
            return self.STEPS
        return ",".join(s for s in split_spec(self.STEPS) if s.split("{")[0] not in FUSION_PASSES)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        steps = PassPipeline.parse_spec(available_passes(), self.steps(), verify_between)
        ReproducingPipeline(steps.passes, steps.callback).apply(ctx, op)


PIPELINES: dict[str, type[PipelinePass]] = {}
"""The named pipelines by name, registered by the target modules."""


def register_pipeline(pipeline: type[PipelinePass]) -> type[PipelinePass]:
    """Class decorator: make a named pipeline available to every pass runner."""
    if pipeline.name in PIPELINES or pipeline.name in STRATA_PASSES:
        raise ValueError(f"a pass named '{pipeline.name}' is already registered")
    PIPELINES[pipeline.name] = pipeline
    return pipeline


def strata_passes() -> dict[str, PassFactory]:
    """Strata's passes and named pipelines by name."""
    return {**STRATA_PASSES, **{name: (lambda p=p: p) for name, p in PIPELINES.items()}}


UPSTREAM_PASSES = ("canonicalize", "cse", "dce", "licm")
"""xDSL's passes that a pipeline may name next to Strata's: rewrites of the dialects
Strata's levels use. The others stay out: some run other programs (`mlir-opt` runs any
executable it is given) and most expect dialects Strata never produces."""


def available_passes() -> dict[str, PassFactory]:
    """The passes a pipeline may name: Strata's and the vetted UPSTREAM_PASSES of xDSL."""
    upstream = Universe.get_multiverse().all_passes
    passes = {name: upstream[name] for name in UPSTREAM_PASSES if name in upstream}
    passes.update(strata_passes())
    return passes


def split_spec(spec: str) -> list[str]:
    """The comma-separated steps of a pipeline spec (commas inside braces kept)."""
    steps, depth, start = [], 0, 0
    for i, char in enumerate(spec):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            steps.append(spec[start:i].strip())
            start = i + 1
    steps.append(spec[start:].strip())
    return [s for s in steps if s]


def expand_pipelines(spec: str) -> str:
    """`spec` with each named pipeline replaced by the steps it runs (recursively)."""
    try:
        parsed = list(parse_pipeline(spec))
    except (Exception, ArgSpecParseError) as e:  # the latter is a BaseException
        raise StrataError(f"invalid pass pipeline '{spec}': {one_line(str(e))}") from None
    if spec.strip() and len(parsed) != len(split_spec(spec)):
        raise StrataError(f"invalid pass pipeline '{spec}': expected pass names separated by commas")
    expanded = []
    for step, text in zip(parsed, split_spec(spec)):
        pipeline = PIPELINES.get(step.name)
        if pipeline is None:
            expanded.append(text)
            continue
        try:
            instance = pipeline.from_pass_spec(step)
        except (Exception, ArgSpecParseError) as e:
            raise StrataError(f"invalid pass pipeline '{spec}': {one_line(str(e))}") from None
        expanded.append(expand_pipelines(instance.steps()))
    return ",".join(expanded)


def timed_steps(callback: PassPipelineCallbackType | None = None, label: str = "verify") -> PassPipelineCallbackType:
    """A pipeline callback that calls `callback` and records, into the enclosing
    `support.timing.recording()` (if any), each pass's time under its name and, after the
    last pass, the time spent in `callback` under `label` (counted once per pass)."""
    start, in_callback, passes = time.perf_counter(), 0.0, 0

    def between(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
        nonlocal start, in_callback, passes
        now = time.perf_counter()
        if previous is not None:
            record(previous.name, now - start)
            passes += 1
        if callback is not None:
            callback(previous, module, following)
            in_callback += time.perf_counter() - now
            if following is None and passes:
                record(label, in_callback, passes)
        start = time.perf_counter()

    return between


def run_pipeline(module: ModuleOp, spec: str, reproducer: str | None = None) -> None:
    """Apply a comma-separated pass pipeline (xdsl-opt syntax) in place, verifying as
    `verify_between` does (after graph-level steps, each lowering and the last step);
    named pipelines run step by step (each step's time is recorded). A pass failing with
    an internal error raises a PassCrash after writing a reproducer (to `reproducer`,
    else a fresh file: targets/reproducer.py)."""
    try:
        steps = PassPipeline.parse_spec(available_passes(), expand_pipelines(spec), timed_steps(verify_between))
    except StrataError:
        raise
    except (Exception, ArgSpecParseError) as e:  # unknown passes, bad options
        raise StrataError(f"invalid pass pipeline '{spec}': {one_line(str(e))}") from None
    pipeline = ReproducingPipeline(steps.passes, steps.callback, reproducer)
    try:
        pipeline.apply(make_context(), module)
    except (StrataError, PassCrash):
        raise
    except Exception as e:
        raise IRError(f"pass pipeline '{spec}' failed: {e}") from None
    if not steps.passes:  # otherwise verified after the last step already (verify_between)
        with timed("verify"):
            verify(module)


def pass_options(pass_type: type[ModulePass]) -> tuple[PassOptionInfo, ...]:
    """(name, type, default) of each option a pass takes in `-p 'name{option=value}'`."""
    return get_pass_option_infos(pass_type)


def pass_description(pass_type: type[ModulePass]) -> str:
    """The first sentence of the pass's docstring on one line, less pointers to the module
    docstring (for `strata-opt --list-passes`)."""
    paragraph = " ".join((pass_type.__doc__ or "").strip().split("\n\n")[0].split())
    sentence = re.split(r"(?<=\.)\s+(?=[A-Z`])", paragraph)[0]
    return re.sub(r"\s*\(see (the )?module docstring\)|;\s*see the module docstring", "", sentence)

"""Pass registry and pipeline runner shared by strata-opt, strata-run and strata.compile."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.universe import Universe

from strata.errors import IRError, StrataError
from strata.ir import make_context, verify

def verify_between(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
    """Each level a named pipeline produces must verify (the tile constraints included),
    not only the final loops."""
    if previous is not None:
        verify(module)


CPU_PIPELINE_STEPS = (
    "fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile,token-dce,"
    "lower-tile-to-loops,expand-math,plan-memory,verify-memory-plan"
)


@dataclass(frozen=True)
class CpuPipelinePass(ModulePass):
    """The CPU path from graph to loops, as one named pass (each step also runs alone):
    fuse-patterns, canonicalize, cse, fuse-elementwise, lower-graph-to-tile, token-dce,
    lower-tile-to-loops, expand-math, plan-memory, verify-memory-plan."""

    name = "cpu-pipeline"

    fusion: bool = True
    """False drops fuse-patterns and fuse-elementwise: one kernel per op (for ablations)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        steps = CPU_PIPELINE_STEPS if self.fusion else without_fusion(CPU_PIPELINE_STEPS)
        PassPipeline.parse_spec(available_passes(), steps, verify_between).apply(ctx, op)


def without_fusion(steps: str) -> str:
    """A pipeline's steps less fuse-patterns and fuse-elementwise (one kernel per op)."""
    return ",".join(s for s in steps.split(",") if s not in ("fuse-patterns", "fuse-elementwise"))


@dataclass(frozen=True)
class GpuPipelinePass(ModulePass):
    """The CUDA path from graph to GPU kernel functions plus the memory plan, as one named
    pass (steps: GPU_PIPELINE_STEPS in lowering/tile_to_gpu.py)."""

    name = "gpu-pipeline"

    fusion: bool = True
    """False drops fuse-patterns and fuse-elementwise: one kernel per op (for ablations)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from strata.lowering.tile_to_gpu import GPU_PIPELINE_STEPS

        steps = GPU_PIPELINE_STEPS if self.fusion else without_fusion(GPU_PIPELINE_STEPS)
        PassPipeline.parse_spec(available_passes(), steps, verify_between).apply(ctx, op)


def _strata_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from strata.lowering.graph_to_tile import LowerGraphToTilePass
    from strata.lowering.tile_to_gpu import LowerTileToGpuPass
    from strata.lowering.tile_to_loops import LowerTileToLoopsPass
    from strata.transforms.autodiff import AutodiffPass
    from strata.transforms.expand_math import ExpandMathPass
    from strata.transforms.fuse_elementwise import FuseElementwisePass
    from strata.transforms.fuse_fma import FuseFmaPass
    from strata.transforms.fuse_patterns import FusePatternsPass
    from strata.transforms.plan_memory import PlanMemoryPass
    from strata.transforms.split_loops import SplitLoopsPass
    from strata.transforms.token_dce import TokenDcePass
    from strata.transforms.verify_memory_plan import VerifyMemoryPlanPass

    passes = (
        AutodiffPass, FusePatternsPass, FuseElementwisePass, LowerGraphToTilePass, TokenDcePass,
        LowerTileToLoopsPass, ExpandMathPass, PlanMemoryPass, VerifyMemoryPlanPass, FuseFmaPass,
        SplitLoopsPass, CpuPipelinePass, GpuPipelinePass, LowerTileToGpuPass,
    )
    return {p.name: (lambda p=p: p) for p in passes}


STRATA_PASSES: dict[str, Callable[[], type[ModulePass]]] = _strata_passes()
"""Strata's own passes by name (xDSL's upstream passes are added next to them)."""



def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    passes = dict(Universe.get_multiverse().all_passes)
    passes.update(STRATA_PASSES)
    return passes


def run_pipeline(module: ModuleOp, spec: str) -> None:
    """Apply a comma-separated pass pipeline (xdsl-opt syntax) in place, verifying after."""
    try:
        pipeline = PassPipeline.parse_spec(available_passes(), spec)
    except Exception as e:  # xDSL reports unknown passes and bad options as plain exceptions
        raise StrataError(f"invalid pass pipeline '{spec}': {e}") from None
    try:
        pipeline.apply(make_context(), module)
    except StrataError:
        raise
    except Exception as e:
        raise IRError(f"pass pipeline '{spec}' failed: {e}") from None
    verify(module)

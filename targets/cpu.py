"""The CPU target: graph → tile kernels → loop nests → LLVM IR, JIT-compiled by llvmlite
and run on every core by the CPU runtime.

    strata.compile(module, target="cpu")        strata-run --target cpu
    strata-opt -p cpu-pipeline                  strata-translate --emit=llvm-ir | asm
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

from strata.runtime.cpu import CpuExecutable, CpuProfiles, compile_cached, jit_kernels
from strata.targets.passes import PipelinePass, register_pipeline
from strata.targets.target import Target, register_target


@register_pipeline
@dataclass(frozen=True)
class CpuPipelinePass(PipelinePass):
    """The CPU path from graph to loops and the memory plan, as one named pass (each step
    also runs alone; `strata-opt -p cpu-pipeline --print-between-passes` shows each)."""

    name = "cpu-pipeline"

    STEPS = (
        "lower-vsla-to-graph,expand-attention-grad,fuse-patterns,canonicalize,cse,fuse-elementwise,lower-graph-to-tile,token-dce,dedupe-kernels,"
        "lower-tile-to-loops,expand-math,plan-memory,verify-memory-plan"
    )


class CpuTarget(Target):
    name = "cpu"
    description = "this machine's CPU: LLVM IR JIT-compiled by llvmlite, run on all cores"
    pipeline = CpuPipelinePass
    emits = ("llvm-ir", "asm")

    def compile(self, module: ModuleOp, entry: str | None = None, fusion: bool = True, bind: bool = True) -> CpuExecutable:
        """`bind=False` leaves the arenas to the caller (`CpuExecutable.bind`). Compiles
        go through the on-disk compile cache (docs/cpu-backend.md), keyed by the module and
        these options."""
        options = f"entry={entry!r} fusion={fusion!r}"
        return compile_cached(module, options, lambda m: self.lowered_program(m, entry, fusion), bind=bind)

    def profiles(self, modules: list[ModuleOp], entry: str | None = None) -> CpuProfiles:
        """One program compiled per shape bucket, the buckets sharing one set of arenas."""
        return CpuProfiles([self.compile(m, entry, bind=False) for m in modules])

    def emit(self, module: ModuleOp, kind: str, arch: str | None = None) -> str:
        if kind not in self.emits:
            return super().emit(module, kind, arch)
        self.lower(module)
        jit = jit_kernels(module)
        return jit.llvm_ir() if kind == "llvm-ir" else jit.assembly()


CPU = register_target(CpuTarget())

"""Which backend the op-by-op suites (test_cpu.py, test_fusion.py) compile for.

STRATA_TEST_TARGET=cpu (default) runs them on the CPU. =ptx also lowers each program for
the GPU, compiles it to PTX with libNVVM (which runs the barrier-safety check) and has
`ptxas -arch=sm_90` accept it, then runs it on the CPU (CI: no GPU). =cuda runs them on the
GPU (bash benchmarks/gpu_session.sh on a GPU machine).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import strata

TARGET = os.environ.get("STRATA_TEST_TARGET", "cpu")
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda-13.0")
PTXAS = shutil.which("ptxas") or os.path.join(CUDA_HOME, "bin", "ptxas")


def gpu_ptx(text: str, arch: str = "sm_90") -> str:
    """The program's kernels as PTX (barrier-checked), accepted by ptxas for `arch`."""
    from strata.lowering.nvvm.translate import module_to_ptx
    from strata.targets.cuda import GpuPipelinePass
    from strata.targets.passes import run_pipeline

    module = strata.parse_module(text)
    run_pipeline(module, GpuPipelinePass.STEPS)
    ptx = module_to_ptx(module, arch)[1]
    if ptx:  # else a program that launches nothing (it returns its inputs)
        ptxas(ptx, arch)
    return ptx


def ptxas(ptx: str, arch: str) -> None:
    """Assert that `ptxas -arch=<arch>` accepts the PTX, with no performance warning."""
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(ptx)
        f.flush()
        result = subprocess.run([PTXAS, f"-arch={arch}", f.name, "-o", os.devnull], capture_output=True, text=True)
    assert result.returncode == 0, f"ptxas -arch={arch} rejected the PTX:\n{result.stderr}\n{ptx}"
    # C75xx: ptxas serialized wgmma instructions (C7514: other instructions read their
    # accumulators) or injected warpgroup.arrive (C7519: their a registers changed late)
    assert "Potential Performance Loss" not in result.stderr and "(C75" not in result.stderr, result.stderr


def compile_for_test(text: str, **options):
    """strata.compile for the suite's target (see the module docstring)."""
    if TARGET == "ptx":
        gpu_ptx(text)
        return strata.compile(text, target="cpu", **options)
    return strata.compile(text, target=TARGET, **options)


def compile_with_steps(text: str, steps: str):
    """The program lowered by the pass pipeline `steps` (a CPU pipeline with changed
    options) and run by the CPU, through the compile cache (keyed by the steps too)."""
    from strata.runtime.cpu import compile_cached
    from strata.runtime.program import LoweredProgram
    from strata.targets.passes import run_pipeline

    return compile_cached(strata.parse_module(text), steps,
                          lambda m: LoweredProgram.lower(m, None, lambda lowered: run_pipeline(lowered, steps)))  # fmt: skip

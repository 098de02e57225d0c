"""strata-translate: lower a module to LLVM IR or host assembly (PTX with the GPU backend)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from xdsl.dialects import func

from strata.runtime.reference.interpreter import find_entry
from strata.tools.diagnostics import read_module, run_reporting_errors


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="strata-translate", description="Leave the compiler.")
    p.add_argument("file", help="an .mlir file ('-' for stdin)")
    p.add_argument("--emit", required=True, choices=("llvm-ir", "ptx", "asm"))
    p.add_argument("--entry", help="function whose program to translate (default: all)")
    p.add_argument("--arch", default="sm_90", help="GPU architecture for --emit=ptx")
    p.add_argument("-o", "--output", help="write here instead of stdout")
    return p


def run(args: argparse.Namespace) -> int:
    from strata.pipelines import CPU_PIPELINE_STEPS, run_pipeline

    module = read_module(args.file)
    if args.entry:
        keep = find_entry(module, args.entry)  # an unknown name is a diagnostic, exit 2
        for function in [f for f in module.ops if isinstance(f, func.FuncOp) and f is not keep]:
            module.body.block.erase_op(function)
    if args.emit == "ptx":  # the GPU backend (lowering/tile_to_gpu.py, lowering/loops_to_nvvm.py)
        from strata.lowering.loops_to_nvvm import compute_arch, module_to_ptx
        from strata.lowering.tile_to_gpu import GPU_PIPELINE_STEPS

        compute_arch(args.arch)
        run_pipeline(module, GPU_PIPELINE_STEPS)
        output = module_to_ptx(module, args.arch)[1] or "// no GPU kernels: the program launches nothing\n"
    else:
        from strata.runtime.cpu import jit_kernels

        run_pipeline(module, CPU_PIPELINE_STEPS)
        jit = jit_kernels(module)
        output = jit.llvm_ir() if args.emit == "llvm-ir" else jit.assembly()
    if args.output:
        Path(args.output).write_text(output)
    else:
        sys.stdout.write(output)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_reporting_errors("strata-translate", lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())

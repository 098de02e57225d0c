"""strata-translate: lower a module to LLVM IR or host assembly (PTX with the GPU backend)."""

from __future__ import annotations

import argparse
import sys

from xdsl.dialects import func

from strata.runtime.reference.interpreter import find_entry
from strata.support.files import refuse_overwriting_input, write_atomically
from strata.targets import emit_kinds, target_for_emit
from strata.targets.cuda import DEFAULT_ARCH
from strata.tools.diagnostics import read_module, run_reporting_errors, version_line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="strata-translate", description="Leave the compiler.")
    p.add_argument("file", help="an .mlir file ('-' for stdin)")
    p.add_argument("--emit", required=True, choices=emit_kinds(),
                   help="llvm-ir and asm: the CPU target's kernels; ptx: the CUDA target's")  # fmt: skip
    p.add_argument("--entry", help="function whose program to translate (default: all)")
    p.add_argument("--arch", default=DEFAULT_ARCH, help="GPU architecture for --emit=ptx")
    p.add_argument("-o", "--output", help="write here instead of stdout")
    p.add_argument("--version", action="version", version=version_line("strata-translate"))
    return p


def run(args: argparse.Namespace) -> int:
    refuse_overwriting_input(args.output, args.file, "-o")
    module = read_module(args.file)
    if args.entry:
        keep = find_entry(module, args.entry)  # an unknown name is a diagnostic, exit 2
        for function in [f for f in module.ops if isinstance(f, func.FuncOp) and f is not keep]:
            module.body.block.erase_op(function)
    output = target_for_emit(args.emit).emit(module, args.emit, args.arch)
    if args.output:
        write_atomically(args.output, output)
    else:
        sys.stdout.write(output)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_reporting_errors("strata-translate", lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())

"""strata-translate: lower a module to LLVM IR, PTX or host assembly."""

from __future__ import annotations

import argparse
import sys

from strata.errors import StrataError
from strata.tools.diagnostics import run_reporting_errors


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="strata-translate", description="Leave the compiler.")
    p.add_argument("file", help="an .mlir file")
    p.add_argument("--emit", required=True, choices=("llvm-ir", "ptx", "asm"))
    p.add_argument("--entry")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("-o", "--output")
    return p


def run(args: argparse.Namespace) -> int:
    raise StrataError(
        f"no target yet: --emit={args.emit} arrives with the "
        f"{'GPU' if args.emit == 'ptx' else 'CPU'} backend; "
        "use strata-run --target reference to execute programs meanwhile"
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_reporting_errors("strata-translate", lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())

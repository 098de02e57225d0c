"""strata-dsl: a module DSL program instantiated as graph IR.

    strata-dsl model.module --entry GPT2 -D n_layers=2 -D B=2 -D T=8 -o gpt2.mlir
    strata-dsl linear.module --entry MyLinear -D N=4 --verify-backward

-D sets a constructor parameter or a symbolic input dim (ints, floats, true/false, or a
string); --shape in=2x7x16 gives the shape of an input whose type starts with `*`. The IR is written atomically (`-o`) or to stdout. --verify-backward checks the
entry's explicit backward against autodiff and finite differences and exits 1 on a
mismatch. A DSL error prints `file:line:col: error Ecode: message`, the source line and a
caret, and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from strata.support.errors import InputError
from strata.support.files import refuse_overwriting_input, write_atomically
from strata.tools.diagnostics import EXIT_USAGE, run_reporting_errors, version_line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="strata-dsl", description="Instantiate a module DSL program as graph IR.")
    p.add_argument("file", help="a .module file")
    p.add_argument("--entry", required=True, help="the module or model to instantiate")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="a constructor parameter or input dim (repeatable)")
    p.add_argument("--shape", dest="shapes", action="append", default=[], metavar="INPUT=2x7x16",
                   help="the shape of an input whose type has a leading '*' (repeatable)")
    p.add_argument("--dtype", default="f32", help="the default element type (f32, f64, f16, bf16)")
    p.add_argument("--backward", action="store_true", help="also emit @<entry>_backward from its backward: graph")
    p.add_argument("--verify-backward", action="store_true",
                   help="check the explicit backward against autodiff and finite differences (exit 1 on a mismatch)")
    p.add_argument("-o", "--output", help="write the IR here (default: stdout)")
    p.add_argument("--version", action="version", version=version_line("strata-dsl"))
    return p


def parse_define(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise InputError(f"-D {text!r}: expected NAME=VALUE")
    if value in ("true", "false"):
        return name, value == "true"
    for kind in (int, float):
        try:
            return name, kind(value)
        except ValueError:
            pass
    return name, value


def parse_shape(text: str) -> tuple[str, tuple[int, ...]]:
    name, sep, dims = text.partition("=")
    try:
        shape = tuple(int(d) for d in dims.split("x")) if dims else ()
    except ValueError:
        shape = None
    if not sep or not name.isidentifier() or shape is None or any(d < 0 for d in shape):
        raise InputError(f"--shape {text!r}: expected INPUT=DIMxDIMx... (e.g. in=2x7x16)")
    return name, shape


def run(args: argparse.Namespace) -> int:
    from strata import dsl

    refuse_overwriting_input(args.output, args.file, "-o")
    defines = dict(parse_define(d) for d in args.defines)
    shapes = dict(parse_shape(t) for t in args.shapes)
    try:
        program = dsl.load(Path(args.file))
        if args.verify_backward:
            report = program.verify_backward(args.entry, shapes=shapes, **defines)
            print(report)
            return 0 if report.ok() else 1
        module = program.instantiate(args.entry, dtype=args.dtype, shapes=shapes, backward=args.backward, **defines)
    except dsl.DslError as e:
        print(f"strata-dsl: {e}", file=sys.stderr)
        return EXIT_USAGE
    text = str(module) + "\n"
    if args.output:
        write_atomically(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_reporting_errors("strata-dsl", lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())

"""strata-opt: xdsl-opt with Strata's dialects and passes registered.

Beyond xdsl-opt: named pipelines run step by step (`-p cpu-pipeline --print-between-passes`
shows the IR after each), `--list-passes`, `--timing` (per-pass times on stderr), `-` for
stdin, and only the output targets that work on Strata IR (`-t mlir`)."""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from strata.dialects.context import STRATA_DIALECTS, LocatingParser, verification_error
from strata.support.files import refuse_overwriting_input, write_atomically
from strata.support.timing import recording
from strata.targets.passes import (
    PIPELINES, STRATA_PASSES, expand_pipelines, pass_description, pass_options, split_spec,
    available_passes, timed_steps,
)  # fmt: skip
from strata.targets.reproducer import CRASH_DIR_VARIABLE, ReproducingPipeline
from strata.tools.diagnostics import print_timings, run_reporting_errors, version_line

OUTPUT_TARGETS = ("mlir",)
"""The `-t` targets that work on Strata IR. xDSL's others (llvm, x86-asm, riscv-asm, wat,
...) take only their own dialects: on graph, tile or loops IR they fail or print nothing.
LLVM IR comes from `strata-translate --emit=llvm-ir`."""


class StrataOptMain(xDSLOptMain):
    version_format = version_line("strata-opt")

    def register_all_dialects(self):
        # Where the package is installed, xDSL's multiverse already has Strata's dialects
        # (strata/universe.py); from a bare source tree it does not.
        super().register_all_dialects()
        registered = set(self.ctx.registered_dialect_names)
        for name, factory in STRATA_DIALECTS.items():
            if name not in registered:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        # Not xDSL's whole list: only what targets.passes vets (no pass that runs a program).
        for name, factory in available_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        super().register_all_targets()
        self.available_targets = {n: t for n, t in self.available_targets.items() if n in OUTPUT_TARGETS}

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--list-passes", action=PrintAndExit, text=lambda: pass_listing(self.available_passes),
            help="list Strata's passes and named pipelines (options, defaults), then xDSL's",
        )  # fmt: skip
        arg_parser.add_argument(
            "--timing", action="store_true", help="print each pass's time and the total on stderr"
        )
        arg_parser.add_argument(
            "--crash-reproducer", metavar="PATH", default=None,
            help="where a pass that crashes (an internal error) writes the IR it was given and "
            "the pipeline that reproduces the crash (default: a fresh strata-crash-XXXX.mlir "
            f"in ${CRASH_DIR_VARIABLE} or the system temp directory)",
        )  # fmt: skip

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.input_file == "-":
            return sys.stdin.buffer, "mlir"
        return super().get_input_stream()

    def prepare_output(self) -> IO[str]:
        """-o output is collected here and written atomically only once everything
        succeeded (run): a failure leaves an existing file untouched. xDSL would open
        (and truncate) it before reading the input."""
        if self.args.output_file is None:
            return sys.stdout
        refuse_overwriting_input(self.args.output_file, self.args.input_file, "-o")
        self.pending_output = PendingOutput()
        return self.pending_output

    def run(self):
        super().run()
        if self.args.output_file is not None:
            write_atomically(self.args.output_file, self.pending_output.getvalue())

    def get_input_name(self):
        return "stdin" if self.args.input_file in (None, "-") else self.args.input_file

    def parse_chunk(self, chunk, file_extension, start_offset=0) -> ModuleOp | None:
        """Parse with source locations and verify at once, so a diagnostic says where
        the offending op is (also under --split-input-file)."""
        if file_extension != "mlir":
            return super().parse_chunk(chunk, file_extension, start_offset)
        module = LocatingParser(
            self.ctx, chunk.read(), self.get_input_name(), start_offset
        ).parse_module(not self.args.no_implicit_module)
        if not self.args.disable_verify and (error := verification_error(module)):
            raise VerifyException(error)
        return module

    def setup_pipeline(self):
        """Named pipelines spelled out into their steps, so --print-between-passes and
        --timing see each step; each pass's time is recorded (for --timing)."""
        refuse_overwriting_input(self.args.crash_reproducer, self.args.input_file, "--crash-reproducer")
        self.args.passes = expand_pipelines(self.args.passes)
        super().setup_pipeline()
        label = "verify, print" if self.args.print_between_passes else "verify"
        self.pipeline = ReproducingPipeline(
            self.pipeline.passes, timed_steps(self.pipeline.callback, label), self.args.crash_reproducer
        )

    def apply_passes(self, prog: ModuleOp):
        with recording() as timings:
            start = time.perf_counter()
            super().apply_passes(prog)
            total = time.perf_counter() - start
        if self.args.timing:
            print_timings(timings, total)


class PendingOutput(io.StringIO):
    """Text kept in memory (xDSL closes its output stream, even after a failure)."""

    def close(self) -> None:
        pass


class PrintAndExit(argparse.Action):
    """An option that prints `text()` and exits 0 (like --help)."""

    def __init__(self, option_strings, dest, text: Callable[[], str], help: str | None = None):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)
        self.text = text

    def __call__(self, parser, namespace, values, option_string=None):
        print(self.text())
        parser.exit()


def pass_signature(name: str, pass_type: type[ModulePass]) -> str:
    """`name{option: type = default, ...}` (the braces only where there are options)."""
    options = ", ".join(
        f"{o.name}: {o.expected_type.strip(chr(39))}" + (f" = {o.default_value}" if o.default_value is not None else "")
        for o in pass_options(pass_type)
    )  # fmt: skip
    return f"{name}{{{options}}}" if options else name


def pass_listing(available: dict[str, Callable[[], type[ModulePass]]]) -> str:
    """Strata's passes and named pipelines, one line each (signature, description; a
    pipeline's steps), then the upstream passes by name."""

    def line(name: str, pass_type: type[ModulePass], extra: str = "") -> str:
        return f"  {pass_signature(name, pass_type):<36}  {pass_description(pass_type)}{extra}"

    lines = ["Strata passes:"]
    lines += [line(name, factory()) for name, factory in STRATA_PASSES.items()]
    lines += ["", "Strata pipelines (strata-opt runs and prints them step by step):"]
    for name, pipeline in PIPELINES.items():
        steps = ", ".join(step.split("{")[0] for step in split_spec(pipeline.STEPS))
        lines.append(line(name, pipeline, f" Steps: {steps}."))
    strata = set(STRATA_PASSES) | set(PIPELINES)
    lines += ["", "Upstream xDSL passes:"]
    lines += [f"  {name}" for name in sorted(available) if name not in strata]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return run_reporting_errors(
        "strata-opt",
        lambda: StrataOptMain(description="Strata modular optimizer driver", args=argv).run(),
    )


if __name__ == "__main__":
    sys.exit(main())

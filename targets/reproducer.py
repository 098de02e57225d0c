"""Crash reproducers: when a pass fails with an internal error (a bug, not a diagnostic
about the input), the IR it was given is written to a file together with the pipeline that
reproduces the failure, as MLIR's `--mlir-pass-pipeline-crash-reproducer` does:

    // Strata crash reproducer: pass 'fuse-elementwise' raised RuntimeError: boom
    // rerun with: strata-opt /tmp/strata-crash-k2j4.mlir -p 'fuse-elementwise,lower-graph-to-tile'
    builtin.module { ... the module as that pass received it ... }

The error raised is a `PassCrash`: not a StrataError, so tools still report it as an
"internal error (please report)" and exit non-zero, with `reproducer written to PATH;
rerun with: strata-opt PATH -p '...'` appended.

Where: `--crash-reproducer PATH` of strata-opt (or `run_pipeline(..., reproducer=PATH)`),
else a fresh `strata-crash-XXXX.mlir` in $STRATA_CRASH_DIR, else in the system temp
directory. The file is written atomically (support.files.write_atomically).

Cost on success: one clone of the module before the pipeline. On a crash, the passes
before the failing one are replayed on that clone to recover the IR the failing pass got
(passes are deterministic); if the replay itself fails, the reproducer is the module before
the pipeline with the whole pipeline.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError

from strata.support.errors import StrataError, one_line
from strata.support.files import write_atomically

CRASH_DIR_VARIABLE = "STRATA_CRASH_DIR"
"""The environment variable naming the directory reproducers go to (default: the system
temp directory)."""

NOT_CRASHES = (StrataError, DiagnosticException, ParseError, RecursionError, MemoryError)
"""What a pass may raise that is not a bug to reproduce: diagnostics about the input
(StrataError, xDSL's VerifyException and other DiagnosticExceptions) and exhausted
resources, which the tools report on their own terms."""


class PassCrash(Exception):
    """A pass failed with an internal error; the message names the pass, the error and
    where the reproducer is (or why none could be written)."""

    def __init__(self, message: str, reproducer: str | None = None):
        super().__init__(message)
        self.reproducer = reproducer
        """The reproducer's path (None when it could not be written)."""


def pass_spec(p: ModulePass) -> str:
    """The pass in `-p` syntax, with the options that differ from their defaults."""
    return str(p.pipeline_pass_spec())


def pipeline_spec(passes) -> str:
    return ",".join(pass_spec(p) for p in passes)


def quoted(spec: str) -> str:
    """`spec` in single quotes for a POSIX shell (as the tools' messages show pipelines)."""
    return "'" + spec.replace("'", "'\\''") + "'"


def module_text(module: ModuleOp) -> str:
    """The module as strata-opt reads it (the generic form if the custom one cannot be
    printed: the bug may well be in a printer)."""
    try:
        return str(module)
    except Exception:
        from io import StringIO

        stream = StringIO()
        Printer(stream=stream, print_generic_format=True).print_op(module)
        return stream.getvalue()


def reproducer_path(requested: str | None) -> str:
    """`requested`, or a fresh strata-crash-XXXX.mlir (created empty, so the name is ours)
    in $STRATA_CRASH_DIR or the system temp directory."""
    if requested:
        return requested
    directory = os.environ.get(CRASH_DIR_VARIABLE) or tempfile.gettempdir()
    os.makedirs(directory, exist_ok=True)
    fd, path = tempfile.mkstemp(prefix="strata-crash-", suffix=".mlir", dir=directory)
    os.close(fd)
    return path


def write_reproducer(
    ctx: Context, before_pipeline: ModuleOp, passes: tuple[ModulePass, ...], failing: int,
    error: BaseException, requested: str | None,
) -> PassCrash:  # fmt: skip
    """Write the reproducer of `passes[failing]` raising `error` and return the PassCrash
    to raise (its message says where the file is and how to rerun it)."""
    name = passes[failing].name
    what = f"pass '{name}' crashed: {type(error).__name__}: {one_line(str(error)) or '(no message)'}"
    module, rest = before_pipeline.clone(), passes[failing:]
    try:
        for p in passes[:failing]:
            p.apply(ctx, module)
    except Exception:
        module, rest = before_pipeline, passes  # the replay differs: reproduce the whole pipeline
    spec = pipeline_spec(rest)
    try:
        path = reproducer_path(requested)
        command = f"strata-opt {shlex.quote(path)} -p {quoted(spec)}"
        header = (
            f"// Strata crash reproducer: {what}\n"
            f"// rerun with: {command}\n"
        )  # fmt: skip
        write_atomically(path, header + module_text(module))
    except Exception as e:  # never hide the crash behind a failure to report it
        return PassCrash(f"{what}; no reproducer written ({one_line(str(e))})")
    return PassCrash(f"{what}; reproducer written to {path}; rerun with: {command}", path)


@dataclass(frozen=True)
class ReproducingPipeline(PassPipeline):
    """A PassPipeline (the same passes, the same callback between them) that turns an
    internal error in a pass into a PassCrash with a reproducer."""

    reproducer: str | None = None
    """Where the reproducer goes (None: a fresh file, see reproducer_path)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        passes, callback = self.passes, self.callback
        if not passes:
            super().apply(ctx, op)
            return
        before = op.clone()
        if callback is not None:
            callback(None, op, passes[0])
        for i, p in enumerate(passes):
            try:
                p.apply(ctx, op)
            except (PassCrash, *NOT_CRASHES):
                raise
            except Exception as e:
                raise write_reproducer(ctx, before, passes, i, e, self.reproducer) from e
            if callback is not None:
                callback(p, op, passes[i + 1] if i + 1 < len(passes) else None)

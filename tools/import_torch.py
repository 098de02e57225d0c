"""strata-import: a saved PyTorch program (`torch.export.save`) as graph IR and parameters.

    strata-import model.pt2 -o model.mlir --params-out params.npz
    strata-run model.mlir --inputs inputs.npz --inputs params.npz

The IR is one func.func @forward: the model's tensor inputs first, then its parameters,
buffers and lifted constants (graph.role "param", graph.name the PyTorch name). The
parameters' .npz keys are their argument positions (`arg3`, `arg4`, ...), so the file is
one of strata-run's `--inputs`; the inputs' own .npz holds `arg0`, ... Both outputs are
written atomically. Needs PyTorch.
"""

from __future__ import annotations

import argparse
import logging
import sys

from strata.support.errors import InputError
from strata.support.files import refuse_overwriting_input, write_atomically
from strata.tools.diagnostics import run_reporting_errors, version_line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="strata-import", description="Import a torch.export program (.pt2) as graph IR.")
    p.add_argument("file", help="a .pt2 file written by torch.export.save")
    p.add_argument("-o", "--output", help="write the IR here (default: stdout)")
    p.add_argument("--params-out", help="write the parameters to this .npz (keys arg<position>)")
    p.add_argument("--name", default="forward", help="the function's name (default: forward)")
    p.add_argument("--version", action="version", version=version_line("strata-import"))
    return p


def load_program(path: str):
    try:
        import torch
    except ImportError:
        raise InputError("strata-import needs PyTorch: pip install 'strata-compiler[torch]'") from None
    # torch.export.load logs the traceback of a failed deserialization as a warning: keep
    # it off stderr, and report its last line (the cause) in the one diagnostic line
    records: list[logging.LogRecord] = []
    logger = logging.getLogger("torch.export")
    handlers, logger.handlers = logger.handlers, [_Collect(records)]
    try:
        return torch.export.load(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception as e:  # noqa: BLE001 - torch's reasons become one diagnostic
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        causes = [_last_line(r.exc_info[1]) for r in records if r.exc_info and r.exc_info[1] is not None]
        cause = f"; {causes[-1]}" if causes else ""
        if "pytree" in cause:
            cause += " (save a program whose inputs and outputs are tensors, tuples, lists or dicts)"
        raise InputError(f"{path}: not a loadable torch.export program ({type(e).__name__}: {first}{cause})") from None
    finally:
        logger.handlers = handlers


def _last_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return (lines[0] if lines else type(error).__name__).split(". ")[0]


class _Collect(logging.Handler):
    def __init__(self, records: list):
        super().__init__()
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def run(args: argparse.Namespace) -> int:
    for flag, path in (("-o", args.output), ("--params-out", args.params_out)):
        refuse_overwriting_input(path, args.file, flag)
    if args.output and args.params_out and args.output == args.params_out:
        raise InputError("-o and --params-out name the same file")
    program = load_program(args.file)
    from strata.frontends.torch import import_program

    imported = import_program(program, name=args.name)
    text = str(imported.module) + "\n"
    if args.params_out:
        first = len(imported.input_names)
        import numpy as np

        # .npy has no bfloat16: such parameters are stored as their uint16 bit patterns
        arrays = {
            f"arg{first + i}": value.view(np.uint16) if value.dtype.name == "bfloat16" else value
            for i, value in enumerate(imported.params.values())
        }

        write_atomically(args.params_out, lambda stream: np.savez(stream, **arrays))
    if args.output:
        write_atomically(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_reporting_errors("strata-import", lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())

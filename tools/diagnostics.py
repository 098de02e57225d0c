"""What the command-line tools share: reading the input module, turning errors into a
diagnostic and an exit code, the version line, and the --timing report."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

import strata
from strata.support.errors import ExecutionError, StrataError, one_line
from strata.support.timing import Timings

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


def read_module(path: str):
    """The module in the file `path` ('-': stdin), parsed and verified; diagnostics name
    the file (or "stdin")."""
    import strata

    if path == "-":
        return strata.parse_module(sys.stdin.read(), "stdin")
    return strata.parse_module(Path(path).read_text(), path)


def run_reporting_errors(tool: str, body: Callable[[], object]) -> int:
    """Run `body`; user errors print one diagnostic on stderr (no traceback) and give
    exit 2 (1 for run-time failures). STRATA_TRACEBACK=1 shows the traceback too."""
    try:
        result = body()
    except ExecutionError as e:
        return _report(tool, e, EXIT_RUNTIME)
    except (StrataError, ParseError, VerifyException, DiagnosticException) as e:
        return _report(tool, e, EXIT_USAGE)
    except (ValueError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
        return _report(tool, e, EXIT_USAGE)
    except RecursionError as e:
        # Python's stack ran out: in practice, input nested too deeply (regions,
        # attributes, locations) for the parser, verifier or printer.
        return _report(tool, e, EXIT_USAGE, prefix="input nested too deeply to process (", suffix=")")
    except MemoryError as e:
        return _report(tool, e, EXIT_RUNTIME, prefix="out of memory", suffix="", message=False)
    except Exception as e:
        return _report(tool, e, EXIT_USAGE, prefix="internal error (please report): ")
    return result if isinstance(result, int) else EXIT_OK


def _report(
    tool: str, error: BaseException, code: int, prefix: str = "", suffix: str = "", message: bool = True
) -> int:
    if os.environ.get("STRATA_TRACEBACK"):
        traceback.print_exception(error)
    text = one_line(str(error).rstrip() or type(error).__name__) if message else ""
    print(f"{tool}: {prefix}{text}{suffix}", file=sys.stderr)
    return code


def version_line(tool: str) -> str:
    """What `TOOL --version` prints."""
    return f"{tool} {strata.__version__}"


def print_timings(timings: Timings, total: float) -> None:
    """The --timing breakdown on stderr: each recorded section, the rest, the total."""
    for line in timings.report(total):
        print(line, file=sys.stderr)

"""How the command-line tools turn errors into a diagnostic and an exit code."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from strata.errors import ExecutionError, StrataError

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


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
    except Exception as e:
        return _report(tool, e, EXIT_USAGE, prefix="internal error (please report): ")
    return result if isinstance(result, int) else EXIT_OK


def _report(tool: str, error: BaseException, code: int, prefix: str = "") -> int:
    if os.environ.get("STRATA_TRACEBACK"):
        traceback.print_exception(error)
    message = str(error).rstrip() or type(error).__name__
    print(f"{tool}: {prefix}{message}", file=sys.stderr)
    return code

"""Writing output files safely: all or nothing.

`write_atomically(path, data)` writes to a temporary file in the same directory, fsyncs
it and renames it over `path`, so a failure (a full disk, an error while the data is
produced, an interrupt) leaves `path` as it was: never empty, never half-written.
Special files that cannot be replaced by a rename (`/dev/stdout`, `/dev/null`, a FIFO)
are written directly. Every failure is an `OutputError` naming the path."""

from __future__ import annotations

import io
import os
import stat
import tempfile
from collections.abc import Callable
from typing import IO

from strata.support.errors import StrataError


class OutputError(StrataError):
    """An output file that cannot be written (directory missing, no permission, disk full)."""


def same_file(a: str, b: str) -> bool:
    """Whether the paths `a` and `b` name the same existing file (or the same path)."""
    if a in ("-", None) or b in ("-", None):
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def refuse_overwriting_input(output: str | None, input_path: str | None, flag: str) -> None:
    """An OutputError when the output `flag` names the input file (which it would destroy)."""
    if output and input_path and same_file(output, input_path):
        raise OutputError(f"{flag} {output}: is the input file; refusing to overwrite it")


def write_atomically(path: str | os.PathLike, data: str | bytes | Callable[[IO[bytes]], object]) -> None:
    """Write `data` (text, bytes, or a function writing to a binary file object) to
    exactly `path`, replacing it only once everything is written and synced."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise OutputError(f"cannot write {path}: is a directory")
        _write_direct(path, data)  # a device or FIFO: no rename possible
        return
    if mode is not None and os.path.islink(path):  # replace the file the link points to
        path = os.path.realpath(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as stream:
            _emit(stream, data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, (mode & 0o7777) if mode is not None else 0o666 & ~_UMASK)
        os.replace(temp, path)
    except BaseException as e:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
        raise


def _write_direct(path: str, data) -> None:
    buffer = io.BytesIO()  # produced in full first (and seekable, for zip writers)
    _emit(buffer, data)
    try:
        with open(path, "wb") as stream:
            stream.write(buffer.getvalue())
            stream.flush()
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None


def _emit(stream: IO[bytes], data) -> None:
    if isinstance(data, str):
        stream.write(data.encode())
    elif isinstance(data, (bytes, bytearray, memoryview)):
        stream.write(data)
    else:
        data(stream)


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()
"""Read once, at import: os.umask can only be read by setting it, which races with
other threads creating files."""

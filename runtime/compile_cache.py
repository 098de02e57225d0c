"""The on-disk compile cache: what a compile produced, kept across processes by key.

A CPU compile spends most of its time in the xDSL pipeline and in LLVM; a later process
compiling the same program on the same machine with the same Strata loads the stored
result instead (runtime/cpu.py decides what an entry holds and what its key covers).

    STRATA_CACHE_DIR=/path   where entries live (else $XDG_CACHE_HOME/strata, else
                             ~/.cache/strata)
    STRATA_CACHE=0 (or off)  no cache: every compile runs in full

Both are read on every compile, so changing them in a running process takes effect.

An entry is one file, `<key>.entry`: a magic line, the sha256 of the payload, the payload.
Writers write a temporary file in the same directory and `os.replace` it into place, so
readers see a whole entry or none and concurrent writers of one key leave one valid
entry. A reader that finds a wrong magic, a short file or a checksum mismatch (or whose
caller cannot decode the payload) removes the entry and reports a miss: a damaged entry
is compiled again, never run. A cache that cannot be read or written (read-only
directory, full disk) makes compiles slower, never fail: the first failed write warns
once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
import sys
import tempfile
import warnings
from collections.abc import Callable
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TypeVar

FORMAT_VERSION = 1
"""Bumped whenever what an entry holds, or how it is laid out, changes."""
MAGIC = b"strata-cache\n"
SUFFIX = ".entry"
SOURCE_PACKAGES = (
    "strata",
    "strata.support",
    "strata.dialects",
    "strata.transforms",
    "strata.lowering",
    "strata.runtime",
    "strata.targets",
)
"""The packages whose source decides what a compile produces (front ends and tools only
build or read the graph, which the key holds itself)."""

T = TypeVar("T")
_warned = False


def enabled() -> bool:
    return os.environ.get("STRATA_CACHE", "1").strip().lower() not in ("0", "off", "false", "no")


def cache_dir() -> Path:
    """Where entries are kept: $STRATA_CACHE_DIR, else $XDG_CACHE_HOME/strata, else
    ~/.cache/strata (it need not exist yet)."""
    if explicit := os.environ.get("STRATA_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "strata"


def clear_cache() -> int:
    """Remove every entry (and leftover temporary file) from `cache_dir()`; the number of
    entries removed. Other files in the directory are left alone."""
    directory = cache_dir()
    removed = 0
    if not directory.is_dir():
        return 0
    for path in directory.iterdir():
        if path.suffix in (SUFFIX, ".tmp"):
            try:
                path.unlink()
                removed += path.suffix == SUFFIX
            except FileNotFoundError:  # a concurrent clear or replace
                pass
    return removed


@cache
def strata_fingerprint() -> str:
    """The installed version and a hash of the source of SOURCE_PACKAGES (once per
    process): an edited source tree never reuses entries an older one wrote."""
    try:
        installed = version("strata-compiler")
    except PackageNotFoundError:
        installed = "unknown"
    digest = hashlib.sha256()
    for package in SOURCE_PACKAGES:
        spec = importlib.util.find_spec(package)
        for root in (spec.submodule_search_locations or []) if spec else []:
            files = sorted(Path(root).glob("*.py")) if package == "strata" else sorted(Path(root).rglob("*.py"))
            for path in files:
                digest.update(f"{package}/{path.relative_to(root)}\0".encode())
                digest.update(path.read_bytes())
    return f"{installed} {sys.version_info[0]}.{sys.version_info[1]} {digest.hexdigest()}"


def key(*parts: str) -> str:
    """The sha256 (hex) of the format version, `strata_fingerprint()` and `parts` (each
    length-prefixed, so no two part lists collide)."""
    digest = hashlib.sha256()
    for part in (str(FORMAT_VERSION), strata_fingerprint(), *parts):
        data = part.encode()
        digest.update(struct.pack("<Q", len(data)) + data)
    return digest.hexdigest()


def pack(header: dict, blobs: list[bytes]) -> bytes:
    """A payload: `header` as JSON (with each blob's length added) and the blobs after it."""
    head = json.dumps({**header, "blob_sizes": [len(b) for b in blobs]}).encode()
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def unpack(payload: bytes) -> tuple[dict, list[memoryview]]:
    """`pack`'s header and blobs (views of `payload`); ValueError if it does not add up."""
    (size,) = struct.unpack_from("<Q", payload)
    header = json.loads(payload[8 : 8 + size])
    view, at, blobs = memoryview(payload), 8 + size, []
    for n in header.pop("blob_sizes"):
        blobs.append(view[at : at + n])
        at += n
    if at != len(payload):
        raise ValueError("payload size does not match its header")
    return header, blobs


def load(entry_key: str, decode: Callable[[bytes], T]) -> T | None:
    """`decode(payload)` of the entry `entry_key`, or None on a miss. A damaged entry, or
    one `decode` raises on, is removed (and is a miss)."""
    if not enabled():
        return None
    path = cache_dir() / f"{entry_key}{SUFFIX}"
    try:
        data = path.read_bytes()
    except OSError:  # no entry, or an unreadable one
        return None
    head = len(MAGIC) + 32
    payload = data[head:]
    if data[: len(MAGIC)] == MAGIC and len(data) >= head and hashlib.sha256(payload).digest() == data[len(MAGIC) : head]:
        try:
            return decode(payload)
        except Exception:  # noqa: BLE001 - a stale or damaged entry of any kind is a miss
            pass
    _remove(path)
    return None


def store(entry_key: str, payload: bytes) -> None:
    """Write the entry atomically; a failure to write only warns (once per process)."""
    if not enabled():
        return
    directory = cache_dir()
    temporary = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=entry_key[:16], suffix=".tmp")
        with os.fdopen(handle, "wb") as f:
            f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(temporary, directory / f"{entry_key}{SUFFIX}")
    except OSError as e:
        if temporary is not None:
            _remove(Path(temporary))
        _warn_once(f"strata: cannot write to the compile cache ({directory}: {e.strerror or e}); compiling without it")


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _warn_once(message: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(message, RuntimeWarning, stacklevel=3)

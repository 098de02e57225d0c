"""Hostile inputs for the tools: mutated IR text and mutated .npz files.

A generated program (generate.py) is printed, then damaged the way files get damaged or
hand-edited: spans deleted, lines duplicated or swapped, numbers replaced by extreme
ones, types and op names exchanged, junk inserted, the text cut short. `strata-opt` reads
it (parse, verify, canonicalize, print); if it still verifies, `strata-run` compiles and
runs it. For the npz reader, a valid input file's members are damaged (header fields,
shapes, dtypes, truncation, flipped bytes, renamed or extra members) and `strata-run
--inputs` reads it.

Any exit status is acceptable except an internal error (a traceback's message, exit
status other than 0, 1, 2) — bad input must give a diagnostic, nothing else.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
import zipfile

import numpy as np

from strata.tools.fuzz.differential import Outcome
from strata.tools.fuzz.generate import OP_NAMES, generate
from strata.tools.fuzz.npz import npz_bytes

EXTREME_NUMBERS = ("0", "-1", "1", "2147483648", "9223372036854775808", "1e308", "-0", "nan", "99999999999", "3")
TYPES = ("f32", "f64", "f16", "bf16", "i1", "i32", "i64", "index", "si32", "tensor<?xf32>", "memref<4xf32>")
JUNK = '{}()<>[]%:,="x0123456789 \n'


def mutate_text(text: str, rng: np.random.Generator) -> str:
    for _ in range(int(rng.integers(1, 4))):
        text = MUTATIONS[int(rng.integers(len(MUTATIONS)))](text, rng)
    return text


def _delete_span(text: str, rng) -> str:
    start = int(rng.integers(len(text) + 1))
    return text[:start] + text[start + int(rng.integers(1, 21)):]


def _duplicate_line(text: str, rng) -> str:
    lines = text.splitlines(keepends=True)
    i = int(rng.integers(len(lines)))
    return "".join(lines[: i + 1] + [lines[i]] + lines[i + 1:])


def _swap_lines(text: str, rng) -> str:
    lines = text.splitlines(keepends=True)
    i, j = (int(k) for k in rng.integers(len(lines), size=2))
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def _replace_token(pattern: str, choices):
    def mutate(text: str, rng) -> str:
        matches = list(re.finditer(pattern, text))
        if not matches:
            return text
        m = matches[int(rng.integers(len(matches)))]
        return text[: m.start()] + str(choices[int(rng.integers(len(choices)))]) + text[m.end():]

    return mutate


def _insert_junk(text: str, rng) -> str:
    at = int(rng.integers(len(text) + 1))
    junk = "".join(JUNK[int(k)] for k in rng.integers(len(JUNK), size=int(rng.integers(1, 6))))
    return text[:at] + junk + text[at:]


def _truncate(text: str, rng) -> str:
    return text[: int(rng.integers(len(text) + 1))]


MUTATIONS = (
    _delete_span,
    _duplicate_line,
    _swap_lines,
    _replace_token(r"-?\d+(\.\d+)?(e[+-]?\d+)?", EXTREME_NUMBERS),
    _replace_token(r"\b(f16|bf16|f32|f64|i1|i32|i64)\b", TYPES),
    _replace_token(r"graph\.\w+", [f"graph.{name}" for name in OP_NAMES] + ["graph.nope", "tile.load"]),
    _insert_junk,
    _truncate,
)


def run_tool(main, argv: list[str]) -> tuple[int, str]:
    """A tool's `main(argv)` in this process: exit status and stderr."""
    stderr, stdout = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
        try:
            status = main(argv)
        except SystemExit as e:  # argparse
            status = e.code if isinstance(e.code, int) else 2
    return int(status or 0), stderr.getvalue()


def _verdict(tool: str, status: int, stderr: str) -> Outcome | None:
    if "internal error" in stderr or "Traceback" in stderr or status not in (0, 1, 2):
        return Outcome("internal", tool, f"exit {status}: {stderr.strip()[:300]}")
    return None


def fuzz_parser(seed: int, workdir: str) -> Outcome:
    """Mutate program `seed`'s text; strata-opt and (if it verifies) strata-run on it."""
    from strata.tools import opt, run

    rng = np.random.default_rng([seed, 1])
    text = mutate_text(str(generate(seed, max_ops=8).module), rng)
    path = os.path.join(workdir, f"mutated-{seed}.mlir")
    with open(path, "w") as f:
        f.write(text)
    status, stderr = run_tool(opt.main, [path, "-p", "canonicalize", "-o", os.devnull])
    if (failure := _verdict("strata-opt", status, stderr)) is not None:
        return failure
    if status == 0:
        status, stderr = run_tool(run.main, [path])
        if (failure := _verdict("strata-run", status, stderr)) is not None:
            return failure
    return Outcome("ok")


def fuzz_npz(seed: int, workdir: str) -> Outcome:
    """Damage the inputs file of program `seed`; strata-run --inputs on it."""
    from strata.tools import run

    rng = np.random.default_rng([seed, 2])
    program = generate(seed, max_ops=5)
    program_path = os.path.join(workdir, f"program-{seed}.mlir")
    with open(program_path, "w") as f:
        f.write(str(program.module))
    data = damaged_npz({f"arg{i}": a for i, a in enumerate(program.inputs)}, rng)
    inputs_path = os.path.join(workdir, f"inputs-{seed}.npz")
    with open(inputs_path, "wb") as f:
        f.write(data)
    status, stderr = run_tool(run.main, [program_path, "--inputs", inputs_path])
    return _verdict("strata-run", status, stderr) or Outcome("ok")


def damaged_npz(arrays: dict[str, np.ndarray], rng: np.random.Generator) -> bytes:
    kind = int(rng.integers(4))
    if kind == 0:  # the whole file, stored or deflated: cut short or bytes flipped
        data = bytearray(npz_bytes(arrays, compressed=rng.random() < 0.5))
        if rng.random() < 0.5:
            return bytes(data[: int(rng.integers(len(data) + 1))])
        for at in rng.integers(len(data), size=int(rng.integers(1, 8))):
            data[int(at)] = int(rng.integers(256))
        return bytes(data)
    members = {}
    for name, array in arrays.items():
        stream = io.BytesIO()
        stored = array.view(np.uint16) if array.dtype.name == "bfloat16" else array
        np.lib.format.write_array(stream, stored, allow_pickle=False)
        members[f"{name}.npy"] = stream.getvalue()
    if kind == 1 and members:  # one member's header edited
        name = list(members)[int(rng.integers(len(members)))]
        members[name] = _damaged_header(members[name], rng)
    elif kind == 2 and members:  # one member cut short
        name = list(members)[int(rng.integers(len(members)))]
        members[name] = members[name][: int(rng.integers(len(members[name]) + 1))]
    else:  # members renamed, added, or of another kind
        choice = int(rng.integers(3))
        if choice == 0 and members:
            name = list(members)[0]
            members["arg99.npy" if rng.random() < 0.5 else "notes.txt"] = members.pop(name)
        elif choice == 1:
            members["arg0.npy"] = np.lib.format.magic(1, 0) + b"\xff\xff" + b"{"
        else:
            members[f"arg{len(members)}.npy"] = b"\x93NUMPY garbage"
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return stream.getvalue()


HEADER_EDITS = (
    (rb"'descr': '[^']*'", (b"'descr': '|O'", b"'descr': '<f8'", b"'descr': '<V2'", b"'descr': 'zz'", b"'descr': '<i2'")),
    (rb"'shape': \([^)]*\)", (b"'shape': (99999999999, 99999999999)", b"'shape': (-1,)", b"'shape': ()",
                              b"'shape': (3,)", b"'shape': ('a',)")),
    (rb"'fortran_order': \w+", (b"'fortran_order': True", b"'fortran_order': 7")),
)


def _damaged_header(data: bytes, rng: np.random.Generator) -> bytes:
    pattern, choices = HEADER_EDITS[int(rng.integers(len(HEADER_EDITS)))]
    return re.sub(pattern, choices[int(rng.integers(len(choices)))], data, count=1)


def scratch_directory() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="strata-fuzz-")

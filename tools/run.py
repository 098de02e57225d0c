"""strata-run: compile and run one function (docs/interfaces.md)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import zipfile

import numpy as np
from xdsl.dialects.builtin import TensorType

import strata
from strata.api import checked_entry
from strata.check import compare, loosest_float
from strata.support.errors import InputError, StrataError
from strata.gradcheck import check_gradients
from strata.support.dtypes import BFLOAT16, tensor_dtype
from strata.support.files import refuse_overwriting_input, write_atomically
from strata.support.timing import recording
from strata.runtime.reference.interpreter import argument_label
from strata.runtime.plan_picture import plan_svg
from strata.targets import target_named, target_names
from strata.targets.passes import run_pipeline
from strata.tools.diagnostics import (
    EXIT_OK, EXIT_RUNTIME, print_timings, read_module, run_reporting_errors, version_line,
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="strata-run", description="Compile and run one function.")
    p.add_argument("file", help="an .mlir file ('-' for stdin)")
    p.add_argument("--entry", help="function to run (default: the only / first func.func)")
    p.add_argument("--target", default="cpu", choices=target_names())
    p.add_argument("-p", "--pipeline", help="pass pipeline to run before compiling")
    p.add_argument("--inputs", help=".npz with arg0, arg1, ... (missing ones are random; "
                   "bf16 ones as uint16 bit patterns)")
    p.add_argument("--seed", type=int, default=0, help="seed for generated inputs")
    p.add_argument("--outputs", help="write results to this .npz (result0, result1, ...)")
    p.add_argument("--check", action="store_true", help="compare with the reference")
    p.add_argument("--repeat", type=int, default=1, help="timed runs after one warm-up")
    p.add_argument("--timing", action="store_true",
                   help="print compile and median run time; on stderr, where compile time went "
                   "(each pass, LLVM optimization, JIT)")  # fmt: skip
    p.add_argument("--plan-json", help="write the memory plan as JSON (compiled targets)")
    p.add_argument("--plan-svg", help="draw the memory plan as an SVG picture (compiled targets)")
    p.add_argument("--check-grad", action="store_true",
                   help="check @ENTRY_grad (made by autodiff if missing) against f64 finite "
                   "differences; exit 1 if the worst relative error exceeds 1e-6")  # fmt: skip
    p.add_argument("--version", action="version", version=version_line("strata-run"))
    return p


def random_input(t: TensorType, rng: np.random.Generator) -> np.ndarray:
    """Floats standard normal, integers uniform in [0, 8), i1 fair coins."""
    shape, dtype = tuple(t.get_shape()), tensor_dtype(t)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        return rng.integers(0, 8, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def read_npz_header(npz, member: str):
    """(shape, dtype) of one .npy member of an open zip, from its header alone."""
    with npz.open(member) as stream:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    return tuple(shape), np.dtype(dtype)


def read_npz_array(npz, member: str) -> np.ndarray:
    with npz.open(member) as stream:
        return np.lib.format.read_array(stream, allow_pickle=False)


def load_npz(path: str, check=None) -> dict[str, np.ndarray]:
    """The arrays of the .npz file `path` by key, never unpickling anything. Each array's
    header is read first and passed to `check(key, shape, dtype)` (which may raise)
    before its data is decompressed. A file that is not a valid .npz is an InputError
    naming it."""
    try:
        npz = zipfile.ZipFile(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception as e:  # noqa: BLE001 - zipfile raises many kinds on damaged data (NotImplementedError, ...)
        raise InputError(f"{path}: not a valid .npz file ({(str(e).splitlines() or [''])[0]})") from None
    with npz:
        members = [m for m in npz.namelist() if m.endswith(".npy")]
        if len(members) != len(npz.namelist()):
            raise InputError(f"{path}: not a valid .npz file (members other than .npy arrays)")
        arrays = {}
        try:
            headers = {m[: -len(".npy")]: read_npz_header(npz, m) for m in members}
            for key, (shape, dtype) in headers.items():
                if dtype.hasobject:
                    raise InputError(f"{path}: {key} holds Python objects (pickled data is never loaded)")
            if check is not None:
                check(headers)
            for member in members:
                arrays[member[: -len(".npy")]] = read_npz_array(npz, member)
        except StrataError:
            raise
        except Exception as e:  # noqa: BLE001 - numpy's and zipfile's readers raise many kinds on damaged data (tokenize.TokenError, zlib.error, ...)
            reason = (str(e).splitlines() or [""])[0]
            raise InputError(f"{path}: not a valid .npz file ({type(e).__name__}: {reason})") from None
    return arrays


def load_inputs(function, inputs_path: str | None, seed: int) -> list[np.ndarray]:
    """The entry's arguments (`function` as `checked_entry` returns it: tensors only),
    from the .npz where given, else drawn from `seed`."""
    types = function.function_type.inputs.data
    expected = {f"arg{i}" for i in range(len(types))}

    def check(headers: dict[str, tuple[tuple[int, ...], np.dtype]]) -> None:
        if unknown := sorted(set(headers) - expected):
            raise InputError(
                f"{inputs_path}: unknown keys {unknown}; @{function.sym_name.data} takes "
                f"{', '.join(sorted(expected)) or 'no arguments'}"
            )
        for i, t in enumerate(types):
            if f"arg{i}" in headers:
                check_input(i, t, *headers[f"arg{i}"])

    def check_input(i: int, t: TensorType, shape: tuple[int, ...], dtype: np.dtype) -> None:
        if dtype == np.uint16 and tensor_dtype(t) == BFLOAT16:
            dtype = BFLOAT16  # .npy has no bfloat16: its bit patterns come as uint16
        if shape != tuple(t.get_shape()) or dtype != tensor_dtype(t):
            raise InputError(
                f"{inputs_path}: {argument_label(function, i)} of @{function.sym_name.data} "
                f"must be {t}, got shape {list(shape)} dtype {dtype}"
            )

    given = load_npz(inputs_path, check) if inputs_path else {}
    rng = np.random.default_rng(seed)
    args = []
    for i, t in enumerate(types):
        # Draw for every argument, given or not, so argN's random values depend only on
        # the seed and the signature, not on which other arguments the .npz supplies.
        generated = random_input(t, rng)
        arg = given.get(f"arg{i}", generated)
        args.append(arg.view(BFLOAT16) if arg.dtype == np.uint16 else arg)
    for i, (arg, t) in enumerate(zip(args, types)):
        check_input(i, t, arg.shape, arg.dtype)
    return args


def summarize(index: int, value: np.ndarray) -> str:
    text = np.array2string(value, threshold=8, edgeitems=2, precision=5)
    return f"result{index}: shape {list(value.shape)} {value.dtype}\n{text}"


def run(args: argparse.Namespace) -> int:
    if (args.plan_json or args.plan_svg) and target_named(args.target).pipeline is None:
        raise StrataError(f"--plan-json/--plan-svg need a compiled target, not '{args.target}' (--target cpu)")
    if args.repeat < 1:
        raise StrataError(f"--repeat must be >= 1, got {args.repeat}")
    for flag, path in (("--outputs", args.outputs), ("--plan-json", args.plan_json), ("--plan-svg", args.plan_svg)):
        refuse_overwriting_input(path, args.file, flag)
    module = read_module(args.file)
    with recording() as compile_timings:  # the user's pipeline counts as compile time
        start = time.perf_counter()
        if args.pipeline:  # first, so the entry may be a function it adds (-p autodiff --entry f_grad)
            run_pipeline(module, args.pipeline)
        pipeline_seconds = time.perf_counter() - start
    function = checked_entry(module, args.entry)
    inputs = load_inputs(function, args.inputs, args.seed)
    if args.check_grad:
        report = check_gradients(module, args.entry, args.seed, inputs=inputs if args.inputs else None)
        print(report)
        return EXIT_OK if report.ok() else EXIT_RUNTIME

    with recording() as target_timings:
        start = time.perf_counter()
        exe = strata.compile(module, target=args.target, entry=args.entry)
        compile_seconds = pipeline_seconds + time.perf_counter() - start
    compile_timings.entries += target_timings.entries
    if args.timing:
        print_timings(compile_timings, compile_seconds)

    if args.plan_json:
        write_atomically(args.plan_json, json.dumps(exe.plan, indent=2))
    if args.plan_svg:
        write_atomically(args.plan_svg, plan_svg(exe.plan))
    results = exe(*inputs)
    times = []
    for _ in range(args.repeat if args.timing else 0):
        start = time.perf_counter()
        exe(*inputs)
        times.append(time.perf_counter() - start)

    for i, value in enumerate(results):
        print(summarize(i, value))
    if args.outputs:
        # To exactly the path given (np.savez on a file name would append ".npz").
        arrays = {f"result{i}": r for i, r in enumerate(results)}
        write_atomically(args.outputs, lambda stream: np.savez(stream, **arrays))
    if args.timing:
        print(f"compile: {compile_seconds * 1e3:.3f} ms")
        print(f"run: median {statistics.median(times) * 1e3:.3f} ms over {len(times)} runs")
    if args.check:
        references = strata.interpret(module, *inputs, entry=args.entry)
        comparisons = compare(results, references, loosest_float(module))
        for c in comparisons:
            print(c)
        if not all(c.ok for c in comparisons):
            return EXIT_RUNTIME
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return run_reporting_errors("strata-run", lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())

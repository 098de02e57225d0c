"""strata-fuzz: differential fuzzing of every target against the reference.

    strata-fuzz --cases 10000 --jobs 2                  # random programs, CPU (+ PTX)
    strata-fuzz --cases 2000 --targets cuda             # on a GPU machine
    strata-fuzz --mode grad --cases 2000                # gradients (autodiff) of f32/f64 programs
    strata-fuzz --mode parser --cases 5000              # mutated IR text
    strata-fuzz --mode npz --cases 5000                 # mutated .npz inputs
    strata-fuzz --mode vsla --cases 2000                # variable-shape (vsla) programs, cpu vs reference

Cases run in worker processes, so a case that kills its process (a signal, an abort in
LLVM) is reported as "abort" instead of ending the run. Each failing program is shrunk
(shrink.py) and written to --out as `fuzz-SEED.mlir` + `fuzz-SEED.npz`; the summary
lists cases, outcomes, the ops covered and the reproducers. Exit status 1 if anything
failed.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
import warnings

from strata.tools.diagnostics import run_reporting_errors, version_line
from strata.tools.fuzz.differential import (
    CONFIGURATIONS, Outcome, available_configurations, run_gradient_module, run_module,
)  # fmt: skip
from strata.tools.fuzz.generate import OP_NAMES, generate
from strata.tools.fuzz.values import FLOATS
from strata.tools.fuzz.mutate import fuzz_npz, fuzz_parser, scratch_directory
from strata.tools.fuzz.shrink import Case, shrink, write_reproducer
from strata.tools.fuzz.vsla_programs import CONFIGURATIONS as VSLA_CONFIGURATIONS
from strata.tools.fuzz.vsla_programs import fuzz_vsla

MODES = ("programs", "grad", "parser", "npz", "vsla")
GRADIENT_FLOATS = ("f32", "f64")
"""Gradients of f16/bf16 programs are too sensitive to last-bit differences (a max or
relu choosing another element) for a differential test."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="strata-fuzz", description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=200, help="how many seeds (default 200)")
    p.add_argument("--seed", type=int, default=0, help="the first seed (default 0)")
    p.add_argument("--mode", choices=MODES, default="programs")
    p.add_argument("--targets", help=f"comma-separated, of {', '.join(CONFIGURATIONS)} "
                   "(default: all this machine can run)")  # fmt: skip
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--max-ops", type=int, default=25, help="ops per program, at most (default 25)")
    p.add_argument("--out", default="fuzz-failures", help="directory for reproducers (default ./fuzz-failures)")
    p.add_argument("--no-shrink", action="store_true", help="write failing programs as generated")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--version", action="version", version=version_line("strata-fuzz"))
    return p


def run_case(seed: int, args) -> dict:
    """One case; a JSON-able report (with the reproducer's path when it failed)."""
    if args.mode == "parser" or args.mode == "npz":
        with scratch_directory() as workdir:
            outcome = (fuzz_parser if args.mode == "parser" else fuzz_npz)(seed, workdir)
        return _report(seed, outcome)
    if args.mode == "vsla":
        configurations = [c for c in args.configurations if c in VSLA_CONFIGURATIONS] or list(VSLA_CONFIGURATIONS)
        outcome, names, module = fuzz_vsla(seed, configurations, min(args.max_ops, 12))
        report = _report(seed, outcome, sorted({f"vsla.{n}" for n in names}))
        if outcome.failed:
            os.makedirs(args.out, exist_ok=True)
            path = os.path.join(args.out, f"vsla-{seed}.mlir")
            with open(path, "w") as f:
                f.write(f"// strata-fuzz --mode vsla seed {seed}: {outcome.kind} on {outcome.configuration}: {outcome.detail}\n{module}")
            report["reproducer"] = path
        return report
    gradients = args.mode == "grad"
    program = generate(seed, max_ops=args.max_ops, floats=GRADIENT_FLOATS if gradients else FLOATS)
    case = Case(program.module, program.inputs, [v.tolerance for v in program.results])
    check = run_gradient_module if gradients else run_module
    outcome = check(case.module, case.inputs, case.bounds, args.configurations)
    report = _report(seed, outcome, sorted(set(program.op_names)))
    if outcome.failed:
        if not args.no_shrink:
            only = (outcome.configuration,) if outcome.configuration in CONFIGURATIONS else args.configurations
            case = shrink(case.clone(), outcome, lambda m, i, b: check(m, i, b, only))
        report["reproducer"] = _write(case, seed, outcome, args)
    return report


def _report(seed: int, outcome: Outcome, ops: list[str] | None = None) -> dict:
    return {"seed": seed, "kind": outcome.kind, "configuration": outcome.configuration,
            "detail": outcome.detail, "ops": ops or []}  # fmt: skip


def _write(case: Case, seed: int, outcome: Outcome, args) -> str:
    os.makedirs(args.out, exist_ok=True)
    note = (
        f"strata-fuzz seed {seed}: {outcome.kind} on {outcome.configuration}: {outcome.detail}\n"
        f"replay: strata-run fuzz-{seed}.mlir --inputs fuzz-{seed}.npz --check"
    )
    return write_reproducer(case, os.path.join(args.out, f"fuzz-{seed}"), note)[0]


def worker(args) -> int:
    """Read seeds from stdin, one per line; print 'start SEED' then the report as JSON."""
    warnings.simplefilter("ignore")  # numpy's warnings on NaN/inf in the reference
    for line in sys.stdin:
        seed = int(line)
        print(f"start {seed}", flush=True)
        print(json.dumps(run_case(seed, args)), flush=True)
    return 0


def drive(args) -> int:
    seeds = list(range(args.seed, args.seed + args.cases))
    started = time.perf_counter()
    reports: list[dict] = []
    shares = [seeds[i:: max(args.jobs, 1)] for i in range(max(args.jobs, 1))]
    workers = [_Worker(share, args) for share in shares if share]
    while any(w.alive for w in workers):
        for w in workers:
            if not w.alive:
                continue
            for report in w.poll():  # failures and progress as they come: long runs
                reports.append(report)
                if report["kind"] not in ("ok", "skipped"):
                    print(_failure_line(report), flush=True)
                if len(reports) % 1000 == 0:
                    print(f"... {len(reports)} cases, {time.perf_counter() - started:.0f} s", flush=True)
    _summarize(reports, args, time.perf_counter() - started)
    return 1 if any(r["kind"] not in ("ok", "skipped") for r in reports) else 0


class _Worker:
    """A `strata-fuzz --worker` process with its seeds; restarted past a seed that killed it."""

    def __init__(self, seeds: list[int], args):
        self.pending = list(seeds)
        self.args = args
        self.process: subprocess.Popen | None = None
        self.current: int | None = None
        self._start()

    @property
    def alive(self) -> bool:
        return self.process is not None

    def _start(self) -> None:
        if not self.pending:
            self.process = None
            return
        python = [sys.executable, "-P"] if sys.flags.safe_path else [sys.executable]  # the driver's sys.path
        command = [*python, "-m", "strata.tools.fuzz.cli", "--worker", "--mode", self.args.mode,
                   "--targets", ",".join(self.args.configurations), "--max-ops", str(self.args.max_ops),
                   "--out", self.args.out] + (["--no-shrink"] if self.args.no_shrink else [])  # fmt: skip
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.process.stdin.write("".join(f"{s}\n" for s in self.pending))
        self.process.stdin.close()

    def poll(self) -> list[dict]:
        """The reports of this worker's next case (blocking on it)."""
        line = self.process.stdout.readline()
        if line.startswith("start "):
            self.current = int(line.split()[1])
            return []
        if line:
            report = json.loads(line)
            self.pending.remove(report["seed"])
            self.current = None
            return [report]
        # The process ended: after its last seed, or killed by the one it was running.
        status = self.process.wait()
        reports = []
        if self.current is not None:
            self.pending.remove(self.current)
            reports.append(self._abort(self.current, status))
            self.current = None
        self._start()
        return reports

    def _abort(self, seed: int, status: int) -> dict:
        outcome = Outcome("abort", "process", f"the worker died (status {status}) on this case")
        report = _report(seed, outcome)
        if self.args.mode in ("programs", "grad"):
            floats = GRADIENT_FLOATS if self.args.mode == "grad" else FLOATS
            program = generate(seed, max_ops=self.args.max_ops, floats=floats)
            case = Case(program.module, program.inputs, [v.tolerance for v in program.results])
            report["reproducer"] = _write(case, seed, outcome, self.args)
        return report


def _summarize(reports: list[dict], args, seconds: float) -> None:
    kinds = collections.Counter(r["kind"] for r in reports)
    print(f"strata-fuzz: {len(reports)} cases ({args.mode}; seeds {args.seed}..{args.seed + args.cases - 1}; "
          f"targets {', '.join(args.configurations)}) in {seconds:.1f} s")  # fmt: skip
    print("outcomes: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    if args.mode in ("programs", "grad"):
        covered = {op for r in reports for op in r["ops"]}
        missing = sorted(f"graph.{name}" for name in OP_NAMES if f"graph.{name}" not in covered)
        print(f"ops covered: {len(covered)} of {len(OP_NAMES)}" + (f" (missing: {', '.join(missing)})" if missing else ""))
    for r in reports:
        if r["kind"] not in ("ok", "skipped"):
            print(_failure_line(r))


def _failure_line(r: dict) -> str:
    where = f" -> {r['reproducer']}" if "reproducer" in r else ""
    return f"FAIL seed {r['seed']}: {r['kind']} on {r['configuration']}: {r['detail']}{where}"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def body() -> int:
        available = available_configurations()
        wanted = tuple(args.targets.split(",")) if args.targets else available
        unknown = [t for t in wanted if t not in CONFIGURATIONS]
        if unknown:
            raise ValueError(f"--targets: unknown {', '.join(unknown)} (expected {', '.join(CONFIGURATIONS)})")
        unavailable = [t for t in wanted if t not in available]
        if unavailable:
            raise ValueError(f"--targets: {', '.join(unavailable)} cannot run on this machine")
        if args.cases < 0 or args.jobs < 1 or args.max_ops < 3:
            raise ValueError("--cases must be >= 0, --jobs >= 1 and --max-ops >= 3")
        args.configurations = wanted
        return worker(args) if args.worker else drive(args)

    return run_reporting_errors("strata-fuzz", body)


if __name__ == "__main__":
    sys.exit(main())

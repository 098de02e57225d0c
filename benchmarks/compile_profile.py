"""Where cold compile time goes: the transformer block's SGD training step (4x128x256,
8 heads, ff 1024: benchmarks/cpu_training.py's), built and compiled for the CPU with
every stage timed (support.timing: autodiff, each cpu-pipeline pass, the verification
between them, the JIT cache key, LLVM translate / parse / optimize, MCJIT), and
optionally under cProfile, whose hottest functions are printed too.

    python benchmarks/compile_profile.py                   # the stage table
    python benchmarks/compile_profile.py --cprofile 25     # plus the top 25 functions
    python benchmarks/compile_profile.py --model mlp       # the MLP 32x512 instead

STRATA_CACHE=0 is set (no on-disk compile cache), the in-process JIT cache is cleared and one throwaway compile runs before (LLVM's one-time
set-up is not charged), so this is a cold compile of the program in a warm process.
cProfile roughly doubles Python-heavy stages: read its table for where, the stage table
(run without --cprofile) for how much.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import time

# Cold means cold: no on-disk compile cache (where the runtime has one) serves this compile.
os.environ["STRATA_CACHE"] = "0"

from common import print_header, print_table
from cpu_training import MODELS

import strata
from strata.lowering.tile_to_loops.kernel import kernel_functions
from strata.runtime import cpu
from strata.targets import passes
from strata.support.timing import recording, timed
from strata.transforms import autodiff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=list(MODELS), default="block")
    parser.add_argument("--cprofile", type=int, metavar="N", default=0, help="also profile; print the top N functions")
    parser.add_argument("--dump", metavar="FILE", help="with --cprofile: write the pstats file too")
    args = parser.parse_args()
    print_header(f"Cold compile of the {args.model} training step (SGD), by stage")

    warm = strata.Graph("warm")
    warm.output(warm.input("x", (4,)) * 2.0)
    strata.compile(warm.build(), target="cpu")
    cpu._JIT_CACHE.clear()

    title, shapes, strata_loss, _ = MODELS[args.model]
    inputs, params, extra = shapes()
    differentiate = autodiff.differentiate

    def timed_differentiate(*a, **k):
        with timed("autodiff (differentiate)"):
            return differentiate(*a, **k)

    # The verification after each pipeline step, timed one by one (with the op count it
    # walked, counted outside the timer); the stage table has their sum as "verify".
    verify_between, verifies = passes.verify_between, []

    def timed_verify_between(previous, module, following):
        start = time.perf_counter()
        verify_between(previous, module, following)
        seconds = time.perf_counter() - start
        if previous is not None:
            verifies.append((previous.name, sum(1 for _ in module.walk()), seconds))

    passes.verify_between = timed_verify_between  # run_pipeline looks it up per call
    profiler = cProfile.Profile() if args.cprofile else None
    with recording() as timings:
        start, cpu_start = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        strata.training.differentiate = timed_differentiate  # the name training.py calls
        try:
            with timed("build train step (graph + autodiff + inline)"):
                module, _, _ = strata.build_train_step(
                    lambda g: strata_loss(g, inputs, params, extra), strata.SGD(lr=1e-2, momentum=0.9)
                )
        finally:
            strata.training.differentiate = differentiate
        try:
            exe = strata.compile(module, target="cpu", entry="train_step")
        finally:
            passes.verify_between = verify_between
        if profiler:
            profiler.disable()
        total, cpu_total = time.perf_counter() - start, time.process_time() - cpu_start

    sums: dict[str, list] = {}
    for label, seconds, count in timings.entries:
        entry = sums.setdefault(label, [0.0, 0])
        entry[0] += seconds
        entry[1] += count
    # The build label contains autodiff: show autodiff nested under it.
    rows = [[label, count, seconds * 1e3, 100 * seconds / total] for label, (seconds, count) in sums.items()]
    outside = total - sum(s for label, (s, _) in sums.items() if not label.startswith("autodiff"))
    rows += [["other (lowering set-up, binding, ...)", "", outside * 1e3, 100 * outside / total],
             ["total (wall)", "", total * 1e3, 100.0], ["total (process CPU time)", "", cpu_total * 1e3, ""]]  # fmt: skip
    kernels = sum(op.name == "tile.launch" for op in exe.module.walk())
    print(f"{title}: {kernels} kernels, {sum(1 for _ in module.walk())} graph-level ops before the pipeline")
    print("(autodiff runs inside the build row; 'verify' is the verification after every pipeline step)")
    print_table(["stage", "runs", "ms", "% of total"], rows)

    print("\nverification after each step (ops walked: every op of the module, nested included)")
    print_table(["after", "ops", "ms", "us / op"], [[name, ops, s * 1e3, s / ops * 1e6] for name, ops, s in verifies])

    # What LLVM is handed: kernels, how many are the same loops under another name.
    kernels = kernel_functions(exe.module)
    bodies = {}
    for k in kernels:
        text = str(k).replace(f"@{k.sym_name.data}(", "@kernel(", 1)
        bodies.setdefault(text, []).append(k.sym_name.data)
    jit = getattr(exe.run, "jit", None)
    ir = jit.llvm_ir() if jit is not None and hasattr(jit, "llvm_ir") else ""
    print(
        f"\nLLVM input: {len(kernels)} kernel functions, {len(bodies)} distinct once renamed "
        f"({len(kernels) - len(bodies)} duplicates)"
        + (f"; optimized IR {len(ir.splitlines())} lines, {len(ir) / 1e6:.2f} MB" if ir else "")
    )

    if profiler:
        for key in ("cumulative", "tottime"):
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats(key).print_stats(args.cprofile)
            print(f"\n## cProfile, top {args.cprofile} by {key}")
            print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[-20000:])
        if args.dump:
            profiler.dump_stats(args.dump)


if __name__ == "__main__":
    main()

"""Memory planning: arena bytes vs naive (no reuse) vs the live-bytes lower bound, with
ablations (in-place reuse off, best-fit instead of first-fit), for the MLP and the
transformer block at several sizes. Also writes the transformer block's plan picture.

    /work/venv/bin/python benchmarks/memory_plan.py [--svg docs/plan-transformer-block.svg]

`planned` = activations + workspace arenas; `live bound` = the most bytes live at one step
(no allocator can do better without recomputation); `naive` = every intermediate in its
own buffer. Results (the external arena) and constants are the same in every column.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common import print_header, print_table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

from transformer_block import build_transformer_block  # noqa: E402

import strata  # noqa: E402
from strata import ops  # noqa: E402
from strata.dialects.context import parse_module  # noqa: E402
from strata.targets.cpu import CpuPipelinePass
from strata.targets.passes import run_pipeline  # noqa: E402
from strata.runtime.plan_picture import plan_svg  # noqa: E402
from strata.transforms.plan_memory import programs, read_plan  # noqa: E402


def mlp(batch: int, width: int, layers: int) -> str:
    g = strata.Graph("mlp")
    h = g.input("x", (batch, width))
    for i in range(layers):
        h = ops.relu(ops.matmul(h, g.param(f"w{i}", (width, width)), transpose_b=True) + g.param(f"b{i}", (width,)))
    g.output(h)
    return str(g.build())


def plan_for(text: str, options: str = "") -> dict:
    module = parse_module(text)
    run_pipeline(module, CpuPipelinePass.STEPS.replace("plan-memory", f"plan-memory{options}"))
    (program,) = programs(module)
    return read_plan(program)


def live_bound(plan: dict) -> int:
    reused = [v for v in plan["values"] if v["arena"] in ("activations", "workspace")]
    slots = {(v["arena"], v["offset"], v["first"]): v for v in reused}.values()
    steps = range(max((v["last"] for v in slots), default=0) + 1)
    return max((sum(v["bytes"] for v in slots if v["first"] <= s <= v["last"]) for s in steps), default=0)


def row(name: str, text: str) -> list[object]:
    plans = {
        "first-fit": plan_for(text),
        "no in-place": plan_for(text, "{in_place=false}"),
        "best-fit": plan_for(text, "{strategy=best-fit}"),
    }
    planned = {k: p["arenas"]["activations"] + p["arenas"]["workspace"] for k, p in plans.items()}
    naive = plans["first-fit"]["naive_bytes"]
    return [
        name, plans["first-fit"]["kernels"], naive, planned["first-fit"], f"{planned['first-fit'] / naive:.2f}",
        live_bound(plans["first-fit"]), planned["no in-place"], planned["best-fit"],
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", help="write the transformer block's plan picture here")
    args = parser.parse_args()
    print_header("Memory plans (bytes)")
    rows = [
        row("mlp 32x512, 3 layers", mlp(32, 512, 3)),
        row("mlp 256x1024, 6 layers", mlp(256, 1024, 6)),
        row("transformer 2x16x64 (example)", (ROOT / "examples" / "transformer_block.mlir").read_text()),
        row("transformer 2x64x128, 4 heads", str(build_transformer_block(2, 64, 128, 4, 512).build())),
        row("transformer 4x128x256, 8 heads", str(build_transformer_block(4, 128, 256, 8, 1024).build())),
    ]
    print_table(
        ["program", "kernels", "naive", "planned", "planned/naive", "live bound", "no in-place", "best-fit"], rows
    )
    if args.svg:
        plan = plan_for(str(build_transformer_block(2, 64, 128, 4, 512).build()))
        Path(args.svg).write_text(plan_svg(plan))
        print(f"plan picture: {args.svg}")


if __name__ == "__main__":
    main()

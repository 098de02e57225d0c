"""`verify-memory-plan`: check a recorded plan (plan-memory) is safe.

Live ranges are recomputed from the program (launch order, results live to the return)
and must lie inside the recorded ones; within each arena, two buffers whose live ranges
intersect never overlap in bytes (buffers sharing one slot in place count once); every
offset is a multiple of the alignment; every buffer ends inside its arena's size. A
violation is a diagnostic that names the buffers.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from strata.dialects import tile
from strata.transforms.plan_memory import aligned, programs, read_plan


def used_steps(program) -> list[tuple[int, int] | None]:
    """Per tile.buffer, in order: the first and last step that really uses it."""
    block = program.body.block
    launches = [op for op in block.ops if isinstance(op, tile.LaunchOp)]
    returned = set(block.last_op.operands) if isinstance(block.last_op, func.ReturnOp) else set()
    steps: dict[SSAValue, list[int]] = {}
    for step, launch in enumerate(launches):
        for arg in set(launch.args):
            steps.setdefault(arg, []).append(step)
    for value in returned:
        steps.setdefault(value, []).append(len(launches))
    spans = []
    for op in block.ops:
        if isinstance(op, tile.BufferOp):
            used = steps.get(op.result)
            spans.append((min(used), max(used)) if used else None)
    return spans


def plan_errors(plan: dict, used: list[tuple[int, int] | None]) -> list[str]:
    errors = []
    for v, span in zip(plan["values"], used):
        if span is not None and not (v["first"] <= span[0] and span[1] <= v["last"]):
            errors.append(f"{v['name']}: used at steps {list(span)}, outside its planned life [{v['first']}, {v['last']}]")
    slots = {}
    for v in plan["values"]:
        slots.setdefault((v["arena"], v["offset"], v["first"]), v)
        if v["offset"] % plan["alignment"]:
            errors.append(f"{v['name']}: offset {v['offset']} is not a multiple of {plan['alignment']}")
        if v["offset"] + v["bytes"] > plan["arenas"][v["arena"]]:
            errors.append(f"{v['name']}: ends at {v['offset'] + v['bytes']}, past the {v['arena']} arena's {plan['arenas'][v['arena']]} bytes")
    values = list(slots.values())
    for i, a in enumerate(values):
        for b in values[i + 1 :]:
            same_time = a["first"] <= b["last"] and b["first"] <= a["last"]
            same_bytes = a["offset"] < b["offset"] + aligned(b["bytes"]) and b["offset"] < a["offset"] + aligned(a["bytes"])
            if a["arena"] == b["arena"] and same_time and same_bytes:
                errors.append(
                    f"{a['name']} and {b['name']} overlap in the {a['arena']} arena while both live "
                    f"([{a['first']}, {a['last']}] and [{b['first']}, {b['last']}])"
                )
    return errors


@dataclass(frozen=True)
class VerifyMemoryPlanPass(ModulePass):
    """Fail if any program's recorded plan is unsafe (see module docstring)."""

    name = "verify-memory-plan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for program in programs(op):
            if "tile.plan" not in program.attributes:
                raise DiagnosticException(f"verify-memory-plan: @{program.sym_name.data} has no plan; run plan-memory first")
            errors = plan_errors(read_plan(program), used_steps(program))
            if errors:
                raise DiagnosticException(f"verify-memory-plan: @{program.sym_name.data}: " + "; ".join(errors))

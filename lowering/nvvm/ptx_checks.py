"""Barrier safety of generated PTX: no thread may leave, or skip a barrier,
while others of its block wait at `bar.sync`.

For each `.entry` the checker builds the control-flow graph of the PTX (labels, `bra`,
`ret`/`exit`), finds the *divergent* branches — those whose predicate depends, through
register data flow, on the thread index (`%tid`, `%laneid`) or on memory (a loaded value
may differ per thread) — and, for each, the region between the branch and its immediate
post-dominator (where the threads reconverge). Two patterns deadlock or corrupt a block:

- **barrier in divergent code**: a `bar.sync` (or `barrier.sync`) inside the region: some
  threads reach it, others never do;
- **early exit before a barrier**: a `ret`/`exit` inside the region while a barrier is
  reachable after the reconvergence point: the threads that left never arrive there;
- **whole-warp shuffle in divergent code**: a `shfl.sync` / `vote.sync` / `match.sync` /
  `redux.sync` whose member mask is the full warp, inside the region: lanes that took the
  other way never join it. A branch on the thread index against a warp boundary (`%tid.x
  < 256`: warps specialized as producer and consumers) splits whole warps: a warp's lanes
  all take one way, so its shuffles are safe (a barrier is not: other warps skip it).

Uniform branches (loop counters, `%ctaid`, `%ntid`, parameters) are not divergent, so a
barrier inside a uniform loop and a thread loop followed by a barrier are accepted.

    violations = check_barriers(ptx)      # [] when safe
    count_barriers(ptx)                   # bar.sync / barrier.sync / bar.red / bar.arrive
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

THREAD_VARYING = re.compile(r"%(tid|laneid|lanemask_\w+|warpid|smid|clock)\b")
LABEL = re.compile(r"^(\$?[\w$]+):$")
BRANCH = re.compile(r"^(@(!?)(%\w+)\s+)?bra(\.uni)?\s+(\$?[\w$]+);$")
PREDICATE_GUARD = re.compile(r"^@!?(%\w+)\s+")
REGISTER = re.compile(r"%[A-Za-z_][\w]*")
BARRIER = re.compile(r"^(@!?%\w+\s+)?(bar\.sync|barrier\.sync|bar\.red|barrier\.red|bar\.arrive)\b")
EXIT = re.compile(r"^(@!?%\w+\s+)?(ret|exit)\b")
WHOLE_WARP = re.compile(r"^(@!?%\w+\s+)?(shfl|vote|match|redux)\.sync\b.*,\s*(-1|0xffffffff|0xFFFFFFFF|4294967295)\s*;$")
"""Warp-synchronous instructions whose member mask names the whole warp."""
THREAD_INDEX_COPY = re.compile(r"^mov\.u32\s+(%\w+),\s*%tid\.x;$")
WIDTH_CONVERSION = re.compile(r"^(?:cvt\.[us](?:32|64)\.[us](?:32|64)|mov\.b?u?(?:32|64))\s+(%\w+),\s*(%\w+);$")
WARP_TEST = re.compile(r"^setp\.(lt|ge|le|gt)\.(u32|s32)\s+%\w+,\s*(%\w+),\s*(\d+|0x[0-9a-fA-F]+);$")
"""A comparison of a register with a constant (warp_uniform_test)."""
THREAD_DEPENDENT_OPCODES = ("ld.", "atom.", "red.", "shfl.", "vote.", "match.", "activemask")
"""Instructions whose result may differ per thread whatever their operands (except ld.param)."""


@dataclass
class Block:
    name: str
    instructions: list[str] = field(default_factory=list)
    successors: list[str] = field(default_factory=list)
    branch_predicate: str | None = None

    @property
    def has_barrier(self) -> bool:
        return any(BARRIER.match(i) for i in self.instructions)

    @property
    def exits(self) -> bool:
        return any(EXIT.match(i) for i in self.instructions)


@dataclass(frozen=True)
class Violation:
    kernel: str
    kind: str
    branch_block: str
    detail: str

    def __str__(self) -> str:
        return f"kernel {self.kernel}: {self.kind} after the divergent branch in {self.branch_block}: {self.detail}"


def entries(ptx: str) -> dict[str, list[str]]:
    """The instruction lines of each `.entry` body."""
    kernels: dict[str, list[str]] = {}
    for match in re.finditer(r"\.entry\s+([\w$]+)\s*\((.*?)\)\s*(?:\.\w+[^{]*)?\{", ptx, re.S):
        depth, i = 1, match.end()
        while depth and i < len(ptx):
            depth += {"{": 1, "}": -1}.get(ptx[i], 0)
            i += 1
        body = ptx[match.end() : i - 1]
        lines = []
        for raw in body.splitlines():
            line = raw.split("//")[0].strip()
            if line and not line.startswith((".reg", ".shared", ".local", ".pragma", "{", "}")):
                lines.append(line)
        kernels[match.group(1)] = lines
    return kernels


def control_flow(lines: list[str]) -> tuple[list[Block], dict[str, Block]]:
    blocks: list[Block] = [Block("entry")]
    for line in lines:
        label = LABEL.match(line)
        if label:
            blocks.append(Block(label.group(1)))
            continue
        current = blocks[-1]
        current.instructions.append(line)
        branch = BRANCH.match(line)
        if branch or EXIT.match(line) and not line.startswith("@"):
            blocks.append(Block(f"{current.name}.after"))
    for index, block in enumerate(blocks):
        last = block.instructions[-1] if block.instructions else ""
        branch = BRANCH.match(last)
        falls_through = index + 1 < len(blocks)
        if branch:
            block.successors.append(branch.group(5))
            if branch.group(1):
                block.branch_predicate = branch.group(3)
                if falls_through:
                    block.successors.append(blocks[index + 1].name)
        elif EXIT.match(last) and not last.startswith("@"):
            pass
        elif falls_through:
            block.successors.append(blocks[index + 1].name)
    return blocks, {b.name: b for b in blocks}


def thread_index_copies(lines: list[str]) -> set[str]:
    """Registers that hold %tid.x itself: moved from it, or converted between integer
    widths from such a register (the index is below 1024: every width holds it)."""
    copies: set[str] = set()
    for line in lines:
        if m := THREAD_INDEX_COPY.match(line):
            copies.add(m.group(1))
        elif (m := WIDTH_CONVERSION.match(line)) and m.group(2) in copies:
            copies.add(m.group(1))
    return copies


def warp_uniform_test(line: str, thread_index: set[str]) -> bool:
    """Whether `line` compares the thread index with a warp boundary (t < 32n, t >= 32n,
    t <= 32n - 1, t > 32n - 1): its predicate is the same for the 32 threads of a warp."""
    m = WARP_TEST.match(line)
    if not m or m.group(3) not in thread_index:
        return False
    comparison, bound = m.group(1), int(m.group(4), 0)
    return (bound if comparison in ("lt", "ge") else bound + 1) % 32 == 0


def varying_registers(lines: list[str], within_warps: bool = False) -> set[str]:
    """Registers whose value may differ between the threads of a block (a fixpoint over
    the register data flow: thread indices, loads and shuffles, and what they feed), or
    (`within_warps`) between the threads of a warp: a test of the thread index against a
    warp boundary is then uniform."""
    varying: set[str] = set()
    instructions = []
    thread_index = thread_index_copies(lines) if within_warps else set()
    for line in lines:
        if within_warps and warp_uniform_test(line, thread_index):
            continue
        if LABEL.match(line) or BRANCH.match(line):
            continue
        body = PREDICATE_GUARD.sub("", line).rstrip(";")
        parts = body.split(None, 1)
        if len(parts) < 2:
            continue
        opcode, operands = parts
        registers = REGISTER.findall(operands)
        if not registers:
            continue
        first = operands[: operands.index("}") + 1] if operands.startswith("{") else operands.split(",")[0]
        destinations = [] if first.startswith("[") else REGISTER.findall(first)  # {%f1, %f2}, %r|%p, %r
        sources = REGISTER.findall(operands[len(first) :])
        guard = PREDICATE_GUARD.match(line)
        if guard:
            sources.append(guard.group(1))  # a predicated write makes the result depend on it
        inherently = bool(THREAD_VARYING.search(operands)) or opcode.startswith(THREAD_DEPENDENT_OPCODES) and not opcode.startswith("ld.param")
        instructions.append((destinations, sources, inherently))
    changed = True
    while changed:
        changed = False
        for destinations, sources, inherently in instructions:
            if inherently or any(s in varying for s in sources):
                for d in destinations:
                    if d not in varying:
                        varying.add(d)
                        changed = True
    return varying


def post_dominators(blocks: list[Block], by_name: dict[str, Block]) -> dict[str, set[str]]:
    exit_name = "<exit>"
    names = [b.name for b in blocks]
    successors = {b.name: [s for s in b.successors if s in by_name] or [exit_name] for b in blocks}
    everything = set(names) | {exit_name}
    post = {n: set(everything) for n in names}
    post[exit_name] = {exit_name}
    changed = True
    while changed:
        changed = False
        for name in reversed(names):
            common = set.intersection(*(post[s] for s in successors[name]))
            updated = {name} | common
            if updated != post[name]:
                post[name] = updated
                changed = True
    return post


def immediate_post_dominator(name: str, post: dict[str, set[str]]) -> str:
    strict = post[name] - {name}
    for candidate in strict:
        if all(other == candidate or other in post[candidate] for other in strict):
            return candidate
    return "<exit>"


def reachable(start: list[str], by_name: dict[str, Block], stop: str) -> set[str]:
    seen: set[str] = set()
    work = [s for s in start if s != stop]
    while work:
        name = work.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        work.extend(s for s in by_name[name].successors if s != stop)
    return seen


def check_kernel(name: str, lines: list[str]) -> list[Violation]:
    blocks, by_name = control_flow(lines)
    varying = varying_registers(lines)
    varying_in_warps = varying_registers(lines, within_warps=True)
    post = post_dominators(blocks, by_name)
    violations: list[Violation] = []
    for block in blocks:
        if block.branch_predicate is None or block.branch_predicate not in varying:
            continue
        join = immediate_post_dominator(block.name, post)
        region = reachable(block.successors, by_name, join)
        barriers = sorted(n for n in region if by_name[n].has_barrier)
        if barriers:
            violations.append(Violation(name, "barrier in divergent code", block.name, f"bar.sync in {', '.join(barriers)}"))
        warp_wide = sorted(n for n in region if any(WHOLE_WARP.match(i) for i in by_name[n].instructions))
        if warp_wide and block.branch_predicate in varying_in_warps:
            violations.append(Violation(
                name, "whole-warp shuffle in divergent code", block.name,
                f"a full-mask warp-synchronous instruction in {', '.join(warp_wide)}",
            ))  # fmt: skip
        exits = sorted(n for n in region if by_name[n].exits)
        if exits and join != "<exit>":
            after = reachable([join], by_name, "<exit>") | {join}
            if any(by_name[n].has_barrier for n in after if n in by_name):
                violations.append(Violation(
                    name, "early exit before a barrier", block.name,
                    f"threads leave in {', '.join(exits)} while a bar.sync follows {join}",
                ))  # fmt: skip
    for block in blocks:
        for position, line in enumerate(block.instructions):
            guard = PREDICATE_GUARD.match(line)
            if BARRIER.match(line) and guard and guard.group(1) in varying:
                violations.append(Violation(name, "barrier in divergent code", block.name, f"'{line}' is predicated"))
            if not (EXIT.match(line) and guard and guard.group(1) in varying):
                continue
            later = block.instructions[position + 1 :]
            after = reachable(block.successors, by_name, "<exit>")
            if any(BARRIER.match(i) for i in later) or any(by_name[n].has_barrier for n in after):
                violations.append(Violation(
                    name, "early exit before a barrier", block.name, f"'{line}' while a bar.sync follows",
                ))  # fmt: skip
    return violations


def check_barriers(ptx: str) -> list[Violation]:
    """Every barrier-safety violation in the kernels of `ptx` (see the module docstring)."""
    violations: list[Violation] = []
    for name, lines in entries(ptx).items():
        violations += check_kernel(name, lines)
    return violations


def count_barriers(ptx: str) -> int:
    return sum(1 for lines in entries(ptx).values() for line in lines if BARRIER.match(line))

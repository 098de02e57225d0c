"""Draw a memory plan: one panel per arena, buffers as rectangles over (schedule step ×
byte offset), so reuse shows at a glance (`strata-run --plan-svg`, `plan_svg(exe.plan)`)."""

from __future__ import annotations

from html import escape

WIDTH, PANEL_HEIGHT, MARGIN = 900, 260, 48
COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7")


def plan_svg(plan: dict) -> str:
    """An SVG document of the plan (the plan JSON object of docs/interfaces.md)."""
    arenas = [name for name, size in plan["arenas"].items() if size]
    steps = max([v["last"] for v in plan["values"]] + [0]) + 1
    height = MARGIN + len(arenas) * (PANEL_HEIGHT + MARGIN)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH + 2 * MARGIN}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<text x="{MARGIN}" y="20" font-size="14">memory plan: {plan["kernels"]} kernels, '
        f'naive {plan["naive_bytes"]} B, alignment {plan["alignment"]} B</text>',
    ]
    for panel, arena in enumerate(arenas):
        size = plan["arenas"][arena]
        top = MARGIN + panel * (PANEL_HEIGHT + MARGIN)
        parts.append(f'<text x="{MARGIN}" y="{top - 6}">{escape(arena)}: {size} B (y: byte offset, x: step 0..{steps - 1})</text>')
        parts.append(f'<rect x="{MARGIN}" y="{top}" width="{WIDTH}" height="{PANEL_HEIGHT}" fill="none" stroke="#999"/>')
        for i, v in enumerate(x for x in plan["values"] if x["arena"] == arena):
            x = MARGIN + WIDTH * v["first"] / steps
            w = max(WIDTH * (v["last"] - v["first"] + 1) / steps - 1, 1)
            y = top + PANEL_HEIGHT * v["offset"] / size
            h = max(PANEL_HEIGHT * v["bytes"] / size, 1)
            label = f'{v["name"]} {v["bytes"]} B @ {v["offset"]}'
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                f'fill="{COLORS[i % len(COLORS)]}" fill-opacity="0.7" stroke="#333"><title>{escape(label)}</title></rect>'
            )
            if h >= 12:
                parts.append(f'<text x="{x + 3:.1f}" y="{y + 11:.1f}">{escape(v["name"])}</text>')
    parts.append("</svg>")
    return "\n".join(parts)

"""The mesh explorer's results as MIME bundles.

Beside the input layouts (drawn by :mod:`workbench.views.sharding`): the operation XLA
compiled, its collectives with their device groups, ``memory_analysis`` per device, the
diff from the previous spec, and the output sharding XLA chose.  Used by the Panel app
(:mod:`workbench.apps.mesh_explorer`); the payload is
``application/vnd.jax-workbench.mesh-explorer+json`` (``docs/mime-sharding.md``, schema
``workbench/schemas/mesh-explorer.schema.json``).
"""

from __future__ import annotations

import json
from typing import Any

from workbench.engine.sharding.layout import LAYOUT_VERSION, mesh_text
from workbench.engine.sharding.mesh_explorer import ExplorerResult
from workbench.views._format import fmt_bytes, fmt_seconds
from workbench.views._html import esc, style_block
from workbench.views.display import Display, View
from workbench.views.sharding import (
    CSS,
    SCROLL,
    layout_html_body,
    layout_summary_html,
    layout_text,
)


def collectives_html(res: ExplorerResult) -> str:
    if res.operation == "layout":
        return ""
    if not res.collectives:
        return (
            '<table data-jwb="collectives"><tr><th>collectives</th></tr>'
            '<tr data-jwb="no-collectives"><td>none: every device computes its part '
            "without communicating</td></tr></table>"
        )
    rows = []
    for c in res.collectives:
        groups = _groups_text(c)
        rows.append(
            f'<tr data-jwb="collective" data-kind="{esc(c.kind)}" '
            f'data-axes="{esc(",".join(c.axes or []))}"><td>{esc(c.description)}</td>'
            f"<td>{esc(c.shape)}</td><td>{fmt_bytes(c.bytes)}</td>"
            f"<td>{esc(groups)}</td></tr>"
        )
    return (
        f'{SCROLL}<table data-jwb="collectives"><tr><th>collective</th>'
        "<th>shape (per device)</th><th>bytes per device</th><th>device groups</th></tr>"
        + "".join(rows)
        + "</table></div>"
    )


def _memory_cells(m: Any) -> list[tuple[str, int]]:
    """memory_analysis figures JAX reported, labelled, in the order both views show them."""
    return [
        (k, v)
        for k, v in (
            ("arguments", m.argument_bytes),
            ("outputs", m.output_bytes),
            ("temporaries", m.temp_bytes),
            ("aliased", m.alias_bytes),
            ("generated code", m.generated_code_bytes),
            ("peak", m.peak_bytes),
        )
        if v is not None
    ]


def memory_html(res: ExplorerResult) -> str:
    m = res.memory
    if m is None:
        return ""
    if not m.reported:
        return '<div class="jwb-meta">memory_analysis: not reported by this backend</div>'
    cells = _memory_cells(m)
    return (
        f'{SCROLL}<table data-jwb="memory"><tr><th colspan="2">memory per device '
        "(memory_analysis)</th></tr>"
        + "".join(f"<tr><td>{k}</td><td>{fmt_bytes(v)}</td></tr>" for k, v in cells)
        + "</table></div>"
    )


def diff_html(res: ExplorerResult) -> str:
    d = res.diff
    if d is None:
        return ""
    if not d.changed:
        return '<div data-jwb="diff" class="jwb-meta">no change from the previous spec</div>'
    items = [f'<li class="jwb-sh-add">+ {esc(a)}</li>' for a in d.added]
    items += [f'<li class="jwb-sh-del">− {esc(r)}</li>' for r in d.removed]
    delta = d.collective_bytes_after - d.collective_bytes_before
    arrow = "up" if delta > 0 else "down" if delta < 0 else "unchanged"
    items.append(
        f"<li>bytes moved by collectives per device: "
        f"{fmt_bytes(d.collective_bytes_before)} → {fmt_bytes(d.collective_bytes_after)}"
        f" ({arrow})</li>"
    )
    if d.output_before != d.output_after:
        items.append(f"<li>output sharding: {esc(d.output_before)} → {esc(d.output_after)}</li>")
    if d.temp_bytes_before != d.temp_bytes_after:
        items.append(
            f"<li>temporaries per device: {fmt_bytes(d.temp_bytes_before)} → "
            f"{fmt_bytes(d.temp_bytes_after)}</li>"
        )
    return f'<div data-jwb="diff"><b>changed</b><ul>{"".join(items)}</ul></div>'


def explorer_html(res: ExplorerResult, width: int = 300) -> str:
    head = (
        f'<div class="jwb-head"><span class="jwb-title">mesh {esc(mesh_text(res.mesh))}'
        f'</span><div class="jwb-meta">{res.device_count} devices · '
        f"{res.process_count} process(es)</div></div>"
    )
    inputs = "".join(layout_html_body(x, width) for x in res.inputs)
    parts = [head, '<div class="jwb-cols">', f'<div class="jwb-col"><h4>inputs</h4>{inputs}</div>']
    if res.operation != "layout":
        outs = "".join(layout_html_body(x, width) for x in res.outputs)
        times = (
            f"trace {fmt_seconds(res.trace_s)} · lower {fmt_seconds(res.lower_s)} · "
            f"compile {fmt_seconds(res.compile_s)}"
        )
        parts.append(
            f'<div class="jwb-col"><h4>{esc(res.op_text)}</h4>'
            f'<div class="jwb-meta" data-jwb="timings">{times}</div>'
            f"{diff_html(res)}{collectives_html(res)}{memory_html(res)}"
            f"<h4>output sharding XLA chose</h4>{outs}</div>"
        )
    parts.append("</div>")
    return f'{style_block()}<style>{CSS}</style><div class="jwb jwb-sh">{"".join(parts)}</div>'


def _groups_text(c: Any, limit: int = 8) -> str:
    if c.pairs is not None:
        return " ".join(f"{a}→{b}" for a, b in c.pairs[:limit]) + (
            " …" if len(c.pairs) > limit else ""
        )
    if c.groups is None:
        return ""
    return " ".join("{" + ",".join(map(str, g)) + "}" for g in c.groups[:limit]) + (
        " …" if len(c.groups) > limit else ""
    )


def diff_lines(res: ExplorerResult) -> list[str]:
    """The diff as text: the same facts ``diff_html`` shows."""
    d = res.diff
    if d is None:
        return []
    if not d.changed:
        return ["no change from the previous spec"]
    lines = ["changed:"]
    lines += [f"  + {a}" for a in d.added] + [f"  - {r}" for r in d.removed]
    lines.append(
        f"  bytes moved by collectives per device: "
        f"{fmt_bytes(d.collective_bytes_before)} → {fmt_bytes(d.collective_bytes_after)}"
    )
    if d.output_before != d.output_after:
        lines.append(f"  output sharding: {d.output_before} → {d.output_after}")
    if d.temp_bytes_before != d.temp_bytes_after:
        lines.append(
            f"  temporaries per device: {fmt_bytes(d.temp_bytes_before)} → "
            f"{fmt_bytes(d.temp_bytes_after)}"
        )
    return lines


def memory_line(res: ExplorerResult) -> str:
    m = res.memory
    if m is None:
        return ""
    if not m.reported:
        return "memory_analysis: not reported by this backend"
    cells = _memory_cells(m)
    return "memory per device: " + ", ".join(f"{k} {fmt_bytes(v)}" for k, v in cells)


def explorer_text(res: ExplorerResult) -> str:
    """The explorer's text/plain: everything the HTML says, diff, memory and groups included."""
    lines = [
        f"mesh {mesh_text(res.mesh)} · {res.device_count} devices · {res.process_count} process(es)"
    ]
    lines += [layout_text(x) for x in res.inputs]
    if res.operation != "layout":
        lines.append(
            f"{res.op_text}: trace {fmt_seconds(res.trace_s)} · lower "
            f"{fmt_seconds(res.lower_s)} · compile {fmt_seconds(res.compile_s)}"
        )
        lines += diff_lines(res)
        for c in res.collectives:
            groups = _groups_text(c)
            lines.append(
                f"  {c.description} {c.shape} ({fmt_bytes(c.bytes)} per device)"
                + (f"  device groups {groups}" if groups else "")
            )
        if not res.collectives:
            lines.append("  no collectives")
        if memory_line(res):
            lines.append(memory_line(res))
        lines.append("output sharding XLA chose:")
        lines += [layout_text(x) for x in res.outputs]
    return "\n".join(lines)


def _explorer_data(res: ExplorerResult) -> dict[str, Any]:
    return json.loads(json.dumps(res.to_dict()))


def explorer_summary_html(res: ExplorerResult) -> str:
    """The static picture a saved or exported notebook keeps of the explorer's state (the
    Panel app needs its kernel): the mesh, each input's spec and device blocks as text, the
    compiled operation's collectives, memory and diff; no script or stylesheet needed."""
    parts = [
        f"<p><b>mesh {esc(mesh_text(res.mesh))}</b> · {res.device_count} devices · "
        f"{res.process_count} process(es)</p>",
        *(layout_summary_html(x) for x in res.inputs),
    ]
    if res.operation != "layout":
        parts.append(
            f"<p><b>{esc(res.op_text)}</b> · trace {fmt_seconds(res.trace_s)} · lower "
            f"{fmt_seconds(res.lower_s)} · compile {fmt_seconds(res.compile_s)}</p>"
        )
        parts += [diff_html(res), collectives_html(res), memory_html(res)]
        parts.append("<p><b>output sharding XLA chose</b></p>")
        parts += [layout_summary_html(x) for x in res.outputs]
    return f'<div class="jwb jwb-sh">{"".join(parts)}</div>'


def _explorer_html(res: ExplorerResult) -> str:
    return explorer_summary_html(res)


#: the mesh explorer's state: inputs, the compiled operation, collectives, memory, diff
MESH_EXPLORER_VIEW: View[ExplorerResult] = View(
    kind="mesh-explorer",
    version=LAYOUT_VERSION,
    text=explorer_text,
    html=_explorer_html,
    data=_explorer_data,
    record_name="result",
)
MESH_EXPLORER_MIME = MESH_EXPLORER_VIEW.mime


def explorer_bundle(res: ExplorerResult) -> dict[str, Any]:
    return MESH_EXPLORER_VIEW.bundle(res)


def explorer_display(res: ExplorerResult) -> Display[ExplorerResult]:
    return Display(res, MESH_EXPLORER_VIEW)


__all__ = [
    "MESH_EXPLORER_MIME",
    "MESH_EXPLORER_VIEW",
    "collectives_html",
    "diff_html",
    "diff_lines",
    "explorer_bundle",
    "explorer_display",
    "explorer_html",
    "explorer_summary_html",
    "explorer_text",
    "memory_html",
    "memory_line",
]

"""The view of a :class:`~workbench.engine.cluster.compare.ClusterReport` (``%jaxcluster``).

- text/plain: the processes (host, devices, memory), the divergences in words first (what
  would hang), the compile ledgers side by side (one row per function, one column per
  process: signature and program fingerprint), the latest step times with the slowest
  flagged; bounded by :mod:`workbench.views._bounds` like every text;
- text/html: a static summary (the headline, the first divergences, the first rows of each
  table) plus the standalone runtime that draws the interactive view from the payload;
- application/vnd.jax-workbench.cluster+json: the record (``cluster.schema.json``).
"""

from __future__ import annotations

from typing import Any

from workbench.engine.cluster.compare import Cell, ClusterReport, Row
from workbench.views._format import fmt_bytes, fmt_seconds
from workbench.views._html import NOTE_CHARS, SUMMARY_ROWS, cut, esc, more_line, summary_table
from workbench.views.display import Display, View

SCHEMA_VERSION = 1
#: rows of the ledger the text draws (the divergent ones first); the payload too (the
#: HTML's static summary shows its first :data:`~workbench.views._html.SUMMARY_ROWS`)
MAX_ROWS = 200
#: variants drawn in one process's cell before "+N more"
MAX_VARIANTS = 3
#: processes (columns) of the ledger the static summary shows; the view has them all
SUMMARY_PROCESSES = 4
#: what needs attention: a warn-coloured rule beside text in the content colour (the warn
#: colour as text does not reach 4.5:1 on JupyterLab Light)
MARK = "border-left:3px solid var(--jp-warn-color1,#bc4c00);padding-left:4px"
TEXT_COLOUR = "color:var(--jp-content-font-color1,#1f2328)"


def _cell_text(cell: Cell | None) -> str:
    if cell is None:
        return "-"
    parts = [
        f"{v.text()}{(' @' + v.shardings) if v.shardings and v.shardings != '{replicated}' else ''}"
        f" #{fp}"
        for v, fp in cell.variants[:MAX_VARIANTS]
    ]
    more = len(cell.variants) - MAX_VARIANTS
    if more > 0:
        parts.append(f"+{more} more")
    return "; ".join(parts)


def _process_line(p: Any) -> str:
    if p.error is not None:
        return f"  process {p.index} (engine {p.engine}): {p.error}"
    mem = fmt_bytes(p.rss_bytes) if p.rss_bytes is not None else "n/a"
    live = fmt_bytes(p.live_array_bytes) if p.live_array_bytes is not None else "n/a"
    return (
        f"  process {p.index} (engine {p.engine}, {p.host}, pid {p.pid}): "
        f"{len(p.devices)} device{'s' if len(p.devices) != 1 else ''} "
        f"({' '.join(p.devices)}), memory {mem} resident, live arrays {live}, "
        f"{p.compiles_total} compile{'s' if p.compiles_total != 1 else ''}"
    )


def headline(rep: ClusterReport) -> str:
    alive = [p for p in rep.processes if p.error is None]
    hosts = sorted({p.host for p in alive})
    diverged = [d for d in rep.divergences if d.kind != "gone"]
    verdict = (
        f"{len(diverged)} divergence{'s' if len(diverged) != 1 else ''}"
        if diverged
        else "no divergence"
    )
    return (
        f"cluster: {len(rep.processes)} process{'es' if len(rep.processes) != 1 else ''} "
        f"on {len(hosts)} host{'s' if len(hosts) != 1 else ''} "
        f"({', '.join(hosts) or 'none answered'}); {verdict}; "
        f"gathered in {fmt_seconds(rep.gather_s)}"
    )


def _rows(rep: ClusterReport) -> list[Row]:
    return rep.rows[:MAX_ROWS]


def _steps_title(rep: ClusterReport) -> str:
    return (
        "step times (latest %%jaxprof, else %jaxbench; time in collectives where the "
        "profile shows it)"
        if rep.view == "profile"
        else "step times (latest %jaxbench)"
    )


def cluster_text(rep: ClusterReport) -> str:
    out = [headline(rep), *(_process_line(p) for p in rep.processes)]
    gone = [d for d in rep.divergences if d.kind == "gone"]
    diverged = [d for d in rep.divergences if d.kind != "gone"]
    for d in gone:
        out.append(f"! {d.text}")
    if diverged:
        out.append(f"divergence ({len(diverged)}):")
        out.extend(f"  ! {d.text}" for d in diverged)
    idx = rep.process_indices
    if rep.view == "ledger":
        out.append(
            "compile ledger: one row per function, one column per process "
            "(signature @shardings #program fingerprint)"
        )
        if not rep.rows:
            out.append("  (no compiles of user code yet)")
        table = [["function", *(f"process {p}" for p in idx)]]
        for r in _rows(rep):
            table.append(
                [
                    ("! " if r.diverged else "  ") + r.function,
                    *(_cell_text(r.cells.get(p)) for p in idx),
                ]
            )
        widths = [min(60, max(len(row[i]) for row in table)) for i in range(len(table[0]))]
        if rep.rows:
            for row in table:
                out.append(
                    "  " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                )
        if len(rep.rows) > MAX_ROWS:
            out.append(f"  ... {len(rep.rows) - MAX_ROWS} more functions (in .rows)")
    out.append(_steps_title(rep) + ":")
    if not rep.steps:
        out.append(
            "  (none yet: run %jaxbench or %%jaxprof under %%px)"
            if rep.view == "profile"
            else "  (none yet: run %jaxbench under %%px)"
        )
    for s in rep.steps:
        coll = "" if s.collectives_s is None else f", collectives {fmt_seconds(s.collectives_s)}"
        flag = "  <- slowest" if s.slowest else ""
        out.append(
            f"  process {s.process}: {fmt_seconds(s.seconds)} ({s.source} {s.label}{coll}){flag}"
        )
    if rep.straggler:
        out.append(f"! {rep.straggler}")
    return "\n".join(out)


def cluster_html(rep: ClusterReport) -> str:
    """The static summary (where scripts do not run): the headline, the first divergences,
    and the first rows of the processes, the compile ledger (divergent functions first, each
    marked "!" as in the text; the processes' step times in theirs), each a
    :func:`~workbench.views._html.summary_table`.  The whole ledger is the TypeScript view's,
    drawn from the payload (:mod:`workbench.views._standalone`)."""
    idx = rep.process_indices
    parts = [
        f'<div class="jwb jwb-cluster"><div><b>{esc(cut(headline(rep), NOTE_CHARS))}</b></div>'
    ]
    issues = rep.divergences
    if issues:
        parts.append('<ul style="list-style:none;padding-left:0;margin:4px 0">')
        parts.extend(
            f'<li style="{MARK};{TEXT_COLOUR}">{esc(cut(d.text, NOTE_CHARS // 2))}</li>'
            for d in issues[:SUMMARY_ROWS]
        )
        parts.append("</ul>" + more_line(len(issues) - SUMMARY_ROWS, "divergences"))
    # one row per process, its latest step time in it (the slowest flagged)
    steps = {s.process: s for s in rep.steps}
    procs = []
    for p in rep.processes:
        if p.error is not None:
            procs.append([str(p.index), str(p.engine), "", p.error, "", "", ""])
            continue
        mem = fmt_bytes(p.rss_bytes) if p.rss_bytes is not None else "n/a"
        s = steps.get(p.index)
        step = ""
        if s is not None:
            coll = (
                "" if s.collectives_s is None else f", collectives {fmt_seconds(s.collectives_s)}"
            )
            step = f"{fmt_seconds(s.seconds)}{coll}{' (slowest)' if s.slowest else ''}"
            step += f" ({s.source} {s.label})"
        procs.append(
            [
                str(p.index),
                str(p.engine),
                p.host,
                " ".join(p.devices),
                mem,
                str(p.compiles_total),
                step,
            ]
        )
    head = ["process", "engine", "host", "devices", "memory", "compiles", "step"]
    parts.append(summary_table(head, procs, what="processes"))
    if rep.view == "ledger" and rep.rows:
        cols = idx[:SUMMARY_PROCESSES]
        ledger = [
            [
                ("! " if r.diverged else "") + r.function,
                *(_cell_text(r.cells.get(p)) for p in cols),
            ]
            for r in _rows(rep)
        ]
        if len(idx) > len(cols):
            parts.append(
                f"<div>compile ledger, processes {', '.join(map(str, cols))} of {len(idx)}:</div>"
            )
        parts.append(
            summary_table(
                ["function", *(f"process {p}" for p in cols)],
                ledger,
                total=len(rep.rows),
                what="functions",
            )
        )
    if rep.straggler:
        parts.append(
            f'<div style="{MARK};{TEXT_COLOUR}">{esc(cut(rep.straggler, NOTE_CHARS))}</div>'
        )
    parts.append("</div>")
    return "".join(parts)


def _cluster_data(rep: ClusterReport) -> dict[str, Any]:
    return rep.to_dict(max_rows=MAX_ROWS)


CLUSTER_VIEW: View[ClusterReport] = View(
    kind="cluster",
    version=SCHEMA_VERSION,
    text=cluster_text,
    html=cluster_html,
    data=_cluster_data,
    record_name="report",
)


def cluster_display(rep: ClusterReport) -> Display[ClusterReport]:
    return Display(rep, CLUSTER_VIEW)


__all__ = ["CLUSTER_VIEW", "MAX_ROWS", "cluster_display", "cluster_html", "cluster_text"]

"""The views of a :class:`~workbench.engine.compile_time.report.CompileTimeReport`
(``%%jaxprof --compile``).

- text/plain: trace, lower and compile times; XLA's compile split into HLO passes and
  backend phases (top first, with the share of its wall time they cover), the code
  generation workers' passes, the program's size per source line, and the unrolled loops
  said in words.  Every table is cut at ``top`` rows with a line on what was left out, so
  the text stays small whatever the program;
- text/html: a static summary (the headline, the first rows of each table, the advice)
  plus the standalone runtime that draws the interactive view from the payload;
- application/vnd.jax-workbench.compile-time+json: the record (``compile-time.schema.json``),
  its lists cut at :data:`PAYLOAD_ROWS` rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.engine.compile_time.phases import (
    BACKEND,
    HLO_PASS,
    MLIR_PASS,
    PhaseTime,
)
from workbench.engine.compile_time.report import SCHEMA_VERSION, CompileTimeReport
from workbench.engine.compile_time.sizes import LineSize, UnrolledLoop
from workbench.views._format import fmt_count, fmt_percent, fmt_seconds
from workbench.views._html import FG1, FG2, cells_of, esc, source_label, summary_table
from workbench.views.display import Display, View

DEFAULT_TOP = 12
#: rows of each list the JSON payload keeps (the rest are summed in the text and HTML)
PAYLOAD_ROWS = 200
WARN = "var(--jp-warn-color1,#bc4c00)"
KIND_WORDS = {
    HLO_PASS: "HLO pass",
    BACKEND: "backend phase",
    MLIR_PASS: "MLIR pass",
    "worker": "worker",
    "other": "other",
}


def where(src: Any) -> str:
    if src is None or not src.file:
        return "(no source line)"
    label = source_label(src.file, src.line)[0]
    return f"{label} ({src.function})" if src.function else label


def headline(rep: CompileTimeReport) -> str:
    xla = f" (XLA: {fmt_seconds(rep.phases.wall_s)})" if rep.phases.found else ""
    return (
        f"compile profile of {rep.label} on {rep.backend}: trace {fmt_seconds(rep.trace_s)}, "
        f"lower {fmt_seconds(rep.lower_s)}, compile {fmt_seconds(rep.compile_s)}{xla}"
    )


def coverage_line(rep: CompileTimeReport) -> str:
    p = rep.phases
    if not p.found:
        return "XLA's passes and phases: not found in the trace"
    backend = sum(x.seconds for x in p.phases if x.kind != HLO_PASS)
    return (
        f"named passes and phases cover {fmt_percent(p.coverage)} of XLA's compile wall "
        f"time: HLO passes {fmt_percent(p.hlo_passes_s / p.wall_s if p.wall_s else 0)}, "
        f"backend phases {fmt_percent(backend / p.wall_s if p.wall_s else 0)}, "
        f"unnamed {fmt_percent(p.unnamed_s / p.wall_s if p.wall_s else 0)}"
    )


def loop_advice(loop: UnrolledLoop) -> str:
    """An unrolled loop, said the way a user would fix it."""
    site = where(loop.call_site) if loop.call_site is not None else f"the call of {loop.function}"
    return (
        f"{site} runs {loop.calls} times (each a call of {loop.function}) and produces "
        f"{fmt_percent(loop.instruction_share, 0)} of the instructions "
        f"({fmt_percent(loop.equation_share, 0)} of the jaxpr equations): a Python loop "
        f"unrolled into the program, compiled {loop.calls} times over; `lax.scan` over the "
        f"layers would compile {loop.function} once"
    )


def _phase_rows(rows: Sequence[PhaseTime]) -> list[list[str]]:
    return [
        [r.name, KIND_WORDS.get(r.kind, r.kind), fmt_seconds(r.seconds), fmt_percent(r.share)]
        + [str(r.count)]
        for r in rows
    ]


def _line_rows(rows: Sequence[LineSize]) -> list[list[str]]:
    return [
        [
            where(r.source),
            fmt_count(r.equations),
            fmt_percent(r.equation_share),
            fmt_count(r.instructions),
            fmt_percent(r.instruction_share),
        ]
        for r in rows
    ]


def _table(head: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return ["  " + fmt(head), *("  " + fmt(r) for r in rows)]


def _rest(total: int, shown: int, what: str, seconds: float | None = None) -> list[str]:
    if total <= shown:
        return []
    more = f", {fmt_seconds(seconds)}" if seconds is not None else ""
    return [f"  ... {total - shown} more {what}{more}"]


PHASE_HEAD = ["pass or phase", "kind", "time", "share", "count"]
LINE_HEAD = ["line", "equations", "share", "instructions", "share"]


def compile_time_text(rep: CompileTimeReport, top: int = DEFAULT_TOP) -> str:
    p = rep.phases
    out = [headline(rep), coverage_line(rep)]
    if p.found and p.phases:
        out += ["", f"XLA's compile, top first (self time on its thread, {p.line!r})"]
        shown = p.phases[:top]
        out += _table(PHASE_HEAD, _phase_rows(shown), {2, 3, 4})
        out += _rest(
            len(p.phases), len(shown), "passes and phases", sum(x.seconds for x in p.phases[top:])
        )
    if p.workers:
        out += [
            "",
            f"inside it, the code generation workers: {p.worker_threads} threads, "
            f"{fmt_seconds(p.worker_cpu_s)} of CPU time (shares of that)",
        ]
        shown = p.workers[:top]
        out += _table(PHASE_HEAD, _phase_rows(shown), {2, 3, 4})
        out += _rest(len(p.workers), len(shown), "events", sum(x.seconds for x in p.workers[top:]))
    s = rep.size
    out += [
        "",
        f"program size: {fmt_count(s.equations)} jaxpr equations, "
        f"{fmt_count(s.instructions)} instructions in XLA's optimized module, by source line",
    ]
    if s.lines:
        shown_lines = s.lines[:top]
        out += _table(LINE_HEAD, _line_rows(shown_lines), {1, 2, 3, 4})
        out += _rest(len(s.lines), len(shown_lines), "lines")
    for loop in s.loops:
        out.append(f"advice: {loop_advice(loop)}")
    for note in rep.notes:
        out.append(f"note: {note}")
    return "\n".join(out)


def compile_time_html(rep: CompileTimeReport, top: int = DEFAULT_TOP) -> str:
    """The static summary (where scripts do not run): the headline, the coverage line, the
    first rows of each table (:func:`~workbench.views._html.summary_table`) and the advice.
    The share bars, sorting and source links are the TypeScript view's, drawn from the
    payload (:mod:`workbench.views._standalone`)."""
    p = rep.phases
    parts = [
        f'<div class="jwb jwb-compile-time" style="color:{FG1}">',
        f'<div style="font-weight:600">{esc(headline(rep))}</div>',
        f"<div><b>{esc(coverage_line(rep))}</b></div>",
    ]
    if p.found and p.phases:
        parts.append(f'<div style="margin-top:6px;color:{FG2}">XLA\'s compile, top first</div>')
        parts.append(
            summary_table(PHASE_HEAD, _phase_rows(p.phases), what="passes and phases", limit=top)
        )
    if p.workers:
        parts.append(
            f'<div style="margin-top:6px;color:{FG2}">code generation workers: '
            f"{p.worker_threads} threads, {esc(fmt_seconds(p.worker_cpu_s))} of CPU time</div>"
        )
        parts.append(summary_table(PHASE_HEAD, _phase_rows(p.workers), what="events", limit=top))
    s = rep.size
    parts.append(
        f'<div style="margin-top:6px;color:{FG2}">program size: '
        f"{esc(fmt_count(s.equations))} jaxpr equations, {esc(fmt_count(s.instructions))} "
        "instructions in XLA's optimized module, by source line</div>"
    )
    if s.lines:
        parts.append(summary_table(LINE_HEAD, _line_rows(s.lines), what="lines", limit=top))
    for loop in s.loops:
        parts.append(
            f'<div class="jwb-note" style="border-left:3px solid {WARN};padding-left:4px;'
            f'margin:4px 0">{esc(loop_advice(loop))}</div>'
        )
    for note in rep.notes:
        parts.append(f'<div style="color:{FG2}">note: {esc(note)}</div>')
    parts.append("</div>")
    return "".join(parts)


def compile_time_data(rep: CompileTimeReport, top: int = DEFAULT_TOP) -> dict[str, Any]:
    d = rep.to_dict()
    xla, size = d["xla"], d["size"]
    xla["phases_total"] = len(xla["phases"])
    xla["workers_total"] = len(xla["workers"])
    size["lines_total"] = len(size["lines"])
    xla["phases"] = xla["phases"][:PAYLOAD_ROWS]
    xla["workers"] = xla["workers"][:PAYLOAD_ROWS]
    size["lines"] = size["lines"][:PAYLOAD_ROWS]
    d["advice"] = [loop_advice(lp) for lp in rep.size.loops]
    d["top"] = top
    files = [ln.source.file for ln in rep.size.lines[:PAYLOAD_ROWS] if ln.source is not None]
    files += [lp.call_site.file for lp in rep.size.loops if lp.call_site is not None]
    d["cells"] = cells_of(files)
    return d


COMPILE_TIME_VIEW: View[CompileTimeReport] = View(
    kind="compile-time",
    version=SCHEMA_VERSION,
    text=compile_time_text,
    html=compile_time_html,
    data=compile_time_data,
    degrade=True,
    record_name="report",
)
COMPILE_TIME_MIME = COMPILE_TIME_VIEW.mime


def compile_time_display(
    rep: CompileTimeReport, text_only: bool = False, top: int = DEFAULT_TOP
) -> Display[CompileTimeReport]:
    """What ``%%jaxprof --compile`` returns (``.report`` is the record)."""
    return Display(rep, COMPILE_TIME_VIEW, text_only=text_only, top=top)


__all__ = [
    "COMPILE_TIME_MIME",
    "COMPILE_TIME_VIEW",
    "compile_time_data",
    "compile_time_display",
    "compile_time_html",
    "compile_time_text",
    "loop_advice",
]

"""The views of a :class:`~workbench.engine.profile.report.ProfileReport` (``%%jaxprof``).

- text/plain: the line-profiler listing of the cell's (and the user's files') lines with
  measured device time and share, the top-N instructions table, coverage stated plainly;
- text/html: a static summary (headline, coverage, the lines and instructions that took
  the most time) plus the standalone runtime that draws the interactive view (the
  listing, the step's timeline) from the payload;
- application/vnd.jax-workbench.profile+json: the record (``profile.schema.json``).
"""

from __future__ import annotations

from typing import Any

from workbench.engine.profile.report import SCHEMA_VERSION, InstructionTime, ProfileReport
from workbench.views._format import fmt_bytes, fmt_count, fmt_percent, fmt_seconds
from workbench.views._html import FG1, FG2, cells_of, esc, source_label, summary_table
from workbench.views.display import Display, View

DEFAULT_TOP = 10
WARN = "var(--jp-warn-color1,#bc4c00)"


def _where(file: str, line: int) -> str:
    return source_label(file, line)[0] if file else "(no source line)"


def _file_title(file: str, cell: int | None) -> str:
    label, is_cell = source_label(file, 1)
    if is_cell:
        return label.rsplit(" line ", 1)[0]
    return file


def _rate(x: float | None, unit: str) -> str:
    return fmt_count(x, unit) if x is not None else "n/a"


def _bound(r: InstructionTime, peak_known: bool) -> str:
    if r.bound:
        return f"{r.bound}-bound"
    if r.intensity is None:
        return "n/a"
    return "unknown peak" if not peak_known else "n/a"


def coverage_line(rep: ProfileReport) -> str:
    return (
        f"coverage: {fmt_percent(rep.coverage)} of the measured step time is attributed to "
        f"HLO instructions (median over {rep.calls} calls; step = {rep.step_source})"
    )


def headline(rep: ProfileReport) -> str:
    return (
        f"profile of {rep.label}: {rep.calls} calls on {rep.backend} "
        f"({rep.device_kind}), median step {fmt_seconds(rep.step_s)}, "
        f"attributed {fmt_seconds(rep.fusion_seconds)} "
        f"(sum of per-instruction medians)"
    )


def top_rows(rep: ProfileReport, top: int) -> list[list[str]]:
    known = rep.peak.name is not None
    rows = []
    for r in rep.instructions[:top]:
        src = _where(r.sources[0].file, r.sources[0].line) if r.sources else "(no source line)"
        if len(r.sources) > 1:
            src += f" +{len(r.sources) - 1}"
        rows.append(
            [
                ("" if r.resolved else "~") + r.name,
                r.label,
                fmt_seconds(r.seconds),
                fmt_percent(r.share),
                fmt_count(r.flops) if r.flops is not None else "n/a",
                fmt_bytes(r.bytes) if r.bytes is not None else "n/a",
                _rate(r.flops_per_s, "FLOP/s"),
                _rate(r.bytes_per_s, "B/s"),
                f"{r.intensity:.3g}" if r.intensity is not None else "n/a",
                _bound(r, known),
                src,
            ]
        )
    return rows


TOP_HEAD = [
    "instruction",
    "what",
    "time",
    "share",
    "FLOPs",
    "bytes",
    "FLOP/s",
    "bytes/s",
    "FLOP/byte",
    "bound",
    "line",
]


def profile_text(rep: ProfileReport, top: int = DEFAULT_TOP) -> str:
    out = [headline(rep), coverage_line(rep)]
    if rep.peak.name is None:
        out.append(
            f"peak: unknown peak for {rep.device_kind} (not in the table): "
            "compute- or memory-bound cannot be told"
        )
    for ls in rep.listings:
        out.append("")
        out.append(_file_title(ls.file, ls.cell))
        out.append(f"{'time':>10} {'share':>6}  line")
        for n, text, sec, share in ls.rows:
            t = fmt_seconds(sec) if sec is not None else ""
            s = fmt_percent(share) if share is not None else ""
            out.append(f"{t:>10} {s:>6}  {n:>4}  {text}")
    lost = [ln for ln in rep.lines if not ln.file]
    if lost:
        out.append(
            f"{fmt_seconds(lost[0].seconds):>10} {fmt_percent(lost[0].share):>6}  "
            "(instructions with no source line)"
        )
    rows = top_rows(rep, top)
    if rows:
        out.append("")
        out.append(
            f"top {len(rows)} of {len(rep.instructions)} instructions by measured time"
            " (~ = too short or noisy to resolve)"
        )
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(TOP_HEAD)]
        out.append("  ".join(h.ljust(w) for h, w in zip(TOP_HEAD, widths, strict=True)))
        for r in rows:
            out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    if rep.primitives:
        prims = ", ".join(
            f"{p.name or '(none)'} {fmt_percent(p.share)}" for p in rep.primitives[:8]
        )
        out.append(f"by jaxpr primitive: {prims}")
    for note in rep.notes:
        out.append(f"note: {note}")
    return "\n".join(out)


def _line_rows(rep: ProfileReport) -> list[list[str]]:
    """The attributed source lines, most time first: (time, share, line, its text)."""
    rows = []
    for ln in sorted(rep.lines, key=lambda x: -x.seconds):
        src = ln.source
        where = _where(src.file, src.line) if src is not None else "(no source line)"
        text = (src.text or "") if src is not None else ""
        rows.append([fmt_seconds(ln.seconds), fmt_percent(ln.share), where, text])
    return rows


def profile_html(rep: ProfileReport, top: int = DEFAULT_TOP) -> str:
    """The static summary (where scripts do not run): the headline, coverage, the lines and
    instructions that took the most time (:func:`~workbench.views._html.summary_table`).
    The line-profiler listing, the timeline and the links are the TypeScript view's, drawn
    from the payload (:mod:`workbench.views._standalone`)."""
    peak = (
        ""
        if rep.peak.name is not None
        else f'<div style="color:{FG2}">peak: unknown peak for {esc(rep.device_kind)} (not in '
        "the table): compute- or memory-bound cannot be told</div>"
    )
    prims = ", ".join(f"{p.name or '(none)'} {fmt_percent(p.share)}" for p in rep.primitives[:8])
    notes = "".join(
        f'<div class="jwb-note" style="border-left:3px solid {WARN};'
        f'padding-left:4px;margin:4px 0">{esc(n)}</div>'
        for n in rep.notes
    )
    lines = _line_rows(rep)
    instructions = top_rows(rep, top)
    return (
        f'<div class="jwb jwb-profile" style="color:{FG1}">'
        f'<div style="font-weight:600">{esc(headline(rep))}</div>'
        f"<div><b>{esc(coverage_line(rep))}</b></div>{peak}"
        + (
            '<div style="margin-top:6px;font-weight:600">source lines by measured time</div>'
            + summary_table(["time", "share", "line", "source"], lines, what="lines", limit=top)
            if lines
            else ""
        )
        + (
            f'<div style="margin-top:8px;font-weight:600">top instructions of '
            f"{len(rep.instructions)} by measured time (~ = too short or noisy to resolve)</div>"
            + summary_table(
                TOP_HEAD, instructions, total=len(rep.instructions), what="instructions"
            )
            if instructions
            else ""
        )
        + f'<div style="margin-top:4px">by jaxpr primitive: {esc(prims)}</div>{notes}</div>'
    )


def profile_data(rep: ProfileReport, top: int = DEFAULT_TOP) -> dict[str, Any]:
    d = rep.to_dict()
    d["top"] = top
    d["cells"] = cells_of(ls.file for ls in rep.listings)
    # a file two cells share (identical text under ipykernel): the cell the engine keyed
    # the profiled function's lines on
    for file, label in getattr(rep, "cells", {}).items():
        d["cells"][file] = {"number": label.number, "cell_id": label.cell_id}
    return d


PROFILE_VIEW: View[ProfileReport] = View(
    kind="profile",
    version=SCHEMA_VERSION,
    text=profile_text,
    html=profile_html,
    data=profile_data,
    degrade=True,
    record_name="report",
)
PROFILE_MIME = PROFILE_VIEW.mime


def profile_display(
    rep: ProfileReport, text_only: bool = False, top: int = DEFAULT_TOP
) -> Display[ProfileReport]:
    """What ``%%jaxprof`` and :func:`workbench.profile` return (``.report`` is the record)."""
    return Display(rep, PROFILE_VIEW, text_only=text_only, top=top)


__all__ = [
    "DEFAULT_TOP",
    "PROFILE_MIME",
    "PROFILE_VIEW",
    "profile_data",
    "profile_display",
    "profile_html",
    "profile_text",
]

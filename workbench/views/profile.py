"""The views of a :class:`~workbench.engine.profile.report.ProfileReport` (``%%jaxprof``).

- text/plain: the line-profiler listing of the cell's (and the user's files') lines with
  measured device time and share, the top-N instructions table, coverage stated plainly;
- text/html: the same, self-contained (inline styles on everything that matters, no
  script), plus the step's timeline as inline SVG: kernels/thunks in order, gaps are
  host and launch overhead;
- application/vnd.jax-workbench.profile+json: the record (``profile.schema.json``).
"""

from __future__ import annotations

from typing import Any

from workbench.engine.profile.report import SCHEMA_VERSION, InstructionTime, ProfileReport
from workbench.views._format import fmt_bytes, fmt_count, fmt_percent, fmt_seconds
from workbench.views._html import (
    CELL_STYLE,
    FG1,
    FG2,
    STYLED_ONLY,
    TABLE_STYLE,
    UNSTYLED_ONLY,
    cells_of,
    esc,
    source_label,
    style_block,
)
from workbench.views.display import Display, View

DEFAULT_TOP = 10
BAR = "var(--jp-brand-color2,#7aa6da)"
TRACK = "var(--jp-layout-color2,#eeeeee)"
WARN = "var(--jp-warn-color1,#bc4c00)"
#: distinct fills for the heaviest instructions in the timeline; the rest are grey
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
OTHER_FILL = "#9aa4ad"
TIMELINE_W = 900


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


def _td(x: str, right: bool = False) -> str:
    align = ";text-align:right" if right else ""
    return f'<td style="{CELL_STYLE}{align}">{x}</td>'


def _listing_html(rep: ProfileReport) -> str:
    parts = []
    th = f'<th style="{CELL_STYLE}">'
    for ls in rep.listings:
        rows = []
        for n, text, sec, share in ls.rows:
            bar = ""
            if share is not None:
                width = max(1, round(100 * share))
                bar = (
                    f'<span style="display:inline-block;height:8px;width:{width}px;'
                    f'background:{BAR};vertical-align:middle"></span>'
                )
            rows.append(
                "<tr>"
                + _td(esc(fmt_seconds(sec)) if sec is not None else "", True)
                + _td(esc(fmt_percent(share)) if share is not None else "", True)
                + _td(bar)
                + _td(str(n), True)
                + _td(f'<code style="white-space:pre">{esc(text)}</code>')
                + "</tr>"
            )
        parts.append(
            f'<div style="margin-top:6px;font-weight:600">'
            f"{esc(_file_title(ls.file, ls.cell))}</div>"
            f'<table style="{TABLE_STYLE}"><thead><tr>{th}time</th>{th}share</th>'
            f"{th}</th>{th}line</th>{th}source</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    return "".join(parts)


def _top_html(rep: ProfileReport, top: int) -> str:
    rows = top_rows(rep, top)
    if not rows:
        return ""
    th = "".join(f'<th style="{CELL_STYLE}">{esc(h)}</th>' for h in TOP_HEAD)
    body = "".join(
        "<tr>" + "".join(_td(esc(c), i in (2, 3, 4, 5, 6, 7, 8)) for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return (
        f'<div style="margin-top:8px;font-weight:600">top {len(rows)} of '
        f"{len(rep.instructions)} instructions by measured time</div>"
        f'<table style="{TABLE_STYLE}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody>'
        f"</table>"
    )


def timeline_colors(rep: ProfileReport) -> dict[str, str]:
    return {r.name: PALETTE[i] for i, r in enumerate(rep.instructions[: len(PALETTE)])}


def timeline_svg(rep: ProfileReport) -> str:
    """The median call's events on one time axis: a bar per event, gaps are overhead.

    Shown only with our stylesheet (like the HLO diagrams): a sanitizer unwraps SVG and
    would leave every bar's tooltip as loose text.  Data colours are ``fill`` attributes.
    """
    if not rep.timeline or rep.timeline_step_us <= 0:
        return ""
    colors = timeline_colors(rep)
    scale = TIMELINE_W / rep.timeline_step_us
    h = 26
    bars = []
    for e in rep.timeline:
        x = e.start_us * scale
        w = max(e.duration_us * scale, 0.5)
        fill = colors.get(e.instruction or "", OTHER_FILL)
        tip = f"{e.instruction or e.name}: {fmt_seconds(e.duration_us * 1e-6)} at +{e.start_us:.1f} µs"
        if e.instruction and e.name != e.instruction:
            tip += f" (kernel {e.name})"
        bars.append(
            f'<rect x="{x:.2f}" y="2" width="{w:.2f}" height="{h - 4}" '
            f'fill="{fill}"><title>{esc(tip)}</title></rect>'
        )
    legend = " ".join(
        f'<span style="white-space:nowrap"><svg width="10" height="10" role="img">'
        f'<rect width="10" height="10" fill="{c}"></rect></svg> {esc(n)}</span>'
        for n, c in colors.items()
    )
    title = (
        f"timeline of the median call ({esc(fmt_seconds(rep.timeline_step_us * 1e-6))}; "
        f"gaps = host and launch overhead)"
    )
    return (
        f'<div style="margin-top:8px;font-weight:600">{title}</div>'
        f"<div {STYLED_ONLY}>"
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{TIMELINE_W + 2}" height="{h}" '
        f'viewBox="-1 0 {TIMELINE_W + 2} {h}" role="img" '
        f'style="background:{TRACK};display:block">{"".join(bars)}</svg>'
        f'<div style="font-size:11px;color:{FG2}">{legend} · grey: other instructions</div>'
        f"</div><div {UNSTYLED_ONLY}><i>The timeline is hidden: this page has no styles "
        f"(an untrusted notebook). Trust the notebook or install the jax-workbench "
        f"extension to see it; the instructions table above has the times.</i></div>"
    )


def profile_html(rep: ProfileReport, top: int = DEFAULT_TOP) -> str:
    peak = (
        ""
        if rep.peak.name is not None
        else f'<div style="color:{FG2}">peak: unknown peak for {esc(rep.device_kind)} (not in '
        "the table): compute- or memory-bound cannot be told</div>"
    )
    lost = [ln for ln in rep.lines if not ln.file]
    lost_html = (
        f'<div style="color:{FG2}">{esc(fmt_seconds(lost[0].seconds))} '
        f"({esc(fmt_percent(lost[0].share))}) in instructions with no source line"
        "</div>"
        if lost
        else ""
    )
    prims = ", ".join(f"{p.name or '(none)'} {fmt_percent(p.share)}" for p in rep.primitives[:8])
    notes = "".join(
        f'<div class="jwb-note" style="border-left:3px solid {WARN};'
        f'padding-left:4px;margin:4px 0">{esc(n)}</div>'
        for n in rep.notes
    )
    return (
        f'<div class="jwb" style="color:{FG1}">{style_block()}'
        f'<div style="font-weight:600">{esc(headline(rep))}</div>'
        f"<div><b>{esc(coverage_line(rep))}</b></div>{peak}"
        f"{_listing_html(rep)}{lost_html}{_top_html(rep, top)}"
        f'<div style="margin-top:4px">by jaxpr primitive: {esc(prims)}</div>'
        f"{timeline_svg(rep)}{notes}</div>"
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
    "timeline_svg",
]

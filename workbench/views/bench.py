"""Benchmark views: a :class:`~workbench.engine.bench.result.Benchmark` as a MIME bundle.

- ``text/plain``: ``%timeit``'s style, e.g. ``1.23 ms ± 0.02 ms (median ± IQR/2 of
  7 runs, 100 loops each); compile 0.41 s``, then the CI, first call, roofline,
  comparisons, sweep fits and warnings on indented lines;
- ``text/html``: a static summary (the table, comparisons, fits, warnings; every user
  string escaped) plus the standalone runtime that draws the plots from the payload;
- ``application/vnd.jax-workbench.bench+json``: the record's own JSON
  (``docs/mime-bench.md``, schema ``workbench/schemas/bench.schema.json``).

A running benchmark's partial record (its ``progress`` set, see
:class:`~workbench.engine.bench.result.BenchProgress`) draws through the same functions,
with a progress line on top: the progress display (``workbench.ipython.bench_progress``) sends it
as display updates, so the plots grow in every front end, then the finished result
replaces it.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.engine.bench.peaks import Roofline, counts_source_text
from workbench.engine.bench.result import SCHEMA_VERSION, Benchmark, BenchProgress, Measurement
from workbench.engine.bench.stats import PowerFit, SampleStats
from workbench.views._format import fmt_count, fmt_percent, fmt_seconds
from workbench.views._html import (
    NEUTRAL_BORDER,
    NOTE_CHARS,
    SUMMARY_ROWS,
    cut,
    esc,
    more_line,
    new_id,
    style_block,
)
from workbench.views.display import Display, View
from workbench.views.errors import error_text

PALETTE = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#0a7f6f", "#6e7781"]
PLOT_W, PLOT_H = 300, 120
#: At most this many points in a run-order plot; longer runs show medians of consecutive
#: buckets (the JSON keeps every sample).
MAX_POINTS = 1000
#: characters of a failed measurement's error (with its source lines) in the summary
ERROR_CHARS = 2000
#: detail lines (CI, first call, roofline, warnings) the summary shows, all measurements together
NOTE_LINES = 16
BENCH_CSS = """
.jwb-bench .jwb-bt{border-collapse:collapse;font-size:12px;margin:4px 0}
.jwb-bench .jwb-bt th,.jwb-bench .jwb-bt td{padding:2px 8px;text-align:right;border-bottom:1px solid var(--jp-border-color2,#d0d7de)}
.jwb-bench .jwb-bt th:first-child,.jwb-bench .jwb-bt td:first-child{text-align:left}
.jwb-bench .jwb-plots{display:flex;flex-wrap:wrap;gap:12px;margin:6px 0}
.jwb-bench .jwb-plots figure{margin:0}
.jwb-bench .jwb-plots figcaption{font-size:11px;color:var(--jp-content-font-color2,#57606a)}
.jwb-bench svg text{font-size:10px;fill:var(--jp-content-font-color2,#57606a);font-family:var(--jp-ui-font-family,system-ui,sans-serif)}
.jwb-bench .jwb-warn{color:var(--jp-content-font-color1,#1f2328);border-left:3px solid var(--jp-warn-color1,#bc4c00);padding-left:4px;font-family:var(--jp-ui-font-family,system-ui,sans-serif)}
.jwb-bench .jwb-progress{margin:4px 0;font-size:12px}
.jwb-bench .jwb-progress-track{width:300px;height:6px;background:var(--jp-layout-color3,#d0d7de);border:0 !important;border-radius:3px;overflow:hidden}
.jwb-bench .jwb-progress-bar{height:6px;background:var(--jp-brand-color1,#0969da) !important}
"""

_PHASE_WORDS = {
    "compile": "compiling",
    "warmup": "warming up",
    "sampling": "sampling",
    "roofline": "cost analysis",
    "error": "a sweep point failed",
}


# -- progress (a running benchmark's partial record) -------------------------------------
def progress_text(p: BenchProgress) -> str:
    """One line: phase, percentage, elapsed time, samples so far per variant."""
    if p.done:
        return f"stopped before the end: {p.message}"
    counts = ", ".join(f"{name} {n}" for name, n in p.samples.items())
    point = f"point {p.point + 1} of {p.points} · " if p.points > 1 else ""
    return (
        f"running: {_PHASE_WORDS.get(p.phase, p.phase)} ({p.message}) · {point}"
        f"{100 * p.fraction:.0f}% · {fmt_seconds(p.elapsed_s)}"
        + (f" · samples: {counts}" if counts else "")
    )


_TRACK_STYLE = f"width:300px;max-width:100%;height:6px;border:1px solid {NEUTRAL_BORDER}"
_BAR_STYLE = "height:6px;background-color:rgba(128,128,128,0.8)"


def progress_html(p: BenchProgress) -> str:
    width = 100.0 if p.done else 100 * min(max(p.fraction, 0.0), 1.0)
    return (
        f'<div class="jwb-progress{" jwb-warn" if p.done else ""}" '
        f'data-phase="{esc(p.phase)}"><div>{esc(progress_text(p))}</div>'
        # inline essentials in colours without var(): a sanitizer drops a style
        # attribute holding var() and the <style> block, and the bar must still show
        f'<div class="jwb-progress-track" style="{_TRACK_STYLE}">'
        f'<div class="jwb-progress-bar" style="width:{width:.1f}%;{_BAR_STYLE}">'
        f"</div></div></div>"
    )


# -- text -------------------------------------------------------------------------------
def headline(m: Measurement) -> str:
    """``%timeit``-style one-liner for one measurement."""
    if m.error is not None:
        return f"{m.error.kind} ({m.error.phase}): {m.error.summary}"
    if m.stats is None:
        return "interrupted before any sample" if m.interrupted else "no samples"
    st = m.stats
    runs = "run" if st.n == 1 else "runs"
    loops = "loop" if m.number == 1 else "loops"
    line = (
        f"{fmt_seconds(st.median)} ± {fmt_seconds(st.iqr / 2)} "
        f"(median ± IQR/2 of {st.n} {runs}, {m.number} {loops} each)"
    )
    fc = m.first_call
    if fc is not None:
        if fc.compiles == 0:
            line += f"; first call {fmt_seconds(fc.total_s)} (no compile: cached)"
        elif fc.compile_total_s is not None:
            line += f"; compile {fmt_seconds(fc.compile_total_s)}"
        else:
            line += f"; first call {fmt_seconds(fc.total_s)}"
    if m.interrupted:
        line += " [interrupted]"
    return line


def budget_lines(m: Measurement, asked_number: int | None = None) -> list[str]:
    """What the budget (an upper bound on the wall time) cut short, in plain words."""
    out = []
    n = len(m.samples)
    if m.stopped_by_budget:
        out.append(
            f"budget reached after {n} sample{'s' if n != 1 else ''}: "
            "raise the budget for a steadier median"
        )
    if asked_number is not None and m.samples and m.number < asked_number:
        out.append(
            f"{m.number} call{'s' if m.number != 1 else ''} per sample, not the "
            f"{asked_number} asked: samples of {asked_number} would overrun the budget"
        )
    return out


def _detail_lines(m: Measurement, asked_number: int | None = None) -> list[str]:
    # first: what the calls ran on, when the arguments hold mutable state (NNX objects)
    out: list[str] = ([m.state_note] if m.state_note else []) + budget_lines(m, asked_number)
    st = m.stats
    if st is not None:
        out.append(
            f"95% CI of the median {fmt_seconds(st.ci_low)} – "
            f"{fmt_seconds(st.ci_high)} (±{100 * st.ci_halfwidth_rel:.1f}%"
            + (
                ""
                if st.ci_coverage >= 0.95
                else f", only {100 * st.ci_coverage:.0f}% coverage with {st.n} runs"
            )
            + f"); min {fmt_seconds(st.min)}, mean {fmt_seconds(st.mean)} ± "
            f"{fmt_seconds(st.std)} (std)"
            + (
                f"; {len(st.outliers)} outlier{'s' if len(st.outliers) != 1 else ''}"
                if st.outliers
                else ""
            )
        )
    fc = m.first_call
    if fc is not None and fc.source == "cache" and fc.compiles:
        parts = [
            f"{name} {fmt_seconds(v)}"
            for name, v in (("trace", fc.trace_s), ("lower", fc.lower_s), ("compile", fc.compile_s))
            if v is not None
        ]
        out.append(
            f"first call {fmt_seconds(fc.total_s)}: "
            + " + ".join(parts)
            + f" ({fc.compiles} compile{'s' if fc.compiles != 1 else ''}), then one run"
        )
    r = m.roofline
    if r is not None:
        rates = [
            fmt_count(v, unit)
            for v, unit in ((r.flops_per_s, "FLOP/s"), (r.bytes_per_s, "B/s"))
            if v is not None
        ]
        if not rates:
            out.append(
                "roofline: n/a" + (f" ({r.note})" if r.note else " (XLA counted no FLOPs or bytes)")
            )
            return out + [f"warning: {w}" for w in m.warnings]
        line = "roofline: " + ", ".join(rates)
        if r.intensity is not None:
            line += f" ({r.intensity:.3g} FLOP/byte)"
        if r.peak_name:
            line += (
                f"; {fmt_percent(r.flops_fraction)} of {r.peak_name}'s {r.dtype} peak, "
                f"{fmt_percent(r.bytes_fraction)} of its bandwidth"
            )
            if r.bound:
                line += f"; {r.bound}-bound"
        src = _roof_source(r)
        if src:
            line += f"; {src}"
        if r.note:
            line += f"; {r.note}"
        out.append(line)
    out.extend(f"warning: {w}" for w in m.warnings)
    return out


def bench_text(b: Benchmark) -> str:
    """The whole result as plain text (terminals, logs, ``print``); a running benchmark's
    partial record starts with its progress line."""
    lines: list[str] = [] if b.progress is None else [progress_text(b.progress)]
    multi = len(b.variants) > 1 or b.sweep_param is not None
    for m in b.measurements:
        if multi:
            lines.append(f"{m.label}: {headline(m)}")
        else:
            lines.append(headline(m))
        lines.extend("  " + d for d in _detail_lines(m, b.config.number))
        if m.error is not None and m.error.where is not None:
            lines.extend("  " + ln for ln in error_text(m.error).splitlines()[1:])
    for c in b.comparisons:
        r = c.ratio
        at = f" at {', '.join(f'{k}={v}' for k, v in c.params.items())}" if c.params else ""
        lines.append(
            f"{r.variant} / {r.reference}{at} = {r.median:.3g}× "
            f"(95% CI {r.ci_low:.3g}–{r.ci_high:.3g}×, {r.pairs} paired runs)"
        )
    for f in b.fits:
        lines.append(fit_text(f, b.sweep_param or "n"))
    if b.interrupted:
        lines.append("interrupted: the samples taken so far are kept")
    return "\n".join(lines)


def fit_text(f: PowerFit, param: str) -> str:
    err = "" if f.exponent_stderr is None else f" ± {f.exponent_stderr:.2f}"
    return f"{f.variant}: time ∝ {param}^{f.exponent:.2f}{err} (R² {f.r2:.3f}, {f.points} sizes)"


# -- HTML -------------------------------------------------------------------------------
def _row(m: Measurement, param: str | None) -> str:
    cells = [esc(cut(m.variant))]
    if param is not None:
        cells.append(esc(cut(m.params.get(param))))
    if m.error is not None:
        cells.append(
            f'<span class="jwb-warn">{esc(m.error.kind)} ({esc(m.error.phase)}): '
            f"{esc(cut(m.error.summary, NOTE_CHARS))}</span>"
        )
        return (
            "<tr>"
            + "".join(f"<td>{c}</td>" for c in cells[:-1])
            + f'<td colspan="7" style="text-align:left">{cells[-1]}</td></tr>'
        )
    st: SampleStats | None = m.stats
    fc = m.first_call
    r = m.roofline
    if st is None:
        cells += ["interrupted" if m.interrupted else "no samples"] + [""] * 6
    else:
        cells += [
            f"{esc(fmt_seconds(st.median))} ± {esc(fmt_seconds(st.iqr / 2))}",
            f"{esc(fmt_seconds(st.ci_low))} – {esc(fmt_seconds(st.ci_high))}",
            esc(fmt_seconds(st.min)),
            f"{esc(fmt_seconds(st.mean))} ± {esc(fmt_seconds(st.std))}",
            f"{st.n} × {m.number}"
            + (" (interrupted)" if m.interrupted else "")
            + (" (budget reached)" if m.stopped_by_budget else ""),
            ""
            if fc is None
            else esc(
                fmt_seconds(fc.compile_total_s) + " compile"
                if fc.compile_total_s
                else fmt_seconds(fc.total_s)
            ),
            _roof_cell(r),
        ]
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _roof_cell(r: Roofline | None) -> str:
    if r is None:
        return ""
    if r.flops_per_s is None and r.bytes_per_s is None:
        return f'<span class="jwb-meta" title="{esc(r.note)}">n/a</span>'
    text = f"{fmt_count(r.flops_per_s, 'FLOP/s')} · {fmt_count(r.bytes_per_s, 'B/s')}"
    text += (
        f" · {fmt_percent(r.flops_fraction)} / {fmt_percent(r.bytes_fraction)} of peak"
        if r.peak_name
        else " · peak unknown"
    )
    if "counted" in (r.flops_source, r.bytes_source):
        text += " · our count"  # XLA gave no figure: say where the figures came from
    src = _roof_source(r)
    title = "; ".join(x for x in (src, r.note) if x)
    return f'<span title="{esc(title)}">{esc(text)}</span>' if title else esc(text)


def _roof_source(r: Roofline) -> str:
    """Where the roofline's FLOPs and bytes came from, as a phrase: "figures from X" when
    both came from one place, "FLOPs from X, bytes from Y" (or one of them) otherwise,
    "" when neither had one."""
    src = counts_source_text(r.flops_source, r.bytes_source)
    if src and r.flops_source == r.bytes_source:
        return f"figures from {src}"
    return src


def table_html(b: Benchmark) -> str:
    param = b.sweep_param
    head = (
        ["variant"]
        + ([param] if param else [])
        + [
            "median ± IQR/2",
            "95% CI of median",
            "min",
            "mean ± std",
            "runs × loops",
            "first call",
            "roofline",
        ]
    )
    # the summary's first rows (a sweep may have hundreds); the view has them all
    rows = "".join(_row(m, param) for m in b.measurements[:SUMMARY_ROWS])
    return (
        '<table class="jwb-bt"><thead><tr>'
        + "".join(f"<th>{esc(h)}</th>" for h in head)
        + f"</tr></thead><tbody>{rows}</tbody></table>"
        + more_line(len(b.measurements) - SUMMARY_ROWS, "measurements")
    )


def _notes_html(b: Benchmark) -> str:
    """The comparisons, fits and each measurement's detail lines (CI, first call, roofline,
    warnings) of the summary: those of its first :data:`SUMMARY_ROWS` comparisons, fits and
    measurements (the table's rows), then one line on what was left (a sweep may have
    hundreds, each with its warnings); the view has them all."""
    out = []
    for c in b.comparisons[:SUMMARY_ROWS]:
        r = c.ratio
        at = f" at {', '.join(f'{k}={v}' for k, v in c.params.items())}" if c.params else ""
        out.append(
            f"<div><b>{esc(cut(r.variant))} / {esc(cut(r.reference))}{esc(cut(at))}</b> = "
            f"{r.median:.3g}× (95% CI {r.ci_low:.3g}–{r.ci_high:.3g}×, "
            f"{r.pairs} paired runs)</div>"
        )
    out.append(more_line(len(b.comparisons) - SUMMARY_ROWS, "comparisons"))
    for f in b.fits[:SUMMARY_ROWS]:
        out.append(f"<div>{esc(cut(fit_text(f, b.sweep_param or 'n'), NOTE_CHARS))}</div>")
    out.append(more_line(len(b.fits) - SUMMARY_ROWS, "fits"))
    # the detail lines of the table's measurements, at most NOTE_LINES of them
    shown = noted = 0
    for m in b.measurements[:SUMMARY_ROWS]:
        lines = _detail_lines(m, b.config.number)
        if shown + len(lines) > NOTE_LINES:
            break
        shown += len(lines)
        noted += 1
        for line in lines:
            cls = ' class="jwb-warn"' if line.startswith("warning") else ""
            out.append(
                f'<div{cls}><span class="jwb-meta">{esc(cut(m.label, 60))}:</span> '
                f"{esc(cut(line, NOTE_CHARS))}</div>"
            )
        if m.error is not None and m.error.where is not None:
            out.append(
                f'<div class="jwb-err"><pre>{esc(cut(error_text(m.error), ERROR_CHARS))}</pre>'
                "</div>"
            )
    rest = b.measurements[noted:]
    if rest:
        warned = sum(len(m.warnings) for m in rest)
        out.append(
            f"<div>... the notes of {len(rest)} more measurements not shown here"
            + (f' (<span class="jwb-warn">{warned} warnings</span>)' if warned else "")
            + "</div>"
        )
    if b.interrupted:
        out.append('<div class="jwb-warn">interrupted: the samples taken so far are kept</div>')
    return "".join(out)


def _env_html(b: Benchmark) -> str:
    rows = "".join(
        f"<tr><td>{esc(k)}</td><td style='text-align:left'>{esc(v)}</td></tr>"
        for k, v in b.env.to_dict().items()
        if k != "extra"
    )
    return f'<details><summary>environment</summary><table class="jwb-bt">{rows}</table></details>'


def bench_html(b: Benchmark) -> str:
    """The static summary: the table, comparisons/fits, warnings, environment.  The plots
    (histograms, run order, the sweep's log-log) are the TypeScript view's, drawn from the
    payload (:mod:`workbench.views._standalone`)."""
    progress = "" if b.progress is None else progress_html(b.progress)
    return (
        f'{style_block()}<style>{BENCH_CSS}</style><div class="jwb jwb-bench" '
        f'id="{new_id()}"><div class="jwb-head"><span class="jwb-title">'
        f'benchmark: {esc(cut(b.label, NOTE_CHARS))}</span> <span class="jwb-meta">'
        f"{esc(b.env.backend)} · {esc(b.env.device_kind)} · "
        f"{esc(fmt_seconds(b.wall_s))} {'so far' if b.progress else 'total'}</span></div>"
        f"{progress}{table_html(b)}{_notes_html(b)}{_env_html(b)}</div>"
    )


def bench_json(b: Benchmark) -> dict[str, Any]:
    """The payload's body: the record as strict JSON data (user sweep values, dtypes, NumPy
    scalars, NaN made serialisable, so Jupyter can always send and save the bundle)."""
    return json.loads(b.to_json())


def _bench_text(b: Benchmark) -> str:
    return bench_text(b)


def _bench_html(b: Benchmark) -> str:
    return bench_html(b)


#: ``%jaxbench``, ``workbench.bench``; the record is the engine's ``Benchmark``
BENCH_VIEW: View[Benchmark] = View(
    kind="bench", version=SCHEMA_VERSION, text=_bench_text, html=_bench_html, data=bench_json
)
BENCH_MIME = BENCH_VIEW.mime


def bench_bundle(b: Benchmark, text_only: bool = False) -> dict[str, Any]:
    return BENCH_VIEW.bundle(b, text_only=text_only)


def bench_display(b: Benchmark, text_only: bool = False) -> Display[Benchmark]:
    """What ``%jaxbench`` and :func:`workbench.bench` return: the record, displayable."""
    return Display(b, BENCH_VIEW, text_only=text_only)

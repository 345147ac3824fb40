"""Benchmark views: a :class:`~workbench.engine.bench.result.Benchmark` as a MIME bundle.

- ``text/plain``: ``%timeit``'s style, e.g. ``1.23 ms ± 0.02 ms (median ± IQR/2 of
  7 runs, 100 loops each); compile 0.41 s``, then the CI, first call, roofline,
  comparisons, sweep fits and warnings on indented lines;
- ``text/html``: self-contained table plus inline SVG (histogram, run-order plot,
  log-log sweep plot with the fitted exponent); every user string escaped;
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
import math
from collections.abc import Sequence
from typing import Any

from workbench.engine.bench.peaks import Roofline, counts_source_text
from workbench.engine.bench.result import SCHEMA_VERSION, Benchmark, BenchProgress, Measurement
from workbench.engine.bench.stats import PowerFit, SampleStats, quantile, summarize
from workbench.views._format import fmt_count, fmt_percent, fmt_seconds
from workbench.views._html import NEUTRAL_BORDER, STYLED_ONLY, esc, new_id, style_block
from workbench.views.display import Display, View
from workbench.views.errors import error_text

PALETTE = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#0a7f6f", "#6e7781"]
PLOT_W, PLOT_H = 300, 120
#: At most this many points in a run-order plot; longer runs show medians of consecutive
#: buckets (the JSON keeps every sample).
MAX_POINTS = 1000
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


# -- SVG --------------------------------------------------------------------------------
def _median(xs: Sequence[float]) -> float:
    """The median as :func:`summarize` computes it, without the rest of the summary."""
    return quantile(sorted(xs), 0.5)


def _svg_open(w: int, h: int, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" font-size="10" '
        f'style="fill:var(--jp-content-font-color2,#57606a)"><title>{esc(title)}</title>'
    )


def histogram_svg(
    series: Sequence[tuple[str, Sequence[float]]], w: int = PLOT_W, h: int = PLOT_H
) -> str:
    """Histogram of per-call times, one colour per variant, median marked."""
    all_x = [x for _, xs in series for x in xs]
    if not all_x:
        return _svg_open(w, h, "no samples") + "</svg>"
    lo, hi = min(all_x), max(all_x)
    n_bins = max(5, min(30, int(math.sqrt(len(all_x))) + 1))
    span = (hi - lo) or max(hi * 1e-3, 1e-12)
    pad_l, pad_b = 4, 16
    bw = (w - 2 * pad_l) / n_bins
    counts = []
    for _, xs in series:
        c = [0] * n_bins
        for x in xs:
            c[min(n_bins - 1, int((x - lo) / span * n_bins))] += 1
        counts.append(c)
    top = max(max(c) for c in counts) or 1
    parts = [_svg_open(w, h, f"histogram of {len(all_x)} samples")]
    for k, ((_name, xs), c) in enumerate(zip(series, counts, strict=True)):
        color = PALETTE[k % len(PALETTE)]
        sub = bw / len(series)
        for i, v in enumerate(c):
            if v:
                bh = (h - pad_b - 4) * v / top
                parts.append(
                    f'<rect class="jwb-bar" data-count="{v}" x="{pad_l + i * bw + k * sub:.1f}" '
                    f'y="{h - pad_b - bh:.1f}" width="{max(sub - 1, 1):.1f}" '
                    f'height="{bh:.1f}" fill="{color}" fill-opacity="0.75"/>'
                )
        med = _median(xs) if xs else None
        if med is not None:
            mx = pad_l + (med - lo) / span * (w - 2 * pad_l)
            parts.append(
                f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="2" y2="{h - pad_b}" '
                f'stroke="{color}" stroke-dasharray="3,2"/>'
            )
    parts.append(f'<text x="{pad_l}" y="{h - 3}">{esc(fmt_seconds(lo))}</text>')
    parts.append(
        f'<text x="{w - pad_l}" y="{h - 3}" text-anchor="end">{esc(fmt_seconds(hi))}</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def run_order_svg(
    series: Sequence[tuple[str, Sequence[float], Sequence[int]]], w: int = PLOT_W, h: int = PLOT_H
) -> str:
    """Time of each sample in the order taken (drift, warm-up tails); outliers hollow."""
    all_x = [x for _, xs, _ in series for x in xs]
    if not all_x:
        return _svg_open(w, h, "no samples") + "</svg>"
    lo, hi = min(all_x), max(all_x)
    span = (hi - lo) or max(hi * 1e-3, 1e-12)
    n = max(len(xs) for _, xs, _ in series)
    pad_l, pad_r, pad_t, pad_b = 44, 6, 6, 14
    pw, ph = w - pad_l - pad_r, h - pad_t - pad_b
    parts = [_svg_open(w, h, f"run order of {len(all_x)} samples")]
    parts.append(
        f'<text x="{pad_l - 3}" y="{pad_t + 8}" text-anchor="end">{esc(fmt_seconds(hi))}</text>'
    )
    parts.append(
        f'<text x="{pad_l - 3}" y="{pad_t + ph}" text-anchor="end">{esc(fmt_seconds(lo))}</text>'
    )
    parts.append(f'<text x="{pad_l}" y="{h - 2}">run 1</text>')
    parts.append(f'<text x="{w - pad_r}" y="{h - 2}" text-anchor="end">run {n}</text>')
    step = max(1, math.ceil(n / MAX_POINTS))
    for k, (_name, xs, outliers) in enumerate(series):
        color = PALETTE[k % len(PALETTE)]
        out_set = set(outliers)
        if step > 1:  # bucket medians in run order keep the HTML small for long runs
            xs = [_median(xs[i : i + step]) for i in range(0, len(xs), step)]
            out_set = set()
        for i, x in enumerate(xs):
            cx = pad_l + (i * step / max(n - 1, 1)) * pw
            cy = pad_t + ph - (x - lo) / span * ph
            fill = "none" if i in out_set else color
            parts.append(
                f'<circle class="jwb-pt" cx="{cx:.1f}" cy="{cy:.1f}" r="2" '
                f'fill="{fill}" stroke="{color}"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def sweep_svg(b: Benchmark, w: int = 360, h: int = 220) -> str:
    """Median time against size on log-log axes, one line per variant, fitted exponent."""
    param = b.sweep_param or "n"
    pts: dict[str, list[tuple[float, float]]] = {}
    for m in b.measurements:
        x = m.params.get(param)
        if m.stats is not None and isinstance(x, (int, float)) and x > 0:
            pts.setdefault(m.variant, []).append((float(x), m.stats.median))
    every = [p for ps in pts.values() for p in ps]
    if not every:
        return _svg_open(w, h, "no sweep points") + "</svg>"
    lx = [math.log10(p[0]) for p in every]
    ly = [math.log10(p[1]) for p in every]
    x0, x1 = min(lx), max(lx) if max(lx) > min(lx) else min(lx) + 1
    y0, y1 = min(ly), max(ly) if max(ly) > min(ly) else min(ly) + 1
    pad_l, pad_r, pad_t, pad_b = 52, 10, 8, 30
    pw, ph = w - pad_l - pad_r, h - pad_t - pad_b

    def sx(v: float) -> float:
        return pad_l + (math.log10(v) - x0) / (x1 - x0) * pw

    def sy(v: float) -> float:
        return pad_t + ph - (math.log10(v) - y0) / (y1 - y0) * ph

    parts = [_svg_open(w, h, f"time vs {param}, log-log")]
    parts.append(
        f'<rect x="{pad_l}" y="{pad_t}" width="{pw}" height="{ph}" fill="none" '
        f'style="stroke:var(--jp-border-color2,#d0d7de)"/>'
    )
    parts.append(
        f'<text x="{pad_l - 3}" y="{pad_t + 8}" text-anchor="end">{esc(fmt_seconds(10**y1))}</text>'
    )
    parts.append(
        f'<text x="{pad_l - 3}" y="{pad_t + ph}" text-anchor="end">'
        f"{esc(fmt_seconds(10**y0))}</text>"
    )
    parts.append(f'<text x="{pad_l}" y="{pad_t + ph + 12}">{esc(f"{10**x0:.4g}")}</text>')
    parts.append(
        f'<text x="{pad_l + pw}" y="{pad_t + ph + 12}" text-anchor="end">'
        f"{esc(f'{10**x1:.4g}')}</text>"
    )
    parts.append(
        f'<text x="{pad_l + pw / 2}" y="{h - 3}" text-anchor="middle">{esc(param)} (log)</text>'
    )
    fits = {f.variant: f for f in b.fits}
    for k, name in enumerate(b.variants):
        color = PALETTE[k % len(PALETTE)]
        ps = sorted(pts.get(name, []))
        if len(ps) > 1:
            path = " ".join(
                f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(ps)
            )
            parts.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        for x, y in ps:
            parts.append(
                f'<circle class="jwb-pt" cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{color}"/>'
            )
        f = fits.get(name)
        if f is not None:
            parts.append(
                f'<text x="{pad_l + 6}" y="{pad_t + 12 + 12 * k}" fill="{color}" '
                f'style="fill:{color}">{esc(name)}: ∝ {esc(param)}^'
                f"{f.exponent:.2f}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def samples_plots(ms: Sequence[Measurement]) -> str:
    """Histogram and run-order plot of the given measurements (one sweep point)."""
    series = [(m.variant, m.samples) for m in ms if m.samples]
    if not series:
        return ""
    with_outliers = [
        (m.variant, m.samples, (m.stats or summarize(m.samples)).outliers) for m in ms if m.samples
    ]
    legend = (
        " ".join(
            f'<span><svg width="10" height="10" aria-hidden="true"><rect width="10" '
            f'height="10" fill="{PALETTE[k % len(PALETTE)]}"/></svg> {esc(name)}</span>'
            for k, (name, _) in enumerate(series)
        )
        if len(series) > 1
        else ""
    )
    return (
        '<div class="jwb-plots">'
        f"<figure>{histogram_svg(series)}<figcaption>per-call time, "
        f"histogram {legend}</figcaption></figure>"
        f"<figure>{run_order_svg(with_outliers)}<figcaption>run order "
        f"(hollow: outliers)</figcaption></figure></div>"
    )


# -- HTML -------------------------------------------------------------------------------
def _row(m: Measurement, param: str | None) -> str:
    cells = [esc(m.variant)]
    if param is not None:
        cells.append(esc(m.params.get(param)))
    if m.error is not None:
        cells.append(
            f'<span class="jwb-warn">{esc(m.error.kind)} ({esc(m.error.phase)}): '
            f"{esc(m.error.summary)}</span>"
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
    rows = "".join(_row(m, param) for m in b.measurements)
    return (
        '<table class="jwb-bt"><thead><tr>'
        + "".join(f"<th>{esc(h)}</th>" for h in head)
        + f"</tr></thead><tbody>{rows}</tbody></table>"
    )


def _notes_html(b: Benchmark) -> str:
    out = []
    for c in b.comparisons:
        r = c.ratio
        at = f" at {', '.join(f'{k}={v}' for k, v in c.params.items())}" if c.params else ""
        out.append(
            f"<div><b>{esc(r.variant)} / {esc(r.reference)}{esc(at)}</b> = "
            f"{r.median:.3g}× (95% CI {r.ci_low:.3g}–{r.ci_high:.3g}×, "
            f"{r.pairs} paired runs)</div>"
        )
    for f in b.fits:
        out.append(f"<div>{esc(fit_text(f, b.sweep_param or 'n'))}</div>")
    for m in b.measurements:
        for line in _detail_lines(m, b.config.number):
            cls = ' class="jwb-warn"' if line.startswith("warning") else ""
            out.append(f'<div{cls}><span class="jwb-meta">{esc(m.label)}:</span> {esc(line)}</div>')
        if m.error is not None and m.error.where is not None:
            out.append(f'<div class="jwb-err"><pre>{esc(error_text(m.error))}</pre></div>')
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
    """Self-contained HTML: table, plots, comparisons/fits, warnings, environment."""
    plots = sweep_svg(b) if b.sweep_param is not None else samples_plots(b.measurements)
    if b.sweep_param is not None:
        plots = (
            f'<div class="jwb-plots"><figure>{plots}<figcaption>median time vs '
            f"{esc(b.sweep_param)}, log-log</figcaption></figure></div>"
        )
    progress = "" if b.progress is None else progress_html(b.progress)
    return (
        f'{style_block()}<style>{BENCH_CSS}</style><div class="jwb jwb-bench" '
        f'id="{new_id()}"><div class="jwb-head"><span class="jwb-title">'
        f'benchmark: {esc(b.label)}</span> <span class="jwb-meta">'
        f"{esc(b.env.backend)} · {esc(b.env.device_kind)} · "
        f"{esc(fmt_seconds(b.wall_s))} {'so far' if b.progress else 'total'}</span></div>"
        f"{progress}{table_html(b)}{_styled_only(plots)}{_notes_html(b)}{_env_html(b)}</div>"
    )


def _styled_only(plots: str) -> str:
    """The plots, shown only with our stylesheet: a sanitizer (an untrusted notebook)
    strips SVG into loose axis labels; the table above has the figures."""
    return f"<div {STYLED_ONLY}>{plots}</div>" if plots else ""


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

"""Cache views: engine records -> MIME bundles.

Three displays, each ``text/plain`` + self-contained ``text/html`` + a versioned JSON
MIME type (described in ``docs/mime-cache.md``; contracts in ``workbench/schemas/cache*.schema.json``):

- the compact line beside a cell (:func:`cell_line_display`),
  ``jit(loss): compiled 1x in 0.41 s (trace 0.02 · lower 0.05 · XLA 0.34) · recompiled: ...``;
- the ``%jaxcache`` table of every function (:func:`cache_display`);
- the persistent-cache settings and counters (:func:`persistent_display`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from workbench.engine.cache.records import (
    SCHEMA_VERSION,
    CacheSnapshot,
    CellSummary,
    FunctionGroup,
    FunctionStats,
    PersistentCacheStatus,
)
from workbench.views._envelope import MIME_PREFIX, kind_of
from workbench.views._format import fmt_bytes, fmt_in_unit, fmt_seconds, seconds_unit
from workbench.views._html import SUMMARY_ROWS, esc, source_label, summary_table
from workbench.views.display import Display, View

CACHE_CELL_MIME = MIME_PREFIX + "cache-cell+json"
CACHE_MIME = MIME_PREFIX + "cache+json"
CACHE_PERSISTENT_MIME = MIME_PREFIX + "cache-persistent+json"
R = TypeVar("R")
MAX_REASONS_IN_LINE = 3
MAX_MISSES_SHOWN = 20
#: compile records in the ``%jaxcache`` payload: the newest (the rest stay available
#: through ``workbench.cache().records``); the table itself is per function
MAX_RECORDS_SHOWN = 200
#: function rows in the ``%jaxcache`` table and payload: the user's, the most expensive
#: first (a line says how many more there are)
MAX_FUNCTIONS_SHOWN = 100

_CSS = """
.jwb-led{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:12px;
 color:var(--jp-content-font-color2,#57606a);line-height:1.5}
.jwb-led code{font-family:var(--jp-code-font-family,Menlo,Consolas,monospace);
 color:var(--jp-content-font-color1,#1f2328)}
.jwb-led .miss{color:var(--jp-content-font-color1,#1f2328);border-bottom:2px solid var(--jp-warn-color1,#bc4c00)}
.jwb-led table{border-collapse:collapse;margin:4px 0}
.jwb-led th,.jwb-led td{padding:2px 8px;text-align:right;border-bottom:1px solid
 var(--jp-border-color2,#d0d7de);vertical-align:top}
.jwb-led th:first-child,.jwb-led td:first-child,.jwb-led td.l{text-align:left}
.jwb-led details{margin:0}
.jwb-led summary{cursor:pointer}
"""


#: significant digits of the compact cache texts (a compile line is read at a glance)
DIGITS = 2


def _s(seconds: float) -> str:
    return fmt_seconds(seconds, DIGITS)


def _what(g: FunctionGroup) -> str:
    if g.compiles:
        return f"compiled {g.compiles}x in {_s(g.total_s)}"
    if g.lowers:
        return f"lowered {g.lowers}x in {_s(g.total_s)}"
    return f"traced {g.traces}x in {_s(g.total_s)}"


def _stages(g: FunctionGroup) -> str:
    """``trace 0.02 · lower 0.05 · XLA 0.34``: numbers in the unit the total was just given in."""
    unit = seconds_unit(g.total_s, DIGITS)[0] if g.total_s else "s"

    def n(t: float) -> str:
        return fmt_in_unit(t, unit, DIGITS)

    parts = []
    if g.traces:
        parts.append(f"trace {n(g.trace_s)}")
    if g.lowers:
        parts.append(f"lower {n(g.lower_s)}")
    if g.compiles:
        parts.append(f"XLA {n(g.compile_s)}")
    return " · ".join(parts)


#: the word before a reason, by the kind of record it came from
AGAIN = {"compile": "recompiled", "lower": "relowered", "trace": "retraced"}


def again_parts(g: FunctionGroup, limit: int) -> list[tuple[str, list[str]]]:
    """The first ``limit`` reasons as ``[(word, texts)]``, one part per word in the order
    the words first appear: ``recompiled: x changed ... · retraced: x changed ...``.  A
    cell that compiled a function once and traced it again (``jax.make_jaxpr``) says
    "retraced" for the trace's reasons."""
    parts: dict[str, list[str]] = {}
    for i, r in enumerate(g.reasons[:limit]):
        parts.setdefault(AGAIN.get(g.reason_from(i), "recompiled"), []).append(r.text())
    return list(parts.items())


def again_text(g: FunctionGroup, limit: int = MAX_REASONS_IN_LINE) -> str:
    """``recompiled: a; b · retraced: c; +2 more``."""
    more = len(g.reasons) - limit
    return " · ".join(f"{word}: " + "; ".join(texts) for word, texts in again_parts(g, limit)) + (
        f"; +{more} more" if more > 0 else ""
    )


def _inspected(g: FunctionGroup) -> str:
    return "inspected by " + (", ".join(g.inspected_by) or "the workbench")


def group_line(g: FunctionGroup) -> str:
    """One function's line, as plain text."""
    if g.origin == "jax":
        names = ", ".join(n.removeprefix("jit(").removesuffix(")") for n in g.names)
        return f"JAX helpers ({names}): {_what(g)}"
    out = [f"{g.function}: {_what(g)} ({_stages(g)})"]
    if g.persistent_hits:
        out.append(
            f"{g.persistent_hits} persistent-cache hit{'s' * (g.persistent_hits > 1)}"
            f" (saved {_s(g.time_saved_s)})"
        )
    if g.persistent_written:
        out.append(f"{g.persistent_written} written to the persistent cache")
    if g.origin == "workbench":
        out.append(_inspected(g))
    if g.reasons:
        out.append(again_text(g))
    return " · ".join(out)


def cell_text(summary: CellSummary) -> str:
    groups = [*summary.groups, *([summary.jax_helpers] if summary.jax_helpers else [])]
    return "\n".join(group_line(g) for g in groups)


def _group_html(g: FunctionGroup) -> str:
    if g.origin == "jax":
        return f"<div>{esc(group_line(g))}</div>"
    head = f"<code>{esc(g.function)}</code>: {esc(_what(g))} ({esc(_stages(g))})"
    if g.persistent_hits:
        head += f" · {g.persistent_hits} persistent-cache hit(s), saved {esc(_s(g.time_saved_s))}"
    if g.persistent_written:
        head += f" · {g.persistent_written} written to the persistent cache"
    if g.origin == "workbench":
        head += f" · {esc(_inspected(g))}"
    if not g.reasons:
        return f"<div>{head}</div>"
    items = []
    for r in g.reasons:
        items.append(f"<li>{esc(r.text())}</li>")
    sites = {(c.file, c.line, c.text) for c in g.call_sites}
    where = "".join(
        f"<li>called at {esc(source_label(f, ln)[0])}: <code>{esc(t)}</code></li>"
        for f, ln, t in sorted(sites)[:3]
    )
    first = esc(again_text(g))
    return (
        f'<details><summary>{head} · <span class="miss">{first}</span>'
        f"</summary><ul>{''.join(items)}{where}</ul></details>"
    )


def cell_html(summary: CellSummary) -> str:
    groups = [*summary.groups, *([summary.jax_helpers] if summary.jax_helpers else [])]
    body = "".join(_group_html(g) for g in groups)
    return f'<style>{_CSS}</style><div class="jwb-led">{body}</div>'


def _figures(f: FunctionStats) -> list[str]:
    """A function's entries, compiles, trace, lower and XLA time, persistent hits: the
    middle columns of the text's table and the summary's."""
    return [
        str(f.entries),
        str(f.compiles),
        _s(f.trace_s),
        _s(f.lower_s),
        _s(f.compile_s),
        str(f.persistent_hits),
    ]


def cache_text(snap: CacheSnapshot) -> str:
    if not snap.functions:
        return "No jitted function traced or compiled yet in this kernel."
    rows: list[tuple[str, ...]] = [
        ("function", "entries", "compiles", "trace", "lower", "XLA", "pcache hits", "misses")
    ]
    shown = snap.functions[:MAX_FUNCTIONS_SHOWN]
    for f in shown:
        name = f.function if f.origin != "jax" else f"{f.function} [JAX]"
        rows.append(
            (
                name,
                *_figures(f),
                str(f.recompiles),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    if _more(snap):
        lines.append(_more(snap))
    for f in shown:
        recompiles = [m for m in f.misses if m.is_recompile][-MAX_MISSES_SHOWN:]
        if recompiles:
            lines.append(f"{f.function} misses:")
            for m in recompiles:
                lines.append(f"  cell {m.cell}: " + "; ".join(r.text() for r in m.reasons))
    return "\n".join(lines)


def cache_html(snap: CacheSnapshot) -> str:
    """The static summary: the most expensive functions with their compile figures and last
    recompile's reasons (:func:`~workbench.views._html.summary_table`).  Sorting and every
    miss are the TypeScript view's, drawn from the payload."""
    if not snap.functions:
        return (
            '<div class="jwb jwb-cache">No jitted function traced or compiled yet in this '
            "kernel.</div>"
        )
    rows = []
    for f in snap.functions[:SUMMARY_ROWS]:  # the most expensive first
        recompiles = [m for m in f.misses if m.is_recompile]
        last = recompiles[-1] if recompiles else None
        where = ""
        if f.defined_at:
            file, _, line = f.defined_at.rpartition(":")
            where = source_label(file, int(line) if line.isdigit() else 0)[0]
        rows.append(
            [
                f.function + (" (JAX)" if f.origin == "jax" else ""),
                where,
                *_figures(f),
                str(f.recompiles)
                + (
                    f" (last, cell {last.cell}: {'; '.join(r.text() for r in last.reasons)})"
                    if last is not None
                    else ""
                ),
            ]
        )
    head = ["function", "defined at", "entries", "compiles", "trace", "lower", "XLA"]
    head += ["persistent hits", "recompiles"]
    p = snap.persistent
    foot = (
        f"<div>persistent cache <code>{esc(p.directory)}</code>: {p.hits} hits, "
        f"{p.misses} misses, saved {esc(_s(p.time_saved_s))}</div>"
        if p.directory
        else ""
    )
    return (
        f'<div class="jwb jwb-cache"><div><b>{len(snap.functions)} jitted functions</b>, '
        f"{sum(f.compiles for f in snap.functions)} compiles</div>"
        f"{summary_table(head, rows, total=len(snap.functions), what='functions')}{foot}</div>"
    )


def _bytes(n: int) -> str:
    return "unlimited" if n < 0 else fmt_bytes(n)


def persistent_text(p: PersistentCacheStatus) -> str:
    if not p.directory:
        return "Persistent compilation cache: off (turn on with %jaxcache persist DIR)"
    return "\n".join(
        [
            f"Persistent compilation cache: {p.directory}",
            f"  minimum compile time to be written: {p.min_compile_time_s:g} s"
            + ("  (programs compiling faster are not cached)" if p.min_compile_time_s > 0 else ""),
            f"  minimum entry size to be written: {_bytes(p.min_entry_size_bytes)}",
            f"  maximum cache size: {_bytes(p.max_size_bytes)}",
            f"  this session: {p.hits} hits, {p.misses} misses ({p.written} written), "
            f"saved {_s(p.time_saved_s)}",
        ]
    )


def persistent_html(p: PersistentCacheStatus) -> str:
    lines = persistent_text(p).splitlines()
    body = "<br>".join(esc(ln) for ln in lines)
    return f'<style>{_CSS}</style><div class="jwb-led">{body}</div>'


def _cell_data(summary: CellSummary) -> dict[str, Any]:
    return summary.to_dict()


def _cache_data(snap: CacheSnapshot) -> dict[str, Any]:
    return snap.to_dict(max_records=MAX_RECORDS_SHOWN, max_functions=MAX_FUNCTIONS_SHOWN)


def _more(snap: CacheSnapshot) -> str:
    rest = len(snap.functions) - MAX_FUNCTIONS_SHOWN
    return (
        f"... and {rest} more functions (the cheapest; all in workbench.cache())"
        if rest > 0
        else ""
    )


def _persistent_data(p: PersistentCacheStatus) -> dict[str, Any]:
    return p.to_dict()


def _cache_view(
    mime: str,
    text: Callable[[R], str],
    html: Callable[[R], str],
    data: Callable[[R], dict[str, Any]],
    record_name: str,
) -> View[R]:
    """One of the three cache views: its kind is read from its MIME constant above, so the
    two can never disagree, and all three carry the cache records' schema version."""
    return View(
        kind=kind_of(mime) or "",
        version=SCHEMA_VERSION,
        text=text,
        html=html,
        data=data,
        record_name=record_name,
    )


#: the compact line beside a cell
CELL_VIEW = _cache_view(CACHE_CELL_MIME, cell_text, cell_html, _cell_data, "summary")
#: ``%jaxcache``: every function seen in this kernel
CACHE_VIEW = _cache_view(CACHE_MIME, cache_text, cache_html, _cache_data, "snapshot")
#: ``%jaxcache persist``: the persistent cache's settings and counters
PERSISTENT_VIEW = _cache_view(
    CACHE_PERSISTENT_MIME, persistent_text, persistent_html, _persistent_data, "status"
)


def cell_bundle(summary: CellSummary) -> dict[str, Any]:
    return CELL_VIEW.bundle(summary)


def cache_bundle(snap: CacheSnapshot) -> dict[str, Any]:
    return CACHE_VIEW.bundle(snap)


def persistent_bundle(p: PersistentCacheStatus) -> dict[str, Any]:
    return PERSISTENT_VIEW.bundle(p)


def cell_line_display(summary: CellSummary) -> Display[CellSummary]:
    return Display(summary, CELL_VIEW)


def cache_display(snap: CacheSnapshot) -> Display[CacheSnapshot]:
    return Display(snap, CACHE_VIEW)


def persistent_display(status: PersistentCacheStatus) -> Display[PersistentCacheStatus]:
    return Display(status, PERSISTENT_VIEW)

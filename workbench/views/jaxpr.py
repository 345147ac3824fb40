"""Jaxpr views: pure functions from an :class:`~workbench.engine.Inspection` to a MIME bundle.

- ``text/plain``: exactly JAX's own pretty-printed jaxpr (what a terminal shows), up to the
  bound of :mod:`workbench.views._bounds` (``.text`` of the returned object has all of it);
- ``text/html``: a static summary (header, most used primitives) plus the standalone
  runtime that draws the interactive view from the payload (:mod:`workbench.views._standalone`);
- ``application/vnd.jax-workbench.jaxpr+json``: the structured record
  (``docs/mime-jaxpr.md``, schema ``workbench/schemas/jaxpr.schema.json``) for the
  JupyterLab extension; ``--compare`` gives ``jaxpr-compare+json``.

The JSON carries every equation up to :data:`MAX_JSON_EQUATIONS` (packed, gzip + base64,
when big); ``text/plain`` is bounded by :mod:`workbench.views._bounds` (``.text`` of the
returned object has all of JAX's text).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from workbench.engine.common.gcpause import gc_paused
from workbench.engine.jaxpr.model import SCHEMA_VERSION, Equation, JaxprModel
from workbench.engine.stages import Inspection
from workbench.views._bounds import text_size
from workbench.views._envelope import pack
from workbench.views._format import fmt_seconds
from workbench.views._html import LineCache, cells_of, esc, summary_table
from workbench.views.display import Display, View

#: rows of the static summary's primitive table
HIST_TOP = 8
#: the JSON carries every equation up to this many (then ``truncated`` and no body)
MAX_JSON_EQUATIONS = 200_000
#: payload fields packed (gzip + base64) when together they serialise over 64 KiB
PACKED_FIELDS = ("avals", "jaxpr")


def _histogram_html(hist: Sequence[tuple[str, int]]) -> str:
    """The most used primitives as a table (the view's histogram has them all)."""
    if not hist:
        return ""
    rows = [[p, str(c)] for p, c in hist]
    return summary_table(["primitive", "equations"], rows, what="primitives", limit=HIST_TOP)


def _signature(ins: Inspection) -> str:
    """``(ps: list[24] of {...}, x: f32[16,128]) → (list[24] of {...})`` from the pytree
    summaries; the flat avals when the summaries cannot be had."""
    try:
        trees = ins.trees
    except Exception:  # a summary is a nicety: never fail the header for it
        return f"({', '.join(ins.in_avals)}) → ({', '.join(ins.out_avals)})"
    args = ", ".join(f"{t.name}: {t.summary}" for t in trees["in"])
    outs = ", ".join(
        t.summary if t.name == "out" else f"{t.name}: {t.summary}" for t in trees["out"]
    )
    return f"({args}) → ({outs})"


def _header(ins: Inspection) -> str:
    model = ins.model
    hist = model.histogram
    total = sum(hist.values())
    nested = "" if total == len(model.eqns) else f" ({len(model.eqns)} at top level)"
    return (
        f'<div class="jwb-head"><b class="jwb-title">{esc(ins.label)}</b> '
        f'<span class="jwb-meta">{esc(_signature(ins))} · {total} '
        f"equation{'s' if total != 1 else ''}{nested} · traced in "
        f"{fmt_seconds(ins.timings.trace)}</span></div>"
        f"{_histogram_html(hist.most_common())}"
    )


def jaxpr_html(ins: Inspection, depth: int = 1) -> str:
    """The static summary (where scripts do not run): the header and the most used
    primitives.  The equations, their folding, search and source links are the TypeScript
    view's, drawn from the payload (:mod:`workbench.views._standalone`)."""
    total = ins.model.total_equations
    note = (
        f"<p>{total} equations are more than an output saves ({MAX_JSON_EQUATIONS:,}): "
        "<code>.text</code> of the returned object has JAX's whole text.</p>"
        if total > MAX_JSON_EQUATIONS
        else ""
    )
    return f'<div class="jwb jwb-jaxpr">{_header(ins)}{note}</div>'


def jaxpr_data(ins: Inspection, **_options: Any) -> dict[str, Any]:
    """The payload's body (the envelope adds version and kind); see docs/mime-jaxpr.md."""
    with gc_paused():
        model = ins.model
        hist = model.histogram
        total = sum(hist.values())
        rec: dict[str, Any] = {
            "label": ins.label,
            "function": ins.fn_name,
            "transforms": [str(t) for t in ins.transforms],
            "in_avals": ins.in_avals,
            "out_avals": ins.out_avals,
            "timings": {"trace": ins.timings.trace},
            "stats": {
                "equations": total,
                "top_level_equations": len(model.eqns),
                "histogram": dict(hist.most_common()),
            },
            "truncated": total > MAX_JSON_EQUATIONS,
            "trees": {side: [t.to_dict() for t in items] for side, items in ins.trees.items()},
        }
        body = model.to_dict() if total <= MAX_JSON_EQUATIONS else {"avals": [], "jaxpr": None}
        rec["avals"] = body["avals"]
        rec["jaxpr"] = body["jaxpr"]
        rec["cells"] = cells_of(_files(model))
        if body["jaxpr"] is not None:  # a truncated payload has no rows to search
            rec["lines"] = _line_texts(model)
        rec["text_size"] = text_size(ins.jaxpr_text).to_dict()
        return pack(rec, PACKED_FIELDS)


def _files(model: JaxprModel) -> list[str]:
    """The source files of every equation, nested ones included (repeats kept: cheap)."""
    files: list[str] = []
    stack = [model]
    while stack:
        m = stack.pop()
        for eq in m.eqns:
            if eq.source is not None:
                files.append(eq.source.file)
            stack.extend(sub.jaxpr for sub in eq.subjaxprs)
    return files


#: a source line's text in the payload's ``lines`` is cut to this many characters
MAX_LINE_CHARS = 200
#: the payload's ``lines`` serialise (JSON, UTF-8) to at most this many bytes: a program of
#: thousands of distinct lines (generated code) would otherwise save its whole source again
#: beside the equations (6,000 such lines: 1 MB on a 240 KB payload); a 24-block
#: transformer's gradient names 16 lines (1 KB)
MAX_LINES_BYTES = 32 * 1024


def _equations_in_order(model: JaxprModel) -> Iterable[Equation]:
    """Every equation, nested ones right after the equation that holds them: the order the
    view lists its rows, so the lines kept within the bound are the first the user reads."""
    stack: list[Iterator[Equation]] = [iter(model.eqns)]
    while stack:
        eq = next(stack[-1], None)
        if eq is None:
            stack.pop()
            continue
        yield eq
        for sub in reversed(eq.subjaxprs):
            stack.append(iter(sub.jaxpr.eqns))


def _json_bytes(value: str) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def _line_texts(model: JaxprModel) -> dict[str, dict[str, str]]:
    """``{file: {"<line>": text}}`` for the source lines the equations name: the user's own
    text, which the front end's search matches (``softmax`` finds the equations of
    ``jax.nn.softmax(x)``'s line, whose equations never say it).  One entry per line, so
    the size follows the program's source, not its equation count; lines past
    :data:`MAX_LINES_BYTES` (in the order the rows are listed) are left out (not searched by
    their text)."""
    cache = LineCache()
    out: dict[str, dict[str, str]] = {}
    seen: set[tuple[str, int]] = set()
    used = 2  # {}
    for eq in _equations_in_order(model):
        s = eq.source
        if s is None or s.line <= 0 or (s.file, s.line) in seen:
            continue
        seen.add((s.file, s.line))
        text = cache.get(s.file, s.line)
        if not text:
            continue
        if len(text) > MAX_LINE_CHARS:
            text = text[: MAX_LINE_CHARS - 1] + "…"
        key = str(s.line)
        # "key": "text", and, for a file's first line, "file": {...},
        cost = len(key) + 2 + _json_bytes(text) + 4
        if s.file not in out:
            cost += _json_bytes(s.file) + 6
        if used + cost > MAX_LINES_BYTES:
            break
        used += cost
        out.setdefault(s.file, {})[key] = text
    return out


def jaxpr_record(ins: Inspection) -> dict[str, Any]:
    """The whole JSON payload of one jaxpr, envelope included."""
    return JAXPR_VIEW.payload(ins)


def _jaxpr_text(ins: Inspection, **_options: Any) -> str:
    return ins.jaxpr_text


def _jaxpr_html(ins: Inspection, depth: int = 1) -> str:
    return jaxpr_html(ins, depth)


#: ``%%jaxpr``, ``workbench.jaxpr``, a displayed ``Inspection``: text is exactly JAX's
JAXPR_VIEW: View[Inspection] = View(
    kind="jaxpr",
    version=SCHEMA_VERSION,
    text=_jaxpr_text,
    html=_jaxpr_html,
    data=jaxpr_data,
    record_name="inspection",
)
JAXPR_MIME = JAXPR_VIEW.mime


def jaxpr_bundle(ins: Inspection, depth: int = 1, text_only: bool = False) -> dict[str, Any]:
    return JAXPR_VIEW.bundle(ins, text_only=text_only, depth=depth)


# -- --compare: the function and each successive transform side by side -------------------


def compare_text(stages: Sequence[Inspection], **_options: Any) -> str:
    parts = []
    for ins in stages:
        hist = ins.model.histogram
        top = ", ".join(f"{p} {c}" for p, c in hist.most_common(8))
        parts.append(f"== {ins.label}: {sum(hist.values())} equations ({top})\n{ins.jaxpr_text}")
    return "\n\n".join(parts)


def compare_html(stages: Sequence[Inspection], depth: int = 0) -> str:
    """The static summary of ``--compare``: each stage's header and equation count."""
    parts = []
    prev: int | None = None
    for ins in stages:
        total = ins.model.total_equations
        delta = "" if prev is None else f" ({total - prev:+d})"
        prev = total
        parts.append(f"{_header(ins)}<p>{total} equations{esc(delta)}</p>")
    return f'<div class="jwb jwb-jaxpr-compare">{"".join(parts)}</div>'


def compare_data(stages: Sequence[Inspection], **_options: Any) -> dict[str, Any]:
    """The stages' bodies, each in its own ``jaxpr`` envelope (a compare holds jaxprs)."""
    return {"stages": [jaxpr_record(s) for s in stages]}


#: ``--compare``: the record is the list of stages (``d.stages``; ``d.inspection`` is the last)
COMPARE_VIEW: View[Sequence[Inspection]] = View(
    kind="jaxpr-compare",
    version=SCHEMA_VERSION,
    text=compare_text,
    html=compare_html,
    data=compare_data,
    record_name="stages",
)
JAXPR_COMPARE_MIME = COMPARE_VIEW.mime


def compare_bundle(
    stages: Sequence[Inspection], depth: int = 0, text_only: bool = False
) -> dict[str, Any]:
    return COMPARE_VIEW.bundle(list(stages), text_only=text_only, depth=depth)


def jaxpr_display(
    stages: Sequence[Inspection], compare: bool = False, depth: int = 1, text_only: bool = False
) -> Display[Any]:
    """What ``%%jaxpr`` and :func:`workbench.jaxpr` return: the last stage's jaxpr, or with
    ``compare`` every stage side by side."""
    if compare:
        return Display(list(stages), COMPARE_VIEW, text_only=text_only, depth=depth)
    return Display(stages[-1], JAXPR_VIEW, text_only=text_only, depth=depth)

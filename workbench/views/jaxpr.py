"""Jaxpr views: pure functions from an :class:`~workbench.engine.Inspection` to a MIME bundle.

- ``text/plain``: exactly JAX's own pretty-printed jaxpr (what a terminal shows), up to the
  bound of :mod:`workbench.views._bounds` (``.text`` of the returned object has all of it);
- ``text/html``: self-contained, coloured, source-linked, foldable, with a small
  click-to-highlight script that degrades to plain reading when scripts are off;
- ``application/vnd.jax-workbench.jaxpr+json``: the structured record
  (``docs/mime-jaxpr.md``, schema ``workbench/schemas/jaxpr.schema.json``) for the
  JupyterLab extension; ``--compare`` gives ``jaxpr-compare+json``.

Size bound: at most :data:`MAX_ROWS` equation rows, and at most
:data:`~workbench.views._bounds.HTML_MAX_BYTES` of them, are rendered as HTML; beyond that
the rest is elided with a note that says how many.  ``text/plain`` is bounded the same way
(:mod:`workbench.views._bounds`; ``.text`` of the returned object has all of JAX's text), and
the JSON carries every equation up to :data:`MAX_JSON_EQUATIONS` (packed, gzip + base64,
when big).

The HTML reads without its ``<style>`` block (a sanitizer strips it in untrusted
notebooks): equations are in ``<pre>`` blocks, colours are JupyterLab's theme variables.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from workbench.engine.common.gcpause import gc_paused
from workbench.engine.jaxpr.model import SCHEMA_VERSION, Atom, Equation, JaxprModel
from workbench.engine.stages import Inspection
from workbench.views._bounds import HTML_MAX_BYTES, text_size
from workbench.views._envelope import pack
from workbench.views._format import fmt_seconds
from workbench.views._html import (
    HIGHLIGHT_JS,
    PRE_STYLE,
    LineCache,
    cells_of,
    esc,
    new_id,
    source_label,
    style_block,
)
from workbench.views.display import Display, View

MAX_ROWS = 5000
CHUNK_ROWS = 200
FOLD_AFTER = 1000
HIST_TOP = 16
#: the JSON carries every equation up to this many (then ``truncated`` and no body)
MAX_JSON_EQUATIONS = 200_000
#: payload fields packed (gzip + base64) when together they serialise over 64 KiB
PACKED_FIELDS = ("avals", "jaxpr")


def _dtype_class(text: str) -> str:
    if text.startswith(("f", "bf")):
        return "f"
    if text.startswith(("i", "u")):
        return "i"
    if text.startswith("bool"):
        return "b"
    if text.startswith("c"):
        return "c"
    return ""


class _Ctx:
    def __init__(self, open_depth: int) -> None:
        self.open_depth = open_depth
        self.rows = 0
        self.bytes = 0
        self._measured = 0  # parts of ``out`` already counted in ``bytes``
        self.elided = 0
        self.lines = LineCache()
        self._types: dict[str, str] = {}
        self._esc: dict[str, str] = {}

    def full(self, out: list[str]) -> bool:
        """Whether the HTML has drawn all it may: :data:`MAX_ROWS` rows, or
        :data:`HTML_MAX_BYTES` of ``out`` (rows, source lines, folds, chunks: everything)."""
        for part in out[self._measured :]:
            self.bytes += len(part) if part.isascii() else len(part.encode())
        self._measured = len(out)
        return self.rows >= MAX_ROWS or self.bytes >= HTML_MAX_BYTES

    def esc(self, text: str) -> str:
        """Memoised escaping: primitive names and param texts repeat a lot."""
        out = self._esc.get(text)
        if out is None:
            out = esc(text)
            self._esc[text] = out
        return out

    def typ(self, text: str) -> str:
        out = self._types.get(text)
        if out is None:
            out = f'<span class="jwb-t {_dtype_class(text)}">{esc(text)}</span>'
            self._types[text] = out
        return out


def _var(a: Atom, ctx: _Ctx, binding: bool) -> str:
    if a.literal is not None:
        return f'<span class="jwb-lit">{esc(a.literal)}</span>:{ctx.typ(a.aval.text)}'
    if a.name == "_":
        return f"_:{ctx.typ(a.aval.text)}" if binding else "_"
    name = ctx.esc(a.name)
    if binding:
        return (
            f'<span class="jwb-v" data-v="{name}" data-def="1">{name}</span>:{ctx.typ(a.aval.text)}'
        )
    return f'<span class="jwb-v" data-v="{name}">{name}</span>'


def _params(eq: Equation, ctx: _Ctx) -> str:
    jaxpr_params = {s.param.split("[", 1)[0] for s in eq.subjaxprs} if eq.subjaxprs else ()
    # "None" params are JAX's defaults (precision, accuracy, out_sharding...): noise here.
    e = ctx.esc
    shown = [
        f"{e(k)}={e(v)}" for k, v in eq.params.items() if v != "None" and k not in jaxpr_params
    ]
    if not shown:
        return ""
    return f'<span class="jwb-par">[{" ".join(shown)}]</span>'


def _source_row(eq: Equation, ctx: _Ctx) -> str:
    s = eq.source
    if s is None:
        return ""
    label, is_cell = source_label(s.file, s.line)
    text = ctx.lines.get(s.file, s.line)
    title = f"{s.file}:{s.line}:{s.column} ({s.function})"
    if eq.name_stack:
        title += f" · {eq.name_stack}"
    cls = "jwb-src cell" if is_cell else "jwb-src"
    body = f"── {label} · {s.function}" + (f": {text}" if text else "")
    return f'<span class="{cls}" title="{esc(title)}">{esc(body)}</span>\n'


_PRE = f'<pre class="jwb-code" style="{PRE_STYLE}">'


def _count(eqns: Sequence[Equation]) -> int:
    """Equations in ``eqns``, nested ones included: what eliding them leaves out."""
    return sum(1 + sum(sub.jaxpr.total_equations for sub in e.subjaxprs) for e in eqns)


def _render_eqns(eqns: Sequence[Equation], level: int, ctx: _Ctx, out: list[str]) -> None:
    last_src: tuple[str, int] | None = None
    for i, eq in enumerate(eqns):
        if ctx.full(out):
            ctx.elided += _count(eqns[i:])
            return
        src_key = None if eq.source is None else (eq.source.file, eq.source.line)
        if src_key is not None and src_key != last_src:
            out.append(_source_row(eq, ctx))
        last_src = src_key
        lhs = " ".join(_var(a, ctx, True) for a in eq.outvars)
        rhs = " ".join(_var(a, ctx, False) for a in eq.invars)
        out.append(
            f'<span class="jwb-eq">  {lhs} = <span class="jwb-p">{ctx.esc(eq.primitive)}</span>'
            f"{_params(eq, ctx)} {rhs}</span>\n"
        )
        ctx.rows += 1
        for sub in eq.subjaxprs:
            total = sub.jaxpr.total_equations
            opened = " open" if level + 1 <= ctx.open_depth else ""
            # a fold leaves the <pre> and comes back to it: <details> is not phrasing content
            out.append(
                f"</pre><details{opened}><summary>{esc(eq.primitive)} · {esc(sub.param)} · "
                f"{total} equation{'s' if total != 1 else ''}</summary>{_PRE}"
            )
            _render_jaxpr(sub.jaxpr, level + 1, ctx, out)
            out.append(f"</pre></details>{_PRE}")


def _render_jaxpr(model: JaxprModel, level: int, ctx: _Ctx, out: list[str]) -> None:
    consts = " ".join(_var(a, ctx, True) for a in model.constvars)
    ins = " ".join(_var(a, ctx, True) for a in model.invars)
    head = f"{consts} ; {ins}" if consts else f"; {ins}"
    out.append(
        f'<span class="jwb-eq"><span class="jwb-kw">{{ lambda</span> {head}. '
        f'<span class="jwb-kw">let</span></span>\n'
    )
    eqns = model.eqns
    n = len(eqns)
    if level > 0:
        _render_eqns(eqns, level, ctx, out)
    else:
        # Top level: chunks the browser may skip laying out until scrolled to
        # (content-visibility), and folds of FOLD_AFTER equations after the first.
        for g in range(0, n, FOLD_AFTER):
            g_end = min(n, g + FOLD_AFTER)
            if g:
                if ctx.full(out):
                    ctx.elided += _count(eqns[g:])
                    break
                out.append(f"</pre><details><summary>equations {g + 1}–{g_end} of {n}</summary>")
            for c in range(g, g_end, CHUNK_ROWS):
                out.append(f'</pre><div class="jwb-chunk">{_PRE}')
                _render_eqns(eqns[c : min(g_end, c + CHUNK_ROWS)], level, ctx, out)
                out.append(f"</pre></div>{_PRE}")
            if g:
                out.append(f"</pre></details>{_PRE}")
    outs = " ".join(_var(a, ctx, False) for a in model.outvars)
    out.append(f'<span class="jwb-eq">  <span class="jwb-kw">in</span> ({outs}) }}</span>\n')


def _histogram_html(hist: Iterable[tuple[str, int]]) -> str:
    items = list(hist)[:HIST_TOP]
    if not items:
        return ""
    peak = max(c for _, c in items)
    parts = [
        f'<span title="{esc(p)}: {c}">{esc(p)} {c}<span class="bar" '
        f'style="width:{max(2, round(60 * c / peak))}px"></span></span>'
        for p, c in items
    ]
    return f'<div class="jwb-hist">{" ".join(parts)}</div>'


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
        f"{fmt_seconds(ins.timings.trace)}</span>"
        f"{_histogram_html(hist.most_common())}</div>"
    )


def jaxpr_body_html(ins: Inspection, depth: int) -> str:
    ctx = _Ctx(depth)
    out: list[str] = []
    _render_jaxpr(ins.model, 0, ctx, out)
    body = f"{_PRE}{''.join(out)}</pre>".replace(f"{_PRE}</pre>", "")
    if ctx.elided:
        # the JSON carries the equations only up to MAX_JSON_EQUATIONS (then ``truncated``)
        json_has = (
            "The JSON model has them all, and "
            if ins.model.total_equations <= MAX_JSON_EQUATIONS
            else ""
        )
        body += (
            f'<div class="jwb-note">Showing the first {ctx.rows} equations; '
            f"{ctx.elided} more are omitted here to keep the page and the saved notebook "
            f"small. {json_has}<code>.text</code> of the returned object has JAX's whole "
            f"text.</div>"
        )
    return f'<div class="jwb-body">{body}</div>'


def _wrap(root: str, inner: str) -> str:
    return (
        f'<div class="jwb jwb-jaxpr" id="{root}">{style_block()}{inner}'
        f"<script>{HIGHLIGHT_JS % root}</script></div>"
    )


def jaxpr_html(ins: Inspection, depth: int = 1) -> str:
    root = new_id()
    return _wrap(root, _header(ins) + jaxpr_body_html(ins, depth))


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
    root = new_id()
    cols = []
    prev: int | None = None
    for ins in stages:
        total = ins.model.total_equations
        delta = "" if prev is None else f" ({total - prev:+d})"
        prev = total
        body = jaxpr_body_html(ins, depth)
        cols.append(
            f'<div class="jwb-col">{_header(ins)}'
            f'<div class="jwb-meta">{total} equations{esc(delta)}</div>'
            f"<details><summary>jaxpr</summary>{body}</details></div>"
        )
    return _wrap(root, f'<div class="jwb-cols">{"".join(cols)}</div>')


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

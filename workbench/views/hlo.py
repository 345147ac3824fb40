"""HLO views: pure functions from an :class:`~workbench.engine.hlo.report.HloReport` to a bundle.

- ``text/plain``: the stage's raw text exactly as JAX prints it, up to the bound of
  :mod:`workbench.views._bounds` (then one line on the rest; ``.text`` has all of it);
- ``text/html``: self-contained: a summary header, the collectives, the fusion
  diagram as inline SVG (plus sub-diagrams for ``while``/``conditional``/``call``
  bodies), and the module text, syntax-coloured, one collapsible block per
  computation, each op annotated with its Python line, with a small search box
  (scripts off: the browser's own find still works);
- ``application/vnd.jax-workbench.hlo+json``: the report as data plus the
  diagram's layout (``docs/mime-hlo.md``, schema ``workbench/schemas/hlo.schema.json``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.graph import DataflowGraph, GraphNode
from workbench.engine.hlo.model import HloComputation, HloInstruction
from workbench.engine.hlo.report import SCHEMA_VERSION, HloReport
from workbench.views._bounds import HTML_MAX_BYTES, bounded, text_size
from workbench.views._envelope import envelope, pack
from workbench.views._format import fmt_bytes, fmt_count, fmt_seconds
from workbench.views._html import (
    CELL_STYLE,
    FG1,
    FG2,
    NEUTRAL_BORDER,
    PRE_STYLE,
    STYLED_ONLY,
    TABLE_STYLE,
    UNSTYLED_ONLY,
    LineCache,
    cells_of,
    esc,
    new_id,
    source_label,
    style_block,
)
from workbench.views.dag_layout import Layout, layered_layout
from workbench.views.display import Display, View

#: graphs up to this many nodes are drawn as a full SVG diagram in the HTML fallback; bigger
#: ones get the compact overview (estimated bytes by op_name scope) and the JSON has them all
MAX_DIAGRAM_NODES = 300
#: Size bound of the StableHLO text view (a 12,000-op function drew 10 MB): at most this
#: many lines (and :data:`~workbench.views._bounds.HTML_MAX_BYTES` of rows) are rendered as
#: HTML, the rest are counted in a note (``.text`` keeps the whole module), as the jaxpr
#: view does with its equations.
MAX_STABLEHLO_ROWS = 3000
#: the folded list of a big module's computations names at most this many
MAX_COMPUTATION_ROWS = 300
#: the optimized module's coloured text is in the HTML only when it is this small (chars);
#: above, the HTML lists the computations with their line ranges and text/plain has the text
MAX_HLO_TEXT_HTML = 120_000
#: rows of the top-fusions table and bars of the overview
TOP_FUSIONS = 20
OVERVIEW_BARS = 24
#: edge shape labels are drawn only on diagrams this small (tooltips always)
EDGE_LABELS_UP_TO = 150
NODE_W, NODE_H = 210.0, 50.0
#: heat of a node (estimated bytes moved, log scale): one hue, rising opacity over the
#: theme's background, so the text on it keeps the theme's contrast (light and dark)
HEAT = "var(--jp-warn-color1,#f57c00)"
HEAT_OPACITY = (0.0, 0.08, 0.16, 0.24, 0.32, 0.40, 0.50)
KIND_STROKE = {
    "parameter": "var(--jp-brand-color1,#1976d2)",
    "fusion": "var(--jp-border-color1,#757575)",
    "library": "var(--jp-mirror-editor-keyword-color,#8250df)",
    "collective": "var(--jp-error-color1,#d32f2f)",
    "control": "var(--jp-success-color1,#388e3c)",
    "constant": "var(--jp-border-color2,#bdbdbd)",
    "plumbing": "var(--jp-border-color2,#bdbdbd)",
    "op": "var(--jp-border-color1,#757575)",
}
BG0 = "var(--jp-layout-color0,#ffffff)"

HLO_CSS = """
.jwb-hlo .jwb-sum{display:grid;grid-template-columns:max-content 1fr;gap:1px 12px;font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:12px;margin:4px 0 8px 0}
.jwb-hlo .jwb-sum dt{color:var(--jp-content-font-color2,#57606a)}
.jwb-hlo .jwb-sum dd{margin:0}
.jwb-hlo .nr{color:var(--jp-content-font-color1,#1f2328);font-style:italic}
.jwb-hlo .jwb-diagram{max-height:640px;overflow:auto;border:1px solid var(--jp-border-color2,#d0d7de);border-radius:4px}
.jwb-hlo svg g.n:hover rect{stroke-width:2.5}
.jwb-hlo .jwb-legend{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:11.5px;margin:4px 0;color:var(--jp-content-font-color2,#57606a)}
.jwb-hlo .jwb-txt .l.hit{background:var(--jp-search-selected-match-background-color,#fff2a8);color:var(--jp-search-selected-match-color,#000)}
.jwb-hlo .o{color:var(--jp-mirror-editor-keyword-color,#cf222e);font-weight:600}
.jwb-hlo .nm{color:var(--jp-mirror-editor-variable-color,#0550ae)}
.jwb-hlo .sh{color:var(--jp-mirror-editor-string-color,#0a7f6f)}
.jwb-hlo .md{color:var(--jp-content-font-color2,#57606a)}
.jwb-hlo .sl{color:var(--jp-mirror-editor-def-color,#8250df)}
.jwb-hlo .jwb-search{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:12px;margin:4px 0}
.jwb-hlo .jwb-search input{font-size:12px;padding:1px 4px;width:16em}
.jwb-hlo details.jwb-comp{margin-left:0}
"""

SEARCH_JS = """
(function(){var root=document.getElementById('%s');if(!root)return;
var box=root.querySelector('.jwb-search');if(!box)return;box.style.display='block';
var inp=box.querySelector('input'),cnt=box.querySelector('.cnt');
inp.addEventListener('input',function(){var q=inp.value.toLowerCase(),n=0,first=null;
root.querySelectorAll('.jwb-txt .l').forEach(function(l){var hit=q.length>1&&l.textContent.toLowerCase().indexOf(q)>=0;
l.classList.toggle('hit',hit);if(hit){n++;if(!first)first=l;var d=l.closest('details');while(d){d.open=true;d=d.parentElement.closest('details');}}});
cnt.textContent=q.length>1?(n+' matching lines'):'';if(first)first.scrollIntoView({block:'nearest'});});})();
"""


# -- small formatting helpers -----------------------------------------------------------
def _nr(value: str | None) -> str:
    return value if value is not None else '<span class="nr">not reported by this backend</span>'


def _src_label(loc: SourceLine) -> str:
    return source_label(loc.file, loc.line)[0]


def _truncate(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _heat(moved: int, peak: int) -> float:
    """Fill opacity of a node: log of its estimated bytes moved against the peak."""
    if moved <= 0 or peak <= 0:
        return HEAT_OPACITY[0]
    t = math.log1p(moved) / math.log1p(peak)
    return HEAT_OPACITY[min(len(HEAT_OPACITY) - 1, 1 + int(t * (len(HEAT_OPACITY) - 1)))]


def _table(head: list[str], rows: list[list[str]], attrs: str = "") -> str:
    """A table whose borders and padding are inline (they survive a sanitizer)."""
    th = "".join(f'<th style="{CELL_STYLE}">{h}</th>' for h in head)
    body = "".join(
        "<tr>" + "".join(f'<td style="{CELL_STYLE}">{c}</td>' for c in row) + "</tr>"
        for row in rows
    )
    return (
        f'<table class="jwb-tab"{attrs} style="{TABLE_STYLE}"><thead><tr>{th}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


# -- summary -----------------------------------------------------------------------------
def summary_html(rep: HloReport) -> str:
    rows: list[tuple[str, str]] = []
    kinds = ", ".join(rep.device_kinds) or "?"
    rows.append(
        (
            "backend",
            f"{esc(rep.backend)} · {esc(kinds)} · {rep.device_count} "
            f"device{'s' if rep.device_count != 1 else ''}",
        )
    )
    times = f"trace {fmt_seconds(rep.trace_s)} · lower {fmt_seconds(rep.lower_s)}"
    if rep.stage == "compiled":
        times += f" · XLA compile {fmt_seconds(rep.compile_s)}"
    rows.append(("time", times))
    if rep.stage == "compiled":
        rows.append(
            (
                "fusions",
                f"{rep.fusion_count if rep.fusion_count is not None else 'n/a'}"
                f" fusions · {rep.unfused_op_count if rep.unfused_op_count is not None else 'n/a'} "
                f"ops outside fusions",
            )
        )
        rows.append(
            (
                "op counts",
                f"{rep.stablehlo_op_count if rep.stablehlo_op_count is not None else 'n/a'}"
                f" StableHLO ops before optimization → "
                f"{rep.hlo_op_count if rep.hlo_op_count is not None else 'n/a'}"
                f" HLO instructions after (fused bodies included)",
            )
        )
        c = rep.cost
        rows.append(
            (
                "cost_analysis",
                _nr(
                    None
                    if not c.reported
                    else f"{fmt_count(c.flops, 'FLOP')} · {fmt_count(c.transcendentals)} "
                    f"transcendentals · {fmt_bytes(c.bytes_accessed)} accessed"
                ),
            )
        )
        m = rep.memory
        if m.reported:
            parts = [
                f"{label} {_nr(None if v is None else fmt_bytes(v))}"
                for label, v in (
                    ("arguments", m.argument_bytes),
                    ("outputs", m.output_bytes),
                    ("aliased", m.alias_bytes),
                    ("temporaries", m.temp_bytes),
                    ("generated code", m.generated_code_bytes),
                    ("peak", m.peak_bytes),
                )
            ]
            rows.append(("memory_analysis", " · ".join(parts)))
        else:
            rows.append(("memory_analysis", _nr(None)))
    else:
        n = rep.stablehlo_op_count
        rows.append(("op counts", f"{n if n is not None else 'n/a'} StableHLO ops"))
    body = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in rows)
    title = f"{esc(rep.label)} — {'optimized HLO' if rep.stage == 'compiled' else 'StableHLO'}"
    return (
        f'<div class="jwb-head"><b class="jwb-title">{title}</b></div>'
        f'<dl class="jwb-sum" style="font-size:12px;margin:4px 0 8px 0">{body}</dl>'
    )


def _groups_text(groups: list[list[int]] | None, raw: str) -> str:
    if groups is None:
        return raw or "—"
    if not groups:
        return "all devices"
    text = " ".join("{" + ",".join(map(str, g)) + "}" for g in groups)
    return _truncate(text, 120)


def collectives_html(rep: HloReport) -> str:
    if not rep.collectives:
        return ""
    rows = []
    for c in rep.collectives:
        where = esc(_src_label(c.source)) if c.source else '<span class="nr">no source</span>'
        groups = c.source_target_pairs if c.kind == "collective-permute" else c.replica_groups
        gtext = (
            " ".join(f"{a}→{b}" for a, b in c.source_target_pairs)
            if c.kind == "collective-permute" and c.source_target_pairs
            else _groups_text(groups, c.groups_text)
        )
        rows.append([esc(c.kind), esc(c.name), esc(c.shape), fmt_bytes(c.bytes), esc(gtext), where])
    table = _table(
        ["kind", "instruction", "shape", "bytes", "replica groups / pairs", "source"], rows
    )
    return (
        f"<details open><summary>{len(rep.collectives)} collective"
        f"{'s' if len(rep.collectives) != 1 else ''}</summary>{table}</details>"
    )


def top_fusions(rep: HloReport, n: int = TOP_FUSIONS) -> list[tuple[str, GraphNode]]:
    """The ``n`` heaviest work nodes (estimated bytes moved) of every graph: (graph, node)."""
    work = [
        (name, node)
        for name, g in rep.graphs.items()
        for node in g.nodes
        if node.kind in ("fusion", "library", "collective", "op") and node.bytes_moved > 0
    ]
    work.sort(key=lambda gn: -gn[1].bytes_moved)
    return work[:n]


def top_fusions_html(rep: HloReport) -> str:
    top = top_fusions(rep)
    if not top:
        return ""
    entry = next(iter(rep.graphs))
    rows = []
    for rank, (graph, node) in enumerate(top, 1):
        where = "; ".join(_src_label(src) for src in node.sources[:2]) or (
            "no source link (XLA-made)" if node.source_lost else ""
        )
        name = esc(node.id) + (
            "" if graph == entry else f' <span class="nr">in {esc(graph)}</span>'
        )
        rows.append(
            [
                str(rank),
                f"<code>{name}</code>",
                esc(_truncate(node.label, 60)),
                esc(node.shape),
                fmt_bytes(node.bytes_moved),
                esc(_truncate(_scope(node.op_name), 70)),
                esc(where),
            ]
        )
    fusions = sum(1 for g in rep.graphs.values() for nd in g.nodes if nd.kind == "fusion")
    table = _table(
        ["#", "instruction", "what", "result", "est. bytes moved", "op_name scope", "source"],
        rows,
        ' data-jwb="top-fusions"',
    )
    return (
        f"<details open><summary>the {len(top)} heaviest fusions and ops (of {fusions} "
        f"fusions) by "
        f"<b>estimated</b> bytes moved (operands read + result written, from shapes; "
        f"not a measurement)</summary>{table}</details>"
    )


# -- diagrams ----------------------------------------------------------------------------
def layout_graph(graph: DataflowGraph) -> Layout:
    return layered_layout(
        [n.id for n in graph.nodes],
        [(e.src, e.dst) for e in graph.edges],
        node_w=NODE_W,
        node_h=NODE_H,
    )


def _scope(op_name: str) -> str:
    """The op_name without its last component (the primitive): the user's functions and
    named scopes, e.g. ``jit(loss)/jvp(block)/dot_general`` -> ``jit(loss)/jvp(block)``."""
    return op_name.rstrip("/").rsplit("/", 1)[0] if "/" in op_name else op_name


def _node_tooltip(n: GraphNode) -> str:
    lines = [f"{n.id}: {n.label}", f"result {n.shape} ({fmt_bytes(n.bytes)})"]
    if n.bytes_moved:
        lines.append(f"estimated bytes moved {fmt_bytes(n.bytes_moved)} (from shapes)")
    if n.op_name and n.kind != "parameter":
        lines.append(f"op_name {n.op_name}")
    if n.primitives:
        lines.append("jaxpr primitives: " + ", ".join(n.primitives))
    if n.sources:
        lines.append("from: " + "; ".join(_src_label(s) for s in n.sources))
    elif n.source_lost:
        lines.append("no source link: added or rewritten by XLA")
    if n.called:
        lines.append("runs: " + ", ".join(n.called) + " (its diagram follows below)")
    return "\n".join(lines)


def diagram_svg(
    graph: DataflowGraph, layout: Layout, measured: dict[str, float] | None = None
) -> str:
    """The fusion diagram as inline SVG: no links (``<a>`` inside SVG throws in JupyterLab's
    and Notebook 7's HTML renderer), tooltips as ``<title>``, colours from the theme's
    variables set inline (the ``<style>`` block may be stripped).  With ``measured``
    (seconds by instruction, from a profile of this module) the fill is measured time,
    else estimated bytes moved."""
    peak = max((n.bytes_moved for n in graph.nodes), default=0)
    # measured time on the same log scale, in nanoseconds (integers like bytes)
    timed = (
        {n.id: int(measured.get(n.id, 0.0) * 1e9) for n in graph.nodes}
        if measured is not None
        else None
    )
    if timed is not None:
        peak = max(timed.values(), default=0)
    boxes = layout.boxes
    w, h = layout.node_w, layout.node_h
    parts: list[str] = []
    label_edges = len(graph.edges) <= EDGE_LABELS_UP_TO
    faint = {n.id for n in graph.nodes if n.kind in ("constant", "plumbing")}
    edges: list[str] = []
    for e in graph.edges:
        a, b = boxes[e.src], boxes[e.dst]
        x1, y1 = a.x + w / 2, a.y + h
        x2, y2 = b.x + w / 2, b.y
        dy = max(20.0, (y2 - y1) / 2)
        tip = f"{e.src} → {e.dst}: {e.shape} ({fmt_bytes(e.bytes)})"
        extra = ' opacity="0.35" stroke-dasharray="2 3"' if e.src in faint else ""
        edges.append(
            f'<path d="M{x1:.0f},{y1:.0f} C{x1:.0f},{y1 + dy:.0f} '
            f'{x2:.0f},{y2 - dy:.0f} {x2:.0f},{y2:.0f}"{extra}>'
            f"<title>{esc(tip)}</title></path>"
        )
        if label_edges:
            parts.append(
                f'<text font-size="10" x="{(x1 + x2) / 2 + 3:.0f}" '
                f'y="{(y1 + y2) / 2:.0f}">{esc(_truncate(e.shape, 28))}</text>'
            )
    for n in graph.nodes:
        bx = boxes[n.id]
        stroke = KIND_STROKE.get(n.kind, KIND_STROKE["op"])
        dash = ' stroke-dasharray="4 2"' if n.kind == "parameter" or n.source_lost else ""
        if n.source_lost:
            stroke = KIND_STROKE["collective"]
        sw = 2.5 if n.is_output else 1.2
        small = n.kind in ("constant", "plumbing")
        line1 = ("OUTPUT · " if n.is_output else "") + n.label
        line2 = f"{n.shape} · {fmt_bytes(n.bytes)}"
        if n.sources:
            more = f" +{len(n.sources) - 1}" if len(n.sources) > 1 else ""
            line3 = _src_label(n.sources[0]) + more
            if n.primitives:
                line3 += " · " + ", ".join(n.primitives[:4])
        elif n.source_lost:
            line3 = "⚠ no source link (XLA-made)"
        else:
            line3 = ""
        if n.called:
            line3 = "runs " + ", ".join(n.called) + " (below)"
        heat = 0.0 if small else _heat(timed[n.id] if timed is not None else n.bytes_moved, peak)
        rect = (
            f'<rect x="{bx.x:.0f}" y="{bx.y:.0f}" width="{w:.0f}" height="{h:.0f}" rx="5" '
            f'style="fill:{HEAT};fill-opacity:{heat};stroke:{stroke}" '
            f'stroke-width="{sw}"{dash}/>'
        )
        tx = bx.x + 6
        texts = (
            f'<text x="{tx:.0f}" y="{bx.y + 14:.0f}">{esc(_truncate(line1, 34))}</text>'
            f'<text font-size="10" x="{tx:.0f}" y="{bx.y + 28:.0f}">'
            f"{esc(_truncate(line2, 38))}</text>"
        )
        if line3:
            texts += (
                f'<text font-size="10" x="{tx:.0f}" y="{bx.y + 42:.0f}">'
                f"{esc(_truncate(line3, 38))}</text>"
            )
        tip = _node_tooltip(n)
        if measured is not None and n.id in measured:
            tip += f"\nmeasured {fmt_seconds(measured[n.id])} per call (%%jaxprof)"
        parts.append(
            f'<g class="n" data-id="{esc(n.id)}"><title>{esc(tip)}</title>{rect}{texts}</g>'
        )
    W, H = layout.width + 8, layout.height + 8
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W:.0f}" height="{H:.0f}" '
        f'viewBox="-4 -4 {W:.0f} {H:.0f}" role="img" font-size="11" '
        f'font-family="system-ui,sans-serif" style="background:{BG0};fill:{FG1}">'
        f'<g style="fill:none;stroke:{FG2}" stroke-width="1">{"".join(edges)}</g>'
        f"{''.join(parts)}</svg>"
    )


def overview_rows(rep: HloReport) -> list[tuple[str, int, int]]:
    """(group, estimated bytes moved, nodes) of the work nodes of every graph, heaviest first:
    grouped by op_name scope (the user's functions and named scopes) when the program has
    several, else by source line."""
    work = [n for g in rep.graphs.values() for n in g.nodes if n.bytes_moved > 0]
    scopes = {_scope(n.op_name) for n in work if n.op_name}
    lines = LineCache()

    def key(n: GraphNode) -> str:
        if len(scopes) >= 4:
            return _scope(n.op_name) or "(no op_name)"
        if not n.sources:
            return "(no source line)"
        src = n.sources[0]
        text = lines.get(src.file, src.line)
        return f"{_src_label(src)}: {text}" if text else _src_label(src)

    total: dict[str, list[int]] = {}
    for n in work:
        acc = total.setdefault(key(n), [0, 0])
        acc[0] += n.bytes_moved
        acc[1] += 1
    return sorted(((k, v[0], v[1]) for k, v in total.items()), key=lambda r: -r[1])


def overview_html(rep: HloReport) -> str:
    """A small picture of a big graph: estimated bytes moved per op_name scope (or source
    line), as a table with bars.  A few KB whatever the size of the graph; the bars are
    text-free SVG, so a sanitizer that strips SVG leaves the table of figures intact."""
    rows = overview_rows(rep)
    if not rows:
        return ""
    shown = rows[:OVERVIEW_BARS]
    peak = shown[0][1]
    body = []
    for group, moved, count in shown:
        width = max(1, round(240 * moved / peak))
        bar = (
            f'<svg width="{width}" height="10" aria-hidden="true"><rect width="{width}" '
            f'height="10" style="fill:{HEAT};fill-opacity:0.7"/></svg>'
        )
        body.append([esc(_truncate(group, 90)), bar, fmt_bytes(moved), str(count)])
    by = "op_name scope" if any("/" in r[0] for r in rows) else "source line"
    more = f" (top {len(shown)} of {len(rows)})" if len(rows) > len(shown) else ""
    table = _table([by, "", "est. bytes moved", "nodes"], body, ' data-jwb="overview"')
    return (
        f"<details open><summary>overview: <b>estimated</b> bytes moved by {by}{more}"
        f"</summary>{table}</details>"
    )


def _legend(rep: HloReport | None = None) -> str:
    sw = "".join(
        f'<span style="display:inline-block;width:14px;height:10px;'
        f'vertical-align:middle;background:{HEAT};opacity:{o}"></span>'
        for o in HEAT_OPACITY[1:]
    )
    if rep is not None and rep.measured is not None:
        fill = (
            f"Fill: <b>measured</b> device time per call (%%jaxprof of this module: "
            f"{esc(rep.measured_note)}), light → heavy {sw}. "
        )
    else:
        fill = (
            "Fill: <b>estimated</b> bytes moved (operands read + result written, from "
            f"shapes; not a measurement), light → heavy {sw}. "
        )
    return (
        '<div class="jwb-legend">'
        + fill
        + "Border: dashed blue = parameter, thick = output, purple = library call, "
        "red = collective, green = control flow (its body is drawn below), "
        "red dashed = no source link. Hover a node or edge for details.</div>"
    )


def diagrams_html(rep: HloReport, layouts: dict[str, Layout]) -> str:
    """Full diagrams for the graphs small enough to draw; for a big entry graph an overview
    picture instead.  Sub-computations (while/cond/call bodies) are listed by name."""
    if not rep.graphs:
        return ""
    out = []
    names = list(rep.graphs)
    if len(names) > 1:
        items = "".join(
            f"<li><code>{esc(n)}</code> ({len(rep.graphs[n].nodes)} nodes)</li>" for n in names[1:]
        )
        out.append(
            f'<div class="jwb-legend">Control-flow bodies (while/cond/call), each '
            f'drawn below: <ul style="margin:2px 0">{items}</ul></div>'
        )
    if any(name in layouts for name in names):
        out.insert(
            0,
            f"<div {STYLED_ONLY}>{_legend(rep)}</div>"
            f"<div {UNSTYLED_ONLY}><i>The diagrams are hidden: this page has no "
            f"styles (an untrusted notebook, whose styles JupyterLab strips). Trust "
            f"the notebook or install the jax-workbench extension to see them; the "
            f"heaviest fusions are listed above.</i></div>",
        )
    for i, (name, graph) in enumerate(rep.graphs.items()):
        title = (
            f"fusion diagram of the entry computation {name}"
            if i == 0
            else f"control-flow body {name}"
        )
        count = f"{len(graph.nodes)} nodes, {graph.fusion_count} fusions"
        if name in layouts:
            # hidden unless our stylesheet is there: stripped by a sanitizer, the SVG
            # would turn into loose text
            inner = (
                f'<div class="jwb-diagram jwb-styled" style="display:none;'
                f'max-height:640px;overflow:auto;border:1px solid {NEUTRAL_BORDER}">'
                f"{diagram_svg(graph, layouts[name], rep.measured)}</div>"
            )
        else:
            inner = (
                f'<div class="jwb-note">{len(graph.nodes)} nodes: too many to draw here '
                f"(the JupyterLab extension draws the interactive graph from the JSON "
                f"output); the overview above sums them.</div>"
            )
        out.append(
            f"<details{' open' if i == 0 else ''}>"
            f"<summary>{esc(title)} ({count})</summary>{inner}</details>"
        )
    if any(name not in layouts for name in names):
        out.insert(0, overview_html(rep))
    return "".join(out)


def graph_layouts(rep: HloReport) -> dict[str, Layout]:
    """Layouts of the graphs the HTML draws in full (up to :data:`MAX_DIAGRAM_NODES`)."""
    return {
        name: layout_graph(g) for name, g in rep.graphs.items() if len(g.nodes) <= MAX_DIAGRAM_NODES
    }


# -- text views --------------------------------------------------------------------------
_REF_RE = re.compile(r"%[\w.\-]+")


def _strip_attr(text: str, key: str, value: str) -> str:
    return text.replace(f", {key}={value}", "", 1)


def _instruction_html(raw: str, ins: HloInstruction) -> str:
    text = raw
    for key in ("metadata", "backend_config", "frontend_attributes"):
        if key in ins.attrs:
            text = _strip_attr(text, key, ins.attrs[key])
    head = f"{' ' * (len(raw) - len(raw.lstrip()))}{'ROOT ' if ins.is_root else ''}"
    marker = f"{ins.opcode}("
    at = text.find(marker, text.find("="))
    rest = text[at + len(marker) :] if at >= 0 else ""
    rest_html = _REF_RE.sub(lambda m: f'<span class="nm">{m.group()}</span>', esc(rest))
    note = []
    if ins.op_name and ins.opcode != "parameter":
        note.append(esc(ins.op_name))
    if ins.source is not None:
        note.append(f'<span class="sl">{esc(_src_label(ins.source))}</span>')
    tail = f'  <span class="md"># {" · ".join(note)}</span>' if note else ""
    return (
        f'{head}<span class="nm">%{esc(ins.name)}</span> = <span class="sh">'
        f'{esc(ins.shape_text)}</span> <span class="o">{esc(ins.opcode)}</span>('
        f"{rest_html}{tail}"
    )


def hlo_text_html(rep: HloReport) -> str:
    lines = rep.text.splitlines()
    if rep.module is None:
        return plain_text_html(rep.text)
    by_line: dict[int, HloInstruction] = {i.line_no: i for i in rep.module.instructions()}
    # the entry and control-flow bodies first: that is where a reader starts; the many
    # small fused/applied computations are grouped in one closed block after them
    first = min((c.first_line for c in rep.module.computations), default=1)
    head = "\n".join(esc(line) for line in lines[: first - 1] if line.strip())
    out = (
        [
            f'<details class="jwb-comp"><summary>module header and source tables</summary>'
            f'<pre class="jwb-txt" style="{PRE_STYLE}">{head}</pre></details>'
        ]
        if head
        else []
    )
    main = [c for c in rep.module.computations if c.role in ("entry", "control")]
    main.sort(key=lambda c: not c.is_entry)
    rest = [c for c in rep.module.computations if c.role not in ("entry", "control")]
    out += [_computation_html(c, lines, by_line) for c in main]
    if rest:
        inner = "".join(_computation_html(c, lines, by_line) for c in rest)
        out.append(
            f'<details class="jwb-comp"><summary>{len(rest)} fused and applied '
            f'computations</summary><div style="margin-left:1.2em">{inner}</div></details>'
        )
    return "".join(out)


def _computation_html(
    comp: HloComputation, lines: list[str], by_line: dict[int, HloInstruction]
) -> str:
    rows = []
    for no in range(comp.first_line, comp.last_line + 1):
        raw = lines[no - 1] if 0 < no <= len(lines) else ""
        ins = by_line.get(no)
        body = _instruction_html(raw, ins) if ins is not None else esc(raw)
        rows.append(f'<span class="l">{body}</span>')
    role = {
        "entry": "entry",
        "fused": "fused computation",
        "control": "control-flow body",
        "applied": "applied computation",
    }.get(comp.role, "computation")
    open_ = " open" if comp.is_entry or comp.role == "control" else ""
    return (
        f'<details class="jwb-comp"{open_}><summary>{esc(comp.name)} ({role}, '
        f"{len(comp.instructions)} instructions)</summary>"
        f'<pre class="jwb-txt" style="{PRE_STYLE}">{chr(10).join(rows)}</pre></details>'
    )


_LOC_TAIL_RE = re.compile(r"\s*loc\(#loc\d*\)\s*$")


def stablehlo_text_html(rep: HloReport) -> str:
    sh = rep.stablehlo
    if sh is None:
        return plain_text_html(rep.text)
    ops = {o.line_no: o for o in sh.ops}
    rows = []
    lines = [
        (no, raw) for no, raw in enumerate(sh.text.splitlines(), 1) if not raw.startswith("#loc")
    ]  # location table: resolved into the notes below
    used = 0
    for no, raw in lines[:MAX_STABLEHLO_ROWS]:
        if used > HTML_MAX_BYTES:
            break
        text = esc(_LOC_TAIL_RE.sub("", raw))
        op = ops.get(no)
        body = text.replace(op.op, f'<span class="o">{op.op}</span>', 1) if op is not None else text
        if op is not None and (op.source or op.op_name):
            note = [esc(op.op_name)] if op.op_name else []
            if op.source:
                note.append(f'<span class="sl">{esc(_src_label(op.source))}</span>')
            body += f'  <span class="md"># {" · ".join(note)}</span>'
        rows.append(f'<span class="l">{body}</span>')
        used += len(rows[-1]) + 1
    elided = ""
    if len(lines) > len(rows):
        elided = (
            f'<div class="jwb-note">Showing the first {len(rows)} of {len(lines)} '
            f"lines; the whole module is <code>.text</code> of the returned object.</div>"
        )
    return f'<pre class="jwb-txt" style="{PRE_STYLE}">{chr(10).join(rows)}</pre>{elided}'


def plain_text_html(text: str) -> str:
    """``text`` in a ``<pre>``, within the bound of ``text/plain`` (and its closing line)."""
    shown = bounded(text, max_bytes=HTML_MAX_BYTES)[0]
    return f'<pre class="jwb-txt" style="{PRE_STYLE}">{esc(shown)}</pre>'


def computations_html(rep: HloReport) -> str:
    """The module's computations with their line ranges in text/plain, folded: what the HTML
    shows instead of the text of a big module."""
    if rep.module is None:
        return ""
    role = {
        "entry": "entry",
        "fused": "fused",
        "control": "control-flow body",
        "applied": "applied",
    }
    comps = sorted(
        rep.module.computations, key=lambda c: (c.role not in ("entry", "control"), c.first_line)
    )
    shown = comps[:MAX_COMPUTATION_ROWS]
    width = max(len(c.name) for c in shown) if shown else 0
    lines = [
        f"{c.name:<{width}}  lines {c.first_line}–{c.last_line}  "
        f"{len(c.instructions)} instructions, {role.get(c.role, 'computation')}"
        for c in shown
    ]
    if len(comps) > len(shown):
        lines.append(f"… and {len(comps) - len(shown)} more (fused and applied computations)")
    return (
        f"<details><summary>{len(comps)} computations, with their lines in the module text "
        f'(<code>.text</code>)</summary><pre class="jwb-comps" style="{PRE_STYLE}">'
        f"{esc(chr(10).join(lines))}</pre></details>"
    )


# -- the bundle --------------------------------------------------------------------------
def hlo_html(rep: HloReport, layouts: dict[str, Layout] | None = None) -> str:
    """The HTML fallback (nbconvert, VS Code, GitHub, JupyterLab without the extension).

    Readable with its ``<style>`` and ``<script>`` stripped (a sanitizer's doing): tables
    carry their borders inline, code is in ``<pre>``, colours are the theme's variables.
    Small modules get the coloured text and full diagrams; a big one (the 24-layer model:
    1 MB of text, 1,200 nodes) gets the summary, the heaviest fusions, an overview picture
    and the folded list of computations, and points at text/plain and the extension.
    """
    root = new_id()
    parts = [summary_html(rep)]
    if rep.parse_error:
        parts.append(
            f'<div class="jwb-note">The HLO text could not be fully read '
            f"({esc(rep.parse_error)}); showing the text only.</div>"
        )
    elif rep.module is not None and rep.module.problems:
        parts.append(
            f'<div class="jwb-note">{len(rep.module.problems)} line(s) of the module '
            f"were not understood and are shown as text only (first: "
            f"{esc(rep.module.problems[0])}).</div>"
        )
    parts.append(collectives_html(rep))
    if rep.stage == "compiled" and rep.fusion and rep.module is not None:
        parts.append(top_fusions_html(rep))
        parts.append(diagrams_html(rep, layouts if layouts is not None else graph_layouts(rep)))
    what = "optimized HLO" if rep.stage == "compiled" else "StableHLO (as lowered)"
    big = rep.stage == "compiled" and rep.module is not None and len(rep.text) > MAX_HLO_TEXT_HTML
    script = ""
    if big:
        size = text_size(rep.text)
        parts.append(computations_html(rep))
        parts.append(
            f'<div class="jwb-note">The {esc(what)} text ({fmt_bytes(size.bytes)}, '
            f"{size.lines:,} lines) is <code>.text</code> of the returned object; the "
            f"plain-text output saves its first {size.shown_lines:,} lines, and the "
            f"JupyterLab extension shows the interactive graph.</div>"
        )
    else:
        text = hlo_text_html(rep) if rep.stage == "compiled" else stablehlo_text_html(rep)
        search = (
            '<div class="jwb-search" style="display:none">search the text: '
            '<input type="search" placeholder="op, shape, name or line"> '
            '<span class="cnt"></span></div>'
        )
        parts.append(f"<details open><summary>{esc(what)} text</summary>{search}{text}</details>")
        script = f"<script>{SEARCH_JS % root}</script>"
    return (
        f'<div class="jwb jwb-hlo" id="{root}" style="color:{FG1};max-width:100%;'
        f'overflow-x:auto">{style_block()}<style>{HLO_CSS}</style>'
        f"{''.join(parts)}{script}</div>"
    )


#: payload fields packed (gzip + base64) when together they serialise over 64 KiB
PACKED_FIELDS = ("graphs", "module")


def hlo_data(rep: HloReport, **_options: Any) -> dict[str, Any]:
    """The payload's body: the report as data (docs/mime-hlo.md); graphs and module packed
    when big.  No layout: the extension lays the graphs out itself.

    ``text_size`` tells the view how much of the module text ``text/plain`` saves.  When it
    is cut (a big module), the computations that have no graph (fused and applied bodies:
    most of a big module's instructions, which the view never lists) keep their name, role,
    lines and instruction count but not their instruction rows: ``.text`` and ``.report``
    have them.  That keeps a 24-block transformer's gradient under a megabyte saved.
    """
    size = text_size(rep.text)
    rec = rep.to_dict()
    module = rec.get("module")
    if module is not None:
        for comp in module["computations"]:
            comp["size"] = len(comp["instructions"])
            if size.cut and comp["name"] not in rec["graphs"]:
                del comp["instructions"]
    rec["text_size"] = size.to_dict()
    rec["cells"] = cells_of(_files_of(rep))
    return pack(rec, PACKED_FIELDS)


def _files_of(rep: HloReport) -> list[str]:
    files: list[str] = []
    for g in rep.graphs.values():
        for n in g.nodes:
            files.extend(s.file for s in n.sources)
    files.extend(c.source.file for c in rep.collectives if c.source is not None)
    if rep.module is not None:
        files.extend(i.source.file for i in rep.module.instructions() if i.source is not None)
    return files


def hlo_record(rep: HloReport, layouts: dict[str, Layout] | None = None) -> dict[str, Any]:
    """The whole JSON payload (versioned); see docs/mime-hlo.md.  ``layouts`` is accepted for
    callers of version 1 and not used: the payload carries no layout since version 2."""
    return envelope(HLO_VIEW.kind, HLO_VIEW.version, hlo_data(rep))


def _hlo_text(rep: HloReport) -> str:
    return rep.text


def _hlo_html(rep: HloReport, layouts: dict[str, Layout] | None = None) -> str:
    return hlo_html(rep, layouts)


#: ``%%hlo``, ``workbench.hlo``: text is the stage's raw text; a view bug degrades to it
HLO_VIEW: View[HloReport] = View(
    kind="hlo",
    version=SCHEMA_VERSION,
    text=_hlo_text,
    html=_hlo_html,
    data=hlo_data,
    degrade=True,
    record_name="report",
)
HLO_MIME = HLO_VIEW.mime


def hlo_bundle(rep: HloReport, text_only: bool = False) -> dict[str, Any]:
    return HLO_VIEW.bundle(rep, text_only=text_only)


def hlo_display(rep: HloReport, text_only: bool = False) -> Display[HloReport]:
    """What ``%%hlo`` and :func:`workbench.hlo` return (``.report`` is the record)."""
    return Display(rep, HLO_VIEW, text_only=text_only)


__all__ = [
    "HLO_MIME",
    "HLO_VIEW",
    "MAX_STABLEHLO_ROWS",
    "diagram_svg",
    "hlo_bundle",
    "hlo_display",
    "hlo_html",
    "hlo_record",
    "layout_graph",
]

"""HLO views: pure functions from an :class:`~workbench.engine.hlo.report.HloReport` to a bundle.

- ``text/plain``: the stage's raw text exactly as JAX prints it;
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
from workbench.views._envelope import envelope
from workbench.views._format import fmt_bytes, fmt_count, fmt_seconds
from workbench.views._html import esc, new_id, source_label, style_block
from workbench.views.dag_layout import Layout, layered_layout
from workbench.views.display import Display, View

#: diagrams above this many nodes are not drawn as SVG (the JSON still has the graph)
MAX_DIAGRAM_NODES = 8000
#: Size bound of the StableHLO text view (a 12,000-op function drew 10 MB): at most this
#: many lines are rendered as HTML, the rest are counted in a note (``text/plain`` and
#: ``.report.text`` keep the whole module), as the jaxpr view does with its equations.
MAX_STABLEHLO_ROWS = 3000
#: edge shape labels are drawn only on diagrams this small (tooltips always)
EDGE_LABELS_UP_TO = 150
NODE_W, NODE_H = 210.0, 50.0
PALETTE = ("#f6f8fa", "#fff4dc", "#ffe6b5", "#ffd592", "#ffc07a", "#ffa873", "#fb8f72")
KIND_STROKE = {"parameter": "#0969da", "fusion": "#57606a", "library": "#8250df",
               "collective": "#cf222e", "control": "#1a7f37", "constant": "#afb8c1",
               "plumbing": "#afb8c1", "op": "#57606a"}

HLO_CSS = """
.jwb-hlo .jwb-sum{display:grid;grid-template-columns:max-content 1fr;gap:1px 12px;font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:12px;margin:4px 0 8px 0}
.jwb-hlo .jwb-sum dt{color:var(--jp-content-font-color2,#57606a)}
.jwb-hlo .jwb-sum dd{margin:0}
.jwb-hlo .nr{color:var(--jp-content-font-color3,#8c959f);font-style:italic}
.jwb-hlo table.jwb-tab{border-collapse:collapse;font-size:12px;margin:4px 0 8px 0}
.jwb-hlo table.jwb-tab td,.jwb-hlo table.jwb-tab th{border-bottom:1px solid var(--jp-border-color2,#d0d7de);padding:2px 8px;text-align:left;vertical-align:top}
.jwb-hlo .jwb-diagram{max-height:640px;overflow:auto;border:1px solid var(--jp-border-color2,#d0d7de);border-radius:4px;background:#fff}
.jwb-hlo svg text{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:11px;fill:#1f2328}
.jwb-hlo svg text.s{fill:#57606a;font-size:10px}
.jwb-hlo svg text.c{fill:#8250df;font-size:10px}
.jwb-hlo svg text.lost{fill:#cf222e;font-size:10px}
.jwb-hlo svg path.e{fill:none;stroke:#8c959f;stroke-width:1;opacity:.7}
.jwb-hlo svg path.e.f{opacity:.25;stroke-dasharray:2 3}
.jwb-hlo svg g.n:hover rect{stroke-width:2.5}
.jwb-hlo .jwb-legend{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:11.5px;margin:4px 0;color:var(--jp-content-font-color2,#57606a)}
.jwb-hlo .jwb-legend i{display:inline-block;width:14px;height:10px;border:1px solid #d0d7de;vertical-align:middle;margin-right:1px}
.jwb-hlo .jwb-txt{white-space:pre;font-size:12px}
.jwb-hlo .jwb-txt .l.hit{background:#fff2a8;color:#000}
.jwb-hlo .o{color:#cf222e;font-weight:600}.jwb-hlo .nm{color:#0550ae}.jwb-hlo .sh{color:#0a7f6f}
.jwb-hlo .md{color:var(--jp-content-font-color3,#8c959f)}.jwb-hlo .sl{color:#8250df}
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


def _fill(moved: int, peak: int) -> str:
    if moved <= 0 or peak <= 0:
        return PALETTE[0]
    t = math.log1p(moved) / math.log1p(peak)
    return PALETTE[min(len(PALETTE) - 1, 1 + int(t * (len(PALETTE) - 1)))]


# -- summary -----------------------------------------------------------------------------
def summary_html(rep: HloReport) -> str:
    rows: list[tuple[str, str]] = []
    kinds = ", ".join(rep.device_kinds) or "?"
    rows.append(("backend", f"{esc(rep.backend)} · {esc(kinds)} · {rep.device_count} "
                            f"device{'s' if rep.device_count != 1 else ''}"))
    times = f"trace {fmt_seconds(rep.trace_s)} · lower {fmt_seconds(rep.lower_s)}"
    if rep.stage == "compiled":
        times += f" · XLA compile {fmt_seconds(rep.compile_s)}"
    rows.append(("time", times))
    if rep.stage == "compiled":
        rows.append(("fusions", f"{rep.fusion_count if rep.fusion_count is not None else 'n/a'}"
                                f" fusions · {rep.unfused_op_count if rep.unfused_op_count is not None else 'n/a'} "
                                f"ops outside fusions"))
        rows.append(("op counts", f"{rep.stablehlo_op_count if rep.stablehlo_op_count is not None else 'n/a'}"
                                  f" StableHLO ops before optimization → "
                                  f"{rep.hlo_op_count if rep.hlo_op_count is not None else 'n/a'}"
                                  f" HLO instructions after (fused bodies included)"))
        c = rep.cost
        rows.append(("cost_analysis", _nr(None if not c.reported else
                     f"{fmt_count(c.flops, 'FLOP')} · {fmt_count(c.transcendentals)} "
                     f"transcendentals · {fmt_bytes(c.bytes_accessed)} accessed")))
        m = rep.memory
        if m.reported:
            parts = [f"{label} {_nr(None if v is None else fmt_bytes(v))}" for label, v in (
                ("arguments", m.argument_bytes), ("outputs", m.output_bytes),
                ("aliased", m.alias_bytes), ("temporaries", m.temp_bytes),
                ("generated code", m.generated_code_bytes), ("peak", m.peak_bytes))]
            rows.append(("memory_analysis", " · ".join(parts)))
        else:
            rows.append(("memory_analysis", _nr(None)))
    else:
        n = rep.stablehlo_op_count
        rows.append(("op counts", f"{n if n is not None else 'n/a'} StableHLO ops"))
    body = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in rows)
    title = f"{esc(rep.label)} — {'optimized HLO' if rep.stage == 'compiled' else 'StableHLO'}"
    return (f'<div class="jwb-head"><span class="jwb-title">{title}</span></div>'
            f'<dl class="jwb-sum">{body}</dl>')


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
        gtext = (" ".join(f"{a}→{b}" for a, b in c.source_target_pairs)
                 if c.kind == "collective-permute" and c.source_target_pairs
                 else _groups_text(groups, c.groups_text))
        rows.append(f"<tr><td>{esc(c.kind)}</td><td>{esc(c.name)}</td><td>{esc(c.shape)}</td>"
                    f"<td>{fmt_bytes(c.bytes)}</td><td>{esc(gtext)}</td><td>{where}</td></tr>")
    return (f'<details open><summary>{len(rep.collectives)} collective'
            f'{"s" if len(rep.collectives) != 1 else ""}</summary>'
            '<table class="jwb-tab"><tr><th>kind</th><th>instruction</th><th>shape</th>'
            '<th>bytes</th><th>replica groups / pairs</th><th>source</th></tr>'
            f'{"".join(rows)}</table></details>')


# -- diagrams ----------------------------------------------------------------------------
def layout_graph(graph: DataflowGraph) -> Layout:
    return layered_layout([n.id for n in graph.nodes], [(e.src, e.dst) for e in graph.edges],
                          node_w=NODE_W, node_h=NODE_H)


def _node_tooltip(n: GraphNode) -> str:
    lines = [f"{n.id}: {n.label}", f"result {n.shape} ({fmt_bytes(n.bytes)})"]
    if n.bytes_moved:
        lines.append(f"estimated bytes moved {fmt_bytes(n.bytes_moved)} (from shapes)")
    if n.primitives:
        lines.append("jaxpr primitives: " + ", ".join(n.primitives))
    if n.sources:
        lines.append("from: " + "; ".join(_src_label(s) for s in n.sources))
    elif n.source_lost:
        lines.append("no source link: added or rewritten by XLA")
    if n.called:
        lines.append("calls: " + ", ".join(n.called))
    return "\n".join(lines)


def diagram_svg(graph: DataflowGraph, layout: Layout, anchors: dict[str, str]) -> str:
    peak = max((n.bytes_moved for n in graph.nodes), default=0)
    boxes = layout.boxes
    w, h = layout.node_w, layout.node_h
    parts: list[str] = []
    label_edges = len(graph.edges) <= EDGE_LABELS_UP_TO
    faint = {n.id for n in graph.nodes if n.kind in ("constant", "plumbing")}
    for e in graph.edges:
        a, b = boxes[e.src], boxes[e.dst]
        x1, y1 = a.x + w / 2, a.y + h
        x2, y2 = b.x + w / 2, b.y
        dy = max(20.0, (y2 - y1) / 2)
        tip = f"{e.src} → {e.dst}: {e.shape} ({fmt_bytes(e.bytes)})"
        cls = "e f" if e.src in faint else "e"
        parts.append(f'<path class="{cls}" d="M{x1:.0f},{y1:.0f} C{x1:.0f},{y1 + dy:.0f} '
                     f'{x2:.0f},{y2 - dy:.0f} {x2:.0f},{y2:.0f}"><title>{esc(tip)}</title></path>')
        if label_edges:
            parts.append(f'<text class="s" x="{(x1 + x2) / 2 + 3:.0f}" y="{(y1 + y2) / 2:.0f}">'
                         f'{esc(_truncate(e.shape, 28))}</text>')
    for n in graph.nodes:
        bx = boxes[n.id]
        stroke = KIND_STROKE.get(n.kind, "#57606a")
        dash = ' stroke-dasharray="4 2"' if n.kind == "parameter" or n.source_lost else ""
        if n.source_lost:
            stroke = "#cf222e"
        sw = 2.5 if n.is_output else 1.2
        small = n.kind in ("constant", "plumbing")
        line1 = ("OUTPUT · " if n.is_output else "") + n.label
        line2 = f"{n.shape} · {fmt_bytes(n.bytes)}"
        if n.sources:
            more = f" +{len(n.sources) - 1}" if len(n.sources) > 1 else ""
            line3, cls3 = _src_label(n.sources[0]) + more, "c"
            if n.primitives:
                line3 += " · " + ", ".join(n.primitives[:4])
        elif n.source_lost:
            line3, cls3 = "⚠ no source link (XLA-made)", "lost"
        else:
            line3, cls3 = "", "s"
        fill = "#ffffff" if small else _fill(n.bytes_moved, peak)
        rect = (f'<rect x="{bx.x:.0f}" y="{bx.y:.0f}" width="{w:.0f}" height="{h:.0f}" rx="5" '
                f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"{dash}/>')
        tx = bx.x + 6
        texts = (f'<text x="{tx:.0f}" y="{bx.y + 14:.0f}">{esc(_truncate(line1, 34))}</text>'
                 f'<text class="s" x="{tx:.0f}" y="{bx.y + 28:.0f}">{esc(_truncate(line2, 38))}</text>')
        if line3:
            texts += (f'<text class="{cls3}" x="{tx:.0f}" y="{bx.y + 42:.0f}">'
                      f'{esc(_truncate(line3, 38))}</text>')
        g = (f'<g class="n" data-id="{esc(n.id)}"><title>{esc(_node_tooltip(n))}</title>'
             f'{rect}{texts}</g>')
        target = next((anchors[c] for c in n.called if c in anchors), None)
        if target:
            g = f'<a href="#{target}">{g}</a>'
        parts.append(g)
    W, H = layout.width + 8, layout.height + 8
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W:.0f}" height="{H:.0f}" '
            f'viewBox="-4 -4 {W:.0f} {H:.0f}" role="img">{"".join(parts)}</svg>')


def _legend() -> str:
    sw = "".join(f'<i style="background:{c}"></i>' for c in PALETTE[1:])
    return ('<div class="jwb-legend">Fill: <b>estimated</b> bytes moved (operands read + result '
            f'written, from shapes; not a measurement), light → heavy {sw}. '
            'Border: blue dashed = parameter, thick = output, purple = library call, '
            'red = collective, green = control flow (click to open its body), '
            'red dashed = no source link. Hover a node or edge for details.</div>')


def diagrams_html(rep: HloReport, layouts: dict[str, Layout]) -> str:
    if not rep.graphs:
        return ""
    root = new_id("jwb-d")
    anchors = {name: f"{root}-{i}" for i, name in enumerate(rep.graphs)}
    out = [_legend()]
    for i, (name, graph) in enumerate(rep.graphs.items()):
        title = (f"fusion diagram of the entry computation {name}" if i == 0 else
                 f"control-flow body {name}")
        count = f"{len(graph.nodes)} nodes, {graph.fusion_count} fusions"
        if name not in layouts:
            inner = (f'<div class="jwb-note">{len(graph.nodes)} nodes: too many to draw here; '
                     f'the JSON output carries the whole graph.</div>')
        else:
            inner = f'<div class="jwb-diagram">{diagram_svg(graph, layouts[name], anchors)}</div>'
        out.append(f'<details id="{anchors[name]}"{" open" if i == 0 else ""}>'
                   f"<summary>{esc(title)} ({count})</summary>{inner}</details>")
    return "".join(out)


def graph_layouts(rep: HloReport) -> dict[str, Layout]:
    return {name: layout_graph(g) for name, g in rep.graphs.items()
            if len(g.nodes) <= MAX_DIAGRAM_NODES}


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
    rest = text[at + len(marker):] if at >= 0 else ""
    rest_html = _REF_RE.sub(lambda m: f'<span class="nm">{m.group()}</span>', esc(rest))
    note = []
    if ins.op_name and ins.opcode != "parameter":
        note.append(esc(ins.op_name))
    if ins.source is not None:
        note.append(f'<span class="sl">{esc(_src_label(ins.source))}</span>')
    tail = f'  <span class="md"># {" · ".join(note)}</span>' if note else ""
    return (f'{head}<span class="nm">%{esc(ins.name)}</span> = <span class="sh">'
            f'{esc(ins.shape_text)}</span> <span class="o">{esc(ins.opcode)}</span>('
            f"{rest_html}{tail}")


def hlo_text_html(rep: HloReport) -> str:
    lines = rep.text.splitlines()
    if rep.module is None:
        return f'<div class="jwb-txt">{esc(rep.text)}</div>'
    by_line: dict[int, HloInstruction] = {i.line_no: i for i in rep.module.instructions()}
    # the entry and control-flow bodies first: that is where a reader starts; the many
    # small fused/applied computations are grouped in one closed block after them
    first = min((c.first_line for c in rep.module.computations), default=1)
    head = "\n".join(esc(line) for line in lines[:first - 1] if line.strip())
    out = [f'<details class="jwb-comp"><summary>module header and source tables</summary>'
           f'<div class="jwb-txt">{head}</div></details>'] if head else []
    main = [c for c in rep.module.computations if c.role in ("entry", "control")]
    main.sort(key=lambda c: not c.is_entry)
    rest = [c for c in rep.module.computations if c.role not in ("entry", "control")]
    out += [_computation_html(c, lines, by_line) for c in main]
    if rest:
        inner = "".join(_computation_html(c, lines, by_line) for c in rest)
        out.append(f'<details class="jwb-comp"><summary>{len(rest)} fused and applied '
                   f'computations</summary><div style="margin-left:1.2em">{inner}</div></details>')
    return "".join(out)


def _computation_html(comp: HloComputation, lines: list[str],
                      by_line: dict[int, HloInstruction]) -> str:
    rows = []
    for no in range(comp.first_line, comp.last_line + 1):
        raw = lines[no - 1] if 0 < no <= len(lines) else ""
        ins = by_line.get(no)
        body = _instruction_html(raw, ins) if ins is not None else esc(raw)
        rows.append(f'<span class="l">{body}</span>')
    role = {"entry": "entry", "fused": "fused computation", "control": "control-flow body",
            "applied": "applied computation"}.get(comp.role, "computation")
    open_ = " open" if comp.is_entry or comp.role == "control" else ""
    return (f'<details class="jwb-comp"{open_}><summary>{esc(comp.name)} ({role}, '
            f'{len(comp.instructions)} instructions)</summary>'
            f'<div class="jwb-txt">{chr(10).join(rows)}</div></details>')


_LOC_TAIL_RE = re.compile(r"\s*loc\(#loc\d*\)\s*$")


def stablehlo_text_html(rep: HloReport) -> str:
    sh = rep.stablehlo
    if sh is None:
        return f'<div class="jwb-txt">{esc(rep.text)}</div>'
    ops = {o.line_no: o for o in sh.ops}
    rows = []
    lines = [(no, raw) for no, raw in enumerate(sh.text.splitlines(), 1)
             if not raw.startswith("#loc")]  # location table: resolved into the notes below
    for no, raw in lines[:MAX_STABLEHLO_ROWS]:
        text = esc(_LOC_TAIL_RE.sub("", raw))
        op = ops.get(no)
        body = (text.replace(op.op, f'<span class="o">{op.op}</span>', 1) if op is not None
                else text)
        if op is not None and (op.source or op.op_name):
            note = [esc(op.op_name)] if op.op_name else []
            if op.source:
                note.append(f'<span class="sl">{esc(_src_label(op.source))}</span>')
            body += f'  <span class="md"># {" · ".join(note)}</span>'
        rows.append(f'<span class="l">{body}</span>')
    elided = ""
    if len(lines) > MAX_STABLEHLO_ROWS:
        elided = (f'<div class="jwb-note">Showing the first {MAX_STABLEHLO_ROWS} of {len(lines)} '
                  f'lines; the whole module is in the plain-text output and '
                  f'<code>.report.text</code>.</div>')
    return f'<div class="jwb-txt">{chr(10).join(rows)}</div>{elided}'


# -- the bundle --------------------------------------------------------------------------
def hlo_html(rep: HloReport, layouts: dict[str, Layout] | None = None) -> str:
    root = new_id()
    parts = [summary_html(rep)]
    if rep.parse_error:
        parts.append(f'<div class="jwb-note">The HLO text could not be fully read '
                     f'({esc(rep.parse_error)}); showing the text only.</div>')
    elif rep.module is not None and rep.module.problems:
        parts.append(f'<div class="jwb-note">{len(rep.module.problems)} line(s) of the module '
                     f'were not understood and are shown as text only (first: '
                     f'{esc(rep.module.problems[0])}).</div>')
    parts.append(collectives_html(rep))
    if rep.stage == "compiled" and rep.fusion and rep.module is not None:
        parts.append(diagrams_html(rep, layouts if layouts is not None else graph_layouts(rep)))
    text = hlo_text_html(rep) if rep.stage == "compiled" else stablehlo_text_html(rep)
    what = "optimized HLO" if rep.stage == "compiled" else "StableHLO (as lowered)"
    search = ('<div class="jwb-search" style="display:none">search the text: '
              '<input type="search" placeholder="op, shape, name or line"> '
              '<span class="cnt"></span></div>')
    parts.append(f'<details open><summary>{esc(what)} text</summary>{search}{text}</details>')
    return (f'<div class="jwb jwb-hlo" id="{root}">{style_block()}<style>{HLO_CSS}</style>'
            f'{"".join(parts)}<script>{SEARCH_JS % root}</script></div>')


def hlo_data(rep: HloReport, layouts: dict[str, Layout] | None = None) -> dict[str, Any]:
    """The payload's body: the report as data plus the diagrams' layout (docs/mime-hlo.md)."""
    rec = rep.to_dict()
    layouts = layouts if layouts is not None else graph_layouts(rep)
    rec["layouts"] = {
        name: {"width": lay.width, "height": lay.height, "node_w": lay.node_w,
               "node_h": lay.node_h,
               "boxes": {k: [round(b.x, 1), round(b.y, 1), b.layer] for k, b in lay.boxes.items()}}
        for name, lay in layouts.items()}
    return rec


def hlo_record(rep: HloReport, layouts: dict[str, Layout] | None = None) -> dict[str, Any]:
    """The whole JSON payload (versioned); see docs/mime-hlo.md."""
    return envelope(HLO_VIEW.kind, HLO_VIEW.version, hlo_data(rep, layouts))


def _hlo_text(rep: HloReport) -> str:
    return rep.text


def _hlo_layouts(rep: HloReport) -> dict[str, Any]:
    """Laid out once for both the SVG and the JSON; nothing to lay out without diagrams."""
    return {"layouts": graph_layouts(rep) if rep.fusion else {}}


def _hlo_html(rep: HloReport, layouts: dict[str, Layout] | None = None) -> str:
    return hlo_html(rep, layouts)


#: ``%%hlo``, ``workbench.hlo``: text is the stage's raw text; a view bug degrades to it
HLO_VIEW: View[HloReport] = View(kind="hlo", version=SCHEMA_VERSION, text=_hlo_text,
                                 html=_hlo_html, data=hlo_data, prepare=_hlo_layouts,
                                 degrade=True, record_name="report")
HLO_MIME = HLO_VIEW.mime


def hlo_bundle(rep: HloReport, text_only: bool = False) -> dict[str, Any]:
    return HLO_VIEW.bundle(rep, text_only=text_only)


def hlo_display(rep: HloReport, text_only: bool = False) -> Display[HloReport]:
    """What ``%%hlo`` and :func:`workbench.hlo` return (``.report`` is the record)."""
    return Display(rep, HLO_VIEW, text_only=text_only)


__all__ = ["HLO_MIME", "HLO_VIEW", "MAX_STABLEHLO_ROWS", "diagram_svg", "hlo_bundle", "hlo_display", "hlo_html",
           "hlo_record", "layout_graph"]

"""HLO views: pure functions from an :class:`~workbench.engine.hlo.report.HloReport` to a bundle.

- ``text/plain``: the stage's raw text exactly as JAX prints it, up to the bound of
  :mod:`workbench.views._bounds` (then one line on the rest; ``.text`` has all of it);
- ``text/html``: a static summary (headline numbers, collectives, heaviest fusions) plus
  the standalone runtime that draws the interactive view from the payload
  (:mod:`workbench.views._standalone`);
- ``application/vnd.jax-workbench.hlo+json``: the report as data plus the
  diagram's layout (``docs/mime-hlo.md``, schema ``workbench/schemas/hlo.schema.json``).
"""

from __future__ import annotations

from typing import Any

from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.graph import GraphNode
from workbench.engine.hlo.report import SCHEMA_VERSION, HloReport
from workbench.views._bounds import text_size
from workbench.views._envelope import envelope, pack
from workbench.views._format import fmt_bytes, fmt_count, fmt_seconds
from workbench.views._html import cells_of, cut, esc, source_label, summary_table
from workbench.views.display import Display, View

#: rows of the static summary's tables (the view has them all)
TOP_FUSIONS = 5
TOP_COLLECTIVES = 8


# -- small formatting helpers -----------------------------------------------------------
def _nr(value: str | None) -> str:
    return value if value is not None else '<span class="nr">not reported by this backend</span>'


def _src_label(loc: SourceLine) -> str:
    return source_label(loc.file, loc.line)[0]


def _scope(op_name: str) -> str:
    """The op_name without its last component (the primitive): the user's functions and
    named scopes, e.g. ``jit(loss)/jvp(block)/dot_general`` -> ``jit(loss)/jvp(block)``."""
    return op_name.rstrip("/").rsplit("/", 1)[0] if "/" in op_name else op_name


def _table(head: list[str], rows: list[list[str]], attrs: str = "") -> str:
    """A summary table whose cells are HTML the caller built from escaped text."""
    return summary_table(head, rows, attrs=attrs, html_cells=True)


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
    return cut(text, 120)


def collectives_html(rep: HloReport) -> str:
    if not rep.collectives:
        return ""
    rows = []
    for c in rep.collectives[:TOP_COLLECTIVES]:
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
        f"<p><b>{len(rep.collectives)} collective"
        f"{'s' if len(rep.collectives) != 1 else ''}</b></p>{table}"
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
                esc(cut(node.label, 60)),
                esc(node.shape),
                fmt_bytes(node.bytes_moved),
                esc(cut(_scope(node.op_name), 70)),
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
        f"<p><b>The {len(top)} heaviest fusions and ops</b> (of {fusions} fusions) by "
        f"estimated bytes moved (operands read + result written, from shapes; "
        f"not a measurement)</p>{table}"
    )


def measured_html(measured: dict[str, float]) -> str:
    """The instructions that took the most device time in a profile of this module."""
    top = sorted(measured.items(), key=lambda kv: -kv[1])[:TOP_FUSIONS]
    rows = [[f"<code>{esc(name)}</code>", fmt_seconds(sec)] for name, sec in top]
    return (
        "<p><b>measured</b> device time per call (%%jaxprof of this module): the "
        f"{len(top)} slowest instructions</p>" + _table(["instruction", "time"], rows)
    )


def hlo_html(rep: HloReport, layouts: Any = None) -> str:
    """The static summary (what shows where scripts do not run: GitHub, nbviewer, an untrusted
    notebook): the headline numbers, the collectives and the heaviest fusions, readable with
    no stylesheet.  The graph, the text and its search are the TypeScript view's, drawn from
    the payload by the extension or by the standalone runtime the ``text/html`` carries
    (:mod:`workbench.views._standalone`).  ``layouts`` is accepted for old callers, unused."""
    parts = [summary_html(rep)]
    if rep.parse_error:
        parts.append(
            f"<p>The HLO text could not be fully read ({esc(rep.parse_error)}); "
            "the text output has it.</p>"
        )
    parts.append(collectives_html(rep))
    if rep.stage == "compiled" and rep.fusion and rep.module is not None:
        parts.append(top_fusions_html(rep))
    if rep.measured:
        parts.append(measured_html(rep.measured))
    return f'<div class="jwb jwb-hlo">{"".join(parts)}</div>'


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


def hlo_record(rep: HloReport, layouts: Any = None) -> dict[str, Any]:
    """The whole JSON payload (versioned); see docs/mime-hlo.md.  ``layouts`` is accepted for
    callers of version 1 and not used: the payload carries no layout since version 2."""
    return envelope(HLO_VIEW.kind, HLO_VIEW.version, hlo_data(rep))


def _hlo_text(rep: HloReport) -> str:
    return rep.text


def _hlo_html(rep: HloReport, layouts: Any = None) -> str:
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
    "hlo_bundle",
    "hlo_display",
    "hlo_html",
    "hlo_record",
]

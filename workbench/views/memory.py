"""Memory views: ``%jaxmem`` (who holds the live arrays) and ``%%jaxmem CALL`` (a compiled
program's peak).

Each display is ``text/plain`` (within :mod:`workbench.views._bounds`), a small
self-contained ``text/html`` (a static summary plus the standalone runtime) and a versioned
JSON payload:
``application/vnd.jax-workbench.memory+json`` and ``...memory-program+json``
(contracts in ``workbench/schemas/memory*.schema.json``).  The payloads carry at most
:data:`MAX_GROUPS` owners with :data:`MAX_ARRAYS` arrays each, and :data:`MAX_BUFFERS`
buffers: the record keeps all of them (``.record``).
"""

from __future__ import annotations

from typing import Any

from workbench.engine.common.source import SourceLine
from workbench.engine.memory.owners import SCHEMA_VERSION as LIVE_VERSION
from workbench.engine.memory.owners import LiveMemory, OwnerGroup
from workbench.engine.memory.program import SCHEMA_VERSION as PROGRAM_VERSION
from workbench.engine.memory.program import ProgramMemory
from workbench.views._envelope import MIME_PREFIX
from workbench.views._format import fmt_bytes, fmt_seconds
from workbench.views._html import cut, esc, source_label, summary_table
from workbench.views.display import Display, View

MEMORY_MIME = MIME_PREFIX + "memory+json"
MEMORY_PROGRAM_MIME = MIME_PREFIX + "memory-program+json"
#: owners in the payload and the text, largest first
MAX_GROUPS = 100
#: arrays per owner in the payload (largest first); the text shows fewer
MAX_ARRAYS = 50
TEXT_ARRAYS = 8
#: buffers live at the peak in the payload; the text shows fewer
MAX_BUFFERS = 200
TEXT_BUFFERS = 15
TEXT_SAVED = 5
SPARK = "▁▂▃▄▅▆▇█"

KIND_WORDS = {
    "name": "name",
    "attribute": "attributes",
    "closure": "closure",
    "history": "output history",
    "traceback": "last exception",
    "module": "module global",
    "frame": "running frame",
    "unreachable": "unreachable",
    "unplaced": "not placed",
}

#: what each figure counts, in one line each (the text and the HTML say them)
PEAK_MEANS = (
    "the HLO values live together at the peak step of XLA's schedule (its live-range report)"
)
ANALYSIS_MEANS = (
    "what the runtime allocates for one call: arguments + outputs + XLA's temp "
    "buffer - outputs aliased to arguments"
)
#: the third figure, shown when memory_analysis counts output buffers empty at the peak
COMPARABLE_MEANS = (
    "memory_analysis less the output buffers that hold nothing yet at the peak: XLA allocates "
    "every output for the whole call and memory_analysis counts it, the live-range peak only "
    "what is written by then"
)


def where_text(where: SourceLine | None) -> str:
    """``cell [8] line 17`` or ``model.py:17``: a source line as the user reads it."""
    if where is None:
        return ""
    return source_label(where.file, where.line)[0]


def _devices_text(devices: dict[str, int]) -> str:
    if not devices:
        return ""
    if len(devices) == 1:
        ((d, _),) = devices.items()
        return f"on {d}"
    sizes = set(devices.values())
    each = f", {fmt_bytes(next(iter(sizes)))} each" if len(sizes) == 1 else ""
    return f"on {len(devices)} devices{each}"


def _owner_text(g: OwnerGroup) -> str:
    where = where_text(g.where)
    return g.owner + (f" ({where})" if where else "")


# -- %jaxmem ------------------------------------------------------------------------------


def live_text(rep: LiveMemory) -> str:
    lines = [
        f"Device memory held by live arrays: {rep.total_arrays} arrays, "
        f"{fmt_bytes(rep.total_bytes)}"
        + (f" ({_per_device_line(rep.devices)})" if rep.devices else "")
    ]
    for f in rep.freed:
        lines.append(_freed_line(f.action, f.arrays, f.nbytes, f.note))
    for st in rep.allocator:
        lines.append(
            f"  allocator {st.device}: in use {fmt_bytes(st.bytes_in_use)}, peak "
            f"{fmt_bytes(st.peak_bytes_in_use)}, limit {fmt_bytes(st.bytes_limit)}"
        )
    if rep.allocator_note:
        lines.append(f"  ({rep.allocator_note})")
    if not rep.groups:
        lines.append("  no live device arrays")
    for g in rep.groups[:MAX_GROUPS]:
        count = f"{len(g.arrays)} arrays" if len(g.arrays) != 1 else g.arrays[0].shape
        lines.append(
            f"  {fmt_bytes(g.nbytes):>10}  {_owner_text(g)}  [{KIND_WORDS.get(g.kind, g.kind)}] "
            f"{count} {_devices_text(g.devices)}".rstrip()
        )
        if len(g.arrays) > 1 or (g.arrays and g.arrays[0].path != g.owner):
            for a in g.arrays[:TEXT_ARRAYS]:
                also = f" (also held by {a.also} more)" if a.also else ""
                lines.append(f"  {fmt_bytes(a.nbytes):>10}      {a.path}: {a.shape}{also}")
            if len(g.arrays) > TEXT_ARRAYS:
                rest = g.arrays[TEXT_ARRAYS:]
                lines.append(
                    f"  {fmt_bytes(sum(a.nbytes for a in rest)):>10}      ... {len(rest)} more"
                )
    if len(rep.groups) > MAX_GROUPS:
        lines.append(f"  ... {len(rep.groups) - MAX_GROUPS} more owners")
    lines.append(
        f"walk: {fmt_seconds(rep.walk_s)} over {rep.objects} objects"
        + (" (cut short at its time budget)" if rep.cut_short else "")
    )
    lines.extend(rep.notes)
    hints = _free_hints(rep)
    if hints:
        lines.append("; ".join(hints))
    return "\n".join(lines)


def _free_hints(rep: LiveMemory) -> list[str]:
    """The flags that would free what only the output history or the last exception holds."""
    hints = []
    if rep.history_only_bytes:
        hints.append(f"%jaxmem --free-history frees {fmt_bytes(rep.history_only_bytes)}")
    if rep.traceback_only_bytes:
        hints.append(f"%jaxmem --free-traceback frees {fmt_bytes(rep.traceback_only_bytes)}")
    return hints


def _per_device_line(devices: dict[str, int]) -> str:
    items = sorted(devices.items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{d} {fmt_bytes(b)}" for d, b in items[:4])
    return shown + (f", ... {len(items) - 4} more devices" if len(items) > 4 else "")


def _freed_line(action: str, arrays: int, nbytes: int, note: str) -> str:
    what = {"history": "the output history", "traceback": "the last exception"}.get(action, action)
    if note:
        return note
    return f"freed {fmt_bytes(nbytes)} ({arrays} arrays) held by {what}"


def live_html(rep: LiveMemory) -> str:
    """The static summary (where scripts do not run): the totals, the notes and the largest
    owners (:func:`~workbench.views._html.summary_table`).  Each owner's arrays, the
    per-device split and the source links are the TypeScript view's, drawn from the payload
    (:mod:`workbench.views._standalone`)."""
    notes = [rep.allocator_note, *rep.notes] + [
        _freed_line(f.action, f.arrays, f.nbytes, f.note) for f in rep.freed
    ]
    rows = [
        [
            fmt_bytes(g.nbytes),
            _owner_text(g),
            KIND_WORDS.get(g.kind, g.kind),
            str(len(g.arrays)),
            _devices_text(g.devices),
        ]
        for g in rep.groups
    ]
    return (
        f"<div class='jwb jwb-mem'><div><b>Device memory held by live arrays</b>: "
        f"{rep.total_arrays} arrays, {esc(fmt_bytes(rep.total_bytes))}"
        + (f" ({esc(_per_device_line(rep.devices))})" if rep.devices else "")
        + "</div>"
        + "".join(f"<div>{esc(cut(n))}</div>" for n in notes if n)
        + summary_table(["bytes", "owner", "held by", "arrays", "devices"], rows, what="owners")
        + "".join(f"<div>{esc(h)}</div>" for h in _free_hints(rep))
        + "</div>"
    )


def _group_data(g: OwnerGroup) -> dict[str, Any]:
    d = g.to_dict(MAX_ARRAYS)
    d["label"] = _owner_text(g)
    return d


def live_data(rep: LiveMemory) -> dict[str, Any]:
    d = rep.to_dict(MAX_GROUPS, MAX_ARRAYS)
    d["groups"] = [_group_data(g) for g in rep.groups[:MAX_GROUPS]]
    return d


LIVE_VIEW: View[LiveMemory] = View(
    kind="memory",
    version=LIVE_VERSION,
    text=live_text,
    html=live_html,
    data=live_data,
    degrade=True,
    record_name="report",
)


def live_display(rep: LiveMemory, text_only: bool = False) -> Display[LiveMemory]:
    return Display(rep, LIVE_VIEW, text_only=text_only)


# -- %%jaxmem CALL --------------------------------------------------------------------------


def sparkline(values: list[int], width: int = 60) -> str:
    if not values:
        return ""
    if len(values) > width:
        step = len(values) / width
        values = [
            max(values[int(i * step) : max(int((i + 1) * step), int(i * step) + 1)])
            for i in range(width)
        ]
    top = max(values) or 1
    return "".join(SPARK[round(v / top * (len(SPARK) - 1))] for v in values)


def _analysis_text(rep: ProgramMemory) -> str:
    m = rep.memory
    if rep.analysis_bytes is None:
        return "not reported by this backend"
    return (
        f"{fmt_bytes(rep.analysis_bytes)} = arguments {fmt_bytes(m.argument_bytes)} + outputs "
        f"{fmt_bytes(m.output_bytes)} + temp {fmt_bytes(m.temp_bytes)} - alias "
        f"{fmt_bytes(m.alias_bytes or 0)}"
    )


def comparable_text(rep: ProgramMemory) -> str | None:
    """``memory_analysis()`` less the idle output buffers, or None when it counts none (the
    two figures above are then comparable as they are)."""
    if rep.comparable_bytes is None or not rep.idle_output_bytes:
        return None
    return (
        f"{fmt_bytes(rep.comparable_bytes)} = {fmt_bytes(rep.analysis_bytes)} - "
        f"{fmt_bytes(rep.idle_output_bytes)} of output buffers empty at the peak"
    )


def donation_text(rep: ProgramMemory) -> str:
    d = rep.donation
    if d is None:
        return "donation: this stage does not say its arguments and outputs"
    if not d.argnums:
        return f"donation: {d.note}"
    nums = ", ".join(str(i) for i in d.argnums)
    tail = "," if len(d.argnums) == 1 else ""
    return (
        f"donation: jax.jit(..., donate_argnums=({nums}{tail})) lets outputs reuse "
        f"{fmt_bytes(d.bytes)} of argument buffers ({d.note})"
    )


def program_text(rep: ProgramMemory) -> str:
    lines = [f"{rep.label}: memory at its peak ({rep.backend}, from XLA's buffer assignment)"]
    lines.append(
        f"  live-range peak   {fmt_bytes(rep.peak_bytes)} ({rep.peak_bytes} bytes) at step "
        f"{rep.peak_step} of {rep.steps}: {PEAK_MEANS}"
    )
    lines.append(f"  memory_analysis   {_analysis_text(rep)}: {ANALYSIS_MEANS}")
    if (comparable := comparable_text(rep)) is not None:
        lines.append(f"  comparable        {comparable}: {COMPARABLE_MEANS}")
    if rep.memory.peak_bytes is not None:
        lines.append(
            f"  peak_memory_in_bytes {fmt_bytes(rep.memory.peak_bytes)} (as this backend's "
            f"memory_analysis reports it)"
        )
    lines.append(f"memory over program order: {sparkline([b for _, b in rep.timeline])}")
    lines.append(f"buffers live at the peak ({len(rep.buffers)}), largest first:")
    for b in rep.buffers[:TEXT_BUFFERS]:
        where = where_text(b.source)
        lines.append(
            f"  {fmt_bytes(b.bytes):>10}  {b.shape:<20} {b.name} ({b.opcode or '?'}, {b.role})"
            + (f"  {where}" if where else "")
        )
    if len(rep.buffers) > TEXT_BUFFERS:
        rest = rep.buffers[TEXT_BUFFERS:]
        lines.append(f"  {fmt_bytes(sum(b.bytes for b in rest)):>10}  ... {len(rest)} more")
    lines.append(donation_text(rep))
    if rep.saved:
        lines.append(
            "checkpoint: the forward pass keeps these for the backward pass at the peak; "
            "jax.checkpoint around the code of a line recomputes them instead:"
        )
        for s in rep.saved[:TEXT_SAVED]:
            where = where_text(s.source) or s.op_name
            lines.append(f"  {fmt_bytes(s.bytes):>10}  {s.count} buffers from {where}")
    elif rep.has_backward:
        lines.append("checkpoint: no forward-pass values are live at the peak")
    lines.append(
        f"compiled with the dump in {fmt_seconds(rep.compile_s)} ({fmt_bytes(rep.dump_bytes)} "
        f"of dump files read and removed)"
    )
    lines.extend(rep.notes)
    return "\n".join(lines)


def program_html(rep: ProgramMemory) -> str:
    """The static summary: the peak and what it means, the memory over program order as one
    line of text, the largest buffers live at the peak, the donation and checkpoint advice
    (:func:`~workbench.views._html.summary_table`).  The chart and the links are the
    TypeScript view's."""
    figures = [
        ["live-range peak", fmt_bytes(rep.peak_bytes), f"step {rep.peak_step} of {rep.steps}"],
        ["memory_analysis", _analysis_text(rep), ANALYSIS_MEANS],
    ]
    if (comparable := comparable_text(rep)) is not None:
        figures.append(["comparable", comparable, COMPARABLE_MEANS])
    buffers = [
        [
            fmt_bytes(b.bytes),
            b.shape,
            f"{b.name} ({b.opcode or '?'}, {b.role})",
            where_text(b.source),
        ]
        for b in rep.buffers
    ]
    saved = [
        [fmt_bytes(s.bytes), str(s.count), where_text(s.source) or s.op_name] for s in rep.saved
    ]
    return (
        f"<div class='jwb jwb-mem'><div><b>{esc(rep.label)}</b>: memory at its peak "
        f"({esc(rep.backend)}, from XLA's buffer assignment)</div>"
        + summary_table(["figure", "bytes", "what it counts"], figures)
        + f"<div>live-range peak: {esc(PEAK_MEANS)}</div>"
        + f"<div>memory over program order: {sparkline([b for _, b in rep.timeline])}</div>"
        + f"<div>buffers live at the peak ({len(rep.buffers)}), largest first:</div>"
        + summary_table(["bytes", "shape", "instruction", "line"], buffers, what="buffers")
        + f"<div>{esc(donation_text(rep))}</div>"
        + (
            "<div>checkpoint candidates (kept by the forward pass for the backward pass at "
            "the peak):</div>" + summary_table(["bytes", "buffers", "from"], saved, what="sources")
            if saved
            else ""
        )
        + "</div>"
    )


def _source_data(s: SourceLine | None) -> dict[str, Any] | None:
    return s.to_dict() if s is not None else None


def program_data(rep: ProgramMemory) -> dict[str, Any]:
    d = rep.to_dict()
    d["buffers"] = [
        {**b.to_dict(), "where": where_text(b.source)} for b in rep.buffers[:MAX_BUFFERS]
    ]
    d["total_buffers"] = len(rep.buffers)
    d["saved"] = [{**s.to_dict(), "where": where_text(s.source)} for s in rep.saved[:MAX_BUFFERS]]
    d["peak_means"] = PEAK_MEANS
    d["analysis_means"] = ANALYSIS_MEANS
    d["comparable_means"] = COMPARABLE_MEANS
    d["donation_text"] = donation_text(rep)
    return d


PROGRAM_VIEW: View[ProgramMemory] = View(
    kind="memory-program",
    version=PROGRAM_VERSION,
    text=program_text,
    html=program_html,
    data=program_data,
    degrade=True,
    record_name="report",
)


def program_display(rep: ProgramMemory, text_only: bool = False) -> Display[ProgramMemory]:
    return Display(rep, PROGRAM_VIEW, text_only=text_only)


__all__ = [
    "LIVE_VIEW",
    "MEMORY_MIME",
    "MEMORY_PROGRAM_MIME",
    "PROGRAM_VIEW",
    "live_display",
    "program_display",
    "sparkline",
    "where_text",
]

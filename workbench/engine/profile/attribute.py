"""From device events to time per instruction, per source line and per jaxpr primitive.

Per call, each instruction's time is the sum of its events' self time (a loop's body
events are not counted twice in the loop's own event); the figure reported is the median
over the profiled calls.  An instruction's time goes to the source lines (and primitives)
of what it contains, split in proportion to their work (a dot's FLOPs, an element-wise op's
or a reduction's elements; broadcasts, bitcasts and parameters count nothing), so a fusion
of a matmul and a ``tanh`` puts its time on the matmul's line.  The split is a model, the
instruction's time is a measurement; the per-line times add up exactly to the
per-instruction times (work with no source line is its own row), which the tests check.
"""

from __future__ import annotations

import linecache
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.engine.common.source import SourceLine, cell_label
from workbench.engine.hlo.graph import fusion_label
from workbench.engine.hlo.model import HloComputation, HloInstruction, HloModule
from workbench.engine.hlo.shapes import parse_shape
from workbench.engine.profile.events import ProfileEvents, Step
from workbench.engine.profile.report import (
    InstructionTime,
    LineTime,
    Listing,
    PeakInfo,
    PrimitiveTime,
    ProfileReport,
    TimelineEvent,
)

#: an instruction whose median is under this many seconds is at the profiler's resolution
#: (each event costs the CPU profiler about a microsecond to record; GPU timestamps are
#: good to about a microsecond too)
RESOLUTION_S = 2e-6
#: calls whose times differ by more than this fraction of the median are "noisy"
NOISY_SPREAD = 0.5
#: a listing shows the whole range of a file's attributed lines when it is at most this
#: long, else the attributed lines alone
LISTING_SPAN = 80
#: the timeline keeps at most this many events of the median call
TIMELINE_EVENTS = 4000

_NO_WORK = {
    "parameter",
    "constant",
    "tuple",
    "get-tuple-element",
    "bitcast",
    "broadcast",
    "reshape",
    "iota",
    "after-all",
    "partition-id",
    "replica-id",
}


def _elements(text: str) -> int:
    return sum(math.prod(a.dims) for a in parse_shape(text))


def _dims(attr: str) -> list[int]:
    return [int(x) for x in attr.strip("{}").split(",") if x.strip().isdigit()]


def work(ins: HloInstruction, comp: HloComputation) -> float:
    """A rough measure of an instruction's work, only used to split a fusion's measured
    time among the lines fused into it: FLOPs of a dot or convolution, elements of the
    operand of a reduction, elements of the result otherwise; nothing for data plumbing."""
    op = ins.opcode
    if op in _NO_WORK:
        return 0.0
    out = _elements(ins.shape_text)
    operand = comp.by_name.get(ins.operands[0]) if ins.operands else None
    if op == "dot" and operand is not None:
        lhs = parse_shape(operand.shape_text)
        contract = _dims(ins.attrs.get("lhs_contracting_dims", ""))
        if lhs:
            k = math.prod(lhs[0].dims[d] for d in contract if d < len(lhs[0].dims))
            return 2.0 * out * k
    if op == "convolution" and len(ins.operands) > 1:
        kernel = comp.by_name.get(ins.operands[1])
        if kernel is not None:
            kshape = parse_shape(kernel.shape_text)
            if kshape and kshape[0].dims:
                # output elements x (kernel elements / output features): a fair proxy
                return 2.0 * out * math.prod(kshape[0].dims) / max(kshape[0].dims[-1], 1)
    if op in ("reduce", "reduce-window") and operand is not None:
        return float(_elements(operand.shape_text))
    return float(out)


class _Splitter:
    """Each instruction's time split over (source line, primitive), memoised per computation."""

    def __init__(self, module: HloModule) -> None:
        self.module = module
        self._memo: dict[str, dict[tuple[Any, str], float]] = {}

    def shares(self, ins: HloInstruction, comp: HloComputation) -> dict[tuple[Any, str], float]:
        """``{(source key or None, primitive): fraction}``, fractions adding up to 1."""
        weights: dict[tuple[Any, str], float] = {}
        if ins.opcode == "fusion" and ins.called:
            for c in ins.called:
                for k, w in self._body(c).items():
                    weights[k] = weights.get(k, 0.0) + w
        if not weights or sum(weights.values()) <= 0:
            key = (_key(ins.source), ins.primitive if ins.opcode != "parameter" else "")
            weights = {key: 1.0}
        total = sum(weights.values())
        return {k: w / total for k, w in weights.items()}

    def _body(self, comp_name: str) -> dict[tuple[Any, str], float]:
        if comp_name in self._memo:
            return self._memo[comp_name]
        self._memo[comp_name] = {}
        comp = self.module.by_name.get(comp_name)
        out: dict[tuple[Any, str], float] = {}
        if comp is not None:
            fallback: dict[tuple[Any, str], float] = {}
            for ins in comp.instructions:
                if ins.opcode == "fusion" and ins.called:  # nested fusion
                    for c in ins.called:
                        for k, w in self._body(c).items():
                            out[k] = out.get(k, 0.0) + w
                    continue
                key = (_key(ins.source), ins.primitive if ins.opcode != "parameter" else "")
                w = work(ins, comp)
                if w > 0:
                    out[key] = out.get(key, 0.0) + w
                elif ins.opcode not in ("parameter", "constant") and ins.source is not None:
                    fallback[key] = 1.0
            if not out:
                out = fallback
        self._memo[comp_name] = out
        return out


def _key(src: SourceLine | None) -> tuple[str, int, str] | None:
    return None if src is None else (src.file, src.line, src.function)


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


def _spread(xs: list[float], med: float) -> float:
    """Interquartile range over the median (robust to one interrupted call); 0 for one call."""
    if med <= 0 or len(xs) < 2:
        return 0.0
    if len(xs) < 4:
        return (max(xs) - min(xs)) / med
    q = statistics.quantiles(xs, n=4)
    return (q[2] - q[0]) / med


def _union(step: Step) -> float:
    """Time inside the step covered by at least one attributed event."""
    spans = sorted(
        (max(e.start_ns, step.start_ns), min(e.end_ns, step.end_ns))
        for e in step.events
        if e.instruction is not None
    )
    total, cur_s, cur_e = 0.0, None, None
    for s, t in spans:
        if cur_e is None or s > cur_e:
            if cur_e is not None and cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, t
        else:
            cur_e = max(cur_e, t)
    if cur_e is not None and cur_s is not None:
        total += cur_e - cur_s
    return total


def _line_text(file: str, line: int) -> str | None:
    text = linecache.getline(file, line)
    return text.rstrip("\n") if text else None


def attribute(
    events: ProfileEvents,
    module: HloModule,
    *,
    label: str,
    backend: str,
    device_kind: str,
    module_key: str,
    costs: Mapping[str, Any] | None = None,
    peak: Any = None,
) -> ProfileReport:
    """The :class:`ProfileReport` of ``events`` (steps of ``module``).

    ``costs``: per-instruction ``OpCost`` (FLOPs, bytes, dtype) for the top-N table;
    ``peak``: the device's :class:`~workbench.engine.bench.peaks.DevicePeak` or None.
    Four phases: each step's time per instruction, one row per instruction (its median,
    shares of lines and primitives, roofline), the lines and primitives tables, the report.
    """
    steps = events.steps
    ns = 1e-9
    per_step = _per_step_times(steps)
    step_times = [st.duration_ns * ns for st in steps]
    step_s = _median(step_times)
    unions = [_union(st) for st in steps]
    attributed = _median([u * ns for u in unions])
    coverage = _median(
        [u / st.duration_ns for u, st in zip(unions, steps, strict=True) if st.duration_ns > 0]
    )
    busy = _median([sum(e.self_ns for e in st.events) * ns for st in steps])

    split = _instruction_rows(module, per_step, costs, peak, events.platform)
    rows = split.rows
    total = sum(split.medians.values())
    for r in rows:
        r.share = r.seconds / total if total else 0.0
    lines = _line_times(split.line_seconds, total)
    prims_out = sorted(
        (
            PrimitiveTime(p, s, s / total if total else 0.0)
            for p, s in split.primitive_seconds.items()
        ),
        key=lambda p: -p.seconds,
    )

    report = ProfileReport(
        label=label,
        backend=backend,
        device_kind=device_kind,
        module_name=module.name,
        module_key=module_key,
        calls=len(steps),
        step_seconds=step_times,
        step_s=step_s,
        attributed_s=attributed,
        coverage=coverage,
        busy_s=busy,
        step_source=events.step_source,
        attribution=events.attribution,
        instructions=rows,
        lines=lines,
        primitives=prims_out,
        notes=list(events.notes),
    )
    report.listings = listings(lines)
    _timeline(report, steps, step_times, step_s)
    report.peak = (
        PeakInfo(peak.name, dict(peak.flops), peak.bytes_per_s)
        if peak is not None
        else PeakInfo(None)
    )
    _notes(report, events)
    return report


def _per_step_times(steps: list[Step]) -> list[dict[str, list[float]]]:
    """Per step: instruction name -> [self time (ns), events]."""
    per_step: list[dict[str, list[float]]] = []
    for st in steps:
        acc: dict[str, list[float]] = {}
        for ev in st.events:
            if ev.instruction is None:
                continue
            slot = acc.setdefault(ev.instruction, [0.0, 0.0])
            slot[0] += ev.self_ns
            slot[1] += 1
        per_step.append(acc)
    return per_step


@dataclass
class _Rows:
    """The instructions' rows (heaviest first, shares not yet set), each one's median, and
    the time they split among source lines and primitives."""

    rows: list[InstructionTime]
    medians: dict[str, float]
    line_seconds: dict[Any, float]
    primitive_seconds: dict[str, float]


def _instruction_rows(
    module: HloModule,
    per_step: list[dict[str, list[float]]],
    costs: Mapping[str, Any] | None,
    peak: Any,
    platform: str,
) -> _Rows:
    """One row per executed instruction: its median over steps, spread, the source lines
    and primitives its time is split among, and its roofline figures."""
    ns = 1e-9
    names = sorted({k for acc in per_step for k in acc})
    where: dict[str, tuple[HloComputation, HloInstruction]] = {}
    for c in module.computations:
        if c.role == "fused":
            continue
        for i in c.instructions:
            where[i.name] = (c, i)
    splitter = _Splitter(module)
    labels: dict[tuple[str, tuple[str, ...]], str] = {}
    out = _Rows([], {}, {}, {})
    line_acc, prim_acc = out.line_seconds, out.primitive_seconds
    for name in names:
        times = [acc.get(name, [0.0, 0.0])[0] * ns for acc in per_step]
        counts = [acc.get(name, [0.0, 0.0])[1] for acc in per_step]
        med = _median(times)
        out.medians[name] = med
        spread = _spread(times, med)
        found = where.get(name)
        comp: HloComputation | None = found[0] if found is not None else None
        ins: HloInstruction | None = found[1] if found is not None else None
        row = InstructionTime(
            name=name,
            opcode=ins.opcode if ins else "?",
            label=_label(module, ins, labels),
            computation=comp.name if comp else "",
            seconds=med,
            share=0.0,
            events_per_call=int(_median(counts)),
            spread=spread,
            resolved=med >= RESOLUTION_S and spread <= NOISY_SPREAD,
        )
        if ins is not None and comp is not None:
            shares = splitter.shares(ins, comp)
            srcs: dict[Any, SourceLine] = {}
            prims: dict[str, float] = {}
            for (key, prim), frac in shares.items():
                line_acc[key] = line_acc.get(key, 0.0) + med * frac
                prim_acc[prim] = prim_acc.get(prim, 0.0) + med * frac
                prims[prim] = prims.get(prim, 0.0) + frac
                if key is not None:
                    srcs.setdefault(key, SourceLine(key[0], key[1], key[2]))
            row.sources = list(srcs.values())
            row.primitives = [p for p, _ in sorted(prims.items(), key=lambda kv: -kv[1]) if p]
        else:
            line_acc[None] = line_acc.get(None, 0.0) + med
            prim_acc[""] = prim_acc.get("", 0.0) + med
        # one event per execution on CPU; on a GPU an instruction may launch several
        # kernels (a memset and a gemm), so it counts as one execution per call
        _roofline(row, costs, peak, row.events_per_call if platform == "cpu" else 1)
        out.rows.append(row)
    out.rows.sort(key=lambda r: -r.seconds)
    return out


def _line_times(line_seconds: dict[Any, float], total: float) -> list[LineTime]:
    """The lines table: each source line's share of the attributed time (cells marked)."""
    lines = []
    for key, sec in line_seconds.items():
        if key is None:
            lines.append(LineTime(None, sec, sec / total if total else 0.0, False))
            continue
        file, line, function = key
        lab = cell_label(file)
        lines.append(
            LineTime(
                SourceLine(file, line, function, _line_text(file, line)),
                sec,
                sec / total if total else 0.0,
                lab is not None or file.startswith("<"),
                lab.number if lab is not None else None,
            )
        )
    lines.sort(key=lambda r: (r.file == "", r.file, r.line))
    return lines


def listings(lines: list[LineTime]) -> list[Listing]:
    """Per file (cells first, then the heaviest files), its lines with their device time."""
    by_file: dict[str, list[LineTime]] = {}
    for ln in lines:
        if ln.file:
            by_file.setdefault(ln.file, []).append(ln)
    out = []
    for file, rows in by_file.items():
        timed = {r.line: r for r in rows}
        lo, hi = min(timed), max(timed)
        shown = range(lo, hi + 1) if hi - lo < LISTING_SPAN else sorted(timed)
        listing = Listing(file, rows[0].cell, rows[0].in_cell)
        for n in shown:
            r = timed.get(n)
            text = r.text if r is not None else _line_text(file, n)
            listing.rows.append(
                [
                    n,
                    text if text is not None else "",
                    r.seconds if r else None,
                    r.share if r else None,
                ]
            )
        out.append(listing)
    weight = {ls.file: sum(r[2] or 0.0 for r in ls.rows) for ls in out}
    out.sort(key=lambda ls: (not ls.in_cell, -weight[ls.file]))
    return out


def _label(
    module: HloModule, ins: HloInstruction | None, labels: dict[tuple[str, tuple[str, ...]], str]
) -> str:
    if ins is None:
        return "(not in the module)"
    if ins.opcode == "fusion":
        key = (ins.fusion_kind, tuple(ins.called))
        if key not in labels:
            ops: list[str] = []
            for c in ins.called:
                comp = module.by_name.get(c)
                if comp is not None:
                    ops.extend(dict.fromkeys(i.opcode for i in comp.instructions))
            labels[key] = fusion_label(ins.fusion_kind, list(dict.fromkeys(ops)))
        return labels[key]
    if ins.opcode == "custom-call":
        target = ins.attrs.get("custom_call_target", "").strip('"')
        return f"custom-call: {target}" if target else "custom-call"
    return ins.opcode


def _roofline(
    row: InstructionTime, costs: Mapping[str, Any] | None, peak: Any, executions: int
) -> None:
    """FLOPs, bytes and achieved rates of one instruction; bound by the ridge point.

    ``costs`` are per execution; ``executions`` is how many times the instruction ran per
    call (a loop body's instructions run once per trip), so the figures are per call like
    the time.  Control flow (``while``, ``conditional``, ``call``) gets none: its work is
    in its body's rows, its own time is only the loop's overhead.
    """
    cost = costs.get(row.name) if costs else None
    if cost is None or row.opcode in ("while", "conditional", "call"):
        return
    k = max(executions, 1)
    row.flops = None if cost.flops is None else cost.flops * k
    row.bytes = None if cost.bytes is None else cost.bytes * k
    row.dtype = cost.dtype
    row.cost_source = cost.source
    if row.seconds < RESOLUTION_S:  # a rate from a time at the profiler's resolution is noise
        return
    if row.flops is not None:
        row.flops_per_s = row.flops / row.seconds
    if row.bytes is not None:
        row.bytes_per_s = row.bytes / row.seconds
    if row.flops is not None and row.bytes:
        row.intensity = row.flops / row.bytes
    if peak is None or row.intensity is None or not peak.bytes_per_s:
        return
    pf = peak.flops_for(row.dtype or "float32")
    if pf:
        row.bound = "compute" if row.intensity >= pf / peak.bytes_per_s else "memory"


def _timeline(report: ProfileReport, steps: list[Step], times: list[float], median: float) -> None:
    if not steps:
        return
    idx = min(range(len(steps)), key=lambda i: abs(times[i] - median))
    st = steps[idx]
    evs = st.events[:TIMELINE_EVENTS]
    report.timeline_step_us = st.duration_ns / 1e3
    report.timeline = [
        TimelineEvent(e.name, e.instruction, (e.start_ns - st.start_ns) / 1e3, e.duration_ns / 1e3)
        for e in evs
    ]
    if len(st.events) > TIMELINE_EVENTS:
        report.notes.append(
            f"the timeline shows the first {TIMELINE_EVENTS} of {len(st.events)} events of the call"
        )


def _notes(report: ProfileReport, events: ProfileEvents) -> None:
    st = report.step_seconds
    if len(st) > 1 and report.step_s > 0:
        spread = _spread(st, report.step_s)
        if spread > NOISY_SPREAD:
            report.notes.append(
                f"the calls' times vary by {spread:.0%} of the median (interquartile range): the step is noisy, "
                "figures are medians; profile more calls (-n) for steadier ones"
            )
    if report.fusion_seconds < 0.8 * report.attributed_s:
        report.notes.append(
            f"the per-instruction medians add up to {report.fusion_seconds * 1e3:.3g} ms, "
            f"{report.fusion_seconds / report.attributed_s:.0%} of the median call's "
            f"attributed {report.attributed_s * 1e3:.3g} ms: single instructions were slowed "
            "now and then (a busy machine?), which medians leave out"
        )
    small = sum(1 for r in report.instructions if not r.resolved)
    if small:
        report.notes.append(
            f"{small} of {len(report.instructions)} instructions took under "
            f"{RESOLUTION_S * 1e6:.0f} µs or varied by more than {NOISY_SPREAD:.0%} (interquartile "
            "range) between calls: too short or noisy to resolve one by one (marked ~)"
        )
    leads = [s.dispatch_ns * 1e-9 for s in events.steps]
    lead = _median(leads)
    if lead > 0 and report.step_s > 0:
        report.notes.append(
            f"before each step the host dispatched the call (arguments, output buffers, "
            f"waking an executor thread) for a median {lead * 1e6:.0f} µs "
            f"({lead / report.step_s:.0%} of the step): host time, not in the step"
        )
    if report.step_s and report.step_s < 50e-6:
        report.notes.append(
            "the step is shorter than 50 µs: per-instruction figures are at "
            "the profiler's resolution"
        )
    unmatched = sum(1 for s in events.steps for e in s.events if e.instruction is None)
    if unmatched:
        report.notes.append(
            f"{unmatched} events could not be tied to an instruction of the "
            "module (counted in the step, not attributed)"
        )
    if report.busy_s > report.attributed_s * 1.02 and report.busy_s > report.step_s:
        report.notes.append(
            f"events overlapped (ran concurrently): their times add up to "
            f"{report.busy_s / report.step_s:.0%} of the step, so shares add up to more "
            "than the coverage"
        )


__all__ = ["RESOLUTION_S", "attribute", "work"]

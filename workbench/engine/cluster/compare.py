"""Compare the processes' compile ledgers and step times: what ``%jaxcluster`` reports.

Input: one :func:`~workbench.engine.cluster.agent.snapshot` per process (plain dicts, as
they come back from the engines), or a note for a process that did not answer.  Output: a
:class:`ClusterReport`, one row per function with one cell per process, and the
divergences in words.

Why divergence matters: in a multi-process JAX program every process must compile the same
program for each collective step.  A process that compiled another shape, another static
argument, another sharding or another program for the same call waits in its collectives
for partners that never come, and the job hangs rather than fails.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: a step this much slower than the fastest process's is called a straggler
STRAGGLER_RATIO = 1.2


#: a dimension's mesh axes in an argument type (``f32[16@d,4]``: JAX writes the sharding
#: of an array whose mesh axes are explicit or known into its type)
_AXES = re.compile(r"@(?:\([^)]*\)|[\w]+)")


def base_signature(signature: str) -> str:
    """``signature`` without mesh axes: what is left is shapes and dtypes."""
    return _AXES.sub("", signature)


@dataclass(frozen=True)
class Variant:
    """What one compile was for: the signature, static arguments and shardings."""

    signature: str
    statics: str
    shardings: str

    def text(self) -> str:
        parts = [self.signature or "()"]
        if self.statics:
            parts.append(f"static {self.statics}")
        return " ".join(parts)


@dataclass
class ProcessInfo:
    """One process as the report shows it (``error`` set when it did not answer)."""

    index: int
    engine: int
    host: str = ""
    pid: int | None = None
    devices: list[str] = field(default_factory=list)
    rss_bytes: int | None = None
    live_array_bytes: int | None = None
    compiles_total: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "engine": self.engine,
            "host": self.host,
            "pid": self.pid,
            "devices": self.devices,
            "rss_bytes": self.rss_bytes,
            "live_array_bytes": self.live_array_bytes,
            "compiles_total": self.compiles_total,
            "error": self.error,
        }


@dataclass
class Cell:
    """One function's compiles in one process: each variant with its program fingerprint."""

    variants: list[tuple[Variant, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "variants": [
                {
                    "signature": v.signature,
                    "statics": v.statics,
                    "shardings": v.shardings,
                    "fingerprint": fp,
                }
                for v, fp in self.variants
            ]
        }


@dataclass
class Row:
    function: str
    cells: dict[int, Cell]  # process index -> its compiles (absent: never compiled)
    diverged: bool = False

    def to_dict(self, processes: Sequence[int]) -> dict[str, Any]:
        return {
            "function": self.function,
            "diverged": self.diverged,
            "cells": [None if p not in self.cells else self.cells[p].to_dict() for p in processes],
        }


@dataclass
class Divergence:
    """One difference between processes, in words (``kind``: "missing", "shape", "static",
    "sharding", "program")."""

    function: str
    kind: str
    processes: list[int]
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "kind": self.kind,
            "processes": self.processes,
            "text": self.text,
        }


@dataclass
class Step:
    process: int
    source: str
    label: str
    seconds: float
    collectives_s: float | None = None
    slowest: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "process": self.process,
            "source": self.source,
            "label": self.label,
            "seconds": self.seconds,
            "collectives_s": self.collectives_s,
            "slowest": self.slowest,
        }


@dataclass
class ClusterReport:
    processes: list[ProcessInfo]
    rows: list[Row]
    divergences: list[Divergence]
    steps: list[Step]
    #: a sentence about the slowest process, when it is a straggler
    straggler: str | None = None
    view: str = "ledger"  # "ledger" | "profile"
    gather_s: float = 0.0
    rows_total: int = 0

    @property
    def process_indices(self) -> list[int]:
        return [p.index for p in self.processes]

    def to_dict(self, max_rows: int | None = None) -> dict[str, Any]:
        rows = self.rows if max_rows is None else self.rows[:max_rows]
        idx = self.process_indices
        return {
            "version": 1,
            "view": self.view,
            "processes": [p.to_dict() for p in self.processes],
            "rows": [r.to_dict(idx) for r in rows],
            "rows_total": len(self.rows),
            "divergences": [d.to_dict() for d in self.divergences],
            "steps": [s.to_dict() for s in self.steps],
            "straggler": self.straggler,
            "gather_s": self.gather_s,
        }


def _plural(ps: Sequence[int]) -> str:
    ps = sorted(ps)
    if len(ps) == 1:
        return f"process {ps[0]}"
    return "processes " + ", ".join(str(p) for p in ps[:-1]) + f" and {ps[-1]}"


_WAIT = "collectives in {f} would wait forever"


def _describe(
    f: str, q: int, v: Variant, ref: int, ref_variants: Sequence[Variant]
) -> tuple[str, str]:
    """(kind, sentence) for process ``q``'s variant ``v`` that process ``ref`` lacks."""
    wait = _WAIT.format(f=f)
    same_sig = [
        r for r in ref_variants if base_signature(r.signature) == base_signature(v.signature)
    ]
    same_static = [r for r in same_sig if r.statics == v.statics]
    if same_static:
        r = same_static[0]
        return "sharding", (
            f"{f}: process {q} compiled {v.signature} with shardings {v.shardings or '?'} "
            f"where process {ref} compiled {r.signature} with {r.shardings or '?'}; {wait}"
        )
    if same_sig:
        r = same_sig[0]
        return "static", (
            f"{f}: process {q} compiled {v.signature} with static {v.statics or '(none)'} "
            f"where process {ref} used {r.statics or '(none)'}; {wait}"
        )
    others = ", ".join(sorted({r.signature for r in ref_variants})) or "nothing"
    return "shape", (
        f"{f}: process {q} compiled {v.text()} that process {ref} never compiled "
        f"(process {ref} compiled {others}); {wait}"
    )


def _divergences(f: str, cells: dict[int, Cell], processes: Sequence[int]) -> list[Divergence]:
    out: list[Divergence] = []
    missing = [p for p in processes if p not in cells]
    if missing:
        has = sorted(cells)
        out.append(
            Divergence(
                f,
                "missing",
                missing,
                f"{f}: {_plural(has)} compiled {f}, {_plural(missing)} never did; "
                + _WAIT.format(f=f),
            )
        )
    present = sorted(cells)
    if len(present) < 2:
        return out
    ref = present[0]
    ref_map = {v: fp for v, fp in cells[ref].variants}
    reported: set[tuple[int, Variant]] = set()
    for q in present[1:]:
        q_map = {v: fp for v, fp in cells[q].variants}
        for v, fp in q_map.items():
            if v in ref_map:
                if ref_map[v] != fp:
                    out.append(
                        Divergence(
                            f,
                            "program",
                            [q],
                            f"{f}: process {q} compiled a different program for {v.text()} "
                            f"than process {ref} (fingerprint {fp} vs {ref_map[v]}); "
                            + _WAIT.format(f=f),
                        )
                    )
                continue
            kind, text = _describe(f, q, v, ref, list(ref_map))
            out.append(Divergence(f, kind, [q], text))
            reported.add((q, v))
        for v in ref_map:
            if v not in q_map and not any(_close(v, w) for (qq, w) in reported if qq == q):
                kind, text = _describe(f, ref, v, q, list(q_map))
                out.append(Divergence(f, kind, [ref, q], text))
    return out


def _close(a: Variant, b: Variant) -> bool:
    """Two variants that are one difference apart (reported once, not from both sides)."""
    return base_signature(a.signature) == base_signature(b.signature) or (
        a.statics == b.statics and a.shardings == b.shardings
    )


def compare(
    snapshots: Sequence[dict[str, Any] | None],
    engines: Sequence[int] | None = None,
    errors: Sequence[str | None] | None = None,
    *,
    view: str = "ledger",
    gather_s: float = 0.0,
) -> ClusterReport:
    """The report for the processes' ``snapshots`` (None where a process did not answer;
    ``errors`` says why), in engine order."""
    engines = list(engines) if engines is not None else list(range(len(snapshots)))
    errors = list(errors) if errors is not None else [None] * len(snapshots)
    processes: list[ProcessInfo] = []
    by_process: dict[int, dict[str, Any]] = {}
    # each process's column: its jax.process_index(), else (engines that are not one
    # program's processes, e.g. attached before jax.distributed: all say 0) its position
    indices = [
        i if snap is None else int(snap.get("process_index", i)) for i, snap in enumerate(snapshots)
    ]
    answered = [indices[i] for i, snap in enumerate(snapshots) if snap is not None]
    by_position = min(answered, default=0) < 0 or len(set(answered)) != len(answered)
    if by_position:
        indices = list(range(len(snapshots)))
    used = {indices[i] for i, snap in enumerate(snapshots) if snap is not None}
    for i, (snap, eng, err) in enumerate(zip(snapshots, engines, errors, strict=True)):
        if snap is None:  # a process that did not answer: its engine id names it
            gone = i if by_position or eng is None else eng
            while gone in used:
                gone += 1
            used.add(gone)
            processes.append(ProcessInfo(index=gone, engine=eng, error=err))
            continue
        idx = indices[i]
        processes.append(
            ProcessInfo(
                index=idx,
                engine=eng,
                host=str(snap.get("host", "")),
                pid=snap.get("pid"),
                devices=list(snap.get("devices", [])),
                rss_bytes=snap.get("rss_bytes"),
                live_array_bytes=snap.get("live_array_bytes"),
                compiles_total=int(snap.get("compiles_total", 0)),
            )
        )
        by_process[idx] = snap
    processes.sort(key=lambda p: p.index)
    alive = sorted(by_process)

    table: dict[str, dict[int, Cell]] = {}
    for p in alive:
        for c in by_process[p].get("compiles", []):
            cells = table.setdefault(str(c["function"]), {})
            cell = cells.setdefault(p, Cell())
            v = Variant(str(c["signature"]), str(c["statics"]), str(c["shardings"]))
            fp = str(c["fingerprint"])
            cell.variants = [(w, f) for w, f in cell.variants if w != v] + [(v, fp)]
    rows: list[Row] = []
    divergences: list[Divergence] = []
    for f, cells in table.items():
        found = _divergences(f, cells, alive)
        rows.append(Row(f, cells, diverged=bool(found)))
        divergences.extend(found)
    rows.sort(key=lambda r: (not r.diverged, r.function))

    steps: list[Step] = []
    key = "profile_step" if view == "profile" else "step"
    for p in alive:
        s = by_process[p].get(key) or (by_process[p].get("step") if view == "profile" else None)
        if s:
            steps.append(
                Step(
                    p,
                    str(s["source"]),
                    str(s["label"]),
                    float(s["seconds"]),
                    s.get("collectives_s"),
                )
            )
    straggler = None
    if len(steps) >= 2:
        slow = max(steps, key=lambda s: s.seconds)
        fast = min(steps, key=lambda s: s.seconds)
        slow.slowest = True
        if fast.seconds > 0 and slow.seconds >= STRAGGLER_RATIO * fast.seconds:
            straggler = (
                f"process {slow.process} is the straggler: its step takes "
                f"{slow.seconds / fast.seconds:.1f}x process {fast.process}'s; every "
                "collective waits for it"
            )
    for info in processes:
        if info.error is not None:
            divergences.insert(0, Divergence("", "gone", [info.index], info.error))
    return ClusterReport(
        processes=processes,
        rows=rows,
        divergences=divergences,
        steps=steps,
        straggler=straggler,
        view=view,
        gather_s=gather_s,
    )


__all__ = [
    "STRAGGLER_RATIO",
    "Cell",
    "ClusterReport",
    "Divergence",
    "ProcessInfo",
    "Row",
    "Step",
    "Variant",
    "compare",
]

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

#: one process's compiles of a function: each variant with its program's fingerprint
#: (empty: the process never compiled the function)
Compiles = frozenset[tuple[Variant, str]]


def _kind(v: Variant, others: Sequence[Variant]) -> tuple[str, Variant | None]:
    """How ``v`` differs from the nearest of ``others``: ("sharding" | "static" | "shape",
    that nearest variant; None for a shape no other has)."""
    same_sig = [r for r in others if base_signature(r.signature) == base_signature(v.signature)]
    same_static = [r for r in same_sig if r.statics == v.statics]
    if same_static:
        return "sharding", same_static[0]
    if same_sig:
        return "static", same_sig[0]
    return "shape", None


def _said(v: Variant, fp: str, kind: str) -> str:
    """One compile in words, with the detail a divergence of ``kind`` turns on."""
    if kind == "sharding":
        return f"{v.text()} with shardings {v.shardings or '?'}"
    if kind == "program":
        return f"{v.text()} as program {fp}"
    return v.text()


def _listed(compiles: Compiles, kind: str) -> str:
    """A process's compiles in words (see :func:`_said`)."""
    return ", ".join(sorted(_said(v, fp, kind) for v, fp in compiles))


def _pair_kind(a: Compiles, b: Compiles) -> str:
    """The kind of the first difference between two processes' (unequal) compiles of a
    function."""
    if not a or not b:
        return "missing"
    if not a - b:  # a's compiles are some of b's: b's others are the difference
        a, b = b, a
    v = min((v for v, _ in a - b), key=lambda v: (v.signature, v.statics, v.shardings))
    b_map = dict(b)
    return "program" if v in b_map else _kind(v, list(b_map))[0]


def _against(
    f: str, odd: list[int], mine: Compiles, ref: list[int], theirs: Compiles
) -> list[Divergence]:
    """How the odd processes ``odd`` (compiles ``mine``) differ from the majority ``ref``
    (compiles ``theirs``), each difference once, naming the odd ones."""
    wait = _WAIT.format(f=f)
    who, them = _plural(odd), _plural(ref)
    if not mine:
        return [
            Divergence(
                f,
                "missing",
                odd,
                f"{f}: {who} never compiled {f}, which {them} compiled "
                f"({_listed(theirs, 'missing')}); {wait}",
            )
        ]
    if not theirs:
        return [
            Divergence(
                f,
                "missing",
                odd,
                f"{f}: {who} compiled {_listed(mine, 'missing')} that {them} never compiled; "
                + wait,
            )
        ]
    out: list[Divergence] = []
    ref_map, odd_map = dict(theirs), dict(mine)
    extra: list[Variant] = []
    for v, fp in sorted(mine - theirs, key=lambda vf: (vf[0].signature, vf[0].statics)):
        if v in ref_map:
            out.append(
                Divergence(
                    f,
                    "program",
                    odd,
                    f"{f}: {who} compiled a different program for {v.text()} than {them} "
                    f"(fingerprint {fp} vs {ref_map[v]}); {wait}",
                )
            )
            continue
        extra.append(v)
        kind, r = _kind(v, list(ref_map))
        if kind == "sharding" and r is not None:
            text = (
                f"{f}: {who} compiled {v.signature} with shardings {v.shardings or '?'} "
                f"where {them} compiled {r.signature} with {r.shardings or '?'}; {wait}"
            )
        elif kind == "static" and r is not None:
            text = (
                f"{f}: {who} compiled {v.signature} with static {v.statics or '(none)'} "
                f"where {them} used {r.statics or '(none)'}; {wait}"
            )
        else:
            text = (
                f"{f}: {who} compiled {v.text()} that {them} never compiled "
                f"({them} compiled {_listed(theirs, kind)}); {wait}"
            )
        out.append(Divergence(f, kind, odd, text))
    for v in sorted(set(ref_map) - set(odd_map), key=lambda v: (v.signature, v.statics)):
        if any(_close(v, w) for w in extra):
            continue  # the same difference, already said from the odd processes' side
        kind = _kind(v, list(odd_map))[0]
        out.append(
            Divergence(
                f,
                kind,
                odd,
                f"{f}: {who} never compiled {_said(v, ref_map[v], kind)}, which {them} compiled "
                f"({who} compiled {_listed(mine, kind)}); {wait}",
            )
        )
    return out


def _divergences(f: str, cells: dict[int, Cell], processes: Sequence[int]) -> list[Divergence]:
    """Where the processes' compiles of ``f`` differ, said against the majority: the set of
    compiles most processes share is the reference, and each other set's processes are
    named as the odd ones out (so a process 0 that differs is named, not the others).
    When the largest sets tie (two processes that differ, or 2 + 2 + 1 of five), no process
    is singled out: the sentence lists what each set's processes compiled."""
    groups: dict[Compiles, list[int]] = {}
    for p in processes:
        groups.setdefault(frozenset(cells[p].variants) if p in cells else frozenset(), []).append(p)
    if len(groups) < 2:
        return []
    ranked = sorted(groups.items(), key=lambda g: (-len(g[1]), g[1][0]))
    (theirs, ref), (second, runner_up) = ranked[0], ranked[1]
    if len(runner_up) < len(ref):
        out: list[Divergence] = []
        for mine, odd in ranked[1:]:
            out.extend(_against(f, odd, mine, ref, theirs))
        return out
    kind = _pair_kind(theirs, second)
    said = "; ".join(
        f"{_plural(ps)} compiled {_listed(c, kind)}" if c else f"{_plural(ps)} never compiled {f}"
        for c, ps in ranked
    )
    even = len({len(ps) for _, ps in ranked}) == 1
    split = "the processes split evenly" if even else "the largest groups are the same size"
    return [
        Divergence(
            f,
            kind,
            sorted(processes),
            f"{f}: {split}, so none is the odd one out: {said}; " + _WAIT.format(f=f),
        )
    ]


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

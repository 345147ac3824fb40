"""The side panel's comm messages, built from engine records as plain dicts.

Pure functions: records in, JSON-ready dicts out, one per message type or definition of
the side panel's comm schema (``workbench.schemas.comm_schema()``: the contract with the
JupyterLab extension; tests validate every message against it).  Nothing here sends, batches or
keeps state: :mod:`workbench.ipython.sidepanel` does that.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from workbench.engine.bench.result import Benchmark
from workbench.engine.cache.records import CompileRecord
from workbench.engine.common.source import SourceLine, cell_label
from workbench.engine.live.fingerprint import Group, LiveDiff
from workbench.engine.monitor.memory import KernelInfo, MemorySample
from workbench.views._html import source_label

#: the ``protocol`` of every message; bumped on an incompatible change
PROTOCOL = 1
#: the comm target both sides register
COMM_TARGET = "jax-workbench"

Message = dict[str, Any]


def _number(value: float | None) -> float | None:
    """A figure from JAX or XLA (a cost estimate, a timing) as the schema's nullable
    number: NaN and infinities become None.  Why: Jupyter's packer refuses them (and
    then sends them as strings with a warning into the running cell's output), and no
    front end could draw them anyway."""
    if value is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return float(value) if math.isfinite(value) else None


def quoted(value: Any, limit: int = 80) -> str:
    """A front end's value quoted in an ``error`` (bounded: a bad message may be huge)."""
    text = repr(value) if not isinstance(value, str) else repr(value[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _message(kind: str, **fields: Any) -> Message:
    return {"protocol": PROTOCOL, "type": kind, **fields}


def announce(version: str) -> Message:
    """The data of the comm the kernel opens on ``%load_ext workbench``."""
    return _message("announce", version=version)


def cleared() -> Message:
    return _message("cleared")


def bye() -> Message:
    return _message("bye")


def error(text: str) -> Message:
    """The answer to a message the kernel could not use; the comm stays open."""
    return _message("error", message=text)


def kernel_info(info: KernelInfo) -> dict[str, Any]:
    return info.to_dict()


def memory_sample(sample: MemorySample) -> dict[str, Any]:
    return sample.to_dict()


def records(recs: Iterable[CompileRecord]) -> list[dict[str, Any]]:
    """Ledger records as the cache payload writes them (the schema's ``compile_record``)."""
    return [r.to_dict() for r in recs]


def cell_badge(
    recs: Sequence[CompileRecord], cell: str, cell_id: str | None, run: int, t: float
) -> dict[str, Any]:
    """What one run of one cell traced, lowered and compiled: the user's functions.

    The workbench's own inspections (``%%jaxpr``, ``%%hlo``...) are counted apart, as
    ``inspections``, and JAX's helper compiles (the tiny programs of eager ops such as
    ``jnp.ones``: 20 of them in a cell that builds an NNX model) as ``helper_compiles``:
    neither is the user's program compiling, and a badge that counted them would say
    "21 compiles" of a cell with one.  ``misses`` are recompiles (a function compiled
    before missed the cache); ``first_reason`` is the first one's first reason, as text.
    """
    compiles = traces = lowers = misses = hits = inspections = helpers = 0
    seconds = helper_s = 0.0
    first_reason: str | None = None
    for r in recs:
        if r.origin == "workbench":
            inspections += 1
            continue
        if r.origin == "jax":
            if r.kind == "compile":
                helpers += 1
            helper_s += r.total_s
            continue
        if r.kind == "compile":
            compiles += 1
        if r.trace_s is not None:
            traces += 1
        if r.lower_s is not None:
            lowers += 1
        seconds += r.total_s
        if r.persistent_cache == "hit":
            hits += 1
        if r.is_recompile:
            misses += 1
            if first_reason is None:
                first = next((x for x in r.reasons if x.kind != "new_function"), None)
                first_reason = first.text() if first is not None else None
    return {
        "cell": cell,
        "cell_id": cell_id,
        "run": run,
        "t": t,
        "compiles": compiles,
        "traces": traces,
        "lowers": lowers,
        "compile_s": seconds,
        "misses": misses,
        "first_reason": first_reason,
        "persistent_hits": hits,
        "inspections": inspections,
        "helper_compiles": helpers,
        "helper_s": helper_s,
    }


def bench_summary(
    bench: Benchmark, cell: str | None, cell_id: str | None, t: float
) -> dict[str, Any]:
    """The panel's line for one benchmark: the headline median (first variant, first
    point), its best sample, how many calls were timed."""
    first = bench.measurements[0] if bench.measurements else None
    best = first.stats.min if first is not None and first.stats is not None else None
    runs = sum(len(m.samples) * max(m.number, 1) for m in bench.measurements)
    return {
        "label": bench.label,
        "cell": cell,
        "cell_id": cell_id,
        "t": t,
        "median_s": _number(bench.median),
        "best_s": _number(best),
        "runs": runs,
        "variants": list(bench.variants),
        "interrupted": bool(bench.interrupted),
    }


def _line(source: SourceLine | None) -> dict[str, Any] | None:
    """A source line in the ledger's ``call_site`` form (text always a string, no column)."""
    if source is None:
        return None
    return {
        "file": source.file,
        "line": max(int(source.line), 0),
        "function": source.function,
        "text": source.text or "",
    }


def _group(g: Group, cell: str | None, cell_id: str | None) -> dict[str, Any]:
    out = {
        "what": g.what,
        "line": _line(g.line),
        "count": g.count,
        "examples": list(g.examples[:3]),
    }
    if g.line is not None and g.line.line > 0:
        out["label"] = diff_line_label(g.line, cell, cell_id)
    return out


def diff_line_label(line: SourceLine, cell: str | None, cell_id: str | None) -> str:
    """Where a diffed line is, as the user reads it: ``cell [8] line 9``.  A line of the
    re-run cell itself (either run: the previous one was compiled under the cell's old
    number) is named by the cell's prompt number now, ``cell``; another cell by its own."""
    known = cell_label(line.file)
    if (
        known is not None
        and cell is not None
        and (cell_id is not None and known.cell_id == cell_id)
    ):
        return f"cell [{cell}] line {line.line}"
    return source_label(line.file, line.line)[0]


def live_diff(diff: LiveDiff, cell: str | None, cell_id: str | None) -> dict[str, Any]:
    return {
        "cell": cell,
        "cell_id": cell_id,
        "kind": diff.kind,
        "t": diff.t,
        "function": diff.function,
        "added": [_group(g, cell, cell_id) for g in diff.added],
        "removed": [_group(g, cell, cell_id) for g in diff.removed],
        "totals": [
            {"name": c.name, "before": _number(c.before), "after": _number(c.after), "unit": c.unit}
            for c in diff.totals
        ],
    }


def snapshot(
    version: str,
    info: KernelInfo,
    recs: Iterable[CompileRecord],
    dropped: int,
    cells: Sequence[dict[str, Any]],
    memory: Sequence[dict[str, Any]],
    benchmarks: Sequence[dict[str, Any]],
    diffs: Sequence[dict[str, Any]],
    memory_dropped: int = 0,
) -> Message:
    """The answer to ``hello``: everything the panel shows, as of now.  ``memory`` is
    the kept history since load (samples are taken whether a panel listens or not, so a
    panel opened late charts every cell that ran); ``memory_dropped`` counts the older
    samples the kernel no longer holds."""
    return _message(
        "snapshot",
        version=version,
        kernel=kernel_info(info),
        records=records(recs),
        dropped=dropped,
        cells=list(cells),
        memory=list(memory),
        memory_dropped=max(int(memory_dropped), 0),
        benchmarks=list(benchmarks),
        diffs=list(diffs),
    )


def update(
    recs: Sequence[CompileRecord] = (),
    dropped: int = 0,
    cells: Sequence[dict[str, Any]] = (),
    memory: Sequence[dict[str, Any]] = (),
    benchmarks: Sequence[dict[str, Any]] = (),
    diffs: Sequence[dict[str, Any]] = (),
    kernel: KernelInfo | None = None,
) -> Message:
    """A batch of news; empty lists are left out (the schema allows any to be absent).
    ``kernel``: the devices, once JAX started after the snapshot."""
    msg = _message("update")
    if kernel is not None:
        msg["kernel"] = kernel_info(kernel)
    if recs:
        msg["records"] = records(recs)
    if dropped:
        msg["dropped"] = dropped
    for name, items in (
        ("cells", cells),
        ("memory", memory),
        ("benchmarks", benchmarks),
        ("diffs", diffs),
    ):
        if items:
            msg[name] = list(items)
    return msg


__all__ = [
    "COMM_TARGET",
    "PROTOCOL",
    "Message",
    "announce",
    "bench_summary",
    "bye",
    "cell_badge",
    "cleared",
    "error",
    "kernel_info",
    "live_diff",
    "memory_sample",
    "quoted",
    "records",
    "snapshot",
    "update",
]

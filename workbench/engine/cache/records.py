"""The cache feature's records: plain data about what JAX traced, lowered and compiled.

Records hold strings and numbers only (never arrays or functions), so a snapshot can be
kept, compared and serialised; each has ``to_dict()`` for its MIME payload (schemas in
``docs/mime-cache.md``).  Nothing here talks to JAX: the tracker fills these in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.engine.cache.reasons import MissReason
from workbench.engine.common.source import SourceLine

#: The ``version`` of every cache payload.
SCHEMA_VERSION = 1

#: The cell of a compile made outside any cell (a thread started before the cell ran).
BACKGROUND = "background"

#: A :class:`CompileRecord`'s ``kind``s, in the order the stages run.
STAGES = ("trace", "lower", "compile")


def _stage(kind: str) -> int:
    return STAGES.index(kind) if kind in STAGES else len(STAGES) - 1


@dataclass
class CompileRecord:
    """One compile (or a trace/lowering that stopped short of one) of one function.

    ``kind`` is ``"compile"`` when XLA compiled (or the persistent cache answered),
    ``"lower"`` / ``"trace"`` for ``f.lower(...)`` / ``f.trace(...)``-style work
    that never reached XLA.  ``origin`` is ``"jax"`` for compiles JAX does for its
    own eager helpers (``convert_element_type``, ``broadcast_in_dim``...),
    ``"workbench"`` for the workbench's own inspection of a call (``%%jaxpr``,
    ``%%hlo``, ``workbench.inspect``, the mesh explorer: ``inspected_by`` names it),
    else ``"user"``.  A workbench record is never a recompile of the user's and never
    the earlier compile a later call is compared with.  ``persistent_cache`` is None
    when no cache directory is set.
    """

    function: str
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None
    kind: str = "compile"
    origin: str = "user"
    cell: str = BACKGROUND
    cell_run: int | None = None
    #: the notebook's id of the cell (JupyterLab's ``cellId``); None outside a notebook
    cell_id: str | None = None
    thread: str = ""
    reasons: list[MissReason] = field(default_factory=list)
    #: the user's line that made the call which compiled
    call_site: SourceLine | None = None
    defined_at: str | None = None
    key: str = ""
    persistent_cache: str | None = None  # "hit" | "miss" | "written"
    persistent_note: str | None = None  # JAX's reason for not writing an entry
    time_saved_s: float | None = None
    jax_explanation: str | None = None
    #: what inspected the call when ``origin == "workbench"`` ("%%hlo", "workbench.inspect")
    inspected_by: str | None = None
    started: float = 0.0
    seq: int = 0

    @property
    def total_s(self) -> float:
        return sum(t for t in (self.trace_s, self.lower_s, self.compile_s) if t is not None)

    @property
    def is_recompile(self) -> bool:
        """A miss of a function already compiled before (not its first compile)."""
        return any(r.kind not in ("new_function",) for r in self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "trace_s": self.trace_s,
            "lower_s": self.lower_s,
            "compile_s": self.compile_s,
            "total_s": self.total_s,
            "kind": self.kind,
            "origin": self.origin,
            "cell": self.cell,
            "cell_run": self.cell_run,
            "cell_id": self.cell_id,
            "thread": self.thread,
            "reasons": [r.to_dict() for r in self.reasons],
            "call_site": None if self.call_site is None else self.call_site.to_dict(),
            "defined_at": self.defined_at,
            "key": self.key,
            "persistent_cache": self.persistent_cache,
            "persistent_note": self.persistent_note,
            "time_saved_s": self.time_saved_s,
            "jax_explanation": self.jax_explanation,
            "inspected_by": self.inspected_by,
            "started": self.started,
            "seq": self.seq,
        }


@dataclass(kw_only=True)
class CompileTotals:
    """Counts and seconds of trace/lower/compile work, summed over compile records.

    One type (and one :meth:`add`) for the per-function table and the per-cell line, so
    the two can never count a record differently.
    """

    compiles: int = 0
    traces: int = 0
    lowers: int = 0
    trace_s: float = 0.0
    lower_s: float = 0.0
    compile_s: float = 0.0
    persistent_hits: int = 0
    time_saved_s: float = 0.0

    def add(self, rec: CompileRecord) -> None:
        """Count ``rec``'s stages: a stage that did not run (None) adds nothing."""
        if rec.trace_s is not None:
            self.traces += 1
            self.trace_s += rec.trace_s
        if rec.lower_s is not None:
            self.lowers += 1
            self.lower_s += rec.lower_s
        if rec.kind == "compile":
            self.compiles += 1
            self.compile_s += rec.compile_s or 0.0
        if rec.persistent_cache == "hit":
            self.persistent_hits += 1
            self.time_saved_s += rec.time_saved_s or 0.0

    def totals_dict(self) -> dict[str, Any]:
        return {
            "compiles": self.compiles,
            "traces": self.traces,
            "lowers": self.lowers,
            "trace_s": self.trace_s,
            "lower_s": self.lower_s,
            "compile_s": self.compile_s,
            "persistent_hits": self.persistent_hits,
            "time_saved_s": self.time_saved_s,
        }


@dataclass
class FunctionStats(CompileTotals):
    """Everything the cache tracker knows about one function (one definition site)."""

    key: str
    function: str
    origin: str = "user"
    defined_at: str | None = None
    #: executables compiled for this function's objects that are still alive, since the
    #: tracker last saw their cache emptied (a recompile with an identical signature, or
    #: ``%jaxcache clear``): JAX announces neither ``jax.clear_caches()`` nor
    #: ``f.clear_cache()``, so right after those this can be higher than JAX's own count.
    entries: int = 0
    #: every recompile (a miss of a function compiled before); ``misses`` keeps the
    #: latest records only, this counts them all
    recompiles: int = 0
    misses: list[CompileRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "function": self.function,
            "origin": self.origin,
            "defined_at": self.defined_at,
            **self.totals_dict(),
            "entries": self.entries,
            "recompiles": self.recompiles,
            "misses": [m.to_dict() for m in self.misses],
        }


@dataclass
class PersistentCacheStatus:
    """JAX's persistent compilation cache: its settings and what it did this session."""

    directory: str | None
    min_compile_time_s: float
    min_entry_size_bytes: int
    max_size_bytes: int
    hits: int = 0
    misses: int = 0
    written: int = 0
    time_saved_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "min_compile_time_s": self.min_compile_time_s,
            "min_entry_size_bytes": self.min_entry_size_bytes,
            "max_size_bytes": self.max_size_bytes,
            "hits": self.hits,
            "misses": self.misses,
            "written": self.written,
            "time_saved_s": self.time_saved_s,
        }


@dataclass
class FunctionGroup(CompileTotals):
    """One function's activity within one cell (a line of the cell summary)."""

    function: str
    origin: str
    persistent_written: int = 0
    reasons: list[MissReason] = field(default_factory=list)
    #: for each reason, the ``kind`` of the record it came from (``"compile"``, ``"lower"``
    #: or ``"trace"``): a cell can compile a function once and only trace it again
    #: (``jax.make_jaxpr``), and those reasons are retraces, not recompiles
    reasons_from: list[str] = field(default_factory=list)
    call_sites: list[SourceLine] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # for the grouped JAX helpers
    #: for a workbench group: what inspected the call ("%%jaxpr", "%%hlo" ...)
    inspected_by: list[str] = field(default_factory=list)

    @property
    def total_s(self) -> float:
        return self.trace_s + self.lower_s + self.compile_s

    def reason_from(self, i: int) -> str:
        """The kind of record reason ``i`` came from; a group built without
        ``reasons_from`` falls back to the furthest stage the group reached."""
        if i < len(self.reasons_from):
            return self.reasons_from[i]
        return "compile" if self.compiles else "lower" if self.lowers else "trace"

    def add_reasons(self, rec: CompileRecord) -> None:
        """Add ``rec``'s recompile reasons (not a first compile's), each once: a reason
        seen again from a further stage (traced, then compiled) takes that stage."""
        for r in rec.reasons:
            if r.kind == "new_function":
                continue
            text = r.text()
            at = next((i for i, old in enumerate(self.reasons) if old.text() == text), None)
            if at is None:
                self.reasons.append(r)
                self.reasons_from.append(rec.kind)
            elif _stage(rec.kind) > _stage(self.reason_from(at)):
                self.reasons_from[at] = rec.kind

    def to_dict(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "origin": self.origin,
            **self.totals_dict(),
            "total_s": self.total_s,
            "persistent_written": self.persistent_written,
            "reasons": [r.to_dict() for r in self.reasons],
            "reasons_from": self.reasons_from,
            "call_sites": [c.to_dict() for c in self.call_sites],
            "names": self.names,
            "inspected_by": self.inspected_by,
        }


@dataclass
class CellSummary:
    """What one cell traced, lowered and compiled: user functions, then JAX's helpers."""

    cell: str
    groups: list[FunctionGroup]
    jax_helpers: FunctionGroup | None
    #: the notebook's id of the cell (JupyterLab's ``cellId``), when it ran in one
    cell_id: str | None = None

    @property
    def empty(self) -> bool:
        return not self.groups and self.jax_helpers is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SCHEMA_VERSION,
            "cell": self.cell,
            "cell_id": self.cell_id,
            "functions": [g.to_dict() for g in self.groups],
            "jax_helpers": None if self.jax_helpers is None else self.jax_helpers.to_dict(),
        }


@dataclass
class CacheSnapshot:
    """A consistent copy of what the tracker saw: every function, every record, and the
    persistent cache (``workbench.cache()``, ``%jaxcache``)."""

    functions: list[FunctionStats]
    records: list[CompileRecord]
    persistent: PersistentCacheStatus

    def to_dict(
        self, max_records: int | None = None, max_functions: int | None = None
    ) -> dict[str, Any]:
        """The payload; ``max_records`` keeps the newest records only and
        ``max_functions`` the first rows (the user's, the most expensive first);
        ``records_total`` / ``functions_total`` say how many there were, so a long
        session's ``%jaxcache`` stays quick."""
        recs = (
            self.records
            if max_records is None
            else self.records[len(self.records) - max_records :]
            if max_records > 0
            else []
        )
        funcs = self.functions if max_functions is None else self.functions[:max_functions]
        return {
            "version": SCHEMA_VERSION,
            "functions": [f.to_dict() for f in funcs],
            "functions_total": len(self.functions),
            "records": [r.to_dict() for r in recs],
            "records_total": len(self.records),
            "persistent_cache": self.persistent.to_dict(),
        }


__all__ = [
    "BACKGROUND",
    "SCHEMA_VERSION",
    "CacheSnapshot",
    "CellSummary",
    "CompileTotals",
    "CompileRecord",
    "FunctionGroup",
    "FunctionStats",
    "PersistentCacheStatus",
]

"""The compile ledger: every trace, lowering and XLA compile JAX does, as plain records.

JAX reports each stage through ``jax.monitoring`` (trace, lower-to-MLIR and backend
compile durations, persistent-cache events).  The ledger listens to those, groups
the stages a thread runs back to back into one :class:`CompileRecord`, asks
:mod:`.miss_reasons` why the call missed the cache, and attributes the record to
the notebook cell that was running (the observatory front door tells the ledger
via :meth:`Ledger.begin_cell` / :meth:`Ledger.end_cell`) or to ``"background"``.

Design constraints, and how they are met:

- *off the hot path*: JAX records these events only when it traces, lowers or
  compiles; a cached call runs none of our code.
- *no strong references*: records hold strings and numbers; functions are kept
  through ``weakref`` only (to count live cache entries), never arrays.
- *thread-safe*: stages are grouped per thread (the listener runs on the thread
  that compiles); shared tables are guarded by one lock.

``capture_compiles()`` is the Python API other engine modules (the benchmark
sampler) use; it works whether or not the observatory is loaded.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jax

from . import _jax_compat as compat
from .errors import is_user_file
from .miss_reasons import MissReason, Signature, closest_diff, parse_jax_explanation

SCHEMA_VERSION = 1
MAX_RECORDS = 10_000
MAX_SIGNATURES = 64

PCACHE_REQUEST = "/jax/compilation_cache/compile_requests_use_cache"
PCACHE_HIT = "/jax/compilation_cache/cache_hits"
PCACHE_WRITE = "/jax/compilation_cache/cache_misses"  # JAX records this when it writes an entry
PCACHE_SAVED = "/jax/compilation_cache/compile_time_saved_sec"
PCACHE_RETRIEVAL = "/jax/compilation_cache/cache_retrieval_time_sec"

BACKGROUND = "background"


@dataclass
class CallSite:
    """The user's line that made the call which compiled."""

    file: str
    line: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.text}


@dataclass
class CompileRecord:
    """One compile (or a trace/lowering that stopped short of one) of one function.

    ``kind`` is ``"compile"`` when XLA compiled (or the persistent cache answered),
    ``"lower"`` / ``"trace"`` for ``f.lower(...)`` / ``f.trace(...)``-style work
    that never reached XLA.  ``origin`` is ``"jax"`` for compiles JAX does for its
    own eager helpers (``convert_element_type``, ``broadcast_in_dim``...), else
    ``"user"``.  ``persistent_cache`` is None when no cache directory is set.
    """

    function: str
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None
    kind: str = "compile"
    origin: str = "user"
    cell: str = BACKGROUND
    cell_run: int | None = None
    thread: str = ""
    reasons: list[MissReason] = field(default_factory=list)
    call_site: CallSite | None = None
    defined_at: str | None = None
    key: str = ""
    persistent_cache: str | None = None  # "hit" | "miss" | "written"
    persistent_note: str | None = None  # JAX's reason for not writing an entry
    time_saved_s: float | None = None
    jax_explanation: str | None = None
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
            "function": self.function, "trace_s": self.trace_s, "lower_s": self.lower_s,
            "compile_s": self.compile_s, "total_s": self.total_s, "kind": self.kind,
            "origin": self.origin, "cell": self.cell, "cell_run": self.cell_run,
            "thread": self.thread, "reasons": [r.to_dict() for r in self.reasons],
            "call_site": None if self.call_site is None else self.call_site.to_dict(),
            "defined_at": self.defined_at, "key": self.key,
            "persistent_cache": self.persistent_cache, "persistent_note": self.persistent_note,
            "time_saved_s": self.time_saved_s,
            "jax_explanation": self.jax_explanation, "started": self.started, "seq": self.seq,
        }


@dataclass
class FunctionStats:
    """Everything the ledger knows about one function (one definition site)."""

    key: str
    function: str
    origin: str = "user"
    defined_at: str | None = None
    compiles: int = 0
    traces: int = 0
    lowers: int = 0
    trace_s: float = 0.0
    lower_s: float = 0.0
    compile_s: float = 0.0
    persistent_hits: int = 0
    time_saved_s: float = 0.0
    entries: int = 0
    misses: list[CompileRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key, "function": self.function, "origin": self.origin,
            "defined_at": self.defined_at, "compiles": self.compiles, "traces": self.traces,
            "lowers": self.lowers, "trace_s": self.trace_s, "lower_s": self.lower_s,
            "compile_s": self.compile_s, "persistent_hits": self.persistent_hits,
            "time_saved_s": self.time_saved_s, "entries": self.entries,
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
        return {"directory": self.directory, "min_compile_time_s": self.min_compile_time_s,
                "min_entry_size_bytes": self.min_entry_size_bytes,
                "max_size_bytes": self.max_size_bytes, "hits": self.hits,
                "misses": self.misses, "written": self.written,
                "time_saved_s": self.time_saved_s}


def persistent_cache_settings() -> PersistentCacheStatus:
    cfg = jax.config
    return PersistentCacheStatus(
        directory=cfg.jax_compilation_cache_dir,
        min_compile_time_s=float(cfg.jax_persistent_cache_min_compile_time_secs),
        min_entry_size_bytes=int(cfg.jax_persistent_cache_min_entry_size_bytes),
        max_size_bytes=int(cfg.jax_compilation_cache_max_size))


@dataclass
class FunctionGroup:
    """One function's activity within one cell (a line of the cell summary)."""

    function: str
    origin: str
    compiles: int = 0
    traces: int = 0
    lowers: int = 0
    trace_s: float = 0.0
    lower_s: float = 0.0
    compile_s: float = 0.0
    persistent_hits: int = 0
    persistent_written: int = 0
    time_saved_s: float = 0.0
    reasons: list[MissReason] = field(default_factory=list)
    call_sites: list[CallSite] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # for the grouped JAX helpers

    @property
    def total_s(self) -> float:
        return self.trace_s + self.lower_s + self.compile_s

    def to_dict(self) -> dict[str, Any]:
        return {"function": self.function, "origin": self.origin, "compiles": self.compiles,
                "traces": self.traces, "lowers": self.lowers, "trace_s": self.trace_s,
                "lower_s": self.lower_s, "compile_s": self.compile_s, "total_s": self.total_s,
                "persistent_hits": self.persistent_hits,
                "persistent_written": self.persistent_written, "time_saved_s": self.time_saved_s,
                "reasons": [r.to_dict() for r in self.reasons],
                "call_sites": [c.to_dict() for c in self.call_sites], "names": self.names}


@dataclass
class CellSummary:
    """What one cell traced, lowered and compiled: user functions, then JAX's helpers."""

    cell: str
    groups: list[FunctionGroup]
    jax_helpers: FunctionGroup | None

    @property
    def empty(self) -> bool:
        return not self.groups and self.jax_helpers is None

    def to_dict(self) -> dict[str, Any]:
        return {"version": SCHEMA_VERSION, "cell": self.cell,
                "functions": [g.to_dict() for g in self.groups],
                "jax_helpers": None if self.jax_helpers is None else self.jax_helpers.to_dict()}


@dataclass
class LedgerSnapshot:
    """A consistent copy of the ledger: every function, every record, the persistent cache."""

    functions: list[FunctionStats]
    records: list[CompileRecord]
    persistent: PersistentCacheStatus

    def to_dict(self) -> dict[str, Any]:
        return {"version": SCHEMA_VERSION, "functions": [f.to_dict() for f in self.functions],
                "records": [r.to_dict() for r in self.records],
                "persistent_cache": self.persistent.to_dict()}


class _Pending:
    """The record a thread is building between its trace, lower and compile events."""

    __slots__ = ("record", "lowered_name", "pcache_requested")

    def __init__(self, record: CompileRecord) -> None:
        self.record = record
        self.lowered_name: str | None = None
        self.pcache_requested = False


class _FunctionState:
    """Per-function bookkeeping that is not part of the public record."""

    def __init__(self, stats: FunctionStats) -> None:
        self.stats = stats
        # id(live function object) -> (weakref, signatures it compiled, live entries)
        self.objects: dict[int, list[Any]] = {}


def _user_call_site(skip: int = 2) -> CallSite | None:
    """The innermost frame of user code on the stack (the line that made the call)."""
    import linecache

    frame = sys._getframe(skip)
    try:
        while frame is not None:
            fname = frame.f_code.co_filename
            if is_user_file(fname):
                line = frame.f_lineno
                return CallSite(fname, line, linecache.getline(fname, line).strip())
            frame = frame.f_back
        return None
    finally:
        del frame


def _function_key(fun: Any, name: str) -> tuple[str, str | None]:
    code = getattr(compat.innermost_function(fun), "__code__", None)
    if code is None:
        return f"{name}@?", None
    # JAX's eager helpers share one code object, so the traced name is part of the key.
    where = f"{code.co_filename}:{code.co_firstlineno}"
    return f"{name}@{where}", where


class Ledger:
    """Listens to JAX's compile events while installed; keeps records and per-function stats.

    ``install()``/``uninstall()`` are reference-counted, so the observatory and any
    number of ``capture_compiles()`` blocks can share one set of listeners.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._users = 0
        self._pending: dict[int, _Pending] = {}
        self._explanations: dict[int, str] = {}
        self._records: deque[CompileRecord] = deque(maxlen=MAX_RECORDS)
        self._functions: dict[str, _FunctionState] = {}
        self._by_name: dict[str, str] = {}
        self._captures: list[tuple[int, list[CompileRecord], bool]] = []
        self._seq = itertools.count(1)
        self._cell: str | None = None
        self._cell_run: int | None = None
        self._cell_runs = itertools.count(1)
        self._cell_thread: int | None = None
        self._cleared_at = 0
        self._pcache = {"hits": 0, "misses": 0, "written": 0, "saved": 0.0}
        self._log_filter = _ExplainFilter(self)
        # True only while the observatory itself turned jax_explain_cache_misses on: then
        # JAX's warnings are read but not printed; a user who asked for them sees them.
        self.swallow_explanations = False

    # -- installation -------------------------------------------------------------------
    @property
    def installed(self) -> bool:
        return self._users > 0

    def install(self) -> None:
        with self._lock:
            self._users += 1
            if self._users > 1:
                return
        jax.monitoring.register_event_duration_secs_listener(self._on_duration)
        jax.monitoring.register_event_listener(self._on_event)
        for name in compat.EXPLAIN_LOGGERS:
            logging.getLogger(name).addFilter(self._log_filter)

    def uninstall(self) -> None:
        with self._lock:
            if self._users == 0:
                return
            self._users -= 1
            if self._users > 0:
                return
            self._pending.clear()
            self._explanations.clear()
        compat.unregister_monitoring_listener("duration", self._on_duration)
        compat.unregister_monitoring_listener("event", self._on_event)
        for name in compat.EXPLAIN_LOGGERS:
            logging.getLogger(name).removeFilter(self._log_filter)

    def listeners(self) -> tuple[Any, Any, Any]:
        """(duration listener, event listener, log filter), for tests of a clean unload."""
        return self._on_duration, self._on_event, self._log_filter

    # -- cell attribution ---------------------------------------------------------------
    def begin_cell(self, label: str) -> int:
        """A cell starts on this thread: until ``end_cell``, compiles are attributed to it."""
        with self._lock:
            self._cell = label
            self._cell_run = next(self._cell_runs)
            self._cell_thread = threading.get_ident()
            return self._cell_run

    def relabel_cell(self, cell_run: int, label: str) -> None:
        """Give one cell run's records their final label (IPython knows the cell's number
        for sure only after it ran: 9.x has already incremented it in ``pre_run_cell``)."""
        with self._lock:
            for rec in self._records:
                if rec.cell_run == cell_run:
                    rec.cell = label

    def end_cell(self) -> int | None:
        """The cell ended: finish this thread's half-built record; return the run's number."""
        with self._lock:
            self._flush(threading.get_ident())
            run = self._cell_run
            self._cell = self._cell_run = self._cell_thread = None
            return run

    # -- JAX listeners (run only when JAX traces, lowers or compiles) -------------------
    def _on_duration(self, event: str, duration: float, **kwargs: Any) -> None:
        try:
            self._handle_duration(event, duration, kwargs)
        except Exception:  # a bookkeeping bug must never break the user's JAX call
            logging.getLogger(__name__).debug("ledger: duration event failed", exc_info=True)

    def _on_event(self, event: str, **kwargs: Any) -> None:
        if event not in (PCACHE_REQUEST, PCACHE_HIT, PCACHE_WRITE):
            return
        try:
            self._handle_event(event)
        except Exception:
            logging.getLogger(__name__).debug("ledger: event failed", exc_info=True)

    def _handle_duration(self, event: str, duration: float, kwargs: dict[str, Any]) -> None:
        if event == compat.TRACE_EVENT:
            self._on_trace(duration, str(kwargs.get("fun_name", "?")))
        elif event == compat.LOWER_EVENT:
            self._on_lower(duration, str(kwargs.get("fun_name", "?")))
        elif event == compat.COMPILE_EVENT:
            self._on_compile(duration, str(kwargs.get("fun_name", "?")))
        elif event == PCACHE_SAVED:
            with self._lock:
                p = self._pending.get(threading.get_ident())
                if p is not None:
                    p.record.time_saved_s = duration
                self._pcache["saved"] += duration  # negative when reading cost more

    def _handle_event(self, event: str) -> None:
        with self._lock:
            p = self._pending.get(threading.get_ident())
            if event == PCACHE_HIT:
                self._pcache["hits"] += 1
                if p is not None:
                    p.record.persistent_cache = "hit"
            elif event == PCACHE_WRITE:
                self._pcache["written"] += 1
                if p is not None:
                    p.record.persistent_cache = "written"
            elif p is not None:
                p.pcache_requested = True

    def _on_explanation(self, text: str) -> None:
        with self._lock:
            self._explanations[threading.get_ident()] = text

    def _on_persistent_note(self, text: str) -> None:
        with self._lock:
            p = self._pending.get(threading.get_ident())
            if p is not None:
                p.record.persistent_note = text

    def _new_record(self, function: str) -> CompileRecord:
        # A compile belongs to the cell running at the time, whichever thread does it
        # (the cell started that work); with no cell running it is "background".
        return CompileRecord(
            function=function, cell=self._cell if self._cell is not None else BACKGROUND,
            cell_run=self._cell_run, thread=threading.current_thread().name,
            started=time.time())

    def _on_trace(self, duration: float, fun_name: str) -> None:
        site = compat.jit_trace_site()
        call_site = _user_call_site(3)
        tid = threading.get_ident()
        with self._lock:
            self._flush(tid)
            rec = self._new_record(f"jit({fun_name})")
            rec.trace_s = duration
            rec.kind = "trace"
            rec.call_site = call_site
            explanation = self._explanations.pop(tid, None)
            if explanation is not None and fun_name in explanation:
                rec.jax_explanation = explanation
            self._explain(rec, site, fun_name)
            self._pending[tid] = _Pending(rec)

    def _on_lower(self, duration: float, fun_name: str) -> None:
        tid = threading.get_ident()
        with self._lock:
            p = self._pending.get(tid)
            if p is None or p.lowered_name is not None:
                self._flush(tid)
                p = self._pending[tid] = _Pending(self._new_record(fun_name))
                p.record.call_site = _user_call_site(3)
                self._attach_by_name(p.record)
            p.lowered_name = fun_name
            p.record.function = fun_name
            p.record.lower_s = duration
            p.record.kind = "lower"

    def _on_compile(self, duration: float, fun_name: str) -> None:
        tid = threading.get_ident()
        with self._lock:
            p = self._pending.get(tid)
            if p is None or (p.lowered_name is not None and p.lowered_name != fun_name):
                self._flush(tid)
                p = _Pending(self._new_record(fun_name))
                p.record.call_site = _user_call_site(3)
                self._attach_by_name(p.record)
            self._pending.pop(tid, None)
            rec = p.record
            rec.compile_s = duration
            rec.kind = "compile"
            if p.pcache_requested and rec.persistent_cache is None and \
                    jax.config.jax_compilation_cache_dir:
                rec.persistent_cache = "miss"
                self._pcache["misses"] += 1
            elif rec.persistent_cache == "written":
                self._pcache["misses"] += 1
            self._finish(rec)

    def _flush(self, tid: int) -> None:
        p = self._pending.pop(tid, None)
        if p is not None:
            self._finish(p.record)

    # -- reasons and bookkeeping ------------------------------------------------------------
    def _attach_by_name(self, rec: CompileRecord) -> None:
        """A lowering/compile with no trace before it: the trace came from JAX's cache."""
        key = self._by_name.get(rec.function)
        if key is None:
            # never traced while we watched: in practice JAX's eager-op dispatch (jnp.tanh
            # on a concrete array compiles jit(tanh) from a trace JAX cached itself)
            rec.key, rec.origin, rec.reasons = rec.function, "jax", []
            return
        st = self._functions[key].stats
        rec.key, rec.defined_at, rec.origin = key, st.defined_at, st.origin
        rec.reasons = [MissReason("unknown", detail="lowered/compiled again without a new "
                                  "trace (the trace was cached; sharding, layout or "
                                  "compiler options may differ)")]

    def _explain(self, rec: CompileRecord, site: compat.JitTraceSite | None,
                 fun_name: str) -> None:
        parsed = parse_jax_explanation(rec.jax_explanation) if rec.jax_explanation else None
        if site is None:
            rec.key = rec.function
            rec.origin = "user" if rec.jax_explanation else "unknown"
            rec.reasons = parsed.reasons if parsed else []
            self._state(rec.key, rec.function, rec.origin, None)
            return
        key, where = _function_key(site.fun, fun_name)
        rec.key, rec.defined_at = key, where
        rec.origin = "jax" if site.internal else "user"
        sig = Signature(site.args, site.statics)
        prior = self._functions.get(key)
        state = self._state(key, rec.function, rec.origin, where)
        obj = state.objects.get(id(site.fun))
        if obj is not None and obj[0]() is not site.fun:
            obj = None
        if rec.origin == "jax":  # JAX's own helpers: counted, not explained
            rec.reasons = []
            if obj is None:
                obj = self._track(state, site.fun)
        elif obj is None:
            if prior is not None:
                rec.reasons = [MissReason(
                    "closure", detail=f"new function object for {fun_name} (same code, "
                    "closure re-created; JAX caches per function object)")]
            else:
                other = self._by_name.get(rec.function)
                if other is not None and other != key and not fun_name.startswith("<"):
                    old_where = self._functions[other].stats.defined_at
                    rec.reasons = [MissReason("redefined", fun_name, old_where, where,
                                              detail=f"{fun_name} was redefined")]
                else:
                    rec.reasons = [MissReason("new_function",
                                              detail=f"first call of {fun_name}")]
            obj = self._track(state, site.fun)
        else:
            rec.reasons = closest_diff(sig, obj[1])
            if not rec.reasons and parsed is not None:
                rec.reasons = parsed.reasons
            if rec.reasons and rec.reasons[0].kind == "cache_cleared" and parsed is not None \
                    and parsed.reasons and parsed.reasons[0].kind == "context":
                rec.reasons = parsed.reasons
        if obj is not None:
            obj[1].append(sig)
            del obj[1][:-MAX_SIGNATURES]
        self._by_name[rec.function] = key

    def _state(self, key: str, function: str, origin: str, where: str | None) -> _FunctionState:
        st = self._functions.get(key)
        if st is None:
            st = self._functions[key] = _FunctionState(
                FunctionStats(key=key, function=function, origin=origin, defined_at=where))
        return st

    def _track(self, state: _FunctionState, fun: Any) -> list[Any] | None:
        oid = id(fun)
        functions = self._functions
        key = state.stats.key

        def gone(_ref: Any, oid: int = oid, key: str = key) -> None:
            with self._lock:
                st = functions.get(key)
                if st is not None:
                    entry = st.objects.get(oid)
                    if entry is not None and entry[0] is _ref:
                        del st.objects[oid]
        try:
            ref = weakref.ref(fun, gone)
        except TypeError:  # not weak-referenceable: track nothing rather than keep it alive
            return None
        entry = [ref, [], 0]
        state.objects[oid] = entry
        return entry

    def _finish(self, rec: CompileRecord) -> None:
        rec.seq = next(self._seq)
        self._records.append(rec)
        state = self._functions.get(rec.key) or self._state(rec.key, rec.function,
                                                            rec.origin, rec.defined_at)
        st = state.stats
        st.function = rec.function
        if rec.trace_s is not None:
            st.traces += 1
            st.trace_s += rec.trace_s
        if rec.lower_s is not None:
            st.lowers += 1
            st.lower_s += rec.lower_s
        if rec.kind == "compile":
            st.compiles += 1
            st.compile_s += rec.compile_s or 0.0
            self._count_entry(state, rec)
        if rec.persistent_cache == "hit":
            st.persistent_hits += 1
            st.time_saved_s += (rec.time_saved_s or 0.0)
        if rec.reasons:
            st.misses.append(rec)
            del st.misses[:-MAX_SIGNATURES]
        tid = threading.get_ident()
        for ctid, sink, partial in self._captures:
            if ctid == tid and (partial or rec.kind == "compile"):
                sink.append(rec)

    def _count_entry(self, state: _FunctionState, rec: CompileRecord) -> None:
        # The most recently traced live object of this function owns the new executable.
        live = [e for e in list(state.objects.values()) if e[0]() is not None]
        if live:
            live[-1][2] += 1

    # -- queries ------------------------------------------------------------------------
    def records(self, cell_run: int | None = None) -> list[CompileRecord]:
        with self._lock:
            recs = list(self._records)
        if cell_run is not None:
            recs = [r for r in recs if r.cell_run == cell_run]
        return recs

    def functions(self) -> list[FunctionStats]:
        with self._lock:
            out = []
            for state in self._functions.values():
                st = state.stats
                st.entries = sum(e[2] for e in list(state.objects.values())
                                 if e[0]() is not None)
                if st.compiles or st.traces or st.lowers:
                    out.append(st)
            return sorted(out, key=lambda s: (s.origin != "user", -s.compile_s - s.trace_s))

    def persistent_status(self) -> PersistentCacheStatus:
        st = persistent_cache_settings()
        with self._lock:
            st.hits, st.misses = self._pcache["hits"], self._pcache["misses"]
            st.written, st.time_saved_s = self._pcache["written"], self._pcache["saved"]
        return st

    def snapshot(self) -> LedgerSnapshot:
        return LedgerSnapshot(self.functions(), self.records(), self.persistent_status())

    def cell_summary(self, cell_run: int, label: str) -> CellSummary:
        groups: dict[str, FunctionGroup] = {}
        helpers: FunctionGroup | None = None
        for rec in self.records(cell_run):
            if rec.origin == "jax":
                helpers = helpers or FunctionGroup("JAX helpers", "jax")
                g = helpers
                if rec.function not in g.names:
                    g.names.append(rec.function)
            else:
                g = groups.setdefault(rec.key or rec.function,
                                      FunctionGroup(rec.function, rec.origin))
            g.traces += rec.trace_s is not None
            g.lowers += rec.lower_s is not None
            g.compiles += rec.kind == "compile"
            g.trace_s += rec.trace_s or 0.0
            g.lower_s += rec.lower_s or 0.0
            g.compile_s += rec.compile_s or 0.0
            if rec.persistent_cache == "hit":
                g.persistent_hits += 1
                g.time_saved_s += (rec.time_saved_s or 0.0)
            elif rec.persistent_cache == "written":
                g.persistent_written += 1
            if rec.origin != "jax":
                g.reasons.extend(r for r in rec.reasons if r.kind != "new_function")
                if rec.call_site is not None:
                    g.call_sites.append(rec.call_site)
        return CellSummary(label, list(groups.values()), helpers)

    def clear(self) -> None:
        """Forget every record and function (after ``jax.clear_caches()``)."""
        with self._lock:
            self._records.clear()
            self._functions.clear()
            self._by_name.clear()
            self._pending.clear()
            self._explanations.clear()
            self._pcache = {"hits": 0, "misses": 0, "written": 0, "saved": 0.0}

    # -- capture ------------------------------------------------------------------------
    @contextlib.contextmanager
    def capture(self, include_partial: bool = False) -> Iterator[list[CompileRecord]]:
        sink: list[CompileRecord] = []
        entry = (threading.get_ident(), sink, include_partial)
        self.install()
        try:
            with self._lock:
                self._captures.append(entry)
            try:
                yield sink
            finally:
                with self._lock:
                    try:
                        if include_partial:
                            self._flush(threading.get_ident())
                    finally:
                        # by identity: nested captures' entries can compare equal (same
                        # thread, equal record lists), and list.remove matches by ==
                        self._captures[:] = [e for e in self._captures if e is not entry]
        finally:
            self.uninstall()


class _ExplainFilter(logging.Filter):
    """Takes JAX's cache-miss explanations off its loggers (no stderr scraping).

    When the observatory turned ``jax_explain_cache_misses`` on, the messages are
    swallowed (the cell line says it better); when the user had it on, they pass.
    """

    def __init__(self, ledger: Ledger) -> None:
        super().__init__()
        self._ledger = ledger

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:
            return True
        if msg.startswith("TRACING CACHE MISS"):
            self._ledger._on_explanation(msg)
        elif msg.startswith("Not writing persistent cache entry"):
            self._ledger._on_persistent_note(msg)
        elif "persistent" not in msg.lower():
            return True
        return not self._ledger.swallow_explanations or record.levelno < logging.WARNING


LEDGER = Ledger()


def ledger() -> LedgerSnapshot:
    """Every function and compile the ledger has seen, as plain records."""
    return LEDGER.snapshot()


def capture_compiles(include_partial: bool = False) -> contextlib.AbstractContextManager[
        list[CompileRecord]]:
    """Records of every compile that completes inside the block on the current thread;
    works whether or not the observatory (%load_ext workbench) is on.

    JAX's own helper compiles (eager ops such as ``convert_element_type``) are
    included with ``origin == "jax"``; filter on ``origin == "user"`` for yours.
    With ``include_partial``, traces and lowerings that never reached XLA
    (``f.trace``, ``f.lower``, ``jax.make_jaxpr`` of a jit) are included too.
    """
    return LEDGER.capture(include_partial)


__all__ = ["BACKGROUND", "CallSite", "CellSummary", "CompileRecord", "FunctionGroup",
           "FunctionStats", "LEDGER", "Ledger", "LedgerSnapshot", "PersistentCacheStatus",
           "capture_compiles", "ledger", "persistent_cache_settings"]

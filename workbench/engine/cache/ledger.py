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

from workbench.engine import _jax_compat as compat
from workbench.engine.cache.reasons import (
    MissReason,
    Signature,
    closest_diff,
    parse_jax_explanation,
)
from workbench.engine.common.errors import is_user_file

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
    #: executables compiled for this function's objects that are still alive, since the
    #: ledger last saw their cache emptied (a recompile with an identical signature, or
    #: ``%jaxcache clear``): JAX announces neither ``jax.clear_caches()`` nor
    #: ``f.clear_cache()``, so right after those this can be higher than JAX's own count.
    entries: int = 0
    #: every recompile (a miss of a function compiled before); ``misses`` keeps the
    #: latest records only, this counts them all
    recompiles: int = 0
    misses: list[CompileRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key, "function": self.function, "origin": self.origin,
            "defined_at": self.defined_at, "compiles": self.compiles, "traces": self.traces,
            "lowers": self.lowers, "trace_s": self.trace_s, "lower_s": self.lower_s,
            "compile_s": self.compile_s, "persistent_hits": self.persistent_hits,
            "time_saved_s": self.time_saved_s, "entries": self.entries,
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

    __slots__ = ("record", "lowered_name", "pcache_requested", "entry")

    def __init__(self, record: CompileRecord, entry: list[Any] | None = None) -> None:
        self.record = record
        self.lowered_name: str | None = None
        self.pcache_requested = False
        self.entry = entry  # the traced function object's bookkeeping: it owns the executable


class _FunctionState:
    """Per-function bookkeeping that is not part of the public record."""

    def __init__(self, stats: FunctionStats) -> None:
        self.stats = stats
        # id(live function object) -> (weakref, signatures it compiled, live entries)
        self.objects: dict[int, list[Any]] = {}
        self.last_entry: list[Any] | None = None  # the object traced most recently
        self.objects_seen = 0  # function objects ever traced (0: only cached-trace compiles)


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


def _user_defined(where: str | None) -> bool:
    """A "file:line" in the user's code (not JAX's ``jax.nn.relu`` the user jitted)."""
    return bool(where) and is_user_file(where.rpartition(":")[0])  # type: ignore[union-attr]


def _function_key(fun: Any, name: str) -> tuple[str, str | None]:
    """A function's identity across calls: its name, the transforms around it and where
    its code is defined.  ``jit(grad(loss))`` and ``jit(vmap(loss))`` are different
    programs (different rows); a callable instance is keyed by its class's ``__call__``.
    """
    inner = compat.innermost_function(fun)
    code = compat.function_code(inner)
    chain = compat.transform_names(fun)
    label = name
    if code is not None and name.startswith("<unnamed"):
        label = getattr(code, "co_qualname", code.co_name)
    if chain:
        label = f"{label}[{'/'.join(chain)}]"
    if code is None:
        return f"{label}@?", None
    # JAX's eager helpers share one code object, so the traced name is part of the key.
    where = f"{code.co_filename}:{code.co_firstlineno}"
    return f"{label}@{where}", where


class Ledger:
    """Listens to JAX's compile events while installed; keeps records and per-function stats.

    ``install()``/``uninstall()`` are reference-counted, so the observatory and any
    number of ``capture_compiles()`` blocks can share one set of listeners.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._users = 0
        self._pending: dict[int, _Pending] = {}
        self._explanations: dict[int, list[str]] = {}
        # per thread: function name -> (key, entry) of a lowering not yet compiled
        # (``lo = f.lower(x)`` in one cell, ``lo.compile()`` in a later one)
        self._lowered: dict[int, dict[str, tuple[str, list[Any] | None]]] = {}
        self._records: deque[CompileRecord] = deque(maxlen=MAX_RECORDS)
        self._functions: dict[str, _FunctionState] = {}
        self._by_name: dict[str, str] = {}
        self._captures: list[tuple[int, list[CompileRecord], bool]] = []
        self._seq = itertools.count(1)
        self._cell: str | None = None
        self._cell_run: int | None = None
        self._cell_runs = itertools.count(1)
        self._cell_thread: int | None = None
        # threads alive when the cell began: their compiles are "background" work
        self._threads_before: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
        self._cleared_at = 0
        self._pcache = {"hits": 0, "misses": 0, "written": 0, "saved": 0.0}
        self._log_filter = _ExplainFilter(self)
        # threads where explain_on_this_thread() turned JAX's explanations on
        self._explaining: set[int] = set()

    # -- installation -------------------------------------------------------------------
    @property
    def installed(self) -> bool:
        return self._users > 0

    def install(self) -> None:
        # Registration happens under the lock, so a concurrent uninstall() can never run
        # between our count going to 1 and the listeners being in place (or the reverse).
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
            self._lowered.clear()
            compat.unregister_monitoring_listener("duration", self._on_duration)
            compat.unregister_monitoring_listener("event", self._on_event)
            for name in compat.EXPLAIN_LOGGERS:
                logging.getLogger(name).removeFilter(self._log_filter)

    def explain_on_this_thread(self) -> tuple[Any] | None:
        """Have JAX explain its cache misses on this thread (read by the ledger, not
        printed); the token goes back to :meth:`stop_explaining`."""
        token = compat.explain_on_this_thread()
        if token is not None:
            with self._lock:
                self._explaining.add(threading.get_ident())
        return token

    def stop_explaining(self, token: tuple[Any] | None) -> None:
        if token is not None:
            compat.restore_explain(token)
            with self._lock:
                self._explaining.discard(threading.get_ident())

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
            self._threads_before = weakref.WeakSet(threading.enumerate())
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
            self._threads_before = weakref.WeakSet()
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
        # JAX explains a miss before tracing; nested jits (traced inside the outer one,
        # no trace event of their own) add theirs too, so keep the few latest and let
        # the trace pick the one naming its own function.
        with self._lock:
            pending = self._explanations.setdefault(threading.get_ident(), [])
            pending.append(text)
            del pending[:-8]

    def _on_persistent_note(self, text: str) -> None:
        with self._lock:
            p = self._pending.get(threading.get_ident())
            if p is not None:
                p.record.persistent_note = text

    def _new_record(self, function: str) -> CompileRecord:
        # A compile belongs to the running cell when the cell's own thread does it or a
        # thread started during the cell; a thread that was already running (started by
        # an earlier cell, a server, a data loader) does "background" work.
        thread = threading.current_thread()
        in_cell = self._cell is not None and (
            threading.get_ident() == self._cell_thread or thread not in self._threads_before)
        return CompileRecord(
            function=function, cell=self._cell if in_cell else BACKGROUND,  # type: ignore
            cell_run=self._cell_run if in_cell else None, thread=thread.name,
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
            rec.jax_explanation = self._take_explanation(tid, site, fun_name)
            entry = self._explain(rec, site, fun_name)
            self._pending[tid] = _Pending(rec, entry)

    def _take_explanation(self, tid: int, site: compat.JitTraceSite | None,
                          fun_name: str) -> str | None:
        """JAX's explanation for exactly this function ("for NAME defined at FILE:LINE");
        whatever else was logged on this thread since the last trace is dropped."""
        texts = self._explanations.pop(tid, None)
        if not texts:
            return None
        where = None
        if site is not None:
            code = compat.function_code(compat.innermost_function(site.fun))
            if code is not None:
                where = f"{code.co_filename}:{code.co_firstlineno}"
        for text in reversed(texts):
            parsed = parse_jax_explanation(text)
            if parsed.function != fun_name:
                continue
            if where is None or parsed.defined_at is None or parsed.defined_at == where:
                return text
        return None

    def _on_lower(self, duration: float, fun_name: str) -> None:
        tid = threading.get_ident()
        with self._lock:
            p = self._pending.get(tid)
            if p is None or p.lowered_name is not None:
                self._flush(tid)
                source = compat.lowering_source()
                p = self._pending[tid] = _Pending(self._new_record(fun_name))
                p.record.call_site = _user_call_site(3)
                p.entry = self._attach_without_trace(p.record, source, "lower", tid)
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
                p.entry = self._attach_without_trace(p.record, None, "compile", tid)
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
            self._finish(rec, p.entry)

    def _flush(self, tid: int) -> None:
        p = self._pending.pop(tid, None)
        if p is not None:
            if p.record.kind == "lower" and p.record.origin != "jax":
                # a lowering that did not reach XLA (yet): ``lo.compile()`` may follow
                lowered = self._lowered.setdefault(tid, {})
                lowered.pop(p.record.function, None)
                lowered[p.record.function] = (p.record.key, p.entry)
                while len(lowered) > 16:
                    del lowered[next(iter(lowered))]
            self._finish(p.record, None)

    # -- reasons and bookkeeping ------------------------------------------------------------
    def _attach_without_trace(self, rec: CompileRecord, source: compat.LoweringSource | None,
                              stage: str, tid: int) -> list[Any] | None:
        """A lowering/compile with no trace before it on this thread.

        Either the compile of an earlier ``f.lower(...)`` (carried over, no new miss), or
        the trace came from JAX's cache: a cached trace compiled for the first time
        (``f.trace(x)`` then ``f(x)``; a jit first traced inside another jit), a
        transformed call of a jitted function (``jax.vmap(f)(xs)``), or JAX's own eager
        dispatch (``jnp.tanh(x)``).  What is being lowered decides user vs. JAX.
        Returns the function object's bookkeeping to credit the executable to, if any.
        """
        carried = self._lowered.get(tid, {}).pop(rec.function, None) \
            if stage == "compile" else None
        if carried is not None and carried[0] in self._functions:
            key, entry = carried
            st = self._functions[key].stats
            rec.key, rec.defined_at, rec.origin, rec.reasons = key, st.defined_at, st.origin, []
            return entry
        known = self._by_name.get(rec.function)
        if source is not None:
            if not source.user:
                rec.key, rec.origin, rec.reasons = rec.function, "jax", []
                return None
            where = source.where or None
            if known is not None and self._functions[known].stats.defined_at == where:
                key = known
            else:
                key = f"{source.name}@{where}" if where else rec.function
        elif known is not None:
            key, where = known, self._functions[known].stats.defined_at
        else:
            # nothing to go on (a JAX without the debug info we read): JAX's own dispatch
            rec.key, rec.origin, rec.reasons = rec.function, "jax", []
            return None
        state = self._state(key, rec.function, "user", where)
        st = state.stats
        rec.key, rec.defined_at, rec.origin = key, st.defined_at, "user"
        first = st.compiles == 0 if stage == "compile" else st.compiles == st.lowers == 0
        if first:
            rec.reasons = [MissReason("new_function", detail=f"first compile of {rec.function}")]
        else:
            rec.reasons = [MissReason("unknown", detail="compiled again from a cached trace "
                                      "(a transformation such as vmap or grad of it, or other "
                                      "sharding, layout or compiler options)")]
        self._by_name[rec.function] = key
        return None

    def _explain(self, rec: CompileRecord, site: compat.JitTraceSite | None,
                 fun_name: str) -> list[Any] | None:
        parsed = parse_jax_explanation(rec.jax_explanation) if rec.jax_explanation else None
        if site is None:
            rec.key = rec.function
            rec.origin = "user" if rec.jax_explanation else "unknown"
            rec.reasons = parsed.reasons if parsed else []
            self._state(rec.key, rec.function, rec.origin, None)
            return None
        key, where = _function_key(site.fun, fun_name)
        rec.key, rec.defined_at = key, where
        rec.origin = "jax" if site.internal else "user"
        sig = Signature(site.args, site.statics, site.static_tokens, site.tree, site.tree_hash)
        prior = self._functions.get(key)
        state = self._state(key, rec.function, rec.origin, where)
        obj = state.objects.get(id(site.fun))
        if obj is not None and obj[0]() is not site.fun:
            obj = None
        if rec.origin == "jax":  # JAX's own helpers: counted, not explained
            rec.reasons = []
            if obj is None:
                obj = self._track(state, site.fun)
        elif site.eager_primitive:
            # an eager lax.scan/while/cond running the user's body: JAX jits one new
            # helper per set of parameters (body, lengths), so objects tell nothing
            rec.reasons = [MissReason("new_function", detail=f"eager {fun_name} compiled for "
                                      "its body and argument types")]
            obj = None
        elif obj is None:
            if prior is not None and prior.objects_seen == 0 and parsed is not None \
                    and any(r.kind != "unknown" for r in parsed.reasons):
                # first traced here; compiled before only from a trace JAX had cached
                rec.reasons = [r for r in parsed.reasons if r.kind != "unknown"]
            elif prior is not None and prior.objects_seen == 0:
                rec.reasons = [MissReason("new_function", detail=f"first trace of {fun_name}")]
            elif prior is not None:
                rec.reasons = [MissReason(
                    "closure", detail=f"new function object for {fun_name} (same code, "
                    "closure re-created; JAX caches per function object)")]
            else:
                other = self._by_name.get(rec.function)
                old_where = self._functions[other].stats.defined_at if other else None
                if other is not None and other != key and not fun_name.startswith("<") \
                        and old_where != where and _user_defined(old_where):
                    rec.reasons = [MissReason("redefined", fun_name, old_where, where,
                                              detail=f"{fun_name} was redefined")]
                else:
                    rec.reasons = [MissReason("new_function",
                                              detail=f"first call of {fun_name}")]
            obj = self._track(state, site.fun)
        elif not obj[1]:  # its earlier traces all raised: this is its first real one
            rec.reasons = [MissReason("new_function", detail=f"first call of {fun_name}")]
        else:
            rec.reasons = closest_diff(sig, obj[1])
            concrete = [r for r in parsed.reasons if r.kind != "unknown"] if parsed else []
            if not rec.reasons and parsed is not None:
                rec.reasons = parsed.reasons
            elif rec.reasons and rec.reasons[0].kind == "cache_cleared":
                if concrete and not parsed.never_seen:  # type: ignore[union-attr]
                    rec.reasons = concrete  # JAX saw a difference our signature misses
                else:
                    obj[2] = 0  # the same call compiled before: its executables are gone
            elif concrete and all(r.kind == "pytree" and r.path is None
                                  for r in rec.reasons):
                rec.reasons = concrete  # JAX names the paths of a structure change
        if obj is not None and not site.failed:
            # a trace that raised compiled nothing: the next good call is not a "change"
            obj[1].append(sig)
            del obj[1][:-MAX_SIGNATURES]
        if rec.origin == "user":
            # only the user's functions: a user's ``relu`` is not JAX's ``relu`` redefined
            self._by_name[rec.function] = key
        if obj is not None:
            state.last_entry = obj
        return obj

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
        state.objects_seen += 1
        return entry

    def _finish(self, rec: CompileRecord, entry: list[Any] | None) -> None:
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
            if entry is not None and entry[0]() is not None:
                entry[2] += 1  # the traced object owns the new executable
        if rec.persistent_cache == "hit":
            st.persistent_hits += 1
            st.time_saved_s += (rec.time_saved_s or 0.0)
        if rec.reasons:
            st.misses.append(rec)
            del st.misses[:-MAX_SIGNATURES]
            if rec.is_recompile:
                st.recompiles += 1
        tid = threading.get_ident()
        for ctid, sink, partial in self._captures:
            if ctid == tid and (partial or rec.kind == "compile"):
                sink.append(rec)

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
                seen = {r.text() for r in g.reasons}
                g.reasons.extend(r for r in rec.reasons
                                 if r.kind != "new_function" and r.text() not in seen)
                if rec.call_site is not None:
                    g.call_sites.append(rec.call_site)
        return CellSummary(label, list(groups.values()), helpers)

    def clear_caches(self) -> None:
        """Empty JAX's compilation caches and forget what was recorded about them.

        One step, so the records never describe cache entries that no longer exist.
        """
        jax.clear_caches()
        self.clear()

    def clear(self) -> None:
        """Forget every record and function (after ``jax.clear_caches()``)."""
        with self._lock:
            self._records.clear()
            self._functions.clear()
            self._by_name.clear()
            self._pending.clear()
            self._explanations.clear()
            self._lowered.clear()
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


#: The messages JAX logs because ``jax_explain_cache_misses`` is on (at WARNING then,
#: DEBUG otherwise): the only ones the filter may hold back.
_EXPLAIN_PREFIXES = ("TRACING CACHE MISS", "PERSISTENT COMPILATION CACHE MISS",
                     "Persistent compilation cache hit", "Not writing persistent cache entry")


class _ExplainFilter(logging.Filter):
    """Takes JAX's cache-miss explanations off its loggers (no stderr scraping).

    Holds back only those explanation messages, and only on a thread where the
    observatory turned the option on for its own reading while the user has not
    turned it on themselves (checked at each message); every other record passes.
    """

    def __init__(self, ledger: Ledger) -> None:
        super().__init__()
        self._ledger = ledger

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:
            return True
        if not msg.startswith(_EXPLAIN_PREFIXES):
            return True
        if msg.startswith("TRACING CACHE MISS"):
            self._ledger._on_explanation(msg)
        elif msg.startswith("Not writing persistent cache entry"):
            self._ledger._on_persistent_note(msg)
        if record.levelno < logging.WARNING:
            return True
        ours = threading.get_ident() in self._ledger._explaining
        return not ours or compat.explanations_requested()


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

"""The cache tracker: listens to JAX's compile events and turns them into records.

JAX reports each stage through ``jax.monitoring`` (trace, lower-to-MLIR and backend
compile durations, persistent-cache events).  :class:`CacheTracker` listens to those,
groups the stages a thread runs back to back into one :class:`CompileRecord`, has
:mod:`.attribution` say whose function it was and why it missed the cache, and
attributes the record to the notebook cell that was running (the IPython hooks tell it
via :meth:`CacheTracker.begin_cell` / :meth:`CacheTracker.end_cell`) or to
``"background"``.

Design constraints, and how they are met:

- *off the hot path*: JAX records these events only when it traces, lowers or
  compiles; a cached call runs none of our code.
- *no strong references*: records hold strings and numbers; functions are kept
  through ``weakref`` only (to count live cache entries), never arrays.
- *thread-safe*: stages are grouped per thread (the listener runs on the thread
  that compiles); shared tables are guarded by one lock.

:func:`capture_compiles` is the Python API other engine modules (the benchmark
sampler) use; it works whether or not ``%load_ext workbench`` installed the tracker.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import jax

from workbench.engine import _jax_compat as compat
from workbench.engine.cache import queries
from workbench.engine.cache.attribution import (
    Attribution,
    TracedObject,
    call_site,
    explanation_for,
)
from workbench.engine.cache.persistent import PersistentCounts, cache_directory
from workbench.engine.cache.records import (
    BACKGROUND,
    CacheSnapshot,
    CellSummary,
    CompileRecord,
    FunctionStats,
    PersistentCacheStatus,
)

MAX_RECORDS = 10_000

_log = logging.getLogger(__name__)

# Where the workbench inspects calls from: (file path suffix, function name) -> its label.
# The outermost such frame names the inspection (a magic calls its Python twin).
_INSPECTORS = {
    ("ipython/jaxpr_magics.py", "jaxpr"): "%jaxpr",
    ("ipython/hlo_magics.py", "hlo"): "%hlo",
    ("api/jaxpr.py", "jaxpr"): "workbench.jaxpr",
    ("api/hlo.py", "hlo"): "workbench.hlo",
    ("sharding/mesh_explorer.py", "compile_operation"): "the mesh explorer",
}


def _inspector_of(
    filename: str, function: str, frame_locals: Callable[[], dict[str, Any]]
) -> str | None:
    if "workbench" not in filename:
        return None
    for (suffix, name), label in _INSPECTORS.items():
        if function == name and filename.replace("\\", "/").endswith(suffix):
            if label.startswith("%") and frame_locals().get("cell") is not None:
                return "%" + label  # the cell magic
            return label
    return None


def inspector_label() -> str:
    """What is inspecting a call now, read from the stack: "%%hlo" for the cell magic
    (the magic's ``cell`` is not None), "workbench.hlo", "the mesh explorer";
    "workbench.inspect" for an ``Inspection`` the user's code drives."""
    found = compat.outermost_frame(_inspector_of)
    if found is None:
        return "workbench.inspect"
    return found


def _record_label(site: compat.JitTraceSite | None, fun_name: str) -> str:
    """The name a trace's record goes by: ``jit(f)`` for a jit, ``pmap(f)`` for JAX's
    wrapper around a pmapped ``f``, and ``make_jaxpr(sum)`` for the jit JAX itself makes
    inside ``jax.make_jaxpr`` / ``jax.eval_shape``: no compile line shows a ``jit`` nobody
    wrote."""
    if site is not None and site.label:
        return site.label
    if site is not None and site.maker:
        return f"{site.maker}({fun_name})"
    return f"jit({fun_name})"


class _Pending:
    """The record a thread is building between its trace, lower and compile events."""

    __slots__ = ("named", "record", "lowered_name", "pcache_requested", "traced")

    def __init__(self, record: CompileRecord, traced: TracedObject | None = None) -> None:
        self.record = record
        self.lowered_name: str | None = None
        self.pcache_requested = False
        self.traced = traced  # the traced function object: it owns the executable
        self.named = False  # the trace named the record (pmap(f)): the lowering keeps it


class CacheTracker:
    """Listens to JAX's compile events while installed; keeps records and per-function stats.

    ``install()``/``uninstall()`` are reference-counted, so the IPython extension and
    any number of ``capture_compiles()`` blocks can share one set of listeners.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._users = 0
        self._pending: dict[int, _Pending] = {}
        self._explanations: dict[int, list[str]] = {}
        # per thread: function name -> (key, traced object) of a lowering not yet compiled
        # (``lo = f.lower(x)`` in one cell, ``lo.compile()`` in a later one)
        self._lowered: dict[int, dict[str, tuple[str, TracedObject | None]]] = {}
        self._records: deque[CompileRecord] = deque(maxlen=MAX_RECORDS)
        self._attribution = Attribution(self._lock)
        self._captures: list[tuple[int, list[CompileRecord], bool]] = []
        self._seq = itertools.count(1)
        self._cell: str | None = None
        self._cell_id: str | None = None  # the front end's id of the running cell, if any
        self._cell_run: int | None = None
        self._cell_runs = itertools.count(1)
        self._cell_thread: int | None = None
        # threads alive when the cell began: their compiles are "background" work
        self._threads_before: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
        self._pcache = PersistentCounts()
        self._log_filter = _ExplainFilter(self)
        # threads where explain_on_this_thread() turned JAX's explanations on
        self._explaining: set[int] = set()
        # threads inside ``inspecting()``: what is inspecting ("%%hlo", ...)
        self._inspecting: dict[int, str] = {}
        #: threads in an :meth:`unrecorded` block
        self._unrecorded: set[int] = set()
        # who hears of each finished record and of clear() (the side panel's hub); a
        # tuple, replaced whole, so _finish reads it without copying
        self._subscribers: tuple[Callable[[CompileRecord | None], None], ...] = ()
        self._evicted = 0  # records pushed out of the store since the last clear()

    # -- installation -------------------------------------------------------------------
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
        """Have JAX explain its cache misses on this thread (read by the tracker, not
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

    # -- subscribers --------------------------------------------------------------------
    def subscribe(self, callback: Callable[[CompileRecord | None], None]) -> None:
        """Call ``callback(record)`` with every finished record, and ``callback(None)``
        after :meth:`clear`.

        Why a push and not polling: a subscriber (the side panel) learns of a compile
        when it happens, and a cached call still runs none of our code, since records
        are made only when JAX traces, lowers or compiles.  The callback runs on the
        compiling thread with the tracker's lock held: it must be quick (append and
        return) and must not call back into the tracker.  Its exceptions are logged,
        never raised into the user's call.  Subscribing twice is one subscription.
        """
        with self._lock:
            if callback not in self._subscribers:
                self._subscribers = (*self._subscribers, callback)

    def unsubscribe(self, callback: Callable[[CompileRecord | None], None]) -> None:
        """Stop calling ``callback`` (a callback never subscribed is ignored)."""
        with self._lock:
            self._subscribers = tuple(c for c in self._subscribers if c != callback)

    def evicted(self) -> int:
        """Records made since the last :meth:`clear` that the store no longer holds (it
        keeps the newest :data:`MAX_RECORDS`)."""
        with self._lock:
            return self._evicted

    def _notify(self, rec: CompileRecord | None) -> None:
        for callback in self._subscribers:
            try:
                callback(rec)
            except Exception:  # a subscriber's bug must never break the user's JAX call
                _log.debug("cache tracker: subscriber failed", exc_info=True)

    def listeners(self) -> tuple[object, object, logging.Filter]:
        """(duration listener, event listener, log filter), for tests of a clean unload."""
        return self._on_duration, self._on_event, self._log_filter

    # -- the workbench's own work ------------------------------------------------------
    @contextlib.contextmanager
    def inspecting(self, label: str | None = None) -> Iterator[str]:
        """Traces, lowerings and compiles in this block (on this thread) are the
        workbench inspecting a call, not the user's program: recorded with origin
        ``"workbench"`` and ``inspected_by`` = ``label`` (found from the stack when None:
        ``%%hlo``, ``workbench.inspect``, the mesh explorer), never a recompile of the
        user's and never the earlier compile a later call is compared with.  Nested
        blocks keep the outermost label."""
        tid = threading.get_ident()
        with self._lock:
            outer = self._inspecting.get(tid)
        if outer is not None:
            yield outer
            return
        name = label or inspector_label()
        # listening even without ``%load_ext``: what the workbench traced is then known,
        # and JAX's explanation of a later user call never blames the user for it
        self.install()
        try:
            with self._lock:
                p = self._pending.get(tid)
                if p is not None and p.record.origin != "workbench":
                    self._flush(tid)  # a half-built user record is not the inspection's
                self._inspecting[tid] = name
            try:
                yield name
            finally:
                # a lowering stays pending: the inspection's compile may follow in its own
                # block
                with self._lock:
                    self._inspecting.pop(tid, None)
        finally:
            self.uninstall()

    @contextlib.contextmanager
    def unrecorded(self) -> Iterator[None]:
        """Traces in this block (on this thread) are the workbench's plumbing, not an
        inspection anyone asked for: the outer ``jax.jit`` whose trace gives ``jax.make_jaxpr``'s
        printing of the user's jit (the body comes from JAX's cache).  They make no record
        and no line, and JAX's explanation of them is dropped, never left for the next."""
        tid = threading.get_ident()
        self.install()
        try:
            with self._lock:
                self._unrecorded.add(tid)
            try:
                yield
            finally:
                with self._lock:
                    self._unrecorded.discard(tid)
                    self._explanations.pop(tid, None)
        finally:
            self.uninstall()

    def _inspector(self) -> str | None:
        return self._inspecting.get(threading.get_ident()) if self._inspecting else None

    # -- cell attribution ---------------------------------------------------------------
    def begin_cell(self, label: str, cell_id: str | None = None) -> int:
        """A cell starts on this thread: until ``end_cell``, compiles are attributed to it.

        ``cell_id`` is the notebook's own id of the cell (JupyterLab sends it with the
        execute request), kept on every record so a front end can link records to cells
        that have no number yet or were renumbered by a re-run.
        """
        with self._lock:
            self._cell = label
            self._cell_id = cell_id
            run = self._cell_run = next(self._cell_runs)
            self._cell_thread = threading.get_ident()
            self._threads_before = weakref.WeakSet(threading.enumerate())
            return run

    def relabel_cell(self, cell_run: int, label: str) -> None:
        """Give one cell run's records their final label (IPython knows the cell's number
        for sure only after it ran: 9.x has already incremented it in ``pre_run_cell``)."""
        with self._lock:
            for rec in self._cell_records(cell_run):
                rec.cell = label

    def _cell_records(self, cell_run: int) -> list[CompileRecord]:
        """One cell run's records, read from the newest back to the first record of an
        earlier run (runs are numbered in order): a cell costs its own records, not the
        whole store's."""
        out = []
        for rec in reversed(self._records):
            if rec.cell_run is not None and rec.cell_run < cell_run:
                break
            if rec.cell_run == cell_run:
                out.append(rec)
        out.reverse()
        return out

    def end_cell(self) -> int | None:
        """The cell ended: finish this thread's half-built record; return the run's number."""
        with self._lock:
            self._flush(threading.get_ident())
            run = self._cell_run
            self._cell = self._cell_run = self._cell_thread = self._cell_id = None
            self._threads_before = weakref.WeakSet()
            return run

    # -- JAX listeners (run only when JAX traces, lowers or compiles) -------------------
    # Their signatures are jax.monitoring's listener protocols (EventDurationListener...
    # and EventListenerWithMetadata): JAX calls them as (event, duration_secs, **kwargs)
    # and (event, **kwargs), keyword values being str or int.
    def _on_duration(self, event: str, duration_secs: float, **kwargs: str | int) -> None:
        try:
            self._handle_duration(event, duration_secs, str(kwargs.get("fun_name", "?")))
        except Exception:  # a bookkeeping bug must never break the user's JAX call
            _log.debug("cache tracker: duration event failed", exc_info=True)

    def _on_event(self, event: str, **kwargs: str | int) -> None:
        if event not in (
            compat.PCACHE_REQUEST_EVENT,
            compat.PCACHE_HIT_EVENT,
            compat.PCACHE_WRITE_EVENT,
        ):
            return
        try:
            self._handle_event(event)
        except Exception:
            _log.debug("cache tracker: event failed", exc_info=True)

    def _handle_duration(self, event: str, duration: float, fun_name: str) -> None:
        if event == compat.TRACE_EVENT:
            self._on_trace(duration, fun_name)
        elif event == compat.LOWER_EVENT:
            self._on_lower(duration, fun_name)
        elif event == compat.COMPILE_EVENT:
            self._on_compile(duration, fun_name)
        elif event == compat.PCACHE_SAVED_EVENT:
            with self._lock:
                p = self._pending.get(threading.get_ident())
                if p is not None:
                    p.record.time_saved_s = duration
                self._pcache.saved_s += duration  # negative when reading cost more

    def _handle_event(self, event: str) -> None:
        with self._lock:
            p = self._pending.get(threading.get_ident())
            if event == compat.PCACHE_HIT_EVENT:
                self._pcache.hits += 1
                if p is not None:
                    p.record.persistent_cache = "hit"
            elif event == compat.PCACHE_WRITE_EVENT:
                self._pcache.written += 1
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
            threading.get_ident() == self._cell_thread or thread not in self._threads_before
        )
        return CompileRecord(
            function=function,
            cell=self._cell if in_cell and self._cell is not None else BACKGROUND,
            cell_run=self._cell_run if in_cell else None,
            thread=thread.name,
            cell_id=self._cell_id if in_cell else None,
            started=time.time(),
        )

    def _on_trace(self, duration: float, fun_name: str) -> None:
        if self._unrecorded and threading.get_ident() in self._unrecorded:
            with self._lock:
                self._explanations.pop(threading.get_ident(), None)
            return
        site = compat.jit_trace_site()
        where = call_site()
        tid = threading.get_ident()
        if site is not None and site.user_name is not None:
            fun_name = site.user_name  # JAX's own wrapper around the user's (pmap)
        with self._lock:
            self._flush(tid)
            rec = self._new_record(_record_label(site, fun_name))
            rec.trace_s = duration
            rec.kind = "trace"
            rec.call_site = where
            # whatever else was logged on this thread since the last trace is dropped
            texts = self._explanations.pop(tid, None)
            rec.jax_explanation = explanation_for(texts, site, fun_name) if texts else None
            inspector = self._inspector()
            if inspector is not None:
                traced = self._attribution.inspected_trace(rec, site, fun_name)
                if rec.origin == "workbench":
                    rec.inspected_by = inspector
            else:
                traced = self._attribution.after_trace(rec, site, fun_name)
            self._pending[tid] = _Pending(rec, traced)
            self._pending[tid].named = site is not None and site.label is not None

    def _pending_here(self, tid: int) -> _Pending | None:
        """This thread's half-built record, if the stage now finishing belongs to it: an
        inspection's record never takes the user's next stage, nor the reverse."""
        p = self._pending.get(tid)
        if (
            p is not None
            and (p.record.origin == "workbench") != (self._inspector() is not None)
            and p.record.origin != "jax"
        ):
            self._flush(tid)
            return None
        return p

    def _on_lower(self, duration: float, fun_name: str) -> None:
        tid = threading.get_ident()
        with self._lock:
            p = self._pending_here(tid)
            if p is None or p.lowered_name is not None:
                self._flush(tid)
                source = compat.lowering_source()
                p = self._pending[tid] = _Pending(self._new_record(fun_name))
                p.record.call_site = call_site()
                inspector = self._inspector()
                if inspector is not None:
                    self._attribution.inspected_stage(p.record, source)
                    if p.record.origin == "workbench":
                        p.record.inspected_by = inspector
                else:
                    p.traced = self._attribution.without_trace(p.record, source, "lower", None)
            p.lowered_name = fun_name
            if not p.named:
                p.record.function = fun_name
            p.record.lower_s = duration
            p.record.kind = "lower"

    def _on_compile(self, duration: float, fun_name: str) -> None:
        tid = threading.get_ident()
        with self._lock:
            p = self._pending_here(tid)
            if p is None or (p.lowered_name is not None and p.lowered_name != fun_name):
                self._flush(tid)
                p = _Pending(self._new_record(fun_name))
                p.record.call_site = call_site()
                carried = self._lowered.get(tid, {}).pop(fun_name, None)
                inspector = self._inspector()
                if inspector is not None:
                    self._attribution.inspected_stage(p.record, None)
                    p.record.inspected_by = inspector
                else:
                    p.traced = self._attribution.without_trace(p.record, None, "compile", carried)
            self._pending.pop(tid, None)
            rec = p.record
            rec.compile_s = duration
            rec.kind = "compile"
            if p.pcache_requested and rec.persistent_cache is None and cache_directory():
                rec.persistent_cache = "miss"
                self._pcache.misses += 1
            elif rec.persistent_cache == "written":
                self._pcache.misses += 1
            self._finish(rec, p.traced)

    def _flush(self, tid: int) -> None:
        p = self._pending.pop(tid, None)
        if p is not None:
            if p.record.kind == "lower" and p.record.origin == "user":
                # a lowering that did not reach XLA (yet): ``lo.compile()`` may follow
                lowered = self._lowered.setdefault(tid, {})
                lowered.pop(p.record.function, None)
                lowered[p.record.function] = (p.record.key, p.traced)
                while len(lowered) > 16:
                    del lowered[next(iter(lowered))]
            self._finish(p.record, None)

    def _finish(self, rec: CompileRecord, traced: TracedObject | None) -> None:
        rec.seq = next(self._seq)
        if len(self._records) == MAX_RECORDS:
            self._evicted += 1
        self._records.append(rec)
        self._attribution.credit(rec, traced)
        tid = threading.get_ident()
        for ctid, sink, partial in self._captures:
            if ctid == tid and (partial or rec.kind == "compile"):
                sink.append(rec)
        if self._subscribers:
            self._notify(rec)

    # -- queries ------------------------------------------------------------------------
    def records(self, cell_run: int | None = None) -> list[CompileRecord]:
        """The stored records (at most :data:`MAX_RECORDS`, the newest), or one cell's."""
        with self._lock:
            if cell_run is not None:
                return self._cell_records(cell_run)
            return list(self._records)

    def functions(self) -> list[FunctionStats]:
        with self._lock:
            return queries.function_table(self._attribution.functions.values())

    def persistent_status(self) -> PersistentCacheStatus:
        with self._lock:
            counts = PersistentCounts(
                self._pcache.hits, self._pcache.misses, self._pcache.written, self._pcache.saved_s
            )
        return queries.persistent_status(counts)

    def snapshot(self) -> CacheSnapshot:
        """Functions, records and persistent counts as of one moment (one lock hold)."""
        with self._lock:
            return CacheSnapshot(self.functions(), self.records(), self.persistent_status())

    def cell_summary(self, cell_run: int, label: str) -> CellSummary:
        return queries.cell_summary(self.records(cell_run), label)

    # -- clearing -----------------------------------------------------------------------
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
            self._attribution.clear()
            self._pending.clear()
            self._explanations.clear()
            self._lowered.clear()
            self._pcache = PersistentCounts()
            self._evicted = 0
            subscribers = self._subscribers
        if subscribers:  # outside the lock: a subscriber may send its news right away
            self._notify(None)

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
_EXPLAIN_PREFIXES = (
    "TRACING CACHE MISS",
    "PERSISTENT COMPILATION CACHE MISS",
    "Persistent compilation cache hit",
    "Not writing persistent cache entry",
    "Writing ",
)


class _ExplainFilter(logging.Filter):
    """Takes JAX's cache-miss explanations off its loggers (no stderr scraping).

    Holds back only those explanation messages, and only on a thread where the
    tracker turned the option on for its own reading while the user has not turned
    it on themselves (checked at each message); every other record passes.
    """

    def __init__(self, tracker: CacheTracker) -> None:
        super().__init__()
        self._tracker = tracker

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:
            return True
        if not msg.startswith(_EXPLAIN_PREFIXES):
            return True
        if msg.startswith("Writing ") and "to persistent compilation cache" not in msg:
            return True
        if msg.startswith("TRACING CACHE MISS"):
            self._tracker._on_explanation(msg)
        elif msg.startswith("Not writing persistent cache entry"):
            self._tracker._on_persistent_note(msg)
        if record.levelno < logging.WARNING:
            return True
        ours = threading.get_ident() in self._tracker._explaining
        return not ours or compat.explanations_requested()


#: The process's one tracker: the IPython extension and ``capture_compiles`` share it.
CACHE = CacheTracker()


def cache() -> CacheSnapshot:
    """Every function and compile the cache tracker has seen, as plain records."""
    return CACHE.snapshot()


def capture_compiles(
    include_partial: bool = False,
) -> contextlib.AbstractContextManager[list[CompileRecord]]:
    """Records of every compile that completes inside the block on the current thread;
    works whether or not ``%load_ext workbench`` is on.

    JAX's own helper compiles (eager ops such as ``convert_element_type``) are
    included with ``origin == "jax"``, the workbench's inspections (``%%hlo``, the
    mesh explorer) with ``origin == "workbench"``; filter on ``origin == "user"`` for
    yours.
    With ``include_partial``, traces and lowerings that never reached XLA
    (``f.trace``, ``f.lower``, ``jax.make_jaxpr`` of a jit) are included too.
    """
    return CACHE.capture(include_partial)


def unrecorded() -> contextlib.AbstractContextManager[None]:
    """The block's traces are the workbench's plumbing: no record, no line (see
    :meth:`CacheTracker.unrecorded`)."""
    return CACHE.unrecorded()


def inspecting(label: str | None = None) -> contextlib.AbstractContextManager[str]:
    """The block is the workbench inspecting a call (``%%hlo``, the mesh explorer): its
    compiles are recorded as such, never as the user's (see :meth:`CacheTracker.inspecting`)."""
    return CACHE.inspecting(label)


__all__ = [
    "CACHE",
    "MAX_RECORDS",
    "CacheTracker",
    "cache",
    "capture_compiles",
    "unrecorded",
    "inspecting",
    "inspector_label",
]

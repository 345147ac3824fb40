"""The kernel side of the JAX Workbench side panel: the ``jax-workbench`` comm target.

``%load_ext workbench`` calls :func:`open_sidepanel` with the shell's
:class:`~workbench.ipython.session.Session`: it registers the comm target (so a side
panel's ``hello`` is answered with a ``snapshot``), opens one comm towards the front end
with ``announce`` data (a side panel already open connects without asking), subscribes to
the cache tracker's records and to the session's cells and results.  ``%unload_ext``
closes the hub (:meth:`SidePanelHub.close`): ``bye`` on every comm, comms closed,
subscriptions and target removed.  The messages are built by
:mod:`workbench.views.sidepanel_messages` and described by the side panel's comm schema
(``workbench.schemas.comm_schema()``; prose in ``docs/``).  Only the extension loader
imports this module (an import-linter contract in pyproject.toml): the magics tell the
session what they produced, and the hub listens.  A front end done with a comm sends
``leave`` and the hub closes it: the page never closes a comm an update may be on its way to.

Why a hub that batches: a loop compiling a thousand times would otherwise send a
thousand messages.  News (records, cell badges, memory samples, benchmarks, live
diffs) accumulates and goes out as one ``update`` per open comm at most every
:data:`FLUSH_INTERVAL_S` (a ``threading.Timer`` while a cell runs; the gap doubles while
news keeps streaming, up to :data:`MAX_FLUSH_INTERVAL_S`), at the end of each cell as
soon as :data:`FLUSH_INTERVAL_S` allows, and a batch carries at most
:data:`MAX_BATCH_RECORDS` records (the rest are counted as ``dropped``; they stay in the
ledger, where a later ``hello`` finds them).

Cost: on cached dispatch nothing here runs (the tracker calls us only when JAX traces,
lowers or compiles); per cell, with no panel connected, the cell's badge is made (it
walks that cell's records) and memory is sampled once, at the cell's end (a
``jax.live_arrays()`` walk: about 3 to 5 ms per 1,000 live arrays on a loaded 2-core
machine, ``benchmarks/bench_sidepanel.py`` (c) measures it against a bare kernel),
once JAX has started its backends.  Why sample with nobody listening: a panel connects
only when the kernel is idle, so after a Run All (or with the panel opened late) the
samples of every cell that ran before would otherwise be lost, and the chart would start
empty; the newest :data:`MAX_MEMORY_SAMPLES` are kept and a ``hello`` gets them all.
Why only at the end then: a cell's start sample equals the previous cell's end sample
unless something ran in between, so it only pays while a panel watches a long cell run.
Every callback catches its errors: bookkeeping never breaks a user's cell, and a bad
message from a front end is answered with ``error``.

Locks: ``_lock`` (the hub's state, held while sending so messages keep their order)
may take ``_in_lock`` (the incoming records) and ``_timer_lock``; the tracker's
subscriber, which runs with the tracker's lock held, takes only ``_in_lock`` and
``_timer_lock`` and never ``_lock``, so no two threads can wait on each other.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import weakref
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.bench.result import Benchmark
from workbench.engine.cache import CACHE
from workbench.engine.cache.records import CompileRecord
from workbench.engine.monitor import KernelInfo, jax_started, kernel_info, sample_memory
from workbench.ipython.session import Result, Session
from workbench.views import sidepanel_messages as pm
from workbench.views._standalone import note_cell_started, note_extension_listening

_log = logging.getLogger(__name__)

#: least time between two flushes (so at most 4 updates a second per front end)
FLUSH_INTERVAL_S = 0.25
#: while news keeps coming (a long loop compiling), each timed flush doubles the gap to
#: the next, up to this: a 1,000-compile loop sends a couple of dozen updates, not 400;
#: the end of a cell brings the gap back to FLUSH_INTERVAL_S
MAX_FLUSH_INTERVAL_S = 5.0


def flush_times(seconds: float) -> list[float]:
    """When timed flushes happen during ``seconds`` of steady news (the schedule above,
    from the first piece of news): what a test or a benchmark may expect at most."""
    out, t, gap = [0.0], 0.0, FLUSH_INTERVAL_S
    while t + gap <= seconds:
        t += gap
        out.append(t)
        gap = min(gap * 2, MAX_FLUSH_INTERVAL_S)
    return out


#: records one update carries at most; more are counted as ``dropped``
MAX_BATCH_RECORDS = 2_000
#: memory samples kept (the newest), all sent in a snapshot: ~1 KB each with 8 devices,
#: so a snapshot's memory stays under ~2 MB; the panel keeps as many
MAX_MEMORY_SAMPLES = 2_000
MAX_BENCHMARKS = 50
#: cells whose latest badge and live diff are kept (the oldest go first)
MAX_CELLS = 10_000


@dataclass
class _Peer:
    """One open comm (one front end).  ``ready`` once it said hello and got its snapshot;
    the marks say what that snapshot held, so no update repeats it."""

    comm: Any
    ready: bool = False
    mark_seq: int = 0  # records with seq <= this were in the snapshot
    mark_n: int = 0  # items numbered <= this were in the snapshot
    sent: int = 0


@dataclass
class _Cell:
    """The cell running now, as the pre_run_cell hook saw it."""

    label: str
    cell_id: str | None
    started: float = field(default_factory=time.time)


class SidePanelHub:
    """Everything the side panel is told, for one shell: history, pending news and the
    comms."""

    def __init__(self, shell: Any, version: str) -> None:
        self.shell = shell
        self.version = version
        self._lock = threading.RLock()
        self._in_lock = threading.Lock()
        self._timer_lock = threading.Lock()
        self._peers: dict[str, _Peer] = {}
        # a comm said hello: read without a lock by the tracker's subscriber, so a plain
        # bool kept up to date under ``_lock`` (see _peers_changed)
        self._listening_now = False
        # records from the tracker's subscriber, not yet sent (bounded: the rest counted)
        self._incoming: deque[CompileRecord] = deque()
        self._incoming_dropped = 0
        # numbered news (category, dict) not yet sent, and the history a snapshot sends
        self._n = itertools.count(1)
        self._last_n = 0
        self._pending: list[tuple[int, str, dict[str, Any]]] = []
        self._cells: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._memory: deque[dict[str, Any]] = deque(maxlen=MAX_MEMORY_SAMPLES)
        #: samples taken since load that ``_memory`` no longer holds (the oldest)
        self._memory_dropped = 0
        self._benchmarks: deque[dict[str, Any]] = deque(maxlen=MAX_BENCHMARKS)
        self._diffs: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._benched: deque[weakref.ref[Benchmark]] = deque(maxlen=8)
        self._timer: threading.Timer | None = None
        self._due = 0.0  # when the pending timer fires (monotonic)
        self._last_flush = -float("inf")
        self._gap = FLUSH_INTERVAL_S
        self._cell: _Cell | None = None
        self._closed = False
        #: the devices once JAX started (None until then: a snapshot lists none)
        self._kernel: KernelInfo | None = None
        #: the comm target that was registered before this hub's, handed back on close
        #: if it still answers (another shell of the process loaded earlier)
        self._previous_target: Any = None
        #: what :meth:`close` undoes of :func:`open_sidepanel` (the session's listeners)
        self._unsubscribe: list[Any] = []
        #: messages sent (every comm), and updates among them: for tests and benchmarks
        self.messages_sent = 0
        self.updates_sent = 0

    # -- the tracker's subscriber (compiling thread, tracker lock held) ----------------
    def on_record(self, rec: CompileRecord | None) -> None:
        if rec is None:
            self._on_cleared()
            return
        if not self._listening_now:  # nobody listens: the ledger keeps it for a later hello
            return
        with self._in_lock:
            self._incoming.append(rec)
            if len(self._incoming) > MAX_BATCH_RECORDS:
                self._incoming.popleft()
                self._incoming_dropped += 1
        self._schedule(delay_only=True)

    def _drain(self) -> tuple[list[CompileRecord], int]:
        with self._in_lock:
            recs = list(self._incoming)
            self._incoming.clear()
            dropped, self._incoming_dropped = self._incoming_dropped, 0
        return recs, dropped

    # -- scheduling ----------------------------------------------------------------------
    def _schedule(self, delay_only: bool = False, cell_end: bool = False) -> None:
        """Flush now if the gap since the last flush allows (and ``delay_only`` is False),
        else make sure a timer will; ``delay_only``: never flush on this thread (the
        tracker's callback).  ``cell_end``: the gap goes back to its least, and a timer
        waiting longer than that is brought forward."""
        with self._timer_lock:
            if self._closed:
                return
            now = time.monotonic()
            if cell_end:
                self._gap = FLUSH_INTERVAL_S
            delay = self._last_flush + self._gap - now
            if self._timer is not None:
                if not cell_end or self._due <= now + max(delay, 0.0):
                    return
                self._timer.cancel()  # a long wait of a busy cell: the cell has ended
                self._timer = None
            if delay > 0 or delay_only:
                self._due = now + max(delay, 0.0)
                timer = self._timer = threading.Timer(max(delay, 0.0), self._on_timer)
                timer.daemon = True
                timer.start()
                return
        self.flush()

    def _on_timer(self) -> None:
        with self._timer_lock:
            if self._timer is not threading.current_thread():
                # cancelled after it fired (a cell's end replaced it with a shorter one):
                # the current timer flushes; clearing it here would orphan it
                return
            self._timer = None
            if time.monotonic() - self._last_flush > 2 * MAX_FLUSH_INTERVAL_S:
                self._gap = FLUSH_INTERVAL_S  # news after a quiet spell: quick again
        try:
            if self.flush():
                with self._timer_lock:  # news is streaming in: wait longer next time
                    self._gap = min(self._gap * 2, MAX_FLUSH_INTERVAL_S)
        except Exception:
            _log.debug("panel: flush failed", exc_info=True)

    def _cancel_timer(self) -> None:
        with self._timer_lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    # -- news ----------------------------------------------------------------------------
    def _add(self, category: str, item: dict[str, Any]) -> None:
        """Number ``item`` and queue it for the next update (only while someone listens)."""
        with self._lock:
            n = self._last_n = next(self._n)
            if self._listening_now:
                self._pending.append((n, category, item))

    def _listening(self) -> bool:
        return self._listening_now

    def _peers_changed(self) -> None:
        with self._lock:
            self._listening_now = any(p.ready for p in self._peers.values())
        # workbench.config(html="auto") embeds the standalone runtime once while it listens
        note_extension_listening(self._listening_now)

    def take_sample(
        self, when: str, cell: str | None = None, cell_id: str | None = None
    ) -> dict[str, Any] | None:
        """A memory sample, kept and queued; None before JAX started its backends (a
        sample would start them: too early for the user's ``jax.distributed`` or
        platform settings, and there is no array to count yet)."""
        if not jax_started():
            return None
        self._note_kernel()
        sample = pm.memory_sample(sample_memory(when, cell, cell_id))
        with self._lock:
            if len(self._memory) == self._memory.maxlen:
                self._memory_dropped += 1
            self._memory.append(sample)
            self._add("memory", sample)
        return sample

    def _note_kernel(self) -> None:
        """The devices, once JAX is up, for front ends whose snapshot had none."""
        if self._kernel is not None or not jax_started():
            return
        info = kernel_info()
        with self._lock:
            if self._kernel is None:
                self._kernel = info
                self._add("kernel", {})

    def note_benchmark(self, bench: Benchmark) -> None:
        """A finished benchmark (``%jaxbench``, ``workbench.bench``): once each, however
        many front doors report it."""
        try:
            if any(r() is bench for r in self._benched):
                return
            self._benched.append(weakref.ref(bench))
            cell = self._cell
            summary = pm.bench_summary(
                bench, cell.label if cell else None, cell.cell_id if cell else None, time.time()
            )
            with self._lock:
                self._benchmarks.append(summary)
                self._add("benchmarks", summary)
            self._schedule(delay_only=True)
        except Exception:
            _log.debug("panel: benchmark not noted", exc_info=True)

    def on_result(self, result: Result) -> None:
        """The session's result listener: a finished benchmark becomes the side panel's
        latest timings, a live diff (a re-run ``%%jaxpr`` / ``%%hlo`` cell) is queued."""
        if result.kind == "bench":
            self.note_benchmark(result.value)
        if result.live_diff is None or result.cell_id is None:
            return
        try:
            msg = pm.live_diff(result.live_diff, result.cell, result.cell_id)
            with self._lock:
                self._diffs.pop(result.cell_id, None)
                self._diffs[result.cell_id] = msg
                while len(self._diffs) > MAX_CELLS:
                    self._diffs.popitem(last=False)
                self._add("diffs", msg)
        except Exception:
            _log.debug("panel: live diff not sent", exc_info=True)

    # -- cell listeners (called from the session's pre/post_run_cell) ------------------
    def cell_started(self, label: str, cell_id: str | None) -> None:
        self._cell = _Cell(label, cell_id)
        # "auto" html: a re-run of the cell whose output carried the runtime embeds it again
        note_cell_started(cell_id)
        # for a panel watching now, or as the first sample since JAX started (the cell
        # that started it had none at its start): otherwise the previous cell's end
        # sample stands for this one's start in the kept history (see the module's note)
        if self._listening() or not self._memory:
            self.take_sample("start", label, cell_id)

    def cell_ended(self, run: int, label: str, cell_id: str | None) -> None:
        """The cell's badge (when it compiled, or replaces an earlier badge of the same
        cell), the end memory sample (kept whether a panel listens or not: the history a
        panel opened later charts), and a flush."""
        self._cell = None
        recs = CACHE.records(run)
        key = cell_id or label
        with self._lock:
            known = key in self._cells
        if recs or known:  # a re-run that compiled nothing replaces an older badge
            badge = pm.cell_badge(recs, label, cell_id, run, time.time())
            with self._lock:
                self._cells.pop(key, None)
                self._cells[key] = badge
                while len(self._cells) > MAX_CELLS:
                    self._cells.popitem(last=False)
                self._add("cells", badge)
        self.take_sample("end", label, cell_id)  # also notes the devices once JAX is up
        self._schedule(cell_end=True)

    # -- sending ---------------------------------------------------------------------------
    def flush(self) -> bool:
        """Send what accumulated, one update per ready comm; False if nothing was new."""
        with self._lock:
            recs, dropped = self._drain()
            items, self._pending = self._pending, []
            if not recs and not dropped and not items:
                return False
            self._last_flush = time.monotonic()
            built: dict[tuple[int, int], dict[str, Any] | None] = {}
            for cid, peer in list(self._peers.items()):
                if not peer.ready:
                    continue
                mark = (peer.mark_seq, peer.mark_n)
                if mark not in built:
                    built[mark] = self._update_for(peer, recs, dropped, items)
                msg = built[mark]
                if msg is not None:
                    self._send(cid, peer, msg)
                    self.updates_sent += 1
            return True

    def _update_for(
        self,
        peer: _Peer,
        recs: list[CompileRecord],
        dropped: int,
        items: list[tuple[int, str, dict[str, Any]]],
    ) -> dict[str, Any] | None:
        mine = [r for r in recs if r.seq > peer.mark_seq]
        if len(mine) > MAX_BATCH_RECORDS:
            dropped += len(mine) - MAX_BATCH_RECORDS
            mine = mine[-MAX_BATCH_RECORDS:]
        lists: dict[str, list[dict[str, Any]]] = {
            "cells": [],
            "memory": [],
            "benchmarks": [],
            "diffs": [],
        }
        kernel = None
        for n, category, item in items:
            if n <= peer.mark_n:
                continue
            if category == "kernel":
                kernel = self._kernel
            else:
                lists[category].append(item)
        if not mine and not dropped and not any(lists.values()) and kernel is None:
            return None
        return pm.update(mine, dropped, **lists, kernel=kernel)

    def _send(self, cid: str, peer: _Peer, msg: dict[str, Any]) -> None:
        try:
            peer.comm.send(msg)
            peer.sent += 1
            self.messages_sent += 1
        except Exception:  # a comm that went away: forget it
            _log.debug("panel: send failed", exc_info=True)
            with self._lock:
                self._peers.pop(cid, None)
                self._peers_changed()

    def _on_cleared(self) -> None:
        """``%jaxcache clear``: what is queued goes first (without records), then
        ``cleared``; the badges described records that no longer exist."""
        with self._lock:
            self._drain()
            self._cells.clear()
            self.flush()
            for cid, peer in list(self._peers.items()):
                if peer.ready:
                    self._send(cid, peer, pm.cleared())

    # -- comms -------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The snapshot message (call with ``_lock`` held to mark a peer consistently)."""
        with self._lock:
            recs = CACHE.records()
            info = kernel_info()  # starts nothing: no devices before JAX is up
            if info.devices and self._kernel is None:
                self._kernel = info  # later updates need not send it
            return pm.snapshot(
                self.version,
                info,
                recs,
                CACHE.evicted(),
                list(self._cells.values()),
                list(self._memory),
                list(self._benchmarks),
                list(self._diffs.values()),
                memory_dropped=self._memory_dropped,
            )

    def attach(self, comm: Any, data: Any = None) -> None:
        """A comm to the target: the front end's (data: hello) or our announce comm."""
        with self._lock:
            self._peers[comm.comm_id] = _Peer(comm)
        comm.on_msg(self._on_msg)
        comm.on_close(self._on_close)
        if data is not None and data != {}:
            self.handle(comm, data)

    def _on_msg(self, msg: Any) -> None:
        comm_id = msg.get("content", {}).get("comm_id") if isinstance(msg, dict) else None
        peer = self._peers.get(comm_id) if isinstance(comm_id, str) else None
        if peer is None:
            return
        data = msg.get("content", {}).get("data")
        self.handle(peer.comm, data)

    def _on_close(self, msg: Any = None) -> None:
        try:
            comm_id = msg.get("content", {}).get("comm_id") if isinstance(msg, dict) else None
            if isinstance(comm_id, str):
                with self._lock:
                    self._peers.pop(comm_id, None)
                    self._peers_changed()
        except Exception:
            _log.debug("panel: close failed", exc_info=True)

    def handle(self, comm: Any, data: Any) -> None:
        """Answer one message from a front end; anything unexpected gets ``error``."""
        try:
            self._handle(comm, data)
        except Exception as exc:
            _log.debug("panel: message failed", exc_info=True)
            try:
                comm.send(pm.error(f"the kernel could not answer: {type(exc).__name__}"))
            except Exception:
                pass

    def _handle(self, comm: Any, data: Any) -> None:
        peer = self._peers.get(comm.comm_id)
        if peer is None:
            return
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            self._send(comm.comm_id, peer, pm.error("a message must be an object with a type"))
            return
        protocol = data.get("protocol")
        if isinstance(protocol, bool) or protocol != pm.PROTOCOL:  # JSON true is not 1
            self._send(
                comm.comm_id,
                peer,
                pm.error(
                    f"protocol {pm.quoted(data.get('protocol'))} is not {pm.PROTOCOL}: nothing done"
                ),
            )
            return
        kind = data["type"]
        if kind == "hello":
            with self._lock:
                # listening first, then the snapshot: a record made in between is in both,
                # and the marks keep the next update from repeating it
                peer.ready = False
                self._listening_now = True
                msg = self.snapshot()
                peer.mark_seq = max((r["seq"] for r in msg["records"]), default=0)
                peer.mark_n = self._last_n
                peer.ready = True
                self._send(comm.comm_id, peer, msg)
        elif kind == "sample":
            if not peer.ready:
                self._send(comm.comm_id, peer, pm.error("say hello before asking for a sample"))
                return
            cell = self._cell
            self.take_sample(
                "request", cell.label if cell else None, cell.cell_id if cell else None
            )
            self._schedule()
        elif kind == "leave":
            self._leave(comm)
        else:
            self._send(comm.comm_id, peer, pm.error(f"unknown message type {pm.quoted(kind)}"))

    def _leave(self, comm: Any) -> None:
        """The front end stops listening on ``comm``: forget it and close it from here.

        Why the kernel closes and not the page: an update may already be on its way when
        the page is done with a comm; had the page closed it, that update would reach a
        comm the page no longer knows (JupyterLab logs "Comm not found").  The peer goes
        under ``_lock``, which every send holds, so nothing is sent on it afterwards, and
        our ``comm_close`` follows whatever was sent before; the page's comm stays open
        (ignoring what arrives) until that close reaches it."""
        with self._lock:
            self._peers.pop(comm.comm_id, None)
            self._peers_changed()
            try:
                comm.close()
            except Exception:
                _log.debug("panel: close after leave failed", exc_info=True)

    def announce(self) -> None:
        """Open a comm to the front end with ``announce``: a panel already open answers
        hello on it; a front end without the extension closes it."""
        import comm as comm_pkg

        c = comm_pkg.create_comm(target_name=pm.COMM_TARGET, data=pm.announce(self.version))
        self.attach(c)

    def _say_bye(self) -> None:
        """``bye`` and close every comm; no timer left running."""
        with self._lock:
            self._closed = True
            self._cancel_timer()
            peers, self._peers = list(self._peers.values()), {}
            self._listening_now = False
            for peer in peers:
                try:
                    peer.comm.send(pm.bye())
                    self.messages_sent += 1
                except Exception:
                    pass
                try:
                    peer.comm.close()
                except Exception:
                    pass

    @property
    def comms(self) -> int:
        """Open comms (ready or not)."""
        return len(self._peers)

    # -- the comm target ---------------------------------------------------------------------
    def open_comm(self, comm: Any, open_msg: Any) -> None:
        """The comm target: a front end opened a comm to ``jax-workbench``."""
        try:
            data = open_msg.get("content", {}).get("data") if isinstance(open_msg, dict) else None
            self.attach(comm, data)
        except Exception:
            _log.debug("panel: comm open failed", exc_info=True)

    @property
    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Undo :func:`open_sidepanel`: ``bye`` on every comm, the subscriptions go, and
        the comm target is handed back to the hub that had it before, if still open."""
        if self._closed:
            return
        CACHE.unsubscribe(self.on_record)
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self._say_bye()
        # The comm manager is the process's: one target for every shell in it.  Remove it
        # only if it is this hub's (another shell loaded later owns it now), and hand it
        # back to the shell that had it before (the newest one still loaded), so unloading
        # one shell never leaves another one deaf.
        manager = _comm_manager()
        if manager.targets.get(pm.COMM_TARGET) == self.open_comm:
            manager.targets.pop(pm.COMM_TARGET, None)
            previous = _still_open(self._previous_target)
            if previous is not None:
                manager.register_target(pm.COMM_TARGET, previous)


def _still_open(target: Any) -> Any:
    """``target``, or the first target before it whose hub is still open (None if none)."""
    while target is not None:
        hub = getattr(target, "__self__", None)
        if not isinstance(hub, SidePanelHub):
            return target  # someone else's target: leave it as it was
        if not hub.is_closed:
            return target
        target = hub._previous_target
    return None


def hub_for(shell: Any) -> SidePanelHub | None:
    """The shell's hub while ``%load_ext workbench`` is in effect, else None."""
    session = Session.of(shell)
    hub = session.sidepanel if session is not None else None
    return hub if isinstance(hub, SidePanelHub) else None


def _comm_manager() -> Any:
    import comm as comm_pkg

    return comm_pkg.get_comm_manager()


def open_sidepanel(session: Session) -> SidePanelHub:
    """The side panel's hub for ``session``'s shell: the comm target, the tracker
    subscription, the session's cell and result listeners; announced to a front end."""
    from workbench import __version__

    hub = SidePanelHub(session.shell, __version__)
    manager = _comm_manager()
    hub._previous_target = manager.targets.get(pm.COMM_TARGET)
    manager.register_target(pm.COMM_TARGET, hub.open_comm)
    CACHE.subscribe(hub.on_record)
    hub._unsubscribe = [
        session.on_cell_start(hub.cell_started),
        session.on_cell_end(hub.cell_ended),
        session.on_result(hub.on_result),
    ]
    try:
        hub.take_sample("load")
    except Exception:
        _log.debug("panel: first sample failed", exc_info=True)
    if getattr(session.shell, "kernel", None) is not None:  # a Jupyter kernel: tell the front end
        try:
            hub.announce()
        except Exception:
            _log.debug("panel: announce failed", exc_info=True)
    return hub


__all__ = [
    "FLUSH_INTERVAL_S",
    "MAX_BATCH_RECORDS",
    "MAX_FLUSH_INTERVAL_S",
    "SidePanelHub",
    "flush_times",
    "hub_for",
    "open_sidepanel",
]

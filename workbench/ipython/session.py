"""One shell's workbench: what ``%load_ext workbench`` set up in that shell, in one object.

A :class:`Session` owns the per-shell state: the cell ids of the cells the shell ran, the
cache feature's cell bookkeeping (which cell the compile tracker attributes compiles to,
the compile line), live mode's fingerprints, the side panel's link and the listeners of
the results the magics and twins produce.  It is stored on the shell itself (see
:meth:`Session.of`), created by ``%load_ext workbench`` and removed by ``%unload_ext``, so
two shells in one process (an embedded shell, tests) never share or overwrite each
other's state, and nothing outlives its shell.

Why the session registers the IPython hooks itself: IPython calls ``pre_run_cell`` and
``post_run_cell`` callbacks in the order they were registered, and the parts depend on
each other's order (the side panel's badge needs the cell's final label and complete
records, which the cache feature sets when the cell ends).  One hook of each kind,
calling the parts in the order written in :meth:`Session.pre_run_cell` and
:meth:`Session.post_run_cell`, states that order instead of leaving it to the order of
registration; and ``%unload_ext`` has exactly two hooks to remove.

Why result listeners: the magics (``%%jaxpr``, ``%%hlo``, ``%jaxbench``) and the benchmark
progress display tell the session what they produced (:meth:`Session.result_produced`);
whoever wants to know (the side panel: latest timings, live diffs) subscribes with
:meth:`Session.on_result`.  So the magics need not know that a side panel exists, and
an import-linter contract keeps it that way (pyproject.toml).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from workbench.engine.common.source import add_cell_resolver, remove_cell_resolver
from workbench.engine.live import LiveDiff
from workbench.ipython.cache_magics import CacheMagics, CellCompiles
from workbench.ipython.live_mode import LiveMode
from workbench.ipython.prompt import (
    CellIds,
    current_cell_id,
    prompt_number,
    register_cell_functions,
    shell_cell_labels,
)

_log = logging.getLogger(__name__)

#: the shell attribute that holds its session while the extension is loaded
_SESSION_ATTR = "_workbench_session"
#: the shell attribute that keeps the cell ids after an unload, for the next session (so
#: ``%reload_ext workbench`` still links the functions of earlier cells to their cells)
_CELL_IDS_ATTR = "_workbench_cell_ids"


@dataclass(frozen=True, slots=True)
class Result:
    """A result a magic or a twin produced in this shell, as its listeners receive it."""

    #: what produced it: ``"jaxpr"`` (an Inspection), ``"hlo"`` (an HloReport),
    #: ``"bench"`` (a Benchmark)
    kind: str
    value: Any
    #: the prompt number and JupyterLab id of the cell it was produced in (None outside
    #: a cell or without a front end that sends ids)
    cell: str | None = None
    cell_id: str | None = None
    #: live mode: what changed since the cell's previous result of the same kind (only
    #: for a whole-cell magic, ``%%jaxpr`` / ``%%hlo``, in a cell with an id)
    live_diff: LiveDiff | None = None


class Part(Protocol):
    """Something a session holds that must be closed with it (the side panel's hub)."""

    def close(self) -> None: ...


CellStarted = Callable[[str, str | None], None]
"""``(label, cell_id)`` when a cell starts."""
CellEnded = Callable[[int, str, str | None], None]
"""``(run, label, cell_id)`` when a cell ended: its final label, its records complete."""
ResultListener = Callable[[Result], None]

_L = TypeVar("_L")


class Session:
    """The workbench's state in one shell, from ``%load_ext`` to ``%unload_ext``."""

    def __init__(self, shell: Any, cell_ids: CellIds | None = None) -> None:
        self.shell = shell
        #: execution count -> JupyterLab cell id (kept by the next session after an unload)
        self.cell_ids = cell_ids if cell_ids is not None else CellIds(shell)
        #: the cache feature: the compile tracker's cell, the compile line, ``%jaxcache``
        self.compiles = CellCompiles(shell)
        self.cache_magics = CacheMagics(shell, self.compiles)
        #: live mode's fingerprints, by cell id
        self.live_mode = LiveMode()
        #: the side panel's link (set by the extension loader; closed first on unload)
        self.sidepanel: Part | None = None
        self._cell_started: list[CellStarted] = []
        self._cell_ended: list[CellEnded] = []
        self._results: list[ResultListener] = []
        #: name -> id of its value at the last cell's end: the per-cell pass that records
        #: which run defined each function looks only at what a cell bound
        self._ns_ids: dict[str, int] = {}
        self._resolver = shell_cell_labels(shell, self.cell_ids)
        self._open = False

    # -- where it lives ---------------------------------------------------------------
    @staticmethod
    def of(shell: Any) -> Session | None:
        """The shell's session while ``%load_ext workbench`` is in effect, else None."""
        session = getattr(shell, _SESSION_ATTR, None) if shell is not None else None
        return session if isinstance(session, Session) and session.shell is shell else None

    @classmethod
    def open(cls, shell: Any) -> Session:
        """Create the shell's session, install its hooks and store it on the shell (the
        open session if there is one: loading twice sets up nothing twice)."""
        session = cls.of(shell)
        if session is not None:
            return session
        ids = getattr(shell, _CELL_IDS_ATTR, None)
        session = cls(shell, ids if isinstance(ids, CellIds) and ids.shell is shell else None)
        session._install()
        setattr(shell, _SESSION_ATTR, session)
        return session

    def _install(self) -> None:
        self.compiles.install()
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)
        # the cell that loads the extension: its pre_run_cell came before our hook
        self.cell_ids.record_running()
        add_cell_resolver(self._resolver)
        self._open = True

    def close(self) -> None:
        """Undo :meth:`open`, in the reverse order: the side panel first (its ``bye``
        goes out while everything else still stands), then the hooks, the cache
        feature's listeners and configuration, and the session leaves the shell.  The
        cell ids stay on the shell for the next session.

        Why the ``finally``: if putting JAX's configuration back fails, the error reaches
        the user, but the session still leaves the shell; a session left behind, closed,
        would be taken for the open one by the next ``%load_ext``, which would then
        install nothing."""
        if not self._open:
            return
        self._open = False
        if self.sidepanel is not None:
            part, self.sidepanel = self.sidepanel, None
            try:
                part.close()
            except Exception:  # the rest of the unload must still happen
                _log.debug("workbench session: side panel close failed", exc_info=True)
        for name, cb in (
            ("pre_run_cell", self.pre_run_cell),
            ("post_run_cell", self.post_run_cell),
        ):
            try:
                self.shell.events.unregister(name, cb)
            except ValueError:
                pass
        try:
            self.compiles.uninstall()
        finally:
            remove_cell_resolver(self._resolver)
            self._cell_started.clear()
            self._cell_ended.clear()
            self._results.clear()
            self._ns_ids.clear()
            if getattr(self.shell, _SESSION_ATTR, None) is self:
                delattr(self.shell, _SESSION_ATTR)
            setattr(self.shell, _CELL_IDS_ATTR, self.cell_ids)

    # -- the IPython hooks: the order of the parts is decided here ---------------------
    def pre_run_cell(self, info: Any = None) -> None:
        """A cell starts: 1. its id is recorded beside its number (so its functions can be
        linked to it); 2. the compile tracker attributes compiles to it; 3. listeners
        (the side panel's memory sample) hear of it."""
        self.cell_ids.pre_run_cell(info)
        label, cell_id = self.compiles.begin_cell()
        _tell(self._cell_started, label, cell_id)

    def post_run_cell(self, result: Any = None) -> None:
        """A cell ended: 1. the cache feature closes its records and gives them the
        cell's final label; 2. listeners (the side panel's badge, which reads both) hear
        of it; 3. the compile line is shown beside the cell."""
        ended = self.compiles.end_cell(result)
        if ended is None:
            return
        run, label, cell_id = ended
        try:  # which run defined each new function (for files shared by identical cells)
            register_cell_functions(
                self.shell, getattr(result, "execution_count", None), cell_id, self._ns_ids
            )
        except Exception:  # a nicety: never a failure of the user's cell
            _log.debug("cell functions not recorded", exc_info=True)
        _tell(self._cell_ended, run, label, cell_id)
        self.compiles.show_compile_line(run, label)

    # -- listeners ---------------------------------------------------------------------
    def on_cell_start(self, callback: CellStarted) -> Callable[[], None]:
        """Call ``callback(label, cell_id)`` when a cell starts; returns the unsubscribe."""
        return _subscribe(self._cell_started, callback)

    def on_cell_end(self, callback: CellEnded) -> Callable[[], None]:
        """Call ``callback(run, label, cell_id)`` when a cell ended; returns the unsubscribe."""
        return _subscribe(self._cell_ended, callback)

    def on_result(self, callback: ResultListener) -> Callable[[], None]:
        """Call ``callback(result)`` with each :class:`Result` produced in this shell;
        returns the unsubscribe.  Listeners' errors are logged, never raised into a cell."""
        return _subscribe(self._results, callback)

    def result_produced(self, kind: str, value: Any, *, whole_cell: bool = False) -> None:
        """A magic or a twin produced ``value`` (``kind``: ``"jaxpr"``, ``"hlo"``,
        ``"bench"``).  ``whole_cell``: it came from a cell magic (``%%jaxpr``), so a re-run
        of the same cell is comparable (live mode)."""
        cell_id = current_cell_id(self.shell)
        number = prompt_number(self.shell)
        diff = None
        if whole_cell and cell_id is not None and self.live_mode.compares(kind):
            try:
                diff = self.live_mode.compare(kind, value, cell_id)
            except Exception:  # a nicety: never a failure of the user's cell
                _log.debug("live mode: no diff", exc_info=True)
        result = Result(kind, value, None if number is None else str(number), cell_id, diff)
        _tell(self._results, result)


def publish_result(shell: Any, kind: str, value: Any, *, whole_cell: bool = False) -> None:
    """For the magics: :meth:`Session.result_produced` in ``shell``'s session (nothing
    when the shell has none: a magic class registered by hand)."""
    session = Session.of(shell)
    if session is not None:
        session.result_produced(kind, value, whole_cell=whole_cell)


def current_session() -> Session | None:
    """The session of the running IPython shell, if it loaded the workbench."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    return Session.of(get_ipython())


def _subscribe(listeners: list[_L], callback: _L) -> Callable[[], None]:
    if callback not in listeners:
        listeners.append(callback)

    def unsubscribe() -> None:
        listeners[:] = [cb for cb in listeners if cb != callback]

    return unsubscribe


def _tell(listeners: list[Callable[..., None]], *args: Any) -> None:
    for cb in list(listeners):
        try:
            cb(*args)
        except Exception:  # a listener's bug never breaks the user's cell
            _log.debug("workbench session: listener failed", exc_info=True)


__all__ = ["Part", "Result", "Session", "current_session", "publish_result"]

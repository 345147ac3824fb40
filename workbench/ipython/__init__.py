"""The IPython front door: ``%load_ext workbench`` installs the magics and the cell hooks.

One module per magic family (``jaxpr_magics``, ``hlo_magics``, ``bench_magics``,
``sharding_magics``, ``profile_magics``, ``cache_magics``), the cell semantics they share
(``cell``), their flag parsing (``args``), the benchmark's progress display
(``bench_progress``: display updates), live mode (``live_mode``) and the side panel's
comm (``sidepanel``).  Each shell's state is its :class:`~workbench.ipython.session.Session`
(``session``).  :func:`load` and :func:`unload` are the only places that touch the
shell's registries, so ``%unload_ext`` undoes exactly what ``%load_ext`` did; and this
module is the only one that imports the side panel's (pyproject.toml's import contracts).
"""

from __future__ import annotations

from typing import Any, cast

from workbench.engine.bench.result import Benchmark
from workbench.engine.cache.records import CacheSnapshot, CellSummary, PersistentCacheStatus
from workbench.engine.cluster.compare import ClusterReport
from workbench.engine.hlo.report import HloReport
from workbench.engine.memory.owners import LiveMemory
from workbench.engine.memory.program import ProgramMemory
from workbench.engine.profile.report import ProfileReport
from workbench.engine.sharding.mesh_explorer import ExplorerResult
from workbench.engine.stages import Inspection
from workbench.ipython.bench_magics import BenchMagics
from workbench.ipython.cluster_magics import ClusterMagics
from workbench.ipython.hlo_magics import HloMagics
from workbench.ipython.jaxpr_magics import JaxprMagics
from workbench.ipython.memory_magics import MemoryMagics
from workbench.ipython.profile_magics import ProfileMagics
from workbench.ipython.session import Session
from workbench.ipython.sharding_magics import ShardingMagics
from workbench.ipython.sidepanel import open_sidepanel
from workbench.views.bench import BENCH_VIEW
from workbench.views.cache import CACHE_VIEW, CELL_VIEW, PERSISTENT_VIEW
from workbench.views.cluster import CLUSTER_VIEW
from workbench.views.display import View
from workbench.views.hlo import HLO_VIEW
from workbench.views.jaxpr import JAXPR_VIEW
from workbench.views.memory import LIVE_VIEW, PROGRAM_VIEW
from workbench.views.mesh_explorer import MESH_EXPLORER_VIEW
from workbench.views.profile import PROFILE_VIEW

_MAGIC_CLASSES = (
    JaxprMagics,
    HloMagics,
    BenchMagics,
    ShardingMagics,
    ProfileMagics,
    MemoryMagics,
    ClusterMagics,
)

#: engine records shown on their own (``h.report``, ``Benchmark.from_json(saved)``,
#: ``workbench.inspect(...)``) draw through the same view as their front door's display
_RECORD_VIEWS: dict[type, View[Any]] = {
    Inspection: JAXPR_VIEW,
    HloReport: HLO_VIEW,
    Benchmark: BENCH_VIEW,
    ExplorerResult: MESH_EXPLORER_VIEW,
    CacheSnapshot: CACHE_VIEW,
    CellSummary: CELL_VIEW,
    PersistentCacheStatus: PERSISTENT_VIEW,
    ProfileReport: PROFILE_VIEW,
    LiveMemory: LIVE_VIEW,
    ProgramMemory: PROGRAM_VIEW,
    ClusterReport: CLUSTER_VIEW,
}


#: the attribute of each record that holds the whole text its view bounds in ``text/plain``
#: (named by the line on what was left out); a record missing here has none
_RECORD_WHOLE_TEXT: dict[type, str] = {Inspection: ".jaxpr_text", HloReport: ".text"}


def _record_bundle(record: Any, include: Any = None, exclude: Any = None) -> Any:
    return _RECORD_VIEWS[type(record)].bundle(
        record, include, exclude, whole_text=_RECORD_WHOLE_TEXT.get(type(record))
    )


def load(shell: Any) -> Session:
    """Register the magics and the engine records' displays, and open the shell's
    session (its cell hooks, the cache feature, the side panel's link)."""
    for cls in _MAGIC_CLASSES:
        shell.register_magics(cls)
    for record_type in _RECORD_VIEWS:
        shell.display_formatter.mimebundle_formatter.for_type(record_type, _record_bundle)
    session = Session.of(shell)
    if session is not None:  # loaded twice without an unload: one of everything
        return session
    session = Session.open(shell)
    shell.register_magics(session.cache_magics)
    session.sidepanel = open_sidepanel(session)
    return session


def unload(shell: Any) -> None:
    """Remove what :func:`load` installed (all of it, even when closing the session
    raises: the error still reaches the user, after the magics and displays are gone)."""
    session = Session.of(shell)
    try:
        if session is not None:
            registered = shell.magics_manager.magics["line"]
            # IPython declares ``Magics.magics = None``; @magics_class fills in
            # {kind: {name: ...}}
            for name in cast(dict[str, dict[str, Any]], session.cache_magics.magics)["line"]:
                if getattr(registered.get(name), "__self__", None) is session.cache_magics:
                    registered.pop(name, None)
            session.close()  # the side panel first: its bye goes out while the rest stands
    finally:
        _unregister(shell)


def _unregister(shell: Any) -> None:
    """The magic classes and the engine records' displays go."""
    magics = shell.magics_manager.magics
    for cls in _MAGIC_CLASSES:
        table = cast(dict[str, dict[str, Any]], cls.magics)
        for kind in ("line", "cell"):
            for name in table[kind]:
                magics[kind].pop(name, None)
    for record_type in _RECORD_VIEWS:
        shell.display_formatter.mimebundle_formatter.type_printers.pop(record_type, None)


__all__ = ["load", "unload"]

"""The IPython front door: ``%load_ext workbench`` installs the magics and the cell hooks.

One module per magic family (``jaxpr_magics``, ``hlo_magics``, ``bench_magics``,
``sharding_magics``, ``cache_magics``), the cell semantics they share (``cell``), their
flag parsing (``args``) and the live benchmark output (``bench_progress``: display updates).  :func:`load` and :func:`unload`
are the only places that touch the shell's registries, so ``%unload_ext`` undoes
exactly what ``%load_ext`` did.
"""

from __future__ import annotations

from typing import Any, cast

from workbench.engine.bench.result import Benchmark
from workbench.engine.cache.records import CacheSnapshot, CellSummary, PersistentCacheStatus
from workbench.engine.common.source import set_cell_resolver
from workbench.engine.hlo.report import HloReport
from workbench.engine.profile.report import ProfileReport
from workbench.engine.sharding.mesh_explorer import ExplorerResult
from workbench.engine.stages import Inspection
from workbench.ipython import cache_magics, sidepanel
from workbench.ipython.bench_magics import BenchMagics
from workbench.ipython.hlo_magics import HloMagics
from workbench.ipython.jaxpr_magics import JaxprMagics
from workbench.ipython.profile_magics import ProfileMagics
from workbench.ipython.prompt import CellIds, shell_cell_labels
from workbench.ipython.sharding_magics import ShardingMagics
from workbench.views.bench import BENCH_VIEW
from workbench.views.cache import CACHE_VIEW, CELL_VIEW, PERSISTENT_VIEW
from workbench.views.display import Display, View
from workbench.views.hlo import HLO_VIEW
from workbench.views.jaxpr import JAXPR_VIEW
from workbench.views.mesh_explorer import MESH_EXPLORER_VIEW
from workbench.views.profile import PROFILE_VIEW

_MAGIC_CLASSES = (JaxprMagics, HloMagics, BenchMagics, ShardingMagics, ProfileMagics)

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
}


#: each shell's execution count -> cell id record (its pre_run_cell hook while loaded; kept
#: after an unload so that ``%reload_ext workbench`` still knows the earlier cells)
_CELL_IDS: dict[int, CellIds] = {}


def _record_bundle(record: Any, include: Any = None, exclude: Any = None) -> Any:
    return Display(record, _RECORD_VIEWS[type(record)])._repr_mimebundle_(include, exclude)


def load(shell: Any) -> None:
    """Register the magics, the engine records' displays and the cache feature's hooks."""
    for cls in _MAGIC_CLASSES:
        shell.register_magics(cls)
    for record_type in _RECORD_VIEWS:
        shell.display_formatter.mimebundle_formatter.for_type(record_type, _record_bundle)
    cache_magics.load(shell)
    ids = _CELL_IDS.get(id(shell))
    if ids is None or ids.shell is not shell:
        ids = _CELL_IDS[id(shell)] = CellIds(shell)
    _unhook(shell, ids)  # loaded twice without an unload: one hook, not two
    shell.events.register("pre_run_cell", ids.pre_run_cell)
    ids.record_running()
    set_cell_resolver(shell_cell_labels(shell, ids))
    # after cache_magics: the panel's post_run_cell reads the cell's final label from it
    sidepanel.load(shell)


def unload(shell: Any) -> None:
    """Remove what :func:`load` installed."""
    sidepanel.unload(shell)  # first: its bye goes out while everything else still stands
    magics = shell.magics_manager.magics
    for cls in _MAGIC_CLASSES:
        # IPython declares ``Magics.magics = None``; @magics_class fills in {kind: {name: ...}}
        table = cast(dict[str, dict[str, Any]], cls.magics)
        for kind in ("line", "cell"):
            for name in table[kind]:
                magics[kind].pop(name, None)
    for record_type in _RECORD_VIEWS:
        shell.display_formatter.mimebundle_formatter.type_printers.pop(record_type, None)
    cache_magics.unload(shell)
    ids = _CELL_IDS.get(id(shell))
    if ids is not None:  # the hook goes; the record stays for a %reload_ext
        _unhook(shell, ids)
    set_cell_resolver(None)


def _unhook(shell: Any, ids: CellIds) -> None:
    try:
        shell.events.unregister("pre_run_cell", ids.pre_run_cell)
    except ValueError:
        pass


__all__ = ["load", "unload"]

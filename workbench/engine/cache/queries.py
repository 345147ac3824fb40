"""Read-outs of the tracker's tables: the function table, one cell's summary, the
persistent cache's status.  They write nothing the tracker keeps: the function table
copies the live rows (the tracker calls it under its lock), the others read copies.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from workbench.engine.cache.attribution import FunctionState
from workbench.engine.cache.persistent import PersistentCounts, persistent_cache_settings
from workbench.engine.cache.records import (
    CellSummary,
    CompileRecord,
    FunctionGroup,
    FunctionStats,
    PersistentCacheStatus,
)


def function_table(states: Iterable[FunctionState]) -> list[FunctionStats]:
    """Every function that traced, lowered or compiled: the user's first, the most
    expensive first; ``entries`` counts the executables of its objects still alive.

    Copies, so a snapshot stays what it was when taken (and a view can read it while
    another thread compiles): the tracker goes on updating its own rows.
    """
    out = []
    for state in states:
        st = state.stats
        if st.compiles or st.traces or st.lowers:
            row = copy.copy(st)  # shallow, then the two mutable parts: quick at 500 rows
            row.entries = (
                sum(o.entries for o in list(state.objects.values()) if o.alive())
                if state.objects
                else 0
            )
            row.misses = list(st.misses)
            out.append(row)
    return sorted(out, key=lambda s: (s.origin != "user", -s.compile_s - s.trace_s))


def persistent_status(counts: PersistentCounts) -> PersistentCacheStatus:
    """The persistent cache's current settings with this session's counts."""
    st = persistent_cache_settings()
    st.hits, st.misses, st.written = counts.hits, counts.misses, counts.written
    st.time_saved_s = counts.saved_s
    return st


#: JAX's helper compiles show in a cell's line only when together they took this long
#: (each eager op's first use compiles a tiny program: noise under most cells); they
#: are always in ``%jaxcache``.
HELPERS_SHOWN_FROM_S = 0.05


def cell_summary(records: Iterable[CompileRecord], label: str) -> CellSummary:
    """One cell's records grouped per function (the workbench's inspections of a
    function apart from the user's calls of it); JAX's helpers in one group of their
    own, left out when they cost less than :data:`HELPERS_SHOWN_FROM_S`."""
    records = list(records)
    groups: dict[tuple[str, str], FunctionGroup] = {}
    helpers: FunctionGroup | None = None
    for rec in records:
        if rec.origin == "jax":
            helpers = helpers or FunctionGroup("JAX helpers", "jax")
            g = helpers
            if rec.function not in g.names:
                g.names.append(rec.function)
        else:
            g = groups.setdefault(
                (rec.key or rec.function, rec.origin), FunctionGroup(rec.function, rec.origin)
            )
            if rec.function.startswith("jit(") and not g.function.startswith("jit("):
                g.function = rec.function  # make_jaxpr(f) then jit(f): the jit names it
            if rec.inspected_by and rec.inspected_by not in g.inspected_by:
                g.inspected_by.append(rec.inspected_by)
        g.add(rec)
        if rec.persistent_cache == "written":
            g.persistent_written += 1
        if rec.origin != "jax":
            g.add_reasons(rec)
            if rec.call_site is not None:
                g.call_sites.append(rec.call_site)
    if helpers is not None and helpers.total_s < HELPERS_SHOWN_FROM_S:
        helpers = None
    cell_id = next((r.cell_id for r in records if r.cell_id is not None), None)
    return CellSummary(label, list(groups.values()), helpers, cell_id)


__all__ = ["HELPERS_SHOWN_FROM_S", "cell_summary", "function_table", "persistent_status"]

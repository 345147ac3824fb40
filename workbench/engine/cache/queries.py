"""Read-outs of the tracker's tables: the function table, one cell's summary, the
persistent cache's status.  They write nothing the tracker keeps: the function table
copies the live rows (the tracker calls it under its lock), the others read copies.
"""

from __future__ import annotations

import dataclasses
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
            entries = sum(o.entries for o in list(state.objects.values()) if o.alive())
            out.append(dataclasses.replace(st, entries=entries, misses=list(st.misses)))
    return sorted(out, key=lambda s: (s.origin != "user", -s.compile_s - s.trace_s))


def persistent_status(counts: PersistentCounts) -> PersistentCacheStatus:
    """The persistent cache's current settings with this session's counts."""
    st = persistent_cache_settings()
    st.hits, st.misses, st.written = counts.hits, counts.misses, counts.written
    st.time_saved_s = counts.saved_s
    return st


def cell_summary(records: Iterable[CompileRecord], label: str) -> CellSummary:
    """One cell's records grouped per function; JAX's helpers in one group of their own."""
    groups: dict[str, FunctionGroup] = {}
    helpers: FunctionGroup | None = None
    for rec in records:
        if rec.origin == "jax":
            helpers = helpers or FunctionGroup("JAX helpers", "jax")
            g = helpers
            if rec.function not in g.names:
                g.names.append(rec.function)
        else:
            g = groups.setdefault(rec.key or rec.function,
                                  FunctionGroup(rec.function, rec.origin))
        g.add(rec)
        if rec.persistent_cache == "written":
            g.persistent_written += 1
        if rec.origin != "jax":
            seen = {r.text() for r in g.reasons}
            g.reasons.extend(r for r in rec.reasons
                             if r.kind != "new_function" and r.text() not in seen)
            if rec.call_site is not None:
                g.call_sites.append(rec.call_site)
    return CellSummary(label, list(groups.values()), helpers)


__all__ = ["cell_summary", "function_table", "persistent_status"]

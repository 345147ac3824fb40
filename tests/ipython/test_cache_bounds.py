"""The cache stays bounded: the tracker keeps the newest records and a bounded set of
function rows, ``%jaxcache`` shows a bounded payload and says how many more there are, what
the tracker remembers of an inspection holds no function alive, and the schema states the
same bounds the tracker keeps."""

from __future__ import annotations

import pytest

from workbench.engine import _jax_compat as compat
from workbench.engine.cache import CACHE, CacheTracker, attribution, tracker
from workbench.views.cache import CACHE_MIME, MAX_FUNCTIONS_SHOWN, MAX_RECORDS_SHOWN

# stories over several cells: part of the full run, not of the quick loop
pytestmark = pytest.mark.slow


@pytest.fixture
def cell(run):
    """``run`` for cells that must succeed."""
    return lambda code: run(code).ok()


def _drive(t: CacheTracker, cells: int) -> None:
    """``cells`` cells each compiling a function, through the tracker's JAX listeners."""
    for i in range(cells):
        t.begin_cell(str(i))
        name = f"f{i // 3}"
        t._on_duration(compat.TRACE_EVENT, 1e-3, fun_name=name)
        t._on_duration(compat.LOWER_EVENT, 1e-3, fun_name=f"jit({name})")
        t._on_duration(compat.COMPILE_EVENT, 1e-3, fun_name=f"jit({name})")
        t.end_cell()


def test_records_and_function_rows_are_bounded():
    t = CacheTracker()
    _drive(t, tracker.MAX_RECORDS + 50)
    recs = t.records()
    assert len(recs) == tracker.MAX_RECORDS
    assert recs[-1].cell == str(tracker.MAX_RECORDS + 49)  # the newest are kept
    assert len(t.functions()) <= attribution.MAX_FUNCTIONS
    assert len(t.records(cell_run=tracker.MAX_RECORDS + 50)) == 1  # one cell's own


def test_jaxcache_payload_is_bounded(cell, monkeypatch):
    t = CacheTracker()
    _drive(t, 3 * MAX_FUNCTIONS_SHOWN + MAX_RECORDS_SHOWN)
    monkeypatch.setattr(CACHE, "snapshot", t.snapshot)  # %jaxcache reads CACHE
    data = cell("%jaxcache").bundle[CACHE_MIME]
    assert len(data["records"]) == MAX_RECORDS_SHOWN
    assert data["records_total"] == len(t.records()) > MAX_RECORDS_SHOWN
    assert len(data["functions"]) == MAX_FUNCTIONS_SHOWN < data["functions_total"]
    text = cell("%jaxcache").bundle["text/plain"]
    assert f"and {data['functions_total'] - MAX_FUNCTIONS_SHOWN} more functions" in text


def test_inspected_traces_hold_functions_weakly(cell):
    """What the tracker remembers of an inspection keeps no function (nor its closure's
    arrays) alive, and the list is bounded."""
    import weakref

    cell("def make_weak(k):\n    return jax.jit(lambda x: x * k)\nfn_weak = make_weak(2.0)")
    cell("%%jaxpr\nfn_weak(jnp.ones(3))")
    held = [it for it in CACHE._attribution.inspected if it.function == "jit(<lambda>)"]
    assert held and all(isinstance(it.ref, weakref.ref) for it in held)
    assert CACHE._attribution.inspected.maxlen == attribution.MAX_INSPECTED


def test_schema_states_the_tracker_bounds():
    import json
    from importlib.resources import files

    schema = json.loads(files("workbench.schemas").joinpath("cache.schema.json").read_text())
    props = schema["properties"]
    assert props["functions"]["maxItems"] == attribution.MAX_FUNCTIONS
    assert props["functions_total"]["maximum"] == attribution.MAX_FUNCTIONS
    assert props["records"]["maxItems"] == tracker.MAX_RECORDS
    assert props["records_total"]["maximum"] == tracker.MAX_RECORDS

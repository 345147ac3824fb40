"""Issue 11, items 6-10, 17, 18: the compile line and ``%jaxcache`` tell the truth.

Each test runs the issue's reproducer in the session's real IPython shell (the
workbench loaded) and reads the compile line's payload (``cache-cell``) or the
tracker's records.  Every one failed before its fix.
"""

from __future__ import annotations

import logging
import math

import jax
import pytest

from tests.ipython import test_cache
from workbench.engine import _jax_compat as compat
from workbench.engine.cache import CACHE, CacheTracker, attribution, queries, tracker
from workbench.views.cache import (
    CACHE_MIME,
    CACHE_PERSISTENT_MIME,
    MAX_FUNCTIONS_SHOWN,
    MAX_RECORDS_SHOWN,
)

# compile-line stories over several cells each: part of the full run, not of the quick loop
pytestmark = pytest.mark.slow


class Cell(test_cache.Cell):
    """test_cache's cell run, read by function group (user or workbench)."""

    @property
    def text(self) -> str:
        return self.lines[0]["text/plain"] if self.lines else ""

    def groups(self, function: str, origin: str | None = None) -> list[dict]:
        found = [
            g
            for g in (self.summary or {}).get("functions", [])
            if g["function"] == function and (origin is None or g["origin"] == origin)
        ]
        return found

    def reasons(self, function: str) -> list[dict]:
        (g,) = self.groups(function, "user")
        return g["reasons"]


@pytest.fixture
def cell(shell):
    def _cell(code: str) -> Cell:
        c = Cell(shell, code)
        assert c.error is None, c.error
        return c

    shell.run_cell("from functools import partial", store_history=False)
    return _cell


def _no_user_blame(c: Cell) -> None:
    """The line blames the user for nothing: no retrace/recompile reason anywhere."""
    for g in (c.summary or {}).get("functions", []):
        assert g["reasons"] == [], g
    assert "retraced" not in c.text and "recompiled" not in c.text, c.text


# -- item 6: the workbench's own work ---------------------------------------------------------


def test_jaxpr_grad_twice_is_inspection_not_a_new_closure(cell):
    cell("def loss_i6(w):\n    return jnp.sum(jnp.sin(w))\nw_i6 = jnp.ones(3)")
    for _ in range(2):
        c = cell("%%jaxpr -t grad\nloss_i6(w_i6)")
        _no_user_blame(c)
        (g,) = c.groups("jit(grad(loss_i6))")
        assert g["origin"] == "workbench" and g["inspected_by"] == ["%%jaxpr"]
        assert "inspected by %%jaxpr" in c.text
    c = cell(
        "import workbench\n_ins_i6 = workbench.inspect(loss_i6, w_i6, transforms='grad')\n"
        "_ins_i6.jaxpr;"
    )
    _no_user_blame(c)
    assert "inspected by workbench.inspect" in c.text
    rec = CACHE.records()[-1]
    assert (rec.origin, rec.inspected_by, rec.reasons) == ("workbench", "workbench.inspect", [])


def test_hlo_after_jaxpr_is_no_recompile_and_no_earlier_compile(cell):
    cell("@jax.jit\ndef f_i6h(x):\n    return jnp.sum(jnp.cos(x) * 2)\nx_i6h = jnp.ones(3)")
    for magic in ("%%jaxpr -t grad", "%%hlo -t grad", "%%jaxpr", "%%hlo"):
        c = cell(f"{magic}\nf_i6h(x_i6h)")
        _no_user_blame(c)
        if c.summary is None:  # JAX had the trace cached (traced inside the grad): no work
            continue
        assert all(g["origin"] == "workbench" for g in c.summary["functions"]), c.summary
        assert f"inspected by {magic.split()[0]}" in c.text
    # the user's own calls: their first compile is a first compile, and a new shape is
    # explained against the user's call, never against the inspection's
    c = cell("f_i6h(jnp.ones(5))")
    assert c.reasons("jit(f_i6h)") == []
    (r,) = cell("f_i6h(jnp.ones(6))").reasons("jit(f_i6h)")
    assert (r["kind"], r["before"], r["after"]) == ("shape", "f32[5]", "f32[6]")
    stats = [f for f in CACHE.functions() if f.function == "jit(f_i6h)"][-1]
    assert stats.recompiles == 1  # the inspections are not the function's compiles


def test_mesh_explorer_compile_is_the_workbenchs(cell):
    from workbench.engine.sharding.mesh_explorer import ExplorerConfig, explore

    with CACHE.capture(include_partial=True) as recs:
        explore(ExplorerConfig.default(8, operation="matmul"))
        explore(ExplorerConfig.default(8, operation="matmul", shape="64, 32"))
    mine = [r for r in recs if r.origin != "jax"]
    assert mine and all(r.origin == "workbench" and r.reasons == [] for r in mine)
    assert {r.inspected_by for r in mine} == {"the mesh explorer"}


def test_cheap_jax_helpers_stay_out_of_the_cell_line(cell, monkeypatch):
    c = cell("_h_i6 = jnp.arange(7, dtype=jnp.int16).astype(jnp.int8) + 1")
    recs = [r for r in CACHE.records() if r.cell == str(c.result.execution_count)]
    helpers = [r for r in recs if r.origin == "jax"]
    assert helpers, "the cell compiled JAX helpers"
    cost = sum(r.total_s for r in helpers)
    if cost < queries.HELPERS_SHOWN_FROM_S:
        assert c.summary is None or c.summary["jax_helpers"] is None
    else:
        assert c.summary["jax_helpers"]["total_s"] >= queries.HELPERS_SHOWN_FROM_S
    # always in %jaxcache
    names = {f["function"] for f in cell("%jaxcache").bundle[CACHE_MIME]["functions"]}
    assert {r.function for r in helpers} <= names or cell("%jaxcache").bundle[CACHE_MIME][
        "functions_total"
    ] > MAX_FUNCTIONS_SHOWN
    monkeypatch.setattr(queries, "HELPERS_SHOWN_FROM_S", math.inf)
    c = cell("_h_i6b = jnp.arange(9, dtype=jnp.int16).astype(jnp.uint16) * 3")
    assert c.summary is None


# -- item 7: pmap -----------------------------------------------------------------------------


def test_pmap_function_is_the_users_with_a_shape_reason(cell):
    n = jax.local_device_count()
    c = cell(
        "@partial(jax.pmap, axis_name='i')\ndef pm_i7(x):\n    return jax.lax.psum(x, 'i')\n"
        f"pm_i7(jnp.ones(({n}, 3)))"
    )
    assert c.groups("pmap(pm_i7)", "user"), c.summary
    assert "_fun" not in c.text
    c = cell(f"pm_i7(jnp.ones(({n}, 4)))")
    (r,) = c.reasons("pmap(pm_i7)")
    assert (r["kind"], r["path"]) == ("shape", "x")
    assert (r["before"], r["after"]) == (f"f32[{n},3]", f"f32[{n},4]")


# -- item 8: static keyword arguments with defaults -------------------------------------------


def test_static_keyword_with_default_reasons_say_what_jax_compares(cell):
    cell(
        "@partial(jax.jit, static_argnames=('mode',))\ndef layer_i8(x, mode='train'):\n"
        "    return x * 2 if mode == 'train' else x\nx_i8 = jnp.ones(3)\n"
        "layer_i8(x_i8, mode='eval')"
    )
    (r,) = cell("layer_i8(x_i8)").reasons("jit(layer_i8)")
    assert r["kind"] == "static_arg" and r["path"] == "mode"
    assert "None" not in r["text"]
    assert "mode='eval' before" in r["text"] and "omitted" in r["text"]
    assert "default 'train'" in r["text"]
    (r,) = cell("layer_i8(x_i8, 'eval')").reasons("jit(layer_i8)")
    assert r["kind"] == "static_arg" and "None" not in r["text"]
    assert "by position" in r["text"], r["text"]


# -- item 9: after make_jaxpr -----------------------------------------------------------------


def test_after_make_jaxpr_a_new_shape_has_its_reason(cell):
    cell(
        "@jax.jit\ndef f_i9(x):\n    return x + 1\nx3_i9 = jnp.ones(3)\n"
        "print(jax.make_jaxpr(f_i9)(x3_i9))"
    )
    cell("f_i9(x3_i9)")
    (r,) = cell("f_i9(jnp.ones(4))").reasons("jit(f_i9)")
    assert r["text"] == "x changed f32[3] -> f32[4]"


def test_after_make_jaxpr_a_new_static_self_has_its_reason(cell):
    cell(
        "class D_i9:\n    def __init__(self, k):\n        self.k = k\n"
        "    def __hash__(self):\n        return hash(self.k)\n"
        "    def __eq__(self, o):\n        return isinstance(o, D_i9) and o.k == self.k\n"
        "    def __repr__(self):\n        return f'D_i9({self.k})'\n"
        "    @partial(jax.jit, static_argnums=0)\n    def apply(self, x):\n"
        "        return x * self.k\n"
        "d_i9 = D_i9(2.0)\nprint(jax.make_jaxpr(d_i9.apply)(jnp.ones(3)))"
    )
    cell("d_i9.apply(jnp.ones(3))")
    (r,) = cell("D_i9(3.0).apply(jnp.ones(3))").reasons("jit(apply)")
    assert r["text"] == "static self changed D_i9(2.0) -> D_i9(3.0)"


def test_jit_lambda_recreated_by_a_rerun_cell(cell):
    code = (
        "f_i9l = jax.jit(lambda x: x * 2)\nprint(jax.make_jaxpr(f_i9l)(jnp.ones(3)))\n"
        "f_i9l(jnp.ones(3))"
    )
    first = cell(code)
    c = cell(code)
    (r,) = c.reasons("jit(<lambda>)")
    assert r["kind"] == "closure"
    assert f"cell [{first.result.execution_count}] ran again" in r["text"]


# -- item 10: after %%jaxpr traced a new static value -----------------------------------------


def test_call_after_jaxpr_of_a_new_static_is_explained_as_the_users(cell):
    cell(
        "@partial(jax.jit, static_argnums=1)\ndef h_i10(x, n):\n    return x * n\n"
        "x_i10 = jnp.ones(3)\nh_i10(x_i10, 2)"
    )
    c = cell("%%jaxpr\nh_i10(x_i10, 3)")
    _no_user_blame(c)
    c = cell("h_i10(x_i10, 3)")
    (r,) = c.reasons("jit(h_i10)")
    assert "cached trace" not in r["text"]
    assert (r["kind"], r["path"], r["before"], r["after"]) == ("static_arg", "n", "2", "3")


# -- item 17: the persistent cache -------------------------------------------------------------


def test_persistent_cache_write_log_stays_out_of_the_cell(cell, tmp_path, caplog):
    # JAX's own log handler writes to the process's stderr (a notebook shows it in the
    # cell); caplog sees every record that reaches a handler
    try:
        cell(f"%jaxcache persist {tmp_path} --min-compile-time 0")
        with caplog.at_level(logging.DEBUG, logger="jax"):
            c = cell("@jax.jit\ndef f_i17(x):\n    return jnp.sin(x) * 5\nf_i17(jnp.ones(4))")
        assert [r.persistent_cache for r in CACHE.records() if r.function == "jit(f_i17)"] == [
            "written"
        ]
        shown = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert not [m for m in shown if "persistent compilation cache" in m], shown
        assert "Writing" not in c.stdout + c.stderr
    finally:
        cell("%jaxcache persist off")


@pytest.mark.parametrize(
    "line, says",
    [
        ("/proc", "cannot write"),
        ("''", "directory is empty"),
        ("DIR --min-compile-time nan", "--min-compile-time"),
        ("DIR --min-compile-time -1", "--min-compile-time"),
        ("DIR --min-entry-size -5", "--min-entry-size"),
    ],
)
def test_persist_refuses_settings_that_cannot_work(shell, tmp_path, line, says):
    before = Cell(shell, "%jaxcache persist").bundle[CACHE_PERSISTENT_MIME]
    c = Cell(shell, "%jaxcache persist " + line.replace("DIR", str(tmp_path / "pc")))
    assert c.error is not None and says in str(c.error), (c.error, c.stdout)
    assert "Traceback" not in c.stdout + c.stderr
    after = Cell(shell, "%jaxcache persist").bundle[CACHE_PERSISTENT_MIME]
    assert after == before  # nothing changed


# -- item 18: bounded records ------------------------------------------------------------------


def _drive(t: CacheTracker, cells: int) -> None:
    """``cells`` cells each compiling a function, through the tracker's JAX listeners."""
    for i in range(cells):
        t.begin_cell(str(i))
        name = f"f{i // 3}"
        t._on_duration(compat.TRACE_EVENT, 1e-3, fun_name=name)
        t._on_duration(compat.LOWER_EVENT, 1e-3, fun_name=f"jit({name})")
        t._on_duration(compat.COMPILE_EVENT, 1e-3, fun_name=f"jit({name})")
        t.end_cell()


@pytest.mark.slow  # fills the store past 10,000 records
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

    cell("def make_i6(k):\n    return jax.jit(lambda x: x * k)\nfn_i6 = make_i6(2.0)")
    cell("%%jaxpr\nfn_i6(jnp.ones(3))")
    held = [it for it in CACHE._attribution.inspected if it.function == "jit(<lambda>)"]
    assert held and all(isinstance(it.ref, weakref.ref) for it in held)
    assert CACHE._attribution.inspected.maxlen == attribution.MAX_INSPECTED


def test_call_after_jaxpr_with_a_redundant_static_flag_is_explained(cell):
    # --static-argnums naming what the jit already declares static changes nothing: the
    # function is traced through its own jit, so the next call reuses that trace
    cell(
        "@partial(jax.jit, static_argnums=1)\ndef h_i10r(x, n):\n    return x * n\n"
        "x_i10r = jnp.ones(3)\nh_i10r(x_i10r, 2)"
    )
    flagged = cell("%%jaxpr --static-argnums 1\nh_i10r(x_i10r, 3)")
    _no_user_blame(flagged)
    (r,) = cell("h_i10r(x_i10r, 3)").reasons("jit(h_i10r)")
    assert (r["kind"], r["path"], r["before"], r["after"]) == ("static_arg", "n", "2", "3")
    plain = cell("%%jaxpr\nh_i10r(x_i10r, 3)")
    assert flagged.bundle["text/plain"] == plain.bundle["text/plain"]


def test_call_after_two_jaxpr_inspections_is_matched_to_its_own_trace(cell):
    # two inspections with the same array types: the call's compile comes from the trace
    # of its own static value, not from the latest inspection
    cell(
        "@partial(jax.jit, static_argnums=1)\ndef h_i10m(x, n):\n    return x * n\n"
        "x_i10m = jnp.ones(3)\nh_i10m(x_i10m, 2)"
    )
    cell("%%jaxpr\nh_i10m(x_i10m, 3)")
    cell("%%jaxpr\nh_i10m(x_i10m, 4)")
    (r,) = cell("h_i10m(x_i10m, 3)").reasons("jit(h_i10m)")
    assert (r["kind"], r["path"], r["before"], r["after"]) == ("static_arg", "n", "2", "3")
    (r,) = cell("h_i10m(x_i10m, 4)").reasons("jit(h_i10m)")
    assert (r["kind"], r["path"], r["after"]) == ("static_arg", "n", "4")


def test_an_inspection_on_one_thread_never_marks_a_compile_on_another(shell):
    import threading

    import jax.numpy as jnp

    from workbench.engine.cache import inspecting

    @jax.jit
    def f_thr_user(x):
        return x * 5

    @jax.jit
    def f_thr_insp(x):
        return x - 5

    inside, done = threading.Event(), threading.Event()

    def inspect_in_background() -> None:
        with inspecting("%%hlo"):
            inside.set()
            f_thr_insp.lower(jnp.ones(3)).compile()
            done.wait(30)

    t = threading.Thread(target=inspect_in_background, name="inspector")
    t.start()
    assert inside.wait(30)
    f_thr_user(jnp.ones(3)).block_until_ready()  # the user's, while the other inspects
    done.set()
    t.join(30)
    recs = CACHE.records()
    user = [r for r in recs if r.function == "jit(f_thr_user)"]
    insp = [r for r in recs if r.function == "jit(f_thr_insp)"]
    assert user and all(r.origin == "user" and r.inspected_by is None for r in user)
    assert insp and all(r.origin == "workbench" and r.inspected_by == "%%hlo" for r in insp)


def test_schema_states_the_tracker_bounds():
    import json
    from importlib.resources import files

    schema = json.loads(files("workbench.schemas").joinpath("cache.schema.json").read_text())
    props = schema["properties"]
    assert props["functions"]["maxItems"] == attribution.MAX_FUNCTIONS
    assert props["functions_total"]["maximum"] == attribution.MAX_FUNCTIONS
    assert props["records"]["maxItems"] == tracker.MAX_RECORDS
    assert props["records_total"]["maximum"] == tracker.MAX_RECORDS

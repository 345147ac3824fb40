"""The compile line under a cell says whose compile it was and why: the workbench's
inspections (``%%jaxpr``, ``%%hlo``, ``workbench.inspect``, the mesh explorer) are its own
work, never the user's recompiles; JAX's cheap helpers stay out of the line; the user's
functions (pmap and jit alike) carry the reason JAX compares, also after a trace JAX had
cached for an inspection.

Each test runs its cells in the session's real IPython shell (the workbench loaded) and
reads the compile line's payload (``cache-cell``) or the tracker's records.
"""

from __future__ import annotations

import math
import typing

import jax
import jax.numpy as jnp
import pytest

from workbench.engine.cache import CACHE, queries
from workbench.views.cache import CACHE_MIME, MAX_FUNCTIONS_SHOWN

if typing.TYPE_CHECKING:
    from tests.conftest import CellRun

# compile-line stories over several cells each: part of the full run, not of the quick loop
pytestmark = pytest.mark.slow


@pytest.fixture
def cell(run, shell):
    """``run`` for cells that must succeed, with ``partial`` imported."""
    shell.run_cell("from functools import partial", store_history=False)
    return lambda code: run(code).ok()


def _no_user_blame(c: CellRun) -> None:
    """The line blames the user for nothing: no retrace/recompile reason anywhere."""
    for g in (c.summary or {}).get("functions", []):
        assert g["reasons"] == [], g
    assert "retraced" not in c.line_text and "recompiled" not in c.line_text, c.line_text


# -- the workbench's own work is never the user's recompile ----------------------------------------


def test_jaxpr_grad_twice_is_inspection_not_a_new_closure(cell):
    cell("def loss_own(w):\n    return jnp.sum(jnp.sin(w))\nw_own = jnp.ones(3)")
    for _ in range(2):
        c = cell("%%jaxpr -t grad\nloss_own(w_own)")
        _no_user_blame(c)
        (g,) = c.groups("jit(grad(loss_own))")
        assert g["origin"] == "workbench" and g["inspected_by"] == ["%%jaxpr"]
        assert "inspected by %%jaxpr" in c.line_text
    c = cell(
        "import workbench\n_ins_own = workbench.inspect(loss_own, w_own, transforms='grad')\n"
        "_ins_own.jaxpr;"
    )
    _no_user_blame(c)
    assert "inspected by workbench.inspect" in c.line_text
    rec = CACHE.records()[-1]
    assert (rec.origin, rec.inspected_by, rec.reasons) == ("workbench", "workbench.inspect", [])


def test_hlo_after_jaxpr_is_no_recompile_and_no_earlier_compile(cell):
    cell("@jax.jit\ndef f_ownh(x):\n    return jnp.sum(jnp.cos(x) * 2)\nx_ownh = jnp.ones(3)")
    for magic in ("%%jaxpr -t grad", "%%hlo -t grad", "%%jaxpr", "%%hlo"):
        c = cell(f"{magic}\nf_ownh(x_ownh)")
        _no_user_blame(c)
        if c.summary is None:  # JAX had the trace cached (traced inside the grad): no work
            continue
        assert all(g["origin"] == "workbench" for g in c.summary["functions"]), c.summary
        assert f"inspected by {magic.split()[0]}" in c.line_text
    # the user's own calls: their first compile is a first compile, and a new shape is
    # explained against the user's call, never against the inspection's
    c = cell("f_ownh(jnp.ones(5))")
    assert c.reasons("jit(f_ownh)") == []
    (r,) = cell("f_ownh(jnp.ones(6))").reasons("jit(f_ownh)")
    assert (r["kind"], r["before"], r["after"]) == ("shape", "f32[5]", "f32[6]")
    stats = [f for f in CACHE.functions() if f.function == "jit(f_ownh)"][-1]
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
    c = cell("_h_own = jnp.arange(7, dtype=jnp.int16).astype(jnp.int8) + 1")
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
    c = cell("_h_ownb = jnp.arange(9, dtype=jnp.int16).astype(jnp.uint16) * 3")
    assert c.summary is None


# -- pmap: the user's function, with JAX's reason --------------------------------------------------


def test_pmap_function_is_the_users_with_a_shape_reason(cell):
    n = jax.local_device_count()
    c = cell(
        "@partial(jax.pmap, axis_name='i')\ndef pm_pm(x):\n    return jax.lax.psum(x, 'i')\n"
        f"pm_pm(jnp.ones(({n}, 3)))"
    )
    assert c.groups("pmap(pm_pm)", "user"), c.summary
    assert "_fun" not in c.line_text
    c = cell(f"pm_pm(jnp.ones(({n}, 4)))")
    (r,) = c.reasons("pmap(pm_pm)")
    assert (r["kind"], r["path"]) == ("shape", "x")
    assert (r["before"], r["after"]) == (f"f32[{n},3]", f"f32[{n},4]")


# -- static keyword arguments with defaults: what JAX compares -------------------------------------


def test_static_keyword_with_default_reasons_say_what_jax_compares(cell):
    cell(
        "@partial(jax.jit, static_argnames=('mode',))\ndef layer_kw(x, mode='train'):\n"
        "    return x * 2 if mode == 'train' else x\nx_kw = jnp.ones(3)\n"
        "layer_kw(x_kw, mode='eval')"
    )
    (r,) = cell("layer_kw(x_kw)").reasons("jit(layer_kw)")
    assert r["kind"] == "static_arg" and r["path"] == "mode"
    assert "None" not in r["text"]
    assert "mode='eval' before" in r["text"] and "omitted" in r["text"]
    assert "default 'train'" in r["text"]
    (r,) = cell("layer_kw(x_kw, 'eval')").reasons("jit(layer_kw)")
    assert r["kind"] == "static_arg" and "None" not in r["text"]
    assert "by position" in r["text"], r["text"]


# -- after a trace JAX cached (make_jaxpr): the next change has its reason -------------------------


def test_after_make_jaxpr_a_new_shape_has_its_reason(cell):
    cell(
        "@jax.jit\ndef f_mj(x):\n    return x + 1\nx3_mj = jnp.ones(3)\n"
        "print(jax.make_jaxpr(f_mj)(x3_mj))"
    )
    cell("f_mj(x3_mj)")
    (r,) = cell("f_mj(jnp.ones(4))").reasons("jit(f_mj)")
    assert r["text"] == "x changed f32[3] -> f32[4]"


def test_after_make_jaxpr_a_new_static_self_has_its_reason(cell):
    cell(
        "class D_mj:\n    def __init__(self, k):\n        self.k = k\n"
        "    def __hash__(self):\n        return hash(self.k)\n"
        "    def __eq__(self, o):\n        return isinstance(o, D_mj) and o.k == self.k\n"
        "    def __repr__(self):\n        return f'D_mj({self.k})'\n"
        "    @partial(jax.jit, static_argnums=0)\n    def apply(self, x):\n"
        "        return x * self.k\n"
        "d_mj = D_mj(2.0)\nprint(jax.make_jaxpr(d_mj.apply)(jnp.ones(3)))"
    )
    cell("d_mj.apply(jnp.ones(3))")
    (r,) = cell("D_mj(3.0).apply(jnp.ones(3))").reasons("jit(apply)")
    assert r["text"] == "static self changed D_mj(2.0) -> D_mj(3.0)"


def test_jit_lambda_recreated_by_a_rerun_cell(cell):
    code = (
        "f_mjl = jax.jit(lambda x: x * 2)\nprint(jax.make_jaxpr(f_mjl)(jnp.ones(3)))\n"
        "f_mjl(jnp.ones(3))"
    )
    first = cell(code)
    c = cell(code)
    (r,) = c.reasons("jit(<lambda>)")
    assert r["kind"] == "closure"
    assert f"cell [{first.result.execution_count}] ran again" in r["text"]


# -- after %%jaxpr traced a new static value: the call is the user's -------------------------------


def test_call_after_jaxpr_of_a_new_static_is_explained_as_the_users(cell):
    cell(
        "@partial(jax.jit, static_argnums=1)\ndef h_st(x, n):\n    return x * n\n"
        "x_st = jnp.ones(3)\nh_st(x_st, 2)"
    )
    c = cell("%%jaxpr\nh_st(x_st, 3)")
    _no_user_blame(c)
    c = cell("h_st(x_st, 3)")
    (r,) = c.reasons("jit(h_st)")
    assert "cached trace" not in r["text"]
    assert (r["kind"], r["path"], r["before"], r["after"]) == ("static_arg", "n", "2", "3")


def test_call_after_jaxpr_with_a_redundant_static_flag_is_explained(cell):
    # --static-argnums naming what the jit already declares static changes nothing: the
    # function is traced through its own jit, so the next call reuses that trace
    cell(
        "@partial(jax.jit, static_argnums=1)\ndef h_str(x, n):\n    return x * n\n"
        "x_str = jnp.ones(3)\nh_str(x_str, 2)"
    )
    flagged = cell("%%jaxpr --static-argnums 1\nh_str(x_str, 3)")
    _no_user_blame(flagged)
    (r,) = cell("h_str(x_str, 3)").reasons("jit(h_str)")
    assert (r["kind"], r["path"], r["before"], r["after"]) == ("static_arg", "n", "2", "3")
    plain = cell("%%jaxpr\nh_str(x_str, 3)")
    assert flagged.bundle["text/plain"] == plain.bundle["text/plain"]


def test_call_after_two_jaxpr_inspections_is_matched_to_its_own_trace(cell):
    # two inspections with the same array types: the call's compile comes from the trace
    # of its own static value, not from the latest inspection
    cell(
        "@partial(jax.jit, static_argnums=1)\ndef h_stm(x, n):\n    return x * n\n"
        "x_stm = jnp.ones(3)\nh_stm(x_stm, 2)"
    )
    cell("%%jaxpr\nh_stm(x_stm, 3)")
    cell("%%jaxpr\nh_stm(x_stm, 4)")
    (r,) = cell("h_stm(x_stm, 3)").reasons("jit(h_stm)")
    assert (r["kind"], r["path"], r["before"], r["after"]) == ("static_arg", "n", "2", "3")
    (r,) = cell("h_stm(x_stm, 4)").reasons("jit(h_stm)")
    assert (r["kind"], r["path"], r["after"]) == ("static_arg", "n", "4")


# -- one thread's inspection, another thread's compile ---------------------------------------------


def test_an_inspection_on_one_thread_never_marks_a_compile_on_another(shell):
    import threading

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

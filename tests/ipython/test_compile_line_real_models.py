"""The compile line tells the truth on the programs users bring: a Flax NNX train step's
first call is its first compile (not a "new function object" of an earlier model's step),
``%jaxprof`` compiles its own copy (the user's next call is no "recompile", and the
profile's fresh wrapper around an ``nnx.jit`` is no re-created closure), a recompile names
what JAX's own ``jax_explain_cache_misses`` names (a weak type, a dtype), and the ``jit``
that ``jax.make_jaxpr`` makes for itself is not shown as one the user wrote.

Real IPython shell with the workbench loaded; expected values come from JAX (its
explanation text, its abstract values), never written out by hand.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from workbench.engine.cache import CACHE
from workbench.engine.cache.reasons import parse_jax_explanation

# several NNX compiles: part of the full run, not of the quick loop
pytestmark = pytest.mark.slow


def _user_groups(c) -> list[dict]:
    return [g for g in (c.summary or {}).get("functions", []) if g["origin"] == "user"]


def _latest_user_compile(function: str):
    return next(
        r
        for r in reversed(CACHE.records())
        if r.function == function and r.origin == "user" and r.kind == "compile"
    )


def test_an_nnx_step_made_for_another_model_compiles_for_the_first_time(run):
    """``nnx_mlp_setup()`` then ``nnx_cnn_setup()``: two step objects of the same code (a
    factory's), the second called with other types.  Its compile is a first compile, as
    JAX's explanation says ("never seen function"); a third step object called with the
    CNN's types again *is* the re-created closure JAX could have reused."""
    run("from tests.real_models import nnx_cnn_setup, nnx_mlp_setup").ok()
    run(
        "rm_mlp = nnx_mlp_setup()\nrm_mlp.train_step(rm_mlp.model, rm_mlp.optimizer, rm_mlp.x, rm_mlp.y)"
    ).ok()
    run("rm_cnn = nnx_cnn_setup()").ok()
    c = run(
        "cnn_step = rm_cnn.train_step\ncnn_step(rm_cnn.model, rm_cnn.optimizer, rm_cnn.x, rm_cnn.y)"
    ).ok()
    (g,) = _user_groups(c)
    assert g["compiles"] == 1
    assert g["reasons"] == [], g["reasons"]
    assert "recompiled" not in c.line_text and "closure" not in c.line_text, c.line_text
    rec = _latest_user_compile(g["function"])
    assert not rec.is_recompile
    if rec.jax_explanation:  # JAX agrees: a function object it never saw
        assert parse_jax_explanation(rec.jax_explanation).never_seen

    # the same model again, through a new step object of the same code: JAX's cache
    # holds an executable for exactly these types under the old object, so the new
    # object is why it compiles
    run("from tests.real_models import _nnx_train_step\nrm_fresh = _nnx_train_step()").ok()
    c = run("rm_fresh(rm_cnn.model, rm_cnn.optimizer, rm_cnn.x, rm_cnn.y)").ok()
    (g,) = _user_groups(c)
    assert [r["kind"] for r in g["reasons"]] == ["closure"], g["reasons"]


def test_jaxprof_of_an_nnx_apply_is_the_profiles_own_compile(run):
    """``%jaxprof`` of an ``nnx.jit`` function compiles the program the call runs ahead
    of time: the line says the profile inspected it, never that the user's function
    recompiled, before or after the user's own call (which, as for a ``jax.jit``
    function, gets that executable back from JAX's caches and compiles nothing)."""
    run("from tests.real_models import nnx_mlp_setup\nfrom flax import nnx").ok()
    run("rp = nnx_mlp_setup()\n@nnx.jit\ndef rp_apply(model, x):\n    return model(x)").ok()
    c = run("%jaxprof -n 2 rp_apply(rp.model, rp.x)").ok()
    assert "recompiled" not in c.line_text and "retraced" not in c.line_text, c.line_text
    assert _user_groups(c) == []
    assert "%jaxprof" in c.line_text
    c = run("rp_apply(rp.model, rp.x)").ok()
    assert _user_groups(c) == [], c.line_text
    assert "recompiled" not in c.line_text and "retraced" not in c.line_text, c.line_text
    c = run("%jaxprof -n 2 rp_apply(rp.model, rp.x)").ok()
    assert "recompiled" not in c.line_text and "retraced" not in c.line_text, c.line_text
    assert _user_groups(c) == []


def _reason_matches_jax(rec, kind: str, path: str) -> None:
    """Our reason is ``kind`` at ``path``, and JAX's own explanation, where it gives one,
    names the same change."""
    assert [(r.kind, r.path) for r in rec.reasons] == [(kind, path)], rec.reasons
    if rec.jax_explanation:
        jax_says = parse_jax_explanation(rec.jax_explanation).reasons
        assert (kind, path) in [(r.kind, r.path) for r in jax_says], rec.jax_explanation


def test_a_keyword_only_float_becoming_float32_is_a_weak_type_change(run):
    run("@jax.jit\ndef wk_scale(x, *, scale):\n    return x * scale\nwk_x = jnp.ones(3)").ok()
    run("wk_scale(wk_x, scale=2.0)").ok()
    c = run("wk_scale(wk_x, scale=jnp.float32(2.0))").ok()
    rec = _latest_user_compile("jit(wk_scale)")
    _reason_matches_jax(rec, "weak_type", "scale")
    strong = jax.typeof(jnp.float32(2.0)).str_short(short_dtypes=True)
    assert rec.reasons[0].after == strong and rec.reasons[0].before == f"weak {strong}"
    assert "recompiled" in c.line_text


def test_qmatmul_in_float16_after_a_bench_of_bfloat16_is_a_dtype_change(run):
    run(
        "@jax.jit\ndef qmatmul(x, q8, scale):\n"
        "    return (x @ q8.astype(x.dtype)) * scale.astype(x.dtype)\n"
        "qm_x = jnp.ones((64, 64), jnp.bfloat16)\nqm_q8 = jnp.ones((64, 64), jnp.int8)\n"
        "qm_s = jnp.ones((64,), jnp.float32)"
    ).ok()
    run("%jaxbench --budget 0.1 qmatmul(qm_x, qm_q8, qm_s)").ok()
    c = run("qmatmul(qm_x.astype(jnp.float16), qm_q8, qm_s)").ok()
    rec = _latest_user_compile("jit(qmatmul)")
    _reason_matches_jax(rec, "dtype", "x")
    before, after = (
        jax.typeof(jnp.ones((64, 64), d)).str_short(short_dtypes=True)
        for d in (jnp.bfloat16, jnp.float16)
    )
    assert (rec.reasons[0].before, rec.reasons[0].after) == (before, after)
    assert "recompiled" in c.line_text


@pytest.mark.parametrize(
    ("call", "maker", "name"),
    [
        ("jax.make_jaxpr(np.sum)(mk_X)", "make_jaxpr", "sum"),
        ("jax.make_jaxpr(lambda a: jnp.sum(a))(mk_X)", "make_jaxpr", "<lambda>"),
        ("jax.eval_shape(lambda a: a * 2, mk_X)", "eval_shape", "<lambda>"),
    ],
)
def test_the_jit_jax_makes_for_itself_is_not_shown_as_the_users(run, call, maker, name):
    """``jax.make_jaxpr(np.sum)`` traces a ``jit(sum)`` JAX made; the line names the
    call the user wrote, ``make_jaxpr(sum)``, and no ``jit(...)`` at all."""
    run("mk_X = np.ones((3, 4), np.float32)").ok()
    c = run(call).ok()
    functions = [g["function"] for g in (c.summary or {}).get("functions", [])]
    assert f"{maker}({name})" in functions, c.line_text
    assert not any(f.startswith("jit(") for f in functions), c.line_text
    assert "jit(" not in c.line_text


def test_a_user_jit_under_make_jaxpr_keeps_its_name(run):
    """``jax.make_jaxpr`` of the user's own ``jax.jit`` function: that jit is theirs."""
    run("@jax.jit\ndef mk_mine(a):\n    return a + 1\nmk_Y = np.ones(3, np.float32)").ok()
    c = run("jax.make_jaxpr(mk_mine)(mk_Y)").ok()
    functions = [g["function"] for g in (c.summary or {}).get("functions", [])]
    assert "jit(mk_mine)" in functions, c.line_text

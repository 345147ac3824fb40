"""A function traced but never compiled (``jax.make_jaxpr``, ``jax.eval_shape``,
``jax.jit(f).trace``) and then called through ``jax.jit`` compiles for the *first* time.

The compile is not compared with the earlier trace's identical signature: it is no recompile
("JAX's caches were cleared or the entry evicted"), the compile line does not say
"recompiled", and ``workbench.no_recompiles()`` passes a block that compiled nothing twice.
A real ``jax.clear_caches()`` after a compile is still a recompile, and a closure's compile is
told by its own function object, never by a sibling closure of the same code inspected
before it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from workbench.engine.cache import CACHE

TRACES = {
    "make_jaxpr": "jax.make_jaxpr({f})(jnp.ones(3))",
    "eval_shape": "jax.eval_shape({f}, jnp.ones(3))",
    "trace": "jax.jit({f}).trace(jnp.ones(3))",
}


@pytest.mark.parametrize("how", sorted(TRACES))
def test_first_compile_after_a_trace_is_not_a_recompile(run, how):
    f = f"traced_first_{how}"
    run(f"def {f}(x):\n    return jnp.cos(x) * 3\n_ = " + TRACES[how].format(f=f))
    guarded = run(
        "import workbench\n"
        "with workbench.capture_compiles() as _c:\n"
        "    with workbench.no_recompiles():\n"
        f"        jax.jit({f})(jnp.ones(3))\n"
        f"_mine = [r for r in _c if r.function == 'jit({f})']"
    )
    assert guarded.error is None, guarded.message  # no RecompileError
    (rec,) = run("_mine").result.result
    assert rec.kind == "compile" and not rec.is_recompile
    assert [m.kind for m in rec.reasons] == ["new_function"]
    assert "never compiled" in rec.reasons[0].text()


def test_clear_caches_after_a_compile_is_still_a_recompile(run):
    run(
        "def compiled_then_cleared(x):\n    return jnp.sin(x) + 1\n"
        "g = jax.jit(compiled_then_cleared)\ng(jnp.ones(3))"
    )
    run(
        "import workbench\njax.clear_caches()\n"
        "with workbench.capture_compiles() as _c2:\n    g(jnp.ones(3))\n"
        "_again = [r for r in _c2 if r.function == 'jit(compiled_then_cleared)']"
    )
    (rec,) = run("_again").result.result
    assert rec.is_recompile and [m.kind for m in rec.reasons] == ["cache_cleared"]


@pytest.mark.parametrize("how", sorted(TRACES))
def test_a_shape_only_traced_before_is_compared_with_the_compiled_ones(run, how):
    """Compiled for f32[3], only traced for f32[5], then compiled for f32[5]: a recompile
    (the function had compiled), because the shape changed, not because caches were
    cleared (nothing for f32[5] was ever compiled that could have been dropped)."""
    f = f"traced_new_shape_{how}"
    run(
        f"def {f}(x):\n    return jnp.cos(x) * 3\n_g = jax.jit({f})\n_g(jnp.ones(3))\n"
        "_ = " + TRACES[how].replace("jnp.ones(3)", "jnp.ones(5)").format(f=f)
    )
    run(
        "import workbench\n"
        "with workbench.capture_compiles() as _c3:\n"
        "    _g(jnp.ones(5))\n"
        f"_mine3 = [r for r in _c3 if r.function == 'jit({f})']"
    )
    (rec,) = run("_mine3").result.result
    assert rec.kind == "compile" and rec.is_recompile
    assert [(m.kind, m.before, m.after) for m in rec.reasons] == [("shape", "f32[3]", "f32[5]")]


def _lambda_compile(run, code: str):
    """The one ``jit(<lambda>)`` record the cell ``code`` adds to the tracker."""
    before = len(CACHE.records())
    run(code).ok()
    (rec,) = [r for r in CACHE.records()[before:] if r.function == "jit(<lambda>)"]
    return rec


def test_a_closures_compile_is_told_by_its_own_function_object(run, shell):
    """Two closures of one lambda (a factory's): ``%jaxpr`` inspects the first and
    ``jax.make_jaxpr`` traces the second, so both have a trace and neither a compile (JAX's
    own per-object cache is empty).  The second's first compile is a first compile (not
    "caches cleared", as if it were the inspected sibling's); the first's then follows a
    compile of the same code by another object: a closure, as JAX caches per function
    object (no "unknown"); and a new shape is the change JAX reports."""
    run("def mk_cl(k):\n    return jax.jit(lambda x: x * k)\nfs_cl = [mk_cl(1.0), mk_cl(2.0)]")
    first, second = shell.user_ns["fs_cl"]
    run("%jaxpr --text fs_cl[0](jnp.ones(3))").ok()
    run("jax.make_jaxpr(fs_cl[1])(jnp.ones(3))").ok()
    assert (first._cache_size(), second._cache_size()) == (0, 0)

    rec = _lambda_compile(run, "fs_cl[1](jnp.ones(3))")
    assert (first._cache_size(), second._cache_size()) == (0, 1)
    assert (rec.origin, [r.kind for r in rec.reasons]) == ("user", ["new_function"])
    assert rec.reasons[0].detail == "first compile of jit(<lambda>)"

    rec = _lambda_compile(run, "fs_cl[0](jnp.ones(3))")
    assert (first._cache_size(), second._cache_size()) == (1, 1)
    assert (rec.origin, [r.kind for r in rec.reasons]) == ("user", ["closure"])

    three, four = (jax.typeof(jnp.ones(n)).str_short(short_dtypes=True) for n in (3, 4))
    rec = _lambda_compile(run, "fs_cl[0](jnp.ones(4))")
    assert first._cache_size() == 2
    assert [(r.kind, r.path, r.before, r.after) for r in rec.reasons] == [
        ("shape", "x", three, four)
    ]

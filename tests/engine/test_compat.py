"""The compatibility shim against the installed JAX: each private use still works."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from workbench.engine import _jax_compat as compat


def _eqn():
    def f(x):
        return jnp.sin(x) * 2.0

    return jax.make_jaxpr(f)(1.0), f


def test_jaxpr_types_found():
    """What the model builder relies on, whether JAX has one jaxpr type (0.11) or a
    ``ClosedJaxpr`` wrapping a ``Jaxpr`` (0.10): both shapes are recognised as jaxprs,
    the closed one gives its constant values, and the equations are reached the same
    way from either."""
    captured = np.arange(3.0, dtype=np.float32)

    def f(x):
        return jnp.sin(x) * 2.0 + captured

    cj = jax.make_jaxpr(f)(jnp.ones(3))
    inner = compat.open_jaxpr(cj)
    assert compat.is_jaxpr(cj) and compat.is_jaxpr(inner)
    assert compat.is_closed_jaxpr(cj) and compat.is_open_jaxpr(inner)
    assert compat.open_jaxpr(inner) is inner  # idempotent
    assert inner.eqns == cj.jaxpr.eqns and [str(e.primitive) for e in inner.eqns][0] == "sin"
    (const,) = compat.jaxpr_consts(cj)
    np.testing.assert_array_equal(np.asarray(const), captured)
    assert len(inner.constvars) == 1 and len(inner.invars) == 1
    # the two types are one exactly when JAX merged them; else the inner one is open only
    assert compat.is_closed_jaxpr(inner) == compat.JAXPR_TYPES_MERGED
    if not compat.JAXPR_TYPES_MERGED:
        assert compat.jaxpr_consts(inner) == []
    for not_a_jaxpr in (None, 1.0, "jaxpr", [cj], inner.eqns[0]):
        assert not compat.is_jaxpr(not_a_jaxpr) and compat.jaxpr_consts(not_a_jaxpr) == []
    mul = inner.eqns[1]
    assert compat.is_literal(mul.invars[1])
    assert not compat.is_literal(mul.invars[0])


def test_sub_jaxprs_in_params_recognised():
    """A ``cond`` holds its branches as jaxprs in its params (closed on 0.10, the one
    type on 0.11): the builder must find each of them."""
    cj = jax.make_jaxpr(lambda p, x: jax.lax.cond(p, jnp.sin, jnp.cos, x))(True, 1.0)
    (cond,) = [e for e in compat.open_jaxpr(cj).eqns if str(e.primitive) == "cond"]
    branches = cond.params["branches"]
    assert len(branches) == 2 and all(compat.is_jaxpr(b) for b in branches)
    assert sorted(str(compat.open_jaxpr(b).eqns[0].primitive) for b in branches) == ["cos", "sin"]


def test_dropvar_detected():
    cj = jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 2))).trace(jnp.ones(3)).jaxpr
    assert not any(compat.is_dropvar(v) for e in cj.jaxpr.eqns for v in e.outvars)
    assert compat.DropVar is not None
    assert compat.is_dropvar(object.__new__(compat.DropVar))


def test_user_frame_points_at_this_file():
    cj, f = _eqn()
    fr = compat.user_frame(cj.jaxpr.eqns[0].source_info)
    assert fr is not None
    assert fr.file == __file__
    assert fr.function.endswith("f")
    assert fr.line == f.__code__.co_firstlineno + 1


def test_user_frame_degrades_on_garbage():
    assert compat.user_frame(None) is None
    assert compat.user_frame(object()) is None


def test_name_stack():
    def f(x):
        with jax.named_scope("block"):
            return jnp.sin(x)

    cj = jax.make_jaxpr(f)(1.0)
    assert "block" in compat.name_stack(cj.jaxpr.eqns[0].source_info)
    assert compat.name_stack(object()) == ""


def test_jit_settings_read_from_wrapper():
    f = jax.jit(lambda x, n: x * n, static_argnums=(1,), donate_argnums=(0,))
    s = compat.jit_settings(f)
    assert s is not None and s.static_argnums == (1,) and s.donate_argnums == (0,)
    assert compat.is_jitted(f)
    assert not compat.is_jitted(lambda x: x)
    assert compat.jit_settings(lambda x: x) is None


def test_exclusion_registered_for_our_package():
    import os

    import workbench

    path = os.path.dirname(workbench.__file__)
    assert compat.exclude_path_from_user_frames(path)  # idempotent, feature found
    assert all(compat.FEATURES[k] for k in ("jax.extend.core", "source_info_util.user_frame"))


def test_jit_trace_site_read_inside_trace_listener():
    sites = []

    def listener(event, duration, **kw):
        if event == compat.TRACE_EVENT:
            sites.append(compat.jit_trace_site())

    def user_fn(params, n):
        return params["w"] * n

    f = jax.jit(user_fn, static_argnums=1)
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        f({"w": jnp.ones(3)}, 4)
    finally:
        assert compat.unregister_monitoring_listener("duration", listener)
    assert listener not in compat.monitoring_listeners("duration")
    (site,) = [s for s in sites if s is not None and s.fun is user_fn]
    (arg,) = site.args
    assert (arg.path, arg.text, arg.shape, arg.weak) == ("params['w']", "f32[3]", (3,), False)
    assert site.statics == (("n", "4"),) and not site.internal
    assert compat.jit_trace_site() is None  # outside a trace: nothing found, no error


def test_event_names_and_explain_logger_exist():
    import logging

    assert compat.TRACE_EVENT.startswith("/jax/core/compile/")
    assert compat.COMPILE_EVENT.endswith("backend_compile_duration")
    # JAX created its explain logger (the first entry) when it was imported
    assert compat.EXPLAIN_LOGGERS[0] in logging.Logger.manager.loggerDict
    assert compat.is_jax_internal(jax.tree_util.tree_map)
    assert not compat.is_jax_internal(test_event_names_and_explain_logger_exist)


def test_a_jax_primitives_bound_method_is_jax_internal():
    """JAX 0.12's key-reuse checker jits ``partial(Primitive.bind, axis=0)``: one of JAX's
    own helpers, which the compile line showed as the user's ``jit(bind)``."""
    import functools

    prim = jax.extend.core.Primitive("workbench_test_prim")
    assert compat.is_jax_internal(prim.bind)
    assert compat.is_jax_internal(functools.partial(prim.bind, axis=0))

    class Model:
        def apply(self, x):
            return x

    # a method of the user's own object, bare or partially applied, stays the user's
    assert not compat.is_jax_internal(Model().apply)
    assert not compat.is_jax_internal(functools.partial(Model().apply))


def test_available_backends_names_cpu():
    from workbench.engine import _jax_compat as compat

    names = compat.available_backends()
    assert "cpu" in names and all(isinstance(n, str) for n in names)


def test_jit_origin_and_transform_helpers():
    def loss(w):
        return w * 2

    assert not compat.is_jax_internal(jax.nn.relu)  # a custom_jvp object the user may jit
    assert not compat.is_jax_internal(jax.grad(loss))
    assert compat.transform_names(jax.grad(jax.jit(loss))) == ("grad", "jit")
    assert compat.transform_names(jax.vmap(loss)) == ("vmap",)
    found = []

    def listener(event, duration, **kw):
        if event == compat.LOWER_EVENT:
            found.append(compat.lowering_source())

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        jax.jit(loss)(jnp.ones(41))
    finally:
        compat.unregister_monitoring_listener("duration", listener)
    (src,) = [s for s in found if s is not None and s.name == "loss"]
    assert src.user and src.where.startswith(__file__)
    assert compat.lowering_source() is None


def test_make_jaxpr_target_reads_the_function_and_its_static_argnums():
    def g(x, n):
        return x * n

    assert compat.make_jaxpr_target(jax.make_jaxpr(g)) == (g, ())
    assert compat.make_jaxpr_target(jax.make_jaxpr(g, static_argnums=1)) == (g, (1,))
    # what make_jaxpr wraps in a partial (it cannot weak-reference it) comes back unwrapped
    assert compat.make_jaxpr_target(jax.make_jaxpr(np.sum)) == (np.sum, ())
    # not a plain make_jaxpr: traced as it is
    assert compat.make_jaxpr_target(jax.make_jaxpr(g, return_shape=True)) is None
    assert compat.make_jaxpr_target(g) is None
    assert compat.make_jaxpr_target(jax.jit(g)) is None


def test_spec_parts_reads_partitions_and_reduction_sets():
    P = jax.sharding.PartitionSpec
    assert compat.spec_parts(P("X", None)) == (("X", None), frozenset(), frozenset())
    assert compat.spec_parts(("X", ("Y", "Z"))) == (("X", ("Y", "Z")), frozenset(), frozenset())
    try:
        spec = P("X", None, unreduced={"Y"})
    except TypeError:  # a JAX whose PartitionSpec has no unreduced set
        return
    assert compat.spec_parts(spec) == (("X", None), frozenset({"Y"}), frozenset())


def test_nnx_jit_call_traced_on_abstract_copies():
    """What the inspection of an ``nnx.jit`` call relies on in the installed Flax: the
    wrapper (and a method bound from it) is recognised, one joint abstract copy keeps the
    objects' sharing and holds no array, and the wrapper's ``.trace`` gives JAX's
    ``Traced`` whose outputs include the objects' new state."""
    import pytest

    nnx = pytest.importorskip("flax.nnx")

    class Acc(nnx.Module):
        def __init__(self) -> None:
            self.total = nnx.BatchStat(jnp.zeros(3))

        @nnx.jit
        def add(self, x):
            self.total[...] = self.total[...] + x
            return x * 2

    @nnx.jit
    def bump(acc, alias, x):
        acc.total[...] = acc.total[...] + x
        return x

    acc, x = Acc(), jnp.ones(3)
    assert compat.nnx_jit_call(jax.jit(lambda v: v), (x,), {}) is None
    assert compat.nnx_jit_call(lambda v: v, (x,), {}) is None
    wrapper, args, kwargs = compat.nnx_jit_call(acc.add, (x,), {})
    assert args == (acc, x) and kwargs == {}
    copied = compat.abstract_nnx_call(
        (acc, acc, x), {}, lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype)
    )
    assert copied is not None
    (c0, c1, cx), _ = copied
    assert c0 is c1 and c0 is not acc
    assert isinstance(cx, jax.ShapeDtypeStruct)
    assert isinstance(c0.total.get_value(), jax.ShapeDtypeStruct)
    traced = compat.NnxJitStage(bump).trace(c0, c1, cx)
    assert isinstance(traced, jax.stages.Traced)
    assert len(traced.jaxpr.out_avals) == 2  # the new total and the output
    np.testing.assert_array_equal(acc.total[...], np.zeros(3))


def _jit_counting_traces() -> tuple[Any, list[int]]:
    """A jitted function and the list its Python appends to each time it runs: one entry a
    trace, none for a call JAX serves from its caches."""
    runs: list[int] = []

    @jax.jit
    def f(x):
        runs.append(1)
        return x * 2

    return f, runs


def test_fresh_trace_caches_retrace_without_touching_the_users_entries():
    """Inside ``fresh_trace_caches`` a function JAX has traced is traced again (its Python
    runs), and the user's call afterwards finds its own entry (its Python does not run)."""
    cached_twice, runs = _jit_counting_traces()
    x = jnp.ones(4)
    cached_twice(x)
    assert compat.fresh_trace_caches_supported()
    with compat.fresh_trace_caches() as fresh:
        cached_twice.trace(x)
    assert fresh and len(runs) == 2
    cached_twice(x)
    cached_twice.trace(x)
    assert len(runs) == 2


def test_library_layer_and_jax_dirs():
    import os

    dirs = compat.library_layer_dirs()
    assert any(d.endswith(os.path.join("flax", "nnx", "nn") + os.sep) for d in dirs)
    assert os.path.dirname(jax.__file__) + os.sep in compat.jax_dirs()


def test_unique_trace_context_retraces_even_after_a_fresh_trace():
    """Two ``unique_trace_context`` blocks never share a trace, where two
    ``fresh_trace_caches`` blocks do (their context is the same)."""
    traced_each_time, runs = _jit_counting_traces()
    x = jnp.ones(3)
    with compat.fresh_trace_caches():
        traced_each_time.trace(x)
    with compat.fresh_trace_caches():
        traced_each_time.trace(x)
    assert len(runs) == 1
    for expected in (2, 3):
        with compat.unique_trace_context() as unique:
            traced_each_time.trace(x)
        assert unique and len(runs) == expected


def test_user_frames_lists_the_callers_innermost_first():
    def inner(x):
        return jnp.sin(x)

    def outer(x):
        return inner(x) * 2

    jaxpr = jax.make_jaxpr(outer)(jnp.ones(2))
    sin = next(e for e in jaxpr.jaxpr.eqns if str(e.primitive) == "sin")
    frames = compat.user_frames(sin.source_info)
    # the functions' qualified names, as JAX records them
    assert [f.function.rsplit(".", 1)[-1] for f in frames[:2]] == ["inner", "outer"]
    assert frames[0].key == compat.user_frame(sin.source_info).key
    assert compat.user_frames(None) == []


def test_persistent_cache_bypassed_restores_jaxs_decision():
    from jax._src import compilation_cache as cc

    before = (cc._cache_checked, cc._cache_used)
    with compat.persistent_cache_bypassed() as bypassed:
        assert bypassed
        assert (cc._cache_checked, cc._cache_used) == (True, False)
    assert (cc._cache_checked, cc._cache_used) == before


def test_persistent_cache_bypassed_turns_xlas_own_caches_off_and_restores_on_error(tmp_path):
    """XLA's autotune and kernel caches follow ``is_persistent_cache_enabled()`` (the option,
    not JAX's decision): off inside, and everything as it was after an error inside."""
    from jax._src import compilation_cache as cc
    from jax._src import config

    before = (cc._cache_checked, cc._cache_used)
    with config.compilation_cache_dir(str(tmp_path)):  # a cache directory, this thread only
        enabled = cc.is_persistent_cache_enabled()
        with pytest.raises(RuntimeError, match="inside the compile"):
            with compat.persistent_cache_bypassed() as bypassed:
                assert bypassed and not cc.is_persistent_cache_enabled()
                raise RuntimeError("inside the compile")
        assert cc.is_persistent_cache_enabled() == enabled
    assert (cc._cache_checked, cc._cache_used) == before
    assert list(tmp_path.iterdir()) == []

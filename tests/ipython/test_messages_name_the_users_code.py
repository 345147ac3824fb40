"""What the call-inspecting magics say when the call is not what they can work on, or the
user's code fails inside it: the user's line, the user's function and a way forward, never a
workbench wrapper or a JAX-internal helper, never a profiler's raw complaint."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from tests.real_models import equinox_setup


def test_print_on_the_last_line_says_it_returns_none_and_suggests_the_call(run, shell):
    shell.user_ns["mp_calls"] = []
    run("def mp_f(x):\n    mp_calls.append(1)\n    return jnp.sin(x)").ok()
    r = run("%%jaxpr\nmp_x = jnp.ones(3)\nprint(mp_f(mp_x))")
    text = r.short_error()
    assert "the last line, print(mp_f(mp_x)), returns None" in text
    assert "end the cell with the call itself: mp_f(mp_x)" in text
    assert "JitTracer" not in text and shell.user_ns["mp_calls"] == []  # nothing ran
    assert "mp_x" in shell.user_ns  # the cell's body ran, as a normal cell's would
    line = run("%jaxpr print(mp_f(mp_x))").short_error()
    assert "returns None" in line and "write the call itself: mp_f(mp_x)" in line


def test_a_users_own_print_is_a_call_like_any_other(run, shell):
    run("def print(x):\n    return x * 2").ok()
    try:
        r = run("%jaxpr print(jnp.ones(2))").ok()
        assert r.bundle["text/plain"] == str(jax.make_jaxpr(shell.user_ns["print"])(jnp.ones(2)))
    finally:
        del shell.user_ns["print"]


def test_profile_of_a_call_with_no_device_work_says_so_plainly(run):
    run("def mp_nothing(x):\n    return None").ok()
    text = run("%jaxprof mp_nothing(jnp.ones(3))").short_error()
    assert "mp_nothing(jnp.ones(3)) returns no arrays" in text
    assert "no device work" in text and "nothing to profile" in text
    assert "NoDeviceEvents" not in text and "host plane" not in text


def test_jax_hint_names_the_users_function_when_an_argument_is_closed_over(run):
    """A function argument (here an activation) makes the workbench close over it in a
    wrapper: JAX's "error occurred while tracing the function ..." must still name the
    user's function and cell, and the argument by its name."""
    run("def mp_act(x, fn):\n    if x.sum() > 0:\n        return fn(x)\n    return x").ok()
    text = run("%jaxpr mp_act(jnp.ones(3), jnp.tanh)").short_error()
    assert "TracerBoolConversionError" in text
    assert "the function mp_act at " in text and "workbench/" not in text
    assert "the argument x" in text


def test_jax_hint_names_the_users_function_and_argument_with_static_arguments(run):
    run("def mp_pw(x, n):\n    if x.sum() > n:\n        return x\n    return -x").ok()
    text = run("%jaxpr --static-argnums 1 mp_pw(jnp.ones(3), 2)").short_error()
    assert "the function mp_pw at " in text and "workbench/" not in text
    assert "the argument x" in text


def test_jax_hint_names_the_users_function_for_an_equinox_model(run, shell):
    """The real Equinox MLP (its activations are leaves JAX cannot take: the filtered path)."""
    setup = equinox_setup()
    shell.user_ns.update(mp_model=setup.model, mp_ex=setup.x)
    run(
        "def mp_eqx_loss(model, x):\n"
        "    y = jax.vmap(model)(x)\n"
        "    if y.mean() > 0:\n"
        "        return y.sum()\n"
        "    return -y.sum()"
    ).ok()
    text = run("%jaxpr mp_eqx_loss(mp_model, mp_ex)").short_error()
    assert "the function mp_eqx_loss at " in text and "workbench/" not in text


@pytest.mark.skipif(
    not hasattr(jax.sharding, "auto_axes"), reason="this JAX has no jax.sharding.auto_axes"
)
def test_error_inside_auto_axes_names_the_users_function_not_jax_helpers(run, shell):
    shell.user_ns["auto_axes"] = jax.sharding.auto_axes
    shell.user_ns["P"] = jax.sharding.PartitionSpec
    run("def check_in_auto_context(x):\n    if x.sum() > 0:\n        return x\n    return -x").ok()
    text = run("%jaxpr auto_axes(check_in_auto_context, out_sharding=P())(jnp.ones(4))")
    said = text.short_error()
    assert "(while tracing check_in_auto_context)" in said
    assert "_auto_axes" not in said
    assert "if x.sum() > 0:" in said  # the user's line

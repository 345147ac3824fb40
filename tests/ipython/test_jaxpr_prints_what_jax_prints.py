"""``%%jaxpr``'s ``text/plain`` is exactly ``str(jax.make_jaxpr(f)(*args))``, whatever ``f`` is:
a ``jax.jit`` function (the outer ``jit[name=...]`` equation included), a jitted method with a
static ``self``, NumPy's own functions (which ``jax.jit`` cannot hold), or
``jax.make_jaxpr(f)`` itself on the cell's last line."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tests.real_models import transformer_args, transformer_loss_einsum
from workbench.views.jaxpr import JAXPR_MIME


def test_jitted_function_shows_the_jit_equation_make_jaxpr_prints(run, shell):
    r = run(
        "%%jaxpr\ndef jp_g(x):\n    return jnp.sin(x) * 2\njp_f = jax.jit(jp_g)\njp_f(jnp.ones(3))"
    ).ok()
    ref = str(jax.make_jaxpr(shell.user_ns["jp_f"])(jnp.ones(3)))
    assert "jit[" in ref and "name=jp_g" in ref  # what JAX prints: the jit equation
    assert r.bundle["text/plain"] == ref
    line = run("%jaxpr jp_f(jnp.ones(3))").ok()
    assert line.bundle["text/plain"] == ref
    # the views draw the body (unfolded); what they count is the body's equations
    rec = line.bundle[JAXPR_MIME]
    assert rec["in_avals"] == ["f32[3]"] and rec["out_avals"] == ["f32[3]"]


def test_jitted_function_with_static_arguments_prints_like_make_jaxpr(run, shell):
    shell.user_ns["jp_pow"] = jax.jit(lambda x, n: (x**n).sum(), static_argnums=1)
    r = run("%jaxpr jp_pow(jnp.ones(3), 3)").ok()
    ref = jax.make_jaxpr(shell.user_ns["jp_pow"], static_argnums=1)(jnp.ones(3), 3)
    assert r.bundle["text/plain"] == str(ref)


def test_jitted_method_with_static_self_prints_like_make_jaxpr(run, shell):
    class Scaled:
        """The JAX docs' pattern: a method jitted with ``self`` static."""

        def __init__(self, k: float) -> None:
            self.k = k

        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x):
            return jnp.tanh(x) * self.k

    shell.user_ns["jp_obj"] = Scaled(3.0)
    x = jnp.ones((2, 4))
    shell.user_ns["jp_x"] = x
    r = run("%jaxpr jp_obj.apply(jp_x)").ok()
    ref = str(jax.make_jaxpr(shell.user_ns["jp_obj"].apply)(x))
    assert "jit[" in ref and "name=apply" in ref
    assert r.bundle["text/plain"] == ref


def test_jitted_transformer_prints_like_make_jaxpr(run, shell):
    params, x = transformer_args(blocks=2)
    shell.user_ns.update(jp_loss=jax.jit(transformer_loss_einsum), jp_params=params, jp_tx=x)
    r = run("%%jaxpr\njp_loss(jp_params, jp_tx)").ok()
    assert r.bundle["text/plain"] == str(jax.make_jaxpr(shell.user_ns["jp_loss"])(params, x))


def test_numpy_reduction_traces_like_make_jaxpr(run, shell):
    x = jnp.arange(6.0).reshape(2, 3)
    shell.user_ns["jp_X"] = x
    r = run("%jaxpr np.sum(jp_X)").ok()
    assert r.bundle["text/plain"] == str(jax.make_jaxpr(np.sum)(x))
    r = run("%jaxpr jax.make_jaxpr(np.sum)(jp_X)").ok()
    assert r.bundle["text/plain"] == str(jax.make_jaxpr(np.sum)(x))


def test_numpy_ufunc_fails_as_make_jaxpr_does_in_a_short_error(run, shell):
    """``np.sin`` of a tracer asks for a NumPy array: ``jax.make_jaxpr(np.sin)`` raises
    JAX's ``TracerArrayConversionError``, and so does the magic, in a few lines, each time."""
    x = jnp.ones(3)
    shell.user_ns["jp_X"] = x
    try:
        jax.make_jaxpr(np.sin)(x)
    except Exception as exc:
        expected = type(exc).__name__
    else:  # a NumPy that lets JAX trace its ufuncs: then the texts must agree
        expected = ""
    for _ in range(2):
        r = run("%jaxpr np.sin(jp_X)")
        if expected:
            assert expected in r.short_error()
        else:
            assert r.ok().bundle["text/plain"] == str(jax.make_jaxpr(np.sin)(x))


@pytest.mark.slow  # a second JAX process
@pytest.mark.jax_process
def test_numpy_ufunc_twice_leaves_the_kernel_alive():
    """A second ``jax.jit`` of the same NumPy ufunc crashes jaxlib: run in a child process,
    so a crash is a failed test, not a dead test session."""
    script = textwrap.dedent(
        """
        from IPython.core.interactiveshell import InteractiveShell
        from IPython.utils.capture import capture_output
        sh = InteractiveShell.instance()
        sh.run_cell("%load_ext workbench", store_history=False)
        sh.run_cell("import jax.numpy as jnp, numpy as np; X = jnp.ones(3)")
        for _ in range(2):
            with capture_output():
                sh.run_cell("%jaxpr np.sin(X)")  # an error or a jaxpr: not a crash
        print("alive")
        """
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=root)
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240
    )
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.strip().endswith("alive")


def test_make_jaxpr_on_the_last_line_shows_the_jaxpr_of_the_call(run, shell):
    r = run(
        "%%jaxpr\ndef jp_h(x):\n    return jnp.cos(x) + 1\njp_hj = jax.jit(jp_h)\n"
        "jax.make_jaxpr(jp_hj)(jnp.ones(2))"
    ).ok()
    assert r.bundle["text/plain"] == str(jax.make_jaxpr(shell.user_ns["jp_hj"])(jnp.ones(2)))
    label = r.bundle[JAXPR_MIME]["label"]
    assert "make_jaxpr" not in label and label == "jp_h"
    r = run("%jaxpr jax.make_jaxpr(jp_h)(jnp.ones(2))").ok()
    assert r.bundle["text/plain"] == str(jax.make_jaxpr(shell.user_ns["jp_h"])(jnp.ones(2)))

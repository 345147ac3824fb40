"""``%sharding`` through a real InteractiveShell: the layouts of a pytree of arrays, the text
form, and every bad input (a name error, a non-array, bad syntax, a bad spec, an
interruption) as a short message naming the cell's line, the user's namespace untouched."""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, Mesh

from workbench.views.sharding import MIME

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _mesh(shape, names):
    devs = np.array(jax.devices()[: int(np.prod(shape))], dtype=object)
    return Mesh(devs.reshape(shape), names, axis_types=(AxisType.Auto,) * len(shape))


def test_sharding_magic(run, shell):
    shell.user_ns["mesh_"] = _mesh((2, 4), ("data", "model"))
    r = run(
        "xs = jax.device_put(jnp.zeros((8, 8)), "
        "jax.sharding.NamedSharding(mesh_, jax.sharding.PartitionSpec('data')))\n"
        "%sharding {'a': xs, 'b': [xs]}"
    )
    assert r.error is None, r.message
    data = r.bundle[MIME]
    assert [x["path"] for x in data["layouts"]] == ["['a']", "['b'][0]"]
    assert "text/html" in r.bundle and "P('data')" in r.bundle["text/plain"]
    t = run("%sharding --text xs")
    assert set(t.bundle) == {"text/plain"}


def test_sharding_magic_bad_input(run, shell):
    shell.user_ns["keep_me"] = 41
    r = run("%sharding undefined_name + 1")
    assert r.error is not None and "NameError" in r.message
    assert "%sharding undefined_name + 1" in r.message
    r = run("%sharding keep_me")
    assert "not a jax.Array" in r.message and len(r.message.splitlines()) <= 3
    r = run("%sharding (")
    assert "SyntaxError" in r.message
    assert shell.user_ns["keep_me"] == 41
    assert run("%sharding").error is not None


@pytest.mark.parametrize(
    "spec, shape, message",
    [
        ("P('data', 'data')", (8, 8), "duplicate entries for `data`"),
        ("P('data')", (15, 8), "divide"),
        ("P('nope')", (8, 8), "nope"),
    ],
)
def test_sharding_magic_bad_specs_name_the_line(run, shell, spec, shape, message):
    shell.user_ns["mesh_"] = _mesh((2, 4), ("data", "model"))
    line = (
        f"%sharding jax.device_put(jnp.zeros({shape}), "
        f"jax.sharding.NamedSharding(mesh_, jax.sharding.PartitionSpec{spec[1:]}))"
    )
    r = run(line)
    assert r.error is not None and message in r.message
    assert line in r.message and len(r.message.splitlines()) <= 3


def test_keyboard_interrupt_in_a_sharding_expression_is_one_line(run):
    """%sharding evaluates the user's expression: an interruption there is one line naming
    the expression, no traceback through the magic's frames."""
    run("def ki_s(x):\n    raise KeyboardInterrupt\n")
    r = run("%sharding ki_s(jnp.ones(3))")
    assert isinstance(r.error, KeyboardInterrupt)
    text = ANSI.sub("", r.stdout + r.stderr)
    assert "Traceback" not in text
    assert [ln for ln in text.splitlines() if ln.strip()] == [
        "KeyboardInterrupt: interrupted evaluating ki_s(jnp.ones(3))"
    ]

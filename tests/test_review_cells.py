"""Review of the cells-and-errors work (issue 11 items 21, 22): what a demanding user still
hit after it, each a cell run through a real IPython shell."""

from __future__ import annotations

import re

import pytest

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_keyboard_interrupt_in_a_sharding_expression_is_one_line(run):
    """%sharding evaluates the user's expression: an interruption there was a 29-line
    traceback through the magic's frames."""
    run("def ki_s(x):\n    raise KeyboardInterrupt\n")
    r = run("%sharding ki_s(jnp.ones(3))")
    assert isinstance(r.error, KeyboardInterrupt)
    text = ANSI.sub("", r.stdout + r.stderr)
    assert "Traceback" not in text
    assert [ln for ln in text.splitlines() if ln.strip()] == [
        "KeyboardInterrupt: interrupted evaluating ki_s(jnp.ones(3))"]


API_ERRORS = {
    "workbench.inspect(abs, 1.0, transforms=3)": (TypeError, "transforms"),
    "workbench.inspect(abs, 1.0, static_argnums='a')": (TypeError, "static_argnums"),
    "workbench.inspect(abs, 1.0, static_argnums=[1.5])": (TypeError, "static_argnums"),
    "workbench.inspect(abs, 1.0, static_argnames=3)": (TypeError, "static_argnames"),
    "workbench.hlo(abs, jnp.ones(3), backend=3)": (TypeError, "backend"),
}


@pytest.mark.parametrize("code", list(API_ERRORS))
def test_more_python_api_bad_arguments_are_short(run, shell, code):
    shell.run_cell("import workbench", store_history=False)
    kind, words = API_ERRORS[code]
    r = run(code)
    assert isinstance(r.error, kind)
    text = ANSI.sub("", r.short_error())
    assert words in text and len(text.strip().splitlines()) <= 2, text

"""Review of the cells-and-errors work (issue 11 items 21, 22): what a demanding user still
hit after it, each a cell run through a real IPython shell (the Python API's bad arguments
it found are in tests/test_cells_and_errors.py's API_ERRORS)."""

from __future__ import annotations

import re

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
        "KeyboardInterrupt: interrupted evaluating ki_s(jnp.ones(3))"
    ]

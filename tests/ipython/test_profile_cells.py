"""``%%jaxprof`` charges a line to the cell whose run defined the code, not to another cell
that happens to have the same text.

Under ipykernel a cell's file is named after a hash of its text, so two cells with
identical text share one file, and IPython's file -> cell map keeps only the latest.  The
test gives the session's real shell ipykernel's own compiler, defines a function, jits it,
runs an identical cell, then profiles the jitted (earlier) function: every attributed line
and the payload's cell map must name the first cell (its execution count and cell id, read
from the shell as it ran).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

BODY = "def pc_layer(x):\n    y = jnp.sin(x) @ x\n    return jnp.tanh(y) @ y\n"


def test_identical_cells_do_not_share_a_profiles_lines(run, shell, monkeypatch):
    compiler = pytest.importorskip("ipykernel.compiler")
    monkeypatch.setattr(shell, "compile", compiler.XCachingCompiler())
    first = shell.execution_count
    run(BODY).ok()
    first_file = next(f for f, n in shell.compile._filename_map.items() if n == first)
    run("pc_jit = jax.jit(pc_layer)\npc_X = jnp.ones((128, 128))").ok()
    again = shell.execution_count
    run(BODY).ok()  # the same text: the same file, now mapped to this later cell
    assert shell.compile._filename_map[first_file] == again != first

    c = run("%%jaxprof -n 3\npc_jit(pc_X)").ok()
    rep = c.result.result
    mine = [ln for ln in rep.lines if ln.file == first_file]
    assert mine and sum(ln.seconds for ln in mine) > 0
    assert {ln.cell for ln in mine} == {first}
    assert {ls.cell for ls in rep.listings if ls.file == first_file} == {first}
    payload = next(v for k, v in c.bundle.items() if k.endswith("profile+json"))
    assert payload["cells"][first_file]["number"] == first

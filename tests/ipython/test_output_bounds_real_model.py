"""A real model's ``%hlo`` and ``%%jaxpr`` cells save a bounded output: the 24-block
transformer's gradient (``tests/real_models.py``: XLA's text is about 110,000 lines) keeps
the first lines of JAX's text in ``text/plain`` with one line on the rest, ``.text`` of the
result is all of it, and the saved cell fits its goal (1.0 MB for ``%hlo``, 0.6 MB for
``%%jaxpr``, every output included, as nbformat writes it).

The ``%hlo`` check reads the notebook the browser tests open (executed by nbclient once per
session, ``tests/run_once.py``): the 24-block compile is the session's costliest step, and
a saved notebook is what the bound is about."""

from __future__ import annotations

import hashlib
import json

import nbformat
import pytest

from tests import real_models
from tests.browser import HLO24_CELLS, HLO24_GRAD, execute_notebook
from workbench.views._bounds import HTML_MAX_BYTES, TEXT_MAX_BYTES, TEXT_MAX_LINES

pytestmark = pytest.mark.slow  # traces the 24-block gradient; its compile is a notebook's

STYLE = "einsum"  # the style whose optimized HLO is the longest


@pytest.fixture
def model(shell):
    params, x = real_models.transformer_args()
    shell.user_ns.update(grad_loss=real_models.transformer_grad(STYLE), params=params, x=x)
    yield
    for name in ("grad_loss", "params", "x"):
        shell.user_ns.pop(name, None)


def _saved_bytes(nb_cell) -> int:
    """Bytes a cell's outputs add to a saved notebook, as nbformat writes it."""
    empty = nbformat.v4.new_code_cell(nb_cell.source)
    one = len(nbformat.writes(nbformat.v4.new_notebook(cells=[empty])).encode())
    return len(nbformat.writes(nbformat.v4.new_notebook(cells=[nb_cell])).encode()) - one


def _saved_cell(cell) -> int:
    """Bytes a shell's cell's outputs (its displays and its result) add to a saved notebook."""
    nb_cell = nbformat.v4.new_code_cell("")
    for data in cell.outputs:
        nb_cell.outputs.append(nbformat.v4.new_output("display_data", data=data))
    nb_cell.outputs.append(
        nbformat.v4.new_output("execute_result", data=cell.bundle, execution_count=1)
    )
    return _saved_bytes(nb_cell)


def _check_bounded(plain: str, whole: str) -> None:
    *kept, last = plain.split("\n")
    assert whole.startswith("\n".join(kept) + "\n")
    assert len(kept) <= TEXT_MAX_LINES and len("\n".join(kept).encode()) <= TEXT_MAX_BYTES
    lines = whole.count("\n") + (0 if whole.endswith("\n") else 1)
    assert last.startswith(f"[… {lines - len(kept):,} more lines")
    assert f"of {lines:,} lines" in last and ".text" in last


@pytest.mark.notebook
def test_hlo_of_the_24_block_gradient_saves_a_bounded_cell(tmp_path):
    # the notebook the browser tests open (tests/browser.py: a 24-block transformer written in
    # a cell, `%hlo -t grad` of its loss), executed once per session for both
    nb = execute_notebook(HLO24_CELLS, tmp_path / "hlo24.ipynb")
    saved = nb.cells[HLO24_GRAD]
    (shown,) = [o for o in saved.outputs if o.output_type == "execute_result"]
    plain = shown["data"]["text/plain"]
    # what the kernel kept: `.text` of the result, all of XLA's text (HLO24_TEXT_FACTS)
    (facts_out,) = [o for o in nb.cells[-1].outputs if o.output_type == "stream"]
    facts = json.loads(facts_out["text"])
    assert facts["plain_sha256"] == hashlib.sha256(plain.encode()).hexdigest()
    assert facts["head"].startswith("HloModule ") and facts["kept_is_its_start"]
    lines = facts["newlines"] + (0 if facts["ends_with_newline"] else 1)
    *kept, last = plain.split("\n")
    assert lines > TEXT_MAX_LINES
    assert len(kept) <= TEXT_MAX_LINES and len("\n".join(kept).encode()) <= TEXT_MAX_BYTES
    assert last.startswith(f"[… {lines - len(kept):,} more lines")
    assert f"of {lines:,} lines" in last and ".text" in last
    assert len(shown["data"]["text/html"].encode()) <= 2 * HTML_MAX_BYTES
    assert _saved_bytes(saved) <= 1_000_000


def test_jaxpr_of_the_24_block_gradient_saves_a_bounded_cell(run, model):
    import jax

    cell = run("%%jaxpr\ngrad_loss(params, x)").ok()
    params, x = real_models.transformer_args()
    jaxpr = jax.make_jaxpr(real_models.transformer_grad(STYLE))(params, x)
    whole = str(jaxpr.pretty_print(use_color=False))
    assert cell.result.result.text == whole
    _check_bounded(cell.bundle["text/plain"], whole)
    html = cell.bundle["text/html"]
    assert "more are omitted" in html and len(html.encode()) <= HTML_MAX_BYTES + 50_000
    assert _saved_cell(cell) <= 600_000

"""A real model's ``%%jaxpr`` cell saves a bounded output: the 24-block transformer's
gradient (``tests/real_models.py``) keeps the first lines of JAX's text in ``text/plain`` with
one line on the rest, ``.text`` of the result is all of it, and the saved cell fits its goal
(0.6 MB, every output included, as nbformat writes it).  The same bound for its ``%hlo``
(1.0 MB) is checked on the notebook the browser tests open
(``tests/chromium/test_extension_browser.py``), whose 24-block compile it shares.
"""

from __future__ import annotations

import nbformat
import pytest

from tests import real_models
from workbench.views._bounds import TEXT_MAX_BYTES, TEXT_MAX_LINES
from workbench.views._standalone import static_part

pytestmark = pytest.mark.slow  # traces the 24-block gradient

STYLE = "einsum"  # the style whose optimized HLO is the longest


@pytest.fixture
def model(shell):
    params, x = real_models.transformer_args()
    shell.user_ns.update(grad_loss=real_models.transformer_grad(STYLE), params=params, x=x)
    yield
    for name in ("grad_loss", "params", "x"):
        shell.user_ns.pop(name, None)


def _saved_cell(cell) -> int:
    """Bytes the cell's outputs (its displays and its result) add to a saved notebook."""
    nb_cell = nbformat.v4.new_code_cell("")
    empty = len(nbformat.writes(nbformat.v4.new_notebook(cells=[nb_cell])).encode())
    for data in cell.outputs:
        nb_cell.outputs.append(nbformat.v4.new_output("display_data", data=data))
    nb_cell.outputs.append(
        nbformat.v4.new_output("execute_result", data=cell.bundle, execution_count=1)
    )
    return len(nbformat.writes(nbformat.v4.new_notebook(cells=[nb_cell])).encode()) - empty


def _check_bounded(plain: str, whole: str) -> None:
    *kept, last = plain.split("\n")
    assert whole.startswith("\n".join(kept) + "\n")
    assert len(kept) <= TEXT_MAX_LINES and len("\n".join(kept).encode()) <= TEXT_MAX_BYTES
    lines = whole.count("\n") + (0 if whole.endswith("\n") else 1)
    assert last.startswith(f"[… {lines - len(kept):,} more lines")
    assert f"of {lines:,} lines" in last and ".text" in last


def test_jaxpr_of_the_24_block_gradient_saves_a_bounded_cell(run, model):
    import jax

    cell = run("%%jaxpr\ngrad_loss(params, x)").ok()
    params, x = real_models.transformer_args()
    jaxpr = jax.make_jaxpr(real_models.transformer_grad(STYLE))(params, x)
    whole = str(jaxpr.pretty_print(use_color=False))
    assert cell.result.result.text == whole
    _check_bounded(cell.bundle["text/plain"], whole)
    html = cell.bundle["text/html"]
    assert len(static_part(html).encode()) < 5_000  # the summary; the rest is data + runtime
    assert _saved_cell(cell) <= 600_000

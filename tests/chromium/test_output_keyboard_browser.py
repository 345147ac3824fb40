"""Keys typed into an output's own control stay in that output (real JupyterLab, Debian chromium).

Enter in the ``%%hlo`` graph's search box steps to the next match, which selects that node and
links it to its source line (the cell's editor scrolls to the line and paints it).  That link
once went through ``Notebook.scrollToCell``, which activates the cell and so focuses its
editor: the next characters the user typed went into their source.  Here the cell is run in
the page, ``dot`` + Enter + ``_general`` is typed into the search box, and the source, the
search box's text and where the keyboard is are checked.
"""

from __future__ import annotations

import nbformat

# a hard import: a missing Playwright fails the run (it is a test dependency), never skips
import playwright.sync_api as playwright_api
import pytest

from tests.browser import artifacts_dir, new_notebook, open_notebook, run_all_cells
from tests.browser_fixtures import BROWSER_GROUP_B

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(BROWSER_GROUP_B)]

NB = "window.jupyterapp.shell.currentWidget"
HLO_CELL = (
    "%%hlo\ndef layer(x, w):\n    return jnp.tanh(x @ w)\nlayer(jnp.ones((4, 8)), jnp.ones((8, 4)))"
)
CELLS = ["%load_ext workbench\nimport jax.numpy as jnp", HLO_CELL]


def test_enter_in_the_hlo_search_box_keeps_the_keyboard_in_the_output(browser, lab):
    name = "output-keyboard.ipynb"
    nbformat.write(new_notebook(CELLS), lab.root / name)
    page, watch = open_notebook(browser, lab, name)
    run_all_cells(page)
    out = page.locator('.jp-Notebook .jp-Cell >> nth=1 >> .jwb-ext-hlo[data-jwb-ready="1"]')
    try:
        out.wait_for(state="attached", timeout=60_000)
    except playwright_api.TimeoutError:
        raise AssertionError("the %%hlo output was not drawn") from None

    search = out.locator("input.jwb-hlo-search")
    search.click()
    page.keyboard.type("dot")
    count = out.locator(".jwb-hlo-search-count")
    page.wait_for_function(
        "(el) => /match/.test(el.textContent)", arg=count.element_handle(), timeout=10_000
    )
    assert not count.inner_text().startswith("0 "), count.inner_text()  # the matmul is a dot
    page.keyboard.press("Enter")
    # the step selected a node linked to the matmul's line: the editor paints that line
    page.locator(".jp-Notebook .jp-Cell >> nth=1 >> .jwb-line-selected").wait_for(
        state="attached", timeout=10_000
    )
    page.wait_for_timeout(500)  # the link's scroll of the notebook (asynchronous) has settled
    page.keyboard.type("_general")
    page.wait_for_timeout(200)

    state = page.evaluate(
        f"""() => {{
          const cell = {NB}.content.widgets[1];
          const a = document.activeElement;
          return {{
            source: cell.model.sharedModel.getSource(),
            mode: {NB}.content.mode,
            inOutput: !!a && !!a.closest('.jwb-ext-hlo') && cell.outputArea.node.contains(a),
            active: a ? `${{a.tagName}}.${{a.className}}` : null,
            search: cell.node.querySelector('input.jwb-hlo-search').value,
          }};
        }}"""
    )
    page.screenshot(path=str(artifacts_dir() / "output-keyboard-hlo-search.png"))
    assert state["source"] == HLO_CELL, state
    assert state["inOutput"], state
    assert state["search"] == "dot_general", state
    assert state["mode"] == "command", state
    assert watch.errors == [], watch.errors
    page.close()

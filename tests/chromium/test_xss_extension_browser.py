"""The XSS corpus (tests/xss_corpus.py) drawn by the JupyterLab extension, in a trusted and
an untrusted notebook: one saved output of every payload kind whose user strings (function
names, named scopes, file names, array and benchmark names) are the corpus.  Nothing
executes (``window.__xss``, which every payload would set, stays unset; no dialog), no
element, handler or ``javascript:`` URL is injected into the page, every string shows as
text, and the console is clean.  The standalone runtime draws the same bundles in
chromium/test_standalone_browser.py.
"""

from __future__ import annotations

import nbformat
import pytest

from tests.browser import PageWatch, scroll_to_cell, wait_for_notebook
from tests.browser_fixtures import BROWSER_GROUP_A
from tests.xss_corpus import xss_bundles

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(BROWSER_GROUP_A)]

READY = '.jwb-ext[data-jwb-ready="1"]'

#: what the corpus would leave in the page had any of it been inserted as markup
INJECTED_JS = """
() => {
  const area = document.body;
  const all = [...area.querySelectorAll('*')];
  return {
    imgs: area.querySelectorAll('img[src="x"]').length,
    scripts: [...area.querySelectorAll('script')].filter(s => s.textContent.includes('__xss'))
      .length,
    handlers: all.filter(e => [...e.attributes].some(a => a.name.startsWith('on')
      && a.value.includes('__xss'))).length,
    links: all.filter(e => /^\\s*javascript:/i.test(e.getAttribute('href') || '')
      || /^\\s*javascript:/i.test(e.getAttribute('src') || '')).length,
  };
}
"""


@pytest.fixture(scope="module")
def xss_kinds(lab, shell) -> list[str]:
    """The shared JupyterLab serves xss.ipynb (unsigned: untrusted) and a signed copy, one
    cell per kind; the kinds in cell order."""
    bundles = xss_bundles(shell)
    nb = nbformat.v4.new_notebook()
    for kind, bundle in bundles.items():
        cell = nbformat.v4.new_code_cell(f"# {kind}")
        cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
        nb.cells.append(cell)
    nbformat.write(nb, lab.root / "xss.ipynb")
    nb.metadata["title"] = "trusted copy"  # trust is per content: a copy that differs
    nbformat.write(nb, lab.root / "xss-trusted.ipynb")
    lab.trust(lab.root / "xss-trusted.ipynb")
    assert lab.is_trusted(lab.root / "xss-trusted.ipynb")
    assert not lab.is_trusted(lab.root / "xss.ipynb")
    return list(bundles)


@pytest.mark.parametrize("name", ["xss-trusted.ipynb", "xss.ipynb"])
def test_xss_corpus_drawn_by_the_extension_stays_text(browser, lab, xss_kinds, name):
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    watch = PageWatch(page, lab.base)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(lab.lab_url(name))
    wait_for_notebook(page, name=name)
    # JupyterLab's own word on trust: every cell of the signed copy, none of the other
    trusted = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets.map(c => c.model.trusted)"
    )
    assert set(trusted) == {name == "xss-trusted.ipynb"}, trusted
    kinds = xss_kinds
    drawn: list[str] = []
    for i in range(len(kinds)):
        scroll_to_cell(page, i)  # the notebook is windowed: each output drawn when in view
        cell = page.locator(".jp-Notebook .jp-Cell").nth(i)
        cell.locator(READY).wait_for(state="attached", timeout=60_000)
        root = cell.locator(".jwb-ext").first
        drawn.append(root.evaluate("e => [...e.classList].find(c => c.startsWith('jwb-ext-'))"))
        text = root.evaluate("e => e.textContent")
        assert "<img src=x onerror" in text, (kinds[i], text[:300])  # the corpus, as text
    assert drawn == [f"jwb-ext-{k}" for k in kinds]
    # our renderer drew every output: none fell back to the kernel's text/html
    assert page.locator(".jp-Notebook .jp-RenderedHTMLCommon .jwb-out").count() == 0
    page.wait_for_timeout(500)  # anything late (workers, observers, timers)
    assert page.evaluate("() => window.__xss") is None
    found = page.evaluate(INJECTED_JS)
    assert found == {"imgs": 0, "scripts": 0, "handlers": 0, "links": 0}, found
    assert dialogs == [] and watch.errors == [] and watch.external == [], (
        dialogs,
        watch.errors,
        watch.external,
    )
    page.close()

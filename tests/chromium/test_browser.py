"""The jaxpr HTML in a real browser: standalone (nbconvert/VS Code-like) and in a real JupyterLab."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import nbformat

# a hard import: a missing Playwright fails the run (it is a test dependency), never skips
import playwright.sync_api as playwright_api
import pytest

import workbench
from tests.browser import TOKEN, artifacts_dir
from tests.browser_fixtures import BROWSER_GROUP_A
from tests.programs import count_equations
from workbench.views.jaxpr import jaxpr_html

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(BROWSER_GROUP_A)]


def _loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def test_click_highlights_definition_and_uses(browser):
    """The output's text/html alone: the standalone runtime draws the jaxpr view, and a
    click on a variable highlights its definition and every use (a second click clears)."""
    d = workbench.jaxpr(_loss, jnp.ones((4, 4)), jnp.ones((2, 4)), transforms="grad")
    page = browser.new_page()
    page.set_content(f"<html><body>{d._repr_mimebundle_()['text/html']}</body></html>")
    page.wait_for_selector('.jwb-ext-jaxpr[data-jwb-ready="1"]', timeout=30_000)
    v = page.locator('.jwb-jaxpr-v[data-v="d"]')
    uses = v.count()
    assert uses >= 3  # defined once (tanh), read by sub, integer_pow, mul, mul
    v.first.click()
    page.wait_for_selector(".jwb-jaxpr-vhl", timeout=5_000)
    assert page.locator('.jwb-jaxpr-vhl[data-v="d"]').count() == uses
    assert page.locator(".jwb-jaxpr-vhl").count() == uses
    page.locator('.jwb-jaxpr-v[data-v="d"]').first.click()  # toggles off
    page.wait_for_timeout(200)
    assert page.locator(".jwb-jaxpr-vhl").count() == 0
    page.screenshot(path=str(artifacts_dir() / "jaxpr-standalone.png"), full_page=True)
    page.close()


def test_html_survives_blocked_scripts(browser):
    ins = workbench.inspect(_loss, jnp.ones((4, 4)), jnp.ones((2, 4)))
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.set_content(f"<html><body>{jaxpr_html(ins)}</body></html>")
    text = page.inner_text(".jwb-jaxpr")
    assert "dot_general" in text and "tanh" in text and "f32[2,4]" in text
    ctx.close()


@pytest.fixture(scope="module")
def jupyter_lab(lab_off):
    """JupyterLab with the jax-workbench extension disabled: this module tests the text/html
    fallback (what JupyterLab without the extension, nbconvert and VS Code show);
    tests/test_extension_browser.py tests the extension."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext workbench\nimport jax.numpy as jnp"),
        nbformat.v4.new_code_cell(
            "%%jaxpr -t grad\ndef loss(w, x):\n"
            "    return jnp.sum(jnp.tanh(x @ w) ** 2)\n"
            "loss(jnp.ones((4, 4)), jnp.ones((2, 4)))"
        ),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, lab_off.root / "demo.ipynb")
    return lab_off.base, TOKEN


def test_jaxpr_output_in_real_jupyterlab(browser, jupyter_lab):
    base, token = jupyter_lab
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.goto(f"{base}/lab/tree/demo.ipynb?token={token}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
    # the notebook's kernel connection is up (keys pressed before it are lost)
    page.wait_for_function(
        "() => { const k = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;"
        " return k && k.connectionStatus === 'connected' && k.status === 'idle'; }",
        timeout=60_000,
    )
    out = None
    for _attempt in range(4):  # should the keys still be lost, press them again
        page.locator(".jp-Cell .jp-InputArea-editor").first.click()
        page.keyboard.press("Shift+Enter")
        page.keyboard.press("Shift+Enter")
        try:
            # the text/html part's standalone runtime (the output is trusted: it ran here)
            out = page.wait_for_selector(
                '.jp-OutputArea-output .jwb-ext-jaxpr[data-jwb-ready="1"]', timeout=30_000
            )
            break
        except playwright_api.TimeoutError:
            continue
    if out is None:
        page.screenshot(path=str(artifacts_dir() / "jaxpr-jupyterlab-failure.png"), full_page=True)
        raise AssertionError("the %%jaxpr output never appeared in JupyterLab")
    text = out.inner_text()
    # drawn in the output's shadow root by the runtime, not by the extension's renderer
    assert page.evaluate("() => document.querySelectorAll('.jwb-ext').length") == 0
    ref = jax.make_jaxpr(jax.grad(_loss))(jnp.ones((4, 4)), jnp.ones((2, 4)))  # the cell's loss
    assert "grad(loss)" in text and "dot_general" in text
    assert str(count_equations(ref)) in text
    page.locator("input.jwb-jaxpr-search").fill("dot_general")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jwb-sa-host')].some(h => /\\d/.test("
        "h.shadowRoot.querySelector('.jwb-jaxpr-search-count')?.textContent || ''))",
        timeout=10_000,
    )
    page.screenshot(path=str(artifacts_dir() / "jaxpr-jupyterlab.png"), full_page=True)
    page.close()

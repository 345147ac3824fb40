"""The ``%%hlo`` output's text/html alone (as nbconvert, VS Code and Colab show it) in
Debian's chromium: the standalone runtime draws the graph and searches it; without scripts
the static summary reads."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import workbench


def _mlp(w, x):
    with jax.named_scope("<script>alert(1)</script>"):
        h = jnp.tanh(x @ w)
    return jnp.sum((h - 1.0) ** 2)


@pytest.mark.browser
def test_html_in_a_real_browser(browser):
    """The text/html part alone (as nbconvert, VS Code and Colab show it): the standalone
    runtime draws the graph on its canvas and its search finds instructions; without
    scripts the static summary reads, with the heaviest fusions."""
    from tests.browser import artifacts_dir

    d = workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), transforms="grad")
    html = d._repr_mimebundle_()["text/html"]
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content(f"<html><body>{html}</body></html>")
    page.wait_for_selector('.jwb-ext-hlo[data-jwb-ready="1"]', timeout=30_000)
    assert page.locator("canvas.jwb-hlo-canvas").count() == 1
    drawn = page.wait_for_function(
        "() => { const r = document.querySelector('.jwb-sa-host').shadowRoot"
        ".querySelector('.jwb-hlo'); const d = r.jwbHloDrawing && r.jwbHloDrawing();"
        " return d && d.boxes.length ? d.boxes.length : null; }",
        timeout=30_000,
    ).json_value()
    assert drawn >= 1
    page.locator("input.jwb-hlo-search").fill("multiply")
    count = page.locator(".jwb-hlo-search-count")
    page.wait_for_function(
        "() => /\\d+ match/.test(document.querySelector('.jwb-sa-host').shadowRoot"
        ".querySelector('.jwb-hlo-search-count').textContent)",
        timeout=10_000,
    )
    assert int(count.inner_text().split()[0]) >= 1
    assert errors == [], errors
    page.screenshot(path=str(artifacts_dir() / "hlo-standalone.png"), full_page=True)
    page.close()
    ctx = browser.new_context(java_script_enabled=False)
    quiet = ctx.new_page()
    quiet.set_content(f"<html><body>{html}</body></html>")
    assert quiet.locator(".jwb-static").is_visible()
    assert "fusion" in quiet.inner_text(".jwb-hlo")
    ctx.close()

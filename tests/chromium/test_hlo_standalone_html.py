"""The ``%%hlo`` view's standalone HTML (as nbconvert and VS Code show it) in Debian's
chromium: the diagram drawn, the search finding instructions, and without scripts the text
still all there."""

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
    """The standalone HTML (as nbconvert/VS Code show it): diagram drawn, search works,
    and without scripts the text is still all there."""
    from tests.browser import artifacts_dir

    d = workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), transforms="grad")
    html = d._repr_mimebundle_()["text/html"]
    entry = next(iter(d.report.graphs.values()))
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.set_content(f"<html><body>{html}</body></html>")
    assert page.locator("svg g.n").count() == len(entry.nodes)
    box = page.locator(".jwb-search input")
    assert box.is_visible()
    box.fill("multiply")
    hits = page.locator(".jwb-txt .l.hit")
    n_mul = sum(1 for i in d.report.module.instructions() if i.opcode == "multiply")
    assert n_mul >= 1 and hits.count() >= n_mul
    assert all("multiply" in t.lower() for t in hits.all_inner_texts())
    page.screenshot(path=str(artifacts_dir() / "hlo-standalone.png"), full_page=True)
    page.close()
    ctx = browser.new_context(java_script_enabled=False)
    quiet = ctx.new_page()
    quiet.set_content(f"<html><body>{html}</body></html>")
    assert not quiet.locator(".jwb-search").is_visible()
    assert "fusion" in quiet.inner_text(".jwb-hlo")
    ctx.close()

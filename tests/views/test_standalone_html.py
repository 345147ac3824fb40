"""Where the standalone runtime goes in text/html: ``workbench.config(html=...)``, the side
panel's word that the extension listens, and the compile line that never carries it.  (The
runtime drawing in real browsers: tests/chromium/test_standalone_browser.py.)"""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import workbench
from workbench import schemas
from workbench.views import _standalone as sa
from workbench.views.jaxpr import JAXPR_MIME


@pytest.fixture
def fresh_mode():
    """Each test starts from the default mode with no extension listening, and leaves it so."""
    sa.set_html_mode("auto")
    sa.note_extension_listening(False)
    sa.note_cell_started(None)
    yield
    sa.set_html_mode("auto")
    sa.note_extension_listening(False)
    sa.note_cell_started(None)


def _html() -> str:
    return workbench.jaxpr(lambda x: jnp.sin(x) * 2, jnp.ones(3))._repr_mimebundle_()["text/html"]


def _carries_runtime(html: str) -> bool:
    return sa.runtime_base64() in html


def test_config_reads_and_sets_the_mode(fresh_mode):
    assert workbench.config() == {"html": "auto"}
    assert workbench.config(html="static") == {"html": "static"}
    with pytest.raises(ValueError, match="html must be one of"):
        workbench.config(html="sometimes")
    assert workbench.config() == {"html": "static"}


def test_auto_embeds_everywhere_until_the_extension_listens_then_once(fresh_mode):
    assert len(sa.runtime_base64()) > 10_000  # this checkout built it
    assert _carries_runtime(_html()) and _carries_runtime(_html())
    sa.note_extension_listening(True)
    first, second = _html(), _html()
    assert _carries_runtime(first) and not _carries_runtime(second)
    # the second keeps its data and loader: a page with the first mounts it too
    assert sa.embedded_data(second) is not None and "<script>" in second
    sa.note_extension_listening(False)  # the panel went away (a restart, another front end)
    assert _carries_runtime(_html())
    sa.note_extension_listening(True)  # ... and came back: one more copy, then none
    assert _carries_runtime(_html()) and not _carries_runtime(_html())


def test_auto_embeds_it_again_when_the_cell_that_carried_it_runs_again(fresh_mode):
    """Re-running a cell clears its outputs: the one that carried the runtime is gone, so the
    re-run's output carries it again; other cells' re-runs do not."""
    sa.note_extension_listening(True)
    sa.note_cell_started("cell-a")
    assert _carries_runtime(_html()) and not _carries_runtime(_html())
    sa.note_cell_started("cell-b")
    assert not _carries_runtime(_html())
    sa.note_cell_started("cell-b")  # not the carrier
    assert not _carries_runtime(_html())
    sa.note_cell_started("cell-a")  # the carrier, run again
    assert _carries_runtime(_html()) and not _carries_runtime(_html())
    sa.note_cell_started("cell-c")
    assert not _carries_runtime(_html())


def test_embed_puts_it_in_every_output_and_static_in_none(fresh_mode):
    sa.note_extension_listening(True)
    workbench.config(html="embed")
    assert all(_carries_runtime(_html()) for _ in range(3))
    workbench.config(html="static")
    d = workbench.jaxpr(lambda x: jnp.sin(x) * 2, jnp.ones(3))
    html = d._repr_mimebundle_()["text/html"]
    assert "<script" not in html and sa.NEEDS_FRONT_END in html
    assert f"{d.inspection.model.total_equations} equation" in html


def test_the_compile_line_under_a_cell_is_its_own_summary(fresh_mode):
    import jax

    from workbench.engine.cache import CACHE
    from workbench.engine.cache.queries import cell_summary
    from workbench.views import cache as cache_view

    jax.jit(lambda v: v * 2)(jnp.ones(3))
    summary = cell_summary(CACHE.records(), "cell [1]")
    html = cache_view.cell_line_display(summary)._repr_mimebundle_()["text/html"]
    assert "<script" not in html and sa.embedded_data(html) is None


def test_the_embedded_data_is_the_bundle(fresh_mode):
    d = workbench.jaxpr(lambda x: jnp.sin(x) * 2, jnp.ones(3))
    bundle = d._repr_mimebundle_()
    assert sa.embedded_data(bundle["text/html"]) == {
        JAXPR_MIME: schemas.unpack(bundle[JAXPR_MIME]),
        "text/plain": bundle["text/plain"],
    }

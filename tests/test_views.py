"""Views: big programs stay bounded, the compare view, source labels, degraded display."""

from __future__ import annotations

import jax.numpy as jnp

import workbench
from tests.programs import count_equations
from workbench.views import _html
from workbench.views.jaxpr import (
    CHUNK_ROWS,
    FOLD_AFTER,
    JAXPR_MIME,
    MAX_ROWS,
    JaxprDisplay,
    jaxpr_html,
)


def _chain(n):
    def f(x):
        for i in range(n):
            x = jnp.sin(x) + i
        return x
    return f


def test_big_program_is_folded_and_bounded():
    ins = workbench.inspect(_chain(6000), jnp.ones(4))  # a sin and an add per link
    n_eqns = count_equations(ins.jaxpr)  # JAX's own jaxpr, counted apart from the model
    assert n_eqns >= 12000 and ins.model.total_equations == n_eqns
    html = jaxpr_html(ins)
    rows = html.count('<span class="jwb-eq">')
    assert rows <= MAX_ROWS + 2  # + the lambda line and the "in" line
    assert "Showing the first" in html
    assert len(html) < 4_000_000
    assert html.count('class="jwb-chunk"') >= MAX_ROWS // CHUNK_ROWS
    assert f"equations {FOLD_AFTER + 1}–{2 * FOLD_AFTER} of {n_eqns}" in html
    assert html.count("<details>") == html.count("</details>")
    # text and JSON still carry the whole program
    bundle = JaxprDisplay([ins])._repr_mimebundle_()
    assert len(bundle[JAXPR_MIME]["jaxpr"]["eqns"]) == len(ins.jaxpr.eqns)
    assert bundle["text/plain"].count(" = sin ") == 6000


def test_small_program_unfolded():
    html = jaxpr_html(workbench.inspect(_chain(3), jnp.ones(4)))
    assert "Showing the first" not in html and "<details>" not in html


def test_source_labels():
    assert _html.source_label("<workbench-cell-7>", 3) == ("cell [7] line 3", True)
    assert _html.source_label("<workbench-cell-7-2>", 3) == ("cell [7] line 3", True)
    assert _html.source_label("/tmp/ipykernel_12/3456.py", 4) == ("cell line 4", True)
    assert _html.source_label("/home/u/model.py", 9) == ("model.py:9", False)


def test_types_coloured_by_dtype_family():
    html = jaxpr_html(workbench.inspect(lambda x, i: (x * 2, i + 1, x > 0), jnp.ones(2),
                                        jnp.ones(2, jnp.int32)))
    assert 'class="jwb-t f"' in html and 'class="jwb-t i"' in html and 'class="jwb-t b"' in html


def test_display_falls_back_to_text_when_asked():
    d = workbench.jaxpr(lambda x: x + 1, 1.0, text=True)
    assert list(d._repr_mimebundle_()) == ["text/plain"]
    assert repr(d).startswith("{ lambda")


def test_inspection_displays_with_extension_loaded(shell):
    from IPython.core.formatters import DisplayFormatter  # noqa: F401

    ins = workbench.inspect(lambda x: x * 3, 1.0)
    fmt, _ = shell.display_formatter.format(ins)
    assert JAXPR_MIME in fmt and "mul" in fmt["text/plain"]

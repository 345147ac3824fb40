"""The static summary in text/html never breaks a page and reads when a sanitizer has been at it.

JupyterLab shows an untrusted notebook's HTML through its sanitizer, which drops
``<style>`` and ``<script>``; Notebook 7 and JupyterLab throw ("Cannot set property href of
#<SVGAElement> which has only a getter") on ``<a>`` elements inside SVG.  Here every
view's HTML is sanitised the same way and must keep its structure: code in ``<pre>``,
tables with inline borders, no links inside SVG, colours from JupyterLab's theme
variables (so the Dark theme gets its own).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import workbench
from workbench import schemas
from workbench.engine.sharding.mesh_explorer import ExplorerConfig, explore
from workbench.views import cache, mesh_explorer
from workbench.views._standalone import NEEDS_FRONT_END, embedded_data
from workbench.views.display import View
from workbench.views.jaxpr import HIST_TOP

STRIPPED = re.compile(r"<(style|script)\b[^>]*>.*?</\1>", re.S | re.I)
VAR_STYLE = re.compile(r'\sstyle="[^"]*var\([^"]*"')
VOID = {"br", "hr", "img", "input", "meta", "link", "wbr", "col", "source", "area"}


def sanitize(html: str) -> str:
    """What JupyterLab 4.6's sanitizer does to us (measured in the browser): ``<style>`` and
    ``<script>`` go with their content, and a ``style`` attribute holding a ``var()`` goes
    whole.  (It also unwraps ``<svg>`` and its children, keeping their text: see
    :class:`Structure`, which reports such text unless it is hidden.)"""
    return VAR_STYLE.sub("", STRIPPED.sub("", html))


class Structure(HTMLParser):
    """Tags with their attributes, text per ``<pre>``, links inside ``<svg>``, and the text
    of SVG elements a reader would see once the sanitizer has unwrapped them (not inside a
    ``display:none`` element)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.pre_texts: list[str] = []
        self.links_in_svg = 0
        self.loose_svg_text = ""
        self._open: list[tuple[str, bool]] = []  # (tag, hides its content)
        self._svg = 0
        self._pre = 0

    def _hidden(self) -> bool:
        return any(h for _, h in self._open)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        if tag == "svg":
            self._svg += 1
        elif tag == "a" and self._svg:
            self.links_in_svg += 1
        elif tag == "pre":
            self._pre += 1
            self.pre_texts.append("")
        if tag not in VOID:
            self._open.append((tag, "display:none" in a.get("style", "").replace(" ", "")))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._svg -= 1
        elif tag == "pre":
            self._pre -= 1
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i][0] == tag:
                del self._open[i:]
                break

    def handle_data(self, data: str) -> None:
        if self._pre:
            self.pre_texts[-1] += data
        if self._svg and not self._hidden():
            self.loose_svg_text += data.strip()


def structure(html: str) -> Structure:
    s = Structure()
    s.feed(sanitize(html))
    s.close()
    return s


def essentials_inline(html: str) -> Structure:
    """Checks every view's HTML must pass; returns the sanitised structure."""
    s = structure(html)
    assert s.links_in_svg == 0
    assert s.loose_svg_text == "", "SVG text a sanitizer would leave as loose text"
    for tag, attrs in s.tags:
        style = attrs.get("style", "")
        if tag in ("td", "th"):
            assert "border:" in style and "padding:" in style, (tag, attrs)
        if tag == "table":
            assert "border-collapse" in style, attrs
        if tag == "pre":
            assert "white-space:pre" in style, attrs
    return s


_COLOUR_PROP = re.compile(r"(?<![\w-])(color|background(?:-color)?|fill|stroke)\s*:\s*([^;\"'}]+)")


def theme_colours_only(html: str) -> None:
    """Every text/background colour in CSS and style attributes is a JupyterLab variable
    (with a fallback); data colours (series, devices) are attributes and not checked."""
    css = re.findall(r"<style\b[^>]*>(.*?)</style>", html, re.S) + re.findall(
        r'\sstyle="([^"]*)"', html
    )
    for prop, value in _COLOUR_PROP.findall("\n".join(css)):
        value = value.strip()
        ok = value.startswith("var(--jp-") or value in ("none", "inherit", "transparent")
        assert ok, f"{prop}: {value}"


def _loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def _while(x):
    return jax.lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x))


def _cond(x):
    return jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x) + 1.0


def _html(d) -> str:
    return d._repr_mimebundle_()["text/html"]


def _carries_its_bundle(d, html: str) -> None:
    """The text/html part carries the output's payload and text/plain for the standalone
    runtime, exactly as the MIME bundle has them."""
    bundle = d._repr_mimebundle_()
    data = embedded_data(html)
    assert data is not None
    mime = d.view.mime
    assert data[mime] == schemas.unpack(bundle[mime])
    assert data["text/plain"] == bundle["text/plain"]


def test_hlo_summary_reads_without_style_and_carries_the_payload():
    for fn, args in ((_while, (jnp.ones(3),)), (_cond, (jnp.ones(3),))):
        d = workbench.hlo(fn, *args)
        html = _html(d)
        s = essentials_inline(html)
        text = re.sub(r"<[^>]+>", " ", sanitize(html))
        assert f"{d.report.hlo_op_count} HLO instructions" in text
        assert NEEDS_FRONT_END in text
        assert "<svg" not in html and "<a " not in html and "href=" not in html
        assert not any(t == "pre" for t, _ in s.tags)  # the text is the view's, not the summary's
        _carries_its_bundle(d, html)
        theme_colours_only(html)


def test_jaxpr_summary_names_its_most_used_primitives():
    d = workbench.jaxpr(_cond, jnp.ones(3))
    html = _html(d)
    s = essentials_inline(html)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", sanitize(html)))
    hist = d.inspection.model.histogram
    total = sum(hist.values())
    assert f"{total} equation" in text
    for prim, count in hist.most_common(HIST_TOP):
        assert f" {prim} {count} " in text, prim
    assert any(t == "table" for t, _ in s.tags)
    _carries_its_bundle(d, html)
    theme_colours_only(html)


def test_hlo_summary_lists_the_heaviest_fusions():
    d = workbench.hlo(_loss, jnp.ones((4, 4)), jnp.ones((2, 4)), transforms="grad")
    html = _html(d)
    s = essentials_inline(html)
    assert any(t == "table" and a.get("data-jwb") == "top-fusions" for t, a in s.tags)
    top = [n for g in d.report.graphs.values() for n in g.nodes if n.kind == "fusion"]
    heaviest = max(top, key=lambda n: n.bytes_moved)
    assert f"<code>{heaviest.id}</code>" in html
    _carries_its_bundle(d, html)
    theme_colours_only(html)


def _other_views(shell) -> dict[str, str]:
    w, x = jnp.ones((4, 4)), jnp.ones((2, 4))
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    xs = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))
    out = {
        "jaxpr-compare": _html(workbench.jaxpr(_loss, w, x, transforms="grad", compare=True)),
        "hlo-lowered": _html(workbench.hlo(_loss, w, x, stage="lowered")),
        "bench": _html(
            workbench.bench({"a": jax.jit(_loss), "b": _loss}, w, x, budget=0.05, progress=False)
        ),
        "sharding": _html(workbench.sharding({"x": xs, "y": jnp.ones(3)})),
        "mesh-explorer": mesh_explorer.explorer_bundle(
            explore(
                ExplorerConfig(
                    operation="matmul", shape="64, 64", spec="data, model", rhs_spec="model, None"
                )
            )
        )["text/html"],
    }
    shell.run_cell(
        "import jax.numpy as jnp\n_fb_f = jax.jit(lambda v: v + 1)\n"
        "_fb_f(jnp.ones(3)); _fb_f(jnp.ones(4))",
        store_history=True,
    )
    out["cache"] = cache.cache_display(workbench.cache())._repr_mimebundle_()["text/html"]
    out["cache-persistent"] = cache.persistent_bundle(workbench.cache().persistent)["text/html"]
    return out


def test_every_view_keeps_its_essentials_inline(shell):
    for kind, html in _other_views(shell).items():
        s = essentials_inline(html)
        assert s.tags, kind
        theme_colours_only(html)
    # tables are where the figures are: they must have survived with their borders
    assert "<td" in sanitize(_other_views(shell)["bench"])


def test_a_degraded_view_shows_its_text_preformatted():
    """The errors path: a view that fails shows the text with a note, still readable."""

    def boom(record, **_):
        raise RuntimeError("no")

    view = View(
        kind="hlo",
        version=2,
        text=lambda r, **_: "line 1\nline 2",
        html=boom,
        data=boom,
        degrade=True,
    )
    html = view.bundle(object())["text/html"]
    s = essentials_inline(html)
    assert s.pre_texts == ["line 1\nline 2"]
    theme_colours_only(html)


def test_the_checks_catch_what_they_are_for():
    """The helpers fail on the faults they look for (a link in SVG, a bare table, a colour)."""
    with pytest.raises(AssertionError):
        essentials_inline('<svg><a href="#x"><rect/></a></svg>')
    with pytest.raises(AssertionError):
        essentials_inline("<table><tr><td>1</td></tr></table>")
    with pytest.raises(AssertionError):
        essentials_inline("<pre>code</pre>")
    with pytest.raises(AssertionError):
        theme_colours_only('<span style="color:#cf222e">x</span>')
    with pytest.raises(AssertionError):  # a var() takes the whole attribute with it
        essentials_inline('<pre style="white-space:pre;color:var(--jp-x,#000)">code</pre>')
    with pytest.raises(AssertionError):  # SVG labels left loose by the sanitizer
        essentials_inline('<svg><text x="0">label</text></svg>')
    essentials_inline('<div style="display:none"><svg><text x="0">label</text></svg></div>')
    essentials_inline(
        '<div><style>td{}</style><script>x</script><pre style="white-space:pre"></pre></div>'
    )

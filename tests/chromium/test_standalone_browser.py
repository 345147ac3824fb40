"""The standalone runtime in the ``text/html`` part: the interactive views where our MIME
renderer does not exist (exported HTML, VS Code, Colab), in Debian's chromium.

- The notebooks test_extension_browser.py executes (``extension_notebooks``, once per
  test session), those in ``EXPORTS`` exported with nbconvert (``lab`` and ``classic``
  templates) and opened from ``file://`` with every network request refused: every
  workbench output drawn and interactive (the HLO graph on its canvas, search in jaxpr and
  HLO, sorting in the benchmark table), the console clean.  nbconvert's own template links
  a CDN copy of MathJax and RequireJS; those links are pointed at empty ``data:`` scripts, so
  the test can say that *nothing* on the page asks the network for anything.
- Colab and VS Code modelled: each output's ``text/html`` alone in
  ``<iframe sandbox="allow-scripts" srcdoc=...>`` (an opaque origin, no Jupyter, no
  extension): drawn, console clean.  (Neither front end is run here.)
- With scripts disabled (GitHub's preview, nbviewer's static mode): the static summary shows.
- An XSS corpus in the user-controlled strings of every payload kind (function names,
  named scopes, file paths, array and benchmark names): nothing executes, the strings are
  text.
"""

from __future__ import annotations

import html as html_lib
import json
import time

import nbformat
import pytest
from nbconvert import HTMLExporter

from tests.browser import (
    PageWatch,
    artifacts_dir,
    workbench_outputs,
)
from tests.browser_fixtures import BROWSER_GROUP_A
from tests.xss_corpus import XSS_NOT_COVERED, xss_bundles
from workbench import schemas
from workbench.schemas import kind_of
from workbench.views._standalone import NEEDS_FRONT_END, STATIC_KINDS

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(BROWSER_GROUP_A)]

READY = '.jwb-ext[data-jwb-ready="1"]'
#: nbconvert's template links these from a CDN: an empty script instead (no request)
EMPTY_SCRIPT = "data:text/javascript,"
#: ... and imports Mermaid as a module (classic template): a stub module
MERMAID_STUB = "data:text/javascript,export default {initialize(){}}"

#: every interactive output's root (inside the open shadow roots the runtime mounts into);
#: the compile line under a cell (STATIC_KINDS) is its own summary and has none
OUTPUTS_JS = """
() => [...document.querySelectorAll('.jwb-out')].filter(b => b.querySelector('script.jwb-data'))
  .map(b => {
  const host = b.querySelector('.jwb-sa-host');
  const node = host && host.shadowRoot && host.shadowRoot.querySelector('.jwb-ext');
  return {kind: b.dataset.jwbKind, ready: node ? node.getAttribute('data-jwb-ready') : null};
})
"""

#: the first HLO output's drawing (what its canvas shows), or null before it is drawn
HLO_DRAWING_JS = """
() => {
  const root = [...document.querySelectorAll('.jwb-sa-host')]
    .map(h => h.shadowRoot && h.shadowRoot.querySelector('.jwb-hlo')).find(Boolean);
  const d = root && root.jwbHloDrawing ? root.jwbHloDrawing() : null;
  return d && d.boxes.length ? {boxes: d.boxes.length, at: performance.now()} : null;
}
"""


def _export(nb_path, template: str, out_path) -> str:
    exporter = HTMLExporter(
        template_name=template,
        mathjax_url=EMPTY_SCRIPT,
        require_js_url=EMPTY_SCRIPT,
        jquery_url=EMPTY_SCRIPT,
        mermaid_js_url=MERMAID_STUB,
    )
    body, _ = exporter.from_notebook_node(nbformat.read(nb_path, as_version=4))
    out_path.write_text(body, encoding="utf-8")
    return body


#: the (notebook, nbconvert template) exports the tests open (compile24.ipynb's is not one:
#: test_memory_compile_browser.py opens it in JupyterLab)
EXPORTS = (
    ("wb.ipynb", "lab"),
    ("wb.ipynb", "classic"),
    ("hlo24.ipynb", "lab"),
    ("jaxpr12k.ipynb", "lab"),
)


@pytest.fixture(scope="module")
def exported(extension_notebooks, tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("exported")
    out = {}
    for name, template in EXPORTS:
        path = d / f"{name.removesuffix('.ipynb')}-{template}.html"
        _export(extension_notebooks["dir"] / name, template, path)
        out[(name, template)] = path
    return out


def _interactive_parts(nb) -> list[str]:
    """The text/html of each workbench output of ``nb`` that carries data (not the compile
    line, :data:`STATIC_KINDS`)."""
    return [
        out["data"]["text/html"]
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if any(
            m.startswith("application/vnd.jax-workbench.") and kind_of(m) not in STATIC_KINDS
            for m in out.get("data", {})
        )
    ]


def _offline_page(browser, **context):
    """A page whose every request that is not file:, data: or blob: is refused (and recorded)."""
    ctx = browser.new_context(viewport={"width": 1300, "height": 1000}, **context)
    page = ctx.new_page()
    watch = PageWatch(page, "file://")
    refused: list[str] = []

    def route(r):
        if r.request.url.startswith(("file:", "data:", "blob:", "about:")):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return page, watch, refused


def _wait_drawn(page, count: int, timeout: float = 90_000) -> list[dict]:
    page.wait_for_function(
        f"(n) => ({OUTPUTS_JS})().filter(o => o.ready === '1').length >= n",
        arg=count,
        timeout=timeout,
    )
    return page.evaluate(OUTPUTS_JS)


@pytest.mark.parametrize("template", ["lab", "classic"])
def test_exported_notebook_is_interactive_offline(browser, exported, extension_notebooks, template):
    nb = extension_notebooks["nb"]["wb.ipynb"]
    expected = [k for _, k in workbench_outputs(nb) if k not in STATIC_KINDS]
    page, watch, refused = _offline_page(browser)
    page.goto(exported[("wb.ipynb", template)].as_uri())
    outputs = _wait_drawn(page, len(expected))
    assert [o["kind"] for o in outputs] == expected
    assert all(o["ready"] == "1" for o in outputs), outputs
    # the static summaries gave way to the views (the compile lines stay: they are static)
    assert page.locator(".jwb-static").evaluate_all(
        "els => els.filter(e => e.parentElement.querySelector('script.jwb-data'))"
        ".every(e => e.style.display === 'none')"
    )
    # jaxpr search, HLO graph and search, benchmark sorting
    page.locator("input.jwb-jaxpr-search").first.fill("tanh")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jwb-sa-host')].some(h => "
        "/\\d/.test(h.shadowRoot.querySelector('.jwb-jaxpr-search-count')?.textContent || ''))",
        timeout=20_000,
    )
    assert page.evaluate(HLO_DRAWING_JS) is not None
    assert page.locator("canvas.jwb-hlo-canvas").count() >= 1
    page.locator("input.jwb-hlo-search").first.fill("fusion")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jwb-sa-host')].some(h => "
        "/\\d/.test(h.shadowRoot.querySelector('.jwb-hlo-search-count')?.textContent || ''))",
        timeout=20_000,
    )
    sort = page.locator('[data-jwb-control^="sort:"]').first
    sort.click()
    assert page.locator("th[aria-sort]").count() >= 1
    page.screenshot(path=str(artifacts_dir() / f"standalone-wb-{template}.png"), full_page=True)
    assert refused == [] and watch.external == [], (refused, watch.external)
    assert watch.errors == [], watch.errors
    page.context.close()


def test_exported_24_layer_hlo_and_12000_equation_jaxpr_offline(browser, exported):
    """The big outputs drawn from their embedded payloads; the time from page load until the
    24-block gradient's graph is on its canvas and its search answers is recorded."""
    page, watch, refused = _offline_page(browser)
    page.goto(exported[("hlo24.ipynb", "lab")].as_uri())
    drawn = None
    deadline = time.monotonic() + 120
    while drawn is None and time.monotonic() < deadline:
        page.wait_for_timeout(50)
        drawn = page.evaluate(HLO_DRAWING_JS)
    # the first %hlo output is the 24-block gradient (HLO24_CELLS): drawn folded, by blocks
    assert drawn is not None and drawn["boxes"] > 0, drawn
    searched_from = page.evaluate("() => performance.now()")
    page.locator("input.jwb-hlo-search").first.fill("dot")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jwb-sa-host')].some(h => "
        "/\\d/.test(h.shadowRoot.querySelector('.jwb-hlo-search-count')?.textContent || ''))",
        timeout=30_000,
    )
    answered = page.evaluate("() => performance.now()")
    timing = {
        "hlo24_drawn_ms": round(drawn["at"]),
        "hlo24_search_answered_ms": round(answered),
        "search_ms": round(answered - searched_from),
    }
    (artifacts_dir() / "standalone-timing.json").write_text(json.dumps(timing))
    print("standalone timing", timing)
    assert refused == [] and watch.errors == [], (refused, watch.errors)
    page.goto(exported[("jaxpr12k.ipynb", "lab")].as_uri())
    _wait_drawn(page, 1)
    page.locator("input.jwb-jaxpr-search").fill("sin")
    page.wait_for_function(
        "() => /6[,.\\u202f\\u00a0 ]?000/.test(document.querySelector('.jwb-sa-host')"
        ".shadowRoot.querySelector('.jwb-jaxpr-search-count')?.textContent || '')",
        timeout=30_000,
    )
    assert refused == [] and watch.errors == [], (refused, watch.errors)
    page.context.close()


def test_each_output_alone_in_a_sandboxed_iframe(browser, extension_notebooks):
    """Colab and VS Code modelled: no Jupyter, no extension, an opaque origin."""
    nb = extension_notebooks["nb"]["wb.ipynb"]
    parts = _interactive_parts(nb)
    frames = "".join(
        f'<iframe sandbox="allow-scripts" style="width:1200px;height:700px" '
        f'srcdoc="{html_lib.escape("<!doctype html><body>" + p, quote=True)}"></iframe>'
        for p in parts
    )
    page, watch, refused = _offline_page(browser)
    page.set_content(f"<!doctype html><body>{frames}</body>")
    for i in range(len(parts)):
        # Chromium does not paint a cross-origin iframe off screen: scrolled to, as a reader does
        page.locator("iframe").nth(i).scroll_into_view_if_needed()
        frame = page.frame_locator("iframe").nth(i)
        frame.locator(READY).wait_for(state="attached", timeout=60_000)
    assert refused == [] and watch.errors == [], (refused, watch.errors)
    page.context.close()


#: VS Code's built-in text/html renderer as its source has it (extensions/notebook-renderers,
#: renderHTML and domEval): every output of a notebook in one webview document, each output's
#: HTML set with innerHTML on a new div, then each of its scripts re-created (type, src, nonce,
#: noModule and async kept: not its class) as a child of that div, run there and removed
VSCODE_HTML_RENDERER = """
const keep = ['type', 'src', 'nonce', 'noModule', 'async'];
for (const html of JSON.parse(document.getElementById('outputs').textContent)) {
  const output = document.createElement('div');
  output.className = 'output';
  document.getElementById('container').appendChild(output);
  const element = document.createElement('div');
  element.innerHTML = html;
  output.appendChild(element);
  for (const node of Array.from(element.getElementsByTagName('script'))) {
    const tag = document.createElement('script');
    tag.text = node.innerText;
    for (const key of keep) {
      const val = node[key] || node.getAttribute(key);
      if (val) tag.setAttribute(key, val);
    }
    element.appendChild(tag).parentNode.removeChild(tag);
  }
}
"""


def _auto_parts_with_one_carrier() -> list[str]:
    """Three outputs made while the extension listened (``"auto"``): only the last carries
    the runtime, as in a notebook saved from JupyterLab whose carrier cell is below."""
    import jax.numpy as jnp

    import workbench
    from workbench.views import _standalone as sa

    def html(d) -> str:
        return d._repr_mimebundle_()["text/html"]

    sa.note_extension_listening(True)
    try:
        carrier = html(workbench.jaxpr(lambda v: jnp.sin(v) * 2, jnp.ones(3)))
        above = [
            html(workbench.jaxpr(lambda v: jnp.cos(v) + 1, jnp.ones(3))),
            html(workbench.hlo(lambda v: jnp.tanh(v).sum(), jnp.ones(4))),
        ]
    finally:
        sa.note_extension_listening(False)
    assert sa.runtime_base64() in carrier
    assert not any(sa.runtime_base64() in part for part in above)
    return [*above, carrier]


def test_vscode_renderer_model_draws_every_output(browser, extension_notebooks):
    """VS Code modelled as its renderer does it (:data:`VSCODE_HTML_RENDERER`), in a sandboxed
    iframe (its webview: another origin, no access to the page around it): every output
    mounted on its own ``.jwb-out``, the outputs of an ``"auto"`` notebook whose runtime is
    carried by one output below them too (VS Code draws all outputs in one document)."""
    nb = extension_notebooks["nb"]["wb.ipynb"]
    parts = _interactive_parts(nb)
    parts += _auto_parts_with_one_carrier()
    outputs = json.dumps(parts).replace("</", "<\\/")
    doc = (
        '<!doctype html><body><div id="container"></div>'
        f'<script type="application/json" id="outputs">{outputs}</script>'
        f"<script>{VSCODE_HTML_RENDERER}</script></body>"
    )
    page, watch, refused = _offline_page(browser)
    page.set_content(
        '<!doctype html><body><iframe sandbox="allow-scripts" style="width:1250px;height:950px"'
        f' srcdoc="{html_lib.escape(doc, quote=True)}"></iframe></body>'
    )
    frame = page.frame_locator("iframe")
    frame.locator(READY).nth(len(parts) - 1).wait_for(state="attached", timeout=90_000)
    assert frame.locator(READY).count() == len(parts)
    # each mounted on its output's box, not on the renderer's wrapper around it
    assert frame.locator(".jwb-out[data-jwb-mounted]").count() == len(parts)
    assert frame.locator(".output > div[data-jwb-mounted]").count() == 0
    assert page.evaluate("() => window.__jaxWorkbenchRuntime") is None  # not the parent's
    assert refused == [] and watch.errors == [], (refused, watch.errors)
    page.context.close()


def test_without_scripts_the_static_summary_shows(browser, exported):
    page, watch, refused = _offline_page(browser, java_script_enabled=False)
    page.goto(exported[("wb.ipynb", "lab")].as_uri())
    statics = page.locator(".jwb-static")
    assert statics.count() >= 5
    for i in range(statics.count()):
        assert statics.nth(i).is_visible()
        assert NEEDS_FRONT_END in statics.nth(i).inner_text()
    assert page.locator(".jwb-sa-host").count() == 0
    page.screenshot(path=str(artifacts_dir() / "standalone-noscript.png"), full_page=True)
    assert refused == [], refused
    page.context.close()


def test_outputs_above_the_one_carrying_the_runtime_are_drawn_too(browser):
    """``"auto"`` with the extension listening: only the first output since then carries the
    runtime, and in the saved notebook it need not be the first (a cell above it run later,
    a cell moved): the outputs above it on the exported page wait for it, then draw."""
    *above, carrier = _auto_parts_with_one_carrier()
    page, watch, refused = _offline_page(browser)
    page.set_content("<!doctype html><body>" + "".join(above) + carrier + "</body>")
    outputs = _wait_drawn(page, 3, timeout=30_000)
    assert [o["kind"] for o in outputs] == ["jaxpr", "hlo", "jaxpr"], outputs
    assert refused == [] and watch.errors == [], (refused, watch.errors)
    page.context.close()


# -- an XSS corpus in every user-controlled string ---------------------------------------------


def test_xss_corpus_in_every_payload_kind_stays_text(browser, shell):
    page, watch, refused = _offline_page(browser)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    parts = {kind: bundle["text/html"] for kind, bundle in xss_bundles(shell).items()}
    # a kind added later fails here until its user strings are in the corpus
    assert set(parts) == set(schemas.kinds()) - XSS_NOT_COVERED, sorted(parts)
    for kind, part in parts.items():
        assert "<script>window.__xss" not in part, kind  # escaped in the summary and the data
        page.set_content(f"<!doctype html><body>{part}</body>")
        _wait_drawn(page, 1, timeout=30_000)
        page.wait_for_timeout(200)
        executed = page.evaluate("() => window.__xss")
        assert executed is None, (kind, executed)
        found = page.evaluate(
            "() => { const r = document.querySelector('.jwb-sa-host').shadowRoot;"
            " return {text: r.textContent.includes('<img src=x onerror'),"
            " imgs: r.querySelectorAll('img').length, scripts: r.querySelectorAll('script').length,"
            " handlers: [...r.querySelectorAll('*')].filter(e => [...e.attributes].some("
            "a => a.name.startsWith('on'))).length,"
            " links: [...r.querySelectorAll('[href],[src]')].filter(e => /javascript:/i.test("
            "e.getAttribute('href') || e.getAttribute('src') || '')).length}; }"
        )
        assert found["imgs"] == found["scripts"] == found["handlers"] == found["links"] == 0, (
            kind,
            found,
        )
        assert found["text"], kind  # the corpus is drawn, as text
    assert dialogs == [] and refused == [] and watch.errors == [], (dialogs, refused, watch.errors)
    page.context.close()

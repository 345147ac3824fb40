"""The JupyterLab extension in a real JupyterLab 4 and Notebook 7, driven through Debian's chromium.

Notebooks are executed first by nbclient (a kernel with 8 fake CPU devices), saved, and then
opened in a real ``jupyter lab`` serving this checkout's build of the extension (see
``tests.browser.JupyterServer``).  nbclient does not sign what it executes, so a saved
notebook is *untrusted* when opened; ``jupyter trust`` (with the server's own notary secret)
makes the trusted copy.  Two servers (shared with the other browser test modules, see
``tests.browser_fixtures``): one with the extension, one with it disabled (the ``text/html``
fallback that nbconvert, VS Code and un-extended Jupyters show); each also serves Notebook 7
(``/notebooks/...``).

The DOM hooks and performance marks used here are the ones the renderers promise
(``.jwb-ext.jwb-ext-<kind>[data-jwb-ready="1"]``, ``jwb:<kind>:received`` /
``jwb:<kind>:interactive``, ...).  The speed targets (interactive within 1 s of receipt,
search within 200 ms, scrolling at 30 frames per second) are not asserted here (a busy machine is
slow, not wrong): ``benchmarks/bench_extension.py`` measures them against the text/html
fallback.  The largest outputs are still checked for being drawn, virtualised, scrolled and
searched.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil

import nbformat

# a hard import: a missing Playwright fails the run (it is a test dependency), never skips
import playwright.sync_api as playwright_api
import pytest

from tests.browser import (
    CONTRAST_JS,
    HLO24_CELLS,
    HLO24_EQX,
    HLO24_GRAD,
    HLO24_GRAD_ABS,
    HLO24_NNX,
    HLO24_SCAN,
    HLO24_SCOPE,
    HLO24_TEXT_FACTS_CELL,
    MARKS_JS,
    SCROLL_FPS_JS,
    TRANSFORMER_CELL,
    PageWatch,
    artifacts_dir,
    scroll_to_cell,
    wait_for_notebook,
    workbench_outputs,
)
from tests.browser_fixtures import BROWSER_GROUP_A
from workbench.views._bounds import TEXT_MAX_BYTES, TEXT_MAX_LINES
from workbench.views._standalone import STATIC_KINDS, static_part

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(BROWSER_GROUP_A)]

READY = '.jwb-ext[data-jwb-ready="1"]'
KINDS = (
    "jaxpr",
    "hlo",
    "bench",
    "sharding",
    "cache",
    "profile",
    "compile-time",
    "memory",
    "memory-program",
)

#: the transformer of tests/browser.py (its parameters from tests/real_models.py) at 4 blocks
TALL_JAXPR_SOURCE = (
    "%%jaxpr -t grad\n"
    + TRANSFORMER_CELL.replace("transformer_args()", "transformer_args(blocks=4)")
    + "def loss(params, x):\n    return jnp.mean(forward(params, x) ** 2)\nloss(params, x)"
)
assert "transformer_args(blocks=4)" in TALL_JAXPR_SOURCE
WB_CELLS = [
    "%load_ext workbench\nimport jax, jax.numpy as jnp\nfrom jax import lax",
    "def loss(w, x):\n    h = jnp.tanh(x @ w)\n    return jnp.sum(h ** 2)\n"
    "w, x = jnp.ones((4, 4)), jnp.ones((2, 4))",
    "%jaxpr -t grad loss(w, x)",
    "%hlo -t grad loss(w, x)",
    "f = jax.jit(lambda v: jnp.sin(v) * 2)\nv = jnp.ones(1000)\n%jaxbench -n 10 -r 5 f(v)",
    "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P\nimport numpy as np\n"
    "mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ('data', 'model'))\n"
    "y = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P('data', 'model')))\n%sharding y",
    # control flow: while + cond bodies are sub-computations (their SVG <a> links once crashed)
    "%%hlo\ndef newton(a):\n    def body(s):\n        x, i = s\n"
    "        x = lax.cond(x > a, lambda x: 0.5 * (x + a / x), lambda x: x + 1.0, x)\n"
    "        return x, i + 1\n"
    "    return lax.while_loop(lambda s: s[1] < 20, body, (a, 0))[0]\n"
    "newton(jnp.float32(2.0))",
    "%jaxcache",
    # measured: device time per instruction, line and fusion
    "%jaxprof -n 3 loss(w, x)",
    # who holds the device memory, and the gradient's peak from XLA's buffer assignment
    "%jaxmem",
    "%%jaxmem -t grad\nloss(w, x)",
    # where one real compile's time goes (before the tall cell below redefines loss, x)
    "%jaxprof --compile loss(w, x)",
    # a %%jaxpr cell as tall as a model: the 4-block transformer's gradient (hundreds of rows),
    # its list starting below the fold when the cell is scrolled to
    TALL_JAXPR_SOURCE,
    # a line whose equations are far down its jaxpr (40 lines of sin before it), and whose
    # output is far below it (the next cells in between)
    "def deep(x):\n    for _ in range(40):\n        x = jnp.sin(x) * 1.5\n"
    "    y = jnp.tanh(x)\n    return y.sum()",
    # a one-line function: every row is one source line, and one equation is very long
    "def soft(x): return jax.nn.softmax(jnp.concatenate([x] * 40) * 2.0)",
    "%jaxpr soft(jnp.ones((4, 8)))",
    # a Flax NNX model as an argument (tests/real_models.py nnx_mlp_setup's shape)
    "from flax import nnx\n"
    "class MLP(nnx.Module):\n    def __init__(self, rngs):\n"
    "        self.linear1 = nnx.Linear(16, 64, rngs=rngs)\n"
    "        self.dropout = nnx.Dropout(0.1, rngs=rngs)\n"
    "        self.linear2 = nnx.Linear(64, 4, rngs=rngs)\n"
    "    def __call__(self, x):\n"
    "        return self.linear2(self.dropout(nnx.relu(self.linear1(x))))\n"
    "model = MLP(nnx.Rngs(params=0, dropout=1))\nxb = jnp.ones((32, 16))\n"
    "def fwd(m, x):\n    return m(x)\n"
    "%jaxpr fwd(model, xb)",
    "%jaxpr deep(jnp.ones(3))",
]
DEF_CELL, JAXPR_CELL, HLO_CELL = 1, 2, 3
TALL_JAXPR = WB_CELLS.index(TALL_JAXPR_SOURCE)
DEEP_DEF, SOFT_DEF, SOFT_JAXPR, NNX_CELL, DEEP_JAXPR = range(len(WB_CELLS) - 5, len(WB_CELLS))


@pytest.fixture(scope="module")
def notebooks(extension_notebooks) -> dict:
    """The executed notebooks (tests.browser_fixtures: once per process, shared with the
    standalone runtime's nbconvert tests)."""
    return extension_notebooks


def _serve(server, notebooks: dict):
    for name in notebooks["nb"]:
        shutil.copy(notebooks["dir"] / name, server.root / name)
    # Trust is per content (the notary stores a digest of the whole notebook), so the trusted
    # copy must differ from wb.ipynb or signing it would make wb.ipynb trusted as well.
    trusted = nbformat.read(notebooks["dir"] / "wb.ipynb", as_version=4)
    trusted.metadata["title"] = "trusted copy"
    nbformat.write(trusted, server.root / "wb-trusted.ipynb")
    server.trust(server.root / "wb-trusted.ipynb")
    assert server.is_trusted(server.root / "wb-trusted.ipynb")
    assert not server.is_trusted(server.root / "wb.ipynb")  # nbclient output is unsigned
    return server


@pytest.fixture(scope="module")
def lab(lab, notebooks):
    return _serve(lab, notebooks)


@pytest.fixture(scope="module")
def lab_off(lab_off, notebooks):
    return _serve(lab_off, notebooks)


def _open(browser, url: str, base: str):
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    watch = PageWatch(page, base)
    page.goto(url)
    wait_for_notebook(page)
    return page, watch


@pytest.fixture(scope="module")
def pages(browser, lab, lab_off):  # closed before the servers are reset
    """The JupyterLab pages of this module's notebooks, each opened once and shared by the
    tests that look at it (loading JupyterLab costs seconds of CPU): ``pages(server, name)``
    gives the page and what it reports from that call on."""
    opened: dict = {}

    def get(server, name: str):
        key = (server.base, name)
        if key not in opened:
            opened[key] = _open(browser, server.lab_url(name), server.base)
        page, watch = opened[key]
        return page, watch.since_now()

    yield get
    for page, _ in opened.values():
        page.close()


def _wait_ready(page, count: int, timeout: float = 60_000) -> None:
    try:
        page.wait_for_function(
            f"(n) => document.querySelectorAll('{READY}').length >= n", arg=count, timeout=timeout
        )
    except playwright_api.TimeoutError:
        got = page.evaluate(
            "() => [...document.querySelectorAll('.jwb-ext')].map(e => "
            "e.className + ' ready=' + e.getAttribute('data-jwb-ready'))"
        )
        raise AssertionError(f"expected {count} ready workbench outputs, got {got}") from None


def _rendered(page) -> list[tuple[str, str]]:
    """(kind, text) of every workbench output root, in page order."""
    return page.evaluate(
        "() => [...document.querySelectorAll('.jwb-ext')].map(e => "
        "[[...e.classList].find(c => c.startsWith('jwb-ext-')).slice(8), e.textContent])"
    )


def _untimed(rendered: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The HLO status line reports the browser's own layout time (differs per page load)."""
    return [(kind, re.sub(r"layout \d+ ms", "layout # ms", text)) for kind, text in rendered]


def _wait_fallback(page, count: int, timeout: float = 45_000) -> None:
    """Wait until `count` outputs are drawn by JupyterLab's text/html renderer (extension off)."""
    try:
        page.wait_for_function(
            "(n) => document.querySelectorAll('.jp-OutputArea-output.jp-RenderedHTMLCommon')"
            ".length >= n",
            arg=count,
            timeout=timeout,
        )
    except playwright_api.TimeoutError:
        cells = page.evaluate(
            "() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map((c, i) => [i,"
            " [...c.querySelectorAll('.jp-OutputArea-child')].map(o => "
            "(o.querySelector('.jp-RenderedHTMLCommon') ? 'html' : 'NOT HTML: ' + "
            "(o.querySelector('.jp-OutputArea-output') || o).className + ' ' + "
            "(() => { const t = o.innerText || o.textContent; const i = t.indexOf('Javascript Error');"
            " return i >= 0 ? t.slice(i, i + 300) : t.slice(0, 300); })()))])"
        )
        raise AssertionError(f"expected {count} text/html outputs; per cell: {cells}") from None


def _shot(page, name: str) -> None:
    page.screenshot(path=str(artifacts_dir() / f"ext-{name}.png"))


def _assert_renderer_drew_everything(page, nb) -> list[tuple[str, str]]:
    expected = workbench_outputs(nb)
    _wait_ready(page, len(expected))
    rendered = _rendered(page)
    assert [k for k, _ in rendered] == [k for _, k in expected]
    # our renderer, not the text/html fallback, drew each of them
    fallback = page.evaluate(
        "() => [...document.querySelectorAll('.jwb-ext')].filter(e => "
        "e.closest('.jp-RenderedHTMLCommon') || e.querySelector('.jp-RenderedHTMLCommon')).length"
    )
    assert fallback == 0
    assert page.locator(".jwb-ext-error").count() == 0
    return rendered


# -- our renderer, trusted and untrusted, no errors ---------------------------------------------


def test_renderer_draws_every_kind_in_trusted_and_untrusted_notebooks(pages, lab, notebooks):
    nb = notebooks["nb"]["wb.ipynb"]
    texts = {}
    for name in ("wb-trusted.ipynb", "wb.ipynb"):
        page, watch = pages(lab, name)
        texts[name] = _assert_renderer_drew_everything(page, nb)
        page.wait_for_timeout(1000)  # late errors (workers, observers)
        _shot(page, name.replace(".ipynb", ""))
        assert watch.errors == [], watch.errors
        assert watch.external == [], watch.external
    # data, never kernel HTML: the same text but for what the browser itself timed
    assert _untimed(texts["wb.ipynb"]) == _untimed(texts["wb-trusted.ipynb"])


def test_fallback_with_extension_disabled_has_no_errors(pages, lab_off, notebooks):
    nb = notebooks["nb"]["wb.ipynb"]
    n_outputs = len(workbench_outputs(nb))
    styles = {}
    for name in ("wb-trusted.ipynb", "wb.ipynb"):
        page, watch = pages(lab_off, name)
        _wait_fallback(page, n_outputs)
        page.wait_for_timeout(1500)
        # the extension really is off (the runtime in text/html draws in shadow roots)
        assert page.evaluate("() => document.querySelectorAll('.jwb-ext').length") == 0
        styles[name] = page.locator(".jp-OutputArea-output style").count()
        _shot(page, "fallback-" + name.replace(".ipynb", ""))
        assert watch.errors == [], watch.errors
        assert watch.external == [], watch.external
    html = "".join(
        o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", [])
    )
    if "<style" in html:  # the sanitizer strips <style> from untrusted outputs only
        assert styles["wb-trusted.ipynb"] > 0 and styles["wb.ipynb"] == 0, styles


def test_notebook7_renders_with_the_extension(browser, lab, notebooks):
    baseline = lab.notebook7_own_errors(browser)
    page, watch = _open(browser, lab.notebook7_url("wb.ipynb"), lab.base)
    _assert_renderer_drew_everything(page, notebooks["nb"]["wb.ipynb"])
    page.wait_for_timeout(1000)
    _shot(page, "notebook7")
    # Notebook 7's own page errors (seen on an empty notebook too) are not the outputs' doing
    assert [e for e in watch.errors if e not in baseline] == [], (watch.errors, baseline)
    assert watch.external == [], watch.external
    page.close()


def test_notebook7_fallback_has_no_errors(browser, lab_off, notebooks):
    n_outputs = len(workbench_outputs(notebooks["nb"]["wb.ipynb"]))
    baseline = lab_off.notebook7_own_errors(browser)
    page, watch = _open(browser, lab_off.notebook7_url("wb-trusted.ipynb"), lab_off.base)
    _wait_fallback(page, n_outputs)
    # trusted: each output's text/html runs its standalone runtime (in shadow roots, which
    # Playwright's locators pierce), so every output but the static compile line is interactive
    interactive = [
        k for _, k in workbench_outputs(notebooks["nb"]["wb.ipynb"]) if k not in STATIC_KINDS
    ]
    page.locator(READY).nth(len(interactive) - 1).wait_for(state="attached", timeout=60_000)
    assert page.locator(READY).count() == len(interactive)
    page.wait_for_timeout(1500)
    assert page.evaluate("() => document.querySelectorAll('.jwb-ext').length") == 0
    _shot(page, "notebook7-fallback")
    assert [e for e in watch.errors if e not in baseline] == [], (watch.errors, baseline)
    assert watch.external == [], watch.external
    page.close()


# -- linking: line <-> equation <-> node -------------------------------------------------------


def _attr_int(page, cell: int, selector: str, attr: str) -> int:
    return page.evaluate(
        "([cell, sel, attr]) => { const e = document.querySelectorAll('.jp-Notebook .jp-Cell')[cell]"
        "?.querySelector(sel); const v = e && e.getAttribute(attr); return v ? Number(v) : 0; }",
        [cell, selector, attr],
    )


def test_line_equation_node_linking_both_ways(pages, lab, notebooks):
    page, watch = pages(lab, "wb-trusted.ipynb")
    _wait_ready(page, len(workbench_outputs(notebooks["nb"]["wb.ipynb"])))
    cells = page.locator(".jp-Notebook .jp-Cell")
    src = cells.nth(DEF_CELL)
    # the source lines that produced equations are coloured in the editor
    page.wait_for_function(
        "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".querySelectorAll('.cm-line.jwb-line').length >= 2",
        arg=DEF_CELL,
        timeout=30_000,
    )
    # line -> equations and nodes
    src.locator(".cm-line").nth(1).click()  # `h = jnp.tanh(x @ w)`
    page.wait_for_function(
        "([j, h]) => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell');"
        " const a = c[j].querySelector('.jwb-jaxpr'), b = c[h].querySelector('.jwb-hlo');"
        " return a && b && Number(a.getAttribute('data-highlighted')) > 0"
        " && Number(b.getAttribute('data-highlighted')) > 0; }",
        arg=[JAXPR_CELL, HLO_CELL],
        timeout=30_000,
    )
    assert cells.nth(JAXPR_CELL).locator(".jwb-jaxpr-row.jwb-linked").count() >= 1
    _shot(page, "linking-line")
    # equation -> line
    src.locator(".cm-line").nth(3).click()  # a line with no equations: nothing selected
    cells.nth(JAXPR_CELL).locator(".jwb-jaxpr-src").first.click()
    page.wait_for_function(
        "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".querySelectorAll('.cm-line.jwb-line-selected').length === 1",
        arg=DEF_CELL,
        timeout=30_000,
    )
    # node -> line: a top-N row focuses and selects its node, whose source line lights up
    row = cells.nth(HLO_CELL).locator("table.jwb-hlo-top tr[data-node-id]").first
    node = row.get_attribute("data-node-id")
    row.click()
    hlo = cells.nth(HLO_CELL).locator(".jwb-hlo")
    page.wait_for_function(
        "([i, n]) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".querySelector('.jwb-hlo')?.getAttribute('data-selected') === n",
        arg=[HLO_CELL, node],
        timeout=30_000,
    )
    assert hlo.locator(".jwb-hlo-details").inner_text().strip()
    page.wait_for_function(
        "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".querySelectorAll('.cm-line.jwb-line-selected').length >= 1",
        arg=DEF_CELL,
        timeout=30_000,
    )
    _shot(page, "linking-node")
    assert watch.errors == [], watch.errors


# -- the jaxpr view as a user reads it -------------------------------------------------------


def _payload(nb, cell: int) -> dict:
    """The jaxpr payload (unpacked) of notebook cell ``cell``'s output, as the kernel sent it."""
    from workbench.schemas import unpack

    for out in nb.cells[cell].outputs:
        data = out.get("data", {})
        if "application/vnd.jax-workbench.jaxpr+json" in data:
            return unpack(data["application/vnd.jax-workbench.jaxpr+json"])
    raise AssertionError(f"cell {cell} has no jaxpr output")


def _show_cell(page, i: int) -> None:
    page.evaluate(
        "async (i) => { const nb = window.jupyterapp.shell.currentWidget.content;"
        " await nb.scrollToItem(i, 'start');"
        " await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); }",
        i,
    )


ROWS_JS = """(cell) => {
  const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[cell];
  const list = c.querySelector('.jwb-jaxpr-list');
  const lb = list.getBoundingClientRect();
  const bg = getComputedStyle(list).backgroundColor;
  // rgb(r, g, b) or, for a color-mix(), color(srgb r g b) with channels in [0, 1]
  const rgb = s => {
    const v = (s.match(/[\\d.]+/g) || []).map(Number);
    return s.startsWith('color(') ? v.slice(0, 3).map(x => x * 255) : v.slice(0, 3);
  };
  const base = rgb(getComputedStyle(c.querySelector('.jwb-jaxpr')).backgroundColor);
  return [...c.querySelectorAll('.jwb-jaxpr-row.jwb-jaxpr-eqn')].map(r => {
    const code = r.querySelector('.jwb-jaxpr-code'), src = r.querySelector('.jwb-jaxpr-src');
    const a = code.getBoundingClientRect(), b = src ? src.getBoundingClientRect() : null;
    const row = rgb(getComputedStyle(r).backgroundColor);
    return {
      eqn: Number(r.dataset.eqn), linked: r.classList.contains('jwb-linked'),
      tinted: r.classList.contains('jwb-jaxpr-tinted'),
      shift: Math.max(...row.map((v, k) => Math.abs(v - base[k]))),
      code: [a.left, a.right, a.top, a.bottom], src: b && [b.left, b.right, b.top, b.bottom],
      list: [lb.left, lb.right, lb.top, lb.bottom],
      codeText: code.textContent, codeTitle: code.title || r.title || '',
      clipped: code.scrollWidth > code.clientWidth + 1,
      label: src ? src.textContent : null,
    };
  });
}"""


def test_one_line_function_rows_are_lightly_tinted_and_labels_never_overlap(pages, lab, notebooks):
    """A one-line function's rows all share one line colour: a light tint (not a block that
    reads as an error); its longest equation never runs under its ``cell [N] line L`` label,
    which stays in view, and the cut equation's whole text is its title."""
    nb = notebooks["nb"]["wb.ipynb"]
    page, watch = pages(lab, "wb.ipynb")
    _wait_ready(page, len(workbench_outputs(nb)))
    _set_theme(page, "JupyterLab Light")
    _show_cell(page, SOFT_JAXPR)
    page.wait_for_timeout(300)
    rows = page.evaluate(ROWS_JS, SOFT_JAXPR)
    assert rows and all(r["tinted"] for r in rows), rows[:3]
    # a tint: no channel of a (not linked) row moves more than 8% from the background
    shifts = [r["shift"] for r in rows if not r["linked"]]
    assert max(shifts) <= 20, shifts
    longest = max(rows, key=lambda r: len(r["codeText"]))
    assert longest["codeText"].count(" a") >= 40 or len(longest["codeText"]) > 200, longest
    for r in rows:
        code, src, lst = r["code"], r["src"], r["list"]
        assert src is not None and r["label"].startswith(
            f"cell [{nb.cells[SOFT_DEF].execution_count}] line 1"
        )
        # the code ends before its label starts, and the label is inside the list's box
        assert code[1] <= src[0] + 0.5, (r["codeText"][:80], code, src)
        assert lst[0] <= src[0] and src[1] <= lst[1] + 0.5, (src, lst)
    # the cut equation says its whole text on hover
    assert longest["clipped"] and longest["codeTitle"] == longest["codeText"], longest
    _shot(page, "jaxpr-one-line")
    assert watch.errors == [], watch.errors


def test_search_matches_source_text_and_function_names_and_keeps_focus(pages, lab, notebooks):
    """`softmax` (only in the user's line, never in an equation) finds every equation of that
    line; the function's name finds them too; typing and Enter keep the focus in the box."""
    nb = notebooks["nb"]["wb.ipynb"]
    page, watch = pages(lab, "wb.ipynb")
    _wait_ready(page, len(workbench_outputs(nb)))
    total = _payload(nb, SOFT_JAXPR)["stats"]["equations"]
    cell = page.locator(".jp-Notebook .jp-Cell").nth(SOFT_JAXPR)
    _show_cell(page, SOFT_JAXPR)
    box = cell.locator("input.jwb-jaxpr-search")
    count = cell.locator(".jwb-jaxpr-search-count")
    for query in ("softmax", "concatenate([x] * 40)", "soft"):
        box.fill(query)
        page.wait_for_function(
            "(el) => el.textContent !== ''", arg=count.element_handle(), timeout=10_000
        )
        assert count.inner_text() == f"1 of {total}", (query, count.inner_text(), total)
    box.press("Enter")
    box.press("Shift+Enter")
    in_box = page.evaluate("(el) => document.activeElement === el", box.element_handle())
    assert in_box, page.evaluate("() => document.activeElement?.className")
    assert page.evaluate("() => !document.activeElement.closest('.jp-Editor')")
    _shot(page, "jaxpr-search-source")
    box.fill("")
    assert watch.errors == [], watch.errors


SHOWN_JS = """([i, line]) => {
  const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  const list = c.querySelector('.jwb-jaxpr-list'), nb = c.closest('.jp-WindowedPanel-outer');
  // client boxes: the list's, and what the notebook shows of its scroller inside the window
  const box = e => { const r = e.getBoundingClientRect();
    return { top: r.top + e.clientTop, bottom: r.top + e.clientTop + e.clientHeight }; };
  const view = box(nb);
  view.top = Math.max(view.top, 0);
  view.bottom = Math.min(view.bottom, innerHeight);
  const lb = box(list);
  const inside = (r, b) => r.top >= b.top - 0.5 && r.bottom <= b.bottom + 0.5;
  const lit = [...list.querySelectorAll('.jwb-jaxpr-row.jwb-linked')]
    .sort((a, b) => a.dataset.row - b.dataset.row);
  const first = lit.length ? lit[0].getBoundingClientRect() : null;
  const cur = c.querySelectorAll('.cm-line')[line].getBoundingClientRect();
  return {
    highlighted: Number(c.querySelector('.jwb-jaxpr').getAttribute('data-highlighted')),
    firstEqn: lit.length ? Number(lit[0].dataset.eqn) : null,
    firstInList: !!first && inside(first, lb), firstOnScreen: !!first && inside(first, view),
    listTop: lb.top, viewBottom: view.bottom, lineOnScreen: inside(cur, view),
    notebookScroll: nb.scrollTop, listScroll: list.scrollTop,
    focused: c.contains(document.activeElement) && !!document.activeElement.closest('.cm-editor'),
  };
}"""


def _cell_at_top(page, i: int) -> None:
    """Cell ``i``'s top at the top of the notebook's view, exactly (scrollToItem lands where
    the windowing's estimated heights say; the cells above are measured once drawn)."""
    scroll_to_cell(page, i)
    page.evaluate(
        """async (i) => {
          const frame = () => new Promise(r => requestAnimationFrame(r));
          const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
          const nb = cell.closest('.jp-WindowedPanel-outer');
          for (let k = 0; k < 20; k++) {
            const dy = cell.getBoundingClientRect().top - nb.getBoundingClientRect().top;
            if (Math.abs(dy) < 1) break;
            nb.scrollTop += dy;
            await frame(); await frame();
          }
        }""",
        i,
    )


def _list_top_at(page, i: int, below_fold: float) -> None:
    """Scroll the notebook so cell ``i``'s jaxpr list starts ``below_fold`` pixels below the
    bottom of the notebook's view (negative: that much of it is on screen)."""
    page.evaluate(
        """async ([i, dy]) => {
          const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
          const nb = cell.closest('.jp-WindowedPanel-outer');
          const list = cell.querySelector('.jwb-jaxpr-list');
          const bottom = Math.min(nb.getBoundingClientRect().bottom, innerHeight);
          nb.scrollTop += list.getBoundingClientRect().top - (bottom + dy);
          await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
        }""",
        [i, below_fold],
    )


def _line_equations(payload: dict, line: int) -> tuple[int, int]:
    """(index of the first equation of source ``line``, how many there are): equations
    numbered as the view numbers them, depth first, an equation before its sub-jaxprs."""
    numbered: list[dict] = []

    def walk(jaxpr: dict) -> None:
        for eqn in jaxpr["eqns"]:
            numbered.append(eqn)
            for sub in eqn.get("subjaxprs") or []:
                walk(sub["jaxpr"])

    walk(payload["jaxpr"])
    hits = [k for k, e in enumerate(numbered) if (e.get("source") or {}).get("line") == line]
    return hits[0], len(hits)


def _select_line(page, cell: int, line: int, expected: int) -> dict:
    """Click editor line ``line`` (0-based) of cell ``cell``; what is shown once ``expected``
    rows are lit (the pointer stays on the line, as a user's does)."""
    page.locator(".jp-Notebook .jp-Cell").nth(cell).locator(".cm-line").nth(line).click()
    page.wait_for_function(
        "([i, n]) => Number(document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".querySelector('.jwb-jaxpr').getAttribute('data-highlighted')) === n",
        arg=[cell, expected],
        timeout=30_000,
    )
    page.wait_for_timeout(300)  # anything that would still move (a frame, a late scroll)
    return page.evaluate(SHOWN_JS, [cell, line])


def test_selecting_an_editor_line_scrolls_its_rows_into_view(pages, lab, notebooks):
    """In a `%%jaxpr` cell as tall as a model, its list starts below the fold: a click on a
    line lights its equations and shows the first lit row ON SCREEN, not only inside the
    list (a row centred in a list nobody sees was the bug): the notebook scrolls the least
    that shows it and the clicked line stays on screen; the editor keeps the focus and takes
    the next keystrokes (which move nothing more).  With part of the list on screen, only
    the list scrolls, the row into that part."""
    nb = notebooks["nb"]["wb.ipynb"]
    payload = _payload(nb, TALL_JAXPR)
    src = TALL_JAXPR_SOURCE.splitlines()
    page, watch = pages(lab, "wb.ipynb")
    _wait_ready(page, len(workbench_outputs(nb)))
    _cell_at_top(page, TALL_JAXPR)
    _list_top_at(page, TALL_JAXPR, 60)  # the list just below the fold, the editor above
    mlp = src.index('    return jax.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]')
    first, count = _line_equations(payload, mlp + 1)  # a magic cell's line 1 is `%%jaxpr`
    before = page.evaluate(SHOWN_JS, [TALL_JAXPR, mlp])
    assert before["listTop"] > before["viewBottom"] and before["lineOnScreen"], before
    shown = _select_line(page, TALL_JAXPR, mlp, count)
    _shot(page, "jaxpr-editor-line-tall-cell")
    assert shown["firstEqn"] == first, (shown, first)
    assert shown["firstInList"] and shown["firstOnScreen"], shown
    assert shown["lineOnScreen"] and shown["focused"], shown
    assert shown["notebookScroll"] > before["notebookScroll"], (before, shown)
    # the least scroll: the row near the list's top, the list's top still on screen
    assert shown["listTop"] < shown["viewBottom"], shown
    # keystrokes go to the editor: down to `def block(p, x):` (no equations), back up
    page.keyboard.press("ArrowDown")
    page.wait_for_function(
        "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".querySelector('.jwb-jaxpr').getAttribute('data-highlighted') === '0'",
        arg=TALL_JAXPR,
        timeout=30_000,
    )
    page.keyboard.press("ArrowUp")
    page.wait_for_function(
        "([i, n]) => Number(document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".querySelector('.jwb-jaxpr').getAttribute('data-highlighted')) === n",
        arg=[TALL_JAXPR, count],
        timeout=30_000,
    )
    page.wait_for_timeout(300)
    again = page.evaluate(SHOWN_JS, [TALL_JAXPR, mlp])
    assert again["focused"] and again["firstOnScreen"] and again["lineOnScreen"], again
    assert again["notebookScroll"] == shown["notebookScroll"], (shown, again)  # no jump
    # part of the list on screen (its top 120 pixels): the list alone scrolls
    _list_top_at(page, TALL_JAXPR, -120)
    page.wait_for_timeout(300)
    q = src.index('    q = (x @ p["wq"]).reshape(b, t, HEADS, dh)')
    first_q, count_q = _line_equations(payload, q + 1)
    parted = page.evaluate(SHOWN_JS, [TALL_JAXPR, q])
    assert parted["listTop"] < parted["viewBottom"] - 100, parted
    shown_q = _select_line(page, TALL_JAXPR, q, count_q)
    assert shown_q["firstEqn"] == first_q, (shown_q, first_q)
    assert shown_q["firstInList"] and shown_q["firstOnScreen"], shown_q
    assert shown_q["notebookScroll"] == parted["notebookScroll"], (parted, shown_q)
    assert shown_q["lineOnScreen"] and shown_q["focused"], shown_q
    assert watch.errors == [], watch.errors


def test_a_line_selected_while_its_jaxpr_is_far_below_is_shown_once_scrolled_to(
    pages, lab, notebooks
):
    """A click on a line whose equations are far down a jaxpr shown well below the editor
    (out of the window: JupyterLab skips laying it out) lights them, and once the user
    scrolls to the output the first lit row is in the list's view; the editor keeps the
    focus the whole time, and the notebook does not move on the click (the output is too
    far for the clicked line and the rows to share the screen)."""
    nb = notebooks["nb"]["wb.ipynb"]
    page, watch = pages(lab, "wb.ipynb")
    _wait_ready(page, len(workbench_outputs(nb)))
    _show_cell(page, DEEP_DEF)
    cells = page.locator(".jp-Notebook .jp-Cell")
    out = cells.nth(DEEP_JAXPR).locator(".jwb-jaxpr-list")
    assert out.evaluate("(l) => l.scrollTop") == 0
    notebook_scroll = "() => document.querySelector('.jp-WindowedPanel-outer').scrollTop"
    scrolled = page.evaluate(notebook_scroll)
    cells.nth(DEEP_DEF).locator(".cm-line").nth(3).click()  # `y = jnp.tanh(x)`
    page.wait_for_function(
        "(i) => Number(document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".querySelector('.jwb-jaxpr').getAttribute('data-highlighted')) > 0",
        arg=DEEP_JAXPR,
        timeout=30_000,
    )
    page.wait_for_timeout(300)
    assert page.evaluate(notebook_scroll) == scrolled
    focused = page.evaluate(
        "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".contains(document.activeElement) && !!document.activeElement.closest('.cm-editor')",
        DEEP_DEF,
    )
    assert focused, page.evaluate("() => document.activeElement?.className")
    page.wait_for_timeout(300)
    # the pointer leaves the notebook (a row scrolled under it would publish its own line),
    # and the notebook scrolls down to the output (the page, not the editor's focus)
    page.mouse.move(2, 2)
    page.evaluate(
        "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i].scrollIntoView()",
        DEEP_JAXPR,
    )
    page.wait_for_timeout(500)
    # the clicked line's rows (line 4: `y = jnp.tanh(x)`) are lit, and the first is in view
    seen = out.evaluate(
        """(l) => { const b = l.getBoundingClientRect();
          const lit = [...l.querySelectorAll('.jwb-jaxpr-row.jwb-linked')];
          return { lines: [...new Set(lit.map(r => r.querySelector('.jwb-jaxpr-src')
                     ?.textContent.replace(/^.* line /, '')))],
                   inView: lit.some(r => { const a = r.getBoundingClientRect();
                     return a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5; }),
                   scrollTop: l.scrollTop }; }"""
    )
    assert seen["lines"] == ["4"] and seen["inView"], seen
    focused = page.evaluate(
        "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".contains(document.activeElement) && !!document.activeElement.closest('.cm-editor')",
        DEEP_DEF,
    )
    assert focused, page.evaluate("() => document.activeElement?.className")
    _shot(page, "jaxpr-editor-scroll")
    assert watch.errors == [], watch.errors


def test_nnx_module_argument_is_summarised_in_one_short_line(pages, lab, notebooks):
    """A Flax NNX model's header names its layers and their arrays, without the module's own
    bookkeeping, in a few lines (the bookkeeping made it a wall of five)."""
    nb = notebooks["nb"]["wb.ipynb"]
    page, watch = pages(lab, "wb.ipynb")
    _wait_ready(page, len(workbench_outputs(nb)))
    _show_cell(page, NNX_CELL)
    sig = page.locator(".jp-Notebook .jp-Cell").nth(NNX_CELL).locator(".jwb-jaxpr-sig")
    text = sig.inner_text()
    assert "_pytree__" not in text and "PytreeState" not in text, text
    for part in ("MLP(", "linear1: Linear(", "kernel: f32[16,64]", "bias: f32[64]"):
        assert part in text, (part, text)
    lines = sig.evaluate(
        """(s) => { const cs = getComputedStyle(s);
          const lh = parseFloat(cs.lineHeight) || 1.3 * parseFloat(cs.fontSize);
          return Math.round(s.getBoundingClientRect().height / lh); }"""
    )
    assert 1 <= lines <= 3, (lines, text)
    _shot(page, "jaxpr-nnx")
    assert watch.errors == [], watch.errors


# -- themes: text contrast >= 4.5:1 ------------------------------------------------------------


def _set_theme(page, theme: str) -> None:
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('apputils:change-theme')",
        timeout=30_000,
    )
    page.evaluate(
        "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme
    )
    light = "true" if "Light" in theme else "false"
    page.wait_for_selector(f'body[data-jp-theme-light="{light}"]', state="attached", timeout=30_000)
    page.wait_for_timeout(1000)  # views re-read the CSS variables on the theme change


def _assert_contrast(page, selector: str, label: str) -> dict:
    res = page.evaluate(CONTRAST_JS, selector)
    assert res["n"] > 0, f"{label}: no text found under {selector}"
    assert not res["unparsed"], f"{label}: colours the test cannot read: {res['unparsed']}"
    assert res["min"] >= 4.5, f"{label}: contrast below 4.5:1: {res['worst']}"
    return res


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_text_contrast_in_light_and_dark(pages, lab, lab_off, notebooks, theme):
    nb = notebooks["nb"]["wb.ipynb"]
    page, watch = pages(lab, "wb.ipynb")
    _wait_ready(page, len(workbench_outputs(nb)))
    _set_theme(page, theme)
    _shot(page, f"theme-{theme.split()[-1].lower()}")
    for kind in KINDS:
        _assert_contrast(page, f".jwb-ext-{kind}", f"extension {kind}, {theme}")
    assert watch.errors == [], watch.errors
    # the text/html fallback (extension disabled), trusted: its own <style> and colours apply
    page, watch = pages(lab_off, "wb-trusted.ipynb")
    # (whether every output renders is test_fallback_with_extension_disabled_has_no_errors's
    # question; here: the colours of those that do)
    page.wait_for_function(
        "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        "?.querySelector('.jp-RenderedHTMLCommon')",
        arg=HLO_CELL,
        timeout=45_000,
    )
    page.wait_for_timeout(1500)
    _set_theme(page, theme)
    _shot(page, f"fallback-theme-{theme.split()[-1].lower()}")
    _assert_contrast(
        page, ".jp-OutputArea-output.jp-RenderedHTMLCommon", f"text/html fallback, {theme}"
    )


# -- the largest outputs: drawn, scrolled and searched ---------------------------------------------
# their speed (received -> interactive, frames per second, search) is measured, not asserted, by
# benchmarks/bench_extension.py against the text/html fallback; the view models' by
# extension/bench/algorithms.bench.ts


def test_24_layer_hlo_interactive_and_scrolling(browser, lab):
    page, watch = _open(browser, lab.lab_url("hlo24.ipynb"), lab.base)
    page.wait_for_selector(f".jwb-ext-hlo{READY[8:]}", state="attached", timeout=60_000)
    # every %hlo output of the notebook (the two gradients and the small models) interactive
    hlo_cells = [c for c in HLO24_CELLS if "%hlo" in c]
    page.wait_for_function(
        f"() => performance.getEntriesByName('jwb:hlo:interactive').length >= {len(hlo_cells)}",
        timeout=60_000,
    )
    marks = page.evaluate(MARKS_JS, "hlo")
    assert len(marks) == len(hlo_cells), marks
    assert all(m["ms"] is not None for m in marks), marks
    fps = page.evaluate(SCROLL_FPS_JS, [".jwb-ext-hlo", 2000, 40])
    _shot(page, "hlo24")
    assert "error" not in fps, fps
    assert fps["moved"] > 0 and fps["onscreen"], fps
    assert watch.errors == [], watch.errors
    page.close()


def test_24_block_hlo_cell_saves_bounded_text_and_keeps_all_of_xlas(notebooks):
    """The saved notebook, not the page: the first gradient's %hlo keeps the first lines of
    XLA's text (about 110,000 lines) in text/plain with one line on the rest, `.text` in the
    kernel is all of it (the notebook's last cell reports on it: HLO24_TEXT_FACTS), and the
    cell adds at most 1.2 MB to the saved notebook, every output included."""
    nb = notebooks["nb"]["hlo24.ipynb"]
    saved = nb.cells[HLO24_GRAD]
    (shown,) = [o for o in saved.outputs if o.output_type == "execute_result"]
    plain = shown["data"]["text/plain"]
    (facts_out,) = [o for o in nb.cells[HLO24_TEXT_FACTS_CELL].outputs if o.output_type == "stream"]
    facts = json.loads(facts_out["text"])
    assert facts["plain_sha256"] == hashlib.sha256(plain.encode()).hexdigest()
    assert facts["head"].startswith("HloModule ") and facts["kept_is_its_start"]
    lines = facts["newlines"] + (0 if facts["ends_with_newline"] else 1)
    *kept, last = plain.split("\n")
    assert lines > TEXT_MAX_LINES
    assert len(kept) <= TEXT_MAX_LINES and len("\n".join(kept).encode()) <= TEXT_MAX_BYTES
    assert last.startswith(f"[… {lines - len(kept):,} more lines")
    assert f"of {lines:,} lines" in last and ".text" in last
    html = shown["data"]["text/html"]
    # the summary, then the data (payload and text/plain, gzipped) and the runtime
    assert len(static_part(html).encode()) < 20_000 and len(html.encode()) <= 480_000
    without_outputs = nbformat.v4.new_code_cell(saved.source)
    empty = len(nbformat.writes(nbformat.v4.new_notebook(cells=[without_outputs])).encode())
    saved_bytes = len(nbformat.writes(nbformat.v4.new_notebook(cells=[saved])).encode()) - empty
    assert saved_bytes <= 1_200_000  # the standalone runtime's budget (README)


def test_12000_equation_jaxpr_first_paint_and_search(browser, lab):
    page, watch = _open(browser, lab.lab_url("jaxpr12k.ipynb"), lab.base)
    page.wait_for_selector(f".jwb-ext-jaxpr{READY[8:]}", state="attached", timeout=60_000)
    marks = page.evaluate(MARKS_JS, "jaxpr")
    assert len(marks) == 1 and marks[0]["ms"] is not None, marks
    # virtualised: far fewer rows in the DOM than equations
    assert 0 < page.locator(".jwb-jaxpr-row").count() < 1000
    page.evaluate("() => performance.clearMeasures('jwb:jaxpr:search')")
    page.locator("input.jwb-jaxpr-search").fill("sin")
    page.wait_for_function(
        "() => performance.getEntriesByName('jwb:jaxpr:search').length > 0", timeout=30_000
    )
    page.wait_for_timeout(300)
    search = page.evaluate(
        "() => performance.getEntriesByName('jwb:jaxpr:search').map(m => m.duration)"
    )
    assert search, "the search recorded no jwb:jaxpr:search measure"
    count = page.locator(".jwb-jaxpr-search-count").inner_text()
    assert re.search(r"6[,.\u202f\u00a0 ]?000", count), count  # every sin equation is found
    _shot(page, "jaxpr12k-search")
    assert watch.errors == [], watch.errors
    page.close()


# -- the fusion graph of a real model reads as its code ---------------------------------------

#: what an %hlo output draws (HloView's jwbHloDrawing): boxes, frames, edges, titles, fitted
DRAWING_JS = """
(i) => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
  if (cell) cell.node.setAttribute('data-test-cell', String(i));
  const root = cell && cell.node.querySelector('.jwb-hlo');
  return root && root.jwbHloDrawing ? root.jwbHloDrawing() : null;
}
"""


def _drawing(page, cell: int) -> dict:
    """The drawing of cell ``cell``'s %hlo output once it is laid out and drawn."""
    page.wait_for_function(
        "i => window.jupyterapp.shell.currentWidget?.content?.widgets?.length > i",
        arg=cell,
        timeout=60_000,
    )
    scroll_to_cell(page, cell)
    page.wait_for_function(f"i => ({DRAWING_JS})(i) !== null", arg=cell, timeout=60_000)
    page.wait_for_timeout(300)  # the fit is applied on the frame after the layout
    return page.evaluate(DRAWING_JS, cell)


def _groups(d: dict) -> list[dict]:
    return [b for b in d["boxes"] if b["kind"] != "node"]


def _labels(d: dict) -> list[str]:
    return [b["label"] for b in _groups(d)] + d["frames"]


#: the least height on screen (CSS px) at which a box's title reads
READABLE_PX = 9


def _title_px(d: dict) -> float:
    """How high a folded box's title is drawn on screen now: the view's scale x its font."""
    return d["scale"] * d["titlePx"]


def _overlaps(d: dict) -> list[tuple[int, int]]:
    """Pairs of drawn boxes whose rectangles overlap."""
    r = sorted(range(len(d["rects"])), key=lambda k: d["rects"][k][0])
    found = []
    for i, a in enumerate(r):
        ax0, ay0, ax1, ay1 = d["rects"][a]
        for b in r[i + 1 :]:
            bx0, by0, bx1, by1 = d["rects"][b]
            if bx0 >= ax1:
                break
            if by0 < ay1 and ay0 < by1:
                found.append((a, b))
    return found


def _centre(rect) -> tuple[float, float]:
    return (rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2


def _is_block(box: dict, index: int, direction: str) -> bool:
    return box.get("name") == "block" and box.get("index") == index and box.get("dir") == direction


def _inside(d: dict, rect) -> list[int]:
    """The boxes whose centres are inside ``rect`` ([x0, y0, x1, y1], world px)."""
    x0, y0, x1, y1 = rect
    return [
        k for k, r in enumerate(d["rects"]) if x0 < _centre(r)[0] < x1 and y0 < _centre(r)[1] < y1
    ]


def _click_world(page, d: dict, point) -> None:
    """Click the graph at a point of the drawing (world px): screen = offset + scale x world."""
    box = page.locator(f'[data-test-cell="{HLO24_GRAD}"] canvas.jwb-hlo-canvas').first
    at = box.bounding_box()
    page.mouse.click(
        at["x"] + d["offset"][0] + d["scale"] * point[0],
        at["y"] + d["offset"][1] + d["scale"] * point[1],
    )


def _wait_drawing(page, done) -> dict:
    """The 24-block gradient's drawing once ``done(drawing)`` holds (the layout arrived)."""
    for _ in range(200):
        page.wait_for_timeout(100)
        d = page.evaluate(DRAWING_JS, HLO24_GRAD)
        if d and done(d):
            page.wait_for_timeout(300)
            return page.evaluate(DRAWING_JS, HLO24_GRAD)
    raise AssertionError("the drawing did not change")


def test_hlo_graph_of_a_24_block_gradient_reads_as_its_blocks(browser, lab):
    page, watch = _open(browser, lab.lab_url("hlo24.ipynb"), lab.base)
    page.set_viewport_size({"width": 1300, "height": 1000})
    d = _drawing(page, HLO24_GRAD)
    groups = _groups(d)
    assert len(d["boxes"]) <= 60, len(d["boxes"])
    blocks = [g for g in groups if g["name"] == "block"]
    fwd = sorted(g["index"] for g in blocks if g["dir"] == "fwd")
    bwd = sorted(g["index"] for g in blocks if g["dir"] == "bwd")
    assert fwd == list(range(24)) and bwd == list(range(24)), (fwd, bwd)
    # at most one drawn edge per pair of boxes
    pairs = [tuple(sorted(e)) for e in d["edges"]]
    assert len(pairs) == len(set(pairs)), "two edges between one pair of boxes"
    assert d["whole"], "the first view is not fitted"
    # whole and readable: every box's title drawn at least READABLE_PX high, none overlapping
    assert _title_px(d) >= READABLE_PX, (d["scale"], d["titlePx"], d["size"])
    assert _overlaps(d) == []
    graph = page.locator(f'[data-test-cell="{HLO24_GRAD}"] .jwb-hlo-graph')
    graph.screenshot(path=str(artifacts_dir() / "hlo24-fit.png"))
    # a narrower output: laid out again for its width, and fitted whole again
    page.set_viewport_size({"width": 1000, "height": 1000})
    narrow = _wait_drawing(page, lambda o: o["size"][0] < d["size"][0] and o["whole"])
    assert _overlaps(narrow) == []
    page.set_viewport_size({"width": 1300, "height": 1000})
    _wait_drawing(page, lambda o: o["size"][0] == d["size"][0] and o["whole"])
    d = page.evaluate(DRAWING_JS, HLO24_GRAD)
    # one block opened (a click on it): its calls inside a frame named for it, where it was
    k5 = next(k for k, g in enumerate(d["boxes"]) if _is_block(g, 5, "fwd"))
    _click_world(page, d, _centre(d["rects"][k5]))
    one = _wait_drawing(page, lambda o: len(o["boxes"]) > len(d["boxes"]))
    frame = next(f for f in one["drawnFrames"] if f[0] == "block 5 · forward")
    inside = {one["boxes"][k].get("name") for k in _inside(one, frame[1:])}
    assert {"attention", "mlp", "layernorm"} <= inside, inside
    row = {
        i: _centre(one["rects"][k])[1]
        for k, g in enumerate(one["boxes"])
        for i in (4, 6)
        if _is_block(g, i, "fwd")
    }
    assert row[4] < frame[2] and frame[4] < row[6], (row, frame)
    assert _overlaps(one) == []
    graph.screenshot(path=str(artifacts_dir() / "hlo24-block.png"))
    # its frame's title folds it back
    _click_world(page, one, (frame[1] + 24, frame[2] - 9))
    _wait_drawing(page, lambda o: len(o["boxes"]) == len(d["boxes"]))
    # one level down: each block opens into its calls, named by the code (attention, mlp, ...)
    page.locator(f'[data-test-cell="{HLO24_GRAD}"] button.jwb-hlo-expand-all').click()
    page.wait_for_function(
        f"i => {{ const d = ({DRAWING_JS})(i); return d && d.boxes.length > {len(d['boxes'])}; }}",
        arg=HLO24_GRAD,
        timeout=60_000,
    )
    page.wait_for_timeout(300)
    down = page.evaluate(DRAWING_JS, HLO24_GRAD)
    names = {g["name"] for g in _groups(down)}
    assert {"attention", "mlp", "layernorm"} <= names, names
    assert len(down["boxes"]) < 1000, len(down["boxes"])
    # too many boxes to read whole: shown from the top at a readable scale, none overlapping
    assert _title_px(down) >= READABLE_PX, (down["scale"], down["size"])
    assert _overlaps(down) == []
    # which block each box is in: one frame per block, its forward and backward together
    frames = {f[0]: f[1:] for f in down["drawnFrames"]}
    block_of = {}
    for i in range(24):
        for k in _inside(down, frames[f"block {i} · forward | backward"]):
            assert k not in block_of, (k, block_of[k], i)
            block_of[k] = i
    # no fan of edges across the blocks: an edge joins a block to itself or a neighbour
    far = [
        (a, b)
        for a, b in down["edges"]
        if a in block_of and b in block_of and abs(block_of[a] - block_of[b]) > 1
    ]
    assert far == [], far[:5]
    graph.screenshot(path=str(artifacts_dir() / "hlo24-level.png"))
    # the loss's last line changed: no group renamed or recounted but the loss's own
    changed = _drawing(page, HLO24_GRAD_ABS)
    assert sorted(lb for lb in _labels(changed) if not lb.startswith("loss")) == sorted(
        lb for lb in _labels(d) if not lb.startswith("loss")
    )
    assert watch.errors == [], watch.errors
    page.close()


def test_hlo_graph_names_modules_scopes_and_scan_bodies(browser, lab):
    page, watch = _open(browser, lab.lab_url("hlo24.ipynb"), lab.base)
    for cell in (HLO24_NNX, HLO24_EQX):
        labels = _labels(_drawing(page, cell))
        assert any(lb.split(" ")[0] in ("MLP", "Linear") for lb in labels), (cell, labels)
    labels = _labels(_drawing(page, HLO24_SCOPE))
    assert {"encoder", "decoder"} <= {lb.split(" ")[0] for lb in labels}, labels
    d = _drawing(page, HLO24_SCAN)
    assert d["whole"], "the scan's first view is not fitted"
    bodies = [t for g, t in d["titles"].items() if g != d["graph"]]
    assert any(t.startswith("step · loop body") for t in bodies), bodies
    assert watch.errors == [], watch.errors
    page.close()

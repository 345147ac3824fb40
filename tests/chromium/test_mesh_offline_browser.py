"""The mesh explorer inside a notebook with the internet out of reach.

A real ``jupyter lab`` on 127.0.0.1 (``tests.browser.JupyterServer``: its own root, token and
config, shared with the other browser test modules; Panel's server extension enabled by
Panel's own ``jupyter_server_config.d`` file, as in any environment where Panel is installed) and Debian's chromium, whose every request to a
host other than 127.0.0.1/localhost is aborted and recorded.  The explorer must render from
the saved notebook (nbclient executed it: 8 fake CPU devices), render again when the cell
runs in the page's own kernel, and answer a control through the kernel comm; nothing may be
asked of another host, no local request may fail, the console stays clean, and the saved
cell stays small beside ``pn.extension(inline=True)``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import nbformat

# a hard import: a missing Playwright fails the run (it is a test dependency), never skips
import playwright.sync_api as playwright_api
import pytest

from tests.browser import (
    TOKEN,
    JupyterServer,
    PageWatch,
    artifacts_dir,
    execute_notebook,
    free_port,
    kernel_env,
    stop_server,
    wait_for_notebook,
)
from tests.browser_fixtures import BROWSER_GROUP_A
from workbench.apps.notebook_resources import LOAD_MIME, LOCAL_URL_JS
from workbench.engine.sharding.mesh_explorer import ExplorerConfig, available_devices, explore

pytestmark = [
    pytest.mark.browser,
    pytest.mark.notebook,
    pytest.mark.xdist_group(BROWSER_GROUP_A),
]

EXPLORER_CELL = "import workbench\nworkbench.mesh_explorer()"
# the same app the way Panel offers to work offline by itself: everything pasted in
INLINE_CELL = (
    "import panel as pn\npn.extension(inline=True)\n"
    "from workbench.apps.mesh_explorer import MeshExplorer\nMeshExplorer().panel()"
)
#: the saved explorer cell's outputs must stay under this (inline=True: megabytes): Panel's
#: loader and app and the saved picture of the state with its standalone runtime (~110 KB,
#: what an exported copy shows): 255 KB measured
MAX_OUTPUT_BYTES = 300_000
LOOPBACK = {"127.0.0.1", "localhost"}
# a CDN URL in a JavaScript string literal (what Panel writes), wrapped by us or not
CDN_LITERAL = re.compile(r'(.{0,40})"(https://cdn\.(?:holoviz\.org|bokeh\.org)/[^"\\]*)"')


def _output_bytes(nb: Any) -> int:
    return sum(len(json.dumps(c.get("outputs", []))) for c in nb.cells)


def _cdn_literals(
    nb: Any, mimes: tuple[str, ...] = ("application/javascript", LOAD_MIME, "text/html")
) -> list[tuple[str, str]]:
    """(text before, URL) of each CDN URL literal in ``nb``'s outputs of types ``mimes``."""
    return [
        hit
        for c in nb.cells
        for o in c.get("outputs", [])
        for m, v in o.get("data", {}).items()
        if m in mimes and isinstance(v, str)
        for hit in CDN_LITERAL.findall(v)
    ]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("mesh-offline")
    nb = execute_notebook([EXPLORER_CELL], d / "explorer.ipynb")
    inline = execute_notebook([INLINE_CELL], d / "inline.ipynb")
    return {"dir": d, "nb": nb, "inline": inline}


def test_saved_explorer_is_small_and_names_no_cdn_url_unwrapped(saved):
    nb, inline = saved["nb"], saved["inline"]
    errors = [o for c in nb.cells + inline.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    ours, pasted = _output_bytes(nb), _output_bytes(inline)
    print(
        f"\nexplorer cell outputs: {ours:,} bytes (file {Path(saved['dir'] / 'explorer.ipynb').stat().st_size:,});"
        f" with pn.extension(inline=True): {pasted:,} bytes"
    )
    assert ours < MAX_OUTPUT_BYTES
    assert ours * 20 < pasted  # what inline=True costs, measured here, not assumed
    found = _cdn_literals(nb, ("application/javascript", LOAD_MIME))
    assert found, "Panel's loader names no CDN URL at all: this test would check nothing"
    # every Panel/BokehJS CDN URL in the loader goes through the page's mapping to the server
    # (the documents' stylesheet URLs are mapped in the page: see the browser tests)
    unwrapped = [url for before, url in found if not before.endswith("__jwbLocalUrl(")]
    assert unwrapped == []


# -- the page --------------------------------------------------------------------------------


class Offline:
    """A browser context that aborts and records every request leaving 127.0.0.1."""

    def __init__(self, browser: Any) -> None:
        self.blocked: list[str] = []
        self.failed: list[str] = []
        self.local: list[str] = []
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        host = urlparse(url).hostname
        if host in LOOPBACK:
            self.local.append(url)
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("blockedbyclient")

    def page(self, base: str) -> tuple[Any, PageWatch]:
        page = self.context.new_page()
        watch = PageWatch(page, base)
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url} {r.failure}"))
        page.on(
            "response",
            lambda r: self.failed.append(f"{r.url} HTTP {r.status}") if r.status >= 400 else None,
        )
        return page, watch


BASE_URL = "/hub/user/ada/"  # what JupyterHub and Binder give a single-user server


class BaseUrlServer(JupyterServer):
    """``tests.browser.JupyterServer`` (same isolated root, token, config and extension build)
    serving under ``--ServerApp.base_url``: ``base`` then ends with it, so its page URLs do."""

    def _start_once(self, timeout: float) -> JupyterServer:
        port = free_port()
        self.log_path = self.workdir / "server.log"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed by stop()
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.base_url={BASE_URL}",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--allow-root",
        ]
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, env=self.env, cwd=self.workdir
        )
        self.origin = f"http://127.0.0.1:{port}"
        self.base = self.origin + BASE_URL.rstrip("/")
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self.base}/api/status?token={TOKEN}", timeout=5):
                    return self
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.5)
        self.stop()
        raise RuntimeError("jupyter lab did not start:\n" + self.log_path.read_text()[-3000:])


def _serve(server: JupyterServer, saved: dict) -> JupyterServer:
    nb = nbformat.read(saved["dir"] / "explorer.ipynb", as_version=4)
    nbformat.write(nb, server.root / "explorer.ipynb")
    server.trust(server.root / "explorer.ipynb")  # Panel's output is JavaScript: trusted only
    return server


@pytest.fixture(scope="module")
def lab(lab, saved):
    return _serve(lab, saved)


@pytest.fixture(scope="module")
def lab_under_base_url(tmp_path_factory, saved):
    server = _serve(BaseUrlServer(tmp_path_factory.mktemp("lab-base-url")), saved).start()
    yield server
    server.stop()


OUT = ".jp-OutputArea-output"
PICTURE = f'{OUT} [data-jwb="layout-svg"]'


def _expected_matmul_rows() -> list[str]:
    """The collectives the app must show for the default mesh with a matmul, from JAX."""
    res = explore(ExplorerConfig.default(len(available_devices()), operation="matmul"))
    return [f"{c.kind}:{','.join(c.axes or [])}" for c in res.collectives]


def _rows(page: Any) -> list[str]:
    return page.locator(f'{OUT} [data-jwb="collective"]').evaluate_all(
        "els => els.map(e => e.getAttribute('data-kind') + ':' + e.getAttribute('data-axes'))"
    )


def _kernel_idle(page: Any, timeout: float = 90_000) -> None:
    """The page's kernel has started and is idle (the toolbar's indicator, Lab and Notebook 7)."""
    page.wait_for_selector(
        '.jp-Notebook-ExecutionIndicator[data-status="idle"]', state="attached", timeout=timeout
    )


def _rerun_and_interact(page: Any, name: str) -> None:
    """Run the explorer cell in this page's kernel and pick a matmul in the new app."""
    # the app rendered from the saved notebook: marked, so the new one is told apart
    page.locator(PICTURE).first.evaluate("el => el.setAttribute('data-old', '1')")
    _kernel_idle(page)
    page.locator(".jp-Notebook .jp-Cell .jp-InputArea-editor").first.click()
    page.keyboard.press("Control+Enter")  # run in place: no new cell
    page.wait_for_selector(f'{OUT} [data-jwb="layout-svg"]:not([data-old])', timeout=90_000)
    assert page.locator(f"{PICTURE}[data-old]").count() == 0
    # the cell has finished (the app's comm is set up) before a control changes; once, a
    # change made at once was never answered (not reproduced; a screenshot is kept if so)
    _kernel_idle(page)
    operation = page.locator(f"{OUT} select").nth(1)  # dtype, operation, reduction, function
    assert "matmul" in operation.evaluate("s => [...s.options].map(o => o.value)")
    operation.select_option("matmul")  # travels to the kernel over Panel's comm
    try:
        page.wait_for_selector(f'{OUT} [data-jwb="collectives"]', timeout=90_000)
    except playwright_api.TimeoutError:
        page.screenshot(path=str(artifacts_dir() / f"mesh-offline-{name}-no-matmul.png"))
        raise
    assert _rows(page) == _expected_matmul_rows()
    _assert_columns_contain_their_content(page)
    page.locator(PICTURE).first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir() / f"mesh-offline-{name}-live.png"))


#: For each table and picture in one of the explorer's columns: how far it paints past its
#: column's right edge (0 when it fits or scrolls inside a box of its own), seen through
#: every clipping box between it and the column.
_PAST_COLUMN_JS = """els => els.map(el => {
  const col = el.closest('.jwb-col');
  let right = el.getBoundingClientRect().right;
  for (let n = el.parentElement; n && n !== col.parentElement; n = n.parentElement) {
    if (getComputedStyle(n).overflowX !== 'visible') {
      right = Math.min(right, n.getBoundingClientRect().right);
    }
  }
  return [el.tagName + (el.closest('details') ? ' per device' : ''),
          Math.max(0, Math.round(right - col.getBoundingClientRect().right))];
})"""


def _assert_columns_contain_their_content(page: Any) -> None:
    """In matmul mode the inputs' "per device" table is wider than its column: it must
    scroll inside the column, not paint under the output-sharding picture beside it."""
    found = page.locator(f"{OUT} .jwb-col table, {OUT} .jwb-col svg").evaluate_all(_PAST_COLUMN_JS)
    assert any(name == "TABLE per device" for name, _ in found), found
    past = [(name, px) for name, px in found if px > 1]
    assert past == [], past


def _assert_explorer_drawn(page: Any, offline: Offline, name: str) -> None:
    try:
        page.wait_for_selector(PICTURE, state="visible", timeout=90_000)
    except playwright_api.TimeoutError:
        page.screenshot(path=str(artifacts_dir() / f"mesh-offline-{name}-blank.png"))
        raise AssertionError(
            f"the explorer did not render; requests blocked: {offline.blocked}"
            f"; failed: {offline.failed}"
        ) from None
    mesh = page.locator(f'{OUT} input[placeholder="mesh shape"]').first
    assert mesh.is_visible() and mesh.input_value() == ExplorerConfig.default(8).mesh_shape
    assert (
        page.locator(f'{OUT} [data-jwb="device-count"]')
        .first.inner_text()
        .startswith("8 device(s) here")
    )
    box = page.locator(PICTURE).first.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 50
    # Panel's stylesheets applied (from the server): the text inputs are laid out at width 260
    width = mesh.evaluate("el => el.getBoundingClientRect().width")
    assert 200 < width <= 270, width
    page.screenshot(path=str(artifacts_dir() / f"mesh-offline-{name}.png"))


def _assert_offline_and_clean(
    offline: Offline, watch: PageWatch, base: str, ignore_errors: set[str] = frozenset()
) -> None:
    assert offline.blocked == [], offline.blocked  # nothing asked of another host
    assert watch.external == [], watch.external
    assert offline.failed == [], offline.failed  # and nothing local missing
    served = [u for u in offline.local if "/panel-preview/static/" in u]
    assert any(u.split("?")[0].endswith("/static/js/bokeh.min.js") for u in served), served
    assert any("/static/extensions/panel/panel.min.js" in u for u in served), served
    assert all(u.startswith(base + "/panel-preview/static/") for u in served)
    errors = [e for e in watch.errors if e not in ignore_errors]
    assert errors == [], errors


def _page_own_errors(offline: Offline, server: JupyterServer, url: str) -> set[str]:
    """Console errors the page reports by itself: a notebook without outputs, same server.

    (What other plugins say while they are built is theirs to fix; this test asks that the
    explorer add nothing.)  Opened in the explorer's browser context, after it, so the
    front end's files come from the browser's cache, and its requests are checked with the
    explorer's (nothing asked of another host, nothing local missing).
    """
    nbformat.write(nbformat.v4.new_notebook(), server.root / "empty.ipynb")
    page, watch = offline.page(server.base)
    page.goto(url)
    wait_for_notebook(page)
    _kernel_idle(page)  # the plugins have connected to a kernel, as on the explorer's page
    page.wait_for_timeout(1000)
    page.close()
    return set(watch.errors)


#: JupyterLab under a base URL and Notebook 7 at the server's root: between them, each front
#: end and each kind of base URL.  (JupyterLab at the root too cost a third page, kernel and
#: explorer, about 20 s of CPU, and reached no code the two do not: the URL mapping is the
#: saved output's own script, the same in both front ends, and Notebook 7 runs it at the root.)
@pytest.mark.parametrize("front_end", ["notebook7", "lab-under-base-url"])
def test_explorer_renders_offline(request, browser, front_end):
    server = request.getfixturevalue("lab_under_base_url" if "base-url" in front_end else "lab")
    url = server.notebook7_url if front_end == "notebook7" else server.lab_url
    offline = Offline(browser)
    try:
        page, watch = offline.page(server.base)
        page.goto(url("explorer.ipynb"))
        wait_for_notebook(page)
        _assert_explorer_drawn(page, offline, front_end)
        _rerun_and_interact(page, front_end)
        own_errors = _page_own_errors(offline, server, url("empty.ipynb"))
        _assert_offline_and_clean(offline, watch, server.base, own_errors)
        print(
            f"\n{front_end}: {len(offline.local)} requests to 127.0.0.1 "
            f"({sum('/panel-preview/static/' in u for u in offline.local)} Panel/Bokeh files),"
            f" {len(offline.blocked)} to other hosts; page's own console errors ignored: "
            f"{len(own_errors)}"
        )
    finally:
        offline.context.close()


# -- behind a base_url (JupyterHub, Binder) ---------------------------------------------------


def test_every_cdn_url_maps_to_a_file_the_server_serves_under_its_base_url(
    saved, lab_under_base_url, browser
):
    origin, base_url = lab_under_base_url.origin, BASE_URL
    urls = sorted({u for _, u in _cdn_literals(saved["nb"])})
    assert any("bokeh.org" in u for u in urls) and any("holoviz.org" in u for u in urls)
    page = browser.new_page()
    try:
        # a page of that server (so location.origin is the server's) with Jupyter's page config
        page.route(
            f"{origin}/page",
            lambda r: r.fulfill(
                content_type="text/html",
                body=(
                    '<script id="jupyter-config-data" type="application/json">'
                    + json.dumps({"baseUrl": base_url})
                    + "</script>"
                ),
            ),
        )
        page.goto(f"{origin}/page")
        page.add_script_tag(content=LOCAL_URL_JS)
        mapped = page.evaluate("urls => urls.map(u => window.__jwbLocalUrl(u))", urls)
        # without a Jupyter page (an export, VS Code, nbviewer) nothing is fetched at all
        page.evaluate(
            "() => { delete window.__jwbLocalUrl;"
            " document.getElementById('jupyter-config-data').remove(); }"
        )
        page.add_script_tag(content=LOCAL_URL_JS)
        inert = page.evaluate("urls => urls.map(u => window.__jwbLocalUrl(u))", urls)
        assert inert == ["data:text/javascript,"] * len(urls), inert
    finally:
        page.close()
    import panel
    from bokeh.util.paths import bokehjs_path

    bokeh_dir = Path(bokehjs_path()) / "js"
    panel_dist = Path(panel.__file__).parent / "dist"
    for url, local in zip(urls, mapped, strict=True):
        assert local.startswith(f"{origin}{base_url}panel-preview/static/"), (url, local)
        name = urlparse(local).path.rsplit("/static/", 1)[1]
        expected = (
            panel_dist / name.removeprefix("extensions/panel/")
            if name.startswith("extensions/panel/")
            else bokeh_dir / name.removeprefix("js/")
        )
        if url.endswith("/"):
            # a folder the loader joins names to (Panel >= 1.10's CDN_DIST): the server
            # serves folders as no file, so the mapped prefix must name this Panel's dist/
            assert local.endswith("/") and expected.resolve() == panel_dist.resolve(), (url, local)
            continue
        with urllib.request.urlopen(local, timeout=30) as r:
            body = r.read()
        # the very file Panel would have fetched from its CDN, from this environment
        assert body == expected.read_bytes(), (url, local)


# -- the standalone app ------------------------------------------------------------------------


def test_standalone_explorer_needs_no_other_host(tmp_path, browser):
    """``jax-workbench mesh-explorer``: Panel's own server serves its files (nothing changed)."""
    port = free_port()
    log_path = tmp_path / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed by stop_server
    env = {k: v for k, v in kernel_env().items() if k != "XLA_FLAGS"}  # --fake-devices sets it
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench.apps.cli",
            "mesh-explorer",
            "--port",
            str(port),
            "--fake-devices",
            "8",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    offline = Offline(browser)
    try:
        deadline = time.time() + 90
        while True:
            try:
                urllib.request.urlopen(base + "/", timeout=5).read()
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    pytest.fail(f"mesh explorer did not start: {log_path.read_text()[-3000:]}")
                time.sleep(0.3)
        page, watch = offline.page(base)
        page.goto(base + "/")
        page.wait_for_selector('[data-jwb="layout-svg"]', state="visible", timeout=60_000)
        page.locator("select").nth(1).select_option("matmul")
        page.wait_for_selector('[data-jwb="collectives"]', timeout=60_000)
        assert offline.blocked == [] and watch.external == [], offline.blocked
        assert offline.failed == [] and watch.errors == [], (offline.failed, watch.errors)
    finally:
        offline.context.close()
        stop_server(proc, log)

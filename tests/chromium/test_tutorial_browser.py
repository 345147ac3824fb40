"""The executed tour (notebooks/00_tour.ipynb) in a real JupyterLab, the way a learner who
opens someone else's executed copy sees it: untrusted (nbclient never signs), served with
this checkout's build of the extension, in Debian's chromium.

Every workbench output the tour produced is drawn by the extension's renderer (not the
text/html fallback, no renderer error); running the tour's first cells in the page's own
kernel connects the JAX Workbench side panel, whose ledger then shows the compiles the prose
describes; the console stays clean and nothing is requested from another host.  Screenshots
go to ``artifacts_dir()`` (``tour-*.png``).
"""

from __future__ import annotations

import copy

import nbformat

# a hard import: a missing Playwright fails the run (it is a test dependency), never skips
import playwright.sync_api as playwright_api
import pytest

from tests import tutorials
from tests.browser import (
    PageWatch,
    artifacts_dir,
    scroll_to_cell,
    wait_for_notebook,
    workbench_outputs,
)

# with the tour's notebook tests: the tour is executed once per test process
pytestmark = [
    pytest.mark.browser,
    pytest.mark.notebook,
    pytest.mark.xdist_group(tutorials.xdist_group(tutorials.TOUR)),
]

NB = "window.jupyterapp.shell.currentWidget"
PANEL = '[data-jwb="panel"]'
NAME = "00_tour.ipynb"


@pytest.fixture(scope="module")
def executed():
    return copy.deepcopy(tutorials.run(tutorials.TOUR).nb)


@pytest.fixture(scope="module")
def lab(lab, executed):
    nbformat.write(executed, lab.root / NAME)
    assert not lab.is_trusted(lab.root / NAME)  # a shared, executed copy: untrusted
    return lab


def _shot(page, name: str) -> None:
    page.screenshot(path=str(artifacts_dir() / f"tour-{name}.png"))


def _cell_rendered(page, index: int) -> list[dict]:
    """The workbench output roots of cell ``index``: kind, ready, drawn by the fallback?"""
    return page.evaluate(
        f"""(i) => [...{NB}.content.widgets[i].node.querySelectorAll('.jwb-ext')].map(e => ({{
              kind: [...e.classList].find(c => c.startsWith('jwb-ext-')).slice(8),
              ready: e.getAttribute('data-jwb-ready') === '1',
              fallback: !!(e.closest('.jp-RenderedHTMLCommon')
                           || e.querySelector('.jp-RenderedHTMLCommon')),
            }}))""",
        index,
    )


def _wait_cell(page, index: int, kinds: list[str], timeout: float = 60_000) -> None:
    try:
        page.wait_for_function(
            f"""([i, n]) => {{
                  const roots = {NB}.content.widgets[i].node.querySelectorAll('.jwb-ext');
                  return roots.length >= n && [...roots].every(
                      e => e.getAttribute('data-jwb-ready') === '1'
                           || e.classList.contains('jwb-ext-error'));
                }}""",
            arg=[index, len(kinds)],
            timeout=timeout,
        )
    except playwright_api.TimeoutError:
        raise AssertionError(
            f"cell {index}: expected {kinds}, got {_cell_rendered(page, index)}"
        ) from None


def _run_cell(page, index: int, timeout: float = 120_000) -> None:
    page.evaluate(
        f"(i) => {{ const nb = {NB}.content; nb.activeCellIndex = i; nb.deselectAll();"
        " return window.jupyterapp.commands.execute('notebook:run-cell'); }",
        index,
    )
    page.wait_for_function(
        f"(i) => {NB}.content.model.cells.get(i).executionCount !== null"
        f" && {NB}.content.widgets[i].model.executionState !== 'running'"
        f" && {NB}.sessionContext.session.kernel.status === 'idle'",
        arg=index,
        timeout=timeout,
    )


def _index(nb, prefix: str) -> int:
    (i,) = [
        i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.startswith(prefix)
    ]
    return i


def test_untrusted_tour_renders_every_output_and_connects_the_panel(browser, lab, executed):
    expected = workbench_outputs(executed)
    by_cell: dict[int, list[str]] = {}
    for i, kind in expected:
        by_cell.setdefault(i, []).append(kind)
    assert {
        "jaxpr",
        "jaxpr-compare",
        "hlo",
        "cache-cell",
        "cache",
        "bench",
        "sharding",
        "profile",
    } <= {k for _, k in expected}

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    watch = PageWatch(page, lab.base)
    page.goto(lab.lab_url(NAME))
    wait_for_notebook(page)
    page.wait_for_function(
        f"() => {NB}?.content?.widgets?.length === {len(executed.cells)}", timeout=60_000
    )
    # JupyterLab agrees: no cell with outputs is trusted
    assert (
        page.evaluate(
            f"() => {NB}.content.widgets.filter(c => c.model.type === 'code'"
            " && c.model.outputs.length).map(c => c.model.trusted)"
            ".every(t => t === false)"
        )
        is True
    )

    shots = {
        "%%jaxpr\ndef loss": "jaxpr",
        "%jaxpr --compare": "compare",
        "%%hlo\ndef softmax": "hlo",
        "%%hlo\ndef layer": "collectives",
        "from jax.sharding": "sharding",
        "%%jaxprof": "profile",
        "wb, xb": "bench",
        "workbench.mesh_explorer": "mesh-explorer",
    }
    shot_at = {_index(executed, p): name for p, name in shots.items()}
    for i, kinds in sorted(by_cell.items()):
        scroll_to_cell(page, i)
        _wait_cell(page, i, kinds)
        drawn = _cell_rendered(page, i)
        assert [d["kind"] for d in drawn] == kinds, (i, executed.cells[i].source[:60], drawn)
        assert not any(d["fallback"] for d in drawn), (i, drawn)  # our renderer, not HTML
        errors = page.evaluate(
            f"(i) => [...{NB}.content.widgets[i].node.querySelectorAll('.jwb-ext-error')]"
            ".map(e => e.textContent)",
            i,
        )
        assert errors == [], (i, executed.cells[i].source[:60], errors)
        if executed.cells[i].source.startswith("%%hlo\ndef layer"):  # the all-reduce, listed
            rows = page.evaluate(
                f"(i) => [...{NB}.content.widgets[i].node.querySelectorAll("
                "'table.jwb-hlo-coll tbody tr')].map(r => r.dataset.kind)",
                i,
            )
            assert rows == ["all-reduce"], rows
        if i in shot_at:
            page.wait_for_timeout(500)
            _shot(page, shot_at[i])

    # the side panel: not loaded in the page's fresh kernel, connected once the first cell runs
    page.wait_for_function(
        "() => window.jupyterapp.commands.hasCommand('jax-workbench:open-panel')", timeout=60_000
    )
    page.evaluate("() => window.jupyterapp.commands.execute('jax-workbench:open-panel')")
    page.wait_for_selector(PANEL, state="visible", timeout=30_000)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel",
        timeout=60_000,
    )
    page.wait_for_selector(
        f'{PANEL}[data-jwb-state="not-loaded"]', state="attached", timeout=90_000
    )
    first = _index(executed, "import workbench")
    _run_cell(page, first)  # import workbench; fake_devices(8); %load_ext workbench
    try:
        page.wait_for_selector(
            f'{PANEL}[data-jwb-state="connected"]', state="attached", timeout=90_000
        )
    except playwright_api.TimeoutError:
        _shot(page, "panel-not-connected")
        state = page.evaluate(
            "() => { const p = document.querySelector('[data-jwb=\"panel\"]');"
            " return p && [p.getAttribute('data-jwb-state'), p.textContent.slice(0, 300)]; }"
        )
        outputs = page.evaluate(
            f"() => {{ const m = {NB}.content.model.cells.get({first}); const out = [];"
            " for (let k = 0; k < m.outputs.length; k++) out.push(JSON.stringify("
            "m.outputs.get(k).toJSON()).slice(0, 300)); return out; }"
        )
        raise AssertionError(
            f"panel not connected: {state}; first cell's outputs {outputs}; console {watch.errors}"
        ) from None
    # the prose's ledger: loss defined, then step compiled and recompiled for a new batch size
    for prefix in ("%%jaxpr\ndef loss", "@jax.jit\ndef step", "w = step(w, jnp.ones((3, 4)))"):
        _run_cell(page, _index(executed, prefix))
    page.wait_for_selector(f"{PANEL} .jwb-panel-entry.jwb-panel-recompile", timeout=30_000)
    ledger = page.evaluate(
        f"() => [...document.querySelectorAll('{PANEL} .jwb-panel-row')].map(r => r.textContent)"
    )
    assert any("step" in t for t in ledger), ledger
    assert any("f32[2,4]" in t and "f32[3,4]" in t for t in ledger), ledger
    assert (
        page.evaluate("() => document.querySelector('[data-jwb=\"device-count\"]')?.textContent")
        == "8"
    )
    page.wait_for_timeout(1000)  # late errors (workers, observers)
    _shot(page, "panel")
    assert watch.errors == [], watch.errors
    assert watch.external == [], watch.external
    page.close()

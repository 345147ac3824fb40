"""A new user's first Run All, in a real JupyterLab (Debian chromium): the side panel opened
after the cells ran, and a noisy ``%jaxbench`` output read with the side panel open.

One notebook, run with Run All while the JAX Workbench panel is closed: the panel's link says
hello only once the kernel is idle, so the kernel answers after every cell ran.  Opened then,
the panel's memory chart shows every sample the kernel kept since ``%load_ext`` (the same
count, the same values, read from the kernel itself), not "No memory sample yet".

The same notebook's ``%jaxbench`` times a function that compiles on every call, so the
benchmark warns about it.  With the side panel open (the output area about 500 px wide), the
extension's bench view shows its histogram, its run-order plot and the warning's text without
any click, clips nothing (no element's content wider than its box), is readable in the Light
and Dark themes (text contrast >= 4.5:1), and every control of it is reached with Tab and
works with Enter or Space, the keyboard never landing in a cell's editor.
"""

from __future__ import annotations

import ast
import json

import nbformat
import playwright.sync_api as playwright_api
import pytest

from tests.browser import (
    CONTRAST_JS,
    CURRENT_NOTEBOOK,
    artifacts_dir,
    new_notebook,
    open_notebook,
    run_all_cells,
)
from tests.browser_fixtures import BROWSER_GROUP_A

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(BROWSER_GROUP_A)]

PANEL = '[data-jwb="panel"]'
NAME = "late-panel.ipynb"
BENCH_CELL = (
    "def fresh(x):  # a new jit on every call: each call compiles\n"
    "    return jax.jit(lambda y: y * 2)(x)\n"
    "%jaxbench -n 1 -r 6 fresh(b)"
)
CELLS = [
    "%load_ext workbench\nimport jax, jax.numpy as jnp\nprint(jax.device_count())",
    "a = jnp.ones((1024, 1024), jnp.float32).block_until_ready()",
    "b = jnp.ones((2048, 1024), jnp.float32).block_until_ready()",
    "del a",
    BENCH_CELL,
]
ALLOC_A, ALLOC_B, DEL_A, BENCH = 1, 2, 3, 4
#: the narrowest output area the bench view is checked at (the side panel open)
NARROW = 600

#: (execution count, when, live bytes) of every memory sample the kernel's hub keeps,
#: read through a silent request (its user_expressions), which runs no cell and so takes
#: no sample of its own
KEPT_JS = (
    "async () => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;"
    " const expr = \"__import__('json').dumps([[m['cell'], m['when'], m['live_bytes']] for m in"
    " __import__('workbench.ipython.sidepanel', fromlist=['hub_for'])"
    '.hub_for(get_ipython())._memory])";'
    " const reply = await k.requestExecute({code: '', silent: true, store_history: false,"
    " user_expressions: {kept: expr}}).done;"
    " const r = reply.content.user_expressions.kept;"
    " return r.status === 'ok' ? r.data['text/plain'] : 'ERROR ' + JSON.stringify(r); }"
)

#: the y of each point of the chart's live-bytes step path (M x,y then H x V y per point)
CHART_YS_JS = (
    "() => { const p = document.querySelector('[data-jwb=\"panel\"] .jwb-panel-chart-live');"
    " if (!p) return null; const d = p.getAttribute('d');"
    " const first = d.match(/^M[-\\d.]+,([-\\d.]+)/);"
    " return [Number(first[1]), ...[...d.matchAll(/V([-\\d.]+)/g)].map(m => Number(m[1]))]; }"
)

#: every element of the bench output whose content is wider than its box (clipped or
#: scrolled away), and the output's own right edge against the output area's
CLIPPED_JS = """(root) => {
  const area = root.closest('.jp-OutputArea-output') || root.parentElement;
  const out = [];
  for (const e of [root, ...root.querySelectorAll('*')]) {
    if (e instanceof SVGElement && !(e instanceof SVGSVGElement)) continue;
    if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) {
      out.push(`${e.tagName}.${e.getAttribute('class') || ''}: ${e.scrollWidth} > ${e.clientWidth}`);
    }
    const r = e.getBoundingClientRect(), a = area.getBoundingClientRect();
    if (r.width > 0 && r.right > a.right + 1) {
      out.push(`${e.tagName}.${e.getAttribute('class') || ''} ends ${Math.round(r.right - a.right)} px past the output area`);
    }
  }
  return {width: area.clientWidth, clipped: out};
}"""


@pytest.fixture(scope="module")
def late(browser, lab):
    """The notebook, run with Run All while the panel was closed; the page stays open for
    the module's tests."""
    nbformat.write(new_notebook(CELLS), lab.root / NAME)
    page, watch = open_notebook(browser, lab, NAME)
    page.wait_for_function(
        "() => window.jupyterapp.commands.hasCommand('jax-workbench:open-panel')",
        timeout=60_000,
    )
    # closed, as a new user's panel is (the workspace may remember another module's)
    page.evaluate("() => window.jupyterapp.shell.collapseRight()")
    page.wait_for_selector(PANEL, state="hidden", timeout=10_000)
    run_all_cells(page)
    yield page, watch
    page.close()


def _shot(page, name: str) -> None:
    page.screenshot(path=str(artifacts_dir() / f"late-{name}.png"))


def _open_panel(page) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('jax-workbench:open-panel')")
    page.wait_for_selector(PANEL, state="visible", timeout=30_000)
    try:
        page.wait_for_selector(
            f'{PANEL}[data-jwb-state="connected"]', state="attached", timeout=90_000
        )
    except playwright_api.TimeoutError:
        state = page.get_attribute(PANEL, "data-jwb-state")
        raise AssertionError(f"panel not connected: {state}") from None


def _kept(page) -> list[tuple[str | None, str, int]]:
    text = page.evaluate(KEPT_JS)
    assert not text.startswith("ERROR"), text
    return [tuple(x) for x in json.loads(ast.literal_eval(text))]


def _execution_count(page, index: int) -> str:
    return str(
        page.evaluate(f"(i) => {CURRENT_NOTEBOOK}.content.model.cells.get(i).executionCount", index)
    )


def test_panel_opened_after_run_all_charts_every_sample_the_kernel_kept(late):
    page, watch = late
    _open_panel(page)
    kept = _kept(page)
    # the kernel sampled around every cell that ran once JAX was up, with no panel listening
    ends = {cell for cell, when, _ in kept if when == "end"}
    for index in (ALLOC_A, ALLOC_B, DEL_A, BENCH):
        assert _execution_count(page, index) in ends, (index, kept)
    try:
        page.wait_for_function(
            "(n) => Number(document.querySelector('[data-jwb=\"panel\"] .jwb-panel-chart')"
            "?.getAttribute('data-jwb-samples')) === n",
            arg=len(kept),
            timeout=30_000,
        )
    except playwright_api.TimeoutError:
        shown = page.get_attribute(f"{PANEL} .jwb-panel-chart", "data-jwb-samples")
        _shot(page, "memory-failed")
        raise AssertionError(
            f"the chart shows {shown} samples, the kernel kept {len(kept)}"
        ) from None
    # the values: the step path's heights are the kept live bytes on one linear scale
    live = [v for _, _, v in kept]
    ys = page.evaluate(CHART_YS_JS)
    assert ys is not None and len(ys) == len(live)
    hi, lo = max(live), min(live)
    assert hi > lo  # the arrays were allocated and freed
    y_hi, y_lo = ys[live.index(hi)], ys[live.index(lo)]
    per_byte = (y_lo - y_hi) / (hi - lo)
    for v, y in zip(live, ys, strict=True):
        assert abs(y - (y_hi + per_byte * (hi - v))) < 0.2, (v, y, live, ys)
    assert int(page.get_attribute(f"{PANEL} .jwb-panel-live-bytes", "data-jwb-bytes")) == live[-1]
    extent = page.inner_text(f'{PANEL} [data-jwb="memory-extent"]')
    assert f"over {len(kept)} samples" in extent, extent
    # the allocating cells' steps (from the first cell's sample, JAX up) are marked and named
    marks = page.evaluate(
        "() => [...document.querySelectorAll('[data-jwb=\"panel\"] .jwb-panel-chart-mark title')]"
        ".map(t => t.textContent)"
    )
    for index in (ALLOC_A, ALLOC_B):
        assert any(m.startswith(f"[{_execution_count(page, index)}]: +") for m in marks), marks
    _shot(page, "memory")
    assert watch.errors == [], watch.errors


def _bench(page):
    out = page.locator(
        f'.jp-Notebook .jp-Cell >> nth={BENCH} >> .jwb-ext-bench[data-jwb-ready="1"]'
    )
    try:
        out.wait_for(state="attached", timeout=60_000)
    except playwright_api.TimeoutError:
        raise AssertionError("the %jaxbench output was not drawn by the extension") from None
    return out


def _set_theme(page, theme: str) -> None:
    page.evaluate(
        "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme
    )
    light = "true" if "Light" in theme else "false"
    page.wait_for_selector(f'body[data-jp-theme-light="{light}"]', state="attached", timeout=30_000)
    page.wait_for_timeout(1000)


def test_noisy_bench_shows_its_plots_and_warning_unclipped_in_a_narrow_output(late):
    page, watch = late
    _open_panel(page)  # the output area narrows to what is left beside the panel
    page.set_viewport_size({"width": 1100, "height": 1000})
    out = _bench(page)
    out.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    geometry = out.evaluate(CLIPPED_JS)
    assert 300 < geometry["width"] <= NARROW, geometry  # really a narrow output area
    _shot(page, "bench-narrow-light")
    assert geometry["clipped"] == [], geometry

    # in plain view, no click: the histogram, the run-order plot and the warning in words
    samples = int(out.get_attribute("data-samples"))
    assert samples >= 6
    hist = out.locator("svg.jwb-bench-hist")
    run = out.locator("svg.jwb-bench-runorder")
    assert hist.count() == 1 and hist.is_visible() and hist.bounding_box()["height"] >= 40
    assert run.count() == 1 and run.is_visible() and run.bounding_box()["height"] >= 40
    bars = [
        int(c)
        for c in hist.locator("rect[data-count]").evaluate_all(
            "(rs) => rs.map(r => r.getAttribute('data-count'))"
        )
    ]
    assert sum(bars) == samples  # every sample is in a bar
    assert run.locator("circle.jwb-bench-pt").count() == samples  # one point per run
    warnings = out.locator(".jwb-bench-warn")
    assert warnings.count() >= 1 and warnings.first.is_visible()
    text = " ".join(warnings.all_inner_texts())
    assert "recompiled" in text and "during sampling" in text, text
    mark = out.locator(".jwb-bench-warnmark")
    assert mark.is_visible() and "⚠" in mark.inner_text()
    assert "warning" in mark.inner_text().replace("⚠", "").strip(), mark.inner_text()

    # readable in both themes
    for theme in ("JupyterLab Dark", "JupyterLab Light"):
        _set_theme(page, theme)
        res = page.evaluate(CONTRAST_JS, ".jwb-ext-bench")
        assert res["n"] > 0 and not res["unparsed"], res
        assert res["min"] >= 4.5, f"{theme}: contrast below 4.5:1: {res['worst']}"
        _shot(page, f"bench-narrow-{theme.split()[-1].lower()}")
    assert out.evaluate(CLIPPED_JS)["clipped"] == []
    # and just above the narrow layout's threshold (the table's own columns, wrapped) and wide
    page.evaluate("() => window.jupyterapp.shell.collapseRight()")
    page.set_viewport_size({"width": 1800, "height": 1000})
    for width in (920, 1000, None):
        out.evaluate("(e, w) => { e.style.maxWidth = w ? w + 'px' : ''; }", width)
        page.wait_for_timeout(300)
        got = out.evaluate(CLIPPED_JS.replace("root.closest('.jp-OutputArea-output') ||", ""))
        assert got["clipped"] == [], (width, got)
    _shot(page, "bench-wide")
    assert watch.errors == [], watch.errors


#: what holds the keyboard now: inside the bench output? the notebook's mode, the cell's source
FOCUS_JS = f"""(i) => {{
  const nb = {CURRENT_NOTEBOOK}.content, cell = nb.widgets[i], a = document.activeElement;
  const out = cell.node.querySelector('.jwb-ext-bench');
  return {{
    inOutput: !!a && !!out && out.contains(a) && a !== out,
    tag: a ? `${{a.tagName}}.${{a.getAttribute('class') || ''}}` : null,
    label: a ? (a.getAttribute('aria-label') || a.textContent || '').trim().slice(0, 80) : null,
    key: a ? a.getAttribute('data-jwb-control') : null,
    expanded: a ? a.getAttribute('aria-expanded') : null,
    mode: nb.mode,
    editorFocused: !!document.activeElement?.closest('.jp-InputArea-editor, .cm-editor'),
    source: cell.model.sharedModel.getSource(),
  }};
}}"""


def test_every_bench_control_works_from_the_keyboard_without_entering_the_editor(late):
    page, watch = late
    out = _bench(page)
    controls = out.evaluate(
        "(root) => [...root.querySelectorAll('button, summary, [tabindex=\"0\"], a[href], input')]"
        ".filter(e => e.offsetParent !== null).map(e => e.getAttribute('data-jwb-control'))"
    )
    assert controls and all(controls), controls  # every control says what it is
    # keyboard only from the first control on: Tab visits every control, in order, and stays
    out.locator("button, summary").first.focus()
    seen = []
    for _ in range(len(controls)):
        state = page.evaluate(FOCUS_JS, BENCH)
        assert state["inOutput"] and not state["editorFocused"], state
        assert state["label"], state  # labelled
        seen.append(state["key"])
        page.keyboard.press("Tab")
    assert seen == controls, (seen, controls)

    # a folding control works with Enter and with Space, and the keyboard stays on it
    toggle = out.locator("button[aria-expanded]").first
    key = toggle.get_attribute("data-jwb-control")
    toggle.focus()
    before = toggle.get_attribute("aria-expanded")
    for press in ("Enter", " "):
        page.keyboard.press(press)
        page.wait_for_timeout(150)
        state = page.evaluate(FOCUS_JS, BENCH)
        assert state["key"] == key and state["inOutput"], state
        assert state["mode"] == "command" and not state["editorFocused"], state
        assert state["expanded"] != before, state
        before = state["expanded"]
    # a sort button sorts, and the keyboard stays on it through the redraw
    sort = out.locator("button.jwb-bench-sort").first
    sort_key = sort.get_attribute("data-jwb-control")
    sort.focus()
    page.keyboard.press("Enter")
    page.wait_for_timeout(150)
    state = page.evaluate(FOCUS_JS, BENCH)
    assert state["key"] == sort_key and state["inOutput"], state
    assert out.locator("th[aria-sort]").count() == 1
    # typing letters on a control (command-mode shortcuts elsewhere) changes no cell
    page.keyboard.type("ab")
    state = page.evaluate(FOCUS_JS, BENCH)
    assert state["source"] == BENCH_CELL and state["mode"] == "command", state
    assert page.evaluate(f"() => {CURRENT_NOTEBOOK}.content.widgets.length") == len(CELLS)
    _shot(page, "bench-keyboard")
    assert watch.errors == [], watch.errors

"""Per-cell compile badges and live diffs in a real ``jupyter lab`` (Debian chromium).

A 60-cell notebook is run in the browser (the badges come from the kernel's workbench through
the panel's comm link, which writes them into the cells' metadata), in both of JupyterLab 4's
windowing modes that matter: ``full`` (off-screen cells are hidden and their parts taken out
of the DOM) and the default (``contentVisibility``).  The badge must appear under the cells
that compiled, survive scrolling far away and back, survive a reload of the saved notebook
(with a kernel that has no workbench: the badge then comes from the metadata alone), and open
the panel filtered to its cell; in live mode a re-run ``%%jaxpr`` cell with an op added and a
changed input shape shows the diff beside its output, with the counts JAX gives.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import jax
import jax.numpy as jnp
import nbformat

# a hard import: a missing Playwright fails the run (it is a test dependency), never skips
import playwright.sync_api as playwright_api
import pytest

from tests.browser import (
    CONTRAST_JS,
    PageWatch,
    artifacts_dir,
    new_notebook,
    open_notebook,
    run_all_cells,
    scroll_to_cell,
    wait_for_cells_run,
    wait_for_notebook,
)
from tests.browser_fixtures import BROWSER_GROUP_B

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(BROWSER_GROUP_B)]

N_CELLS = 60
LOAD, COMPILE, MISS, JAXPR = 0, 1, 2, 3
# the %%jaxpr cell before and after the edit: one op added, the input shape changed
JAXPR_BEFORE = "%%jaxpr\ndef g(x):\n    return jnp.sin(x) + 1.0\ng(jnp.ones(3))"
JAXPR_AFTER = "%%jaxpr\ndef g(x):\n    return jnp.sin(x) * 2.0 + 1.0\ng(jnp.ones((2, 3)))"
CELLS = [
    "%load_ext workbench\nimport jax, jax.numpy as jnp",
    "f = jax.jit(lambda v: jnp.sin(v) * 2)\ny = f(jnp.ones(3))",
    "y = f(jnp.ones(4))",
    JAXPR_BEFORE,
] + [f"print({i})\n" + "\n".join(f"# filler line {k}" for k in range(5)) for i in range(4, N_CELLS)]

PANEL_ID = "jax-workbench-panel"


def _primitives(src_fn, arg) -> Counter:
    return Counter(e.primitive.name for e in jax.make_jaxpr(src_fn)(arg).jaxpr.eqns)


def _expected_diff() -> tuple[Counter, Counter, int, int]:
    """Added and removed primitives of the %%jaxpr cell's edit, and its equation counts."""
    before = _primitives(lambda x: jnp.sin(x) + 1.0, jnp.ones(3))
    after = _primitives(lambda x: jnp.sin(x) * 2.0 + 1.0, jnp.ones((2, 3)))
    return after - before, before - after, sum(before.values()), sum(after.values())


def _hlo_counts() -> list[tuple[int, int]]:
    """StableHLO ops and fusions (in the compiled entry computation) of the %%hlo cell's
    function before and after the edit, as JAX lowers and compiles them here."""
    x = jnp.ones((4, 8))
    out = []
    for fn in (lambda x: jnp.sin(x) + 1.0, lambda x: (jnp.sin(x) + 1.0) @ x.T):
        lowered = jax.jit(fn).lower(x)
        ops = len(re.findall(r"\bstablehlo\.\w+", lowered.as_text()))
        text = lowered.compile().as_text()
        out.append((ops, text[text.index("ENTRY") :].count(" fusion(")))
    return out


def _hlo_flops() -> tuple[float, float]:
    """XLA's FLOP estimate of the %%hlo cell's function before and after the edit."""
    x = jnp.ones((4, 8))
    out = []
    for fn in (lambda x: jnp.sin(x) + 1.0, lambda x: (jnp.sin(x) + 1.0) @ x.T):
        cost = jax.jit(fn).lower(x).compile().cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        out.append(float(cost["flops"]))
    return out[0], out[1]


_BYTES = re.compile(r"\d+(\.\d)? (B|KiB|MiB|GiB|TiB)")
_FLOPS = re.compile(r"(\d+(?:\.\d+)?) ([kMGTP]?)FLOP")


def _flop_value(text: str) -> float:
    """``127.0 GFLOP`` as a number (the test's reading of the diff's unit)."""
    m = _FLOPS.fullmatch(text)
    assert m, text
    return float(m.group(1)) * 1000.0 ** " kMGTP".index(m.group(2) or " ")


def _set_windowing(server, mode: str | None) -> None:
    """The notebook tracker's windowingMode through the settings API (None: the default)."""
    raw = json.dumps({} if mode is None else {"windowingMode": mode})
    server.api("PUT", "/lab/api/settings/@jupyterlab/notebook-extension:tracker", {"raw": raw})


NB = "window.jupyterapp.shell.currentWidget"


def _cell(page, i: int):
    return page.locator(".jp-Notebook .jp-Cell").nth(i)


def _badge_state(page, i: int) -> dict:
    """What cell i shows: its badges (count, visible, text, title) and where the strip is."""
    return page.evaluate(
        f"""(i) => {{
          const c = {NB}.content.widgets[i];
          const badges = [...c.node.querySelectorAll('.jwb-cell-badge')].filter(b => !b.hidden);
          const b = badges[0];
          const r = b ? b.getBoundingClientRect() : null;
          return {{
            n: badges.length, strips: c.node.querySelectorAll('.jwb-cell-strip').length,
            text: b ? b.textContent : null, title: b ? b.title : null,
            compiles: b ? b.dataset.jwbCompiles : null, misses: b ? b.dataset.jwbMisses : null,
            cell: b ? b.dataset.jwbCell : null, count: c.model.executionCount,
            visible: !!r && r.width > 0 && r.height > 0, inViewport: c.inViewport,
            display: c.node.style.display, id: c.model.id,
            offscreen: (() => {{
              const o = c.node.closest('.jp-WindowedPanel-outer');
              if (!c.node.isConnected || c.node.style.display === 'none' || !o) return true;
              const a = c.node.getBoundingClientRect(), v = o.getBoundingClientRect();
              return a.bottom < v.top || a.top > v.bottom;
            }})(),
            inFooter: !!b && !!b.closest('.jp-CellFooter'),
            meta: c.model.getMetadata('jax-workbench') ?? null,
          }};
        }}""",
        i,
    )


def _shot(page, name: str) -> None:
    page.screenshot(path=str(artifacts_dir() / f"cells-{name}.png"))


def _wait_badges(page, cells: list[int], timeout: float = 60_000) -> None:
    try:
        page.wait_for_function(
            f"(cells) => cells.every(i => [...{NB}.content.widgets[i].node"
            ".querySelectorAll('.jwb-cell-badge')].some(b => !b.hidden))",
            arg=cells,
            timeout=timeout,
        )
    except playwright_api.TimeoutError:
        raise AssertionError(f"no badge: {[_badge_state(page, i) for i in cells]}") from None


@pytest.mark.parametrize("mode", ["full", None], ids=["windowing-full", "windowing-default"])
def test_badges_survive_windowing_reload_and_open_the_panel(browser, lab, mode):
    name = f"cells-{mode or 'default'}.ipynb"
    nb = new_notebook(CELLS)
    nbformat.write(nb, lab.root / name)
    _set_windowing(lab, mode)

    page, watch = open_notebook(browser, lab, name)
    assert page.evaluate(f"() => {NB}.content.notebookConfig.windowingMode") == (
        mode or "contentVisibility"
    )
    run_all_cells(page)
    scroll_to_cell(page, 0)  # run-all left the notebook at its end
    _wait_badges(page, [COMPILE, MISS])
    first = _badge_state(page, COMPILE)
    miss = _badge_state(page, MISS)
    _shot(page, f"{mode or 'default'}-badges")
    # the kernel's own numbers, as the link stored them in the cell's metadata
    for st in (first, miss):
        b = st["meta"]["badge"]
        assert st["cell"] == b["cell"] == str(st["count"])
        assert st["compiles"] == str(b["compiles"]) and b["compiles"] >= 1
        assert st["inFooter"] and st["n"] == 1 and st["strips"] == 1
    assert miss["misses"] == "1" and "1 miss: " in miss["text"]
    reason = miss["meta"]["badge"]["first_reason"]
    assert reason and reason in miss["title"]  # the full reason, as text
    # cells that compiled nothing have no badge
    for i in (LOAD, 10, 30):
        assert _badge_state(page, i)["n"] == 0

    # far away and back
    scroll_to_cell(page, N_CELLS - 1)
    away = _badge_state(page, COMPILE)
    assert away["offscreen"], away
    if mode == "full":
        assert not away["inViewport"]
        assert away["display"] == "none"  # windowed out: hidden, its parts out of the DOM
        assert page.evaluate(f"() => {NB}.content.widgets[{COMPILE}].node.children.length") == 1
    scroll_to_cell(page, 0)
    page.wait_for_function(f"() => {NB}.content.widgets[{COMPILE}].inViewport")
    _wait_badges(page, [COMPILE, MISS])
    for i, before in ((COMPILE, first), (MISS, miss)):
        back = _badge_state(page, i)
        assert back["visible"] and back["inFooter"] and back["n"] == 1 and back["strips"] == 1, back
        assert back["text"] == before["text"]
    _shot(page, f"{mode or 'default'}-back")

    # the badge opens the panel filtered to its cell
    _cell(page, MISS).locator(".jwb-cell-badge").click()
    chip = page.locator(f"#{PANEL_ID} [data-jwb='cell-filter']")
    chip.wait_for(state="visible", timeout=15_000)
    assert chip.get_attribute("data-jwb-cell-id") == miss["id"]
    _shot(page, f"{mode or 'default'}-panel")

    # save, stop the kernel, reload: the badges come back from the saved metadata alone
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(f"() => !{NB}.context.model.dirty", timeout=30_000)
    saved = nbformat.read(lab.root / name, as_version=4)
    for i in (COMPILE, MISS):
        assert saved.cells[i].metadata["jax-workbench"]["badge"]["cell"] == str(
            saved.cells[i].execution_count
        )
    assert "jax-workbench" not in saved.cells[LOAD].metadata
    assert watch.errors == [], watch.errors
    assert watch.external == [], watch.external
    page.close()
    lab.shutdown_kernels()

    page, watch = open_notebook(browser, lab, name)
    _wait_badges(page, [COMPILE, MISS])
    for i, before in ((COMPILE, first), (MISS, miss)):
        again = _badge_state(page, i)
        assert again["text"] == before["text"] and again["visible"], again
    scroll_to_cell(page, N_CELLS - 1)
    scroll_to_cell(page, 0)
    _wait_badges(page, [COMPILE, MISS])
    _shot(page, f"{mode or 'default'}-reloaded")
    assert watch.errors == [], watch.errors
    assert watch.external == [], watch.external
    page.close()
    lab.shutdown_kernels()

    if mode is None:  # Notebook 7's notebook page: the same cells, the same badges
        # the page errors Notebook 7 reports by itself, on a notebook without outputs
        own_errors = lab.notebook7_own_errors(browser)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        watch = PageWatch(page, lab.base)
        page.goto(lab.notebook7_url(name))
        wait_for_notebook(page)
        for i, before in ((COMPILE, first), (MISS, miss)):  # (through the page, not the app)
            badge = _cell(page, i).locator(".jwb-cell-badge:not([hidden])")
            badge.wait_for(state="visible", timeout=30_000)
            assert badge.text_content() == before["text"]
        _shot(page, "notebook7")
        assert set(watch.errors) <= own_errors, (watch.errors, own_errors)
        assert watch.external == [], watch.external
        page.close()
        lab.shutdown_kernels()


HLO_BEFORE = "%%hlo\ndef k(x):\n    return jnp.sin(x) + 1.0\nk(jnp.ones((4, 8)))"
HLO_AFTER = "%%hlo\ndef k(x):\n    return (jnp.sin(x) + 1.0) @ x.T\nk(jnp.ones((4, 8)))"
EVIL = "<img src=x onerror=alert(1)>"
# a recompile whose reason quotes a static argument's value: kernel text with HTML in it
EVIL_CELL = f"h = jax.jit(lambda v, s: v, static_argnums=1)\nh(1.0, 'a')\nh(1.0, {EVIL!r})"


def test_live_mode_shows_the_diff_of_a_rerun_jaxpr_cell(browser, lab):
    name = "cells-live.ipynb"
    nb = new_notebook([*CELLS[: JAXPR + 1], EVIL_CELL, HLO_BEFORE])
    hlo = JAXPR + 2
    nbformat.write(nb, lab.root / name)
    _set_windowing(lab, None)
    page, watch = open_notebook(browser, lab, name)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    run_all_cells(page)
    page.wait_for_selector(
        f".jp-Notebook .jp-Cell >> nth={JAXPR} >> .jwb-ext-jaxpr", timeout=60_000
    )

    # kernel text is text: the reason quoting the static argument shows its markup as characters
    _wait_badges(page, [JAXPR + 1])
    evil = _badge_state(page, JAXPR + 1)
    assert EVIL in evil["title"] and evil["misses"] == "1", evil
    assert _cell(page, JAXPR + 1).locator(".jwb-cell-strip img").count() == 0
    # the badge works from the keyboard too (a button: Enter presses it)
    _cell(page, JAXPR + 1).locator(".jwb-cell-badge").focus()
    page.keyboard.press("Enter")
    chip = page.locator(f"#{PANEL_ID} [data-jwb='cell-filter']")
    chip.wait_for(state="visible", timeout=15_000)
    assert chip.get_attribute("data-jwb-cell-id") == evil["id"]
    assert page.evaluate(f"() => {NB}.content.mode") == "command"

    # a re-run that compiles nothing (f is cached for f32[4]) clears the cell's badge
    assert _badge_state(page, MISS)["n"] == 1
    page.evaluate(f"""() => {{ {NB}.content.activeCellIndex = {MISS};
        return window.jupyterapp.commands.execute('notebook:run-cell'); }}""")
    wait_for_cells_run(page)
    page.wait_for_timeout(1000)  # the kernel's end-of-cell flush has come and gone
    cached = _badge_state(page, MISS)
    assert cached["n"] == 0 and cached["strips"] == 0, cached
    # what the cell stores for that run: nothing, or the kernel's all-zero badge of it
    stored = (cached["meta"] or {}).get("badge")
    assert stored is None or (
        stored["cell"] == str(cached["count"])
        and stored["compiles"] == 0
        and stored["traces"] == 0
        and stored["lowers"] == 0
    ), cached
    # live mode on, through the panel's toggle
    page.evaluate("() => window.jupyterapp.commands.execute('jax-workbench:open-panel')")
    toggle = page.locator(f"#{PANEL_ID} input[data-jwb='live-mode']")
    toggle.wait_for(state="visible", timeout=15_000)
    if not toggle.is_checked():
        toggle.check()
    assert (
        _cell(page, JAXPR).locator(".jwb-live-diff:not([hidden])").count() == 0
    )  # first run: nothing to diff

    page.evaluate(
        f"""(src) => {{
        const nb = {NB}.content;
        nb.widgets[{JAXPR}].model.sharedModel.setSource(src);
        nb.activeCellIndex = {JAXPR};
        return window.jupyterapp.commands.execute('notebook:run-cell');
    }}""",
        JAXPR_AFTER,
    )
    wait_for_cells_run(page)
    diff = _cell(page, JAXPR).locator(".jwb-live-diff:not([hidden])")
    diff.wait_for(state="visible", timeout=30_000)
    added, removed, eq_before, eq_after = _expected_diff()
    got_added: Counter = Counter()
    for row in diff.locator(".jwb-live-added .jwb-live-group").all():
        got_added[row.locator(".jwb-live-what").inner_text()] += int(
            row.locator(".jwb-live-count").inner_text().lstrip("+")
        )
    got_removed: Counter = Counter()
    for row in diff.locator(".jwb-live-removed .jwb-live-group").all():
        got_removed[row.locator(".jwb-live-what").inner_text()] += int(
            row.locator(".jwb-live-count").inner_text().lstrip("−")
        )
    assert got_added == added, (got_added, added)
    assert got_removed == removed, (got_removed, removed)
    summary = diff.locator(".jwb-live-summary").inner_text()
    assert f"equations {eq_before} → {eq_after}" in summary, summary
    # beside the new output, in the same cell, after it
    assert page.evaluate(
        f"""() => {{ const c = {NB}.content.widgets[{JAXPR}].node;
        const out = c.querySelector('.jp-Cell-outputWrapper'), d = c.querySelector('.jwb-live-diff');
        return !!(out.compareDocumentPosition(d) & Node.DOCUMENT_POSITION_FOLLOWING); }}"""
    )
    _shot(page, "live-diff")

    # an %%hlo cell too: its diff is of instructions and fusions
    page.evaluate(
        f"""(src) => {{
        const nb = {NB}.content;
        nb.widgets[{hlo}].model.sharedModel.setSource(src);
        nb.activeCellIndex = {hlo};
        return window.jupyterapp.commands.execute('notebook:run-cell');
    }}""",
        HLO_AFTER,
    )
    wait_for_cells_run(page)
    hdiff = _cell(page, hlo).locator(".jwb-live-diff:not([hidden])")
    hdiff.wait_for(state="visible", timeout=60_000)
    assert hdiff.get_attribute("data-jwb-kind") == "hlo"
    rows = {
        r.locator("th").inner_text(): (
            r.locator(".jwb-live-before").inner_text(),
            r.locator(".jwb-live-after").inner_text(),
        )
        for r in hdiff.locator(".jwb-live-totals tr").all()
    }
    (ops_before, fus_before), (ops_after, fus_after) = _hlo_counts()
    assert rows["StableHLO ops"] == (str(ops_before), str(ops_after)), rows
    assert rows["fusions"] == (str(fus_before), str(fus_after)), rows
    assert hdiff.locator(".jwb-live-added .jwb-live-group").count() >= 1  # the dot's fusion
    # lines are named with their cell, as the user reads it (the cell's prompt number now)
    number = page.evaluate(f"() => {NB}.content.widgets[{hlo}].model.executionCount")
    sites = hdiff.locator(".jwb-live-line").all_inner_texts()
    assert sites and all(t.startswith(f"cell [{number}] line ") for t in sites if t), sites
    # numbers with their units: bytes in binary units, FLOPs with an SI prefix
    flops_before, flops_after = _hlo_flops()
    assert _flop_value(rows["estimated flops"][0]) == pytest.approx(flops_before, rel=0.05), rows
    assert _flop_value(rows["estimated flops"][1]) == pytest.approx(flops_after, rel=0.05), rows
    for name, (b, a) in rows.items():
        if name.startswith("memory") or name == "estimated bytes":
            assert _BYTES.fullmatch(b) and _BYTES.fullmatch(a), (name, b, a)
    hdiff.scroll_into_view_if_needed()
    _shot(page, "live-diff-hlo")
    for theme in ("JupyterLab Dark", "JupyterLab Light"):
        page.evaluate(
            "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme
        )
        light = "true" if "Light" in theme else "false"
        page.wait_for_selector(
            f'body[data-jp-theme-light="{light}"]', state="attached", timeout=30_000
        )
        # the theme's stylesheet is in force (the attribute changes before it loads)
        page.wait_for_function(
            "(bg) => getComputedStyle(document.body).getPropertyValue('--jp-layout-color0')"
            ".trim().toLowerCase() === bg",
            arg="#111" if light == "false" else "white",
            timeout=30_000,
        )
        page.wait_for_timeout(500)
        _shot(page, f"live-diff-{theme.split()[-1].lower()}")
        res = page.evaluate(CONTRAST_JS, ".jwb-cell-strip")
        assert res["n"] > 0 and not res["unparsed"], res
        assert res["min"] >= 4.5, f"{theme}: {res['worst']}"

    # a moved cell (the notebook re-creates or re-inserts its widget) keeps its badge
    before = _badge_state(page, JAXPR + 1)
    page.evaluate(f"""() => {{ {NB}.content.activeCellIndex = {JAXPR + 1};
        return window.jupyterapp.commands.execute('notebook:move-cell-up'); }}""")
    page.wait_for_function(
        f"(id) => {NB}.content.widgets[{JAXPR}].model.id === id", arg=before["id"]
    )
    _wait_badges(page, [JAXPR])
    moved = _badge_state(page, JAXPR)
    assert moved["text"] == before["text"] and moved["strips"] == 1 and moved["inFooter"], moved

    # a copy pasted below keeps the original's outputs, count and metadata (its badge included)
    # under a new id: that badge is the original's run, so the copy shows none
    page.evaluate(f"""async () => {{ {NB}.content.activeCellIndex = {JAXPR};
        await window.jupyterapp.commands.execute('notebook:copy-cell');
        return window.jupyterapp.commands.execute('notebook:paste-cell-below'); }}""")
    page.wait_for_function(f"() => {NB}.content.widgets.length === {hlo + 2}")
    page.wait_for_timeout(500)
    pasted = _badge_state(page, JAXPR + 1)
    assert pasted["id"] != before["id"] and pasted["count"] == before["count"], pasted
    assert pasted["meta"]["badge"]["cell_id"] == before["id"], pasted  # what made it stale
    assert pasted["n"] == 0 and pasted["strips"] == 0, pasted
    assert _badge_state(page, JAXPR)["text"] == before["text"]

    # live mode off: the diff goes
    assert page.locator(".jwb-live-diff:not([hidden])").count() == 2  # the %%jaxpr and %%hlo cells
    toggle.uncheck()
    page.wait_for_function(
        "() => ![...document.querySelectorAll('.jwb-live-diff')].some(d => !d.hidden)",
        timeout=10_000,
    )
    assert watch.errors == [], watch.errors
    assert watch.external == [], watch.external
    assert dialogs == []  # no onerror=alert ran
    page.close()
    lab.shutdown_kernels()


def _stored_badge(cell_id: str, count: int, compiles: int) -> dict:
    """A badge as the link stores it (the kernel's `cell_badge`), for a notebook written here."""
    return {
        "cell": str(count),
        "cell_id": cell_id,
        "run": count,
        "t": 1.7e9 + count,
        "compiles": compiles,
        "traces": compiles,
        "lowers": compiles,
        "compile_s": 0.25,
        "misses": 0,
        "first_reason": None,
        "persistent_hits": 0,
        "inspections": 0,
    }


def test_badges_in_two_views_through_type_change_delete_and_undo(browser, lab):
    """Two views of one notebook share its cells' models: each view has its own strips, one per
    cell; a cell turned markdown and back (no outputs, no count) shows none; a deleted cell
    brought back by undo shows its badge again; closing one view leaves the other intact.
    The badges come from saved metadata (no kernel work needed)."""
    name = "cells-views.ipynb"
    nb = new_notebook([f"x{i} = {i}" for i in range(3)])
    for i, c in enumerate(nb.cells[:2]):
        c.execution_count = 5 + i
        c.metadata["jax-workbench"] = {"badge": _stored_badge(c.id, 5 + i, 1 + i)}
    nbformat.write(nb, lab.root / name)
    _set_windowing(lab, None)
    page, watch = open_notebook(browser, lab, name)
    _wait_badges(page, [0, 1])
    first = page.evaluate(f"() => {NB}.id")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:clone')")
    page.wait_for_function(
        f"(id) => {NB}.id !== id && {NB}.content.widgets.length === 3", arg=first
    )
    _wait_badges(page, [0, 1])

    views_js = """() => {
        const views = [...window.jupyterapp.shell.widgets('main')].filter(w => w.content?.widgets);
        return views.map(v => v.content.widgets.map(c => ({
            strips: c.node.querySelectorAll('.jwb-cell-strip').length,
            shown: [...c.node.querySelectorAll('.jwb-cell-badge')].filter(b => !b.hidden).length,
            compiles: c.node.querySelector('.jwb-cell-badge:not([hidden])')?.dataset.jwbCompiles ?? null,
            type: c.model.type, id: c.model.id, count: c.model.executionCount ?? null,
            meta: c.model.getMetadata('jax-workbench')?.badge?.cell_id ?? null })));
    }"""
    views = page.evaluate(views_js)
    assert len(views) == 2, views
    for v in views:
        assert [c["shown"] for c in v] == [1, 1, 0] and [c["strips"] for c in v] == [1, 1, 0], views
        assert [c["compiles"] for c in v] == ["1", "2", None], views
    # showing badges writes nothing (the notebook's own metadata gains language_info from the
    # kernel, so compare the cells)
    cells_now = (
        page.evaluate(f"""() => {NB}.context.model.toJSON().cells.map(c => {{
        const {{ trusted, ...rest }} = c.metadata; return [c.id, rest]; }})""")
    )  # trusted: the session's
    assert cells_now == [[c.id, dict(c.metadata)] for c in nb.cells], cells_now

    # cell 1 deleted, then brought back by undo
    page.evaluate(f"""() => {{ {NB}.content.activeCellIndex = 1;
        return window.jupyterapp.commands.execute('notebook:delete-cell'); }}""")
    page.wait_for_function(f"() => {NB}.content.widgets.length === 2")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:undo-cell-action')")
    page.wait_for_function(f"() => {NB}.content.widgets.length === 3")
    page.wait_for_timeout(500)
    # cell 0 to markdown and back: a new code cell with no outputs and no count shows no badge
    for cmd, kind in (
        ("notebook:change-cell-to-markdown", "markdown"),
        ("notebook:change-cell-to-code", "code"),
    ):
        page.evaluate(
            f"""(cmd) => {{ {NB}.content.activeCellIndex = 0; {NB}.content.mode = 'command';
            return window.jupyterapp.commands.execute(cmd); }}""",
            cmd,
        )
        page.wait_for_function(f"(t) => {NB}.content.widgets[0].model.type === t", arg=kind)
        page.wait_for_timeout(300)
    views = page.evaluate(views_js)
    for v in views:
        assert [c["type"] for c in v] == ["code"] * 3, views
        assert [c["shown"] for c in v] == [0, 1, 0] and [c["strips"] for c in v] == [0, 1, 0], views
        assert v[1]["compiles"] == "2", views

    # the clone closed: the first view keeps its strips
    page.evaluate(f"() => {NB}.dispose()")
    page.wait_for_function(f"(id) => {NB}?.id === id", arg=first)
    views = page.evaluate(views_js)
    assert len(views) == 1 and [c["shown"] for c in views[0]] == [0, 1, 0], views
    assert watch.errors == [], watch.errors
    assert watch.external == [], watch.external
    page.close()
    lab.shutdown_kernels()

"""The mesh explorer as a user meets it: ``workbench.mesh_explorer()`` in a real JupyterLab.

One notebook (the user's mesh, a sharded array, a plain cell function, a ``jax.jit`` one and
a library function imported by name, then the explorer) runs in the page's own kernel on
the shared JupyterLab server of the other mesh tests (``lab``, group A); one page serves
every test here, in order.  Each test checks one thing a user saw go wrong: the function
picker's default, the notebook's mesh and arrays offered, JAX's error next to the field
that caused it, tables cut at the output's edge, unreadable controls in the Dark theme,
and a keyboard user's path through the controls (focus never in a cell editor).
"""

from __future__ import annotations

from typing import Any

import jax
import nbformat
import pytest

from tests.browser import (
    CONTRAST_JS,
    PageWatch,
    artifacts_dir,
    new_notebook,
    run_all_cells,
    scroll_to_cell,
    wait_for_notebook,
)
from tests.browser_fixtures import BROWSER_GROUP_A
from workbench.apps.mesh_explorer import TEXT_FIELDS
from workbench.engine.sharding.mesh_explorer import (
    ExplorerConfig,
    explore,
    mesh_fields,
    short_error,
    spec_text,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.notebook,
    pytest.mark.xdist_group(BROWSER_GROUP_A),
]

USER_CELL = """\
import jax, jax.numpy as jnp
from jax.numpy import cumsum
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((4, 2), ('batch', 'hidden'))
x = jax.device_put(jnp.ones((64, 32), jnp.bfloat16), NamedSharding(mesh, P('batch', None)))
def loss(v):
    return (v * 2).sum()
step = jax.jit(lambda v: v @ v.T)"""
EXPLORER_CELL = "import workbench\nworkbench.mesh_explorer()"
OUT = ".jp-OutputArea-output"
PICTURE = f'{OUT} [data-jwb="layout-svg"]'

#: the user's mesh and array, built here as the notebook builds them (8 fake CPU devices)
MESH_SHAPE, MESH_AXES = (4, 2), ("batch", "hidden")
X_SHAPE, X_SPEC = (64, 32), ("batch", None)


def _input(page: Any, placeholder: str) -> Any:
    return page.locator(f'{OUT} input[placeholder="{placeholder}"]').first


def _select(page: Any, label: str) -> Any:
    """The ``<select>`` of the control labelled ``label`` (Panel: label and select share a
    shadow root; Playwright's CSS engine pierces it)."""
    return page.locator(f"{OUT} .bk-input-group:has(> label:text-is('{label}')) select").first


def _message(page: Any) -> str:
    return page.locator(f'{OUT} [data-jwb="message"]').first.inner_text()


def _wait_message(page: Any, cls: str, timeout: float = 60_000) -> None:
    page.wait_for_selector(f'{OUT} [data-jwb="message"].{cls}', timeout=timeout)


def _set_theme(page: Any, theme: str) -> None:
    page.evaluate(
        "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme
    )
    light = "true" if "Light" in theme else "false"
    page.wait_for_selector(f'body[data-jp-theme-light="{light}"]', state="attached", timeout=30_000)
    page.wait_for_timeout(1000)


@pytest.fixture(scope="module")
def page(browser, lab):
    nbformat.write(new_notebook([USER_CELL, EXPLORER_CELL]), lab.root / "explorer-user.ipynb")
    pg = browser.new_page(viewport={"width": 1400, "height": 1000})
    watch = PageWatch(pg, lab.base)
    pg.goto(lab.lab_url("explorer-user.ipynb"))
    wait_for_notebook(pg)
    pg.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel",
        timeout=60_000,
    )
    run_all_cells(pg)
    pg.wait_for_selector(PICTURE, state="visible", timeout=90_000)
    pg.wait_for_timeout(500)
    yield pg
    assert [e for e in watch.errors if "mesh" in e.lower() or "panel" in e.lower()] == []
    assert watch.external == [], watch.external
    pg.close()


def test_function_picker_defaults_to_the_users_jitted_function(page):
    fn = _select(page, "function from the notebook")
    options = fn.evaluate("s => [...s.options].map(o => o.textContent)")
    # the notebook's own functions, jax.jit ones first: never IPython's `open`, never
    # `cumsum` (a jax.numpy function imported by name), never a module
    assert options == ["step", "loss"], options
    assert fn.input_value() == "step"


def test_pickers_offer_the_notebooks_mesh_and_array(page):
    mesh = jax.make_mesh(MESH_SHAPE, MESH_AXES)
    x_sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*X_SPEC))
    mesh_pick = _select(page, "mesh from the notebook")
    array_pick = _select(page, "array from the notebook")
    assert mesh_pick.input_value().startswith("mesh: Mesh('batch': 4, 'hidden': 2)")
    assert array_pick.input_value().startswith("x: bfloat16[64, 32]")
    # picked at the start: the controls show the user's mesh and x's shape, dtype, sharding
    assert _input(page, "mesh shape").input_value() == ", ".join(map(str, MESH_SHAPE))
    assert _input(page, "axis names").input_value() == ", ".join(MESH_AXES)
    assert _input(page, "array shape").input_value() == ", ".join(map(str, X_SHAPE))
    assert _select(page, "dtype").input_value() == "bfloat16"
    assert _input(page, "array spec").input_value() == spec_text(x_sharding.spec, len(X_SHAPE))
    # and the picture is x's layout: as many distinct shards as JAX makes of it
    shards = {str(i) for i in x_sharding.devices_indices_map(X_SHAPE).values()}
    head = page.locator(f'{OUT} [data-jwb="layout-svg"]').first.evaluate(
        "el => el.closest('.jwb-sh, .jwb').innerText"
    )
    assert f"{len(shards)} shards of bfloat16[{X_SHAPE[0] // MESH_SHAPE[0]}, {X_SHAPE[1]}]" in head


def test_bad_spec_shows_jaxs_error_under_its_field_until_fixed(page):
    mesh = jax.make_mesh(MESH_SHAPE, MESH_AXES)
    try:
        jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch", "batch"))
    except Exception as exc:  # what JAX itself says of this spec
        jax_said = short_error(exc)
    else:
        pytest.fail("JAX accepted P('batch', 'batch')")
    spec = _input(page, "array spec")
    spec.fill("batch, batch")
    spec.press("Enter")
    err = page.locator(f'{OUT} [data-jwb="field-error"][data-field="spec"]')
    err.wait_for(state="visible", timeout=60_000)
    assert err.inner_text() == jax_said
    assert err.get_attribute("role") == "alert"
    # next to the field: just under it, aligned with it
    box, ebox = spec.bounding_box(), err.bounding_box()
    assert box and ebox and 0 <= ebox["y"] - (box["y"] + box["height"]) < 40
    assert abs(ebox["x"] - box["x"]) < 30
    # the field is marked invalid (its border in the theme's error colour) and only it
    assert page.locator(f"{OUT} .jwb-invalid").count() == 1
    error_color = err.evaluate("e => getComputedStyle(e).color")
    assert spec.evaluate("e => getComputedStyle(e).borderTopColor") == error_color
    _wait_message(page, "jwb-error")  # the panes update one by one over the comm
    assert "last good state" in _message(page)
    page.screenshot(path=str(artifacts_dir() / "mesh-explorer-field-error.png"))
    spec.fill(", ".join("None" if a is None else a for a in X_SPEC))
    spec.press("Enter")
    _wait_message(page, "jwb-ok")
    err.wait_for(state="hidden", timeout=30_000)
    page.locator(f"{OUT} .jwb-invalid").wait_for(state="detached", timeout=30_000)
    assert spec.evaluate("e => getComputedStyle(e).borderTopColor") != error_color


#: For each table of the explorer's output: its name, how many pixels of it are cut off
#: (by a box that clips without scrolling) or painted past the output area's right edge, and
#: how many are hidden in a scroll box (to be scrolled to). A scroll container between the
#: table and a clipping box makes the rest reachable: hidden, not cut.
_TABLES_CUT_JS = """out => {
  const up = n => n.parentElement || (n.getRootNode() && n.getRootNode().host) || null;
  const deep = (root, sel) => {
    const found = [...root.querySelectorAll(sel)];
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) found.push(...deep(e.shadowRoot, sel));
    return found;
  };
  const outRight = out.getBoundingClientRect().right;
  return deep(out, 'table').filter(t => t.getClientRects().length).map(t => {
    const full = t.getBoundingClientRect().right;
    let right = full, cut = 0, scrolled = 0;
    for (let n = up(t); n && n !== out; n = up(n)) {
      const ox = getComputedStyle(n).overflowX;
      if (ox === 'visible') continue;
      const edge = n.getBoundingClientRect().right;
      if (ox === 'auto' || ox === 'scroll') {
        scrolled = Math.max(scrolled, n.scrollWidth - n.clientWidth, right - edge);
        right = Math.min(right, edge);
      } else if (right > edge + 1) { cut = Math.max(cut, right - edge); right = edge; }
    }
    return [t.getAttribute('data-jwb') || t.closest('details') && 'per device' || t.className,
            Math.round(cut), Math.round(Math.max(0, right - outRight)), Math.round(scrolled)];
  });
}"""


def _tables(page: Any) -> list[list]:
    out = page.locator(OUT).filter(has=page.locator('[data-jwb="layout-svg"]')).first
    found = out.evaluate(_TABLES_CUT_JS)
    assert any(name == "per device" for name, *_ in found), found
    return found


def test_tables_whole_where_there_is_room_and_never_cut(page):
    operation = _select(page, "operation")
    operation.select_option("matmul")
    page.wait_for_selector(f'{OUT} [data-jwb="collectives"]', timeout=90_000)
    try:
        # a wide window: every table whole, none hidden in a scroll box (the inputs' and the
        # outputs' columns were half the view each: the per-device tables cut to that)
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.wait_for_timeout(800)
        page.locator(PICTURE).first.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir() / "mesh-explorer-wide.png"))
        found = _tables(page)
        assert [t for t in found if t[1] > 1 or t[2] > 1 or t[3] > 1] == [], found
        # a narrow one: tables may scroll in a box of their own, never be cut or overflow
        page.set_viewport_size({"width": 900, "height": 1000})
        page.wait_for_timeout(800)
        page.locator(PICTURE).first.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir() / "mesh-explorer-narrow.png"))
        found = _tables(page)
        assert [t for t in found if t[1] > 1 or t[2] > 1] == [], found
    finally:
        page.set_viewport_size({"width": 1400, "height": 1000})


#: CONTRAST_JS through Panel's shadow roots (each control is a shadow host), with the
#: value of an input or select counted as its text (what a user reads in a field)
_DEEP = {
    "for (let e = el; e; e = e.parentElement)": (
        "for (let e = el; e; e = e.parentElement || (e.getRootNode() && e.getRootNode().host))"
    ),
    "for (const root of document.querySelectorAll(selector)) {\n"
    "    for (const el of [root, ...root.querySelectorAll('*')]) {": (
        "const all = (r) => { const f = []; const visit = (n) => {"
        " for (const c of [...n.children, ...(n.shadowRoot ? n.shadowRoot.children : [])])"
        " { f.push(c); visit(c); } }; visit(r); return f; };\n"
        "  for (const root of all(document).filter(e => e.matches(selector))) {\n"
        "    for (const el of [root, ...all(root)]) {"
    ),
    "const own = [...el.childNodes]": (
        "const own = (el.tagName === 'INPUT' || el.tagName === 'SELECT') ? String(el.value) :"
        " [...el.childNodes]"
    ),
}
DEEP_CONTRAST_JS = CONTRAST_JS
for _old, _new in _DEEP.items():
    assert _old in DEEP_CONTRAST_JS, _old  # CONTRAST_JS changed: update the adaptation
    DEEP_CONTRAST_JS = DEEP_CONTRAST_JS.replace(_old, _new)


@pytest.mark.parametrize("theme", ["JupyterLab Dark", "JupyterLab Light"])
def test_controls_readable_in_light_and_dark(page, theme):
    _set_theme(page, theme)
    scroll_to_cell(page, 1)
    name = theme.split()[-1].lower()
    page.screenshot(path=str(artifacts_dir() / f"mesh-explorer-{name}.png"))
    _mark_host(page, f'{OUT} input[placeholder="mesh shape"]', "", "data-jwb-controls")
    _mark_host(page, PICTURE, "markup-HTML", "data-jwb-view")
    res = page.evaluate(DEEP_CONTRAST_JS, "[data-jwb-controls]")
    # the headings, labels and the values in the fields, all read (several per control)
    assert res["n"] >= 20, res
    assert not res["unparsed"], res["unparsed"]
    assert res["min"] >= 4.5, f"{theme}: {res['worst']}"
    view = page.evaluate(DEEP_CONTRAST_JS, "[data-jwb-view]")
    assert view["n"] > 0 and not view["unparsed"], view
    assert view["min"] >= 4.5, f"{theme}: {view['worst']}"


def _mark_host(page: Any, selector: str, cls: str, attr: str) -> None:
    """Mark a shadow host above ``selector``'s element: the nearest whose class names hold
    ``cls``, or for ``cls=""`` the outermost that does not also hold the picture (the
    controls' column)."""
    page.locator(selector).first.evaluate(
        """(el, [cls, attr]) => {
          const up = n => n.parentElement || (n.getRootNode() && n.getRootNode().host) || null;
          const pic = document.querySelector('.jp-OutputArea-output') && (() => {
            const all = (r) => { const f = []; const visit = (n) => {
              for (const c of [...n.children, ...(n.shadowRoot ? n.shadowRoot.children : [])])
              { f.push(c); visit(c); } }; visit(r); return f; };
            return all(document).find(e => e.getAttribute('data-jwb') === 'layout-svg');
          })();
          const above = new Set();
          for (let n = pic; n; n = up(n)) above.add(n);
          let prev = el;
          for (let n = up(el); n; prev = n, n = up(n)) {
            if (cls ? String(n.className).includes(cls) : above.has(n)) {
              (cls ? n : prev).setAttribute(attr, '');
              return;
            }
          }
          throw new Error('no host above');
        }""",
        [cls, attr],
    )


_FOCUSED_JS = """() => {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  const top = document.activeElement;
  const inEditor = !!top.closest('.jp-InputArea-editor, .cm-editor');
  return [a.tagName, a.getAttribute('placeholder') || '', inEditor,
          !!top.closest('.jp-OutputArea-output')];
}"""


def test_every_control_works_from_the_keyboard(page):
    cells = "() => window.jupyterapp.shell.currentWidget.content.widgets.length"
    n_cells = page.evaluate(cells)
    _select(page, "mesh from the notebook").focus()
    seen = []
    # Tab through every control in order, from the first, staying out of the cell editor
    for _ in range(40):
        tag, placeholder, in_editor, in_output = page.evaluate(_FOCUSED_JS)
        assert not in_editor, seen
        if not in_output:
            break
        seen.append((tag, placeholder))
        page.keyboard.press("Tab")
    # every text field in order, then the picture's own controls (its "per device" details)
    assert [ph for tag, ph in seen if tag == "INPUT"] == [ph for _, ph, _ in TEXT_FIELDS], seen
    # mesh, array, dtype, operation, reduction, function
    assert [tag for tag, _ in seen].count("SELECT") == 6, seen
    # the operation picked with the arrow keys: matmul is the option after "layout"
    operation = _select(page, "operation")
    operation.focus()
    page.keyboard.press("Home")
    page.wait_for_selector(f'{OUT} [data-jwb="collectives"]', state="detached", timeout=60_000)
    page.keyboard.press("ArrowDown")
    page.wait_for_selector(f'{OUT} [data-jwb="collectives"]', timeout=90_000)
    assert operation.input_value() == "matmul"
    _input(page, "array spec").focus()
    # typing in a field: letters a command-mode notebook would take as commands ('a', 'b',
    # 'd d', 'm') go into the field; Enter applies it and keeps the focus there
    page.keyboard.press("Control+a")
    page.keyboard.type("hidden, None")
    page.keyboard.press("Enter")
    typed = explore(
        ExplorerConfig.default(
            len(jax.devices()),
            **{k: v for k, v in mesh_fields(jax.make_mesh(MESH_SHAPE, MESH_AXES)).items()},
            shape=", ".join(map(str, X_SHAPE)),
            spec="hidden, None",
        )
    ).inputs[0]
    page.locator(OUT).get_by_text(typed.spec_text).first.wait_for(timeout=60_000)
    tag, placeholder, in_editor, _ = page.evaluate(_FOCUSED_JS)
    assert (tag, placeholder, in_editor) == ("INPUT", "array spec", False)
    page.keyboard.press("Escape")
    assert not page.evaluate(_FOCUSED_JS)[2]
    assert page.evaluate(cells) == n_cells

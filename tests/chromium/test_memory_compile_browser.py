"""``%%jaxmem``, ``%%jaxprof --compile`` and ``%jaxmem`` on real models, in a real JupyterLab.

The memory cells are hlo24.ipynb's last ones (``MEM24_*`` in tests/browser.py: the kernel
already holds the 24-block transformer): the 24-block gradient's peak, an NNX train step with
optax, an Equinox model and its train step.  The 24-block gradient's ``%%jaxprof --compile``
is compile24.ipynb (``COMPILE24_CELLS``): it measures a compile, so its kernel keeps XLA's
defaults, where hlo24.ipynb's compiles with LLVM at -O0 (buffer assignment and
``memory_analysis`` are the same either way: tests/project/test_notebook_kernels.py).  Both
are executed once per session with the other extension notebooks (``extension_notebooks``);
their last cells print what the kernel's records say as JSON.  The tests check those figures
(the one 24-block compile of each kind the suite pays for), then that JupyterLab's extension
draws each output of the *untrusted* notebooks (nbclient does not sign them) with a clean
console, screenshots saved under the artifacts directory.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.browser import (
    COMPILE24,
    COMPILE24_FACTS,
    MEM24_EQX_LIVE,
    MEM24_EQX_STEP,
    MEM24_FACTS,
    MEM24_GRAD,
    MEM24_NNX,
    TRANSFORMER_CELL,
    artifacts_dir,
    open_notebook,
    scroll_to_cell,
)
from tests.browser_fixtures import BROWSER_GROUP_A
from workbench.views.memory import MAX_BUFFERS

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(BROWSER_GROUP_A)]

NOTEBOOK = "hlo24.ipynb"
COMPILE_NOTEBOOK = "compile24.ipynb"


def _printed(nb, cell: int) -> dict:
    (out,) = [o for o in nb.cells[cell].outputs if o.output_type == "stream"]
    return json.loads(out["text"])


@pytest.fixture(scope="module")
def facts(extension_notebooks) -> dict:
    found = _printed(extension_notebooks["nb"][NOTEBOOK], MEM24_FACTS)
    found["compile"] = _printed(extension_notebooks["nb"][COMPILE_NOTEBOOK], COMPILE24_FACTS)
    return found


@pytest.fixture(scope="module")
def lab(lab, extension_notebooks):
    for name in (NOTEBOOK, COMPILE_NOTEBOOK):
        shutil.copy(extension_notebooks["dir"] / name, lab.root / name)
        assert not lab.is_trusted(lab.root / name)  # what users open from nbclient or a colleague
    return lab


def _near(a: int, b: int | None, share: float = 0.10) -> bool:
    return b is not None and abs(a - b) <= share * b


def _model_lines() -> set[int]:
    """The lines of TRANSFORMER_CELL that are the model's code (its functions' bodies)."""
    lines = TRANSFORMER_CELL.splitlines()
    end = next(i for i, t in enumerate(lines) if t.startswith("import sys"))
    return {i + 1 for i, t in enumerate(lines[:end]) if t.startswith("    ")}


def test_the_24_block_gradients_peak_is_xlas_near_memory_analysis_and_names_its_lines(facts):
    g = facts["grad"]
    assert facts["blocks"] == 24
    assert g["peak"] == g["xla_peak"]
    assert _near(g["peak"], g["analysis"])
    # memory_analysis less the output buffers empty at the peak (the last blocks' gradients,
    # written after it): what the peak compares with (tests/engine/test_program_memory.py)
    assert g["comparable"] == g["analysis"] - g["idle_outputs"]
    assert _near(g["peak"], g["comparable"])
    assert g["has_backward"] and g["donation"] == [0]
    # the activations kept for the backward pass are named by the cell's model lines
    assert g["saved"] and g["saved"][0]["bytes"] == max(s["bytes"] for s in g["saved"])
    m = re.fullmatch(r"cell \[2\] line (\d+)", g["saved"][0]["where"])
    assert m and int(m.group(1)) in _model_lines(), g["saved"]


def test_the_24_block_gradients_compile_is_covered_by_named_phases_with_the_loop_advice(facts):
    c = facts["compile"]
    assert c["found"]
    assert c["coverage"] >= 0.8, c
    assert c["blocks"] == facts["blocks"]
    assert c["loops"] == [{"function": "block", "calls": facts["blocks"]}]


@pytest.mark.parametrize("model", ["nnx", "eqx"])
def test_a_train_steps_peak_is_xlas_and_near_memory_analysis_less_its_empty_outputs(facts, model):
    """A train step writes its new parameters and optimizer state after its peak:
    ``memory_analysis()`` counts those output buffers, the peak does not."""
    p = facts[model]
    assert p["peak"] == p["xla_peak"] and p["has_backward"]
    assert p["idle_outputs"] > 0
    assert p["comparable"] == p["analysis"] - p["idle_outputs"]
    assert _near(p["peak"], p["comparable"])
    assert p["donation"] == [0, 1]  # the model and its optimizer state


def test_jaxmem_names_the_equinox_models_arrays_by_attribute_path(facts):
    found = facts["eqx_live"]
    assert len(found) == 6  # three layers' weight and bias
    for path, (nbytes, hit) in found.items():
        assert hit == ["eqx_model", nbytes], path


#: per workbench output of a cell: its kind, whether drawn, and what the tests read of it
CELL_JS = """
(i) => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
  cell.node.setAttribute('data-test-cell', String(i));
  const q = (root, s) => [...root.querySelectorAll(s)];
  return q(cell.node, '.jwb-ext').map(e => ({
    kind: [...e.classList].find(c => c.startsWith('jwb-ext-')).slice(8),
    ready: e.getAttribute('data-jwb-ready') === '1',
    figures: q(e, '.jwb-mem-figures tr').map(r => r.textContent),
    chart: q(e, 'svg[role="img"] polyline').map(p => p.getAttribute('points').split(' ').length),
    buffers: q(e, '.jwb-mem-buffers tr').length,
    advice: q(e, '.jwb-mem-advice, .jwb-compile-advice').map(a => a.textContent),
    owners: q(e, '.jwb-mem-owners code').map(c => c.textContent),
    tables: q(e, '.jwb-prof-table').length,
    text: e.textContent,
  }));
}
"""


def _outputs(page, cell: int, kind: str) -> dict:
    scroll_to_cell(page, cell)
    page.wait_for_function(
        f"(i) => {{ const c = window.jupyterapp.shell.currentWidget.content.widgets[i]; "
        f"return c.node.querySelector('.jwb-ext-{kind}[data-jwb-ready=\"1\"]') !== null; }}",
        arg=cell,
        timeout=60_000,
    )
    (out,) = [o for o in page.evaluate(CELL_JS, cell) if o["kind"] == kind]
    # the output's head at the window's top (the 24-block's buffers table runs far below
    # it), once the notebook's windowing has settled the scroll
    head = page.locator(
        f'[data-test-cell="{cell}"] .jwb-ext-{kind} :is(.jwb-mem-title, .jwb-prof-head)'
    ).first
    for _ in range(5):
        head.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        if 0 <= head.evaluate("e => e.getBoundingClientRect().top") < 300:
            break
    page.screenshot(path=str(artifacts_dir() / f"mem24-{cell}-{kind}.png"))
    return out


def test_jupyterlab_draws_each_memory_and_compile_output_of_the_real_models(browser, lab, facts):
    page, watch = open_notebook(browser, lab, NOTEBOOK)
    try:
        for cell, model in ((MEM24_GRAD, "grad"), (MEM24_NNX, "nnx"), (MEM24_EQX_STEP, "eqx")):
            out = _outputs(page, cell, "memory-program")
            assert out["figures"][0].startswith("live-range peak"), out["figures"]
            assert out["figures"][1].startswith("memory_analysis"), out["figures"]
            # the third row says what the peak compares with, when outputs are empty then
            assert len(out["figures"]) == 3 and out["figures"][2].startswith("comparable")
            assert out["chart"] and out["chart"][0] > 10  # memory over the program order
            assert out["buffers"] == min(facts[model]["buffers"], MAX_BUFFERS) + 1  # and its header
            assert any("donate_argnums=(0" in a for a in out["advice"]), out["advice"]
            if model == "grad":  # the checkpoint advice names the line of the largest
                assert facts["grad"]["saved"][0]["where"] in out["text"]
        out = _outputs(page, MEM24_EQX_LIVE, "memory")
        assert "eqx_model" in out["owners"], out["owners"]
        page.screenshot(path=str(artifacts_dir() / "mem24-page.png"))
        assert watch.errors == [], watch.errors
        assert watch.external == [], watch.external
    finally:
        page.close()
    page, watch = open_notebook(browser, lab, COMPILE_NOTEBOOK)
    try:
        out = _outputs(page, COMPILE24, "compile-time")
        assert out["tables"] >= 2  # XLA's passes and phases, the program size by line
        (advice,) = out["advice"]
        assert "block" in advice and f"{facts['blocks']} times" in advice, advice
        assert "lax.scan" in advice
        assert watch.errors == [], watch.errors
        assert watch.external == [], watch.external
    finally:
        page.close()

"""The extension's `%%hlo` view lists the collectives XLA inserted, as the text/html
fallback always did (regression: the renderer drew the summary and the graph but no
collectives, so in JupyterLab a sharded program's all-reduce was visible only as a node).

A sharded matmul contracting a dimension split over ``model`` compiles to an all-reduce over
each ``model`` group; the table in the page has one row per collective of the payload, with
its kind and device groups, in an untrusted notebook (the renderer reads data only)."""

from __future__ import annotations

import playwright.sync_api as playwright_api
import pytest

from tests.browser import (
    PageWatch,
    artifacts_dir,
    execute_notebook,
    wait_for_notebook,
)
from tests.browser_fixtures import BROWSER_GROUP_A

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(BROWSER_GROUP_A)]

CELLS = [
    "%load_ext workbench\nimport jax, jax.numpy as jnp\n"
    "from jax.sharding import AxisType, NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto,) * 2)\n"
    "x = jax.ShapeDtypeStruct((16, 8), jnp.float32, sharding=NamedSharding(mesh, P('data', 'model')))\n"
    "w = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(mesh, P('model', None)))",
    "%%hlo\ndef layer(x, w):\n    return jnp.tanh(x @ w)\nlayer(x, w)",
    "%hlo --no-fusion layer(x, w)",
    "%hlo jnp.sin(jnp.ones(4))",  # no collectives: no table
]
MIME = "application/vnd.jax-workbench.hlo+json"


def test_hlo_view_lists_the_collectives(browser, lab):
    nb = execute_notebook(CELLS, lab.root / "coll.ipynb")
    payloads = [
        next(o["data"][MIME] for o in c.outputs if MIME in o.get("data", {})) for c in nb.cells[1:]
    ]
    want = [
        [
            (c["kind"], " ".join("{" + ",".join(map(str, g)) + "}" for g in c["replica_groups"]))
            for c in p.get("collectives", [])
        ]
        for p in payloads
    ]
    assert want[0] == want[1] and [k for k, _ in want[0]] == ["all-reduce"]
    assert want[2] == []
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    watch = PageWatch(page, lab.base)
    page.goto(lab.lab_url("coll.ipynb"))
    wait_for_notebook(page)
    try:
        page.wait_for_function(
            "() => document.querySelectorAll('.jwb-ext-hlo[data-jwb-ready=\"1\"]').length >= 3",
            timeout=60_000,
        )
    except playwright_api.TimeoutError:
        raise AssertionError("the three %hlo outputs were not drawn") from None
    got = page.evaluate(
        "() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].slice(1).map(c => "
        "[...c.querySelectorAll('table.jwb-hlo-coll tbody tr')].map(r => "
        "[r.children[0].textContent, r.children[4].textContent]))"
    )
    page.screenshot(path=str(artifacts_dir() / "hlo-collectives.png"))
    assert [[tuple(r) for r in rows] for rows in got] == want
    assert page.locator(".jwb-ext-error").count() == 0
    assert watch.errors == [], watch.errors
    page.close()

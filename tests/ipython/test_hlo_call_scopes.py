"""``%%hlo`` and ``workbench.hlo`` name the calls of the user's functions (defined in cells)
in the op_names of the program shown, ``NAME#K`` per enclosing scope; the payload's graphs
of a ``lax.scan`` body carry their origin (the step function, the scan's line in the cell);
the user's own calls afterwards still run their own executable (no compile), and
``%%jaxpr`` keeps its plain trace.

Expected names come from the cells' programs (the number of layers, the line of the scan).
"""

from __future__ import annotations

import re

import pytest

from workbench.views.hlo import HLO_MIME

_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')

MODEL = """
import jax, jax.numpy as jnp

def layer_cs(w, x):
    return jnp.tanh(x @ w)

def net_cs(ws, x):
    for w in ws:
        x = layer_cs(w, x)
    return jnp.sum(x ** 2)

grad_cs = jax.jit(jax.grad(net_cs))
ws_cs = [jnp.eye(8) * (i + 1) for i in range(3)]
x_cs = jnp.ones((4, 8))
_ = grad_cs(ws_cs, x_cs)  # the user's own call: compiled now
"""


@pytest.fixture
def model(run, shell):
    run(MODEL).ok()
    yield shell.user_ns["ws_cs"]
    for name in ("layer_cs", "net_cs", "grad_cs", "ws_cs", "x_cs"):
        shell.user_ns.pop(name, None)


def _layer_indices(names: set[str], backward: bool) -> list[int]:
    found = set()
    for name in names:
        m = re.search(r"[(/]net_cs#0\)*/layer_cs#(\d+)/", name)
        if m and ("transpose(" in name) == backward:
            found.add(int(m.group(1)))
    return sorted(found)


def test_hlo_cell_names_each_call_of_the_cells_functions(run, model):
    r = run("%%hlo\ngrad_cs(ws_cs, x_cs)").ok()
    names = set(_OP_NAME.findall(r.result.result.report.text))
    layers = list(range(len(model)))
    assert _layer_indices(names, backward=False) == layers
    assert _layer_indices(names, backward=True) == layers
    # the payload's nodes carry the same op_names (what the extension clusters by)
    payload = r.bundle[HLO_MIME]
    from workbench import schemas

    graphs = schemas.unpack(payload)["graphs"]
    node_names = {n.get("op_name", "") for g in graphs.values() for n in g["nodes"]}
    assert any("/layer_cs#2/" in n for n in node_names)
    # the user's call afterwards runs the executable it compiled before: no compile line
    assert run("_ = grad_cs(ws_cs, x_cs)").ok().summary is None


def test_only_hlo_and_its_twin_trace_with_scopes(run, model, monkeypatch):
    import workbench.engine.stages as stages

    used: list[str] = []
    real = stages.scoped_calls

    def counting(*args, **kwargs):
        used.append("scoped")
        return real(*args, **kwargs)

    monkeypatch.setattr(stages, "scoped_calls", counting)
    run("%%jaxpr\ngrad_cs(ws_cs, x_cs)").ok()
    run("%%jaxpr -t grad\nnet_cs(ws_cs, x_cs)").ok()
    assert used == []  # %%jaxpr keeps its cheap trace (the user's cached one here)
    r = run("import workbench\nworkbench.hlo(grad_cs, ws_cs, x_cs)").ok()
    assert used == ["scoped"]
    assert "/layer_cs#0/" in r.result.result.report.text


SCAN = """import jax, jax.numpy as jnp

def rnn_loss_cs(wh, xs):
    def step_cs(h, x):
        h = jnp.tanh(h @ wh + x)
        return h, h.sum()

    h, sums = jax.lax.scan(step_cs, jnp.zeros(wh.shape[0]), xs)
    return jnp.mean(h ** 2) + jnp.mean(sums ** 2)

wh_cs = jnp.eye(8) * 0.5
xs_cs = jnp.ones((5, 8))
"""


def test_hlo_cell_of_a_scan_gives_its_body_graphs_an_origin(run, shell):
    run(SCAN).ok()
    try:
        r = run("%%hlo -t grad\nrnn_loss_cs(wh_cs, xs_cs)").ok()
        from workbench import schemas

        graphs = schemas.unpack(r.bundle[HLO_MIME])["graphs"]
        scan_line = 1 + SCAN.splitlines().index(
            next(t for t in SCAN.splitlines() if "jax.lax.scan(" in t)
        )
        origins = [g["origin"] for g in graphs.values() if "origin" in g]
        assert origins and len(origins) == len(graphs) - 1  # all but the entry
        assert {o["name"] for o in origins} == {"step_cs"}
        # the scan's line in the cell that defined rnn_loss_cs
        assert {o["source"]["line"] for o in origins} == {scan_line}
    finally:
        for name in ("rnn_loss_cs", "wh_cs", "xs_cs"):
            shell.user_ns.pop(name, None)

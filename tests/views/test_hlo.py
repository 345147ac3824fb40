"""The HLO views: every graph of a broad corpus laid out down the page with no two nodes on
one spot, the layered layout's rules, the report's summary, HTML and payload (escaped,
source lines on the nodes, sub-diagrams for control flow, collectives listed), the text
fallbacks, and the Python twin's refusals.  ``%%hlo`` itself: tests/ipython/test_hlo_magic.py;
the parser: tests/engine/test_hlo_parser.py."""

from __future__ import annotations

import json
from collections import Counter

import jax
import jax.numpy as jnp
import pytest

import workbench
from tests import programs
from tests.hlo_corpus import CASES, corpus_texts
from workbench.engine.common.analysis import CostAnalysis, MemoryAnalysis
from workbench.engine.hlo.graph import control_graphs
from workbench.engine.hlo.model import HloParseError
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.hlo.report import build_hlo_report
from workbench.views.dag_layout import layered_layout, topological_order
from workbench.views.hlo import HLO_MIME, hlo_bundle, hlo_html, layout_graph

# -- layout: every graph of the corpus, and the layered layout's rules -------------------------


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    return corpus_texts()


@pytest.mark.slow  # the corpus fixture compiles every program of the corpus (~6 s)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_graphs_are_laid_out_down_the_page_one_node_per_spot(case, corpus):
    graphs = control_graphs(parse_hlo(corpus[case.name]))
    for name, graph in graphs.items():
        lay = layout_graph(graph)
        assert set(lay.boxes) == {n.id for n in graph.nodes}
        for e in graph.edges:  # every edge points down the page
            assert lay.boxes[e.src].layer < lay.boxes[e.dst].layer, (name, e)
        spots = Counter((round(b.x), round(b.y)) for b in lay.boxes.values())
        assert max(spots.values()) == 1  # no two nodes on one spot


def test_layout_basics():
    ids = ["a", "b", "c", "d"] + [f"p{i}" for i in range(25)]
    edges = [("a", "b"), ("b", "c"), ("a", "c"), ("c", "d")] + [(f"p{i}", "d") for i in range(25)]
    assert topological_order(list(reversed(ids)), edges).index("a") < topological_order(
        list(reversed(ids)), edges
    ).index("d")
    lay = layered_layout(ids, edges, max_per_row=10)
    assert lay.boxes["a"].layer < lay.boxes["b"].layer < lay.boxes["c"].layer < lay.boxes["d"].layer
    # the 25 parameters sink to just above their consumer, wrapped into rows of 10
    assert {lay.boxes[f"p{i}"].layer for i in range(25)} == {lay.boxes["d"].layer - 1}
    assert len({lay.boxes[f"p{i}"].y for i in range(25)}) == 3
    assert lay.width <= 10 * (lay.node_w + 24) + 1


# -- the report and the views ------------------------------------------------------------------


def _mlp(w, x):
    with jax.named_scope("<script>alert(1)</script>"):
        h = jnp.tanh(x @ w)
    return jnp.sum((h - 1.0) ** 2)


def test_report_summary_and_bundle():
    d = workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), transforms="grad")
    rep = d.report
    assert rep.stage == "compiled" and rep.backend == "cpu"
    ins = workbench.inspect(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), transforms="grad")
    assert build_hlo_report(ins).text == ins.hlo_text  # exactly JAX's text
    assert rep.text.startswith("HloModule") and rep.text.count(" fusion(") == rep.fusion_count
    assert rep.fusion_count >= 1 and rep.stablehlo_op_count > 0 and rep.compile_s > 0
    bundle = d._repr_mimebundle_()
    assert bundle["text/plain"] == rep.text
    html = bundle["text/html"]
    assert "<svg" in html and "XLA compile" in html and "estimated" in html
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "fusion:" in html and "test_hlo.py:" in html  # nodes carry their source lines
    rec = bundle[HLO_MIME]
    assert rec["version"] == 3 and rec["kind"] == "hlo"
    entry = rec["module"]["computations"][-1]
    assert entry["entry"] and rec["graphs"][entry["name"]]["nodes"]
    assert "layouts" not in rec and "packed" not in rec  # a small payload stays plain
    fusions = [n for n in rec["graphs"][entry["name"]]["nodes"] if n["kind"] == "fusion"]
    by_name = {i.name: i for i in rep.module.instructions()}
    assert fusions and all(
        n["op_name"] == by_name[n["id"]].op_name for n in fusions if by_name[n["id"]].op_name
    )
    assert any(n["op_name"].startswith("jit(") for n in fusions)
    json.dumps(rec)


def test_not_reported_fields_say_so():
    rep = build_hlo_report(workbench.inspect(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4))))
    rep.cost, rep.memory = CostAnalysis(), MemoryAnalysis()
    html = hlo_html(rep)
    assert html.count("not reported by this backend") == 2


def test_unparseable_module_falls_back_to_text(monkeypatch):
    import workbench.engine.hlo.report as hr

    def broken(text):
        raise HloParseError("no ENTRY computation found")

    monkeypatch.setattr(hr, "parse_hlo", broken)
    rep = build_hlo_report(workbench.inspect(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4))))
    assert rep.module is None and "ENTRY" in rep.parse_error
    bundle = hlo_bundle(rep)
    assert "could not be fully read" in bundle["text/html"] and "<svg" not in bundle["text/html"]
    assert bundle["text/plain"] == rep.text


def test_control_flow_bodies_are_sub_diagrams():
    def g(x):
        return jax.lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x))

    d = workbench.hlo(g, jnp.ones(3))
    graphs = d.report.graphs
    assert len(graphs) >= 2
    entry = next(iter(graphs.values()))
    callers = [n for gr in graphs.values() for n in gr.nodes if n.called]
    assert callers and all(c in graphs for n in callers for c in n.called)
    assert any(n.kind == "control" for gr in graphs.values() for n in gr.nodes)
    html = d._repr_mimebundle_()["text/html"]
    # each body drawn, named in a list; no links (SVG <a> throws in JupyterLab's renderer)
    assert html.count("<svg") == len(graphs) and "<a " not in html
    assert all(f"<li><code>{name}</code>" in html for name in list(graphs)[1:])
    assert entry.nodes


def test_sharded_program_lists_collectives():
    d = workbench.hlo(programs.sharded_matmul, *programs.sharded_matmul_args())
    assert d.report.device_count == 8
    assert [c.kind for c in d.report.collectives] == ["all-reduce"]
    html = d._repr_mimebundle_()["text/html"]
    assert "1 collective" in html and "all-reduce" in html


def test_lowered_stage():
    d = workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), stage="lowered")
    b = d._repr_mimebundle_()
    assert b["text/plain"].startswith("module @jit__mlp")
    assert "stablehlo.tanh" in b["text/plain"] and "loc(" not in b["text/plain"]
    assert "<svg" not in b["text/html"] and "test_hlo.py:" in b["text/html"]


def test_backend_that_is_not_here():
    with pytest.raises(ValueError, match="available: cpu"):
        workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), backend="tpu")
    assert workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), backend="cpu").report.text

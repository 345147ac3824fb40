"""The HLO views: the report's static summary and payload (escaped, source lines on the
nodes, graphs for control flow bodies, collectives listed; the layout is the TypeScript
view's, tested by vitest), the text fallbacks, and the Python twin's refusals.  ``%%hlo`` itself: tests/ipython/test_hlo_magic.py;
the parser: tests/engine/test_hlo_parser.py."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import pytest

import workbench
from tests import programs
from tests.hlo_corpus import corpus_texts
from workbench import schemas
from workbench.engine.common.analysis import CostAnalysis, MemoryAnalysis
from workbench.engine.hlo.model import HloParseError
from workbench.engine.hlo.report import build_hlo_report
from workbench.views._standalone import embedded_data
from workbench.views.hlo import HLO_MIME, hlo_bundle, hlo_html


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    return corpus_texts()


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
    # the static summary: numbers and tables, no picture (the views draw from the payload)
    assert "<svg" not in html and "XLA compile" in html and "estimated" in html
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
    # every body is a graph of the payload the views draw (the summary draws none)
    bundle = d._repr_mimebundle_()
    payload = schemas.unpack(bundle[HLO_MIME])
    assert list(payload["graphs"]) == list(graphs)
    assert embedded_data(bundle["text/html"])[HLO_MIME] == payload
    assert "<svg" not in bundle["text/html"] and "<a " not in bundle["text/html"]
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
    ops = b[HLO_MIME]["counts"]["stablehlo_ops"]
    assert "<svg" not in b["text/html"] and f"{ops} StableHLO ops" in b["text/html"]


def test_backend_that_is_not_here():
    with pytest.raises(ValueError, match="available: cpu"):
        workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), backend="tpu")
    assert workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), backend="cpu").report.text

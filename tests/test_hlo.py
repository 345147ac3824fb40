"""%%hlo: the HLO parser over a broad corpus, graph and layout invariants, the views, the magic."""

from __future__ import annotations

import json
import os
from collections import Counter

import jax
import jax.numpy as jnp
import pytest

import workbench
from tests import programs
from tests.hlo_corpus import CASES, compiled_text
from workbench.engine.common.analysis import CostAnalysis, MemoryAnalysis
from workbench.engine.hlo.graph import control_graphs, find_collectives, parse_replica_groups
from workbench.engine.hlo.model import HloParseError
from workbench.engine.hlo.parser import parse_hlo, parse_instruction
from workbench.engine.hlo.report import HloReport, build_hlo_report
from workbench.engine.hlo.shapes import parse_shape
from workbench.engine.hlo.stablehlo import parse_stablehlo
from workbench.views.dag_layout import layered_layout, topological_order
from workbench.views.hlo import HLO_MIME, hlo_bundle, hlo_html, layout_graph

# -- the corpus: every module JAX produced must parse, with sound graphs --------------------


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    return {c.name: compiled_text(c) for c in CASES}


@pytest.mark.slow  # the corpus fixture compiles every program of the corpus (~6 s)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_parses_with_sound_graphs(case, corpus):
    text = corpus[case.name]
    module = parse_hlo(text)
    assert module.problems == []
    names = [i.name for c in module.computations for i in c.instructions]
    assert sum(len(c.instructions) for c in module.computations) == len(names)
    # every "%x = " statement of the text became exactly one instruction
    assert len(names) == sum(
        1 for line in text.splitlines() if " = " in line and line.strip().startswith(("%", "ROOT"))
    )
    for comp in module.computations:
        local = comp.by_name
        for ins in comp.instructions:
            for op in ins.operands:
                assert op in local, (comp.name, ins.name, op)
            for called in ins.called:
                assert called in module.by_name
    graphs = control_graphs(module)
    entry = module.entry
    g = graphs[entry.name]
    ids = [n.id for n in g.nodes]
    assert sorted(ids) == sorted(i.name for i in entry.instructions)  # each exactly once
    assert len(set(ids)) == len(ids)
    expected_edges = {(op, i.name) for i in entry.instructions for op in i.operands}
    assert {(e.src, e.dst) for e in g.edges} == expected_edges
    assert g.fusion_count == sum(1 for i in entry.instructions if i.opcode == "fusion")
    assert sum(1 for n in g.nodes if n.is_output) == 1
    for n in g.nodes:
        if n.kind == "fusion":
            assert (
                n.label.split(" fusion")[0] in ("loop", "input (reduction)", "output", "custom")
                or n.fusion_kind
            )
    for name, graph in graphs.items():
        lay = layout_graph(graph)
        assert set(lay.boxes) == {n.id for n in graph.nodes}
        for e in graph.edges:  # every edge points down the page
            assert lay.boxes[e.src].layer < lay.boxes[e.dst].layer, (name, e)
        spots = Counter((round(b.x), round(b.y)) for b in lay.boxes.values())
        assert max(spots.values()) == 1  # no two nodes on one spot
    kinds = {c.kind for c in find_collectives(module)}
    assert set(case.collectives) <= kinds
    json.dumps([gr.to_dict() for gr in graphs.values()])


@pytest.mark.slow  # the corpus
def test_collectives_carry_groups_that_partition_the_devices(corpus):
    for name in ("sharded_matmul", "shard_map_psum", "all_gather", "reduce_scatter", "all_to_all"):
        cols = find_collectives(parse_hlo(corpus[name]))
        assert cols, name
        for c in cols:
            assert c.bytes > 0 and c.shape
            groups = c.replica_groups
            assert groups is not None, (name, c.groups_text)
            if groups:
                flat = sorted(d for grp in groups for d in grp)
                assert flat == list(range(8)), (name, c.groups_text)
    (perm,) = find_collectives(parse_hlo(corpus["ppermute"]))
    assert perm.kind == "collective-permute"
    # 4 steps along 'data'; each device sends to the device one 'data' step away
    assert len(perm.source_target_pairs) == 8


@pytest.mark.slow  # the corpus
def test_sharded_matmul_all_reduce_is_over_the_model_axis(corpus):
    # x: P('data','model') @ w: P('model', None) contracts over the sharded 'model' axis
    (ar,) = [
        c for c in find_collectives(parse_hlo(corpus["sharded_matmul"])) if c.kind == "all-reduce"
    ]
    mesh_ids = [[d.id for d in row] for row in programs.mesh8().devices]
    model_groups = sorted(sorted(row) for row in mesh_ids)  # devices that differ in 'model'
    assert sorted(sorted(g) for g in ar.replica_groups) == model_groups


@pytest.mark.parametrize(
    "text,expected",
    [
        ("{{0,1},{2,3}}", [[0, 1], [2, 3]]),
        ("{}", []),
        ("[2,4]<=[8]", [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ("[4,2]<=[2,4]T(1,0)", [[0, 4], [1, 5], [2, 6], [3, 7]]),
        ("[1,8]<=[8]", [list(range(8))]),
    ],
)
def test_replica_group_forms(text, expected):
    assert parse_replica_groups(text) == expected


# -- parser unit cases --------------------------------------------------------------------


def test_instruction_forms():
    ins = parse_instruction(
        "  ROOT %t = (f32[2]{0}, /*index=1*/s32[]) tuple(f32[2]{0} %a, "
        's32[] %b), metadata={op_name="jit(f)/x" source_file="/m.py" '
        "source_line=12}"
    )
    assert ins.is_root and ins.opcode == "tuple" and ins.operands == ["a", "b"]
    assert ins.bytes == 12 and ins.short_shape == "(f32[2], s32[])"
    assert ins.source.file == "/m.py" and ins.source.line == 12 and ins.primitive == "x"
    c = parse_instruction("%c = f32[3]{0} constant({1, 2, 3})")
    assert c.operands == [] and c.literal == "{1, 2, 3}"
    q = parse_instruction(
        '%s = f32[] custom-call(%p), custom_call_target="a,b(c)", backend_config="{\\"x\\": [1,2]}"'
    )
    assert q.attrs["custom_call_target"] == '"a,b(c)"' and q.operands == ["p"]
    assert parse_shape("bf16[<=4,2]{1,0}")[0].bytes == 16
    with pytest.raises(ValueError):
        parse_instruction("not an instruction")


def test_unknown_lines_are_problems_not_exceptions():
    text = (
        "HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n"
        "  %p = f32[2]{0} parameter(0)\n  this is not hlo\n"
        "  ROOT %n = f32[2]{0} negate(%p)\n}\n"
    )
    m = parse_hlo(text)
    assert len(m.problems) == 1 and "this is not hlo" in m.problems[0]
    assert [i.name for i in m.entry.instructions] == ["p", "n"]
    with pytest.raises(HloParseError):
        parse_hlo("HloModule m\n%f (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n")


def test_stablehlo_locations_resolve_to_user_lines():
    def f(x):
        return jnp.sum(jnp.tanh(x) * 2)

    lowered = jax.jit(f).lower(jnp.ones(3))
    sh = parse_stablehlo(lowered.as_text(debug_info=True))
    tanh = next(o for o in sh.ops if o.op == "stablehlo.tanh")
    assert tanh.primitive == "tanh" and tanh.source is not None
    assert tanh.source.file == __file__
    assert sh.op_count >= 4


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


# -- the report and the views --------------------------------------------------------------


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
    assert rec["version"] == 2 and rec["kind"] == "hlo"
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


# -- the magic through a real InteractiveShell ----------------------------------------------

HLO_CELL = """%%hlo -t grad
def loss(w, x):
    with jax.named_scope('<script>alert(1)</script>'):
        h = jnp.tanh(x @ w)
    return jnp.sum((h - 1.0) ** 2)
loss(jnp.ones((4, 4)), jnp.ones((2, 4)))
"""


def test_cell_magic(run, shell):
    shell.user_ns.pop("loss", None)
    r = run(HLO_CELL)
    assert r.error is None, r.stdout
    assert callable(shell.user_ns["loss"])  # the cell ran as a normal cell
    text = r.bundle["text/plain"]
    assert text.startswith("HloModule") and "fusion(" in text
    html = r.bundle["text/html"]
    assert "<svg" in html and "cell [" in html  # fusions link back to the cell's lines
    assert "<script>alert(1)" not in html
    rec = r.bundle[HLO_MIME]
    assert rec["counts"]["fusions"] == text.count(" fusion(")


def test_line_magic_and_flags(run, shell):
    shell.user_ns["hw"], shell.user_ns["hx"] = jnp.ones((4, 4)), jnp.ones((2, 4))
    shell.user_ns["hf"] = _mlp
    r = run("%hlo --stage lowered hf(hw, hx)")
    assert r.error is None, r.stdout
    assert r.bundle["text/plain"].startswith("module @")
    r = run("%hlo --text hf(hw, hx)")
    assert set(r.bundle) == {"text/plain"}
    r = run("%hlo --no-fusion hf(hw, hx)")
    assert "<svg" not in r.bundle["text/html"] and r.bundle[HLO_MIME]["graphs"] == {}


def test_no_workbench_frame_in_the_programs_source_info(run, shell):
    """The stack frames JAX records for each op are the user's only: our magics and
    twins call the user's function, and their frames must not be attributed lines in
    the HLO's metadata (the whole package is excluded from JAX's user frames)."""
    package = os.path.dirname(workbench.__file__)
    shell.user_ns["hw"], shell.user_ns["hx"] = jnp.ones((4, 4)), jnp.ones((2, 4))
    shell.user_ns["hf"] = _mlp
    texts = [
        run("%hlo hf(hw, hx)").bundle["text/plain"],
        run("%hlo --stage lowered hf(hw, hx)").bundle["text/plain"],
        repr(workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)))),
    ]
    lowered = workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), stage="lowered")
    assert any(__file__ in t for t in texts)  # the user's file is named, so the check bites
    for text in texts:
        assert package not in text
    assert all(
        op.source is None or not op.source.file.startswith(package)
        for op in lowered.report.stablehlo.ops
    )


def test_bad_input(run, shell):
    text = run("%hlo --backend tpu hf(hw, hx)").short_error()
    assert "'tpu' is not available here; available: cpu" in text
    assert len(text.strip().splitlines()) == 1
    shell.user_ns.pop("kept_hlo", None)
    text = run("%%hlo\nkept_hlo = 7\nkept_hlo * 2").short_error()
    assert "must be a call" in text and shell.user_ns["kept_hlo"] == 7
    text = run(
        "%%hlo\ndef bad(x):\n    return x @ jnp.ones((3, 3))\nbad(jnp.ones(4))"
    ).short_error()
    assert "dot_general requires contracting dimensions" in text
    assert "line 3, in bad" in text and "return x @ jnp.ones((3, 3))" in text
    text = run("%hlo --stage optimized hf(hw, hx)").short_error()
    assert "optimized" in text
    assert run("1 + 1").result.result == 2  # the kernel is fine


def _unknown_target(x):
    # traces and lowers; XLA refuses it at compile time (no handler for the target)
    return jax.ffi.ffi_call("workbench_no_such_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def test_compile_failure_names_the_users_line(run):
    """A failure inside XLA has no user frame in its traceback: the twin names the line
    that called it, the magic the cell's call, both as a short error of phase compile."""
    from workbench.views.errors import WorkbenchError

    workbench.hlo(_unknown_target, jnp.ones(3), stage="lowered")  # lowering is fine
    with pytest.raises(WorkbenchError) as info:
        workbench.hlo(_unknown_target, jnp.ones(3))  # the calling line
    rep = info.value.report
    assert rep.phase == "compile" and "workbench_no_such_target" in rep.summary
    assert rep.where is not None and rep.where.file == __file__
    assert rep.where.text == "workbench.hlo(_unknown_target, jnp.ones(3))  # the calling line"
    assert rep.where.function == "test_compile_failure_names_the_users_line"
    run("from tests.test_hlo import _unknown_target")
    r = run("%%hlo\n_unknown_target(jnp.ones(3))")
    assert r.error is not None and r.error.report.phase == "compile"
    assert "workbench_no_such_target" in r.short_error()
    assert "_unknown_target(jnp.ones(3))" in r.short_error()


@pytest.mark.browser
def test_html_in_a_real_browser(browser):
    """The standalone HTML (as nbconvert/VS Code show it): diagram drawn, search works,
    and without scripts the text is still all there."""
    from tests.browser import artifacts_dir

    d = workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), transforms="grad")
    html = d._repr_mimebundle_()["text/html"]
    entry = next(iter(d.report.graphs.values()))
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.set_content(f"<html><body>{html}</body></html>")
    assert page.locator("svg g.n").count() == len(entry.nodes)
    box = page.locator(".jwb-search input")
    assert box.is_visible()
    box.fill("multiply")
    hits = page.locator(".jwb-txt .l.hit")
    n_mul = sum(1 for i in d.report.module.instructions() if i.opcode == "multiply")
    assert n_mul >= 1 and hits.count() >= n_mul
    assert all("multiply" in t.lower() for t in hits.all_inner_texts())
    page.screenshot(path=str(artifacts_dir() / "hlo-standalone.png"), full_page=True)
    page.close()
    ctx = browser.new_context(java_script_enabled=False)
    quiet = ctx.new_page()
    quiet.set_content(f"<html><body>{html}</body></html>")
    assert not quiet.locator(".jwb-search").is_visible()
    assert "fusion" in quiet.inner_text(".jwb-hlo")
    ctx.close()


def test_mesh_form_replica_groups_are_expanded():
    text = (
        "HloModule m\n\nENTRY %main (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} parameter(0)\n"
        "  ROOT %ar = f32[8]{0} all-reduce(%p), channel_id=1, "
        "replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_0'}, use_global_device_ids=true\n}\n"
    )
    (c,) = find_collectives(parse_hlo(text))
    assert c.replica_groups == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_async_collective_reports_its_result():
    text = (
        "HloModule m\n\nENTRY %main (p: f32[4,8]) -> f32[16,8] {\n"
        "  %p = f32[4,8]{1,0} parameter(0)\n"
        "  %ags = (f32[4,8]{1,0}, f32[16,8]{1,0}) all-gather-start(%p), channel_id=1, "
        "replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true\n"
        "  ROOT %agd = f32[16,8]{1,0} all-gather-done(%ags)\n}\n"
    )
    (c,) = find_collectives(parse_hlo(text))  # -done is not counted twice
    assert (c.kind, c.shape, c.bytes) == ("all-gather", "f32[16,8]", 512)
    assert c.replica_groups == [[0, 1, 2, 3]] and c.channel_id == 1 and c.use_global_device_ids


def test_unload_removes_hlo_magic(shell, run):
    try:
        run("%unload_ext workbench")
        assert "hlo" not in shell.magics_manager.magics["cell"]
        assert "hlo" not in shell.magics_manager.magics["line"]
    finally:
        run("%load_ext workbench")
    assert "hlo" in shell.magics_manager.magics["cell"]


def test_multiline_constant_and_names_without_percent():
    text = (
        "HloModule m\n\nENTRY %main (p: f32[2,2]) -> f32[2,2] {\n"
        "  %p = f32[2,2]{1,0} parameter(0)\n  %c = f32[2,2]{1,0} constant({\n"
        "    { 1, 2 },\n    { 3, 4 }\n  })\n"
        "  ROOT %last_one = f32[2,2]{1,0} add(%p, %c)\n}\n"
    )
    m = parse_hlo(text)
    assert m.problems == [] and [i.name for i in m.entry.instructions] == ["p", "c", "last_one"]
    rep = HloReport(
        label="f",
        stage="compiled",
        text=text,
        backend="cpu",
        device_kinds=["cpu"],
        device_count=1,
        trace_s=0,
        lower_s=0,
        compile_s=0,
        module=m,
        graphs=control_graphs(m),
    )
    assert "last_one" in hlo_bundle(rep)["text/html"]
    bare = (
        "HloModule m\n\nb0 {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n\n"
        "b1 {\n  x = f32[] parameter(0)\n  ROOT y = f32[] sine(x)\n}\n\n"
        "ENTRY main {\n  i = s32[] parameter(0)\n  v = f32[] parameter(1)\n"
        "  ROOT r = f32[] conditional(i, v, v), branch_computations={b0, b1}\n}\n"
    )
    m2 = parse_hlo(bare)
    assert m2.entry.root.called == ["b0", "b1"] and m2.by_name["b1"].role == "control"
    assert list(control_graphs(m2)) == ["main", "b0", "b1"]


def test_stablehlo_region_ops_get_their_location():
    def f(x):
        return jax.lax.fori_loop(0, 3, lambda k, v: v * 2, x)

    sh = parse_stablehlo(jax.jit(f).lower(jnp.ones(4)).as_text(debug_info=True))
    loop = next(o for o in sh.ops if o.op == "stablehlo.while")
    assert loop.op_name.endswith("while") and loop.source is not None


def test_fusion_flag_needs_compiled_stage(run):
    text = run("%hlo --stage lowered --fusion hf(hw, hx)").short_error()
    assert "--fusion needs --stage compiled" in text

"""The HLO parser on what JAX compiles and on the text forms XLA prints: every module of a
broad corpus parses into sound graphs (each instruction once, the operands as edges, the
collectives with the device groups JAX laid out), and the odd forms (replica-group
notations, async collectives, multi-line constants, names without ``%``, StableHLO
locations) read right.  How the graphs are drawn: tests/views/test_hlo.py."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import pytest

from tests import programs
from tests.hlo_corpus import CASES, corpus_texts
from workbench.engine.hlo.graph import control_graphs, find_collectives, parse_replica_groups
from workbench.engine.hlo.model import HloParseError
from workbench.engine.hlo.parser import parse_hlo, parse_instruction
from workbench.engine.hlo.report import HloReport
from workbench.engine.hlo.shapes import parse_shape
from workbench.engine.hlo.stablehlo import parse_stablehlo
from workbench.views.hlo import hlo_bundle

# -- the corpus: every module JAX produced parses, with sound graphs ---------------------------


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    return corpus_texts()


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


# -- the forms XLA prints ----------------------------------------------------------------------


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


def test_stablehlo_locations_resolve_to_user_lines():
    def f(x):
        return jnp.sum(jnp.tanh(x) * 2)

    lowered = jax.jit(f).lower(jnp.ones(3))
    sh = parse_stablehlo(lowered.as_text(debug_info=True))
    tanh = next(o for o in sh.ops if o.op == "stablehlo.tanh")
    assert tanh.primitive == "tanh" and tanh.source is not None
    assert tanh.source.file == __file__
    assert sh.op_count >= 4


def test_stablehlo_region_ops_get_their_location():
    def f(x):
        return jax.lax.fori_loop(0, 3, lambda k, v: v * 2, x)

    sh = parse_stablehlo(jax.jit(f).lower(jnp.ones(4)).as_text(debug_info=True))
    loop = next(o for o in sh.ops if o.op == "stablehlo.while")
    assert loop.op_name.endswith("while") and loop.source is not None


def _attr_program(x, w):
    """A dot (contracting dims), a fusion (calls), a reduce (to_apply) and a while loop
    (condition, body): the attributes a module's readers ask for."""
    y = jnp.tanh(x @ w)
    s = jax.lax.fori_loop(0, 3, lambda i, a: a * 0.5 + 1.0, jnp.sum(y, axis=0))
    return s.max()


def test_attributes_read_on_first_use_are_the_printed_ones():
    """Attributes are split only when asked (most fused instructions never are); asked
    for, each instruction's are exactly the ``key=value`` pairs of its printed line, in
    order (metadata, cut out first, leads), and linking found every called computation."""
    text = jax.jit(_attr_program).lower(jnp.ones((4, 8)), jnp.ones((8, 8))).compile().as_text()
    module = parse_hlo(text)
    lines = text.splitlines()
    fused = [i for c in module.computations if c.role == "fused" for i in c.instructions]
    # nothing split yet, but for the few that call a computation (linking reads those)
    assert fused and all(i._attrs is None for i in fused if not i.called)
    seen: set[str] = set()
    for comp in module.computations:
        for ins in comp.instructions:
            line = lines[ins.line_no - 1]
            attrs = ins.attrs
            assert attrs is ins.attrs  # split once, then kept
            if ins.metadata:
                assert next(iter(attrs)) == "metadata" and f"metadata={ins.metadata}" in line
            at = -1
            for key, value in attrs.items():
                seen.add(key)
                if key == "metadata":
                    continue
                piece = f"{key}={value}" if value else key
                assert piece in line, (piece, line)
                assert line.index(piece) > at  # in printed order
                at = line.index(piece)
            for called in ins.called:
                assert called in module.by_name
                assert any(called in v for v in attrs.values())
    assert {"calls", "to_apply", "condition", "body", "lhs_contracting_dims"} <= seen
    dots = [i for i in module.instructions() if i.opcode == "dot"]
    assert all(i.int_list("lhs_contracting_dims") == (1,) for i in dots)
    whiles = [i for i in module.instructions() if i.opcode == "while"]
    assert whiles and all(len(i.called) == 2 for i in whiles)

"""notebooks/00_tour.ipynb teaches what it says: each JAX fact its prose names is checked
against what JAX itself computes for the same program in this test process."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from tests import tutorials
from tests.tutorials import (
    BENCH,
    CACHE,
    CACHE_CELL,
    COMPARE,
    HLO,
    JAXPR,
    PROFILE,
    SHARDING,
    histogram,
)

# the Binder session's: they read the run Binder's environment made (tests/tutorials.py)
pytestmark = [pytest.mark.notebook, pytest.mark.binder]


@pytest.fixture(scope="module")
def r():
    return tutorials.run(tutorials.TOUR)


def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def softmax(x):
    z = x - jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(z)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def cell_lines(cell) -> list[dict]:
    return [g for d in tutorials.data_of(cell, CACHE_CELL) for g in d["functions"]]


def test_first_cell_sets_fake_devices_before_jax(r):
    first = r.code_cells()[0].source.splitlines()
    assert first[0] == "import workbench" and first[1].startswith("workbench.fake_devices(8)")
    assert "%load_ext workbench" in first


def test_the_jaxpr_has_the_primitives_the_prose_names(r):
    shown = tutorials.one(r.cell("%%jaxpr\ndef loss"), JAXPR)
    want = histogram(jax.make_jaxpr(loss)(jnp.ones((4, 4)), jnp.ones((2, 4))))
    assert shown["stats"]["histogram"] == want
    assert {"dot_general", "tanh", "integer_pow", "reduce_sum"} <= set(want)
    assert shown["in_avals"] == ["f32[4,4]", "f32[2,4]"]


def test_grad_adds_a_second_dot_general_and_keeps_tanh(r):
    shown = tutorials.one(r.cell("%jaxpr -t grad loss"), JAXPR)
    want = histogram(jax.make_jaxpr(jax.grad(loss))(jnp.ones((4, 4)), jnp.ones((2, 4))))
    assert shown["stats"]["histogram"] == want
    assert want["dot_general"] == 2 and want["tanh"] == 1  # forward tanh kept, not recomputed
    assert "transpose" in want


def test_compare_shows_per_example_gradients_from_about_as_many_equations(r):
    stages = tutorials.one(r.cell("%jaxpr --compare"), COMPARE)["stages"]
    assert [s["label"] for s in stages] == [
        "loss",
        "grad(loss)",
        "vmap(grad(loss), in_axes=(None, 0))",
    ]
    batched = jax.make_jaxpr(jax.vmap(jax.grad(loss), in_axes=(None, 0)))(
        jnp.ones((4, 4)), jnp.ones((8, 2, 4))
    )
    assert (
        stages[2]["out_avals"]
        == ["f32[8,4,4]"]
        == [f"f32[{','.join(map(str, v.aval.shape))}]" for v in batched.jaxpr.outvars]
    )
    assert stages[2]["stats"]["equations"] == sum(histogram(batched).values())
    # "about as many equations": vmap rewrote the primitives, it added no loop
    assert stages[2]["stats"]["equations"] <= stages[1]["stats"]["equations"] + 3
    assert not {"scan", "while"} & set(stages[2]["stats"]["histogram"])
    # the gradient's dot_general keeps the batch axis (a batch dimension) instead of summing it
    dots = [e for e in batched.jaxpr.eqns if e.primitive.name == "dot_general"]
    assert any(e.params["dimension_numbers"][1][0] for e in dots)
    assert dots[-1].outvars[0].aval.shape == (8, 4, 4)


def test_xla_fused_the_softmax_into_fewer_kernels_than_equations(r):
    report = tutorials.one(r.cell("%%hlo\ndef softmax"), HLO)
    equations = sum(histogram(jax.make_jaxpr(softmax)(jnp.ones((128, 512)))).values())
    assert 0 < report["counts"]["fusions"] < equations
    fused = [n for g in report["graphs"].values() for n in g["nodes"] if n["kind"] == "fusion"]
    assert any(len(n["fused_ops"]) > 1 for n in fused)  # a chain became one kernel
    assert any(s["line"] in (3, 4, 5) for n in fused for s in n["sources"])  # labelled by line


def test_compile_lines_name_the_recompile_and_stay_quiet_when_cached(r):
    (first,) = cell_lines(r.cell("@jax.jit\ndef step"))
    assert first["function"] == "jit(step)" and first["compiles"] == 1 and first["reasons"] == []
    (again,) = cell_lines(r.cell("w = step(w, jnp.ones((3, 4)))"))
    assert [(m["kind"], m["before"], m["after"]) for m in again["reasons"]] == [
        ("shape", "f32[2,4]", "f32[3,4]")
    ]
    assert tutorials.data_of(r.cell("for _ in range(3)"), CACHE_CELL) == []


def test_jaxcache_and_the_guard(r):
    table = tutorials.one(r.cell("%jaxcache"), CACHE)
    (step,) = [f for f in table["functions"] if f["function"] == "jit(step)"]
    assert step["compiles"] == 2 and step["origin"] == "user"
    assert any(f["origin"] == "jax" for f in table["functions"])  # helpers counted apart
    message = tutorials.printed(r.cell("try:\n    with workbench.no_recompiles()"))
    assert "1 recompile inside no_recompiles()" in message
    assert "jit(step)" in message and "x changed f32[3,4] -> f32[5,4]" in message


def test_jaxbench_times_the_first_call_apart(r):
    bench = tutorials.one(r.cell("wb, xb ="), BENCH)
    (m,) = bench["measurements"]
    assert m["first_call"]["compiles"] >= 1 and m["stats"]["n"] > 1
    assert m["first_call"]["source"] == "cache"  # split from the compile records
    roof = m["roofline"]
    assert roof["flops_per_s"] > 0 and roof["peak_source"] == "unknown"  # a CPU: no datasheet


def test_sharding_picture_matches_jax_placement(r):
    (layout,) = tutorials.one(r.cell("from jax.sharding import"), SHARDING)["layouts"]
    assert layout["spec_text"] == "P('data', 'model')" and len(layout["shards"]) == 8
    assert layout["mesh"]["axis_names"] == ["data", "model"]
    assert layout["mesh"]["axis_sizes"] == [4, 2]
    assert layout["mesh"]["axis_types"] == ["Auto", "Auto"]
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    x = jax.device_put(jnp.zeros((16, 8)), NamedSharding(mesh, P("data", "model")))
    placed = {
        d.id: tuple((s.start, s.stop) for s in idx)
        for d, idx in x.sharding.devices_indices_map(x.shape).items()
    }
    drawn = {
        s["devices"][0]: tuple(zip(s["start"], s["stop"], strict=True)) for s in layout["shards"]
    }
    assert drawn == placed


def test_hlo_shows_the_all_reduce_over_model_that_xla_inserts(r):
    report = tutorials.one(r.cell("%%hlo\ndef layer"), HLO)
    shown = [(c["kind"], sorted(map(sorted, c["replica_groups"]))) for c in report["collectives"]]
    # the same program compiled here: its collectives and their device groups
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    x = jax.ShapeDtypeStruct((16, 8), jnp.float32, sharding=NamedSharding(mesh, P("data", "model")))
    w = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(mesh, P("model", None)))
    text = jax.jit(lambda x, w: jnp.tanh(x @ w)).lower(x, w).compile().as_text()
    kinds = re.findall(r"= \S+ (all-reduce|all-gather|reduce-scatter|all-to-all)\(", text)
    assert [k for k, _ in shown] == kinds == ["all-reduce"]
    model_groups = sorted(sorted(d.id for d in row) for row in mesh.devices)
    assert shown[0][1] == model_groups  # pairs: the devices of each 'model' group


def test_mesh_explorer_compiles_and_needs_the_all_reduce_the_prose_names(r):
    cell = r.cell("workbench.mesh_explorer(")
    assert not [o for o in cell.outputs if o.output_type == "error"]
    assert any(g.get("inspected_by") == ["the mesh explorer"] for g in cell_lines(cell))
    from workbench.engine.sharding.mesh_explorer import ExplorerConfig, explore

    def matmul(spec: str, rhs_spec: str):
        """The explorer's answer for the notebook's matmul with these two operand specs."""
        return explore(
            ExplorerConfig(
                operation="matmul",
                shape="256, 256",
                mesh_shape="4, 2",
                axis_names="data, model",
                spec=spec,
                rhs_spec=rhs_spec,
            )
        )

    res = matmul("None, model", "model, None")
    assert any(c.kind == "all-reduce" and c.axes == ["model"] for c in res.collectives), [
        c.description for c in res.collectives
    ]
    # the prose's change: rows over data, columns over model, nothing summed is split
    blocks = matmul("data, None", "None, model")
    assert blocks.collectives == [], [c.description for c in blocks.collectives]
    # ... while changing only the second operand's spec brings other collectives
    other = matmul("None, model", "None, model")
    assert other.collectives and not any(
        c.kind == "all-reduce" and c.axes == ["model"] for c in other.collectives
    )


def test_profile_attributes_time_to_the_cells_lines(r):
    prof = tutorials.one(r.cell("%%jaxprof"), PROFILE)
    lines = {ln["line"]: ln for ln in prof["lines"] if ln["in_cell"]}
    assert {3, 4} <= set(lines)
    assert 0.99 <= sum(ln["share"] for ln in prof["lines"]) <= 1.01
    sorts = [i for i in prof["instructions"] if "sort" in i["name"]]
    assert sorts and all(s["seconds"] > 0 for s in sorts)
    # "the matmul does almost all of the arithmetic": the most FLOPs come from line 3
    counted = [i for i in prof["instructions"] if i.get("flops")]
    heaviest = max(counted, key=lambda i: i["flops"])
    assert any(s["line"] == 3 for s in heaviest["sources"])


def test_the_short_error_and_its_fix(r):
    (bad,) = [c for c in r.code_cells() if "raises-exception" in tutorials.tags(c)]
    (err,) = [o for o in bad.outputs if o.output_type == "error"]
    assert err["ename"] == "CellError"
    assert "TracerBoolConversionError" in err["evalue"] and "if x > 0" in err["evalue"]
    fixed = tutorials.one(r.cell("%%jaxpr\ndef relu(x):\n    return jnp.where"), JAXPR)
    assert "select_n" in fixed["stats"]["histogram"]


def test_python_api_counts_match_jax(r):
    cell = r.cell("ins = workbench.inspect(")
    text = tutorials.printed(cell)
    closed = jax.make_jaxpr(jax.grad(loss))(
        jax.ShapeDtypeStruct((512, 512), jnp.float32), jax.ShapeDtypeStruct((64, 512), jnp.float32)
    )
    assert f"equations: {sum(histogram(closed).values())}" in text
    assert re.search(r"XLA's cost analysis: [\d.e+]+ FLOPs", text)
    assert tutorials.one(cell, JAXPR)["label"] == "jvp(loss)"


def test_links_every_topic_notebook_in_order(r):
    text = "\n".join(c.source for c in r.committed.cells if c.cell_type == "markdown")
    links = re.findall(r"\]\((\d\d_[a-z_]+)\.ipynb\)", text.split("## Where to next")[1])
    assert links == tutorials.TOPICS
    assert not tutorials.find_exercises(r.committed)  # the tour has no exercises

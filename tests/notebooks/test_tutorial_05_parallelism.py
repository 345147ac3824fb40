"""notebooks/05_parallelism.ipynb teaches what its prose says: pmap's psum/pmean results and
what pmap is built on today, the layouts ``%sharding`` draws, Explicit-sharding types and the
error on an ambiguous contraction, and the collectives XLA compiles for the notebook's
programs (recomputed here, in the test process, on the same 8 CPU devices)."""

from __future__ import annotations

import re
from functools import partial

import jax
import jax.numpy as jnp
import pytest
from jax import lax
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from tests import tutorials
from tests.tutorials import CACHE_CELL, HLO, JAXPR, SHARDING

NAME = "05_parallelism"
# the Binder session's: they read the run Binder's environment made (tests/tutorials.py)
pytestmark = [pytest.mark.notebook, pytest.mark.binder]

COLLECTIVES = "all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute"


@pytest.fixture(scope="module")
def r():
    return tutorials.run(NAME)


def _one(cell, mime):
    return tutorials.one(cell, mime)


def _text(cell, mime) -> str:
    return "".join(o["data"]["text/plain"] for o in cell.outputs if mime in o.get("data", {}))


def _functions(cell) -> list[str]:
    return [g["function"] for p in tutorials.data_of(cell, CACHE_CELL) for g in p["functions"]]


def _compiled_collectives(fn, *args) -> list[str]:
    """The collectives XLA puts in ``fn``'s optimized module here, in program order."""
    text = jax.jit(fn).lower(*args).compile().as_text()
    return re.findall(rf"\s({COLLECTIVES})(?:-start)?\(", text)


def _model_pairs(mesh) -> list[list[int]]:
    """Device ids that talk in a collective over 'model': one group per row of the mesh."""
    return sorted(sorted(d.id for d in row) for row in mesh.devices)


def _mesh(auto: bool = False):
    kw = {"axis_types": (AxisType.Auto,) * 2} if auto else {}
    return jax.make_mesh((4, 2), ("data", "model"), **kw)


def _specs(mesh, xs, ws):
    return (
        jax.ShapeDtypeStruct((64, 32), jnp.float32, sharding=NamedSharding(mesh, xs)),
        jax.ShapeDtypeStruct((32, 16), jnp.float32, sharding=NamedSharding(mesh, ws)),
    )


def test_pmap_psum_pmean_and_its_compile_line(r):
    cell = r.cell("def share_of_total(row):")
    out = tutorials.printed(cell)
    assert "fractions sum to 1.0" in out
    x = jnp.arange(8 * 4, dtype=jnp.float32).reshape(8, 4)
    assert str(float(x.mean())) in out  # pmean of the row means = the global mean, everywhere
    assert "pmap(share_of_total)" in _functions(cell)  # the compile line names the pmap
    lay = _one(r.cell("%sharding fractions"), SHARDING)["layouts"][0]
    assert lay["shape"] == [8, 4] and lay["mesh"]["axis_names"] == ["i"]
    assert lay["spec_text"] == "P('i')" and len(lay["shards"]) == 8
    # "Its sharding is a NamedSharding on a one-axis mesh named after axis_name"
    out = jax.pmap(lambda r: r / lax.psum(r.sum(), "i"), axis_name="i")(x)
    assert isinstance(out.sharding, NamedSharding) and out.sharding.mesh.axis_names == ("i",)


def test_pmap_jaxpr_is_a_jit_of_a_shard_map_as_the_prose_says(r):
    shown = _text(r.cell("%%jaxpr\nshares(x)"), JAXPR)

    def share_of_total(row):
        total = lax.psum(row.sum(), axis_name="i")
        return row / total, lax.pmean(row.mean(), axis_name="i")

    here = str(jax.make_jaxpr(jax.pmap(share_of_total, axis_name="i"))(jnp.ones((8, 4))))
    for word in ("shard_map", "psum", "f32[1,4]"):
        assert (word in shown) == (word in here), word
    assert "shard_map" in shown and "psum" in shown


def test_data_parallel_gradient_matches_the_full_batch(r):
    out = tutorials.printed(r.cell("def loss(w, xb, yb):"))
    assert "same gradient on every device: True" in out
    assert "equals the full-batch gradient: True" in out


def test_layouts_drawn_as_the_prose_describes(r):
    mesh = _mesh()
    lay = _one(r.cell("mesh = jax.make_mesh((4, 2)"), SHARDING)["layouts"][0]
    assert lay["spec_text"] == "P('data', 'model')" and lay["shape"] == [16, 8]
    assert lay["mesh"]["axis_sizes"] == [4, 2]
    # "Explicit, the default of jax.make_mesh": what this JAX does
    assert lay["mesh"]["axis_types"] == [str(t).split(".")[-1] for t in mesh.axis_types]
    assert {tuple(s["shape"]) for s in lay["shards"]} == {(4, 4)}
    params = {p["path"]: p for p in _one(r.cell("params = {"), SHARDING)["layouts"]}
    assert params["['w']"]["replication"] == 4 and params["['w']"]["replicated_axes"] == ["data"]
    assert params["['b']"]["fully_replicated"] and params["['b']"]["replication"] == 8
    assert params["['flat']"]["replication"] == 1 and len(params["['flat']"]["shards"]) == 8


def test_sharding_of_a_non_array_is_the_short_error(r):
    cell = r.cell("%sharding a.shape")
    (err,) = [o for o in cell.outputs if o.output_type == "error"]
    assert err["ename"] == "CellError" and len(err["traceback"]) <= 4
    assert any("holds no jax.Array" in t for t in err["traceback"])


def test_explicit_types_carry_the_sharding(r):
    mesh = _mesh()
    shown = _text(r.cell("%%jaxpr\ndef layer(x, w):"), JAXPR)
    here = str(
        jax.make_jaxpr(lambda x, w: jnp.tanh(x @ w))(
            *_specs(mesh, P("data", None), P(None, "model"))
        )
    )
    types = set(re.findall(r"f32\[[^\]]*@[^\]]*\]", here))
    assert "f32[64@data,16@model]" in types  # the prose's example
    assert types <= set(re.findall(r"f32\[[^\]]*\]", shown))


def test_ambiguous_contraction_is_an_error_and_out_sharding_fixes_it(r):
    mesh = _mesh()
    x, w = _specs(mesh, P("data", "model"), P("model", None))
    with pytest.raises(Exception) as info:
        jax.jit(lambda x, w: x @ w).trace(x, w)
    ename = type(info.value).__name__
    cell = r.cell("x_split = jax.ShapeDtypeStruct(")
    (err,) = [o for o in cell.outputs if o.output_type == "error"]
    assert (
        err["ename"] == "CellError" and ename in err["evalue"] and "out_sharding" in err["evalue"]
    )

    fixed = _one(r.cell("def layer_out(x, w):"), HLO)
    out = NamedSharding(mesh, P("data", None))
    want = _compiled_collectives(lambda x, w: jnp.tanh(jnp.matmul(x, w, out_sharding=out)), x, w)
    assert want and [c["kind"] for c in fixed["collectives"]] == want
    assert "all-reduce" in want
    assert [sorted(g) for g in fixed["collectives"][0]["replica_groups"]] == _model_pairs(mesh)


def test_auto_axes_the_partitioner_inserts_the_all_reduce(r):
    mesh = _mesh(auto=True)
    x, w = _specs(mesh, P("data", "model"), P("model", None))
    shown = _one(r.cell("from jax.sharding import AxisType"), HLO)
    want = _compiled_collectives(lambda x, w: jnp.tanh(x @ w), x, w)
    assert "all-reduce" in want and [c["kind"] for c in shown["collectives"]] == want
    assert shown["device_count"] == 8
    assert [sorted(g) for g in shown["collectives"][0]["replica_groups"]] == _model_pairs(mesh)
    # the output layout the notebook draws is the one XLA chooses here
    lay = _one(r.cell("xa = jax.device_put("), SHARDING)["layouts"][0]
    xa = jax.device_put(jnp.ones((64, 32)), NamedSharding(mesh, P("data", "model")))
    wa = jax.device_put(jnp.ones((32, 16)), NamedSharding(mesh, P("model", None)))
    got = jax.jit(lambda x, w: jnp.tanh(x @ w))(xa, wa).sharding
    assert got.is_equivalent_to(NamedSharding(mesh, P("data")), 2)  # as the prose says
    assert lay["spec_text"] == "P('data')" and lay["replicated_axes"] == ["model"]


def test_shard_map_body_and_its_collective(r):
    mesh = _mesh()
    x, w = _specs(mesh, P("data", "model"), P("model", None))

    @partial(
        jax.shard_map,
        mesh=mesh,
        in_specs=(P("data", "model"), P("model", None)),
        out_specs=P("data", None),
    )
    def layer_by_hand(xb, wb):
        return jnp.tanh(lax.psum(xb @ wb, axis_name="model"))

    shown = _text(r.cell("%%jaxpr\n@jax.jit\n@partial(jax.shard_map"), JAXPR)
    here = str(jax.make_jaxpr(layer_by_hand)(x, w))
    for word in ("pvary", "psum_invariant", "f32[16,16]", "{V:data}"):  # named in the prose
        assert word in here and word in shown, word
    hlo = _one(r.cell("%hlo --no-fusion layer_by_hand"), HLO)
    want = _compiled_collectives(layer_by_hand, x, w)
    assert want == ["all-reduce"] and [c["kind"] for c in hlo["collectives"]] == want
    cell = r.cell("xe = jax.device_put(xa")
    assert "shard_map == jit: True" in tutorials.printed(cell)
    lay = _one(cell, SHARDING)["layouts"][0]
    assert lay["spec_text"] == "P('data', None)" or lay["spec_text"] == "P('data')"


def test_mesh_explorer_and_its_engine(r):
    app = r.cell("explorer = workbench.mesh_explorer(")
    assert app.outputs and not [o for o in app.outputs if o.output_type == "error"]
    assert tutorials.shows_workbench(app)  # its compile line: "inspected by the mesh explorer"
    out = tutorials.printed(r.cell("from workbench.engine.sharding.mesh_explorer import"))
    assert "[\"all-reduce over 'model'\"]" in out
    assert "after: [] | removed:" in out


def test_exercises_ran_on_the_solutions(r):
    for n in (1, 2, 3):
        assert any(f"Exercise {n}: correct" in tutorials.printed(c) for c in r.code_cells()), n


def test_auto_axes_prose_names_the_partitioner_this_jax_uses(r):
    prose = next(
        c.source
        for c in r.nb.cells
        if c.cell_type == "markdown" and c.source.startswith("## Auto axes")
    ).replace("\n", " ")
    # Shardy is JAX's default partitioner (jax_use_shardy_partitioner); GSPMD was before it
    assert jax.config.jax_use_shardy_partitioner
    assert "Shardy, which replaced GSPMD as JAX's default" in prose


def test_two_processes_sum_together_and_jaxcluster_names_the_shape_divergence(r):
    cell = r.cell("%%px\nimport jax, jax.numpy as jnp, numpy as np")
    # ipyparallel shows each engine's printing as a display labelled [stdout:N]
    shown = {
        o["data"]["text/plain"].split("]", 1)[0] + "]": o["data"]["text/plain"]
        for o in cell.outputs
        if o.get("data", {}).get("text/plain", "").startswith("[stdout:")
    }
    total = float(jnp.sum(jnp.arange(16.0) * 2.0))
    for p in (0, 1):  # each process printed the cross-process sum, labelled by its engine
        assert f"process {p} of 2: total = {total}" in shown[f"[stdout:{p}]"], shown
    rep = _one(r.cell("%jaxcluster"), "application/vnd.jax-workbench.cluster+json")
    assert [p["index"] for p in rep["processes"]] == [0, 1]
    assert all(len(p["devices"]) == 2 and p["error"] is None for p in rep["processes"])
    (d,) = [d for d in rep["divergences"] if d["function"].startswith("jit(step) at line")]
    small, big = (
        jax.core.ShapedArray((n,), jnp.float32).str_short(short_dtypes=True) for n in (8, 16)
    )
    # two processes that differ split evenly: neither is named the odd one out
    assert d["kind"] == "shape" and d["processes"] == [0, 1]
    assert f"process 0 compiled {small}; process 1 compiled {big}" in d["text"]
    (row,) = [row for row in rep["rows"] if row["function"].startswith("jit(total) at line")]
    assert not row["diverged"]  # the same program on both
    assert len({c["variants"][0]["fingerprint"] for c in row["cells"]}) == 1
    assert not [c for c, _ in r.errors() if c.source.startswith(("rc.", "%%px", "%jaxcluster"))]

"""notebooks/03_vmap.ipynb teaches what its prose says: the batched jaxprs it shows are what
``jax.vmap`` builds for the same functions in this process (the same equations on bigger
shapes, batch dimensions in ``dot_general``, moved reduction axes, ``transpose`` only where
``out_axes`` or a disagreement needs one), per-example gradients are batched outer products,
and the loop/vmap comparison says what the numbers say."""

from __future__ import annotations

import ast

import jax
import jax.numpy as jnp
import pytest

from tests import tutorials
from tests.tutorials import BENCH, shown_jaxpr, shown_stages

NAME = "03_vmap"
# the Binder session's: they read the run Binder's environment made (tests/tutorials.py)
pytestmark = [pytest.mark.notebook, pytest.mark.binder]


@pytest.fixture(scope="module")
def r():
    return tutorials.run(NAME)


def dims(text):
    """A ``dimension_numbers`` parameter as nested tuples (the payload has ``str`` of JAX's
    value; JAX's own printing writes lists)."""

    def tup(v):
        return tuple(tup(x) for x in v) if isinstance(v, (tuple, list)) else v

    return tup(ast.literal_eval(text))


def eqns(payload):
    return payload["jaxpr"]["eqns"]


def prims(payload):
    return [e["primitive"] for e in eqns(payload)]


def param(payload, primitive, name):
    (value,) = [e["params"][name] for e in eqns(payload) if e["primitive"] == primitive]
    return value


def made(fn, *args):
    """The jaxpr JAX makes for ``fn`` in this process: (primitives, {primitive: params as
    text}) for comparing with what the notebook showed."""
    closed = jax.make_jaxpr(fn)(*args)
    return (
        [e.primitive.name for e in closed.eqns],
        {e.primitive.name: {k: str(v) for k, v in e.params.items()} for e in closed.eqns},
    )


def layer(w, x):
    return jnp.sum(jnp.tanh(w @ x))


def features(w, x):
    return jnp.tanh(w @ x)


def loss(w, x, y):
    return jnp.sum((jnp.tanh(w @ x) - y) ** 2)


W = jnp.arange(6.0).reshape(2, 3) / 6
X = jnp.array([1.0, 2.0, 3.0])
XS = jnp.arange(24.0).reshape(8, 3) / 24


def test_vmap_keeps_the_equations_and_leaves_the_batch_where_it_lands(r):
    one, batched = shown_stages(r, '%%jaxpr --compare -t "vmap(in_axes=(None, 0))"\ndef layer')
    assert one["in_avals"] == ["f32[2,3]", "f32[3]"] and one["out_avals"] == ["f32[]"]
    assert prims(one) == prims(batched) == ["dot_general", "tanh", "reduce_sum"]
    names, params = made(jax.vmap(layer, in_axes=(None, 0)), W, XS)
    assert prims(batched) == names
    assert (
        param(batched, "dot_general", "dimension_numbers")
        == params["dot_general"]["dimension_numbers"]
    )
    assert dims(param(one, "dot_general", "dimension_numbers")) == (((1,), (0,)), ((), ()))
    assert dims(param(batched, "dot_general", "dimension_numbers")) == (((1,), (1,)), ((), ()))
    dot_out = eqns(batched)[0]["outvars"][0][1]
    assert batched["avals"][dot_out]["shape"] == [2, 8]  # batch on axis 1 of the dot's output
    assert batched["out_avals"] == ["f32[8]"]
    assert tutorials.printed(r.cell("batched = jax.vmap")).split() == ["(8,)", "True"]


def test_out_axes_decides_whether_a_transpose_is_needed(r):
    axis0 = shown_jaxpr(r, "def features(w, x)")
    axis1 = shown_jaxpr(r, '%jaxpr -t "vmap(in_axes=(None, 0), out_axes=1)" features')
    assert prims(axis0)[-1] == "transpose" and "transpose" not in prims(axis1)
    assert prims(axis0) == made(jax.vmap(features, in_axes=(None, 0)), W, XS)[0]
    assert prims(axis1) == made(jax.vmap(features, in_axes=(None, 0), out_axes=1), W, XS)[0]
    assert axis0["out_avals"] == ["f32[8,2]"] and axis1["out_avals"] == ["f32[2,8]"]
    # in_axes=1: the dot contracts the other dimension, no transpose either
    assert "transpose" not in made(jax.vmap(layer, in_axes=(None, 1)), W, XS.T)[0]
    printed = tutorials.printed(r.cell('print("in_axes=1:"'))
    assert "(8,)" in printed and "(8, 2)" in printed and "(2, 8)" in printed


def test_dot_general_gains_batch_dimensions_and_the_reduction_axis_moves(r):
    one, both = shown_stages(r, "ws = jnp.stack")
    assert one["in_avals"] == ["f32[2,3]", "f32[3]"]
    ws = jnp.stack([W * (i + 1) for i in range(8)])
    names, params = made(jax.vmap(layer), ws, XS)
    assert prims(both) == names == prims(one)
    one_dims = param(one, "dot_general", "dimension_numbers")
    both_dims = param(both, "dot_general", "dimension_numbers")
    assert dims(one_dims) == (((1,), (0,)), ((), ()))
    assert both_dims == params["dot_general"]["dimension_numbers"]
    assert dims(both_dims) == (((2,), (1,)), ((0,), (0,)))
    assert param(both, "reduce_sum", "axes") == params["reduce_sum"]["axes"]
    assert param(one, "reduce_sum", "axes") == "(0,)"
    assert "1" in param(both, "reduce_sum", "axes") and "0" not in param(both, "reduce_sum", "axes")


def test_nested_vmap_writes_the_broadcasting(r):
    one, inner, shown = shown_stages(r, "def dist(u, v)")
    assert one["in_avals"] == ["f32[3]", "f32[3]"] and one["out_avals"] == ["f32[]"]
    assert inner["in_avals"] == ["f32[3]", "f32[7,3]"] and inner["out_avals"] == ["f32[7]"]

    def dist(u, v):
        return jnp.sqrt(jnp.sum((u - v) ** 2))

    a, b = jnp.ones((5, 3)), jnp.ones((7, 3))
    names, params = made(jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None)), a, b)
    assert prims(shown) == names
    assert prims(shown).count("broadcast_in_dim") == 2 and "sub" in prims(shown)
    assert shown["out_avals"] == ["f32[5,7]"]
    assert param(shown, "reduce_sum", "axes") == params["reduce_sum"]["axes"]
    assert "2" in param(shown, "reduce_sum", "axes")
    shapes = {tuple(a["shape"]) for a in shown["avals"]}
    assert {(5, 1, 3), (1, 7, 3), (5, 7, 3)} <= shapes
    assert tutorials.printed(r.cell("pairwise = jax.vmap")).split() == ["(5,", "7)", "True"]


def test_per_example_gradients_are_batched_outer_products(r):
    fwd, one, per = shown_stages(r, '%%jaxpr --compare -t grad -t "vmap(in_axes=(None, 0, 0))"')
    assert fwd["in_avals"] == one["in_avals"] == ["f32[2,3]", "f32[3]", "f32[2]"]
    assert eqns(one)[-1]["primitive"] == eqns(per)[-1]["primitive"] == "dot_general"
    assert dims(eqns(one)[-1]["params"]["dimension_numbers"]) == (((), ()), ((), ()))
    assert dims(eqns(per)[-1]["params"]["dimension_numbers"]) == (((), ()), ((0,), (0,)))
    assert one["stats"]["histogram"] == histogram_of(jax.make_jaxpr(jax.grad(loss))(W, X, Y))
    assert one["out_avals"] == ["f32[2,3]"] and per["out_avals"] == ["f32[8,2,3]"]
    ys = jnp.tile(jnp.array([0.5, -0.5]), (8, 1))
    names, _ = made(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)), W, XS, ys)
    assert prims(per) == names and "transpose" in names
    printed = tutorials.printed(r.cell("per_example = jax.vmap"))
    assert printed.startswith("(8, 2, 3)") and printed.strip().endswith("True")


def histogram_of(closed):
    counts: dict[str, int] = {}
    for e in closed.eqns:
        counts[e.primitive.name] = counts.get(e.primitive.name, 0) + 1
    return counts


Y = jnp.array([0.5, -0.5])


def test_the_loop_grows_with_the_batch_and_vmap_does_not(r):
    printed = tutorials.printed(r.cell("def loop(w, xs)"))
    counts = {
        line.split(":")[0]: int(line.split(":")[1].split()[0]) for line in printed.splitlines()
    }
    xs32 = jnp.ones((32, 3))

    def loop(w, xs):
        return jnp.stack([layer(w, x) for x in xs])

    assert counts["vmap"] == len(jax.make_jaxpr(jax.vmap(layer, in_axes=(None, 0)))(W, xs32).eqns)
    assert counts["loop"] == len(jax.make_jaxpr(loop)(W, xs32).eqns)
    assert counts["loop"] > 32 * counts["vmap"]


def test_bench_compares_the_three_variants(r):
    (payload,) = tutorials.data_of(r.cell("workbench.bench({"), BENCH)[-1:]
    assert "progress" not in payload
    assert payload["variants"] == ["jit(vmap)", "jit(loop)", "python loop"]
    by = {m["variant"]: m for m in payload["measurements"]}
    assert all(m["error"] is None and m["stats"] for m in by.values())
    # not timing noise: the unrolled loop compiles far longer, the eager loop dispatches
    # 32 x 3 primitives against one call
    assert by["jit(loop)"]["first_call"]["compile_s"] > by["jit(vmap)"]["first_call"]["compile_s"]
    ratios = {c["ratio"]["variant"]: c["ratio"]["median"] for c in payload["comparisons"]}
    assert ratios["python loop"] > 5


def test_exercises_use_vmap(r):
    sources = [r.committed.cells[e.solution].source for e in r.exercises]
    assert all("jax.vmap" in s for s in sources)
    assert "in_axes=(2, 0), out_axes=1" in sources[2]

"""Pytree summaries of real trees: what a user of Flax, Equinox and Optax passes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import workbench
from workbench.engine.jaxpr.trees import MAX_SUMMARY, Node, summarize
from workbench.schemas import mime_type

JAXPR_MIME = mime_type("jaxpr")


def _trees(fn, *args, **kwargs):
    return workbench.inspect(fn, *args, **kwargs).trees


def test_a_dict_of_many_same_avals_keeps_its_aval():
    node = Node(
        "dict",
        tuple(Node("leaf", aval="f32[4]") for _ in range(60)),
        keys=tuple(f"param_{i}" for i in range(60)),
    )
    text = summarize(node)
    assert len(text) <= MAX_SUMMARY
    assert text.endswith(": f32[4]}")
    assert "…+" in text


def test_custom_nodes_with_keys_name_their_children():
    nnx = pytest.importorskip("flax.nnx")

    class M(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(4, 4, rngs=rngs)
            self.l2 = nnx.Linear(4, 2, rngs=rngs)

    _, state = nnx.split(M(nnx.Rngs(0)))
    (t,) = _trees(lambda s: s, state)["in"]
    assert "l1" in t.summary and "l2" in t.summary
    assert t.leaves == 4


def test_a_module_with_static_leaves_reads_as_the_module():
    eqx = pytest.importorskip("equinox")
    mlp = eqx.nn.MLP(4, 4, 8, 2, key=jax.random.PRNGKey(0))
    m, x = _trees(lambda m, x: m(x), mlp, jnp.ones(4))["in"]
    assert (m.name, x.name) == ("m", "x")
    assert m.summary.startswith("MLP("), m.summary
    assert "weight" in m.summary and m.leaves == 6
    assert x.summary == "f32[4]"


def test_static_arguments_keep_the_names_of_the_others():
    def f(n, x, y):
        return x * n + y

    t = _trees(f, 3, jnp.ones(2), jnp.ones(2, jnp.int32), static_argnums=(0,))["in"]
    assert [(a.name, a.summary) for a in t] == [("x", "f32[2]"), ("y", "i32[2]")]
    g = jax.jit(f, static_argnums=0)
    t = _trees(g, 3, jnp.ones(2), jnp.ones(2, jnp.int32))["in"]
    assert [(a.name, a.summary) for a in t] == [("x", "f32[2]"), ("y", "i32[2]")]


def test_huge_trees_stay_short():
    tree = {i: [jnp.ones(i % 3 + 1)] * (i % 5 + 1) for i in range(300)}
    (t,) = _trees(lambda d: d, tree)["in"]
    assert len(t.summary) <= MAX_SUMMARY and t.leaves == sum(i % 5 + 1 for i in range(300))


def test_a_one_child_wrapper_reads_as_its_child():
    node = Node("BatchStat", (Node("leaf", aval="f32[4]"),), keys=("value",))
    assert summarize(node) == "BatchStat(f32[4])"
    # a trainable parameter says only what it is: its array
    node = Node("Param", (Node("leaf", aval="f32[4]"),), keys=("value",))
    assert summarize(node) == "f32[4]"


def test_private_children_without_arrays_are_left_out():
    bookkeeping = Node("PytreeState", ())
    node = Node(
        "Linear",
        (bookkeeping, Node("leaf", aval="f32[8]"), Node("leaf", aval="f32[4,8]")),
        keys=("_pytree__state", "bias", "kernel"),
    )
    assert summarize(node) == "Linear(bias: f32[8], kernel: f32[4,8])"
    # a private child that holds arrays stays: it is part of what the program computes with
    node = Node("M", (Node("leaf", aval="f32[2]"), Node("leaf", aval="f32[3]")), keys=("_w", "b"))
    assert summarize(node) == "M(_w: f32[2], b: f32[3])"


def test_an_nnx_module_argument_reads_as_its_layers_and_arrays():
    """A Flax NNX model passed as an argument (tests/real_models.py's MLP): its layers and
    their arrays, without the modules' own bookkeeping (``_pytree__state: PytreeState()``)."""
    from tests.real_models import nnx_mlp_setup

    s = nnx_mlp_setup()
    m, x = _trees(lambda m, x: m(x), s.model, s.x)["in"]
    din, dhidden = s.model.linear1.kernel.shape
    dout = s.model.linear2.kernel.shape[1]
    assert "_pytree__" not in m.summary and "PytreeState" not in m.summary, m.summary
    assert m.summary.startswith("MLP("), m.summary
    for part in (
        f"linear1: Linear(bias: f32[{dhidden}], kernel: f32[{din},{dhidden}])",
        f"linear2: Linear(bias: f32[{dout}], kernel: f32[{dhidden},{dout}])",
    ):
        assert part in m.summary, (part, m.summary)
    assert len(m.summary) <= MAX_SUMMARY
    assert x.summary == f"f32[{s.x.shape[0]},{s.x.shape[1]}]"


def test_a_dict_of_equal_layers_collapses_like_a_list():
    layer = Node(
        "dict",
        (Node("leaf", aval="f32[8,8]"), Node("leaf", aval="f32[8]")),
        keys=("kernel", "bias"),
    )
    node = Node("dict", (layer,) * 24, keys=tuple(f"layer_{i}" for i in range(24)))
    assert summarize(node) == (
        "{layer_0, layer_1, layer_2, layer_3, layer_4, layer_5, layer_6, "
        "layer_7, …+16: {kernel: f32[8,8], bias: f32[8]}}"
    )

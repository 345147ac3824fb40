"""Engine: inspect() over a spread of real programs, stage by stage."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.extend.core import jaxprs_in_params

import workbench
from tests import programs as P
from workbench.engine import build_model
from workbench.engine.jaxpr.model import JaxprModel


def prims(model: JaxprModel) -> set[str]:
    return set(model.histogram)


@pytest.mark.slow  # an MLP's gradient, traced by workbench and by JAX
def test_mlp_grad_matches_make_jaxpr():
    params = P.mlp_params()
    x, y = jnp.ones((5, 8)), jnp.ones((5, 4))
    ins = workbench.inspect(P.mlp_loss, params, x, y, transforms="grad")
    ref = jax.make_jaxpr(jax.grad(P.mlp_loss))(params, x, y)
    assert ins.jaxpr_text == str(ref)
    assert len(ins.model.eqns) == len(ref.jaxpr.eqns)
    assert ins.model.total_equations > len(ref.jaxpr.eqns)  # relu's custom_jvp body
    assert ins.out_avals == ["f32[16]", "f32[8,16]", "f32[4]", "f32[16,4]"]  # b, w per layer
    assert ins.label == "grad(mlp_loss)"


def test_stages_are_lazy_and_cached():
    ins = workbench.inspect(P.mlp_loss, P.mlp_params(), jnp.ones((2, 8)), jnp.ones((2, 4)))
    assert ins.timings.trace is None and ins.timings.compile is None
    j1 = ins.jaxpr
    assert ins.timings.trace is not None and ins.timings.lower is None
    assert ins.jaxpr is j1
    assert "stablehlo" in ins.stablehlo_text or "func.func" in ins.stablehlo_text
    assert ins.timings.lower is not None and ins.timings.compile is None
    assert "HloModule" in ins.hlo_text
    assert ins.timings.compile is not None and ins.timings.compile > 0
    assert ins.compiled is ins.compiled


def test_never_runs_on_data_with_abstract_args():
    calls = []

    def f(x):
        jax.debug.callback(lambda v: calls.append(v), x)
        return x * 2

    ins = workbench.inspect(f, jax.ShapeDtypeStruct((3,), jnp.float32))
    _ = ins.hlo_text, ins.cost, ins.memory
    assert calls == []
    assert ins.in_avals == ["f32[3]"]


def test_cost_and_memory_normalised():
    ins = workbench.inspect(jnp.dot, jnp.ones((64, 32)), jnp.ones((32, 16)))
    cost = ins.cost
    assert cost.flops is not None and cost.flops >= 2 * 64 * 32 * 16 * 0.9
    assert cost.bytes_accessed is not None
    mem = ins.memory
    assert mem.reported and mem.argument_bytes == (64 * 32 + 32 * 16) * 4
    assert mem.output_bytes == 64 * 16 * 4
    assert set(cost.to_dict()) >= {"flops", "transcendentals", "bytes_accessed", "raw"}
    assert ins.backend == "cpu" and ins.device_kinds == ["cpu"]


def test_normalisers_accept_every_shape():
    from workbench.engine.common.analysis import normalize_cost, normalize_memory

    assert normalize_cost(None).flops is None and not normalize_cost(None).reported
    assert normalize_cost([{"flops": 3}]).flops == 3.0
    assert normalize_cost({"flops": "x", "bytes accessed": 5}).bytes_accessed == 5.0
    assert not normalize_memory(None).reported
    assert normalize_memory({"temp_size_in_bytes": 7}).temp_bytes == 7


def test_scan_rnn_has_nested_scan_body():
    ins = workbench.inspect(P.rnn, P.rnn_params(), jnp.ones((5, 3)), transforms="grad")
    model = ins.model
    scans = [e for e in model.eqns if e.primitive == "scan"]
    assert scans and all(e.subjaxprs and e.subjaxprs[0].param == "jaxpr" for e in scans)
    assert "tanh" in prims(model)
    # recursion: the histogram counts equations inside the scan bodies
    top = sum(1 for e in model.eqns)
    assert model.total_equations > top


def test_cond_and_while_solver():
    model = workbench.inspect(P.newton_sqrt, 2.0).model
    w = next(e for e in model.eqns if e.primitive == "while")
    # one sub-jaxpr per jaxpr-valued param of JAX's own equations, named by the param
    # (``name[i]`` inside a tuple): the names are JAX's, read from its jaxpr here
    ref = next(e for e in jax.make_jaxpr(P.newton_sqrt)(2.0).eqns if str(e.primitive) == "while")
    assert [s.param for s in w.subjaxprs] == _jaxpr_param_labels(ref)
    assert len(w.subjaxprs) == 2  # the loop's condition and body
    ref_cond = next(
        e for sub in jaxprs_in_params(ref.params) for e in sub.eqns if str(e.primitive) == "cond"
    )
    body = next(s.jaxpr for s in w.subjaxprs if any(e.primitive == "cond" for e in s.jaxpr.eqns))
    cond = next(e for e in body.eqns if e.primitive == "cond")
    assert [s.param for s in cond.subjaxprs] == _jaxpr_param_labels(ref_cond)
    assert len(cond.subjaxprs) == 2  # the two branches


def _jaxpr_param_labels(eqn) -> list[str]:
    labels = []
    for k, v in eqn.params.items():
        if isinstance(v, (tuple, list)):
            labels += [f"{k}[{i}]" for i, x in enumerate(v) if list(jaxprs_in_params({k: x}))]
        elif list(jaxprs_in_params({k: v})):
            labels.append(k)
    return labels


def test_custom_jvp_and_vjp_calls():
    model = workbench.inspect(lambda x: P.softplus(x) + P.clip_gradient(x), 1.0).model
    names = prims(model)
    assert any(n.startswith("custom_jvp_call") for n in names)
    assert any(n.startswith("custom_vjp_call") for n in names)
    for e in model.eqns:
        if e.primitive.startswith("custom_"):
            assert e.subjaxprs, e.primitive


def test_vmap_of_grad_string_form():
    params = P.mlp_params()
    xs, ys = jnp.ones((7, 5, 8)), jnp.ones((7, 5, 4))
    spec = "vmap(grad(f), in_axes=(None, 0, 0))"
    ins = workbench.inspect(P.mlp_loss, params, xs, ys, transforms=spec)
    ref = jax.make_jaxpr(jax.vmap(jax.grad(P.mlp_loss), in_axes=(None, 0, 0)))(params, xs, ys)
    assert ins.jaxpr_text == str(ref)
    assert sorted(ins.out_avals) == ["f32[7,16,4]", "f32[7,16]", "f32[7,4]", "f32[7,8,16]"]


def test_sharded_function_on_8_devices():
    assert jax.device_count() == 8
    x, w = P.sharded_matmul_args()
    ins = workbench.inspect(P.sharded_matmul, x, w)
    assert len(ins.input_shardings) == 2
    assert "data" in ins.input_shardings[0]
    assert len(ins.devices) == 8
    assert "all-reduce" in ins.hlo_text  # contraction over the sharded 'model' axis


def test_shard_map_and_pjit_are_nested():
    x = jnp.arange(64.0).reshape(8, 8)
    model = workbench.inspect(lambda v: P.shard_mapped_sum(v) + jax.jit(jnp.sin)(v).sum(), x).model
    names = prims(model)
    assert "shard_map" in names and "psum" in names or "psum_invariant" in names
    sm = next(e for e in model.eqns if e.primitive == "shard_map")
    assert sm.subjaxprs
    jit_eq = next(e for e in model.eqns if e.primitive in ("jit", "pjit"))
    assert jit_eq.subjaxprs[0].jaxpr.eqns[0].primitive == "sin"


def test_pmap_is_nested():
    f = jax.pmap(lambda v: v * 2)
    model = build_model(jax.make_jaxpr(f)(jnp.ones((8, 3))))
    pm = [e for e in model.eqns if e.subjaxprs]
    assert pm, [e.primitive for e in model.eqns]


def test_checkpoint_then_grad_shows_remat():
    model = workbench.inspect(
        lambda x: jnp.sin(jnp.sin(x)).sum(), jnp.ones(3), transforms=["checkpoint", "grad"]
    ).model
    assert any("remat" in p or "checkpoint" in p for p in prims(model))


@pytest.mark.parametrize(
    "t,out",
    [
        ("value_and_grad", ["f32[]", "f32[3]"]),
        ("jacfwd", ["f32[3,3]"]),
        ("jacrev", ["f32[3,3]"]),
        ("hessian", ["f32[3,3]"]),
        ("jvp", ["f32[]", "f32[]"]),
        ("vjp", ["f32[3]"]),
        ("linearize", ["f32[]"]),
    ],
)
def test_each_transform(t, out):
    def f(x):
        return jnp.sum(jnp.sin(x) ** 2)

    fn = f if t not in ("jacfwd", "jacrev") else (lambda x: jnp.sin(x) ** 2)
    ins = workbench.inspect(fn, jnp.ones(3), transforms=t)
    assert ins.out_avals == out
    if t in ("jvp", "linearize"):
        assert ins.in_avals == ["f32[3]", "f32[3]"]  # primals then tangents
    if t == "vjp":
        assert ins.in_avals == ["f32[3]", "f32[]"]  # primals then output cotangent


def test_jitted_function_keeps_its_static_settings():
    f = jax.jit(lambda x, n: (x**n).sum(), static_argnums=1)
    ins = workbench.inspect(f, jnp.ones(3), 3)
    assert ins.in_avals == ["f32[3]"]
    assert any(e.primitive == "integer_pow" and e.params["y"] == "3" for e in ins.model.eqns)
    g = workbench.inspect(f, jnp.ones(3), 3, transforms="grad")
    assert g.out_avals == ["f32[3]"]


def test_static_argnums_and_names_with_transforms():
    def f(n, x, *, mode):
        return jnp.sum(x**n) if mode == "pow" else jnp.sum(x)

    ins = workbench.inspect(
        f,
        2,
        jnp.ones(4),
        transforms="grad(f, argnums=1)",
        static_argnums=0,
        static_argnames="mode",
        mode="pow",
    )
    assert ins.in_avals == ["f32[4]"]
    assert ins.out_avals == ["f32[4]"]


def test_source_locations_recorded():
    ins = workbench.inspect(P.mlp_loss, P.mlp_params(), jnp.ones((2, 8)), jnp.ones((2, 4)))
    src = [e.source for e in ins.model.eqns if e.source is not None]
    assert src and all(s.file == P.__file__ for s in src)
    assert {s.function for s in src} == {"mlp_loss"}


def test_model_json_roundtrip():
    import json

    model = workbench.inspect(P.rnn, P.rnn_params(), jnp.ones((5, 3))).model
    d = json.loads(json.dumps(model.to_dict()))
    assert len(d["jaxpr"]["eqns"]) == len(model.eqns)
    name, idx = d["jaxpr"]["invars"][0]
    assert d["avals"][idx]["shape"] == [6, 6] and d["avals"][idx]["text"] == "f32[6,6]"
    # literals carry their value; avals are shared, not repeated per operand
    assert len(d["avals"]) < sum(len(e["invars"]) + len(e["outvars"]) for e in d["jaxpr"]["eqns"])


def test_transform_strings_parse_safely():
    from workbench.engine.jaxpr.transforms import TransformError, parse_transforms

    assert [s.name for s in parse_transforms("vmap(grad)")] == ["grad", "vmap"]
    assert [s.name for s in parse_transforms("jit(vmap(grad(f)))")] == ["grad", "vmap"]
    assert parse_transforms("grad(f, 1)")[0].kwargs == {"argnums": 1}
    for bad in [
        "jit(f)",
        "grad(f, argnums=__import__('os').getcwd())",
        "vmap(f, 0, in_axes=1)",
        "grad(**{'argnums': 1})",
        "gard",
        "grad(f, bogus=1)",
        "grad(",
    ]:
        with pytest.raises(TransformError):
            parse_transforms(bad)


def test_negative_static_argnums_on_a_jitted_function():
    f = jax.jit(lambda x, n: x * n, static_argnums=-1)
    ins = workbench.inspect(f, jnp.ones((5, 3)), 2, transforms="vmap")
    assert ins.in_avals == ["f32[5,3]"]


def test_repeated_literals_print_as_jax_prints_each():
    """The model looks a scalar literal up once per builder: equal values of another
    type or sign (0.0 and -0.0, 2 and 2.0) still print as JAX prints each of them."""

    def f(x, i):
        return x * 0.0 + x * -0.0 + x * 0.0 + x * 2.0, i * 2 + i * 2

    closed = jax.make_jaxpr(f)(jnp.ones(3), 1)
    model = build_model(closed)
    got = [a.literal for e in model.eqns for a in e.invars if a.literal is not None]
    want = [
        str(v.pretty_print(None, print_dtype=False)) if hasattr(v, "pretty_print") else str(v)
        for e in closed.eqns
        for v in e.invars
        if type(v).__name__ == "Literal"
    ]
    assert got == want and len(got) == 6
    assert got[0] != got[1] and got[1].startswith("-")

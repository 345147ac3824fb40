"""Recompile reasons on realistic cells: a real call, then a changed one (shape, dtype, static
argument, pytree structure, key implementation); the compile line gives the reason in the
user's terms, checked against what JAX itself explains.

The cells are ``test_realistic_cells.py``'s programs, defined afresh for this module (its
own ``SETUP`` run): these reasons are about the user's own calls, so no function object
here has been traced, inspected or compiled by another module's tests, whose JAX cache
state would otherwise decide what JAX can explain.
"""

from __future__ import annotations

import jax
import pytest

from tests.ipython.test_realistic_cells import SETUP

# realistic Flax/Equinox/Optax programs, compiled: part of the full run, not of the quick
# loop (-m 'not slow')
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cells(run):
    """The session's ``run``, with the realistic programs defined afresh first."""
    run(SETUP).ok()
    return run


def test_reason_linen_step_new_batch_shape(cells):
    cells("rc_linen_step(rc_lstate, rc_x, rc_y, jax.random.key(3))").ok()
    c = cells(
        "rc_linen_step(rc_lstate, jnp.ones((6, 3)), jnp.ones((6, 2)), jax.random.key(3))"
    ).ok()
    got = {(r["kind"], r["path"], r["before"], r["after"]) for r in c.reasons("jit(rc_linen_step)")}
    assert got == {("shape", "x", "f32[4,3]", "f32[6,3]"), ("shape", "y", "f32[4,2]", "f32[6,2]")}


def test_reason_bf16_dtype_change(cells):
    cells("rc_bf16_mlp(jnp.ones((3, 4)), jnp.ones((2, 3)))").ok()
    c = cells("rc_bf16_mlp(jnp.ones((3, 4)), jnp.ones((2, 3), jnp.bfloat16))").ok()
    (r,) = c.reasons("jit(rc_bf16_mlp)")
    assert (r["kind"], r["path"], r["before"], r["after"]) == (
        "dtype",
        "x",
        "f32[2,3]",
        "bf16[2,3]",
    )


def test_reason_keyword_only_static_argname(cells):
    cells("rc_block(rc_bx, rc_bw, training=True)").ok()
    c = cells("rc_block(rc_bx, rc_bw, training=False)").ok()
    (r,) = c.reasons("jit(rc_block)")
    assert (r["kind"], r["path"], r["before"], r["after"]) == (
        "static_arg",
        "training",
        "True",
        "False",
    )


def test_reason_dict_params_new_key(cells):
    cells("rc_dict_loss(rc_params, rc_batch)").ok()
    c = cells("rc_dict_loss({**rc_params, 'head': {'w': jnp.ones(2)}}, rc_batch)").ok()
    (r,) = c.reasons("jit(rc_dict_loss)")
    assert (r["kind"], r["path"], r["before"], r["after"]) == (
        "pytree",
        "params['head']['w']",
        None,
        "f32[2]",
    )


def test_reason_pmap_per_device_batch(cells):
    cells("rc_pmap_grads(rc_pw, rc_px)").ok()
    c = cells("rc_pmap_grads(rc_pw, jnp.ones((RC_N, 6, 3)))").ok()
    (r,) = c.reasons("pmap(rc_pmap_grads)")
    n = jax.local_device_count()
    assert (r["kind"], r["path"], r["before"], r["after"]) == (
        "shape",
        "x",
        f"f32[{n},4,3]",
        f"f32[{n},6,3]",
    )


def test_reason_method_new_static_self(cells):
    cells("rc_scaler.apply(jnp.ones(3), 0.5)").ok()
    c = cells("RcScaler(5.0).apply(jnp.ones(3), 0.5)").ok()
    (r,) = c.reasons("jit(apply)")
    assert r["text"] == "static self changed RcScaler(2.0) -> RcScaler(5.0)"


def test_benchmarking_a_donating_update_keeps_every_user_array(cells, shell):
    ns = shell.user_ns
    c = cells("%jaxbench --budget 0.2 -q rc_donate_update(rc_dparams, rc_dmom, rc_dgrads)").ok()
    assert c.result.result.ok
    for tree in (ns["rc_dparams"], ns["rc_dmom"], ns["rc_dgrads"]):
        assert not any(leaf.is_deleted() for leaf in jax.tree.leaves(tree))


NNX_STEP = """
@nnx.jit
def {name}(model, opt, x, y):
    l, g = nnx.value_and_grad(lambda m: ((m(x) - y) ** 2).mean())(model)
    opt.update(model, g)
    return l
"""


def test_reason_nnx_step_new_batch_shape(cells):
    cells(NNX_STEP.format(name="rc_nnx_a") + "rc_nnx_a(rc_nmodel, rc_nopt, rc_x, rc_y)").ok()
    c = cells("rc_nnx_a(rc_nmodel, rc_nopt, jnp.ones((6, 3)), jnp.ones((6, 2)))").ok()
    got = {(r["kind"], r["path"], r["before"], r["after"]) for r in c.reasons("jit(rc_nnx_a)")}
    assert got == {("shape", "x", "f32[4,3]", "f32[6,3]"), ("shape", "y", "f32[4,2]", "f32[6,2]")}


def test_reason_nnx_step_after_inspecting_it_first(cells):
    cells(NNX_STEP.format(name="rc_nnx_b")).ok()
    call = "rc_nnx_b(rc_nmodel, rc_nopt, rc_x, rc_y)"
    cells(f"%jaxpr --text {call}").ok()
    cells(f"%%hlo --text\n{call}").ok()
    cells(call).ok()
    c = cells("rc_nnx_b(rc_nmodel, rc_nopt, jnp.ones((6, 3)), jnp.ones((6, 2)))").ok()
    got = {(r["kind"], r["path"]) for r in c.reasons("jit(rc_nnx_b)")}
    assert got == {("shape", "x"), ("shape", "y")}


EQX_STEP = """
@eqx.filter_jit
def {name}(model, state, x):
    l, g = eqx.filter_value_and_grad(lambda m: (jax.vmap(m)(x) ** 2).mean())(model)
    updates, state = rc_eopt.update(g, state, eqx.filter(model, eqx.is_inexact_array))
    return eqx.apply_updates(model, updates), state, l
"""


def test_reason_equinox_step_new_batch_shape(cells):
    # a step of its own: rc_eqx_step was inspected (%jaxpr, %%hlo) before its first real
    # call above, which is test_reason_equinox_step_after_inspecting_it_first's case
    cells(EQX_STEP.format(name="rc_eqx_a") + "rc_eqx_a(rc_emodel, rc_estate, rc_ex)").ok()
    c = cells("rc_eqx_a(rc_emodel, rc_estate, jnp.ones((5, 2, 8)))").ok()
    (r,) = c.reasons("jit(rc_eqx_a)")
    assert (r["kind"], r["path"], r["before"], r["after"]) == (
        "shape",
        "x",
        "f32[3,2,8]",
        "f32[5,2,8]",
    )


def test_reason_equinox_step_after_inspecting_it_first(cells):
    cells(EQX_STEP.format(name="rc_eqx_b")).ok()
    call = "rc_eqx_b(rc_emodel, rc_estate, rc_ex)"
    cells(f"%jaxpr --text {call}").ok()
    cells(f"%%hlo --text\n{call}").ok()
    cells(call).ok()
    c = cells("rc_eqx_b(rc_emodel, rc_estate, jnp.ones((5, 2, 8)))").ok()
    (r,) = c.reasons("jit(rc_eqx_b)")
    assert (r["kind"], r["path"]) == ("shape", "x")


def test_reason_equinox_model_weight_and_keyword_argument(cells, shell):
    # Equinox jits flat leaves of (first argument) and (other arguments, keywords): the
    # reason names the user's parameter and the leaf's path inside it
    cells("rc_eqx_lossj = eqx.filter_jit(rc_eqx_loss)\nrc_eqx_lossj(rc_emodel, x=rc_ex)").ok()
    cells(
        "rc_emodel2 = eqx.tree_at(lambda m: m.layers[0].weight, rc_emodel, jnp.ones((4, 2, 5)))"
    ).ok()
    c = cells("rc_eqx_lossj(rc_emodel2, x=rc_ex)").ok()
    (r,) = c.reasons("jit(rc_eqx_loss)")
    ns = shell.user_ns
    before = jax.typeof(ns["rc_emodel"].layers[0].weight).str_short(short_dtypes=True)
    after = jax.typeof(ns["rc_emodel2"].layers[0].weight).str_short(short_dtypes=True)
    assert (r["kind"], r["path"], r["before"], r["after"]) == (
        "shape",
        "model.layers[0].weight",
        before,
        after,
    )
    c = cells("rc_eqx_lossj(rc_emodel2, x=jnp.ones((5, 2, 8)))").ok()
    (r,) = c.reasons("jit(rc_eqx_loss)")
    assert (r["kind"], r["path"]) == ("shape", "x"), r


def test_reason_keyword_only_static_default_omitted(cells):
    # fresh shapes: no earlier call of rc_block is as close as the one just made
    cells(
        "rc_bx2, rc_bw2 = jnp.ones((2, 3)), jnp.ones((3, 7))\n"
        "rc_block(rc_bx2, rc_bw2, training=True)"
    ).ok()
    c = cells("rc_block(rc_bx2, rc_bw2, training=True, activation='tanh')").ok()
    (r,) = c.reasons("jit(rc_block)")
    assert (r["kind"], r["path"]) == ("static_arg", "activation")
    assert "None" not in r["text"] and "default 'relu'" in r["text"], r["text"]
    (r,) = (
        cells("rc_block(rc_bx2, rc_bw2, training=True, activation='relu')")
        .ok()
        .reasons("jit(rc_block)")
    )
    assert (r["kind"], r["before"], r["after"]) == ("static_arg", "'tanh'", "'relu'")


def test_reason_prng_key_impl_in_a_key_dict(cells):
    cells("rc_jsample = jax.jit(rc_sample)\nrc_jsample(rc_keys, jnp.zeros(3))").ok()
    c = cells(
        "rc_jsample({'init': jax.random.key(1, impl='rbg'), 'noise': rc_keys['noise']}, "
        "jnp.zeros(3))"
    ).ok()
    (r,) = c.reasons("jit(rc_sample)")
    assert (r["path"], r["before"], r["after"]) == ("keys['init']", "key<fry>[]", "key<rbg>[]")


def test_reason_shard_map_new_global_shape(cells):
    cells("rc_sm(rc_sa, rc_sb)").ok()
    c = cells(
        "rc_sm(jax.device_put(jnp.ones((16, 4)), NamedSharding(rc_mesh, P('data', None))), rc_sb)"
    ).ok()
    (r,) = c.reasons("jit(<lambda>)")
    assert (r["kind"], r["path"]) == ("shape", "a")
    assert r["before"].startswith("f32[8@data,4]") and r["after"].startswith("f32[16@data,4]")

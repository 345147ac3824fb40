"""Realistic cells, the way JAX users write them: a broad set through every magic.

Each cell below is a program a Flax, Equinox, Optax or plain JAX user writes: train steps,
collectives, sharded jits, key pytrees, control flow, remat policies, custom rules, solvers,
linear algebra, donation, static and keyword-only arguments, methods and partials, dict
inputs, low-precision types.  Together with ``test_ecosystem_trace.py``'s
``test_realistic_cell_jaxpr_and_hlo`` (19 cells) they make well over 30 distinct cells.

For every cell, through the real IPython shell: ``%jaxpr --text`` equals what JAX itself
prints for the same (transformed) function, ``-t grad`` where a gradient means something,
``%hlo`` compiles; train steps are benchmarked (``%jaxbench``, the user's arrays survive
donation); sharded outputs go through ``%sharding``; and for a handful of cells a second
real call with a changed shape / dtype / static argument / pytree structure gets the right
reason on the compile line.  Expected values always come from JAX, never hard-coded counts.
"""

from __future__ import annotations

import equinox as eqx
import jax
import pytest

# realistic Flax/Equinox/Optax programs, compiled and benchmarked: part of the full run,
# not of the quick loop (-m 'not slow')
pytestmark = pytest.mark.slow

SETUP = r"""
from functools import partial
import optax
import equinox as eqx
import flax.linen as nn
from flax import nnx
import jax.scipy.optimize
from jax.sharding import NamedSharding, PartitionSpec as P
from jax.ad_checkpoint import checkpoint_name


def rc_expect(fn, *args, **kwargs):
    # what JAX itself shows: jax.make_jaxpr of the call (a jax.jit function's statics static)
    from tests.programs import make_jaxpr_text
    return make_jaxpr_text(fn, *args, **kwargs)

def rc_expect_eqx(fn, *args):
    return str(eqx.filter_make_jaxpr(fn)(*args)[0])

# -- Flax linen: BatchNorm + Dropout, mutable batch stats, a dropout key, an optax chain
class RcNet(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Dense(8)(x)
        x = nn.BatchNorm(use_running_average=not train)(x)
        x = nn.Dropout(0.1, deterministic=not train)(nn.relu(x))
        return nn.Dense(2)(x)

rc_net = RcNet()
rc_vars = rc_net.init(jax.random.key(0), jnp.ones((4, 3)), train=False)
rc_tx = optax.chain(optax.clip_by_global_norm(1.0),
                    optax.adamw(optax.cosine_decay_schedule(1e-3, 100)))
rc_lstate = {"params": rc_vars["params"], "batch_stats": rc_vars["batch_stats"],
             "opt": rc_tx.init(rc_vars["params"])}
rc_x, rc_y = jnp.ones((4, 3)), jnp.zeros((4, 2))

@jax.jit
def rc_linen_step(state, x, y, key):
    def loss(p):
        out, upd = rc_net.apply({"params": p, "batch_stats": state["batch_stats"]}, x,
                                train=True, rngs={"dropout": key}, mutable=["batch_stats"])
        return ((out - y) ** 2).mean(), upd
    (l, upd), g = jax.value_and_grad(loss, has_aux=True)(state["params"])
    updates, opt = rc_tx.update(g, state["opt"], state["params"])
    return {"params": optax.apply_updates(state["params"], updates),
            "batch_stats": upd["batch_stats"], "opt": opt}, l

def rc_linen_loss(params, x, y):
    out = rc_net.apply({"params": params, "batch_stats": rc_vars["batch_stats"]}, x,
                       train=False)
    return ((out - y) ** 2).mean()

# -- Flax NNX: dropout with its own Rngs, an optax chain, nnx.Optimizer
class RcNnx(nnx.Module):
    def __init__(self, rngs):
        self.a = nnx.Linear(3, 8, rngs=rngs)
        self.drop = nnx.Dropout(0.1, rngs=rngs)
        self.b = nnx.Linear(8, 2, rngs=rngs)
    def __call__(self, x):
        return self.b(self.drop(nnx.gelu(self.a(x))))

rc_nmodel = RcNnx(nnx.Rngs(0, dropout=1))
rc_nopt = nnx.Optimizer(rc_nmodel, optax.chain(optax.clip(1.0), optax.adam(1e-3)),
                        wrt=nnx.Param)

@nnx.jit
def rc_nnx_step(model, opt, x, y):
    def loss(m):
        return ((m(x) - y) ** 2).mean()
    l, g = nnx.value_and_grad(loss)(model)
    opt.update(model, g)
    return l

# -- Equinox: a conv model with activation leaves, optax with a schedule
rc_emodel = eqx.nn.Sequential([eqx.nn.Conv1d(2, 4, 3, key=jax.random.key(2)),
                               eqx.nn.Lambda(jax.nn.relu),
                               eqx.nn.Conv1d(4, 1, 3, key=jax.random.key(3))])
rc_eopt = optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(1e-2, momentum=0.9))
rc_estate = rc_eopt.init(eqx.filter(rc_emodel, eqx.is_inexact_array))
rc_ex = jnp.ones((3, 2, 8))

@eqx.filter_jit
def rc_eqx_step(model, state, x):
    def loss(m):
        return (jax.vmap(m)(x) ** 2).mean()
    l, g = eqx.filter_value_and_grad(loss)(model)
    updates, state = rc_eopt.update(g, state, eqx.filter(model, eqx.is_inexact_array))
    return eqx.apply_updates(model, updates), state, l

def rc_eqx_loss(model, x):
    return (jax.vmap(model)(x) ** 2).mean()

# -- pmap: data-parallel gradient averaged with pmean, a psum'd count
RC_N = jax.local_device_count()

@partial(jax.pmap, axis_name="batch")
def rc_pmap_grads(w, x):
    g = jax.grad(lambda w: ((x @ w) ** 2).mean())(w)
    return jax.lax.pmean(g, "batch"), jax.lax.psum(jnp.ones(()), "batch")

rc_pw = jnp.ones((RC_N, 3, 2))
rc_px = jnp.ones((RC_N, 4, 3))

# -- a 4x2 mesh: shard_map with all_gather / psum, a NamedSharding jit
rc_mesh = jax.make_mesh((4, 2), ("data", "model"))
rc_sm = jax.jit(jax.shard_map(
    lambda a, b: jax.lax.pmean(a @ jax.lax.all_gather(b, "model", tiled=True), "model"),
    mesh=rc_mesh, in_specs=(P("data", None), P("model", None)), out_specs=P("data", None)))
rc_sa = jax.device_put(jnp.ones((8, 4)), NamedSharding(rc_mesh, P("data", None)))
rc_sb = jax.device_put(jnp.ones((4, 3)), NamedSharding(rc_mesh, P("model", None)))

rc_dp_w = jax.device_put(jnp.ones((4, 2)), NamedSharding(rc_mesh, P(None, "model")))
rc_dp_x = jax.device_put(jnp.ones((8, 4)), NamedSharding(rc_mesh, P("data", None)))

@partial(jax.jit, out_shardings=(NamedSharding(rc_mesh, P(None, "model")),
                                 NamedSharding(rc_mesh, P())))
def rc_dp_step(w, x):
    l, g = jax.value_and_grad(lambda w: jnp.tanh(x @ w).mean())(w)
    return w - 0.1 * g, l

# -- PRNG key pytrees
rc_keys = dict(zip(["init", "noise"], jax.random.split(jax.random.key(7))))

def rc_sample(keys, mu):
    eps = jax.vmap(lambda k: jax.random.normal(k, mu.shape))(jax.random.split(keys["noise"], 4))
    w = jax.random.uniform(keys["init"], mu.shape)
    return (mu + eps * w).mean(0)

# -- scan: an RNN over time with a dict of parameters
rc_rnn = {"wx": jnp.ones((3, 5)) * 0.1, "wh": jnp.eye(5) * 0.5, "b": jnp.zeros(5)}

def rc_rnn_loss(p, xs):
    def step(h, x):
        h = jnp.tanh(x @ p["wx"] + h @ p["wh"] + p["b"])
        return h, h.sum()
    h, ys = jax.lax.scan(step, jnp.zeros(5), xs)
    return (h ** 2).sum() + ys.mean()

# -- while_loop: Newton iterations on a pytree carry; fori_loop
def rc_newton(a):
    def cond(c):
        return (c["i"] < 20) & (jnp.abs(c["x"] * c["x"] - a).max() > 1e-6)
    def body(c):
        return {"i": c["i"] + 1, "x": 0.5 * (c["x"] + a / c["x"])}
    return jax.lax.while_loop(cond, body, {"i": 0, "x": jnp.ones_like(a)})["x"]

def rc_fori(x):
    return jax.lax.fori_loop(0, 5, lambda i, v: v * 0.9 + jnp.sin(v) * i, x).sum()

# -- cond / switch in a loss
def rc_switch(x, which):
    branches = [lambda v: (v ** 2).sum(), lambda v: jnp.abs(v).sum(), lambda v: v.max()]
    return jax.lax.switch(which, branches, x) + jax.lax.cond(x.sum() > 0, jnp.sum, jnp.prod, x)

# -- checkpoint with a named policy and names
def rc_remat_loss(ws, x):
    def block(w, v):
        v = checkpoint_name(v @ w, "proj")
        return jnp.tanh(v)
    policy = jax.checkpoint_policies.save_only_these_names("proj")
    for w in ws:
        x = jax.checkpoint(block, policy=policy)(w, x)
    return (x ** 2).mean()

rc_ws = [jnp.eye(4) * 0.5, jnp.eye(4) * 0.25]

# -- custom_vjp with residuals: a norm-clipping straight-through op
@jax.custom_vjp
def rc_safe_norm(x):
    return jnp.sqrt((x ** 2).sum())
def _rc_fwd(x):
    n = jnp.sqrt((x ** 2).sum())
    return n, (x, n)
def _rc_bwd(res, g):
    x, n = res
    return (g * x / jnp.maximum(n, 1e-6),)
rc_safe_norm.defvjp(_rc_fwd, _rc_bwd)

def rc_norm_loss(x):
    return rc_safe_norm(x * 2.0) + rc_safe_norm(x)

# -- scipy minimize with extra arguments, inside jit
@jax.jit
def rc_fit(a, b):
    obj = lambda v, a, b: ((a @ v - b) ** 2).sum() + 0.1 * (v ** 2).sum()
    return jax.scipy.optimize.minimize(obj, jnp.zeros(a.shape[1]), args=(a, b),
                                       method="BFGS").x

rc_A = jnp.arange(12.0).reshape(4, 3) / 10
rc_b = jnp.ones(4)

# -- linalg: a Gaussian log-likelihood (cholesky, triangular solve, slogdet), eigh, qr, svd
def rc_gauss_nll(L, x):
    cov = L @ L.T + jnp.eye(3)
    c = jnp.linalg.cholesky(cov)
    z = jax.scipy.linalg.solve_triangular(c, x, lower=True)
    return 0.5 * (z ** 2).sum() + jnp.linalg.slogdet(cov)[1]

def rc_decomp(m):
    w, v = jnp.linalg.eigh(m @ m.T)
    q, r = jnp.linalg.qr(m)
    s = jnp.linalg.svd(m, compute_uv=False)
    return w.sum() + v[0, 0] + q.sum() + r.sum() + s.sum()

rc_L = jnp.eye(3) * 0.5 + 0.1

# -- donation: an SGD update that donates params (by name) and its optimizer state
@partial(jax.jit, donate_argnames=("params", "mom"))
def rc_donate_update(params, mom, grads):
    mom = jax.tree.map(lambda m, g: 0.9 * m + g, mom, grads)
    return jax.tree.map(lambda p, m: p - 0.01 * m, params, mom), mom

rc_dparams = {"w": jnp.ones((16, 16)), "b": jnp.zeros(16)}
rc_dmom = jax.tree.map(jnp.zeros_like, rc_dparams)
rc_dgrads = jax.tree.map(jnp.ones_like, rc_dparams)

# -- static argnames and keyword-only arguments
@partial(jax.jit, static_argnames=("training", "activation"))
def rc_block(x, w, *, training, activation="relu", dropout_rate=0.1):
    h = x @ w
    h = jax.nn.relu(h) if activation == "relu" else jnp.tanh(h)
    return h * (1.0 - dropout_rate) if training else h

rc_bx, rc_bw = jnp.ones((4, 3)), jnp.ones((3, 5))

# -- methods and functools.partial
class RcScaler:
    def __init__(self, scale):
        self.scale = scale
    def __hash__(self):
        return hash(self.scale)
    def __eq__(self, other):
        return isinstance(other, RcScaler) and other.scale == self.scale
    def __repr__(self):
        return f"RcScaler({self.scale})"
    @partial(jax.jit, static_argnums=0)
    def apply(self, x, bias):
        return jnp.tanh(x * self.scale) + bias
    def loss(self, x, bias):
        return self.apply(x, bias).sum()

rc_scaler = RcScaler(2.0)

@jax.jit
def rc_affine(x, w, b):
    return x @ w + b
rc_affine_fixed = partial(rc_affine, w=jnp.ones((3, 2)), b=jnp.zeros(2))

# -- dict inputs: a nested parameter dict, a batch dict
rc_params = {"enc": {"w": jnp.ones((3, 4)), "b": jnp.zeros(4)},
             "dec": {"w": jnp.ones((4, 2)), "b": jnp.zeros(2)}}
rc_batch = {"x": jnp.ones((5, 3)), "y": jnp.zeros((5, 2)), "mask": jnp.ones(5, bool)}

@jax.jit
def rc_dict_loss(params, batch):
    h = jax.nn.relu(batch["x"] @ params["enc"]["w"] + params["enc"]["b"])
    out = h @ params["dec"]["w"] + params["dec"]["b"]
    err = ((out - batch["y"]) ** 2).sum(-1)
    return jnp.where(batch["mask"], err, 0.0).sum() / batch["mask"].sum()

# -- bf16 mixed precision and int8 quantised matmul
@jax.jit
def rc_bf16_mlp(w, x):
    h = jnp.dot(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16),
                preferred_element_type=jnp.float32)
    return jax.nn.gelu(h).astype(jnp.bfloat16)

def rc_int8_matmul(q, scale, x):
    acc = jax.lax.dot(x, q, preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * scale

rc_q = jnp.ones((8, 4), jnp.int8)
rc_qx = jnp.ones((2, 8), jnp.int8)
rc_qs = jnp.full((4,), 0.05, jnp.float32)

# -- per-example gradients: vmap of grad over a batch
def rc_example_loss(w, x):
    return jnp.tanh(x @ w).sum()
"""

# name, call, expected jaxpr (an expression in the shell), expected grad jaxpr or None
CELLS: list[tuple[str, str, str, str | None]] = [
    (
        "linen_batchnorm_dropout_step",
        "rc_linen_step(rc_lstate, rc_x, rc_y, jax.random.key(3))",
        "rc_expect(rc_linen_step, rc_lstate, rc_x, rc_y, jax.random.key(3))",
        None,
    ),
    (
        "linen_loss",
        "rc_linen_loss(rc_vars['params'], rc_x, rc_y)",
        "rc_expect(rc_linen_loss, rc_vars['params'], rc_x, rc_y)",
        "rc_expect(jax.grad(rc_linen_loss), rc_vars['params'], rc_x, rc_y)",
    ),
    (
        "nnx_dropout_optax_chain_step",
        "rc_nnx_step(rc_nmodel, rc_nopt, rc_x, rc_y)",
        "rc_expect(rc_nnx_step, rc_nmodel, rc_nopt, rc_x, rc_y)",
        None,
    ),
    (
        "equinox_conv_step",
        "rc_eqx_step(rc_emodel, rc_estate, rc_ex)",
        "rc_expect_eqx(rc_eqx_step, rc_emodel, rc_estate, rc_ex)",
        None,
    ),
    (
        "equinox_loss",
        "rc_eqx_loss(rc_emodel, rc_ex)",
        "rc_expect_eqx(rc_eqx_loss, rc_emodel, rc_ex)",
        "rc_expect_eqx(eqx.filter_grad(rc_eqx_loss), rc_emodel, rc_ex)",
    ),
    (
        "pmap_pmean_psum_grads",
        "rc_pmap_grads(rc_pw, rc_px)",
        "rc_expect(rc_pmap_grads, rc_pw, rc_px)",
        None,
    ),
    ("shard_map_all_gather_4x2", "rc_sm(rc_sa, rc_sb)", "rc_expect(rc_sm, rc_sa, rc_sb)", None),
    (
        "named_sharding_dp_step_4x2",
        "rc_dp_step(rc_dp_w, rc_dp_x)",
        "rc_expect(rc_dp_step, rc_dp_w, rc_dp_x)",
        None,
    ),
    (
        "prng_key_dict",
        "rc_sample(rc_keys, jnp.zeros(3))",
        "rc_expect(rc_sample, rc_keys, jnp.zeros(3))",
        None,
    ),
    (
        "scan_rnn_dict_params",
        "rc_rnn_loss(rc_rnn, jnp.ones((6, 3)))",
        "rc_expect(rc_rnn_loss, rc_rnn, jnp.ones((6, 3)))",
        "rc_expect(jax.grad(rc_rnn_loss), rc_rnn, jnp.ones((6, 3)))",
    ),
    (
        "while_newton_pytree_carry",
        "rc_newton(jnp.arange(1.0, 4.0))",
        "rc_expect(rc_newton, jnp.arange(1.0, 4.0))",
        None,
    ),
    (
        "fori_loop",
        "rc_fori(jnp.ones(3))",
        "rc_expect(rc_fori, jnp.ones(3))",
        "rc_expect(jax.grad(rc_fori), jnp.ones(3))",
    ),
    (
        "switch_and_cond",
        "rc_switch(jnp.ones(3), 1)",
        "rc_expect(rc_switch, jnp.ones(3), 1)",
        "rc_expect(jax.grad(rc_switch), jnp.ones(3), 1)",
    ),
    (
        "checkpoint_save_only_names",
        "rc_remat_loss(rc_ws, jnp.ones((2, 4)))",
        "rc_expect(rc_remat_loss, rc_ws, jnp.ones((2, 4)))",
        "rc_expect(jax.grad(rc_remat_loss), rc_ws, jnp.ones((2, 4)))",
    ),
    (
        "custom_vjp_residuals",
        "rc_norm_loss(jnp.ones(3))",
        "rc_expect(rc_norm_loss, jnp.ones(3))",
        "rc_expect(jax.grad(rc_norm_loss), jnp.ones(3))",
    ),
    ("scipy_minimize_args_in_jit", "rc_fit(rc_A, rc_b)", "rc_expect(rc_fit, rc_A, rc_b)", None),
    (
        "linalg_gaussian_nll",
        "rc_gauss_nll(rc_L, jnp.ones(3))",
        "rc_expect(rc_gauss_nll, rc_L, jnp.ones(3))",
        "rc_expect(jax.grad(rc_gauss_nll), rc_L, jnp.ones(3))",
    ),
    ("linalg_eigh_qr_svd", "rc_decomp(rc_L)", "rc_expect(rc_decomp, rc_L)", None),
    (
        "donating_update",
        "rc_donate_update(rc_dparams, rc_dmom, rc_dgrads)",
        "rc_expect(rc_donate_update, rc_dparams, rc_dmom, rc_dgrads)",
        None,
    ),
    (
        "static_and_keyword_only",
        "rc_block(rc_bx, rc_bw, training=True, activation='tanh')",
        "rc_expect(rc_block, rc_bx, rc_bw, training=True, activation='tanh')",
        None,
    ),
    (
        "jitted_method_static_self",
        "rc_scaler.apply(jnp.ones(3), 0.5)",
        "str(jax.make_jaxpr(rc_scaler.apply)(jnp.ones(3), 0.5))",
        None,
    ),
    (
        "method_loss",
        "rc_scaler.loss(jnp.ones(3), 0.5)",
        "rc_expect(rc_scaler.loss, jnp.ones(3), 0.5)",
        "rc_expect(jax.grad(rc_scaler.loss), jnp.ones(3), 0.5)",
    ),
    (
        "partial_of_jit",
        "rc_affine_fixed(jnp.ones((2, 3)))",
        "rc_expect(rc_affine_fixed, jnp.ones((2, 3)))",
        None,
    ),
    (
        "dict_params_and_batch",
        "rc_dict_loss(rc_params, rc_batch)",
        "rc_expect(rc_dict_loss, rc_params, rc_batch)",
        None,
    ),
    (
        "bf16_mixed_precision",
        "rc_bf16_mlp(jnp.ones((3, 4)), jnp.ones((2, 3)))",
        "rc_expect(rc_bf16_mlp, jnp.ones((3, 4)), jnp.ones((2, 3)))",
        None,
    ),
    (
        "int8_quantised_matmul",
        "rc_int8_matmul(rc_q, rc_qs, rc_qx)",
        "rc_expect(rc_int8_matmul, rc_q, rc_qs, rc_qx)",
        None,
    ),
]

# train steps worth timing; %jaxbench's own line
BENCH = {
    "linen_batchnorm_dropout_step": "rc_linen_step(rc_lstate, rc_x, rc_y, jax.random.key(3))",
    "nnx_dropout_optax_chain_step": "rc_nnx_step(rc_nmodel, rc_nopt, rc_x, rc_y)",
    "equinox_conv_step": "rc_eqx_step(rc_emodel, rc_estate, rc_ex)",
    "pmap_pmean_psum_grads": "rc_pmap_grads(rc_pw, rc_px)",
    "named_sharding_dp_step_4x2": "rc_dp_step(rc_dp_w, rc_dp_x)",
    "donating_update": "rc_donate_update(rc_dparams, rc_dmom, rc_dgrads)",
}

# how a user really calls it: a donating update rebinds what it donated
REAL_CALL = {
    "donating_update": "rc_dparams, rc_dmom = rc_donate_update(rc_dparams, rc_dmom, rc_dgrads)",
}


def _real_call(name: str, call: str) -> str:
    return REAL_CALL.get(name, f"_rc_out = {call}")


# cells whose output is sharded: %sharding of the value
SHARDED = {
    "shard_map_all_gather_4x2": "rc_sm(rc_sa, rc_sb)",
    "named_sharding_dp_step_4x2": "rc_dp_step(rc_dp_w, rc_dp_x)[0]",
    "pmap_pmean_psum_grads": "rc_pmap_grads(rc_pw, rc_px)[0]",
}


@pytest.fixture(scope="module")
def cells(run):
    """The session's ``run``, with this module's definitions (``SETUP``) run first."""
    run(SETUP).ok()
    return run


@pytest.mark.parametrize("name,call,want,want_grad", CELLS, ids=[c[0] for c in CELLS])
def test_realistic_cell(cells, shell, name, call, want, want_grad):
    ns = shell.user_ns
    shown = cells(f"%jaxpr --text {call}").ok().bundle["text/plain"]
    # the reference after the workbench's trace: make_jaxpr then reuses the jit's trace
    # (a first trace of a jit nested in make_jaxpr's changes the cache-miss explanations
    # JAX gives for the user's later calls, which the recompile-reason tests below read)
    cells(f"_rc_want = {want}").ok()
    assert shown == ns["_rc_want"]
    if want_grad is not None:
        cells(f"_rc_want_grad = {want_grad}").ok()
        assert (
            cells(f"%jaxpr --text -t grad {call}").ok().bundle["text/plain"] == ns["_rc_want_grad"]
        )
    assert "HloModule" in cells(f"%%hlo --text\n{call}").ok().bundle["text/plain"]
    # the real call still works afterwards (nothing consumed, nothing left broken)
    cells(_real_call(name, call)).ok()


@pytest.mark.parametrize("name", sorted(BENCH))
def test_realistic_train_step_benchmarks(cells, shell, name):
    call = BENCH[name]
    before = jax.tree.leaves(eqx.filter(_user_args(shell, call), eqx.is_array))
    c = cells(f"%jaxbench -n 2 -r 3 --no-roofline -q {call}").ok()
    assert c.result.result.ok, c.result.result
    for leaf in before:
        assert not leaf.is_deleted(), f"{name}: %jaxbench consumed a user array"
    cells(_real_call(name, call)).ok()  # and the next real call works


def _user_args(shell, call: str):
    """The arrays a call passes, evaluated in the user's namespace (same objects)."""
    fn, _, rest = call.partition("(")
    return eval(f"({rest[:-1]},)", shell.user_ns)  # noqa: S307 - test-owned strings


@pytest.mark.parametrize("name", sorted(SHARDED))
def test_realistic_sharded_output(cells, shell, name):
    expr = SHARDED[name]
    cells(f"_rc_sharded = {expr}").ok()
    arr = shell.user_ns["_rc_sharded"]
    c = cells("%sharding --text _rc_sharded").ok()
    text = c.bundle["text/plain"]
    assert text
    assert len(arr.sharding.device_set) == len(jax.devices())
    html = cells("%sharding _rc_sharded").ok().bundle
    assert "text/html" in html

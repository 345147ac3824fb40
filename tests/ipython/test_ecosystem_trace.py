"""Real ecosystem calls through %%jaxpr / %%hlo and their twins: Flax NNX and Equinox jit
wrappers, models with non-array leaves, jitted methods with a static ``self``, static
argument names, labels, colour codes, and displayed records that must not keep the user's
arrays alive.

Expected jaxprs come from JAX itself (``jax.make_jaxpr``, ``eqx.filter_make_jaxpr``).
"""

from __future__ import annotations

import importlib
import re

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest
from flax import nnx

import workbench
from workbench.engine.common.errors import report

# real Flax/Equinox models traced and compiled: part of the full run, not of the quick loop
# (-m 'not slow')
pytestmark = pytest.mark.slow

ANSI = re.compile(r"\x1b\[")


@pytest.fixture
def ns(shell):
    shell.run_cell(
        "from functools import partial\nfrom flax import nnx\nimport equinox as eqx\n"
        "import gc, weakref",
        store_history=False,
    )
    return shell.user_ns


def _text(cell_run) -> str:
    assert cell_run.error is None, cell_run.stdout + cell_run.stderr
    return cell_run.bundle["text/plain"]


# -- nnx.jit ----------------------------------------------------------------------------------

NNX_CELL = """
lin = nnx.Linear(4, 2, rngs=nnx.Rngs(0))
@nnx.jit
def nf(m, x):
    return m(x)
nf(lin, jnp.ones((3, 4)))
"""


def test_nnx_jit_function_jaxpr_matches_make_jaxpr(run, ns):
    text = _text(run("%%jaxpr --text" + NNX_CELL))
    assert text == str(jax.make_jaxpr(ns["nf"])(ns["lin"], jnp.ones((3, 4))))


def test_nnx_jit_function_hlo_compiles(run, ns):
    out = run("%%hlo --text" + NNX_CELL)
    text = _text(out)
    assert "HloModule" in text and "dot" in text


def test_nnx_jit_twins(ns):
    lin = nnx.Linear(4, 2, rngs=nnx.Rngs(0))

    @nnx.jit
    def nf(m, x):
        return m(x)

    x = jnp.ones((3, 4))
    shown = workbench.jaxpr(nf, lin, x, text=True)
    assert shown._repr_mimebundle_()["text/plain"] == str(jax.make_jaxpr(nf)(lin, x))
    assert "HloModule" in workbench.hlo(nf, lin, x, text=True)._repr_mimebundle_()["text/plain"]


def test_only_real_jax_jit_counts_as_jitted():
    from workbench.engine import _jax_compat as compat

    assert compat.is_jitted(jax.jit(lambda x: x))
    assert not compat.is_jitted(nnx.jit(lambda m, x: m(x)))
    assert not compat.is_jitted(eqx.filter_jit(lambda x: x))


# -- Equinox ----------------------------------------------------------------------------------

EQX_CELL = """
m = eqx.nn.MLP(2, 1, 8, 1, key=jax.random.key(0))
@eqx.filter_jit
def ef(m, x):
    return m(x).sum()
ef(m, jnp.ones(2))
"""


def _eqx_expected(fn, *args) -> str:
    closed, _, _ = eqx.filter_make_jaxpr(fn)(*args)
    return str(closed)


def test_equinox_filter_jit_jaxpr_matches_filter_make_jaxpr(run, ns):
    text = _text(run("%%jaxpr --text" + EQX_CELL))
    assert text == _eqx_expected(ns["ef"], ns["m"], jnp.ones(2))


def test_equinox_grad_is_over_the_array_leaves(run, ns):
    text = _text(run("%%jaxpr --text -t grad" + EQX_CELL))
    assert text == _eqx_expected(eqx.filter_grad(ns["ef"]), ns["m"], jnp.ones(2))


def test_equinox_hlo_compiles(run, ns):
    out = run("%%hlo --text" + EQX_CELL)
    assert "HloModule" in _text(out)


def test_plain_function_with_a_function_argument(run, ns):
    """A plain (and a jax.jit) function given a model with activation leaves: the model's
    functions are closed over, its arrays are the inputs."""
    run(
        "def apply(m, x):\n    return m(x).sum()\njapply = jax.jit(apply)\n"
        "m = eqx.nn.MLP(2, 1, 8, 1, key=jax.random.key(0))\nx2 = jnp.ones(2)"
    )
    want = _eqx_expected(ns["apply"], ns["m"], jnp.ones(2))
    assert _text(run("%jaxpr --text apply(m, x2)")) == want
    twin = workbench.jaxpr(ns["apply"], ns["m"], jnp.ones(2), text=True)
    assert twin._repr_mimebundle_()["text/plain"] == want
    jitted = _text(run("%jaxpr --text japply(m, x2)"))
    assert jitted == want


def test_ordinary_calls_still_trace_like_make_jaxpr(run, ns):
    """Python scalars stay (weak-typed) inputs when every leaf is something JAX takes."""
    run("def sc(x, s):\n    return x * s")
    text = _text(run("%jaxpr --text sc(jnp.ones(3), 2.0)"))
    assert text == str(jax.make_jaxpr(ns["sc"])(jnp.ones(3), 2.0))


def test_multiline_error_summary_is_not_cut_mid_sentence():
    msg = (
        "Error interpreting argument to _JitWrapper(\n  fn='ef', filter_warning=False\n"
        ") as an abstract array. The problematic value is of type <class 'custom_jvp'> "
        "and was passed to the function at path m.activation.\n"
        "This typically means that a jit-wrapped function was called with a non-array "
        "argument, and this argument was not marked as static using the static_argnums "
        "or static_argnames parameters of jax.jit."
    )
    rep = report(TypeError(msg), "trace")
    assert rep.summary.endswith("at path m.activation.")
    assert "custom_jvp" in rep.summary
    assert any("typically means" in h for h in rep.hints)


def test_a_long_error_summary_is_bounded_at_a_sentence():
    msg = " ".join(f"Sentence number {i} says something." for i in range(200))
    rep = report(ValueError(msg), "trace")
    assert len(rep.summary) <= 600
    assert rep.summary.endswith("something. …")


# -- jitted method with static self -----------------------------------------------------------

METHOD_CELL = """
class D:
    def __init__(self, k):
        self.k = k
    @partial(jax.jit, static_argnums=0)
    def apply(self, x):
        return x * self.k
d = D(3.0)
x = jnp.ones(3)
d.apply(x)
"""


def test_jitted_method_with_static_self_jaxpr(run, ns):
    text = _text(run("%%jaxpr --text" + METHOD_CELL))
    # what jax.make_jaxpr shows: the jit equation (self static) around the body
    assert text == str(jax.make_jaxpr(ns["d"].apply)(ns["x"]))


def test_jitted_method_with_static_self_hlo_and_twins(run, ns):
    assert "multiply" in _text(run("%%hlo --text" + METHOD_CELL))
    d, x = ns["d"], ns["x"]
    assert workbench.jaxpr(d.apply, x, text=True)._repr_mimebundle_()["text/plain"] == str(
        jax.make_jaxpr(d.apply)(x)
    )
    grad = workbench.jaxpr(lambda v: d.apply(v).sum(), x, transforms="grad", text=True)
    assert grad._repr_mimebundle_()["text/plain"] == str(
        jax.make_jaxpr(jax.grad(lambda v: d.apply(v).sum()))(x)
    )


# -- static argument names must exist ---------------------------------------------------------


def test_unknown_static_argname_is_refused(run, ns):
    run("def f14(x):\n    return x * 2")
    out = run("%jaxpr --static-argnames nn f14(jnp.ones(3))")
    assert out.error is not None
    assert "'nn'" in out.message and "f14" in out.message
    with pytest.raises(ValueError, match="'nn'"):
        workbench.jaxpr(ns["f14"], jnp.ones(3), static_argnames="nn")


def test_static_argname_passed_positionally_is_static(run, ns):
    run("def f14b(x, n):\n    return x * n")
    text = _text(run("%jaxpr --text --static-argnames n f14b(jnp.ones(3), 4)"))
    assert text == str(jax.make_jaxpr(ns["f14b"], static_argnums=1)(jnp.ones(3), 4))


# -- labels and colour ------------------------------------------------------------------------


def test_hlo_title_names_the_transformed_function(ns):
    def tf_loss(w):
        return (w**2).sum()

    rep = workbench.hlo(jax.grad(tf_loss), jnp.ones(3))
    html = rep._repr_mimebundle_()["text/html"]
    assert "grad(tf_loss)" in html
    assert (
        workbench.jaxpr(jax.vmap(jax.grad(tf_loss)), jnp.ones((2, 3))).inspection.label
        == "vmap(grad(tf_loss))"
    )


def test_jaxpr_text_never_has_colour_codes(run, ns, monkeypatch):
    """Inside a Jupyter kernel JAX colours ``str(jaxpr)``; simulate that kernel's setting."""
    pp = importlib.import_module("jax._src.pretty_printer")
    monkeypatch.setattr(pp, "CAN_USE_COLOR", True)
    run("def col(x):\n    return jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x) * 2")
    assert ANSI.search(str(jax.make_jaxpr(ns["col"])(jnp.ones(3))))  # the premise
    for cell in (
        "%jaxpr --text col(jnp.ones(3))",
        "%jaxpr col(jnp.ones(3))",
        "%jaxpr -t grad --text lambda_sum(jnp.ones(3))",
        "%jaxpr --compare -t vmap col(jnp.ones((2, 3)))",
    ):
        run("lambda_sum = lambda v: col(v).sum()")
        out = run(cell)
        assert out.error is None, out.stdout
        for mime, data in out.bundle.items():
            assert not ANSI.search(str(data)), (cell, mime)


# -- displayed records hold no user arrays ----------------------------------------------------


@pytest.mark.parametrize(
    "cell",
    [
        "%jaxpr f16(big)",
        "%jaxpr --text f16(big)",
        "%jaxpr -t grad f16(big)",
        "%hlo f16(big)",
        "workbench.jaxpr(f16, big)",
        "workbench.hlo(f16, big)",
        "workbench.inspect(f16, big)",
    ],
)
def test_displayed_record_does_not_keep_the_array_alive(run, ns, cell):
    run(
        "import workbench\ndef f16(x):\n    return (x * 2).sum()\n"
        "big = jnp.ones((64, 64))\nbig_ref = weakref.ref(big)"
    )
    out = run(cell)
    assert out.error is None, out.stdout
    if cell.startswith("workbench.inspect"):
        out.result.result.jaxpr_text  # noqa: B018 - every stage a display would use
        out.result.result.hlo_text  # noqa: B018
    run("del big\ngc.collect()")
    assert ns["big_ref"]() is None, f"{cell} kept the argument alive"


def test_committed_sharding_survives_abstraction(ns):
    mesh = jax.make_mesh((4, 2), ("a", "b"))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("a", "b"))
    x = jax.device_put(jnp.ones((8, 4)), sharding)
    ins = workbench.inspect(lambda v: v * 2, x)
    assert len(ins.devices) == 8


def test_function_argument_is_closed_over_not_an_error(run, ns):
    """Passing a function (``jnp.sin``) no longer fails with jax.jit's own static_argnums
    advice: it is closed over, as a real call of a filter-jitted function would."""
    run("def apply_fn(g, x):\n    return g(x) * 2\nxs = jnp.ones(3)")
    out = run("%jaxpr --text apply_fn(jnp.sin, xs)")
    want = str(jax.make_jaxpr(lambda x: ns["apply_fn"](jnp.sin, x))(jnp.ones(3)))
    assert _text(out) == want


def test_user_jit_static_numpy_scalar_stays_static(ns):
    import numpy as np

    @jax.jit
    def inner(x, s):
        return x * s

    f = jax.jit(lambda x, s: inner(x, s), static_argnums=1)
    shown = workbench.jaxpr(f, jnp.ones(3), np.float32(2.0), text=True)
    assert shown._repr_mimebundle_()["text/plain"] == str(
        jax.make_jaxpr(f, static_argnums=1)(jnp.ones(3), np.float32(2.0))
    )


def test_static_argnums_advice_names_each_doors_own_spelling(run, ns):
    """An integer argument cannot get a tangent: the magic says --static-argnums, the twin
    its static_argnums= keyword (not jax.jit's parameter)."""
    run("def fi(x, n):\n    return x * n")
    out = run("%jaxpr -t jvp fi(jnp.ones(3), jnp.arange(3))")
    assert out.error is not None and "--static-argnums" in out.message
    with pytest.raises(ValueError) as info:
        workbench.jaxpr(ns["fi"], jnp.ones(3), jnp.arange(3), transforms="jvp")
    assert "static_argnums=" in str(info.value) and "--static" not in str(info.value)
    with pytest.raises(ValueError, match="static_argnums="):
        workbench.hlo(ns["fi"], jnp.ones(3), jnp.arange(3), transforms="jvp")


# -- a broader set of realistic cells: %jaxpr equals JAX's own jaxpr, %hlo compiles ---------

REALISTIC_SETUP = r"""
import optax
import jax.scipy.optimize
import flax.linen as nn
from jax.sharding import NamedSharding, PartitionSpec as P


def expect(fn, *args, **kwargs):
    # what JAX itself shows: jax.make_jaxpr of the call (a jax.jit function's statics static)
    from tests.programs import make_jaxpr_text
    return make_jaxpr_text(fn, *args, **kwargs)

class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(2)(nn.relu(nn.Dense(8)(x)))

lmodel = MLP()
lparams = lmodel.init(jax.random.key(0), jnp.ones((4, 3)))
tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
opt_state = tx.init(lparams)
xb, yb = jnp.ones((4, 3)), jnp.zeros((4, 2))

@jax.jit
def linen_step(params, opt_state, x, y):
    def loss(p):
        return ((lmodel.apply(p, x) - y) ** 2).mean()
    l, g = jax.value_and_grad(loss)(params)
    updates, opt_state = tx.update(g, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, l

class NMLP(nnx.Module):
    def __init__(self, rngs):
        self.a = nnx.Linear(3, 8, rngs=rngs)
        self.b = nnx.Linear(8, 2, rngs=rngs)
    def __call__(self, x):
        return self.b(nnx.relu(self.a(x)))

nmodel = NMLP(nnx.Rngs(0))
nopt = nnx.Optimizer(nmodel, optax.sgd(0.1), wrt=nnx.Param)

@nnx.jit
def nnx_step(model, opt, x, y):
    def loss(m):
        return ((m(x) - y) ** 2).mean()
    l, g = nnx.value_and_grad(loss)(model)
    opt.update(model, g)
    return l

emodel = eqx.nn.MLP(3, 2, 8, 2, key=jax.random.key(1))
eopt = optax.adam(1e-2)
eopt_state = eopt.init(eqx.filter(emodel, eqx.is_array))

@eqx.filter_jit
def eqx_step(model, state, x, y):
    def loss(m):
        return ((jax.vmap(m)(x) - y) ** 2).mean()
    l, g = eqx.filter_value_and_grad(loss)(model)
    updates, state = eopt.update(g, state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), state, l

def scan_cumsum(xs):
    return jax.lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)

def while_count(x):
    return jax.lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.1), (0, x))

def branch(x, flag):
    return jax.lax.cond(flag, lambda v: jnp.sin(v), lambda v: jnp.cos(v), x)

@jax.custom_vjp
def clip_grad(x):
    return x
clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))

def uses_custom(x):
    return (clip_grad(x) ** 2).sum()

def keyed(key, shape_src):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, shape_src.shape) + jax.random.uniform(k2, shape_src.shape)

def dict_in(batch):
    return batch["x"] @ batch["w"] + batch["b"]

def kwonly(x, *, scale=2.0):
    return x * scale

def mixed_dtypes(a, b):
    return a.astype(jnp.float32) * b.astype(jnp.float32)

@partial(jax.jit, static_argnames=("mode",))
def layer(x, mode="train"):
    return x * (0.5 if mode == "train" else 1.0)

def remat_mlp(w, x):
    f = jax.checkpoint(lambda v: jnp.tanh(v @ w),
                       policy=jax.checkpoint_policies.nothing_saveable)
    return f(f(x)).sum()

def solve(a, b):
    return jnp.linalg.solve(a @ a.T + jnp.eye(3), b), jnp.linalg.cholesky(a @ a.T + jnp.eye(3))

def minimize(x0):
    return jax.scipy.optimize.minimize(lambda v: ((v - 1.0) ** 2).sum(), x0, method="BFGS").x

def scaled(x, s):
    return x * s
half = partial(scaled, s=0.5)

mesh = jax.make_mesh((4, 2), ("a", "b"))
xs_sharded = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("a", "b")))
sharded_fn = jax.jit(lambda v: (v * 2).sum(axis=0),
                     out_shardings=NamedSharding(mesh, P("b")))

@partial(jax.pmap, axis_name="i")
def pmean_fn(x):
    return jax.lax.pmean(x, "i") + jax.lax.psum(x, "i")

smap = jax.jit(jax.shard_map(lambda v: jax.lax.psum(v.sum(), "a"), mesh=mesh, in_specs=P("a"),
                             out_specs=P()))
xs8 = jax.device_put(jnp.ones(8), NamedSharding(mesh, P("a")))
"""

REALISTIC_CALLS = [
    ("linen_step", "linen_step(lparams, opt_state, xb, yb)"),
    ("nnx_step", "nnx_step(nmodel, nopt, xb, yb)"),
    ("scan", "scan_cumsum(jnp.arange(5.0))"),
    ("while", "while_count(jnp.ones(2))"),
    ("cond", "branch(jnp.ones(3), True)"),
    ("custom_vjp", "uses_custom(jnp.ones(3))"),
    ("prng_keys", "keyed(jax.random.key(0), jnp.ones((2, 2)))"),
    ("dict_inputs", "dict_in({'x': jnp.ones((2, 3)), 'w': jnp.ones((3, 4)), 'b': jnp.ones(4)})"),
    ("keyword_only", "kwonly(jnp.ones(3), scale=3.0)"),
    ("bf16_int8", "mixed_dtypes(jnp.ones(3, jnp.bfloat16), jnp.ones(3, jnp.int8))"),
    ("static_argnames_default", "layer(jnp.ones(3))"),
    ("static_argnames_given", "layer(jnp.ones(3), mode='eval')"),
    ("checkpoint_policy", "remat_mlp(jnp.ones((3, 3)), jnp.ones((2, 3)))"),
    ("linalg", "solve(jnp.eye(3) * 2.0, jnp.ones(3))"),
    ("scipy_minimize", "minimize(jnp.zeros(2))"),
    ("partial", "half(jnp.ones(3))"),
    ("named_sharding", "sharded_fn(xs_sharded)"),
    ("pmap", "pmean_fn(jnp.ones((8, 2)))"),
    ("shard_map", "smap(xs8)"),
]


@pytest.fixture
def realistic(run, ns):
    out = run(REALISTIC_SETUP)
    assert out.error is None, out.stdout + out.stderr
    return ns


@pytest.mark.parametrize("name,call", REALISTIC_CALLS, ids=[c[0] for c in REALISTIC_CALLS])
def test_realistic_cell_jaxpr_and_hlo(run, realistic, name, call):
    shown = _text(run(f"%jaxpr --text {call}"))
    fn_expr, _, rest = call.partition("(")
    want = run(f"_want = expect({fn_expr}, {rest[:-1]})")
    assert want.error is None, want.stdout
    assert shown == realistic["_want"]
    assert "HloModule" in _text(run(f"%hlo --text {call}"))


def test_eqx_train_step_jaxpr_equals_filter_make_jaxpr(run, realistic):
    ns = realistic
    shown = _text(run("%jaxpr --text eqx_step(emodel, eopt_state, xb, yb)"))
    assert shown == _eqx_expected(
        ns["eqx_step"], ns["emodel"], ns["eopt_state"], ns["xb"], ns["yb"]
    )
    assert "HloModule" in _text(run("%hlo --text eqx_step(emodel, eopt_state, xb, yb)"))


def test_grad_of_a_linen_loss_equals_jax_grad(run, realistic):
    run("def lloss(p, x, y):\n    return ((lmodel.apply(p, x) - y) ** 2).mean()")
    shown = _text(run("%jaxpr --text -t grad lloss(lparams, xb, yb)"))
    ns = realistic
    assert shown == str(jax.make_jaxpr(jax.grad(ns["lloss"]))(ns["lparams"], ns["xb"], ns["yb"]))


# -- the filtered path (non-array leaves) keeps no arrays alive either ------------------------


@pytest.mark.parametrize(
    "cell",
    [
        "%jaxpr emlp(mlp_small, big)",
        "%jaxpr -t grad emlp(mlp_small, big)",
        "%hlo emlp(mlp_small, big)",
        "%jaxpr eq_emlp(mlp_small, big)",
        "workbench.inspect(emlp, mlp_small, big)",
    ],
)
def test_filtered_call_does_not_keep_the_arrays_alive(run, ns, cell):
    """A model with a non-array leaf (an activation) takes the filtered path: neither the
    plain array argument nor the model's own weights may be kept by the display."""
    run(
        "import workbench\nmlp_small = eqx.nn.MLP(64, 1, 8, 1, key=jax.random.key(0))\n"
        "def emlp(m, x):\n    return m(x[0]).sum()\neq_emlp = eqx.filter_jit(emlp)\n"
        "big = jnp.ones((64, 64))\nbig_ref = weakref.ref(big)\n"
        "w_ref = weakref.ref(mlp_small.layers[0].weight)"
    )
    out = run(cell)
    assert out.error is None, out.stdout
    if cell.startswith("workbench.inspect"):
        out.result.result.jaxpr_text  # noqa: B018
        out.result.result.hlo_text  # noqa: B018
    run("del big, mlp_small\ngc.collect()")
    assert ns["big_ref"]() is None, f"{cell} kept the array argument alive"
    assert ns["w_ref"]() is None, f"{cell} kept the model's weights alive"


def test_filtered_call_errors_name_the_users_parameters(run, ns):
    """JAX names arguments in its errors from the traced function's signature: the
    filtered call must show the user's ``m`` and ``x``, not the wrapper's ``dyn``/``kw``."""
    run("mlp_v = eqx.nn.MLP(2, 1, 8, 1, key=jax.random.key(0))\ndef vf(m, x):\n    return m(x)")
    out = run("%jaxpr -t vmap vf(mlp_v, jnp.ones((5, 2)))")
    assert out.error is not None
    text = out.stdout + out.stderr
    assert "argument x " in text and "argument m" in text, text
    assert "dyn[" not in text and "argument kw" not in text, text


def test_summary_stops_before_jaxs_hint_lines():
    """A first line without a full stop runs on into the next, but never into JAX's own
    hint lines ("The error occurred while tracing ..."): those stay hints."""
    try:
        jax.jit(lambda n: jnp.arange(n))(3)
    except Exception as exc:  # noqa: BLE001 - JAX's ConcretizationTypeError
        error = exc
    first = str(error).splitlines()[0]
    rep = report(error, "trace")
    assert rep.summary.startswith(first)
    assert "The error occurred while tracing" not in rep.summary, rep.summary
    assert any(h.startswith("The error occurred while tracing") for h in rep.hints), rep.hints

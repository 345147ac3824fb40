"""A spread of real JAX programs used by the engine and view tests."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def mlp_params(sizes=(8, 16, 4), seed=0):
    keys = jax.random.split(jax.random.key(seed), len(sizes) - 1)
    return [
        {"w": jax.random.normal(k, (m, n)) / np.sqrt(m), "b": jnp.zeros(n)}
        for k, m, n in zip(keys, sizes[:-1], sizes[1:], strict=True)
    ]


def mlp_loss(params, x, y):
    h = x
    for layer in params[:-1]:
        h = jax.nn.relu(h @ layer["w"] + layer["b"])
    out = h @ params[-1]["w"] + params[-1]["b"]
    return jnp.mean((out - y) ** 2)


def rnn(params, xs):
    def step(h, x):
        h = jnp.tanh(h @ params["wh"] + x @ params["wx"])
        return h, h.sum()

    h, sums = jax.lax.scan(step, jnp.zeros(params["wh"].shape[0]), xs)
    return h.sum() + sums.sum()


def rnn_params(d=6, k=3):
    return {"wh": jnp.eye(d) * 0.5, "wx": jnp.ones((k, d)) * 0.1}


def newton_sqrt(a):
    """cond + while: a tiny solver."""

    def body(state):
        x, i = state
        x = jax.lax.cond(x > 0, lambda v: 0.5 * (v + a / v), lambda v: v + 1.0, x)
        return x, i + 1

    x, _ = jax.lax.while_loop(lambda s: s[1] < 20, body, (a, 0))
    return x


@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t * jax.nn.sigmoid(x)


@jax.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def mesh8():
    auto = jax.sharding.AxisType.Auto
    return jax.make_mesh((4, 2), ("data", "model"), axis_types=(auto, auto))


def sharded_matmul_args():
    mesh = mesh8()
    x = jax.ShapeDtypeStruct((16, 8), jnp.float32, sharding=NamedSharding(mesh, P("data", "model")))
    w = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(mesh, P("model", None)))
    return x, w


def sharded_matmul(x, w):
    return jnp.tanh(x @ w)


def shard_mapped_sum(x):
    mesh = mesh8()

    def local(block):
        return jax.lax.psum(block.sum(keepdims=True), ("data", "model"))

    return jax.shard_map(local, mesh=mesh, in_specs=P("data", "model"), out_specs=P())(x)


def primitive_counts(jaxpr) -> dict[str, int]:
    """How many equations of each primitive a jaxpr holds, including those of the jaxprs
    in its params (cond branches, scan bodies ...), read with JAX's public helper.  Tests
    compare against this instead of literals, which change between JAX releases."""
    from collections import Counter

    from jax.extend.core import jaxprs_in_params

    counts: Counter[str] = Counter()
    for e in jaxpr.eqns:
        counts[str(e.primitive)] += 1
        for sub in jaxprs_in_params(e.params):
            counts.update(primitive_counts(sub))
    return dict(counts)


def count_equations(jaxpr) -> int:
    """All equations, nested ones included: what the views call "N equations"."""
    return sum(primitive_counts(jaxpr).values())


def make_jaxpr_text(fn, *args, **kwargs) -> str:
    """What ``jax.make_jaxpr`` prints for the call ``fn(*args, **kwargs)`` as the user makes
    it: a ``jax.jit`` function's static arguments stay static (make_jaxpr would trace them),
    so its ``jit[...]`` equation and body are JAX's own."""
    from workbench.engine import _jax_compat as compat

    settings = compat.jit_settings(fn) if compat.is_jitted(fn) else None
    if settings is None:
        return str(jax.make_jaxpr(fn)(*args, **kwargs))
    n = len(args)
    nums = tuple(sorted({i % n for i in settings.static_argnums if -n <= i < n}))
    static_kw = {k: kwargs.pop(k) for k in settings.static_argnames if k in kwargs}

    def call(*a, **k):
        return fn(*a, **static_kw, **k)

    return str(jax.make_jaxpr(call, static_argnums=nums)(*args, **kwargs))


def sin_chain(n):
    """A straight-line program of ``n`` links (a ``sin`` and an ``add`` each): a text as long
    as a test of the display bounds needs, with no loop for JAX to fold."""

    def f(x):
        for i in range(n):
            x = jnp.sin(x) + i
        return x

    return f


def two_process_cluster_report(fn, w, x):
    """%jaxcluster's report from this process's own compile ledger of ``fn`` seen as two
    processes, the second of which compiled another shape (tests/ipython/
    test_cluster_magics.py runs real processes)."""
    from workbench.engine.cluster import agent as cluster_agent
    from workbench.engine.cluster.compare import compare

    ledger = cluster_agent.Agent()
    ledger.install()
    try:
        f = jax.jit(fn)
        f(w, x)
        f(w, jnp.ones((3, 4)))
    finally:
        ledger.uninstall()
    both = cluster_agent.snapshot(agent=ledger)
    first = dict(both, compiles=both["compiles"][:1])
    second = dict(both, process_index=1, compiles=both["compiles"][1:])
    return compare([first, second])


def small_sweep():
    """``workbench.bench`` of a doubling over two sizes, quickly (no roofline): a sweep's
    record with its fits, for the views' tests."""
    import workbench

    return workbench.bench(
        lambda v: v * 2,
        sweep={"n": [8, 64]},
        make_args=lambda n: (jnp.ones(n),),
        budget=0.05,
        progress=False,
        roofline=False,
    )

"""A broad corpus of JAX programs whose optimized HLO the parser must read.

One entry per family we can reach: elementwise, reductions, dots/einsum,
convolutions, gather/scatter, sort/top_k, cumulative ops, RNG, control flow,
custom_jvp/vjp, linear algebra, FFT, dtypes, donated arguments, and sharded
programs with every collective kind on the 8 fake CPU devices.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from tests import programs


@dataclass
class Case:
    name: str
    fn: Callable[..., Any]
    args: Callable[[], tuple[Any, ...]]
    jit_kwargs: dict[str, Any] = field(default_factory=dict)
    collectives: tuple[str, ...] = ()  # collective kinds that must be found


def _f(*shape: int, dtype: Any = jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


def _sharded(shape: tuple[int, ...], spec: P) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=NamedSharding(programs.mesh8(), spec))


def _smap(body: Callable[..., Any], in_specs: Any, out_specs: Any, **kw: Any) -> Callable[..., Any]:
    def run(x: Any) -> Any:
        return jax.shard_map(
            body, mesh=programs.mesh8(), in_specs=in_specs, out_specs=out_specs, **kw
        )(x)

    return run


def _scan_cumsum(x):
    return jax.lax.scan(lambda c, v: (c + v, c * v), 0.0, x)


def _fori(x):
    return jax.lax.fori_loop(0, 5, lambda i, v: v * 1.5 + i, x)


def _cond(p, x):
    return jax.lax.cond(p > 0, jnp.sin, jnp.cos, x)


def _switch(i, x):
    return jax.lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)


def _conv(x, k):
    return jax.lax.conv_general_dilated(
        x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def _rng(key_data):
    key = jax.random.wrap_key_data(key_data)
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (16,)) + jax.random.uniform(k2, (16,))


def _scatter_add(x, idx, v):
    return x.at[idx].add(v)


def _segment(data, ids):
    return jax.ops.segment_sum(data, ids, num_segments=4)


def _donate(x, y):
    return x * 2 + y


def _all_to_all(x):
    return jax.lax.all_to_all(x, "data", 0, 0, tiled=True)


def _ppermute(x):
    return jax.lax.ppermute(x, "data", [(i, (i + 1) % 4) for i in range(4)])


CASES: list[Case] = [
    Case(
        "elementwise",
        lambda x, y: jnp.tanh(x) * jnp.exp(-y) + jnp.sqrt(jnp.abs(x)) - x**3,
        lambda: (_f(8, 8), _f(8, 8)),
    ),
    Case(
        "reductions",
        lambda x: (x.sum(0), x.max(1), jnp.argmax(x, 1), jnp.mean(x), jax.nn.logsumexp(x, axis=1)),
        lambda: (_f(16, 32),),
    ),
    Case(
        "softmax_mlp_grad",
        jax.grad(programs.mlp_loss),
        lambda: (programs.mlp_params(), jnp.ones((5, 8)), jnp.ones((5, 4))),
    ),
    Case(
        "einsum",
        lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
        lambda: (_f(4, 8, 16), _f(4, 16, 8)),
    ),
    Case("conv", _conv, lambda: (_f(2, 16, 16, 3), _f(3, 3, 3, 8))),
    Case(
        "conv_grad",
        jax.grad(lambda x, k: _conv(x, k).sum(), argnums=1),
        lambda: (_f(2, 8, 8, 3), _f(3, 3, 3, 4)),
    ),
    Case(
        "gather",
        lambda x, i: x[i] + jnp.take_along_axis(x, i[:, None] % 4, axis=1),
        lambda: (_f(10, 4), _f(10, dtype=jnp.int32)),
    ),
    Case("scatter_add", _scatter_add, lambda: (_f(10), _f(3, dtype=jnp.int32), _f(3))),
    Case("segment_sum", _segment, lambda: (_f(12, 3), _f(12, dtype=jnp.int32))),
    Case(
        "dynamic_slice",
        lambda x, i: jax.lax.dynamic_update_slice(
            x, jax.lax.dynamic_slice(x, (i, 0), (2, 4)) * 2, (0, i)
        ),
        lambda: (_f(8, 8), _f(dtype=jnp.int32)),
    ),
    Case(
        "sort_topk",
        lambda x: (jnp.sort(x), jax.lax.top_k(x, 3), jnp.argsort(x[::-1])),
        lambda: (_f(32),),
    ),
    Case(
        "cumulative",
        lambda x: (jnp.cumsum(x, 0), jnp.cumprod(x, 1), jax.lax.cummax(x, axis=0)),
        lambda: (_f(16, 8),),
    ),
    Case("rng", _rng, lambda: (jax.ShapeDtypeStruct((2,), jnp.uint32),)),
    Case("scan", _scan_cumsum, lambda: (_f(20),)),
    Case(
        "scan_rnn_grad",
        jax.grad(lambda p, xs: programs.rnn(p, xs).sum()),
        lambda: (programs.rnn_params(), jnp.ones((7, 3))),
    ),
    Case("while_newton", programs.newton_sqrt, lambda: (_f(),)),
    Case("fori", _fori, lambda: (_f(4),)),
    Case("cond", _cond, lambda: (_f(), _f(5))),
    Case("switch", _switch, lambda: (_f(dtype=jnp.int32), _f(5))),
    Case("custom_jvp_grad", jax.grad(lambda x: programs.softplus(x).sum()), lambda: (_f(6),)),
    Case("custom_vjp_grad", jax.grad(lambda x: programs.clip_gradient(x).sum()), lambda: (_f(6),)),
    Case(
        "remat_grad",
        jax.grad(lambda x: jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)))(x).sum()),
        lambda: (_f(6),),
    ),
    Case("vmap_matvec", jax.vmap(lambda m, v: m @ v), lambda: (_f(3, 4, 5), _f(3, 5))),
    Case(
        "linalg",
        lambda a: (
            jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(4)),
            jax.scipy.linalg.solve_triangular(a, a[:, 0], lower=True),
        ),
        lambda: (_f(4, 4),),
    ),
    Case("fft", lambda x: jnp.fft.rfft(x).real, lambda: (_f(32),)),
    Case(
        "dtypes",
        lambda a, b, c: (
            a.astype(jnp.bfloat16) * 2,
            b // 3,
            c & (c > 0),
            jax.lax.bitcast_convert_type(a, jnp.int32),
        ),
        lambda: (_f(8), _f(8, dtype=jnp.int8), _f(8, dtype=jnp.int32)),
    ),
    Case("complex", lambda z: jnp.abs(z * jnp.conj(z)), lambda: (_f(8, dtype=jnp.complex64),)),
    Case(
        "shape_ops",
        lambda x: (
            jnp.pad(x, 1),
            jnp.concatenate([x, x.T]),
            x.reshape(4, 16),
            jnp.transpose(x)[::2],
            jnp.where(x > 0, x, 0.0),
            jnp.clip(x, -1, 1),
            jnp.flip(x, 0),
        ),
        lambda: (_f(8, 8),),
    ),
    Case(
        "iota_onehot",
        lambda i: jax.nn.one_hot(i, 10) @ jnp.arange(10.0),
        lambda: (_f(6, dtype=jnp.int32),),
    ),
    Case("donated", _donate, lambda: (_f(16), _f(16)), {"donate_argnums": (0,)}),
    Case(
        "sharded_matmul",
        programs.sharded_matmul,
        programs.sharded_matmul_args,
        collectives=("all-reduce",),
    ),
    Case(
        "shard_map_psum",
        programs.shard_mapped_sum,
        lambda: (_sharded((16, 8), P("data", "model")),),
        collectives=("all-reduce",),
    ),
    Case(
        "all_gather",
        _smap(
            lambda b: jax.lax.all_gather(b, ("data", "model"), tiled=True),
            P(("data", "model")),
            P(),
            check_vma=False,
        ),
        lambda: (_sharded((16, 4), P(("data", "model"))),),
        collectives=("all-gather",),
    ),
    Case(
        "reduce_scatter",
        _smap(lambda b: jax.lax.psum_scatter(b, "data", tiled=True), P(), P("data")),
        lambda: (_sharded((16, 4), P()),),
        collectives=("reduce-scatter",),
    ),
    Case(
        "all_to_all",
        _smap(_all_to_all, P("data"), P("data")),
        lambda: (_sharded((16, 4), P("data")),),
        collectives=("all-to-all",),
    ),
    Case(
        "ppermute",
        _smap(_ppermute, P("data"), P("data")),
        lambda: (_sharded((16, 4), P("data")),),
        collectives=("collective-permute",),
    ),
]


def compiled_text(case: Case) -> str:
    return jax.jit(case.fn, **case.jit_kwargs).lower(*case.args()).compile().as_text()


@functools.cache
def corpus_texts() -> dict[str, str]:
    """Every case's optimized HLO by name, compiled once per process (the parser's tests
    and the layout's tests read the same modules)."""
    return {c.name: compiled_text(c) for c in CASES}

"""The real models the tests and benchmarks run the workbench on (written once, here).

Small functions show what a feature does; these show whether it survives what users bring:

- a 24-block pre-norm transformer in plain ``jax.numpy`` (d=256, 4 heads, MLP 1024, batch
  8 x 128 tokens, causal mask), a Python ``for`` loop over a list of per-block parameter
  dicts, written in two styles that XLA compiles very differently: attention through
  ``einsum`` with a ``tril`` mask (:func:`transformer_loss_einsum`) and through reshapes
  and ``@`` (:func:`transformer_loss_matmul`); and its ``lax.scan`` twin over the same
  blocks, parameters stacked on a leading axis (:func:`transformer_loss_scan`,
  :func:`stacked_params`), which traces and compiles one block;
- a Flax NNX MLP and CNN with an ``nnx.jit`` train step and ``nnx.Optimizer(optax.adamw)``
  (:func:`nnx_mlp_setup`, :func:`nnx_cnn_setup`), a dropout layer that draws from ``Rngs``;
- an Equinox MLP trained under ``eqx.filter_jit`` (:func:`equinox_setup`);
- a ``lax.scan`` RNN (:func:`scan_rnn_loss`).

Building and compiling the transformer's gradient takes seconds on CPU: the
``compiled_*`` helpers compile each program once per process (a test session's worker),
and tests that need the workbench's own compile pass these same function objects, so
JAX's caches are shared too.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from workbench.engine.hlo.program_text import program_text

BLOCKS = 24
D_MODEL = 256
HEADS = 4
D_MLP = 1024
BATCH = 8
TOKENS = 128


# --- the transformer: plain jax.numpy, a Python loop over the blocks -------------------


def transformer_params(blocks: int = BLOCKS, d: int = D_MODEL, d_mlp: int = D_MLP, seed: int = 0):
    """A list of per-block parameter dicts (what a user writes without a framework)."""
    params = []
    for key in jax.random.split(jax.random.key(seed), blocks):
        kq, kk, kv, ko, k1, k2 = jax.random.split(key, 6)
        params.append(
            {
                "ln1_scale": jnp.ones(d),
                "ln1_bias": jnp.zeros(d),
                "wq": jax.random.normal(kq, (d, d)) / np.sqrt(d),
                "wk": jax.random.normal(kk, (d, d)) / np.sqrt(d),
                "wv": jax.random.normal(kv, (d, d)) / np.sqrt(d),
                "wo": jax.random.normal(ko, (d, d)) / np.sqrt(d),
                "ln2_scale": jnp.ones(d),
                "ln2_bias": jnp.zeros(d),
                "w1": jax.random.normal(k1, (d, d_mlp)) / np.sqrt(d),
                "b1": jnp.zeros(d_mlp),
                "w2": jax.random.normal(k2, (d_mlp, d)) / np.sqrt(d_mlp),
                "b2": jnp.zeros(d),
            }
        )
    return params


def transformer_inputs(batch: int = BATCH, tokens: int = TOKENS, d: int = D_MODEL, seed: int = 1):
    """Activations entering the first block (the embedding is not what the views are about)."""
    return jax.random.normal(jax.random.key(seed), (batch, tokens, d))


def layernorm(x, scale, bias):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * scale + bias


def attention_einsum(p, x):
    """Causal self-attention through einsum and a tril mask."""
    b, t, d = x.shape
    dh = d // HEADS
    q = (x @ p["wq"]).reshape(b, t, HEADS, dh)
    k = (x @ p["wk"]).reshape(b, t, HEADS, dh)
    v = (x @ p["wv"]).reshape(b, t, HEADS, dh)
    scores = jnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(dh)
    mask = jnp.tril(jnp.ones((t, t), dtype=bool))
    scores = jnp.where(mask, scores, -1e9)
    weights = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhts,bshd->bthd", weights, v).reshape(b, t, d)
    return out @ p["wo"]


def attention_matmul(p, x):
    """Causal self-attention through reshapes, transposes and ``@``."""
    b, t, d = x.shape
    dh = d // HEADS

    def heads(w):
        return (x @ w).reshape(b, t, HEADS, dh).transpose(0, 2, 1, 3)

    q, k, v = heads(p["wq"]), heads(p["wk"]), heads(p["wv"])
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    scores = scores + jnp.triu(jnp.full((t, t), -1e9), k=1)
    weights = jax.nn.softmax(scores, axis=-1)
    out = (weights @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
    return out @ p["wo"]


def mlp(p, x):
    return jax.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def block(p, x, attention=attention_einsum):
    x = x + attention(p, layernorm(x, p["ln1_scale"], p["ln1_bias"]))
    return x + mlp(p, layernorm(x, p["ln2_scale"], p["ln2_bias"]))


def transformer(params, x, attention=attention_einsum):
    for p in params:
        x = block(p, x, attention)
    return x


def transformer_loss_einsum(params, x):
    return jnp.mean(transformer(params, x, attention_einsum) ** 2)


def transformer_loss_matmul(params, x):
    return jnp.mean(transformer(params, x, attention_matmul) ** 2)


TRANSFORMER_LOSSES = {"einsum": transformer_loss_einsum, "matmul": transformer_loss_matmul}


def transformer_scan(stacked, x, attention=attention_einsum):
    """The same blocks through ``lax.scan`` over parameters stacked on a leading axis: the
    twin of :func:`transformer`'s Python loop that traces (and compiles) one block."""

    def step(x, p):
        return block(p, x, attention), None

    return jax.lax.scan(step, x, stacked)[0]


def transformer_loss_scan(stacked, x):
    return jnp.mean(transformer_scan(stacked, x, attention_einsum) ** 2)


def stacked_params(params):
    """:func:`transformer_params`' list of dicts as one dict of stacked arrays (for the scan)."""
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *params)


@functools.cache
def transformer_args(blocks: int = BLOCKS) -> tuple[list[dict[str, Any]], jax.Array]:
    """(params, x), built once per process."""
    return transformer_params(blocks), transformer_inputs()


@functools.cache
def transformer_grad(style: str):
    """``jax.grad`` of one style's loss: one function object per process, so every
    compile of it (ours or the reference's) shares JAX's caches."""
    return jax.grad(TRANSFORMER_LOSSES[style])


@functools.cache
def compiled_transformer_grad(style: str):
    """The optimized executable of one style's gradient, compiled once per process."""
    params, x = transformer_args()
    return jax.jit(transformer_grad(style)).lower(params, x).compile()


def hlo_program(hlo_text: str) -> str:
    """An optimized HLO module's text without what says where and under which names it
    was traced (the engine's :func:`program_text`): ``%%hlo`` traces anew, with the user's
    calls named in the op_names and from its own call stack; against the user's own compile
    of the same call, only these differ."""
    return program_text(hlo_text)


# --- a lax.scan RNN --------------------------------------------------------------------


def scan_rnn_params(d: int = 64, k: int = 32, seed: int = 2):
    kh, kx = jax.random.split(jax.random.key(seed))
    return {
        "wh": jax.random.normal(kh, (d, d)) / np.sqrt(d),
        "wx": jax.random.normal(kx, (k, d)) / np.sqrt(k),
    }


def scan_rnn_inputs(steps: int = 50, k: int = 32, seed: int = 3):
    return jax.random.normal(jax.random.key(seed), (steps, k))


def rnn_cell(params, h, x):
    h = jnp.tanh(h @ params["wh"] + x @ params["wx"])
    return h, h.sum()


def scan_rnn_loss(params, xs):
    def step(h, x):
        return rnn_cell(params, h, x)

    h, sums = jax.lax.scan(step, jnp.zeros(params["wh"].shape[0]), xs)
    return jnp.mean(h**2) + jnp.mean(sums**2)


# --- Flax NNX: a model, an optax optimizer, an nnx.jit train step ------------------------


@dataclass
class NNXSetup:
    """What a Flax NNX user has in their namespace: model, optimizer, step, a batch."""

    model: Any
    optimizer: Any
    train_step: Any
    x: jax.Array
    y: jax.Array
    rngs: Any


def _nnx_train_step():
    from flax import nnx

    @nnx.jit
    def train_step(model, optimizer, x, y):
        def loss_fn(model):
            return jnp.mean((model(x) - y) ** 2)

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    return train_step


def nnx_mlp_setup(din: int = 16, dhidden: int = 64, dout: int = 4, batch: int = 32) -> NNXSetup:
    """An NNX MLP with dropout (it draws from its Rngs on every training call)."""
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs: nnx.Rngs):
            self.linear1 = nnx.Linear(din, dhidden, rngs=rngs)
            self.dropout = nnx.Dropout(0.1, rngs=rngs)
            self.linear2 = nnx.Linear(dhidden, dout, rngs=rngs)

        def __call__(self, x):
            return self.linear2(self.dropout(nnx.relu(self.linear1(x))))

    rngs = nnx.Rngs(params=0, dropout=1)
    model = MLP(rngs)
    optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
    x = jax.random.normal(jax.random.key(4), (batch, din))
    y = jax.random.normal(jax.random.key(5), (batch, dout))
    return NNXSetup(model, optimizer, _nnx_train_step(), x, y, rngs)


def nnx_cnn_setup(batch: int = 8) -> NNXSetup:
    """An NNX CNN on 28x28 images (the Flax docs' MNIST model, smaller)."""
    import optax
    from flax import nnx

    class CNN(nnx.Module):
        def __init__(self, rngs: nnx.Rngs):
            self.conv1 = nnx.Conv(1, 8, kernel_size=(3, 3), rngs=rngs)
            self.conv2 = nnx.Conv(8, 16, kernel_size=(3, 3), rngs=rngs)
            self.linear = nnx.Linear(7 * 7 * 16, 10, rngs=rngs)

        def __call__(self, x):
            pool = functools.partial(nnx.avg_pool, window_shape=(2, 2), strides=(2, 2))
            x = pool(nnx.relu(self.conv1(x)))
            x = pool(nnx.relu(self.conv2(x)))
            return self.linear(x.reshape(x.shape[0], -1))

    rngs = nnx.Rngs(0)
    model = CNN(rngs)
    optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
    x = jax.random.normal(jax.random.key(6), (batch, 28, 28, 1))
    y = jax.nn.one_hot(jnp.arange(batch) % 10, 10)
    return NNXSetup(model, optimizer, _nnx_train_step(), x, y, rngs)


def nnx_state_digest(*objs) -> list[tuple[str, Any]]:
    """Every leaf of the NNX objects' state (params, optimizer moments, step, RNG counters)
    as host values: two digests are equal exactly when nothing advanced."""
    from flax import nnx

    out = []
    for i, obj in enumerate(objs):
        flat = jax.tree_util.tree_flatten_with_path(nnx.state(obj))[0]
        for path, leaf in flat:
            value = (
                jax.random.key_data(leaf)
                if jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)
                else leaf
            )
            out.append((f"{i}{jax.tree_util.keystr(path)}", np.asarray(value)))
    return out


# --- Equinox: a module trained under eqx.filter_jit --------------------------------------


@dataclass
class EquinoxSetup:
    model: Any
    opt_state: Any
    optimizer: Any
    train_step: Any
    loss: Any
    x: jax.Array
    y: jax.Array


def equinox_setup(din: int = 16, width: int = 64, dout: int = 4, batch: int = 32) -> EquinoxSetup:
    import equinox as eqx
    import optax

    model = eqx.nn.MLP(din, dout, width, depth=2, key=jax.random.key(7))
    optimizer = optax.adam(1e-3)
    opt_state = optimizer.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def loss(model, x, y):
        return jnp.mean((jax.vmap(model)(x) - y) ** 2)

    @eqx.filter_jit
    def train_step(model, opt_state, x, y):
        value, grads = eqx.filter_value_and_grad(lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2))(
            model
        )
        updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), opt_state, value

    x = jax.random.normal(jax.random.key(8), (batch, din))
    y = jax.random.normal(jax.random.key(9), (batch, dout))
    return EquinoxSetup(model, opt_state, optimizer, train_step, loss, x, y)

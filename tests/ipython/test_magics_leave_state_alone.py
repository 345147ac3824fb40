"""No magic and no twin changes the user's state: model, optimizer and RNG state are exactly
as they were after each one, and no array of theirs is consumed (donated).

Real models (:mod:`tests.real_models`): an NNX MLP with dropout and its
``nnx.Optimizer(optax.adamw)`` train step under ``nnx.jit`` (also a copy of it that
donates the model and optimizer), an ``nnx.jit`` dropout drawing from an ``nnx.Rngs``
passed by keyword, an Equinox MLP's ``eqx.filter_jit`` train step, and an Equinox
``BatchNorm`` with its ``eqx.nn.State`` (a stateful layer).  Every cell runs in the
session's real ``InteractiveShell``.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from tests.real_models import nnx_state_digest
from workbench.views.bench import BENCH_MIME

pytest.importorskip("flax.nnx")
pytest.importorskip("equinox")

# every magic compiles the real train steps: part of the full run (the engine's
# tests/engine/test_bench_state.py keeps %jaxbench's copies in the quick loop)
pytestmark = pytest.mark.slow

SETUP = """
import equinox as eqx
from flax import nnx
import workbench
from tests.real_models import nnx_mlp_setup, equinox_setup

_s = nnx_mlp_setup()
model, opt, x, y, rngs, train_step = _s.model, _s.optimizer, _s.x, _s.y, _s.rngs, _s.train_step
donating_step = nnx.jit(train_step.fun, donate_argnums=(0, 1))
drop_rngs = nnx.Rngs(dropout=3)

@nnx.jit
def dropout(x, rngs):
    return nnx.Dropout(0.5)(x, rngs=rngs)

_e = equinox_setup()
emodel, eopt_state, ex, ey, estep = _e.model, _e.opt_state, _e.x, _e.y, _e.train_step
bn, bn_state = eqx.nn.make_with_state(eqx.nn.BatchNorm)(16, axis_name="batch", mode="ema")

@eqx.filter_jit
def bn_apply(bn, state, x):
    return jax.vmap(bn, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(x, state)
"""

CELLS = {
    "%jaxbench nnx train step": "%jaxbench --budget 0.1 train_step(model, opt, x, y)",
    "%jaxbench donating nnx step": "%jaxbench --budget 0.1 donating_step(model, opt, x, y)",
    "%jaxbench dropout": "%jaxbench --budget 0.1 dropout(x, rngs=drop_rngs)",
    "%%jaxbench": "%%jaxbench --budget 0.1\nbatch = x\ntrain_step(model, opt, batch, y)",
    "%jaxbench equinox step": "%jaxbench --budget 0.1 estep(emodel, eopt_state, ex, ey)",
    "%jaxbench batchnorm": "%jaxbench --budget 0.1 bn_apply(bn, bn_state, ex)",
    "%%jaxpr": "%%jaxpr\ntrain_step(model, opt, x, y)",
    "%jaxpr": "%jaxpr dropout(x, rngs=drop_rngs)",
    "%%hlo": "%%hlo\ntrain_step(model, opt, x, y)",
    "%hlo": "%hlo donating_step(model, opt, x, y)",
    "%%jaxprof": "%%jaxprof -n 2\ntrain_step(model, opt, x, y)",
    "%jaxprof": "%jaxprof -n 2 dropout(x, rngs=drop_rngs)",
    "%%jaxprof donating nnx step": "%%jaxprof -n 2\ndonating_step(model, opt, x, y)",
    "%jaxbench model(x)": "%jaxbench --budget 0.1 model(x)",
    "%sharding": "%sharding model",
    "%jaxcache": "%jaxcache",
    "workbench.bench": "workbench.bench(train_step, model, opt, x, y, budget=0.1)",
    "workbench.jaxpr": "workbench.jaxpr(train_step, model, opt, x, y)",
    "workbench.hlo": "workbench.hlo(donating_step, model, opt, x, y)",
    "workbench.profile": "workbench.profile(dropout, x, rngs=drop_rngs, n=2)",
    "workbench.inspect": "workbench.inspect(train_step, model, opt, x, y).cost",
    "workbench.sharding": "workbench.sharding(opt)",
}


#: Cells that fail as JAX does (tracing an eager NNX module that draws from its Rngs is
#: Flax's TraceContextError under ``jax.make_jaxpr`` too): the state is still untouched.
FAILING = {
    "%%jaxpr eager module": "%%jaxpr\nmodel(x)",
    "%%hlo eager module": "%%hlo\nmodel(x)",
}


@pytest.fixture(scope="module")
def models(shell):
    result = shell.run_cell(SETUP, store_history=False)
    assert result.error_in_exec is None, result.error_in_exec
    return shell


def _state(ns) -> tuple[list[tuple[str, object]], list[jax.Array]]:
    """Every leaf of the user's state as host values, and every array of it (to check
    none was deleted)."""
    nnx_objs = (ns["model"], ns["opt"], ns["rngs"], ns["drop_rngs"])
    eqx_objs = {"emodel": ns["emodel"], "eopt_state": ns["eopt_state"], "bn_state": ns["bn_state"]}
    from flax import nnx

    arrays = [a for a in jax.tree.leaves(nnx.state(nnx_objs)) if isinstance(a, jax.Array)]
    arrays += [a for a in jax.tree.leaves(eqx_objs) if isinstance(a, jax.Array)]
    assert not any(a.is_deleted() for a in arrays), "an array of the user was consumed"
    digest = nnx_state_digest(*nnx_objs)
    flat, _ = jax.tree_util.tree_flatten_with_path(eqx_objs)
    digest += [
        (jax.tree_util.keystr(path), np.asarray(leaf))
        for path, leaf in flat
        if isinstance(leaf, jax.Array)
    ]
    return digest, arrays


@pytest.mark.parametrize("cell", list(CELLS.values()), ids=list(CELLS))
def test_state_is_unchanged_after(models, run, cell):
    ns = models.user_ns
    before, arrays = _state(ns)
    r = run(cell)
    assert r.error is None, r.stdout + r.stderr
    after, _ = _state(ns)
    assert not any(a.is_deleted() for a in arrays), "an array of the user was consumed"
    changed = [k for (k, a), (_, b) in zip(before, after, strict=True) if not np.array_equal(a, b)]
    assert changed == []
    if cell.startswith(("%jaxbench", "%%jaxbench", "workbench.bench")) and "(model" in cell:
        (m,) = r.bundle[BENCH_MIME]["measurements"]
        assert m["error"] is None and m["samples"]
        assert m["state_note"].startswith("timed on copies of model (MLP), opt (Optimizer)")
        assert "timed on copies of model (MLP)" in r.bundle["text/plain"]


@pytest.mark.parametrize("cell", list(FAILING.values()), ids=list(FAILING))
def test_state_is_unchanged_after_a_failing(models, run, cell):
    before, arrays = _state(models.user_ns)
    r = run(cell)
    assert r.error is not None
    r.short_error()
    after, _ = _state(models.user_ns)
    assert not any(a.is_deleted() for a in arrays)
    changed = [k for (k, a), (_, b) in zip(before, after, strict=True) if not np.array_equal(a, b)]
    assert changed == []


def test_jaxbench_refuses_state_it_cannot_copy_with_one_line(models, run):
    """A model whose buffer is gone cannot be copied: one line says why and offers
    ``--allow-mutation``; nothing is timed and nothing is shown but the line."""
    models.run_cell(
        "broken = nnx_mlp_setup().model\nbroken.linear1.kernel[...].delete()", store_history=False
    )
    r = run("%jaxbench --budget 0.1 train_step(broken, opt, x, y)")
    text = r.short_error()
    assert len(text.strip().splitlines()) == 1, text
    assert "cannot copy the state of broken (MLP)" in text and "--allow-mutation" in text


def test_allow_mutation_times_on_the_users_objects(models, run):
    models.run_cell(
        "_mine = nnx_mlp_setup()\nmine, mine_opt = _mine.model, _mine.optimizer",
        store_history=False,
    )
    ns = models.user_ns
    step = int(ns["mine_opt"].step[...])
    r = run("%jaxbench --budget 0.05 --allow-mutation train_step(mine, mine_opt, x, y)")
    assert r.error is None, r.stdout + r.stderr
    (m,) = r.bundle[BENCH_MIME]["measurements"]
    calls = m["warmup_calls"] + m["number"] * len(m["samples"])
    assert int(ns["mine_opt"].step[...]) - step == calls > 0
    assert m["state_note"] == (
        "timed on your objects (allow_mutation): the calls changed mine (MLP), mine_opt (Optimizer)"
    )

"""``%%hlo``, ``%%jaxpr`` and their twins show the program a Flax ``nnx.jit`` or Equinox
``eqx.filter_jit`` call really runs: what the wrapper's own ``.lower(...).compile()`` gives,
the state updates of an NNX train step included (inside another ``jax.jit`` only the loss
would be an output, and XLA would drop the optimizer step as dead code), and the user's
objects untouched.

The reference is computed from Flax/Equinox in each test: the wrapper's own AOT stages.
"""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import workbench
from tests.real_models import equinox_setup, hlo_program, nnx_mlp_setup, nnx_state_digest
from workbench.engine.profile.store import text_key

nnx = pytest.importorskip("flax.nnx")
pytest.importorskip("equinox")

_DOT = re.compile(r"\s(?:dot|convolution)\(")


def _dots(hlo_text: str) -> int:
    """Matrix products of an optimized HLO module (fused computations included)."""
    return sum(1 for line in hlo_text.splitlines() if _DOT.search(line))


def _flops(compiled) -> float:
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    return float(cost["flops"])


def _same(a, b) -> bool:
    return len(a) == len(b) and all(
        ka == kb and np.array_equal(va, vb) for (ka, va), (kb, vb) in zip(a, b, strict=True)
    )


@pytest.fixture
def nnx_step(shell):
    """The NNX MLP, its optimizer and ``nnx.jit`` train step in the user's namespace, and
    the compiled program that ``train_step(model, opt, x, y)`` runs (from Flax)."""
    s = nnx_mlp_setup()
    shell.user_ns.update(model=s.model, opt=s.optimizer, x=s.x, y=s.y, train_step=s.train_step)
    reference = s.train_step.lower(s.model, s.optimizer, s.x, s.y).compile()
    return s, reference


def test_hlo_cell_of_an_nnx_train_step_is_the_program_that_runs(run, shell, nnx_step):
    s, reference = nnx_step
    ref_text = reference.as_text()
    before = nnx_state_digest(s.model, s.optimizer, s.rngs)
    r = run("%%hlo\ntrain_step(model, opt, x, y)")
    assert r.error is None, r.stdout
    rep = r.result.result.report
    # the weight updates are there: every matmul of the step, not only the forward pass
    assert _dots(rep.text) == _dots(ref_text) > 0
    assert rep.cost.flops == pytest.approx(_flops(reference))
    assert hlo_program(rep.text) == hlo_program(ref_text)  # with its own op_names
    assert _same(nnx_state_digest(s.model, s.optimizer, s.rngs), before)


def test_hlo_twin_and_inspect_of_an_nnx_train_step(nnx_step):
    s, reference = nnx_step
    before = nnx_state_digest(s.model, s.optimizer, s.rngs)
    rep = workbench.hlo(s.train_step, s.model, s.optimizer, s.x, s.y).report
    assert _dots(rep.text) == _dots(reference.as_text())
    assert rep.cost.flops == pytest.approx(_flops(reference))
    ins = workbench.inspect(s.train_step, s.model, s.optimizer, s.x, s.y)
    assert ins.cost.flops == pytest.approx(_flops(reference))
    assert ins.hlo_text == reference.as_text()
    # the jaxpr is the call as jax.make_jaxpr traces it: nnx.jit's equation, whose body
    # computes the update (the program compiled returns it)
    assert ins.jaxpr_text == str(
        jax.make_jaxpr(s.train_step)(s.model, s.optimizer, s.x, s.y).pretty_print(use_color=False)
    )
    assert _same(nnx_state_digest(s.model, s.optimizer, s.rngs), before)


@pytest.mark.parametrize("donate", [False, True], ids=["step", "donating step"])
def test_jaxprof_cell_of_an_nnx_train_step_profiles_the_program_that_runs(
    run, shell, nnx_step, donate
):
    s, reference = nnx_step
    step = s.train_step
    if donate:
        step = nnx.jit(s.train_step.fun, donate_argnums=(0, 1))
        shell.user_ns["train_step"] = step
        reference = step.lower(s.model, s.optimizer, s.x, s.y).compile()
    before = nnx_state_digest(s.model, s.optimizer, s.rngs)
    r = run("%%jaxprof -n 2\ntrain_step(model, opt, x, y)")
    assert r.error is None, r.stdout
    # the module profiled is the very one the call runs (name and hash of its HLO)
    assert r.result.result.report.module_key == text_key(reference.as_text())
    assert _same(nnx_state_digest(s.model, s.optimizer, s.rngs), before)


def test_jaxpr_cell_of_an_nnx_train_step_shows_the_update(run, nnx_step):
    s, _ = nnx_step
    traced = s.train_step.trace(s.model, s.optimizer, s.x, s.y).traced
    ref_text = str(traced.jaxpr.pretty_print(use_color=False))
    r = run("%%jaxpr\ntrain_step(model, opt, x, y)")
    assert r.error is None, r.stdout
    text = r.bundle["text/plain"]
    # the gradient's matmuls and the optimizer's moment updates are in the program shown
    assert text.count("dot_general") == ref_text.count("dot_general") > 2
    assert text.count("sqrt") == ref_text.count("sqrt") > 0


def test_hlo_of_an_nnx_jit_method(run, shell):
    """A method decorated with ``nnx.jit`` (bound as ``partial(wrapper, self)``) that
    updates the module's own state: the update is in the program, the module unchanged."""
    shell.run_cell(
        """
from flax import nnx

class Counter(nnx.Module):
    def __init__(self):
        self.w = nnx.Param(jnp.ones((8, 8)))
        self.seen = nnx.BatchStat(jnp.zeros((8, 8)))

    @nnx.jit
    def step(self, x):
        self.seen[...] = self.seen[...] + x.T @ x
        return x @ self.w[...]

counter = Counter()
cx = jnp.ones((4, 8))
""",
        store_history=False,
    )
    counter, cx = shell.user_ns["counter"], shell.user_ns["cx"]
    reference = counter.step.func.lower(counter, cx).compile()
    before = nnx_state_digest(counter)
    r = run("%hlo counter.step(cx)")
    assert r.error is None, r.stdout
    rep = r.result.result.report
    assert _dots(rep.text) == _dots(reference.as_text())
    assert _same(nnx_state_digest(counter), before)


def test_hlo_of_an_equinox_train_step_is_the_program_that_runs(run, shell):
    e = equinox_setup()
    shell.user_ns.update(emodel=e.model, eopt=e.opt_state, ex=e.x, ey=e.y, estep=e.train_step)
    reference = e.train_step.lower(e.model, e.opt_state, e.x, e.y).lowered.compile()
    leaves = [np.asarray(a) for a in jax.tree.leaves((e.model, e.opt_state))]
    r = run("%%hlo\nestep(emodel, eopt, ex, ey)")
    assert r.error is None, r.stdout
    rep = r.result.result.report
    assert _dots(rep.text) == _dots(reference.as_text()) > 0
    assert rep.cost.flops == pytest.approx(_flops(reference))
    after = [np.asarray(a) for a in jax.tree.leaves((e.model, e.opt_state))]
    assert all(np.array_equal(a, b) for a, b in zip(leaves, after, strict=True))

"""A benchmark never changes the user's state: Flax NNX objects are timed on copies.

The real models of :mod:`tests.real_models` (an NNX MLP with dropout, an
``nnx.Optimizer(optax.adamw)`` train step under ``nnx.jit``; an Equinox MLP under
``eqx.filter_jit``), run through the engine, with every leaf of the model's, the
optimizer's and the ``Rngs``' state compared before and after (:func:`nnx_state_digest`).
The roofline of ``nnx.jit`` and ``eqx.filter_jit`` functions is checked against JAX's own
cost analysis of the program the library stages for the call.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tests.real_models import equinox_setup, nnx_mlp_setup, nnx_state_digest
from workbench.engine.bench.runner import run_benchmark
from workbench.engine.bench.state import StateCopyError, private_arguments
from workbench.engine.cache import capture_compiles
from workbench.engine.common.analysis import normalize_cost
from workbench.engine.hlo.costs import program_cost
from workbench.engine.hlo.parser import parse_hlo

nnx = pytest.importorskip("flax.nnx")


def _same(before, after) -> list[str]:
    """The leaves that changed (empty: the state is exactly as it was)."""
    assert [k for k, _ in before] == [k for k, _ in after]
    return [k for (k, a), (_, b) in zip(before, after, strict=True) if not np.array_equal(a, b)]


def _calls_after_first(m) -> int:
    return m.warmup_calls + m.number * len(m.samples)


@pytest.fixture(scope="module")
def mlp():
    s = nnx_mlp_setup()
    s.train_step(*nnx.clone((s.model, s.optimizer)), s.x, s.y)  # compiled once, on a copy
    return s


def test_nnx_train_step_does_not_train_the_users_model(mlp):
    before = nnx_state_digest(mlp.model, mlp.optimizer, mlp.rngs)
    b = run_benchmark(
        mlp.train_step,
        (mlp.model, mlp.optimizer, mlp.x, mlp.y),
        budget=0.1,
        with_roofline=False,
        label="train_step(model, opt, x, y)",
    )
    (m,) = b.measurements
    assert m.ok, m.error
    assert _calls_after_first(m) > 1  # the timed calls ran (on the copies)
    assert _same(before, nnx_state_digest(mlp.model, mlp.optimizer, mlp.rngs)) == []
    assert m.state_note == (
        "timed on copies of model (MLP), opt (Optimizer): your objects are unchanged"
    )


def test_allow_mutation_times_on_the_users_objects_and_says_so(mlp):
    model, opt = nnx.clone((mlp.model, mlp.optimizer))  # the test's own objects to change
    step = int(opt.step[...])
    b = run_benchmark(
        mlp.train_step,
        (model, opt, mlp.x, mlp.y),
        budget=0.05,
        with_roofline=False,
        allow_mutation=True,
    )
    (m,) = b.measurements
    assert m.ok, m.error
    # every call after the first (which gets copies of every array, as any non-jax.jit
    # function's does) advanced the optimizer by one step
    assert int(opt.step[...]) - step == _calls_after_first(m)
    assert m.state_note.startswith("timed on your objects (allow_mutation): the calls changed")


def test_dropout_does_not_advance_the_users_rngs():
    rngs = nnx.Rngs(dropout=3)

    @nnx.jit
    def dropout(x, rngs):
        return nnx.Dropout(0.5)(x, rngs=rngs)

    x = jnp.ones((8, 16))
    before = nnx_state_digest(rngs)
    b = run_benchmark(dropout, (x,), {"rngs": rngs}, budget=0.05, with_roofline=False)
    assert b.ok, [m.error for m in b.measurements]
    assert _same(before, nnx_state_digest(rngs)) == []
    assert (
        b.measurements[0].state_note == "timed on copies of rngs (Rngs): your objects are unchanged"
    )


def test_what_the_arguments_share_stays_shared_between_the_copies(mlp):
    """One joint copy: a module holding the ``Rngs`` passed beside it holds the copied
    ``Rngs`` in the copies too, and the copies have buffers of their own."""

    class Noisy(nnx.Module):
        def __init__(self, rngs):
            self.rngs = rngs
            self.w = nnx.Param(jnp.ones(4))

    rngs = nnx.Rngs(noise=0)
    noisy = Noisy(rngs)
    p = private_arguments((noisy, mlp.model), {"rngs": rngs})
    copy, model = p.args
    assert copy is not noisy and p.kwargs["rngs"] is not rngs and model is not mlp.model
    assert copy.rngs is p.kwargs["rngs"]
    user_w = mlp.model.linear1.kernel[...]
    copy_w = model.linear1.kernel[...]
    assert np.array_equal(user_w, copy_w)
    assert copy_w.unsafe_buffer_pointer() != user_w.unsafe_buffer_pointer()
    assert _same(nnx_state_digest(noisy, mlp.model), nnx_state_digest(copy, model)) == []
    assert p.copied == ["argument 0 (Noisy)", "argument 1 (MLP)", "rngs (Rngs)"]


def test_a_step_donating_its_state_consumes_no_array_of_the_user():
    s = nnx_mlp_setup()
    donating = nnx.jit(s.train_step.fun, donate_argnums=(0, 1))
    leaves = jax.tree.leaves(nnx.state((s.model, s.optimizer)))
    before = nnx_state_digest(s.model, s.optimizer, s.rngs)
    b = run_benchmark(donating, (s.model, s.optimizer, s.x, s.y), budget=0.05, with_roofline=False)
    assert b.ok, [m.error for m in b.measurements]
    assert not any(a.is_deleted() for a in leaves if isinstance(a, jax.Array))
    assert _same(before, nnx_state_digest(s.model, s.optimizer, s.rngs)) == []


def test_make_args_handing_out_the_users_model_is_timed_on_copies(mlp):
    before = nnx_state_digest(mlp.model, mlp.optimizer, mlp.rngs)
    b = run_benchmark(
        mlp.train_step,
        sweep={"batch": [8, 16]},
        make_args=lambda n: (mlp.model, mlp.optimizer, mlp.x[:n], mlp.y[:n]),
        budget=0.1,
        with_roofline=False,
    )
    assert b.ok, [m.error for m in b.measurements]
    assert all(m.state_note.startswith("timed on copies of") for m in b.measurements)
    assert _same(before, nnx_state_digest(mlp.model, mlp.optimizer, mlp.rngs)) == []


def test_state_that_cannot_be_copied_refuses_before_any_call():
    """A model whose buffer was deleted (donated elsewhere) cannot be copied: one line
    says why and offers ``allow_mutation``; the function is never called."""
    s = nnx_mlp_setup()
    s.model.linear1.kernel[...].delete()
    calls = []

    def step(model, opt, x, y):
        calls.append(1)
        return s.train_step(model, opt, x, y)

    with pytest.raises(StateCopyError) as err:
        run_benchmark(step, (s.model, s.optimizer, s.x, s.y), budget=0.05)
    msg = str(err.value)
    assert "\n" not in msg and calls == []
    assert "cannot copy the state of argument 0 (MLP)" in msg
    assert "--allow-mutation" in msg and "allow_mutation=True" in msg


# -- the roofline of nnx.jit and eqx.filter_jit --------------------------------------------
def _expected(compiled):
    """What the roofline must report: JAX's cost analysis of the compiled program, resolved
    by our count of its HLO where XLA did not count (as every roofline is)."""
    cost = normalize_cost(compiled.cost_analysis())
    counted = program_cost(parse_hlo(compiled.as_text()), cost)
    return counted.flops, counted.bytes, cost


def test_nnx_jit_train_step_has_the_roofline_of_the_program_it_runs(mlp):
    s = mlp
    args = (s.model, s.optimizer, s.x, s.y)
    b = run_benchmark(s.train_step, args, budget=0.1)
    (m,) = b.measurements
    assert m.ok, m.error
    r = m.roofline
    compiled = s.train_step.lower(*args).compile()
    flops, bytes_accessed, cost = _expected(compiled)
    assert cost.flops and r.flops == pytest.approx(flops)
    assert r.bytes_accessed == pytest.approx(bytes_accessed)
    assert r.flops_per_s == pytest.approx(r.flops / m.median)
    # the optimizer's update is in it: more than the loss and its gradient alone
    grad_only = jax.jit(
        lambda st, x, y: nnx.grad(lambda mo: jnp.mean((mo(x) - y) ** 2))(nnx.merge(gd, st))
    )
    gd, st = nnx.split(s.model)
    grad_cost = normalize_cost(grad_only.lower(st, s.x, s.y).compile().cost_analysis())
    assert r.flops > grad_cost.flops


def test_equinox_filter_jit_has_the_roofline_of_the_program_it_runs():
    e = equinox_setup()
    args = (e.model, e.opt_state, e.x, e.y)
    b = run_benchmark(e.train_step, args, budget=0.1)
    (m,) = b.measurements
    assert m.ok, m.error
    compiled = e.train_step.lower(*args).lowered.compile()
    flops, bytes_accessed, cost = _expected(compiled)
    assert cost.flops and m.roofline.flops == pytest.approx(flops)
    assert m.roofline.bytes_accessed == pytest.approx(bytes_accessed)
    assert m.state_note == ""  # Equinox modules are immutable: nothing to copy


def test_the_library_roofline_reuses_the_first_calls_compile(mlp):
    """The cost analysis comes from the executable JAX cached for the timed calls: the
    benchmark compiles once (its first call), not a second time for the roofline."""
    fresh = nnx.jit(mlp.train_step.fun)
    with capture_compiles() as records:
        b = run_benchmark(fresh, (mlp.model, mlp.optimizer, mlp.x, mlp.y), budget=0.05)
    (m,) = b.measurements
    assert m.ok and m.roofline is not None and m.roofline.flops
    assert len(records) == m.first_call.compiles == 1


def test_a_module_called_as_the_function_is_timed_on_a_copy(mlp):
    """``%jaxbench model(x)``: the function is the model (its dropout draws from its
    ``Rngs``); ``model.forward(x)`` binds it as ``self``, an ``nnx.jit`` method too."""

    class Net(nnx.Module):
        def __init__(self, rngs):
            self.mlp = mlp.model
            self.noise = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x):
            return self.noise(self.mlp(x))

        def forward(self, x):
            return self(x)

        @nnx.jit
        def jitted(self, x):
            return self(x)

    net = Net(nnx.Rngs(dropout=5))
    for call, fn in (
        ("net(x)", net),
        ("net.forward(x)", net.forward),
        ("net.jitted(x)", net.jitted),
    ):
        before = nnx_state_digest(net)
        b = run_benchmark(fn, (mlp.x,), budget=0.05, with_roofline=False, label=call)
        (m,) = b.measurements
        assert m.ok, (call, m.error)
        assert _same(before, nnx_state_digest(net)) == [], call
        assert m.state_note == "timed on copies of net (Net): your objects are unchanged", call


def test_a_function_reading_a_module_of_the_namespace_is_timed_on_a_copy(mlp):
    """``%jaxbench fwd(x)`` where ``fwd`` is a plain function calling a module it reads
    from the notebook's namespace (a global) or from its closure: the module's dropout
    draws from its ``Rngs`` on every call, so the function is timed with a copy in its
    place, as a module passed as an argument is."""
    ns = {"net": nnx.clone(mlp.model)}
    exec("def fwd(x):\n    return net(x)\n", ns)

    def closing_over(net2):
        def fwd2(x):
            return net2(x)

        return fwd2

    inner = nnx.clone(mlp.model)
    for call, fn, node, where in (
        ("fwd(x)", ns["fwd"], ns["net"], "net"),
        ("fwd2(x)", closing_over(inner), inner, "net2"),
    ):
        before = nnx_state_digest(node)
        b = run_benchmark(fn, (mlp.x,), budget=0.05, with_roofline=False, label=call)
        (m,) = b.measurements
        assert m.ok, (call, m.error)
        # every call draws dropout from the module's Rngs (the first call's too)
        assert _same(before, nnx_state_digest(node)) == [], call
        assert m.state_note == (f"timed on copies of {where} (MLP): your objects are unchanged"), (
            call
        )
    assert ns["fwd"].__globals__["net"] is ns["net"]  # the user's namespace is left as it was

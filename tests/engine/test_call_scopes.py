"""The scoped trace of ``%%hlo``: each call of the user's functions named ``NAME#K`` in the
op_names (:mod:`workbench.engine.common.call_scopes`), and the origin of called
computations in the HLO payload.

Expected names and counts come from the programs themselves (the model's blocks, its
layers' classes, the line of the ``lax.scan`` call), never from a copy of JAX's output.
"""

from __future__ import annotations

import inspect as pyinspect
import re
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tests import real_models
from workbench.engine import _jax_compat as compat
from workbench.engine.common import call_scopes
from workbench.engine.common.call_scopes import scoped_calls
from workbench.engine.hlo.report import build_hlo_report
from workbench.engine.stages import Inspection, inspect_stages

HOOKS = [h for h in call_scopes.HOOKS if h != "monitoring" or hasattr(sys, "monitoring")]
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')


def op_names(hlo_text: str) -> set[str]:
    return set(_OP_NAME.findall(hlo_text))


def scoped_inspection(fn, *args) -> Inspection:
    return Inspection(fn, args, {}, scoped=True)


def block_paths(names: set[str]) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """For each block index: the distinct scope paths (up to ``block#i``) of the forward
    pass and of the backward pass (under ``transpose(...)``)."""
    forward: dict[int, set[str]] = {}
    backward: dict[int, set[str]] = {}
    for name in names:
        for part in name.split(";"):
            m = re.match(r"(.*?/block#(\d+))(?:/|$)", part)
            if m is None:
                continue
            side = backward if "transpose(" in m.group(1) else forward
            side.setdefault(int(m.group(2)), set()).add(m.group(1))
    return forward, backward


def eqn_name_stacks(jaxpr) -> list[str]:
    """The name stacks of every equation, sub-jaxprs included."""
    out = []
    for eqn in jaxpr.eqns:
        out.append(compat.name_stack(eqn.source_info))
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    out.extend(eqn_name_stacks(inner))
    return out


# -- the transformer: one scope per block, forward and backward ------------------------


@pytest.fixture(scope="module")
def four_blocks():
    params, x = real_models.transformer_args(4)
    grad = jax.grad(real_models.transformer_loss_einsum)
    return grad, params, x


@pytest.mark.slow  # compiles a 4-block transformer gradient (seconds)
@pytest.mark.jax_versions
def test_each_block_is_named_once_forward_and_once_backward(four_blocks):
    grad, params, x = four_blocks
    names = op_names(scoped_inspection(grad, params, x).hlo_text)
    forward, backward = block_paths(names)
    blocks = len(params)
    assert sorted(forward) == sorted(backward) == list(range(blocks))
    assert all(len(paths) == 1 for paths in (*forward.values(), *backward.values()))
    # the user's loop and calls, outermost first; JAX's transforms around them
    (path,) = forward[blocks - 1]
    assert path.endswith(f"/transformer#0/block#{blocks - 1}")
    assert "transformer_loss_einsum#0" in path


def test_counters_restart_per_enclosing_scope(four_blocks):
    grad, params, x = four_blocks
    stacks = eqn_name_stacks(scoped_inspection(grad, params, x).jaxpr)
    per_block: dict[str, set[str]] = {}
    for stack in stacks:
        m = re.search(r"/block#(\d+)/(layernorm#\d+)", stack)
        if m:
            per_block.setdefault(m.group(1), set()).add(m.group(2))
    # each block calls layernorm twice: #0 and #1 in every block, whatever came before
    assert per_block == {str(i): {"layernorm#0", "layernorm#1"} for i in range(len(params))}


def test_a_changed_last_line_renames_nothing_else(four_blocks):
    _, params, x = four_blocks

    def loss_a(params, x):
        return jnp.mean(real_models.transformer(params, x) ** 2)

    def loss_b(params, x):
        y = real_models.transformer(params, x)
        return jnp.mean(real_models.layernorm(y, 1.0, 0.0) ** 2)  # one more call at the end

    def scopes(fn):
        stacks = eqn_name_stacks(scoped_inspection(fn, params, x).jaxpr)
        return {s[s.index("transformer#0") :] for s in stacks if "transformer#0" in s}

    assert scopes(loss_a) == scopes(loss_b) != set()


@pytest.mark.slow  # compiles a 4-block transformer gradient (seconds)
@pytest.mark.jax_versions
def test_scoped_trace_is_fresh_and_the_users_call_does_not_recompile(four_blocks):
    _, params, x = four_blocks
    jitted = jax.jit(jax.grad(real_models.transformer_loss_einsum))  # no other test's object
    jitted(params, x)  # the user's call: traced and compiled, in JAX's caches
    compiles: list[str] = []

    def listener(event: str, duration: float, **_: object) -> None:
        if event == compat.COMPILE_EVENT:
            compiles.append(event)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        ins = scoped_inspection(jitted, params, x)
        names = op_names(ins.hlo_text)  # JAX's trace cache would hold no scopes
        assert block_paths(names)[0].keys() == set(range(len(params)))
        assert len(compiles) == 1  # the workbench's own compile, not served by the user's
        jitted(params, x)
        jitted(params, x)
        assert len(compiles) == 1  # the user's calls still find their own executable
    finally:
        compat.unregister_monitoring_listener("duration", listener)


def test_unscoped_inspection_keeps_the_cheap_trace(four_blocks):
    grad, params, x = four_blocks
    ins = Inspection(grad, (params, x), {})
    assert not any("#" in s for s in eqn_name_stacks(ins.jaxpr))


# -- the hooks: chained, restored, per thread --------------------------------------------


def _leaf(x):
    return jnp.sin(x) * 2


def _outer(x):
    return _leaf(x) + _leaf(x + 1)


def _failing(x):
    y = _leaf(x)
    if y.sum() > 0:  # a Python branch on a traced value: the trace raises here
        return y
    return -y


def _monitoring_tools() -> list[object]:
    mon = getattr(sys, "monitoring", None)
    return [] if mon is None else [mon.get_tool(i) for i in range(6)]


@pytest.mark.parametrize("hook", HOOKS)
def test_both_hooks_name_the_calls(hook):
    with scoped_calls(hook) as on:
        jaxpr = jax.jit(_outer).trace(jnp.ones(3)).jaxpr
    assert on
    stacks = set(eqn_name_stacks(jaxpr))
    assert {"_outer#0/_leaf#0", "_outer#0/_leaf#1"} <= stacks


@pytest.mark.parametrize("hook", HOOKS)
def test_no_hook_or_scope_is_left_after_a_failing_trace(hook):
    profile, tools = sys.getprofile(), _monitoring_tools()
    with pytest.raises(jax.errors.ConcretizationTypeError):
        with scoped_calls(hook):
            jax.jit(_failing).trace(jnp.ones(3))
    assert sys.getprofile() is profile
    assert _monitoring_tools() == tools
    # JAX's name stack is back to empty: a later trace carries no scope of the failed one
    plain = jax.make_jaxpr(_outer)(jnp.ones(3))
    assert not any("#" in s for s in eqn_name_stacks(plain.jaxpr))


def test_a_profile_function_already_set_is_chained_and_restored():
    seen: list[str] = []

    def profiler(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_name)

    sys.setprofile(profiler)
    try:
        with scoped_calls("setprofile") as on:
            jaxpr = jax.jit(_outer).trace(jnp.ones(4)).jaxpr
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(None)
    assert on and "_leaf" in seen  # the earlier profiler still saw the calls
    assert "_outer#0/_leaf#1" in set(eqn_name_stacks(jaxpr))


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring: Python >= 3.12")
def test_monitoring_beside_another_tool_leaves_its_disabled_locations_disabled():
    mon = sys.monitoring
    tool = mon.COVERAGE_ID
    if mon.get_tool(tool) is not None:
        pytest.skip("a coverage tool is running")
    seen: list[int] = []

    def probe(x):
        return x

    def start(code, offset):
        if code is probe.__code__:
            seen.append(offset)
            return mon.DISABLE  # as coverage does for a line it has recorded
        return None

    mon.use_tool_id(tool, "coverage-like")
    try:
        mon.register_callback(tool, mon.events.PY_START, start)
        mon.set_events(tool, mon.events.PY_START)
        probe(1)
        probe(2)
        with scoped_calls("monitoring") as on:
            jaxpr = jax.jit(_outer).trace(jnp.ones(7)).jaxpr
        probe(3)
    finally:
        mon.set_events(tool, 0)
        mon.register_callback(tool, mon.events.PY_START, None)
        mon.free_tool_id(tool)
    assert len(seen) == 1  # the other tool's disabled location was not woken
    assert on and "_outer#0/_leaf#1" in set(eqn_name_stacks(jaxpr))


@pytest.mark.parametrize("hook", HOOKS)
def test_a_nested_scoped_block_adds_no_second_hook(hook):
    with scoped_calls(hook) as outer:
        with scoped_calls(hook) as inner:
            jaxpr = jax.jit(_outer).trace(jnp.ones(6)).jaxpr
    assert outer and not inner
    assert "_outer#0/_leaf#1" in set(eqn_name_stacks(jaxpr))  # each call named once


@pytest.mark.parametrize("hook", HOOKS)
def test_only_the_tracing_thread_is_scoped(hook):
    other: list[list[str]] = []

    def trace_elsewhere():
        other.append(eqn_name_stacks(jax.make_jaxpr(_outer)(jnp.ones(5)).jaxpr))

    with scoped_calls(hook):
        thread = threading.Thread(target=trace_elsewhere)
        thread.start()
        thread.join()
        mine = eqn_name_stacks(jax.make_jaxpr(_outer)(jnp.ones(5)).jaxpr)
    assert other and not any("#" in s for s in other[0])
    assert "_outer#0/_leaf#0" in mine


def test_user_named_scopes_survive():
    def attention(x):
        with jax.named_scope("attn"):
            return jnp.tanh(x) @ x.T

    def model(x):
        return attention(x).sum()

    names = op_names(scoped_inspection(model, jnp.ones((4, 4))).hlo_text)
    assert any("jit(model)/attention#0/attn/" in n for n in names), names


def test_the_traced_function_is_named_by_jit_alone_unless_a_transform_wraps_it():
    def root_fn(x):  # a function no other test traced (JAX's caches hold no trace of it)
        return (_leaf(x) + _leaf(x + 1)).sum()

    x = jnp.ones(3)
    plain = op_names(scoped_inspection(root_fn, x).hlo_text)
    (jit_name,) = {n.split("/", 1)[0] for n in plain if "/" in n}
    assert jit_name == f"jit({root_fn.__name__})"  # JAX's own name for the traced function
    assert f"{jit_name}/_leaf#1/sin" in plain  # no ``root_fn#0`` repeating it on every op
    assert not any(f"{root_fn.__name__}#" in n for n in plain)
    # under grad the traced function's scope is what says forward / backward for its ops
    (grad,) = inspect_stages(root_fn, (x,), {}, "grad", scoped=True)
    names = op_names(grad.hlo_text)
    assert any(f"/jvp({root_fn.__name__}#0)/_leaf#0/" in n for n in names), names
    assert any(f"/transpose(jvp({root_fn.__name__}#0))/_leaf#0/" in n for n in names), names


def test_lambdas_dunders_and_generators_are_not_scopes():
    class Box:
        def __init__(self, x):
            self.x = x

        def __add__(self, other):
            return Box(_leaf(self.x + other.x))

    def gen(x):
        yield _leaf(x)

    def fn(x):
        b = Box(x) + Box(x)
        return (lambda y: y * 2)(b.x) + next(gen(x))

    with scoped_calls():
        stacks = set(eqn_name_stacks(jax.make_jaxpr(fn)(jnp.ones(2)).jaxpr))
    segments = {seg for s in stacks for seg in s.split("/") if seg}
    assert {"fn#0", "_leaf#0", "_leaf#1"} <= segments
    assert not any(seg.startswith(("<", "__", "gen", "Box")) for seg in segments), segments


# -- library models: the layers' class names -------------------------------------------


def test_nnx_model_layers_are_named_by_class():
    pytest.importorskip("flax.nnx")
    s = real_models.nnx_mlp_setup()
    ins = Inspection(s.train_step, (s.model, s.optimizer, s.x, s.y), {}, scoped=True)
    names = op_names(ins.hlo_text)
    model_cls = type(s.model).__name__
    linear = type(s.model.linear1).__name__
    dropout = type(s.model.dropout).__name__
    expected = {
        f"{model_cls}#0/{linear}#0",
        f"{model_cls}#0/{dropout}#0",
        f"{model_cls}#0/{linear}#1",
    }
    found = {e for e in expected if any(f"/{e}/" in n for n in names)}
    assert found == expected, sorted(names)[:20]


def test_equinox_model_layers_are_named_by_class():
    pytest.importorskip("equinox")
    s = real_models.equinox_setup()
    names = op_names(Inspection(s.loss, (s.model, s.x, s.y), {}, scoped=True).hlo_text)
    model_cls = type(s.model).__name__
    layers = [f"{type(layer).__name__}#{i}" for i, layer in enumerate(s.model.layers)]
    for layer in layers:
        # Equinox's own scope (``eqx.nn.Linear``) may stand between, unchanged
        inside = re.compile(rf"/{model_cls}#0/(?:[^/#]*/)?{layer}/")
        assert any(inside.search(n) for n in names), (layer, sorted(names)[:20])


# -- while bodies: named by the user's step function and the scan's line ------------------


def _scan_line() -> int:
    lines, start = pyinspect.getsourcelines(real_models.scan_rnn_loss)
    (offset,) = [i for i, text in enumerate(lines) if "jax.lax.scan(" in text]
    return start + offset


@pytest.mark.parametrize("scoped", [True, False], ids=["scoped", "unscoped"])
def test_scan_body_graph_has_the_step_function_and_the_scan_line_as_origin(scoped):
    params, xs = real_models.scan_rnn_params(), real_models.scan_rnn_inputs()
    ins = Inspection(jax.grad(real_models.scan_rnn_loss), (params, xs), {}, scoped=scoped)
    rep = build_hlo_report(ins, "compiled")
    entry = rep.module.entry.name
    bodies = {
        name
        for comp in rep.module.computations
        for ins_ in comp.instructions
        if ins_.opcode == "while"
        for name in ins_.called
    }
    assert bodies and bodies <= set(rep.graphs)
    assert rep.graphs[entry].origin is None
    step = real_models.scan_rnn_loss.__code__.co_consts  # the step function is a closure
    names = {c.co_name for c in step if hasattr(c, "co_name")}
    for name in bodies:
        origin = rep.graphs[name].origin
        assert origin is not None and origin.source is not None
        assert origin.source.file == real_models.__file__
        assert origin.source.line == _scan_line()
        if scoped:  # the function handed to lax.scan
            assert origin.name in names and origin.name == "step"
        else:  # from the source lines inside: a function of the user's, not the caller's
            assert origin.name != real_models.scan_rnn_loss.__name__
        assert rep.graphs[name].to_dict()["origin"]["source"]["line"] == _scan_line()


# -- the real model: a Python loop over blocks ---------------------------------------------


@pytest.mark.slow  # two compiles of a 6-block gradient (the 24-block count is read in the
# browser, tests/chromium/test_extension_browser.py, from the same scopes drawn as groups)
def test_the_transformer_gradient_names_every_block_once_each_way():
    params, x = real_models.transformer_args(blocks=6)
    grad = real_models.transformer_grad("einsum")
    ins = scoped_inspection(grad, params, x)
    forward, backward = block_paths(op_names(ins.hlo_text))
    blocks = len(params)
    assert sorted(forward) == sorted(backward) == list(range(blocks))  # no index >= blocks
    assert all(len(paths) == 1 for paths in (*forward.values(), *backward.values()))
    # the program is the one the user's call compiles, names aside
    reference = jax.jit(grad).lower(params, x).compile().as_text()
    assert real_models.hlo_program(ins.hlo_text) == real_models.hlo_program(reference)
    assert np.isfinite(ins.timings.trace)

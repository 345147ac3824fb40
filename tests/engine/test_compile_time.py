"""``%%jaxprof --compile``'s engine: one real compile split into XLA's passes and phases,
and the program's size per source line with its unrolled loops.

These run the 4-block forward pass and its ``lax.scan`` twin; the 24-block gradient (the
program the issue's figures are about) is profiled once, in a notebook cell in a real
JupyterLab (tests/chromium/test_memory_compile_browser.py checks its coverage and loop advice).
"""

from __future__ import annotations

import re

import jax
import pytest

import tests.real_models as rm
from workbench.engine.compile_time.phases import BACKEND, HLO_PASS
from workbench.engine.compile_time.run import compile_time_profile
from workbench.engine.stages import Inspection


def _profile(fn, *args):
    return compile_time_profile(Inspection(fn, args, {}, scoped=True))


def _equations(jaxpr) -> int:
    """Equations of a jaxpr, every nested jaxpr included (counted here, not by the engine)."""
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for v in eqn.params.values():
            for sub in v if isinstance(v, (tuple, list)) else (v,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    n += _equations(inner)
    return n


_INSTRUCTION = re.compile(r"^\s*(ROOT\s+)?%?[\w.\-]+ = ")


@pytest.fixture(scope="module")
def loop_report():
    params, x = rm.transformer_args(4)
    return _profile(rm.transformer_loss_einsum, params, x), params, x


@pytest.fixture(scope="module")
def scan_report():
    params, x = rm.transformer_args(4)
    return _profile(rm.transformer_loss_scan, rm.stacked_params(params), x)


def test_python_loop_is_reported_as_unrolled_with_its_calling_line(loop_report):
    rep, params, x = loop_report
    (loop,) = rep.size.loops
    assert loop.function == "block"
    assert loop.calls == len(params)
    site = loop.call_site
    assert site is not None and site.file.endswith("real_models.py")
    # the line of the loop's body that calls block
    import inspect

    lines, first = inspect.getsourcelines(rm.transformer)
    calling = [first + i for i, text in enumerate(lines) if "block(p, x" in text]
    assert site.line in calling and site.function == "transformer"
    assert 0 < loop.instruction_share <= 1 and loop.equation_share > loop.instruction_share / 2


def test_scan_twin_gets_no_unrolled_loop_advice(scan_report):
    assert scan_report.phases.found
    assert scan_report.size.loops == []


def test_program_size_counts_every_equation_and_instruction(loop_report):
    rep, params, x = loop_report
    want_eq = _equations(jax.make_jaxpr(rm.transformer_loss_einsum)(params, x).jaxpr)
    assert rep.size.equations == want_eq
    assert sum(ln.equations for ln in rep.size.lines) == want_eq
    text = jax.jit(rm.transformer_loss_einsum).lower(params, x).compile().as_text()
    want_ins = sum(1 for line in text.splitlines() if _INSTRUCTION.match(line))
    assert rep.size.instructions == want_ins
    assert sum(ln.instructions for ln in rep.size.lines) == want_ins
    shares = [ln.instruction_share for ln in rep.size.lines]
    assert shares == sorted(shares, reverse=True) or rep.size.lines[0].instructions == max(
        ln.instructions for ln in rep.size.lines
    )
    assert abs(sum(shares) - 1) < 1e-9


def test_phases_account_for_the_whole_compile_wall(loop_report):
    rep, _, _ = loop_report
    p = rep.phases
    assert p.found and p.wall_s > 0
    assert p.wall_s <= rep.compile_s + 1e-3  # XLA's compile is inside the timed call
    named = sum(x.seconds for x in p.phases)
    assert named + p.unnamed_s == pytest.approx(p.wall_s, rel=1e-6)
    assert p.coverage == pytest.approx(named / p.wall_s, rel=1e-6)
    kinds = {x.kind for x in p.phases}
    assert HLO_PASS in kinds and BACKEND in kinds
    assert p.hlo_passes_s == pytest.approx(
        sum(x.seconds for x in p.phases if x.kind == HLO_PASS), rel=1e-6
    )
    assert [x.seconds for x in p.phases] == sorted((x.seconds for x in p.phases), reverse=True)


def test_a_second_profile_of_the_same_call_compiles_again(loop_report):
    """Neither jit's in-memory caches nor the earlier profile serve the compile."""
    rep, params, x = loop_report
    again = _profile(rm.transformer_loss_einsum, params, x)
    assert again.phases.found and again.phases.wall_s > 0
    assert [p.name for p in again.phases.phases if p.kind == HLO_PASS]


class Layer:
    """A layer object called in a Python loop: its ``__call__`` is scoped by class."""

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return jax.numpy.tanh(x @ self.w)


def stack_of_layers(ws, x):
    layers = [Layer(w) for w in ws]
    for layer in layers:
        x = layer(x)
    return x.sum()


def test_a_loop_over_layer_objects_is_named_by_their_class():
    import inspect

    ws = [jax.numpy.ones((16, 16)) * 0.1] * 6
    rep = _profile(stack_of_layers, ws, jax.numpy.ones((4, 16)))
    (loop,) = rep.size.loops
    assert loop.function == "Layer" and loop.calls == len(ws)
    lines, first = inspect.getsourcelines(stack_of_layers)
    calling = next(first + i for i, text in enumerate(lines) if "x = layer(x)" in text)
    assert loop.call_site is not None and loop.call_site.line == calling

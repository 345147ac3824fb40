"""Engine records displayed on their own (``workbench.inspect(...)``, ``d.inspection``,
``h.report``) save a bounded ``text/plain`` like the front doors' displays, and the line that
says what was left out names an attribute the displayed object really has: run in the next
cell, the example it gives returns all of JAX's text."""

from __future__ import annotations

import operator
import re

import jax
import jax.numpy as jnp
import pytest

from tests.real_models import hlo_program
from workbench.views._bounds import TEXT_MAX_LINES

# three equations a step (sin, mul, add): a jaxpr, and an HLO text, a little over the bound
STEPS = TEXT_MAX_LINES // 3 + 100
CHAIN = f"""
def chain(x):
    for i in range({STEPS}):
        x = jnp.sin(x) * 1.5 + i
    return x
"""


@pytest.fixture
def chain(shell):
    shell.run_cell(CHAIN, store_history=False)
    yield shell.user_ns["chain"]
    shell.user_ns.pop("chain", None)


def _follow_the_left_out_line(run, plain: str, count: int) -> str:
    """The whole text the left-out line promises: its ``_.attr`` example, run next on the
    cell's output (``Out[n]``: the session's ``_`` stops following outputs once any test
    assigns it, as IPython does for a user's own ``_``)."""
    last = plain.rsplit("\n", 1)[-1]
    example = re.search(r"e\.g\. _(\.[A-Za-z_]\w*)", last)
    assert example, last
    follow = run(f"Out[{count}]{example.group(1)}")
    assert follow.error is None, follow.message
    return follow.result.result


def _check_bounded_display(run, expr: str, whole: str, same=operator.eq) -> None:
    """``expr`` displayed in a cell saves the start of its text (longer than the bound), and
    the example of its left-out line, run next, returns all of it: ``whole``, as ``same``
    compares them."""
    assert whole.count("\n") + 1 > TEXT_MAX_LINES
    cell = run(f"import workbench\n{expr}")
    assert cell.error is None, cell.message
    plain = cell.bundle["text/plain"]
    followed = _follow_the_left_out_line(run, plain, cell.result.execution_count)
    assert followed.startswith(plain.rsplit("\n", 1)[0])
    assert same(followed, whole)


def test_a_displayed_inspection_points_at_an_attribute_holding_all_of_jaxs_jaxpr(run, chain):
    whole = str(jax.make_jaxpr(chain)(jnp.ones(4)).pretty_print(use_color=False))
    _check_bounded_display(run, "workbench.inspect(chain, jnp.ones(4))", whole)


def test_a_displayed_hlo_report_points_at_an_attribute_holding_all_of_xlas_text(run, chain):
    whole = jax.jit(chain).lower(jnp.ones(4)).compile().as_text()
    # XLA's text of the same program, its op_names naming the user's calls (a trace of its own)
    _check_bounded_display(
        run,
        "workbench.hlo(chain, jnp.ones(4)).report",
        whole,
        lambda shown, jaxs: hlo_program(shown) == hlo_program(jaxs),
    )

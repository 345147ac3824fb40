"""After each cell the session records which cell run defined each function the run left
in the namespace (``%%jaxprof`` keys lines on it when identical cells share a file).  That
pass runs after *every* cell, so it must cost only what the cell changed: a notebook with
thousands of names (a big model's parameters, a sweep's results) pays nothing per cell for
the values earlier cells bound, while what the cell did bind is still recorded.
"""

from __future__ import annotations

from workbench.engine.common.source import code_label


class _Spy:
    """A value that counts every look at it: attribute reads, ``isinstance`` checks
    (which read ``__class__``)."""

    looks = 0

    def __getattribute__(self, name: str):  # noqa: ANN204
        type(self).looks += 1
        return object.__getattribute__(self, name)


def test_a_cell_pays_only_for_the_names_it_bound(run, shell):
    _Spy.looks = 0
    shell.user_ns.update({f"cfp_spy{i}": _Spy() for i in range(300)})
    run("cfp_unrelated = 1").ok()  # the first pass over them looks at each
    before = _Spy.looks
    assert before >= 300
    for i in range(3):
        run(f"cfp_unrelated = {i + 2}").ok()
    assert _Spy.looks == before
    for k in [k for k in shell.user_ns if k.startswith("cfp_")]:
        del shell.user_ns[k]


def test_functions_a_cell_defines_are_still_recorded(run, shell):
    first = shell.execution_count
    run("def cfp_f(x):\n    return x + 1").ok()
    assert code_label(shell.user_ns["cfp_f"].__code__).number == first
    # re-bound by a later cell (same name, new code object): recorded for that cell
    again = shell.execution_count
    run("def cfp_f(x):\n    return x + 2\ncfp_j = jax.jit(cfp_f)").ok()
    assert code_label(shell.user_ns["cfp_f"].__code__).number == again != first
    # a jax.jit of a function bound to no name of its own: found through the jit
    run("cfp_k = jax.jit(lambda x: x * 3)").ok()
    assert code_label(shell.user_ns["cfp_k"].__wrapped__.__code__).number == again + 1
    # a name the cell did not touch keeps the label of the run that defined it
    run("def cfp_g(x):\n    return x * 2").ok()
    assert code_label(shell.user_ns["cfp_f"].__code__).number == again
    for k in ("cfp_f", "cfp_j", "cfp_k", "cfp_g"):
        del shell.user_ns[k]

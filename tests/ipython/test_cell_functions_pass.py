"""After each cell the session records which cell run defined each function the run left
in the namespace (``%%jaxprof`` keys lines on it when identical cells share a file).  That
pass runs after *every* cell, so it must cost only what the cell changed: a notebook with
thousands of names (a big model's parameters, a sweep's results) pays nothing per cell for
the values earlier cells bound, while what the cell did bind is still recorded.
"""

from __future__ import annotations

from workbench.engine.common.source import code_label


class _Spy:
    """A value that counts every look at it: attribute reads (``isinstance`` reads
    ``__class__``), and ``__wrapped__`` as a jit function's would be read."""

    looks = 0

    def __getattribute__(self, name: str):  # noqa: ANN204
        type(self).looks += 1
        return object.__getattribute__(self, name)


class _JitLike(_Spy):
    """Looks like a ``jax.jit`` function to the pass (its type's module is jaxlib's)."""

    __module__ = "jaxlib.spy"
    looks = 0

    @property
    def __wrapped__(self):  # noqa: ANN204
        return None


def test_a_cell_pays_only_for_the_names_it_bound(run, shell):
    _Spy.looks = _JitLike.looks = 0
    shell.user_ns["cfp_spies"] = [_Spy() for _ in range(3)]
    shell.user_ns.update({f"cfp_spy{i}": _Spy() for i in range(300)})
    shell.user_ns.update({f"cfp_jit{i}": _JitLike() for i in range(300)})
    run("cfp_unrelated = 1").ok()  # the first pass over them looks at each once
    before = _Spy.looks + _JitLike.looks
    for i in range(3):
        run(f"cfp_unrelated = {i + 2}").ok()
    assert _Spy.looks + _JitLike.looks == before
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
    # a name the cell did not touch keeps the label of the run that defined it
    run("def cfp_g(x):\n    return x * 2").ok()
    assert code_label(shell.user_ns["cfp_f"].__code__).number == again
    for k in ("cfp_f", "cfp_j", "cfp_g"):
        del shell.user_ns[k]

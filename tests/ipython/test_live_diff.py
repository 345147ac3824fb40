"""Live mode's fingerprints and diffs: re-running a ``%%jaxpr`` / ``%%hlo`` cell (same
cell id) yields what changed, aligned by source line and primitive.

A real ``InteractiveShell`` with the workbench loaded; the cell id JupyterLab sends with
each execute request is given by a stand-in kernel (``shell.kernel.get_parent()``), as
ipykernel provides it.  Expected lines and sizes are computed from the cells and JAX.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest

from workbench import schemas
from workbench.engine.live import diff_fingerprints, jaxpr_fingerprint
from workbench.engine.live.fingerprint import MAX_EXAMPLE_CHARS, MAX_EXAMPLES, MAX_GROUPS
from workbench.engine.stages import inspect
from workbench.ipython import sidepanel
from workbench.views import sidepanel_messages as pm


class _Kernel:
    """What prompt.current_cell_id reads: the execute request's metadata.cellId."""

    def __init__(self) -> None:
        self.cell_id: str | None = None

    def get_parent(self) -> dict[str, Any]:
        return {"metadata": {"cellId": self.cell_id}} if self.cell_id else {}


@pytest.fixture
def in_cell(shell, run, monkeypatch):
    kernel = _Kernel()
    monkeypatch.setattr(shell, "kernel", kernel, raising=False)
    hub = sidepanel.hub_for(shell)
    assert hub is not None

    def run_in(cell_id: str, code: str) -> list[dict[str, Any]]:
        """Run ``code`` as cell ``cell_id``; the live diffs it made."""
        kernel.cell_id = cell_id
        before = len(hub._diffs)
        had = hub._diffs.get(cell_id)
        c = run(code)
        assert c.error is None, c.message
        diff = hub._diffs.get(cell_id)
        out = [diff] if diff is not None and diff is not had else []
        assert len(hub._diffs) >= before
        for d in out:
            schemas.validate_message(pm.update(diffs=[d]))
        return out

    return run_in


def _line_of(code: str, text: str) -> int:
    return code.splitlines().index(text) + 1


def test_an_extra_op_is_added_at_its_line(in_cell):
    first = "%%jaxpr\ndef lv(x):\n    y = jnp.sin(x)\n    return y * 2\nlv(jnp.ones(3))"
    second = first.replace("    return y * 2", "    return jnp.cos(y) * 2")
    assert in_cell("live-1", first) == []  # a first run has nothing to compare with
    (diff,) = in_cell("live-1", second)
    assert diff["kind"] == "jaxpr" and diff["cell_id"] == "live-1"
    added = [(g["what"], g["line"]["line"]) for g in diff["added"]]
    assert added == [("cos", _line_of(second, "    return jnp.cos(y) * 2"))]
    assert diff["removed"] == []
    assert "cos" in diff["added"][0]["examples"][0]
    # the line named as the user reads it: the cell by its prompt number now
    line = _line_of(second, "    return jnp.cos(y) * 2")
    assert diff["added"][0]["label"] == f"cell [{diff['cell']}] line {line}"
    totals = {t["name"]: t for t in diff["totals"]}
    eq = totals["equations"]
    assert eq["after"] - eq["before"] == 1 and eq["unit"] == "count"


def test_a_removed_op_and_another_cell_id(in_cell):
    first = "%%jaxpr\ndef lv2(x):\n    return jnp.exp(x) + jnp.tanh(x)\nlv2(jnp.ones(3))"
    second = "%%jaxpr\ndef lv2(x):\n    return jnp.exp(x)\nlv2(jnp.ones(3))"
    in_cell("live-2", first)
    assert in_cell("live-other", second) == []  # another cell: no diff
    (diff,) = in_cell("live-2", second)
    assert [g["what"] for g in diff["removed"]] == ["tanh", "add"]
    assert diff["added"] == []
    # removed lines were compiled under the cell's previous number: named by its number now
    line = _line_of(first, "    return jnp.exp(x) + jnp.tanh(x)")
    assert {g["label"] for g in diff["removed"]} == {f"cell [{diff['cell']}] line {line}"}


def test_hlo_shape_change_shows_in_the_memory_totals(in_cell):
    code = "%%hlo\ndef lh(x):\n    return jnp.sin(x) * 3\nlh(jnp.ones({n}, jnp.float32))"
    in_cell("live-hlo", code.format(n=16))
    (diff,) = in_cell("live-hlo", code.format(n=64))
    assert diff["kind"] == "hlo"
    totals = {t["name"]: t for t in diff["totals"]}
    args = totals["memory: arguments"]
    assert (args["before"], args["after"]) == (16 * 4, 64 * 4)
    assert totals["compile time"]["unit"] == "s"
    # XLA's FLOP estimate is FLOPs (an SI prefix in the front end), not a plain count
    flops = totals["estimated flops"]
    assert flops["unit"] == "flops"
    for n, value in ((16, flops["before"]), (64, flops["after"])):
        cost = jax.jit(lambda x: jnp.sin(x) * 3).lower(jnp.ones(n, jnp.float32)).compile()
        cost = cost.cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        assert value == pytest.approx(float(cost["flops"])), (n, value, cost)
    # same program, other shape: the same instructions at the same lines
    assert diff["added"] == [] and diff["removed"] == []


def test_fingerprints_stay_small():
    lines = [f"    x = jnp.sin(x) * {i}.0" for i in range(300)]
    src = "def big(x):\n" + "\n".join(lines) + "\n    return x\n"
    ns: dict[str, Any] = {"jnp": jnp}
    exec(compile(src, "<big>", "exec"), ns)
    fp = jaxpr_fingerprint(inspect(ns["big"], jnp.ones(3)))
    assert len(fp.groups) == MAX_GROUPS
    assert fp.truncated == 2 * 300 - MAX_GROUPS  # sin and mul on each of 300 lines
    assert all(len(g.examples) <= MAX_EXAMPLES for g in fp.groups.values())
    assert all(len(e) <= MAX_EXAMPLE_CHARS for g in fp.groups.values() for e in g.examples)
    totals = {t.name: t.value for t in fp.totals}
    assert totals["equations"] == 600  # every equation is counted, kept or not
    d = diff_fingerprints(fp, fp)
    assert d.added == [] and d.removed == [] and d.unchanged


def test_lines_that_only_moved_or_changed_function_are_not_a_change(in_cell):
    first = "%%jaxpr\ndef lvm(x):\n    y = jnp.sin(x)\n    return y * 2\nlvm(jnp.ones(3))"
    # a comment line pushes every line down one, and the function is renamed: the same
    # equations come from the same source text
    second = (
        "%%jaxpr\n# a note\ndef lvm_renamed(x):\n    y = jnp.sin(x)\n    return y * 2\n"
        "lvm_renamed(jnp.ones(3))"
    )
    in_cell("live-moved", first)
    (diff,) = in_cell("live-moved", second)
    assert diff["added"] == [] and diff["removed"] == []
    # a real change in the moved cell is still one: cos added, at its new line and text
    third = second.replace("    return y * 2", "    return jnp.cos(y) * 2")
    (diff,) = in_cell("live-moved", third)
    assert [(g["what"], g["line"]["line"], g["line"]["text"]) for g in diff["added"]] == [
        ("cos", _line_of(third, "    return jnp.cos(y) * 2"), "return jnp.cos(y) * 2")
    ]
    assert diff["removed"] == []

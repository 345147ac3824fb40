"""``cells`` in the jaxpr and hlo payloads: each source file that is a notebook cell, with
its execution count and JupyterLab cell id, for ordinary cells and magic cells alike.

The shell is a real ``InteractiveShell``; the kernel is a stand-in whose current request
carries ``metadata.cellId`` as JupyterLab's execute requests do.
"""

from __future__ import annotations

import pytest

from workbench import schemas
from workbench.views.hlo import HLO_MIME
from workbench.views.jaxpr import JAXPR_MIME


class FakeKernel:
    """ipykernel's ``get_parent()``: the execute request being run."""

    def __init__(self) -> None:
        self.cell_id: str | None = None

    def get_parent(self) -> dict:
        return {
            "header": {"msg_type": "execute_request"},
            "metadata": {"cellId": self.cell_id} if self.cell_id else {},
        }


@pytest.fixture
def kernel(shell, monkeypatch) -> FakeKernel:
    k = FakeKernel()
    monkeypatch.setattr(shell, "kernel", k, raising=False)
    return k


def _run_as(run, kernel: FakeKernel, cell_id: str | None, code: str):
    kernel.cell_id = cell_id
    r = run(code)
    assert r.error is None, r.stdout + r.stderr
    return r


DEF_CELL = """\
def _cells_block(x):
    h = jnp.sin(x) * 2.0
    return jnp.sum(h ** 2)
"""


@pytest.mark.parametrize("magic,mime", [("jaxpr", JAXPR_MIME), ("hlo", HLO_MIME)])
def test_ordinary_and_magic_cells_are_named_with_number_and_id(run, kernel, magic, mime):
    defined = _run_as(run, kernel, "cell-def", DEF_CELL)
    shown = _run_as(
        run,
        kernel,
        "cell-show",
        f"%%{magic}\n_cells_outer = lambda v: _cells_block(v) + jnp.cos(v).sum()\n"
        "_cells_outer(jnp.ones(3))",
    )
    payload = schemas.unpack(shown.bundle[mime])
    cells = payload["cells"]
    assert {c["cell_id"] for c in cells.values()} == {"cell-def", "cell-show"}, cells
    numbers = {c["cell_id"]: c["number"] for c in cells.values()}  # one number per cell
    assert len(numbers) == len({(c["cell_id"], c["number"]) for c in cells.values()})
    assert numbers["cell-def"] == defined.result.execution_count
    assert numbers["cell-show"] == shown.result.execution_count
    magic_file = f"<workbench-cell-{shown.result.execution_count}>"
    assert cells[magic_file] == {"number": shown.result.execution_count, "cell_id": "cell-show"}
    # only files the payload's sources name are listed
    body = repr({k: v for k, v in payload.items() if k != "cells"})
    assert all(f"'file': {file!r}" in body for file in cells)


def test_without_a_front_end_id_the_number_still_links(run, kernel):
    _run_as(run, kernel, None, DEF_CELL.replace("_cells_block", "_cells_plain"))
    shown = _run_as(run, kernel, None, "%%jaxpr\n_cells_plain(jnp.ones(3))")
    cells = shown.bundle[JAXPR_MIME]["cells"]
    assert cells and all(
        c["cell_id"] is None and isinstance(c["number"], int) for c in cells.values()
    )


def test_files_that_are_not_cells_are_left_out():
    import jax.numpy as jnp

    import workbench

    d = workbench.jaxpr(lambda x: jnp.sin(x), jnp.ones(2))  # this test file: not a cell
    assert d._repr_mimebundle_()[JAXPR_MIME]["cells"] == {}


def _id_hooks(shell) -> int:
    """The pre_run_cell hooks that record cell ids: the session's (it records the id
    first, then tells the rest of the workbench that a cell started)."""
    from workbench.ipython.session import Session

    return sum(
        isinstance(getattr(cb, "__self__", None), Session)
        for cb in shell.events.callbacks["pre_run_cell"]
    )


def test_the_cell_id_hook_is_registered_once_and_removed_on_unload(shell):
    import workbench

    assert _id_hooks(shell) == 1
    shell.run_line_magic("reload_ext", "workbench")
    assert _id_hooks(shell) == 1
    workbench.load_ipython_extension(shell)  # loaded again without an unload (a config + a call)
    assert _id_hooks(shell) == 1
    try:
        shell.run_line_magic("unload_ext", "workbench")
        assert _id_hooks(shell) == 0
    finally:
        shell.run_line_magic("load_ext", "workbench")
    assert _id_hooks(shell) == 1


def test_the_cell_that_loads_the_extension_keeps_its_id(run, kernel):
    """``%load_ext workbench`` and a function in one cell: that cell's pre_run_cell came
    before the hook existed, yet its functions link to it by id."""
    _run_as(run, kernel, "cell-unload", "%unload_ext workbench")
    loaded = _run_as(
        run,
        kernel,
        "cell-load",
        "%load_ext workbench\ndef _cells_loaded(x):\n    return jnp.sin(x) * 3.0\n",
    )
    shown = _run_as(run, kernel, "cell-use", "%%jaxpr\n_cells_loaded(jnp.ones(3))")
    cells = schemas.unpack(shown.bundle[JAXPR_MIME])["cells"]
    assert {"number": loaded.result.execution_count, "cell_id": "cell-load"} in cells.values(), (
        cells
    )


def test_reload_ext_keeps_the_ids_of_earlier_cells(run, kernel):
    defined = _run_as(
        run, kernel, "cell-before", "def _cells_before(x):\n    return jnp.cos(x) * 3.0\n"
    )
    _run_as(run, kernel, "cell-reload", "%reload_ext workbench")
    shown = _run_as(run, kernel, "cell-after", "%%jaxpr\n_cells_before(jnp.ones(3))")
    cells = schemas.unpack(shown.bundle[JAXPR_MIME])["cells"]
    assert {"number": defined.result.execution_count, "cell_id": "cell-before"} in cells.values(), (
        cells
    )

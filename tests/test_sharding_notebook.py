"""notebooks/sharding.ipynb runs top to bottom in a fresh kernel (nbclient)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.notebook
NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "sharding.ipynb"
MIME = "application/vnd.jax-workbench.sharding+json"


def test_sharding_notebook_executes(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [(c, o) for c in code for o in c.outputs if o.output_type == "error"]
    assert len(errors) == 1  # only the cell tagged raises-exception
    cell, err = errors[0]
    assert "raises-exception" in cell.metadata.get("tags", [])
    assert err["ename"] == "CellError" and len(err["traceback"]) <= 4
    assert any("holds no jax.Array" in t for t in err["traceback"])
    rich = [o["data"][MIME] for c in code for o in c.outputs
            if o.output_type == "execute_result" and MIME in o.get("data", {})]
    assert len(rich) == 3
    assert [len(r["layouts"]) for r in rich] == [1, 3, 1]
    assert rich[0]["layouts"][0]["spec_text"] == "P('data', 'model')"
    assert len(rich[2]["layouts"][0]["shape"]) == 3
    printed = "".join(o.get("text", "") for c in code for o in c.outputs
                      if o.output_type == "stream")
    assert "all-reduce over 'model'" in printed
    app_cell = next(c for c in code if "mesh_explorer" in c.source)
    assert app_cell.outputs and not [o for o in app_cell.outputs if o.output_type == "error"]

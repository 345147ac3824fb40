"""The tour notebook runs top to bottom in a fresh kernel (nbclient), with no error output."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


@pytest.mark.parametrize("name", ["tour.ipynb"])
def test_notebook_executes(name, tmp_path):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    env_flags = os.environ["XLA_FLAGS"]  # conftest: 8 fake devices, inherited by the kernel
    assert "device_count=8" in env_flags
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [(c.source.splitlines()[0], o) for c in nb.cells if c.cell_type == "code"
              for o in c.get("outputs", []) if o.output_type == "error"]
    # only the cell tagged raises-exception may fail, and it fails with a short message
    assert len(errors) == 1
    first_line, err = errors[0]
    assert err["ename"] == "CellError" and len(err["traceback"]) <= 6
    assert any("TracerBoolConversionError" in t for t in err["traceback"])
    rich = [o for o in outputs if o.output_type == "execute_result"
            and "application/vnd.jax-workbench.jaxpr+json" in o.get("data", {})]
    assert len(rich) >= 6
    assert all("text/html" in o["data"] for o in rich)

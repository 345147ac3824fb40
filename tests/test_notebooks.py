"""The tour notebook runs top to bottom in a fresh kernel (nbclient), with no error output."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.notebook
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


def test_cache_notebook_executes(tmp_path):
    """notebooks/cache.ipynb: a compile line beside each compiling cell, quiet cached cells."""
    nb = nbformat.read(NOTEBOOKS / "cache.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    cell_mime = "application/vnd.jax-workbench.cache-cell+json"

    def lines(source_start: str) -> list[dict]:
        (c,) = [c for c in code if c.source.startswith(source_start)]
        return [o["data"][cell_mime] for o in c.outputs if cell_mime in o.get("data", {})]

    def reasons(source_start: str) -> list[str]:
        return [r["kind"] for ln in lines(source_start) for g in ln["functions"]
                for r in g["reasons"]]

    (first,) = lines("@jax.jit\ndef loss")
    assert first["functions"][0]["function"] == "jit(loss)"
    assert first["functions"][0]["compiles"] == 1
    assert lines("for _ in range(3)") == []  # cached calls stay quiet
    assert reasons("loss(w, jnp.ones((3, 4)))") == ["shape"]
    assert reasons("@jax.jit\ndef scale") == ["weak_type"]
    assert reasons("from functools import partial") == ["static_arg"]
    assert reasons("def make_step") == ["closure"]
    (guarded,) = [c for c in code if c.source.startswith("with workbench.no_recompiles")]
    assert "no recompiles" in "".join(o.get("text", "") for o in guarded.outputs)
    (caught,) = [c for c in code if c.source.startswith("try:\n    with workbench.no_rec")]
    message = "".join(o.get("text", "") for o in caught.outputs)
    assert "1 recompile inside no_recompiles()" in message
    assert "jit(loss)" in message and "x changed" in message and "-> f32[7,4]" in message
    (table,) = [c for c in code if c.source == "%jaxcache"]
    data = table.outputs[0]["data"]["application/vnd.jax-workbench.cache+json"]
    assert {"jit(loss)", "jit(scale)", "jit(power)"} <= {f["function"] for f in data["functions"]}
    (persist,) = [c for c in code if c.source == "%jaxcache persist"]
    status = persist.outputs[0]["data"]["application/vnd.jax-workbench.cache-persistent+json"]
    assert status["min_compile_time_s"] == 0 and status["written"] >= 1


def test_benchmarking_notebook_executes(tmp_path):
    """notebooks/benchmarking.ipynb: live widgets end as static results, each shown once."""
    nb = nbformat.read(NOTEBOOKS / "benchmarking.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    bench_mime = "application/vnd.jax-workbench.bench+json"
    widget_mime = "application/vnd.jupyter.widget-view+json"
    assert not [o for c in code for o in c.outputs if widget_mime in o.get("data", {})]

    def record(source_start: str) -> dict:
        (c,) = [c for c in code if c.source.startswith(source_start)]
        recs = [o["data"][bench_mime] for o in c.outputs if bench_mime in o.get("data", {})]
        assert len(recs) == 1, f"{source_start!r} shown {len(recs)} times"
        assert all("text/html" in o["data"] for o in c.outputs if bench_mime in o["data"])
        return recs[0]

    line = record("@jax.jit\ndef softplus_sum")
    assert line["measurements"][0]["first_call"]["source"] == "cache"
    assert line["measurements"][0]["first_call"]["compiles"] >= 1
    cell = record("%%jaxbench")
    assert "dict of 2 leaves" in cell["measurements"][0]["output"]
    assert record("r = workbench.bench")["measurements"][0]["first_call"]["compiles"] == 0
    cmp = record("def mlp")
    assert cmp["variants"] == ["jit", "eager"] and cmp["comparisons"][0]["ratio"]["pairs"] >= 7
    sweep = record("matmul = jax.jit")
    assert sweep["sweep_values"] == [32, 64, 128, 256] and sweep["fits"][0]["points"] == 4
    roof = record("workbench.bench(matmul, jnp.ones")["measurements"][0]["roofline"]
    assert roof["peak_source"] == "override" and roof["flops_fraction"] > 0
    bad = record("def forgets_to_return")["measurements"]
    assert bad[0]["stats"] is not None and bad[1]["error"]["kind"] == "OutputError"

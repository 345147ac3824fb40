"""The static summaries: what a ``text/html`` part shows where scripts do not run (GitHub's
preview, nbviewer, an untrusted notebook).  Each is the headline numbers, the first rows of
each table and a line saying the interactive view needs a notebook front end; no script,
no stylesheet, no picture, and bounded whatever the program (the interactive view, drawn by
the extension or the standalone runtime, has everything).

Expected values come from each report's own numbers."""

from __future__ import annotations

import html
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from workbench.engine.memory.owners import live_memory, namespace_roots
from workbench.engine.memory.program import build_program_memory
from workbench.engine.stages import Inspection
from workbench.views._format import fmt_bytes, fmt_seconds
from workbench.views._html import (
    SUMMARY_CELL_CHARS,
    SUMMARY_MAX_BYTES,
    SUMMARY_ROWS,
    cut,
    esc,
    summary_table,
)
from workbench.views._standalone import NEEDS_FRONT_END, embedded_data, static_part
from workbench.views.memory import KIND_WORDS, live_display, program_display


def _summary(display) -> str:
    """The static part of a display's text/html, checked for what every summary must be."""
    html = display._repr_mimebundle_()["text/html"]
    summary = static_part(html)
    assert NEEDS_FRONT_END in summary
    assert len(summary.encode()) <= SUMMARY_MAX_BYTES
    for tag in ("<script", "<style", "<svg", "<details"):
        assert tag not in summary, tag
    assert embedded_data(html) is not None  # the interactive view's data rides along
    return summary


def _rows_of(summary: str, table: int) -> list[list[str]]:
    """The text of each body row of the summary's ``table``-th table."""
    body = re.findall(r"<tbody>(.*?)</tbody>", summary)[table]
    return [
        [html.unescape(re.sub("<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def test_summary_table_shows_its_first_rows_cut_and_says_how_many_more():
    long = "x" * (SUMMARY_CELL_CHARS * 3)
    rows = [[str(i), long] for i in range(SUMMARY_ROWS * 40)]
    html = summary_table(["n", "name"], rows, what="things")
    shown = _rows_of(html, 0)
    assert [r[0] for r in shown] == [str(i) for i in range(SUMMARY_ROWS)]
    assert all(len(r[1]) == SUMMARY_CELL_CHARS and r[1].endswith("…") for r in shown)
    assert f"... {len(rows) - SUMMARY_ROWS} more things" in html
    # a smaller limit is kept; a larger one is the summary's
    assert len(_rows_of(summary_table(["n"], rows, limit=2), 0)) == 2
    assert len(_rows_of(summary_table(["n"], rows, limit=10**6), 0)) == SUMMARY_ROWS
    # total: rows the caller did not pass are counted too
    assert "... 95 more" in summary_table(["n"], [["a"]] * 5, total=100)
    assert "more" not in summary_table(["n"], [["a"]] * 3)
    assert "&lt;b&gt;" in summary_table(["n"], [["<b>"]])


def test_live_memory_summary_is_the_totals_and_the_largest_owners():
    base = jnp.arange(16.0)
    long_name = "owner_" + "n" * (SUMMARY_CELL_CHARS * 2)
    # sizes apart (device_put: no compile per shape)
    names = {f"v{i}": jax.device_put(np.zeros(16 * (i + 1))) for i in range(SUMMARY_ROWS * 3)}
    names[long_name] = jax.device_put(np.zeros(1_000_000))  # among the process's largest
    names["many"] = [base + i for i in range(100)]
    rep = live_memory(namespace_roots(names))
    summary = _summary(live_display(rep))
    assert f"{rep.total_arrays} arrays, {esc(fmt_bytes(rep.total_bytes))}" in summary
    shown = _rows_of(summary, 0)
    assert [r[0] for r in shown] == [fmt_bytes(g.nbytes) for g in rep.groups[:SUMMARY_ROWS]]
    for row, g in zip(shown, rep.groups, strict=False):
        assert row[2] == KIND_WORDS.get(g.kind, g.kind) and row[3] == str(len(g.arrays))
    # every owner's text within a cell, the long name cut; the rest counted
    assert all(len(r[1]) <= SUMMARY_CELL_CHARS for r in shown)
    top = [g.owner for g in rep.groups[:SUMMARY_ROWS]]
    assert shown[top.index(long_name)][1] == long_name[: SUMMARY_CELL_CHARS - 1] + "…"
    assert f"... {len(rep.groups) - SUMMARY_ROWS} more owners" in summary
    names.clear()


@pytest.fixture(scope="module")
def program_memory():
    """A 6-layer MLP's gradient: more buffers live at its peak than a summary shows."""

    def loss(ws, x):
        for w in ws:
            x = jnp.tanh(x @ w)
        return (x**2).sum()

    ws = [jnp.ones((128, 128)) * 0.01 for _ in range(6)]
    return build_program_memory(Inspection(jax.grad(loss), (ws, jnp.ones((32, 128))), {}))


def test_program_memory_summary_is_the_peak_and_the_largest_buffers(program_memory):
    rep = program_memory
    summary = _summary(program_display(rep))
    figures, buffers = _rows_of(summary, 0), _rows_of(summary, 1)
    assert figures[0][:2] == ["live-range peak", fmt_bytes(rep.peak_bytes)]
    assert figures[0][2] == f"step {rep.peak_step} of {rep.steps}"
    assert [r[0] for r in buffers] == [fmt_bytes(b.bytes) for b in rep.buffers[:SUMMARY_ROWS]]
    assert [r[1] for r in buffers] == [b.shape for b in rep.buffers[:SUMMARY_ROWS]]
    assert len(rep.buffers) > SUMMARY_ROWS
    assert f"... {len(rep.buffers) - SUMMARY_ROWS} more buffers" in summary
    assert "donate_argnums" in summary


def test_cache_summary_is_the_most_expensive_functions(shell):
    import workbench
    from workbench.views import cache as cache_view

    shell.run_cell(
        "import jax, jax.numpy as jnp\n"
        + "".join(
            f"_sum_f{i} = jax.jit(lambda v: v * {i} + 1)\n_sum_f{i}(jnp.ones({i + 1}))\n"
            for i in range(SUMMARY_ROWS + 4)
        ),
        store_history=True,
    )
    snap = workbench.cache()
    summary = _summary(cache_view.cache_display(snap))
    assert f"<b>{len(snap.functions)} jitted functions</b>" in summary
    assert f"{sum(f.compiles for f in snap.functions)} compiles" in summary
    shown = _rows_of(summary, 0)
    assert [r[3] for r in shown] == [str(f.compiles) for f in snap.functions[:SUMMARY_ROWS]]
    assert [r[0].removesuffix(" (JAX)") for r in shown] == [
        cut(f.function) for f in snap.functions[:SUMMARY_ROWS]
    ]
    assert f"... {len(snap.functions) - SUMMARY_ROWS} more functions" in summary


#: a user string that is markup, for the summaries below: it must show as text
MARKUP = '<img src=x onerror="window.__xss=1"></td></table><script>1</script>'
#: a short one, for names that must fit a summary's cells whole
TAG = "<q>&"


def _large_sweep(name: str):
    """A sweep of hundreds of points, each with warnings and the variant ``name`` + its
    index: one real benchmark's measurement copied (no more compiles)."""
    import dataclasses

    from tests.programs import small_sweep

    b = small_sweep().record
    many = [
        dataclasses.replace(b.measurements[0], variant=f"{name}{i}", sampling_compiles=i + 1)
        for i in range(SUMMARY_ROWS * 40)
    ]
    return dataclasses.replace(b, measurements=many, comparisons=[], fits=[])


def test_bench_summary_of_a_large_sweep_keeps_its_first_measurements_notes():
    from workbench.views.bench import NOTE_LINES, _detail_lines, bench_display

    big = _large_sweep(TAG)
    many = big.measurements
    part = bench_display(big)._repr_mimebundle_()["text/html"]
    summary = static_part(part)
    assert len(summary.encode()) <= SUMMARY_MAX_BYTES
    assert "<q>" not in summary and esc(f"{TAG}0") in summary
    # the table's first rows; the notes of the first measurements, the rest counted
    assert f"... {len(many) - SUMMARY_ROWS} more measurements" in summary
    per = len(_detail_lines(many[0], big.config.number))
    noted = min(SUMMARY_ROWS, NOTE_LINES // per)
    for m in many[:noted]:
        assert esc(m.warnings[0]) in summary
    assert esc(many[noted].warnings[0]) not in summary
    warned = sum(len(m.warnings) for m in many[noted:])
    assert f"notes of {len(many) - noted} more measurements" in summary
    assert f"{warned} warnings" in summary


def _ledger_snap(index: int, functions: int, processes: int, name: str = TAG) -> dict:
    """A process's snapshot (as the cluster agent sends it) whose every function compiled
    with a signature of its own: each diverges.  Its host and function names start with
    ``name``."""
    return {
        "process_index": index,
        "process_count": processes,
        "host": f"{name}host{index}",
        "pid": 100 + index,
        "devices": [f"cpu:{index}"],
        "rss_bytes": 1000,
        "live_array_bytes": 10,
        "compiles": [
            {
                "function": f"{name}f{k}",
                "signature": f"f32[{index + 1}]",
                "statics": "",
                "shardings": "{replicated}",
                "fingerprint": f"{index:02x}",
                "compile_s": 0.01,
                "seq": k,
            }
            for k in range(functions)
        ],
        "compiles_total": functions,
        "step": {"source": "%jaxbench", "label": name, "seconds": 0.1 * (index + 1)},
        "profile_step": None,
    }


def test_cluster_summary_is_the_first_rows_of_each_table():
    from workbench.engine.cluster.compare import compare
    from workbench.views.cluster import cluster_display

    n_proc, n_fn = SUMMARY_ROWS + 3, SUMMARY_ROWS * 25
    rep = compare([_ledger_snap(i, n_fn, n_proc) for i in range(n_proc)])
    assert len(rep.rows) == n_fn and all(r.diverged for r in rep.rows)
    summary = _summary(cluster_display(rep))
    assert "<q>" not in summary
    procs, ledger = _rows_of(summary, 0), _rows_of(summary, 1)
    assert [r[0] for r in procs] == [str(p.index) for p in rep.processes[:SUMMARY_ROWS]]
    assert [r[2] for r in procs] == [cut(p.host) for p in rep.processes[:SUMMARY_ROWS]]
    assert f"... {n_proc - SUMMARY_ROWS} more processes" in summary
    assert [r[0] for r in ledger] == [cut("! " + r.function) for r in rep.rows[:SUMMARY_ROWS]]
    assert f"... {n_fn - SUMMARY_ROWS} more functions" in summary
    steps = {s.process: s for s in rep.steps}
    assert [r[6].split(" ")[0] for r in procs] == [
        fmt_seconds(steps[p.index].seconds).split(" ")[0] for p in rep.processes[:SUMMARY_ROWS]
    ]
    assert summary.count("<li") == min(SUMMARY_ROWS, len(rep.divergences))
    if len(rep.divergences) > SUMMARY_ROWS:
        assert f"... {len(rep.divergences) - SUMMARY_ROWS} more divergences" in summary


def test_summaries_of_long_hostile_names_stay_within_the_bound():
    """Every cell of every table at its longest, and markup: the summary that would be too
    long gives way to the text's first lines (:func:`bounded_summary`)."""
    from workbench.engine.cluster.compare import compare
    from workbench.views.bench import bench_display
    from workbench.views.cluster import cluster_display

    name = MARKUP * 3
    n = SUMMARY_ROWS + 3
    for display in (
        bench_display(_large_sweep(name)),
        cluster_display(compare([_ledger_snap(i, SUMMARY_ROWS * 25, n, name) for i in range(n)])),
    ):
        summary = static_part(display._repr_mimebundle_()["text/html"])
        assert len(summary.encode()) <= SUMMARY_MAX_BYTES
        assert "<img" not in summary and "<script>1" not in summary
        assert esc(MARKUP) in summary


def test_a_summary_over_the_bound_is_the_texts_first_lines():
    from workbench.views._standalone import standalone_html

    text = "\n".join(f"{MARKUP} line {i}" for i in range(5000))
    part = standalone_html("<div>" + "x" * (SUMMARY_MAX_BYTES * 2) + "</div>", "m", {}, text)
    summary = static_part(part)
    assert len(summary.encode()) <= SUMMARY_MAX_BYTES
    assert "x" * 100 not in summary and "<img" not in summary
    shown = html.unescape(re.search(r"<pre[^>]*>(.*)</pre>", summary, re.S).group(1))
    lines = shown.splitlines()
    # whole lines, then what fits of the next, then "…"
    full = text.splitlines()
    assert lines[-1] == "…" and lines[:-2] == full[: len(lines) - 2]
    assert full[len(lines) - 2].startswith(lines[-2]) and len(lines) > 10
    # within the bound it is the view's own
    assert "<div>small</div>" in static_part(standalone_html("<div>small</div>", "m", {}, text))

"""The memory views: ``%jaxmem``'s text, HTML and payload stay bounded with thousands of
arrays and owners (the record keeps all of them), and ``%%jaxmem``'s text says what each
figure counts."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from workbench.engine.memory.owners import live_memory, namespace_roots
from workbench.engine.memory.program import build_program_memory
from workbench.engine.stages import Inspection
from workbench.views._bounds import TEXT_MAX_BYTES
from workbench.views.memory import (
    ANALYSIS_MEANS,
    MAX_ARRAYS,
    MAX_GROUPS,
    MEMORY_MIME,
    MEMORY_PROGRAM_MIME,
    PEAK_MEANS,
    live_display,
    program_display,
    sparkline,
)


def test_many_owners_and_arrays_give_a_bounded_output_and_a_whole_record():
    base = jnp.arange(4.0)
    names = {f"v{i}": base + i for i in range(MAX_GROUPS + 30)}
    names["many"] = [base * i for i in range(MAX_ARRAYS + 40)]
    rep = live_memory(namespace_roots(names))
    mine = [g for g in rep.groups if g.owner in names]
    assert len(mine) == len(names)
    many = rep.group("attribute", "many")
    assert many is not None and len(many.arrays) == MAX_ARRAYS + 40
    assert many.nbytes == sum(a.nbytes for a in names["many"])
    bundle = live_display(rep)._repr_mimebundle_()
    payload = bundle[MEMORY_MIME]
    assert len(payload["groups"]) == MAX_GROUPS
    assert payload["total_groups"] == len(rep.groups)
    assert all(len(g["arrays"]) <= MAX_ARRAYS for g in payload["groups"])
    shown = next(g for g in payload["groups"] if g["owner"] == "many")
    assert shown["count"] == MAX_ARRAYS + 40
    assert len(bundle["text/plain"].encode()) <= TEXT_MAX_BYTES + 200
    assert "more owners" in bundle["text/plain"]
    assert "text/html" in bundle
    names.clear()


def test_the_cpu_backend_is_said_to_report_no_allocator_figures():
    rep = live_memory(namespace_roots({"x": jnp.ones(3)}))
    if jax.default_backend() == "cpu":
        assert rep.allocator == []
        assert "no allocator statistics" in rep.allocator_note
        assert "no allocator statistics" in live_display(rep).text


def test_the_program_view_says_what_each_figure_counts():
    rep = build_program_memory(
        Inspection(
            jax.grad(lambda w, x: jnp.tanh(x @ w).sum()),
            (jnp.ones((64, 64)), jnp.ones((8, 64))),
            {},
        )
    )
    d = program_display(rep)
    text = d.text
    assert PEAK_MEANS in text and ANALYSIS_MEANS in text
    assert f"({rep.peak_bytes} bytes)" in text
    assert "donate_argnums=(0,)" in text
    payload = d._repr_mimebundle_()[MEMORY_PROGRAM_MIME]
    assert payload["total_buffers"] == len(rep.buffers)
    assert payload["analysis_bytes"] == rep.analysis_bytes


def test_the_sparkline_peaks_where_the_values_do():
    line = sparkline([0, 1, 5, 2], width=4)
    assert len(line) == 4 and line[2] == "█" and line[0] == "▁"
    assert len(sparkline(list(range(1000)), width=60)) == 60

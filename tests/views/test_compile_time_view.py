"""The views of ``%%jaxprof --compile``'s record: bounded text, small HTML, the payload.

One real report (the 4-block transformer's forward pass, its Python loop unrolled),
drawn with different options.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

import tests.real_models as rm
from workbench.engine.compile_time.phases import CompilePhases
from workbench.engine.compile_time.run import compile_time_profile
from workbench.engine.stages import Inspection
from workbench.views import compile_time as view
from workbench.views._html import SUMMARY_MAX_BYTES, SUMMARY_ROWS, esc
from workbench.views._standalone import NEEDS_FRONT_END, embedded_data, static_part
from workbench.views.compile_time import COMPILE_TIME_MIME, compile_time_display


@pytest.fixture(scope="module")
def report():
    params, x = rm.transformer_args(4)
    return compile_time_profile(
        Inspection(rm.transformer_loss_einsum, (params, x), {}, scoped=True)
    )


def test_each_table_shows_top_rows_and_says_how_many_were_left_out(report):
    top = 3
    text = compile_time_display(report, top=top).text
    lines = text.splitlines()
    p = report.phases
    assert f"... {len(p.phases) - top} more passes and phases" in text
    assert f"... {len(report.size.lines) - top} more lines" in text
    # the phases table: its header and exactly `top` rows before the "more" line
    head = next(i for i, ln in enumerate(lines) if ln.strip().startswith("pass or phase"))
    assert lines[head + top + 1].strip().startswith("...")
    for row in p.phases[:top]:
        assert row.name in text
    assert p.phases[top].name not in lines[head + 1 : head + top + 1]


def test_text_names_the_coverage_and_the_loop_in_words(report):
    text = compile_time_display(report).text
    pct = f"{report.phases.coverage * 100:.1f}%"
    assert f"named passes and phases cover {pct} of XLA's compile wall time" in text
    (loop,) = report.size.loops
    sentence = view.loop_advice(loop)
    assert f"advice: {sentence}" in text
    assert sentence.startswith(f"real_models.py:{loop.call_site.line} (transformer) runs 4 times")
    assert "lax.scan" in sentence


def test_payload_keeps_its_first_rows_and_the_totals(report, monkeypatch):
    monkeypatch.setattr(view, "PAYLOAD_ROWS", 2)
    payload = compile_time_display(report)._repr_mimebundle_()[COMPILE_TIME_MIME]
    assert len(payload["xla"]["phases"]) == 2
    assert payload["xla"]["phases_total"] == len(report.phases.phases)
    assert payload["size"]["lines_total"] == len(report.size.lines)
    assert [r["name"] for r in payload["xla"]["phases"]] == [
        r.name for r in report.phases.phases[:2]
    ]
    assert payload["advice"] == [view.loop_advice(lp) for lp in report.size.loops]


def test_html_is_a_bounded_static_summary_of_the_report(report):
    """Headline, coverage, the first rows of each table, the advice; no stylesheet, no bars
    (the view the standalone runtime draws from the embedded data has them)."""
    html = compile_time_display(report)._repr_mimebundle_()["text/html"]
    summary = static_part(html)
    assert len(summary.encode()) <= SUMMARY_MAX_BYTES and NEEDS_FRONT_END in summary
    assert "<style" not in summary and "<script" not in summary
    assert esc(view.headline(report)) in summary and esc(view.coverage_line(report)) in summary
    p, s = report.phases, report.size
    shown = min(SUMMARY_ROWS, view.DEFAULT_TOP)
    for r in p.phases[:shown]:
        assert f">{esc(r.name)}</td>" in summary
    assert f"... {len(p.phases) - shown} more passes and phases" in summary
    for r in s.lines[:shown]:
        assert f">{esc(view.where(r.source))}</td>" in summary
    assert "lax.scan" in summary
    assert embedded_data(html) is not None


def test_html_tables_cut_at_top_say_how_many_rows_were_left_out(report):
    top = 1
    html = compile_time_display(report, top=top)._repr_mimebundle_()["text/html"]
    p, s = report.phases, report.size
    assert f"... {len(p.phases) - top} more passes and phases" in html
    assert f"... {len(s.lines) - top} more lines" in html
    if len(p.workers) > top:
        assert f"... {len(p.workers) - top} more events" in html


def test_markup_in_names_is_escaped_in_the_html(report):
    evil = '<img src=x onerror="alert(1)">'
    first = dataclasses.replace(report.phases.phases[0], name=evil)
    phases = dataclasses.replace(report.phases, phases=[first])
    marked = dataclasses.replace(report, label=evil, phases=phases, notes=[evil])
    html = compile_time_display(marked)._repr_mimebundle_()["text/html"]
    assert "<img" not in html and "&lt;img" in html


def test_a_compile_whose_phases_were_not_found_says_so(report):
    missing = dataclasses.replace(report, phases=CompilePhases(found=False), notes=["why"])
    bundle = compile_time_display(missing)._repr_mimebundle_()
    assert "XLA's passes and phases: not found in the trace" in bundle["text/plain"]
    assert "note: why" in bundle["text/plain"]
    assert bundle[COMPILE_TIME_MIME]["xla"]["found"] is False
    json.dumps(bundle[COMPILE_TIME_MIME])

"""Views: big programs stay bounded, the compare view, source labels, degraded display."""

from __future__ import annotations

import json

import jax.numpy as jnp
import pytest

import workbench
from tests.programs import count_equations, sin_chain
from workbench import schemas
from workbench.views import _html
from workbench.views._bounds import TEXT_MAX_LINES, bound_text
from workbench.views._standalone import embedded_data
from workbench.views.jaxpr import JAXPR_MIME, jaxpr_display, jaxpr_html


@pytest.mark.slow  # a 12,000-equation program
def test_big_program_summary_stays_small_and_its_payload_whole():
    ins = workbench.inspect(sin_chain(6000), jnp.ones(4))  # a sin and an add per link
    n_eqns = count_equations(ins.jaxpr)  # JAX's own jaxpr, counted apart from the model
    assert n_eqns >= 12000 and ins.model.total_equations == n_eqns
    html = jaxpr_html(ins)
    assert f"{n_eqns} equations" in html and len(html) < 4_000  # a summary, not the rows
    # the JSON (in the MIME bundle and in text/html for the runtime) and .text still carry
    # the whole program; text/plain its first lines
    d = jaxpr_display([ins])
    bundle = d._repr_mimebundle_()
    assert "packed" in bundle[JAXPR_MIME] and not bundle[JAXPR_MIME]["truncated"]
    data = schemas.unpack(bundle[JAXPR_MIME])
    assert len(data["jaxpr"]["eqns"]) == len(ins.jaxpr.eqns)
    assert embedded_data(bundle["text/html"]) == {
        JAXPR_MIME: data,
        "text/plain": bundle["text/plain"],
    }
    assert d.text == ins.jaxpr_text and d.text.count(" = sin ") == 6000
    assert bundle["text/plain"].count("\n") == TEXT_MAX_LINES  # the kept lines + one more


def test_source_labels():
    assert _html.source_label("<workbench-cell-7>", 3) == ("cell [7] line 3", True)
    assert _html.source_label("<workbench-cell-7-2>", 3) == ("cell [7] line 3", True)
    assert _html.source_label("/tmp/ipykernel_12/3456.py", 4) == ("cell line 4", True)
    assert _html.source_label("/home/u/model.py", 9) == ("model.py:9", False)


def test_display_falls_back_to_text_when_asked():
    d = workbench.jaxpr(lambda x: x + 1, 1.0, text=True)
    assert list(d._repr_mimebundle_()) == ["text/plain"]
    assert repr(d).startswith("{ lambda")


def test_inspection_displays_with_extension_loaded(shell):
    from IPython.core.formatters import DisplayFormatter  # noqa: F401

    ins = workbench.inspect(lambda x: x * 3, 1.0)
    fmt, _ = shell.display_formatter.format(ins)
    assert JAXPR_MIME in fmt and "mul" in fmt["text/plain"]


# -- one display protocol ------------------------------------------------------------------
def _boom(*args, **kwargs):
    raise AssertionError("built although only text/plain was asked for")


def test_text_only_request_builds_only_text(monkeypatch, shell):
    """A 3,000-equation jaxpr asked for text/plain builds no HTML and no JSON."""
    import workbench.views.jaxpr as jv
    from workbench.engine.jaxpr.model import JaxprModel

    d = workbench.jaxpr(sin_chain(1500), jnp.ones(4))
    assert d.inspection.model.total_equations == 3000
    monkeypatch.setattr(jv, "jaxpr_html", _boom)
    monkeypatch.setattr(JaxprModel, "to_dict", _boom)
    only = d._repr_mimebundle_(include={"text/plain"})
    assert only == {"text/plain": bound_text(d.inspection.jaxpr_text)}
    assert list(d._repr_mimebundle_(exclude={"text/html", JAXPR_MIME})) == ["text/plain"]
    fmt, _ = shell.display_formatter.format(d, include={"text/plain"})  # IPython's own path
    assert list(fmt) == ["text/plain"]
    assert repr(d) == only["text/plain"] and d.text == d.inspection.jaxpr_text
    with pytest.raises(AssertionError, match="built although"):
        d._repr_mimebundle_()  # the spies do fire when HTML is wanted
    monkeypatch.undo()
    json_only = d._repr_mimebundle_(include={JAXPR_MIME})
    assert list(json_only) == [JAXPR_MIME] and json_only[JAXPR_MIME]["stats"]["equations"] == 3000


def test_hlo_html_is_built_only_for_rich_output(monkeypatch):
    import workbench.views.hlo as hv

    d = workbench.hlo(lambda x: jnp.tanh(x) * 2, jnp.ones(4))
    monkeypatch.setattr(hv, "hlo_html", _boom)
    assert d._repr_mimebundle_(include={"text/plain"}) == {"text/plain": d.report.text}


def test_results_are_the_engine_records_without_subclassing():
    from workbench.engine.bench.result import Benchmark
    from workbench.engine.hlo.report import HloReport
    from workbench.engine.sharding.layout import Layout
    from workbench.engine.stages import Inspection
    from workbench.views.display import Display

    r = workbench.bench(lambda v: v + 1, jnp.ones(8), budget=0.05, progress=False)
    assert type(r) is Display and isinstance(r.record, Benchmark)
    assert not isinstance(r, Benchmark)  # holds the record, is not a subclass of it
    assert r.measurements is r.record.measurements and r.ok and r.median > 0
    assert json.loads(r.to_json()) == json.loads(r.record.to_json())
    assert len(r.to_dataframe()) == 1
    assert r.compare_to(r.record).median == pytest.approx(1.0)
    assert "measurements" in dir(r)
    h = workbench.hlo(lambda x: x * 2, jnp.ones(2))
    assert type(h) is Display and isinstance(h.report, HloReport) and h.report is h.record
    s = workbench.sharding(jnp.ones(8))
    assert isinstance(s.layouts[0], Layout)
    j = workbench.jaxpr(lambda x: x * 2, 1.0)
    assert isinstance(j.inspection, Inspection) and j.inspection.label == j.label
    c = workbench.jaxpr(lambda x: x * 2, 1.0, transforms="grad", compare=True)
    assert [i.label for i in c.stages][-1].startswith("grad")
    with pytest.raises(AttributeError):
        r.no_such_attribute  # noqa: B018
    assert not hasattr(r, "_repr_html_")  # private names are never forwarded to the record


def test_a_plain_engine_record_displays_like_its_front_door(shell):
    """After ``%load_ext workbench`` a record shown on its own (``h.report``,
    ``Benchmark.from_json(saved)``, ``r.record``, ``workbench.inspect(...)``) gives the
    bundle its front door's display gives: one display protocol, not a dataclass repr."""
    from workbench.engine.bench.result import Benchmark

    fmt = shell.display_formatter.format
    r = workbench.bench(lambda v: v + 1, jnp.ones(8), number=2, repeat=3, progress=False)
    h = workbench.hlo(lambda x: jnp.tanh(x) * 2, jnp.ones(4))
    j = workbench.jaxpr(lambda x: x * 2, 1.0)
    for front, record in (
        (r, r.record),
        (r, Benchmark.from_json(r.to_json())),
        (h, h.report),
        (j, j.inspection),
    ):
        want, _ = fmt(front)
        got, _ = fmt(record)
        assert set(got) == set(want), type(record).__name__
        if record is front.record:
            assert got["text/plain"] == want["text/plain"]
        mime = front.view.mime
        assert json.loads(json.dumps(got[mime])).keys() == want[mime].keys()


def test_the_views_know_nothing_of_ipython_or_jax():
    """Views import no JAX and no IPython (the execution-count logic lives in the front
    doors); checked on the source, every import statement at any depth."""
    import ast
    from pathlib import Path

    import workbench.views as views

    for path in Path(views.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert name.split(".")[0] not in ("jax", "jaxlib", "IPython", "ipywidgets"), (
                    f"{path.name} imports {name}"
                )
        assert "execution_count" not in path.read_text(), path.name


# -- Python twins force the magics' stages and raise their short errors ---------------------
def _branchy(x):
    if x > 0:  # a Python `if` on a traced value
        return x
    return -x


_IF_LINE = _branchy.__code__.co_firstlineno + 1


def _assert_short(exc: Exception, line: int) -> None:
    from workbench.views.errors import WorkbenchError

    assert isinstance(exc, WorkbenchError)
    text = str(exc)
    assert "Traceback" not in text and len(text.splitlines()) <= 6, text
    assert exc.report.where is not None and exc.report.where.line == line, text
    assert f"test_views.py:{line}" in text


def test_jaxpr_twin_raises_the_short_error_at_the_users_line():
    from workbench.views.errors import WorkbenchError

    with pytest.raises(WorkbenchError) as info:
        workbench.jaxpr(_branchy, 1.0)
    _assert_short(info.value, _IF_LINE)
    assert info.value.report.kind == "TracerBoolConversionError"
    assert info.value.report.phase == "trace"


def test_hlo_twin_raises_the_short_error_at_the_users_line():
    from workbench.views.errors import WorkbenchError

    with pytest.raises(WorkbenchError) as info:
        workbench.hlo(_branchy, 1.0)
    _assert_short(info.value, _IF_LINE)
    assert info.value.report.kind == "TracerBoolConversionError"


def test_twin_and_magic_give_the_same_report(run):
    from workbench.ipython.cell import CellError
    from workbench.views.errors import WorkbenchError

    with pytest.raises(WorkbenchError) as info:
        workbench.jaxpr(_branchy, 1.0)
    run("from tests.views.test_views import _branchy")
    r = run("%jaxpr _branchy(1.0)")
    assert isinstance(r.error, CellError) and isinstance(r.error, WorkbenchError)
    assert (r.error.report.kind, r.error.report.summary, r.error.report.where.line) == (
        info.value.report.kind,
        info.value.report.summary,
        info.value.report.where.line,
    )


def test_a_failure_inside_jax_names_the_calling_line():
    from workbench.views.errors import WorkbenchError

    with pytest.raises(WorkbenchError) as info:
        workbench.jaxpr(lambda x: x * 2, jnp.ones(3), transforms="grad")  # non-scalar grad
    where = info.value.report.where
    assert where is not None and where.file == __file__ and "workbench.jaxpr(" in where.text


def test_bench_twin_reports_the_failure_in_its_result():
    """Like %jaxbench: a variant that cannot be traced is a short error in the result (the
    other variants still run), naming the user's line, and the result still displays."""
    import jax

    r = workbench.bench(jax.jit(_branchy), 1.0, budget=0.05, progress=False)
    err = r.measurements[0].error
    assert err is not None and err.kind == "TracerBoolConversionError"
    assert err.where is not None and err.where.line == _IF_LINE
    assert "TracerBoolConversionError" in repr(r) and f"test_views.py:{_IF_LINE}" in repr(r)
    assert "TracerBoolConversionError" in r._repr_mimebundle_()["text/html"]


def test_sharding_twin_raises_the_short_error_at_the_calling_line():
    import jax

    from workbench.views.errors import WorkbenchError

    def peek(x):
        workbench.sharding(x)  # a tracer has no layout
        return x

    with pytest.raises(WorkbenchError) as info:
        jax.jit(peek)(jnp.ones(3))
    _assert_short(info.value, peek.__code__.co_firstlineno + 1)
    assert "DynamicJaxprTracer" in str(info.value)


# -- one formatting module ---------------------------------------------------------------
def test_seconds_like_timeit():
    from workbench.views._format import fmt_seconds

    assert fmt_seconds(1.234e-3) == "1.23 ms"
    assert fmt_seconds(9.1e-6) == "9.1 µs"
    assert fmt_seconds(2.5) == "2.5 s"
    assert fmt_seconds(4e-8) == "40 ns"
    # rounded before the unit is picked: never "1e+03 µs"
    assert fmt_seconds(999.9999e-6) == "1 ms"
    assert fmt_seconds(999.96e-9) == "1 µs"
    assert fmt_seconds(0.99951) == "1 s"
    assert fmt_seconds(999.4e-6) == "999 µs"
    assert fmt_seconds(0.41, 2) == "410 ms" and fmt_seconds(12.34, 2) == "12 s"
    assert fmt_seconds(0) == "0 s"
    assert fmt_seconds(None) == fmt_seconds(float("nan")) == "n/a"


def test_numbers_in_a_given_unit_bytes_and_counts():
    from workbench.views._format import fmt_bytes, fmt_count, fmt_in_unit, fmt_percent, sig

    assert fmt_in_unit(0.0203, "ms", 2) == "20" and fmt_in_unit(0.34, "s", 2) == "0.34"
    assert sig(340.2, 2) == "340" and sig(0.02345, 2) == "0.023" and sig(1.0, 3) == "1"
    assert fmt_bytes(512) == "512 B" and fmt_bytes(1536) == "1.5 KiB"
    assert fmt_bytes(3 << 30) == "3.0 GiB" and fmt_bytes(None) == "n/a"
    assert fmt_count(176.0, "FLOP") == "176 FLOP" and fmt_count(1.234e9, "FLOP/s") == "1.23 GFLOP/s"
    assert fmt_count(float("inf"), "B/s") == "n/a"
    assert fmt_percent(0.0123) == "1.2%" and fmt_percent(None) == "n/a"


def test_compile_line_gives_the_stages_in_the_totals_unit():
    from workbench.engine.cache.records import CellSummary, FunctionGroup
    from workbench.views.cache import cell_text

    g = FunctionGroup(
        function="jit(loss)",
        origin="user",
        compiles=1,
        traces=1,
        lowers=1,
        trace_s=0.02,
        lower_s=0.05,
        compile_s=0.34,
    )
    assert (
        cell_text(CellSummary("3", [g], None))
        == "jit(loss): compiled 1x in 410 ms (trace 20 · lower 50 · XLA 340)"
    )
    g.compile_s = 1.93
    assert (
        cell_text(CellSummary("3", [g], None))
        == "jit(loss): compiled 1x in 2 s (trace 0.02 · lower 0.05 · XLA 1.9)"
    )


def test_compile_line_words_each_reason_by_the_stage_its_call_reached():
    """Reasons from a trace-only record (``jax.make_jaxpr``) say "retraced" even when the
    cell also compiled the function; one reason seen first in a trace and then in a
    compile is a recompile, shown once."""
    from workbench.engine.cache.queries import cell_summary
    from workbench.engine.cache.reasons import MissReason
    from workbench.engine.cache.records import CompileRecord
    from workbench.views.cache import cell_html, cell_text

    def rec(kind: str, before: str, after: str) -> CompileRecord:
        return CompileRecord(
            "jit(f)",
            trace_s=0.001,
            lower_s=0.002 if kind != "trace" else None,
            compile_s=0.003 if kind == "compile" else None,
            kind=kind,
            key="k",
            reasons=[MissReason("shape", "x", before, after)],
        )

    summary = cell_summary(
        [
            rec("compile", "f32[1]", "f32[2]"),
            rec("trace", "f32[2]", "f32[3]"),
            rec("trace", "f32[2]", "f32[4]"),
            rec("compile", "f32[2]", "f32[4]"),
        ],
        "5",
    )
    (g,) = summary.groups
    assert g.reasons_from == ["compile", "trace", "compile"]
    assert g.to_dict()["reasons_from"] == ["compile", "trace", "compile"]
    assert cell_text(summary).endswith(
        " · recompiled: x changed f32[1] -> f32[2]; x changed f32[2] -> f32[4]"
        " · retraced: x changed f32[2] -> f32[3]"
    )
    assert "retraced: x changed f32[2] -&gt; f32[3]" in cell_html(summary)
    from workbench.views.cache import CACHE_CELL_MIME, cell_line_display

    schemas.validate(
        CACHE_CELL_MIME, cell_line_display(summary)._repr_mimebundle_()[CACHE_CELL_MIME]
    )

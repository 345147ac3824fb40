"""What an output saves of a big text: ``text/plain`` (and the HTML's code) stop at the
bound of ``workbench/views/_bounds.py``, one line says what was left out, and ``.text`` of
the returned object keeps all of JAX's text; a small program's output is unchanged."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import workbench
from tests.programs import sin_chain
from tests.real_models import hlo_program
from workbench import schemas
from workbench.views._bounds import (
    TEXT_MAX_BYTES,
    TEXT_MAX_LINES,
    bound_text,
    bounded,
)
from workbench.views.hlo import HLO_MIME
from workbench.views.jaxpr import JAXPR_MIME


def _jax_jaxpr_text(f, *args) -> str:
    return str(jax.make_jaxpr(f)(*args).pretty_print(use_color=False))


def test_a_text_within_the_bound_is_unchanged():
    text = "\n".join(f"line {i}" for i in range(TEXT_MAX_LINES))
    assert bound_text(text) == text
    assert bound_text(text + "\n") == text + "\n"
    assert bound_text("") == ""


def test_the_line_limit_keeps_the_first_lines_and_says_how_many_are_left_out():
    lines = [f"line {i}" for i in range(TEXT_MAX_LINES + 500)]
    text = "\n".join(lines)
    shown, size = bounded(text)
    *kept, last = shown.split("\n")
    assert kept == lines[:TEXT_MAX_LINES]
    left_bytes = len(text.encode()) - len("\n".join(kept).encode())
    assert size.lines == len(lines) and size.shown_lines == TEXT_MAX_LINES and size.cut
    assert f"500 more lines ({left_bytes / 1e3:.0f} KB)" in last
    assert f"of {len(lines):,} lines" in last and ".text" in last


def test_the_count_of_lines_left_out_is_exact_when_the_cut_follows_an_empty_line():
    # HLO text separates its computations with empty lines: the cut often falls right
    # after one, and the kept empty line is a line shown, not one left out
    comps = [f"%comp.{i} {{\n  ROOT %x = f32[] constant({i})\n}}\n" for i in range(1200)]
    # header lines so that line TEXT_MAX_LINES is the empty line after a computation
    pad = (TEXT_MAX_LINES - 4) % 4 or 4  # the header's lines with its empty line
    header = ["HloModule m"] + [f"// note {i}" for i in range(pad - 2)]
    text = "\n".join(header) + "\n\n" + "\n".join(comps)
    lines = text.split("\n")[:-1]  # the text ends with a newline: no line after it
    assert lines[TEXT_MAX_LINES - 1] == ""  # the last line kept is an empty one
    shown, size = bounded(text)
    *kept, last = shown.split("\n")
    assert kept == lines[:TEXT_MAX_LINES]
    assert (size.lines, size.shown_lines) == (len(lines), TEXT_MAX_LINES)
    assert last.startswith(f"[… {len(lines) - TEXT_MAX_LINES:,} more lines")
    assert f"of {len(lines):,} lines" in last


def test_the_byte_limit_cuts_long_lines_at_a_line_end():
    line = "é" * 9_000  # 18,000 bytes of UTF-8: the bytes limit comes long before the lines
    text = "\n".join([line] * 40)
    shown, size = bounded(text)
    *kept, last = shown.split("\n")
    fit = TEXT_MAX_BYTES // (len(line.encode()) + 1)
    assert kept == [line] * fit and size.shown_bytes <= TEXT_MAX_BYTES
    assert f"{40 - fit} more lines" in last
    # one line over the whole limit: cut inside it, still valid UTF-8
    huge, size = bounded("é" * TEXT_MAX_BYTES)
    assert huge.split("\n")[0] == "é" * (TEXT_MAX_BYTES // 2) and size.cut


def test_a_small_programs_outputs_are_unchanged():
    f = sin_chain(3)
    d = workbench.jaxpr(f, jnp.ones(4))
    bundle = d._repr_mimebundle_()
    assert bundle["text/plain"] == d.text == _jax_jaxpr_text(f, jnp.ones(4)) == repr(d)
    size = bundle[JAXPR_MIME]["text_size"]
    assert size["shown_lines"] == size["lines"] == d.text.count("\n") + 1
    assert "Showing the first" not in bundle["text/html"]

    h = workbench.hlo(f, jnp.ones(4))
    bundle = h._repr_mimebundle_()
    text = h.report.text
    assert bundle["text/plain"] == h.text == text
    # JAX's text of the program, its op_names naming the calls (a trace of its own)
    assert hlo_program(text) == hlo_program(jax.jit(f).lower(jnp.ones(4)).compile().as_text())
    payload = bundle[HLO_MIME]
    assert payload["text_size"]["shown_bytes"] == payload["text_size"]["bytes"] == len(text)
    # nothing left out of the payload either: every computation keeps its instructions
    comps = schemas.unpack(payload)["module"]["computations"]
    assert all(len(c["instructions"]) == c["size"] for c in comps)


def test_a_long_jaxpr_keeps_its_first_lines_and_dot_text_has_all_of_jaxs_text():
    f = sin_chain(2000)  # 4,000 equations
    d = workbench.jaxpr(f, jnp.ones(4))
    whole = _jax_jaxpr_text(f, jnp.ones(4))
    assert d.text == whole and d.inspection.jaxpr_text == whole
    bundle = d._repr_mimebundle_()
    *kept, last = bundle["text/plain"].split("\n")
    assert kept == whole.split("\n")[:TEXT_MAX_LINES]
    left = whole.count("\n") + 1 - TEXT_MAX_LINES
    assert last.startswith(f"[… {left:,} more lines") and ".text" in last
    size = bundle[JAXPR_MIME]["text_size"]
    assert (size["lines"], size["shown_lines"]) == (whole.count("\n") + 1, TEXT_MAX_LINES)
    assert repr(d) == bundle["text/plain"]


def test_the_jaxpr_summary_stays_small_whatever_the_program():
    """The static summary is headline numbers, not rows: its size does not follow the
    program (the equations travel in the payload, packed)."""
    sizes = []
    for links in (20, 2000):
        html = workbench.jaxpr(sin_chain(links), jnp.ones(4))._repr_mimebundle_()["text/html"]
        static = html[: html.index("<script")]
        sizes.append(len(static.encode()))
    assert max(sizes) < 4_000 and abs(sizes[0] - sizes[1]) < 200, sizes


def test_a_program_too_big_for_the_json_is_not_said_to_be_in_it(monkeypatch):
    from workbench.views import jaxpr as jaxpr_view

    f = sin_chain(2000)
    d = workbench.jaxpr(f, jnp.ones(4))
    total = d.inspection.model.total_equations
    html = d._repr_mimebundle_(include={"text/html"})["text/html"]
    assert "<code>.text</code>" not in html  # 4,000 equations: the JSON has them
    monkeypatch.setattr(jaxpr_view, "MAX_JSON_EQUATIONS", total - 1)
    bundle = workbench.jaxpr(f, jnp.ones(4))._repr_mimebundle_()
    payload = schemas.unpack(bundle[JAXPR_MIME])
    assert payload["truncated"] and payload["jaxpr"] is None
    assert "<code>.text</code> of the returned object" in bundle["text/html"]

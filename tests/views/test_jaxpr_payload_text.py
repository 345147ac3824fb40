"""The jaxpr payload's rows read as JAX prints them: the extension draws equations from the
JSON, so a literal or a wrapped rule must not read differently there than in JAX's text."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp

import workbench
from workbench.schemas import unpack


def _payload(fn, *args):
    d = workbench.jaxpr(fn, *args)
    bundle = d._repr_mimebundle_()
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle
    return unpack(bundle["application/vnd.jax-workbench.jaxpr+json"]), bundle["text/plain"]


def _literals(model):
    out = []
    for e in model["eqns"]:
        out += [a[2] for a in e["invars"] if len(a) == 3]
        for sub in e.get("subjaxprs", []):
            out += _literals(sub["jaxpr"])
    return out


def test_literals_are_the_text_jax_prints():
    def f(x, i):
        return x * 1.1 + jnp.float32(0.3), jax.lax.dynamic_slice(x, (i,), (2,))

    payload, text = _payload(f, jnp.ones(4), 1)
    printed = set(re.findall(r" (-?[\d.e+-]+):[a-z]+\d*\[\]", text))
    lits = _literals(payload["jaxpr"])
    assert lits, "the program has literals"
    for lit in lits:
        assert lit in printed, (lit, printed)
        assert "Typed" not in lit


def test_a_custom_jvp_rule_is_named_as_jax_names_it():
    @jax.custom_jvp
    def cj(x):
        return jnp.sin(x)

    cj.defjvp(lambda p, t: (cj(p[0]), jnp.cos(p[0]) * t[0]))
    payload, text = _payload(lambda x: cj(x) * 2.0, jnp.ones(3))
    eqn = next(e for e in payload["jaxpr"]["eqns"] if e["primitive"] == "custom_jvp_call")
    assert "jvp=<lambda>" in text
    assert eqn["params"]["jvp_jaxpr_fun"] == "<lambda>"
    assert all("\n" not in v for v in eqn["params"].values())


def test_a_rule_is_named_by_jax_debug_info_func_name():
    """JAX's printer writes ``debug_info.func_name`` (the source info's first word); a rule
    whose ``__name__`` holds a space reads the same in the payload as in JAX's text."""

    @jax.custom_jvp
    def cj(x):
        return jnp.sin(x)

    def rule(p, t):
        return cj(p[0]), jnp.cos(p[0]) * t[0]

    rule.__name__ = "rule v2"
    cj.defjvp(rule)
    payload, text = _payload(lambda x: cj(x) * 2.0, jnp.ones(3))
    eqn = next(e for e in payload["jaxpr"]["eqns"] if e["primitive"] == "custom_jvp_call")
    printed = re.search(r"jvp=(\S+)", text)
    assert printed is not None, text
    assert eqn["params"]["jvp_jaxpr_fun"] == printed.group(1)


class _Lazy:
    """A param object whose attribute lookup fails with something else than
    AttributeError (a lazy proxy, say): naming it must not break the view."""

    def __getattr__(self, name):
        raise RuntimeError(f"not loaded: {name}")

    def __str__(self):
        return "lazy-param"


def test_a_param_whose_attributes_raise_still_reads():
    from jax.extend.core import Primitive

    p = Primitive("wb_lazy")
    p.def_abstract_eval(lambda x, **_: x)
    payload, _ = _payload(lambda x: p.bind(x, thing=_Lazy()) * 2.0, jnp.ones(3))
    eqn = next(e for e in payload["jaxpr"]["eqns"] if e["primitive"] == "wb_lazy")
    assert eqn["params"]["thing"] == "lazy-param"


def _softmax_line(x):
    return jax.nn.softmax(x * 2.0)  # the text a search finds


def test_the_payload_carries_each_source_line_as_the_user_wrote_it():
    """``lines`` has the text of every line an equation names (what the search matches: the
    equations of ``jax.nn.softmax(...)`` never say ``softmax``), once per line."""
    import inspect as pyinspect

    p, _ = _payload(_softmax_line, jnp.ones((2, 3)))
    lines, first = pyinspect.getsourcelines(_softmax_line)
    line = first + 1
    files = {
        eq["source"]["file"]
        for eq in p["jaxpr"]["eqns"]
        if eq.get("source") and eq["source"]["line"] == line
    }
    assert len(files) == 1, files
    (file,) = files
    assert p["lines"][file] == {str(line): lines[1].strip()}
    assert "softmax" in p["lines"][file][str(line)]
    assert not any("softmax" in eq["primitive"] for eq in p["jaxpr"]["eqns"])


def test_the_source_lines_stay_within_their_bound_keeping_the_first_rows_lines(
    tmp_path, monkeypatch
):
    """A program of many distinct long lines (generated code) does not save its source again
    in ``lines``: they serialise to at most ``MAX_LINES_BYTES``, and the lines kept are the
    first the view lists (a nested jit's lines right after the line that calls it)."""
    import importlib
    import json

    from workbench.views import jaxpr as jaxpr_view

    comment = "# a generated step with a long comment " + "." * 120
    n = 2 * jaxpr_view.MAX_LINES_BYTES // len(comment)  # about twice what fits
    src = [
        "import jax, jax.numpy as jnp",
        "@jax.jit",
        "def inner(x):",
        f"    return jnp.cos(x) * 3.0  {comment}",
        "def many(x):",
        f"    x = inner(x)  {comment}",
        *(f"    x = jnp.sin(x) + {i}.5  {comment}" for i in range(n)),
        "    return x",
    ]
    (tmp_path / "generated_steps.py").write_text("\n".join(src) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("generated_steps")
    p, _ = _payload(mod.many, jnp.ones(3))
    (file,) = p["lines"]
    kept = p["lines"][file]
    size = len(json.dumps(p["lines"], ensure_ascii=False).encode())
    assert size <= jaxpr_view.MAX_LINES_BYTES
    # the bound is used up to within one line's entry, not far below it
    assert jaxpr_view.MAX_LINES_BYTES - size < len(src[-2]) + 20, size
    # the call's line, the nested jit's line, then the first steps in order, each as written
    first_step = src.index(f"    x = jnp.sin(x) + 0.5  {comment}") + 1
    order = [6, 4, *range(first_step, first_step + len(kept) - 2)]
    assert list(map(int, kept)) == order
    assert 2 < len(kept) < n
    for line, text in kept.items():
        whole = src[int(line) - 1].strip()
        cut = whole if len(whole) <= jaxpr_view.MAX_LINE_CHARS else whole[:199] + "…"
        assert text == cut, (line, text)
    # a payload too big to carry its equations has no rows to search: no lines either
    monkeypatch.setattr(jaxpr_view, "MAX_JSON_EQUATIONS", 10)
    p, _ = _payload(mod.many, jnp.ones(3))
    assert p["truncated"] and p["jaxpr"] is None and "lines" not in p

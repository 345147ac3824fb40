"""What a user types into the mesh explorer, parsed and checked with short messages.

Text, not Python: a spec such as ``('data', 'model'), None`` is tokenised here and
never evaluated, so the explorer (a web page) cannot run code.  Axis names may be
any string (quote them if they hold commas or spaces); the views escape them.
"""

from __future__ import annotations

import math
import re

from workbench.engine.common.devices import restart_hint
from workbench.engine.sharding.layout import ShardingInputError

AXIS_TYPES = ("Auto", "Explicit", "Manual")
_TOKEN = re.compile(r"\s*(?:(?P<q>'[^']*'|\"[^\"]*\")|(?P<p>[(),\[\]])|(?P<w>[^\s(),\[\]'\"]+))")


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise ShardingInputError(f"cannot read {text[pos:]!r} in {text!r}")
        pos = m.end()
        if m.group("q") is not None:
            out.append(("name", m.group("q")[1:-1]))
        elif m.group("p") is not None:
            out.append(("punct", m.group("p")))
        else:
            out.append(("word", m.group("w")))
    return out


def parse_spec(text: str) -> list[list[str]]:
    """``"('x','y'), None"`` / ``"P(x, None)"`` / ``"x y"`` -> ``[['x', 'y'], []]``.

    ``None``, ``-`` and ``_`` mean "not split"; an empty text is a fully replicated spec.
    """
    toks = _tokens(text)
    if toks and toks[0] in (("word", "P"), ("word", "PartitionSpec")):
        if len(toks) < 3 or toks[1] != ("punct", "(") or toks[-1] != ("punct", ")"):
            raise ShardingInputError(f"cannot read the PartitionSpec {text!r}")
        toks = toks[2:-1]
    entries: list[list[str]] = []
    i = 0
    expect_entry = True
    while i < len(toks):
        kind, val = toks[i]
        if kind == "punct" and val == ",":
            if expect_entry:
                raise ShardingInputError(f"an empty entry in the spec {text!r}; write None")
            expect_entry = True
            i += 1
            continue
        if not expect_entry:  # "x y" (space separated) is also accepted
            expect_entry = True
        if kind == "punct" and val in "([":
            close = ")" if val == "(" else "]"
            group: list[str] = []
            i += 1
            while i < len(toks) and toks[i] != ("punct", close):
                k, v = toks[i]
                if k == "punct" and v == ",":
                    i += 1
                    continue
                if k == "punct":
                    raise ShardingInputError(f"nested brackets in the spec {text!r}")
                if not (k == "word" and v in ("None", "-", "_")):
                    group.append(v)
                i += 1
            if i >= len(toks):
                raise ShardingInputError(f"an unclosed {val!r} in the spec {text!r}")
            entries.append(group)
            i += 1
        elif kind == "punct":
            raise ShardingInputError(f"unexpected {val!r} in the spec {text!r}")
        else:
            entries.append([] if kind == "word" and val in ("None", "-", "_") else [val])
            i += 1
        expect_entry = False
    return entries


def parse_ints(text: str, what: str, minimum: int = 1) -> list[int]:
    """``"2, 4"`` or ``"2x4"`` or ``"(2, 4)"`` -> ``[2, 4]``."""
    parts = [p for p in re.split(r"[\s,x×()\[\]]+", text.strip()) if p]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise ShardingInputError(
            f"the {what} must be whole numbers such as 2, 4; got {text!r}"
        ) from None
    bad = [v for v in values if v < minimum]
    if bad:
        raise ShardingInputError(
            f"the {what} must be at least {minimum} in every dimension; got {text!r}"
        )
    return values


def parse_names(text: str) -> list[str]:
    """Axis names, comma separated (quotes allowed for names with commas or spaces)."""
    names = [v for k, v in _tokens(text) if k != "punct"]
    return names


def parse_axis_types(text: str, n: int) -> list[str]:
    words = [v for k, v in _tokens(text) if k != "punct"] if text.strip() else []
    if not words:
        return ["Auto"] * n
    if len(words) == 1 and n > 1:
        words = words * n
    by_lower = {t.lower(): t for t in AXIS_TYPES}
    out = []
    for w in words:
        t = by_lower.get(w.lower())
        if t is None:
            raise ShardingInputError(f"unknown axis type {w!r}; use Auto, Explicit or Manual")
        out.append(t)
    if len(out) != n:
        raise ShardingInputError(f"{len(out)} axis types for {n} mesh axes")
    return out


def check_mesh(shape: list[int], names: list[str], device_count: int) -> None:
    """A mesh must use exactly the devices present, one name per axis, no repeats."""
    if not shape:
        raise ShardingInputError("the mesh needs at least one axis, e.g. 8 or 2, 4")
    if len(names) != len(shape):
        raise ShardingInputError(
            f"{len(names)} axis name(s) for a mesh of {len(shape)} axes {tuple(shape)}"
        )
    dup = sorted({a for a in names if names.count(a) > 1})
    if dup:
        raise ShardingInputError(f"axis name {dup[0]!r} appears twice in the mesh")
    if any(not a for a in names):
        raise ShardingInputError("an axis name is empty")
    if len(shape) > device_count:
        raise ShardingInputError(
            f"{len(shape)} mesh axes but only {device_count} device(s): "
            f"a mesh cannot have more axes than devices"
        )
    n = math.prod(shape)
    if n != device_count:
        hint = f". {restart_hint(n)}" if n > device_count else ""
        raise ShardingInputError(
            f"the mesh {' x '.join(map(str, shape))} needs {n} devices, but JAX has "
            f"{device_count}; the product of the mesh shape must be {device_count}" + hint
        )


__all__ = [
    "AXIS_TYPES",
    "check_mesh",
    "parse_axis_types",
    "parse_ints",
    "parse_names",
    "parse_spec",
]

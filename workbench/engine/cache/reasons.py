"""Why a jitted function was traced again: cache-miss reasons as data.

JAX keys its tracing cache on the function object, the abstract type of every
argument leaf (shape, dtype, weak type, sharding), the pytree structure and the
static arguments.  When a call misses, the cache tracker compares the new call's
:class:`Signature` with the ones this function object compiled before and reports
the differences of the closest one (the fewest differences), as
:class:`MissReason` records: kind, argument path, before and after.

``jax_explain_cache_misses`` gives the same facts as log text; when our own
signature is not available (a JAX that moved its internals), :func:`parse_jax_explanation`
turns that text into the same records.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.engine._jax_compat import ArgType


@dataclass(frozen=True)
class Signature:
    """What JAX's tracing cache keys on, for one call, as plain data (no user values).

    ``statics`` hold each static argument's (possibly truncated) repr for display;
    ``static_tokens`` its identity for comparison (hash, or ``id`` if unhashable), since
    two values with equal reprs can still be different cache keys.  ``tree_hash``
    identifies the (args, kwargs) pytree structure (``f(x=..)`` vs ``f(..)``, tuple vs
    list), ``tree`` shows it.
    """

    args: tuple[ArgType, ...]
    statics: tuple[tuple[str, str], ...] = ()
    static_tokens: tuple[tuple[str, Any], ...] = ()
    tree: str = ""
    tree_hash: int = 0
    #: how each static was passed ("positional" | "keyword"), and the defaults of static
    #: parameters not passed: JAX keys on the arguments passed, not the values in effect
    static_passing: tuple[tuple[str, str], ...] = ()
    static_defaults: tuple[tuple[str, str], ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(a.path for a in self.args)


@dataclass
class MissReason:
    """One reason a call missed the cache: ``x changed f32[3] -> f32[4]``."""

    kind: str
    path: str | None = None
    before: str | None = None
    after: str | None = None
    detail: str = ""

    def text(self) -> str:
        if self.kind in ("shape", "dtype", "weak_type", "sharding"):
            return f"{self.path} changed {self.before} -> {self.after}"
        if self.kind == "static_arg":
            if self.detail:
                return self.detail
            if self.before == self.after:
                return (
                    f"static {self.path} changed to a different value with the same repr "
                    f"{self.after} (JAX compares static arguments by hash and ==)"
                )
            return f"static {self.path} changed {self.before} -> {self.after}"
        if self.kind == "pytree":
            if self.before is None:
                return f"new argument {self.path} ({self.after})"
            if self.after is None:
                return f"argument {self.path} gone (was {self.before})"
            if self.path is None:
                return f"argument structure changed {self.before} -> {self.after}"
            return f"{self.path} structure changed {self.before} -> {self.after}"
        return self.detail or self.kind.replace("_", " ")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "before": self.before,
            "after": self.after,
            "detail": self.detail,
            "text": self.text(),
        }


def arg_text(a: ArgType) -> str:
    """``f32[3]``, ``weak f32[]`` (a Python scalar), ``f32[8]@P('d')``."""
    text = a.text
    if a.weak:
        text = f"weak {text}"
    if a.sharding:
        text = f"{text} {a.sharding}"
    return text


def _arg_kind(new: ArgType, old: ArgType) -> str | None:
    if new.shape != old.shape:
        return "shape"
    if new.dtype != old.dtype:
        return "dtype"
    if new.weak != old.weak:
        return "weak_type"
    if new.sharding != old.sharding:
        return "sharding"
    if new.text != old.text:
        return "unknown"
    return None


def diff_signatures(new: Signature, old: Signature, limit: int = 8) -> list[MissReason]:
    """Every difference between two calls of the same function object."""
    out: list[MissReason] = []
    old_statics, new_statics = dict(old.statics), dict(new.statics)
    old_tokens, new_tokens = dict(old.static_tokens), dict(new.static_tokens)
    for name in dict.fromkeys([*old_statics, *new_statics]):
        same_repr = old_statics.get(name) == new_statics.get(name)
        same_value = old_tokens.get(name) == new_tokens.get(name)
        if not same_repr or not same_value:
            out.append(_static_change(name, old, new))
        elif dict(old.static_passing).get(name) != dict(new.static_passing).get(name):
            out.append(_static_change(name, old, new))
    if new.paths != old.paths:
        old_by, new_by = {a.path: a for a in old.args}, {a.path: a for a in new.args}
        for path in dict.fromkeys([*old_by, *new_by]):
            o, n = old_by.get(path), new_by.get(path)
            if o is None or n is None:
                out.append(
                    MissReason(
                        "pytree",
                        path,
                        None if o is None else arg_text(o),
                        None if n is None else arg_text(n),
                    )
                )
    else:
        for n, o in zip(new.args, old.args, strict=True):
            kind = _arg_kind(n, o)
            if kind is not None:
                out.append(MissReason(kind, n.path, arg_text(o), arg_text(n)))
    statics_differ = bool(out)  # static values live in the tree too: reported above
    if (
        not statics_differ
        and new.paths == old.paths
        and new.tree_hash != old.tree_hash
        and new.tree_hash
        and old.tree_hash
    ):
        # same leaves in the same order, another container: f(x=..) after f(..), a list
        # where a tuple was, a namedtuple for a tuple
        out.append(MissReason("pytree", None, old.tree, new.tree))
    if len(out) > limit:
        rest = len(out) - limit
        out = out[:limit] + [MissReason("unknown", detail=f"... and {rest} more differences")]
    return out


def _static_change(name: str, old: Signature, new: Signature) -> MissReason:
    """A static argument's change in JAX's terms: its cache key holds the arguments as
    passed (positional statics in the argument tuple, keyword ones by name), so an
    omitted keyword is a different key even when its default is the same value."""
    before, after = dict(old.statics).get(name), dict(new.statics).get(name)
    how_before = dict(old.static_passing).get(name)
    how_after = dict(new.static_passing).get(name)

    def passed(value: str | None, how: str | None) -> str:
        return f"{name}={value}" if how == "keyword" else f"{value} (by position)"

    def omitted(sig: Signature) -> str:
        default = dict(sig.static_defaults).get(name)
        return f"omitted (the default {default} applies)" if default is not None else "omitted"

    if before is not None and after is None:
        detail = (
            f"static {name}: {passed(before, how_before)} before, {omitted(new)} now; "
            "JAX keys on the arguments passed, not the value in effect"
        )
    elif before is None and after is not None:
        detail = (
            f"static {name}: {passed(after, how_after)} now, {omitted(old)} before; "
            "JAX keys on the arguments passed, not the value in effect"
        )
    elif how_before != how_after and before == after:
        detail = (
            f"static {name}: passed {'by keyword' if how_after == 'keyword' else 'by position'}"
            f" now, {'by keyword' if how_before == 'keyword' else 'by position'} before "
            f"(same value {after}; JAX keys positional and keyword arguments apart)"
        )
    else:
        detail = ""
    return MissReason("static_arg", name, before, after, detail=detail)


def closest_diff(new: Signature, previous: Sequence[Signature]) -> list[MissReason]:
    """The differences to the previous signature that differs least (like JAX's own report).

    An identical previous signature means the entry was dropped, not mismatched: JAX's
    caches were cleared (``jax.clear_caches()``, ``f.clear_cache()``) or evicted.
    """
    best: list[MissReason] | None = None
    best_score: tuple[int, int] | None = None
    for old in reversed(previous):  # the most recent wins a tie
        d = diff_signatures(new, old)
        if not d:
            return [
                MissReason(
                    "cache_cleared",
                    detail="same argument types as an earlier "
                    "compile: JAX's caches were cleared or the entry evicted",
                )
            ]
        score = (len(d), max(_SEVERITY.get(r.kind, 9) for r in d))
        if best_score is None or score < best_score:
            best, best_score = d, score
    return best or []


# A weak-type or sharding change is a smaller step than a new shape: prefer explaining
# a miss by the previous call that differs only in those.
_SEVERITY = {"weak_type": 0, "sharding": 1, "dtype": 2, "shape": 3, "static_arg": 4, "pytree": 5}


@dataclass
class ParsedExplanation:
    reasons: list[MissReason] = field(default_factory=list)
    function: str | None = None
    defined_at: str | None = None  # "file:line" of the function JAX is explaining
    never_seen: bool = False
    #: JAX's cache held other keys for this function: it compiled before, even where JAX
    #: gives no reason (JAX 0.12 says "cache miss explanation unavailable" for a changed
    #: static argument)
    seen_before: bool = False


_TYPE_LINE = re.compile(r"^\s*\* at (?P<path>.+?), now (?P<now>.+?) and before (?P<before>.+?)$")
_TREE_LINE = re.compile(
    r"^\s*\* at input path (?P<path>.+?), now (?P<now>.+?) and before "
    r"(?P<before>.+?)(?:, so .*)?$"
)
_FOR_LINE = re.compile(r"^\s*for (?P<name>\S+)(?: defined at (?P<where>.+?))?\s*$")
_WEAK = re.compile(r"\{weak_type=(True|False)\}")
_SHARD = re.compile(r"\(\{.*\}\)")


def _parse_type_change(path: str, now: str, before: str) -> MissReason:
    def split(t: str) -> tuple[str, str, bool, str]:
        t = t.replace("https://docs.jax.dev/en/latest/type_promotion.html#weak-types", "")
        weak = "{weak_type=True}" in t
        sharding = (_SHARD.search(t) or [""])[0]
        base = _SHARD.sub("", _WEAK.sub("", t)).strip()
        m = re.match(r"([a-z]+\d*)\[(.*)\]", base)
        dtype, shape = (m.group(1), m.group(2)) if m else (base, "")
        return dtype, shape, weak, sharding if sharding not in ("({})", "") else ""

    nd, ns, nw, nsh = split(now)
    od, osh_, ow, osh = split(before)
    kind = (
        "shape"
        if ns.split("@")[0] != osh_.split("@")[0]
        else "dtype"
        if nd != od
        else "weak_type"
        if nw != ow
        else "sharding"
        if (nsh != osh or ns != osh_)
        else "unknown"
    )

    def show(d: str, s: str, w: bool) -> str:
        return f"{'weak ' if w else ''}{d}[{s}]"

    return MissReason(kind, path, show(od, osh_, ow), show(nd, ns, nw))


def parse_jax_explanation(text: str) -> ParsedExplanation:
    """The reasons in one ``TRACING CACHE MISS`` log message from JAX."""
    out = ParsedExplanation()
    lines = text.splitlines()
    for ln in lines:
        m = _FOR_LINE.match(ln)
        if m:
            out.function = m.group("name")
            out.defined_at = m.group("where")
    if "never seen function" in text:
        out.never_seen = True
        if "seen another function defined on the same line" in text:
            out.reasons.append(
                MissReason(
                    "closure",
                    detail="a new function object defined on the same line as one seen before",
                )
            )
        else:
            out.reasons.append(MissReason("new_function", detail="first call of this function"))
        return out
    out.seen_before = "previously seen cache keys" in text or "closest previous key" in text
    if "Tracing context doesn't match" in text:
        details = [ln.strip(" *") for ln in lines if ln.strip().startswith("*")]
        out.reasons.append(
            MissReason(
                "context",
                detail="tracing context changed (config or "
                "context manager)" + (": " + "; ".join(details) if details else ""),
            )
        )
        return out
    tree = "different input pytree" in text
    for ln in lines:
        m = (_TREE_LINE if tree else _TYPE_LINE).match(ln)
        if not m:
            continue
        if tree:
            before, now = m.group("before"), m.group("now")
            if "Static(" in before or "Static(" in now:
                get = re.compile(r"Static\(val=(.*)\)")
                b, a = get.search(before), get.search(now)
                out.reasons.append(
                    MissReason(
                        "static_arg",
                        m.group("path"),
                        b.group(1) if b else before,
                        a.group(1) if a else now,
                    )
                )
            else:
                out.reasons.append(MissReason("pytree", m.group("path"), before, now))
        else:
            out.reasons.append(
                _parse_type_change(m.group("path"), m.group("now"), m.group("before"))
            )
    if not out.reasons:
        last = text.strip().splitlines()[-1].strip() if text.strip() else "no explanation"
        if out.seen_before and "unavailable" in last:
            last = (
                "compiled before with other arguments; JAX gave no reason (a static "
                "argument's value, or a change JAX does not explain)"
            )
        out.reasons.append(MissReason("unknown", detail=last))
    return out

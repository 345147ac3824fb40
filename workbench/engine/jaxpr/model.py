"""A structured, JSON-serialisable model of a (closed) jaxpr.

JAX's own objects are rich but tied to one JAX version; views, the JupyterLab
extension and tests need a stable shape.  This module walks a jaxpr once and
records every equation with its primitive, params, typed operands, the user's
source location and its nested sub-jaxprs (any param that holds a jaxpr:
``jit``/``pjit``, ``scan``, ``while``, ``cond`` branches, ``custom_jvp_call``,
``custom_vjp_call``, ``remat``, ``shard_map``, ``pmap`` ...).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.engine import _jax_compat as compat
from workbench.engine.common.source import SourceLine

#: Version of the JSON form (docs/mime-jaxpr.md); 2 introduced the shared aval table.
SCHEMA_VERSION = 3

#: Params are shown as text; long ones (big literal arrays, long tuples) are cut here.
PARAM_TEXT_LIMIT = 240


@dataclass(slots=True)
class Aval:
    """Abstract value: what a jaxpr variable is known to be at trace time."""

    text: str  # JAX's short form, e.g. ``f32[4,4]``
    shape: tuple[int | str, ...] | None
    dtype: str | None
    weak_type: bool
    sharding: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "shape": None if self.shape is None else list(self.shape),
            "dtype": self.dtype,
            "weak_type": self.weak_type,
            "sharding": self.sharding,
        }


@dataclass(slots=True)
class Atom:
    """A variable (``name``) or a literal (``literal`` holds its value text)."""

    name: str
    aval: Aval
    literal: str | None = None

    def to_json(self, avals: _AvalTable) -> list[Any]:
        """``[name, aval_index]``, or ``["", aval_index, literal_text]`` for a literal."""
        idx = avals.index(self.aval)
        return [self.name, idx] if self.literal is None else ["", idx, self.literal]


@dataclass(slots=True)
class SubJaxpr:
    param: str  # e.g. ``jaxpr``, ``branches[1]``, ``body_jaxpr``
    jaxpr: JaxprModel

    def to_json(self, avals: _AvalTable) -> dict[str, Any]:
        return {"param": self.param, "jaxpr": self.jaxpr.to_json(avals)}


@dataclass(slots=True)
class Equation:
    primitive: str
    params: dict[str, str]
    invars: list[Atom]
    outvars: list[Atom]
    source: SourceLine | None
    name_stack: str
    subjaxprs: list[SubJaxpr] = field(default_factory=list)
    effects: list[str] = field(default_factory=list)

    def to_json(self, avals: _AvalTable) -> dict[str, Any]:
        d: dict[str, Any] = {
            "primitive": self.primitive,
            "params": self.params,
            "invars": [a.to_json(avals) for a in self.invars],
            "outvars": [a.to_json(avals) for a in self.outvars],
            "source": None if self.source is None else self.source.to_dict(),
            "name_stack": self.name_stack,
        }
        if self.subjaxprs:
            d["subjaxprs"] = [s.to_json(avals) for s in self.subjaxprs]
        if self.effects:
            d["effects"] = self.effects
        return d


@dataclass(slots=True)
class JaxprModel:
    constvars: list[Atom]
    invars: list[Atom]
    outvars: list[Atom]
    eqns: list[Equation]
    consts: list[str]  # short summaries of closed-over constants
    _histogram: Counter[str] | None = field(default=None, repr=False, compare=False)

    @property
    def histogram(self) -> Counter[str]:
        """Equation count by primitive, including every nested jaxpr (computed once)."""
        if self._histogram is not None:
            return self._histogram
        counts: Counter[str] = Counter()
        stack = [self]
        while stack:
            jm = stack.pop()
            for eq in jm.eqns:
                counts[eq.primitive] += 1
                stack.extend(s.jaxpr for s in eq.subjaxprs)
        self._histogram = counts
        return counts

    @property
    def total_equations(self) -> int:
        return sum(self.histogram.values())

    def to_json(self, avals: _AvalTable) -> dict[str, Any]:
        return {
            "constvars": [a.to_json(avals) for a in self.constvars],
            "invars": [a.to_json(avals) for a in self.invars],
            "outvars": [a.to_json(avals) for a in self.outvars],
            "eqns": [e.to_json(avals) for e in self.eqns],
            "consts": self.consts,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"avals": [...], "jaxpr": {...}}``; atoms index the aval table.

        Sharing avals keeps the payload (and the allocations that build it) about
        three times smaller than inlining an aval object in every operand.
        """
        avals = _AvalTable()
        body = self.to_json(avals)
        return {"avals": [a.to_dict() for a in avals.items], "jaxpr": body}


class _AvalTable:
    """Interns avals for the JSON form (same aval text + sharding -> same index)."""

    def __init__(self) -> None:
        self.items: list[Aval] = []
        self._index: dict[int, int] = {}
        self._by_key: dict[tuple[str, str | None, bool], int] = {}

    def index(self, aval: Aval) -> int:
        i = self._index.get(id(aval))
        if i is None:
            key = (aval.text, aval.sharding, aval.weak_type)
            i = self._by_key.get(key)
            if i is None:
                i = len(self.items)
                self.items.append(aval)
                self._by_key[key] = i
            self._index[id(aval)] = i
        return i


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _short_text(value: Any, limit: int = PARAM_TEXT_LIMIT) -> str:
    name = compat.traced_function_name(value)
    if name is not None:  # a wrapped rule prints as its function, as JAX's printer does
        return name
    try:
        text = _ANSI.sub("", str(value))  # JAX colours jaxprs inside a Jupyter kernel
    except Exception as exc:  # a param whose __str__ fails must not break the view
        text = f"<unprintable {type(value).__name__}: {exc}>"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _jaxprs_in(value: Any, name: str) -> list[tuple[str, Any]]:
    """(label, jaxpr) pairs held by one equation param, open or closed."""
    if compat.is_jaxpr(value):
        return [(name, value)]
    if isinstance(value, (tuple, list)) and value:
        found: list[tuple[str, Any]] = []
        for i, item in enumerate(value):
            if compat.is_jaxpr(item):
                found.append((f"{name}[{i}]", item))
        return found
    return []


def _literal_key(aval_id: int, val: Any) -> tuple[int, type, Any, bool] | None:
    """Equal scalar literals of one aval print alike; the sign bit keeps 0.0 and -0.0
    apart.  None (not cached) for anything but a Python or NumPy int, bool or float."""
    if isinstance(val, bool | int):
        return (aval_id, type(val), val, False)
    if isinstance(val, float | np.floating) and val == val:  # NaN never equals a key
        return (aval_id, type(val), float(val), math.copysign(1.0, val) < 0)
    if isinstance(val, np.integer | np.bool_):
        return (aval_id, type(val), val.item(), False)
    return None


class _Builder:
    """Walks a jaxpr once; names variables uniquely across all nesting levels."""

    def __init__(self, with_source: bool = True) -> None:
        self._atoms: dict[int, Atom] = {}
        self._stacks: dict[int, str] = {}
        self._counter = 0
        self._avals: dict[Any, Aval] = {}
        self._avals_by_id: dict[int, Aval] = {}
        self._with_source = with_source
        self._keep: list[Any] = []  # keeps keyed objects alive so id() stays unique
        # A gradient's jaxpr repeats the same scalar literals and source infos thousands
        # of times: each is printed or looked up once.  Keys carry the type, so 1, 1.0 and
        # True stay apart.
        self._literals: dict[tuple[int, type, Any, bool], Atom] = {}
        self._sources: dict[int, SourceLine | None] = {}

    def _fresh(self) -> str:
        n = self._counter
        self._counter += 1
        letters = ""
        while True:
            letters = chr(ord("a") + n % 26) + letters
            n = n // 26 - 1
            if n < 0:
                return letters

    def aval(self, aval: Any) -> Aval:
        cached = self._avals_by_id.get(id(aval))
        if cached is not None:
            return cached
        try:
            cached = self._avals.get(aval)
        except TypeError:  # unhashable aval
            cached = None
        if cached is not None:
            self._avals_by_id[id(aval)] = cached
            self._keep.append(aval)
            return cached
        try:
            text = aval.str_short(short_dtypes=True)
        except Exception:
            text = str(aval)
        shape = getattr(aval, "shape", None)
        dtype = getattr(aval, "dtype", None)
        sharding = getattr(aval, "sharding", None)
        sharding_text = None
        if sharding is not None:
            spec = getattr(sharding, "spec", None)
            mesh = getattr(sharding, "mesh", None)
            # An empty abstract mesh means "no sharding in types"; don't clutter.
            if spec is not None and mesh is not None and getattr(mesh, "shape_tuple", ()) != ():
                sharding_text = _short_text(spec)
        result = Aval(
            text=text,
            shape=None
            if shape is None
            else tuple(d if isinstance(d, int) else str(d) for d in shape),
            dtype=None if dtype is None else str(dtype),
            weak_type=bool(getattr(aval, "weak_type", False)),
            sharding=sharding_text,
        )
        try:
            self._avals[aval] = result
        except TypeError:
            pass
        self._avals_by_id[id(aval)] = result
        self._keep.append(aval)
        return result

    def atom(self, v: Any, used: set[int] | None = None) -> Atom:
        """``used``: ids of the variables read in this jaxpr; a binding not in it is ``_``."""
        key = id(v)
        atom = self._atoms.get(key)  # a variable is one Atom, shared by all its uses
        if atom is not None:
            return atom
        aval = self.aval(getattr(v, "aval", None))
        if compat.is_literal(v):
            lit_key = _literal_key(id(aval), getattr(v, "val", None))
            cached = self._literals.get(lit_key) if lit_key is not None else None
            if cached is not None:
                return cached
            lit = Atom(name="", aval=aval, literal=_short_text(compat.literal_text(v), 80))
            if lit_key is not None:
                self._literals[lit_key] = lit
            return lit
        if compat.is_dropvar(v) or (used is not None and key not in used):
            return Atom(name="_", aval=aval)
        atom = Atom(name=self._fresh(), aval=aval)
        self._atoms[key] = atom
        self._keep.append(v)
        return atom

    def name_stack(self, source_info: Any) -> str:
        ns = getattr(source_info, "name_stack", None)
        key = id(ns)
        text = self._stacks.get(key)
        if text is None:
            text = compat.name_stack(source_info)
            self._stacks[key] = text
            self._keep.append(ns)
        return text

    def jaxpr(self, jaxpr: Any) -> JaxprModel:
        consts: list[str] = []
        for c in compat.jaxpr_consts(jaxpr):
            shape = getattr(c, "shape", None)
            dtype = getattr(c, "dtype", None)
            consts.append(f"{type(c).__name__} {dtype}{list(shape) if shape is not None else ''}")
        jaxpr = compat.open_jaxpr(jaxpr)
        # Like JAX's printer, a variable that nothing reads is shown as ``_``.
        # (literals' ids may be in it too: they are live objects, never a variable's id)
        used = {id(v) for e in jaxpr.eqns for v in e.invars}
        used.update(id(v) for v in jaxpr.outvars)
        model = JaxprModel(
            constvars=[self.atom(v) for v in jaxpr.constvars],
            invars=[self.atom(v) for v in jaxpr.invars],
            outvars=[],
            eqns=[],
            consts=consts,
        )
        for eqn in jaxpr.eqns:
            model.eqns.append(self.equation(eqn, used))
        model.outvars = [self.atom(v) for v in jaxpr.outvars]
        return model

    def equation(self, eqn: Any, used: set[int]) -> Equation:
        invars = [self.atom(v) for v in eqn.invars]
        outvars = [self.atom(v, used) for v in eqn.outvars]
        params: dict[str, str] = {}
        subs: list[SubJaxpr] = []
        for k, v in eqn.params.items():
            found = _jaxprs_in(v, k)
            if found:
                params[k] = "<jaxpr>" if len(found) == 1 else f"<{len(found)} jaxprs>"
                for label, sub in found:
                    subs.append(SubJaxpr(param=label, jaxpr=self.jaxpr(sub)))
            else:
                params[k] = _short_text(v)
        source = None
        if self._with_source:
            si = eqn.source_info
            key = id(si)
            if key in self._sources:
                source = self._sources[key]
            else:
                source = self._sources[key] = compat.user_frame(si)
                self._keep.append(si)
        effects = [_short_text(e, 80) for e in (getattr(eqn, "effects", None) or ())]
        return Equation(
            primitive=str(eqn.primitive),
            params=params,
            invars=invars,
            outvars=outvars,
            source=source,
            name_stack=self.name_stack(eqn.source_info),
            subjaxprs=subs,
            effects=effects,
        )


def build_model(closed_jaxpr: Any, with_source: bool = True) -> JaxprModel:
    """Build the structured model of a ``ClosedJaxpr`` (or open ``Jaxpr``)."""
    return _Builder(with_source=with_source).jaxpr(closed_jaxpr)

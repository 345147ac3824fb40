"""Who compiled what: the function a compile belongs to, the user's line, and why it missed.

A compile is credited to a *function key*: its name, the transforms around it and where
its code is defined (``loss[grad]@/nb.py:3``), so ``jit(grad(loss))`` and
``jit(vmap(loss))`` are separate rows and a redefinition is a new one.  JAX's own eager
helpers (``convert_element_type`` ...) are ``origin == "jax"``: counted, not explained.
Each live function object JAX traced is tracked through a weak reference with the
signatures it compiled, which is what a new call is compared with to name the miss.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from workbench.engine import _jax_compat as compat
from workbench.engine.cache.reasons import (
    MissReason,
    Signature,
    closest_diff,
    parse_jax_explanation,
)
from workbench.engine.cache.records import CompileRecord, FunctionStats
from workbench.engine.common.errors import calling_user_line, is_user_file
from workbench.engine.common.source import SourceLine

#: Signatures kept per function object, and miss records per function.
MAX_SIGNATURES = 64


@dataclass(eq=False)
class TracedObject:
    """One function object JAX traced, held weakly: it owns the executables compiled for it."""

    ref: weakref.ref[Any]
    signatures: list[Signature] = field(default_factory=list)
    #: executables compiled for this object since its cache was last seen emptied
    entries: int = 0

    def alive(self) -> bool:
        return self.ref() is not None


class FunctionState:
    """Per-function bookkeeping that is not part of the public record."""

    def __init__(self, stats: FunctionStats) -> None:
        self.stats = stats
        # id(live function object) -> its bookkeeping
        self.objects: dict[int, TracedObject] = {}
        self.objects_seen = 0  # function objects ever traced (0: only cached-trace compiles)


def call_site() -> SourceLine | None:
    """The innermost frame of user code on the stack (the line that made the call)."""
    return calling_user_line()


def user_defined(where: str | None) -> bool:
    """A "file:line" in the user's code (not JAX's ``jax.nn.relu`` the user jitted)."""
    return where is not None and is_user_file(where.rpartition(":")[0])


def _defined_at(fun: Any) -> str | None:
    """"file:line" where the code ``fun`` runs is defined (through wrappers)."""
    code = compat.function_code(compat.innermost_function(fun))
    return None if code is None else f"{code.co_filename}:{code.co_firstlineno}"


def function_key(fun: Any, name: str) -> tuple[str, str | None]:
    """A function's identity across calls: its name, the transforms around it and where
    its code is defined.  ``jit(grad(loss))`` and ``jit(vmap(loss))`` are different
    programs (different rows); a callable instance is keyed by its class's ``__call__``.
    """
    code = compat.function_code(compat.innermost_function(fun))
    chain = compat.transform_names(fun)
    label = name
    if code is not None and name.startswith("<unnamed"):
        label = getattr(code, "co_qualname", code.co_name)
    if chain:
        label = f"{label}[{'/'.join(chain)}]"
    if code is None:
        return f"{label}@?", None
    # JAX's eager helpers share one code object, so the traced name is part of the key.
    where = f"{code.co_filename}:{code.co_firstlineno}"
    return f"{label}@{where}", where


def explanation_for(texts: list[str], site: compat.JitTraceSite | None,
                    fun_name: str) -> str | None:
    """JAX's explanation for exactly this function ("for NAME defined at FILE:LINE"),
    the latest first; nested jits explain their own misses on the same thread."""
    where = _defined_at(site.fun) if site is not None else None
    for text in reversed(texts):
        parsed = parse_jax_explanation(text)
        if parsed.function != fun_name:
            continue
        if where is None or parsed.defined_at is None or parsed.defined_at == where:
            return text
    return None


class Attribution:
    """Every function seen, by key, and the reasons of each new compile.

    Not locked itself: the tracker calls it under its lock, and the weak-reference
    callbacks (which run whenever a function object dies) take that same ``lock``.
    """

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self.functions: dict[str, FunctionState] = {}
        # a function name -> the key of the user's function last compiled under it
        self.by_name: dict[str, str] = {}

    def clear(self) -> None:
        self.functions.clear()
        self.by_name.clear()

    def state(self, key: str, function: str, origin: str, where: str | None) -> FunctionState:
        st = self.functions.get(key)
        if st is None:
            st = self.functions[key] = FunctionState(
                FunctionStats(key=key, function=function, origin=origin, defined_at=where))
        return st

    def track(self, state: FunctionState, fun: Any) -> TracedObject | None:
        """Start following a function object (weakly); None if it cannot be weakly held."""
        oid = id(fun)
        functions = self.functions
        key = state.stats.key
        lock = self._lock

        def gone(_ref: Any, oid: int = oid, key: str = key) -> None:
            with lock:
                st = functions.get(key)
                if st is not None:
                    obj = st.objects.get(oid)
                    if obj is not None and obj.ref is _ref:
                        del st.objects[oid]
        try:
            ref = weakref.ref(fun, gone)
        except TypeError:  # not weak-referenceable: track nothing rather than keep it alive
            return None
        obj = TracedObject(ref)
        state.objects[oid] = obj
        state.objects_seen += 1
        return obj

    def after_trace(self, rec: CompileRecord, site: compat.JitTraceSite | None,
                    fun_name: str) -> TracedObject | None:
        """Key, origin and reasons of a fresh trace; the traced object's bookkeeping."""
        parsed = parse_jax_explanation(rec.jax_explanation) if rec.jax_explanation else None
        if site is None:
            rec.key = rec.function
            rec.origin = "user" if rec.jax_explanation else "unknown"
            rec.reasons = parsed.reasons if parsed else []
            self.state(rec.key, rec.function, rec.origin, None)
            return None
        key, where = function_key(site.fun, fun_name)
        rec.key, rec.defined_at = key, where
        rec.origin = "jax" if site.internal else "user"
        sig = Signature(site.args, site.statics, site.static_tokens, site.tree, site.tree_hash)
        prior = self.functions.get(key)
        state = self.state(key, rec.function, rec.origin, where)
        obj = state.objects.get(id(site.fun))
        if obj is not None and obj.ref() is not site.fun:
            obj = None
        if rec.origin == "jax":  # JAX's own helpers: counted, not explained
            rec.reasons = []
            if obj is None:
                obj = self.track(state, site.fun)
        elif site.eager_primitive:
            # an eager lax.scan/while/cond running the user's body: JAX jits one new
            # helper per set of parameters (body, lengths), so objects tell nothing
            rec.reasons = [MissReason("new_function", detail=f"eager {fun_name} compiled for "
                                      "its body and argument types")]
            obj = None
        elif obj is None:
            if prior is not None and prior.objects_seen == 0 and parsed is not None \
                    and any(r.kind != "unknown" for r in parsed.reasons):
                # first traced here; compiled before only from a trace JAX had cached
                rec.reasons = [r for r in parsed.reasons if r.kind != "unknown"]
            elif prior is not None and prior.objects_seen == 0:
                rec.reasons = [MissReason("new_function", detail=f"first trace of {fun_name}")]
            elif prior is not None:
                rec.reasons = [MissReason(
                    "closure", detail=f"new function object for {fun_name} (same code, "
                    "closure re-created; JAX caches per function object)")]
            else:
                other = self.by_name.get(rec.function)
                old_where = self.functions[other].stats.defined_at if other else None
                if other is not None and other != key and not fun_name.startswith("<") \
                        and old_where != where and user_defined(old_where):
                    rec.reasons = [MissReason("redefined", fun_name, old_where, where,
                                              detail=f"{fun_name} was redefined")]
                else:
                    rec.reasons = [MissReason("new_function",
                                              detail=f"first call of {fun_name}")]
            obj = self.track(state, site.fun)
        elif not obj.signatures:  # its earlier traces all raised: this is its first real one
            rec.reasons = [MissReason("new_function", detail=f"first call of {fun_name}")]
        else:
            rec.reasons = closest_diff(sig, obj.signatures)
            concrete = [r for r in parsed.reasons if r.kind != "unknown"] if parsed else []
            if not rec.reasons and parsed is not None:
                rec.reasons = parsed.reasons
            elif rec.reasons and rec.reasons[0].kind == "cache_cleared":
                if concrete and parsed is not None and not parsed.never_seen:
                    rec.reasons = concrete  # JAX saw a difference our signature misses
                else:
                    obj.entries = 0  # the same call compiled before: its executables are gone
            elif concrete and all(r.kind == "pytree" and r.path is None
                                  for r in rec.reasons):
                rec.reasons = concrete  # JAX names the paths of a structure change
        if obj is not None and not site.failed:
            # a trace that raised compiled nothing: the next good call is not a "change"
            obj.signatures.append(sig)
            del obj.signatures[:-MAX_SIGNATURES]
        if rec.origin == "user":
            # only the user's functions: a user's ``relu`` is not JAX's ``relu`` redefined
            self.by_name[rec.function] = key
        return obj

    def without_trace(self, rec: CompileRecord, source: compat.LoweringSource | None,
                      stage: str,
                      carried: tuple[str, TracedObject | None] | None) -> TracedObject | None:
        """A lowering/compile with no trace before it on this thread.

        Either the compile of an earlier ``f.lower(...)`` (``carried``: its key and
        object, no new miss), or the trace came from JAX's cache: a cached trace compiled
        for the first time (``f.trace(x)`` then ``f(x)``; a jit first traced inside
        another jit), a transformed call of a jitted function (``jax.vmap(f)(xs)``), or
        JAX's own eager dispatch (``jnp.tanh(x)``).  What is being lowered decides user
        vs. JAX.  Returns the function object's bookkeeping to credit the executable to.
        """
        if carried is not None and carried[0] in self.functions:
            key, obj = carried
            st = self.functions[key].stats
            rec.key, rec.defined_at, rec.origin, rec.reasons = key, st.defined_at, st.origin, []
            return obj
        known = self.by_name.get(rec.function)
        where: str | None
        if source is not None:
            if not source.user:
                rec.key, rec.origin, rec.reasons = rec.function, "jax", []
                return None
            where = source.where or None
            if known is not None and self.functions[known].stats.defined_at == where:
                key = known
            else:
                key = f"{source.name}@{where}" if where else rec.function
        elif known is not None:
            key, where = known, self.functions[known].stats.defined_at
        else:
            # nothing to go on (a JAX without the debug info we read): JAX's own dispatch
            rec.key, rec.origin, rec.reasons = rec.function, "jax", []
            return None
        state = self.state(key, rec.function, "user", where)
        st = state.stats
        rec.key, rec.defined_at, rec.origin = key, st.defined_at, "user"
        first = st.compiles == 0 if stage == "compile" else st.compiles == st.lowers == 0
        if first:
            rec.reasons = [MissReason("new_function", detail=f"first compile of {rec.function}")]
        else:
            rec.reasons = [MissReason("unknown", detail="compiled again from a cached trace "
                                      "(a transformation such as vmap or grad of it, or other "
                                      "sharding, layout or compiler options)")]
        self.by_name[rec.function] = key
        return None

    def credit(self, rec: CompileRecord, obj: TracedObject | None) -> None:
        """Add a finished record to its function's totals (and the new executable to the
        object that owns it)."""
        state = self.functions.get(rec.key) or self.state(rec.key, rec.function,
                                                          rec.origin, rec.defined_at)
        st = state.stats
        st.function = rec.function
        st.add(rec)
        if rec.kind == "compile" and obj is not None and obj.alive():
            obj.entries += 1  # the traced object owns the new executable
        if rec.reasons:
            st.misses.append(rec)
            del st.misses[:-MAX_SIGNATURES]
            if rec.is_recompile:
                st.recompiles += 1


__all__ = ["MAX_SIGNATURES", "Attribution", "FunctionState", "TracedObject", "call_site",
           "explanation_for", "function_key", "user_defined"]

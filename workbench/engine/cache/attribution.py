"""Who compiled what: the function a compile belongs to, the user's line, and why it missed.

A compile is credited to a *function key*: its name, the transforms around it and where
its code is defined (``loss[grad]@/nb.py:3``), so ``jit(grad(loss))`` and
``jit(vmap(loss))`` are separate rows and a redefinition is a new one.  JAX's own eager
helpers (``convert_element_type`` ...) are ``origin == "jax"``: counted, not explained.
Each live function object JAX traced is tracked through a weak reference with the
signatures it compiled, which is what a new call is compared with to name the miss.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from workbench.engine import _jax_compat as compat
from workbench.engine.cache.reasons import (
    MissReason,
    Signature,
    closest_diff,
    diff_signatures,
    parse_jax_explanation,
)
from workbench.engine.cache.records import CompileRecord, FunctionStats
from workbench.engine.common.errors import calling_user_line, is_user_file
from workbench.engine.common.source import SourceLine

#: Signatures kept per function object, and miss records per function.
MAX_SIGNATURES = 64
#: IPython's file name for a cell: its execution count and a hash of its source.
_CELL_FILE = re.compile(r"^<ipython-input-(?P<count>\d+)-(?P<hash>[0-9a-f]+)>:(?P<line>\d+)$")

#: Traces the workbench made that the user's code may compile later (from JAX's cache).
MAX_INSPECTED = 32
#: Function rows kept: a function defined in a cell is a new row each time the cell is
#: re-run (its code is new), so rows are pruned, those with no live object first.
MAX_FUNCTIONS = 500


@dataclass(eq=False)
class InspectedTrace:
    """A trace the workbench made (``%%jaxpr h(x, 3)``) of a function object the user
    may call next: JAX then compiles from this cached trace without tracing again, and
    the user's compile is explained against the user's own earlier calls with it."""

    function: str
    key: str
    where: str | None
    signature: Signature
    ref: weakref.ref[Any] | None
    jaxpr_id: int = 0  # the jaxpr it made (0: unknown): a later lowering of it is its own
    #: the workbench's record of it, which reaches ``kind == "compile"`` when the inspection
    #: compiled (``%%hlo``): that executable may then serve the user's calls of these types
    record: CompileRecord | None = None

    @property
    def compiled(self) -> bool:
        return self.record is not None and self.record.kind == "compile"


@dataclass(eq=False)
class TracedObject:
    """One function object JAX traced, held weakly: it owns the executables compiled for it."""

    ref: weakref.ref[Any]
    signatures: list[Signature] = field(default_factory=list)
    #: executables compiled for this object since its cache was last seen emptied
    entries: int = 0
    #: the signatures whose traces reached an XLA compile: a trace alone (``jax.make_jaxpr``,
    #: ``jax.eval_shape``, ``jit(f).trace``) leaves no executable that a cache could drop
    compiled: list[Signature] = field(default_factory=list)
    #: the signature of the latest trace, until its compile credits it to ``compiled``
    pending: Signature | None = None

    def alive(self) -> bool:
        return self.ref() is not None


class FunctionState:
    """Per-function bookkeeping that is not part of the public record."""

    def __init__(self, stats: FunctionStats) -> None:
        self.stats = stats
        # id(live function object) -> its bookkeeping
        self.objects: dict[int, TracedObject] = {}
        self.objects_seen = 0  # function objects ever traced (0: only cached-trace compiles)
        #: the argument types any of its objects compiled, kept past the objects' deaths:
        #: a new object of the same code is a *re*-compile only for types compiled before
        self.compiled: list[Signature] = []

    def compiled_before(self, sig: Signature | None) -> bool:
        """Whether an earlier object of this function compiled ``sig`` (None: unknown,
        taken as yes, the conservative reading of a new object of the same code; so is a
        function whose compiles all came from cached traces, whose types are not known)."""
        if sig is None or (not self.compiled and self.stats.compiles):
            return True
        return any(not diff_signatures(sig, old) for old in self.compiled)


def call_site() -> SourceLine | None:
    """The innermost frame of user code on the stack (the line that made the call)."""
    return calling_user_line()


def user_defined(where: str | None) -> bool:
    """A "file:line" in the user's code (not JAX's ``jax.nn.relu`` the user jitted)."""
    return where is not None and is_user_file(where.rpartition(":")[0])


def _defined_at(fun: Any) -> str | None:
    """ "file:line" where the code ``fun`` runs is defined (through wrappers)."""
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


def _signature(site: compat.JitTraceSite) -> Signature:
    return Signature(
        site.args,
        site.statics,
        site.static_tokens,
        site.tree,
        site.tree_hash,
        site.static_passing,
        site.static_defaults,
    )


def traced_function(fun: Any) -> Any:
    """The function a trace is of: ``jax.make_jaxpr(f)`` of a jitted ``f`` traces ``f``'s
    jit wrapper, which runs the same program as ``f(x)`` (the function inside); of a
    method defined with ``jax.jit`` (``d.apply``), the jitted function it is bound from."""
    bound = compat.bound_jitted(fun)
    if bound is not None:
        fun = bound[0]
    for _ in range(4):
        if not compat.is_jitted(fun):
            break
        inner = compat.jitted_inner(fun)
        if inner is fun:
            break
        fun = inner
    return fun


def _wraps(it: InspectedTrace, fun: Any) -> bool:
    """Whether the inspected object is a library's wrapper (``nnx.jit``) around ``fun``, the
    inner jit the user's call traced (other code than the wrapper's)."""
    target = it.ref() if it.ref is not None else None
    return (
        fun is not None
        and target is not None
        and target is not fun
        and compat.function_code(target) is not compat.function_code(fun)
    )


def _as_inner(it: InspectedTrace, sig: Signature) -> Signature:
    """The signature of an inspection of a library's wrapper as a trace of its inner jit
    reads it.  The workbench names the wrapper's leaves as the user passed them
    (``model.a.kernel.value``); the inner jit's trace has the same inputs in the same
    order, named after the split state (``model.states[0][1]``): compared leaf by leaf,
    under the inner jit's names."""
    old = it.signature
    if len(old.args) != len(sig.args) or old.paths == sig.paths:
        return old
    args = tuple(
        dataclasses.replace(o, path=n.path) for o, n in zip(old.args, sig.args, strict=True)
    )
    return dataclasses.replace(old, args=args, tree=sig.tree, tree_hash=sig.tree_hash)


def explanation_for(
    texts: list[str], site: compat.JitTraceSite | None, fun_name: str
) -> str | None:
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
        self.inspected: deque[InspectedTrace] = deque(maxlen=MAX_INSPECTED)
        # where the functions the workbench inspected are defined: JAX's cache then holds
        # their traces (nested ones too), so JAX's explanation of a user's first call
        # of them compares with the inspection's, not with an earlier call of the user's
        self.inspected_sites: set[str] = set()

    def clear(self) -> None:
        self.functions.clear()
        self.by_name.clear()
        self.inspected.clear()
        self.inspected_sites.clear()

    def state(self, key: str, function: str, origin: str, where: str | None) -> FunctionState:
        st = self.functions.get(key)
        if st is None:
            if len(self.functions) >= MAX_FUNCTIONS:
                self._prune()
            st = self.functions[key] = FunctionState(
                FunctionStats(key=key, function=function, origin=origin, defined_at=where)
            )
        return st

    def _prune(self) -> None:
        """Make room for a new row: drop the oldest rows whose function objects are all
        gone (nothing can compile under them again), else the oldest rows."""
        room = max(1, MAX_FUNCTIONS // 10)
        dead = [
            k for k, st in self.functions.items() if not any(o.alive() for o in st.objects.values())
        ][:room]
        victims = dead or list(self.functions)[:room]
        for key in victims:
            del self.functions[key]
        gone = set(victims)
        for name in [n for n, k in self.by_name.items() if k in gone]:
            del self.by_name[name]

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

    def after_trace(
        self, rec: CompileRecord, site: compat.JitTraceSite | None, fun_name: str
    ) -> TracedObject | None:
        """Key, origin and reasons of a fresh trace; the traced object's bookkeeping."""
        parsed = parse_jax_explanation(rec.jax_explanation) if rec.jax_explanation else None
        if site is None:
            rec.key = rec.function
            rec.origin = "user" if rec.jax_explanation else "unknown"
            rec.reasons = parsed.reasons if parsed else []
            self.state(rec.key, rec.function, rec.origin, None)
            return None
        fun = traced_function(site.fun)
        key, where = function_key(fun, fun_name)
        rec.key, rec.defined_at = key, where
        rec.origin = "jax" if site.internal else "user"
        sig = _signature(site)
        prior = self.functions.get(key)
        state = self.state(key, rec.function, rec.origin, where)
        obj = self._object(state, fun)
        if rec.origin == "jax":  # JAX's own helpers: counted, not explained
            rec.reasons = []
            if obj is None:
                obj = self.track(state, fun)
        elif site.eager_primitive:
            # an eager lax.scan/while/cond running the user's body: JAX jits one new
            # helper per set of parameters (body, lengths), so objects tell nothing
            rec.reasons = [
                MissReason(
                    "new_function",
                    detail=f"eager {fun_name} compiled for its body and argument types",
                )
            ]
            obj = None
        elif obj is None:
            rec.reasons = self._first_trace_reasons(
                rec, prior, parsed, fun_name, key, where, sig, fun
            )
            obj = self.track(state, fun)
        elif not obj.signatures:  # its earlier traces all raised: this is its first real one
            rec.reasons = [MissReason("new_function", detail=f"first call of {fun_name}")]
        else:
            rec.reasons = self._miss_reasons(sig, obj, parsed, fun_name)
        if obj is not None and not site.failed:
            # a trace that raised compiled nothing: the next good call is not a "change"
            obj.signatures.append(sig)
            del obj.signatures[:-MAX_SIGNATURES]
            obj.pending = sig
        if rec.origin == "user":
            # only the user's functions: a user's ``relu`` is not JAX's ``relu`` redefined
            self.by_name[rec.function] = key
            if site.maker:  # a later lowering of the same trace goes by JAX's jit name
                self.by_name[f"jit({fun_name})"] = key
        return obj

    @staticmethod
    def _object(state: FunctionState, fun: Any) -> TracedObject | None:
        obj = state.objects.get(id(fun))
        return obj if obj is not None and obj.ref() is fun else None

    def _first_trace_reasons(
        self,
        rec: CompileRecord,
        prior: FunctionState | None,
        parsed: Any,
        fun_name: str,
        key: str,
        where: str | None,
        sig: Signature | None = None,
        fun: Any = None,
    ) -> list[MissReason]:
        """Why a function object seen for the first time was traced (``fun``, where known).

        A new object of code seen before (a closure re-created, a cell re-run) is blamed
        only when an earlier object compiled the same argument types: then the old
        object's executable would have served the call.  With other types (a factory's
        step for another model: ``nnx_cnn_setup()`` after ``nnx_mlp_setup()``) it compiles
        for the first time whatever object it is, as JAX's "never seen function" says."""
        if (
            prior is not None
            and prior.objects_seen == 0
            and parsed is not None
            and any(r.kind != "unknown" for r in parsed.reasons)
        ):
            # first traced here; compiled before only from a trace JAX had cached
            return [r for r in parsed.reasons if r.kind != "unknown"]
        if prior is not None and prior.objects_seen == 0:
            return [MissReason("new_function", detail=f"first trace of {fun_name}")]
        if prior is None:
            # no compile of it recorded, yet ``%%hlo`` compiled it through the wrapper the
            # user calls (a library's jit: ``nnx.jit``), and JAX's caches served the user's
            # calls of those types with that executable, leaving no record: a trace for
            # other types is a recompile, explained against the inspected ones
            diff = self._wrapper_inspected_diff(key, sig, fun)
            if diff:
                return diff
        if prior is not None and not prior.compiled_before(sig):
            return [self._new_object(fun_name)]
        if prior is not None:
            return [
                MissReason(
                    "closure",
                    detail=f"new function object for {fun_name} (same "
                    "code, closure re-created; JAX caches per function object)",
                )
            ]
        rerun = self._same_cell_source(key, where, sig)
        if rerun is not None:
            return [
                MissReason(
                    "closure",
                    detail=f"new function object for {fun_name}: cell "
                    f"{rerun} ran again and created it anew (JAX caches per "
                    "function object)",
                )
            ]
        other = self.by_name.get(rec.function)
        old_where = self.functions[other].stats.defined_at if other else None
        if (
            other is not None
            and other != key
            and not fun_name.startswith("<")
            and old_where != where
            and user_defined(old_where)
        ):
            return [
                MissReason(
                    "redefined", fun_name, old_where, where, detail=f"{fun_name} was redefined"
                )
            ]
        if (
            prior is None
            and parsed is not None
            and where not in self.inspected_sites
            and any(r.kind not in ("unknown", "new_function") for r in parsed.reasons)
        ):
            # compiled before the tracker was listening (no ``%load_ext workbench``, no
            # capture): JAX's own explanation knows its cache (other input types, or
            # another function object defined on the same line)
            return [r for r in parsed.reasons if r.kind not in ("unknown", "new_function")]
        if prior is None and parsed is not None and parsed.seen_before:
            if where not in self.inspected_sites:
                # JAX's cache had other keys for it, and it says no more than that
                return list(parsed.reasons)
        return [MissReason("new_function", detail=f"first call of {fun_name}")]

    @staticmethod
    def _new_object(fun_name: str) -> MissReason:
        return MissReason(
            "new_function",
            detail=f"first call of {fun_name} (a new function object of code seen before, "
            "with argument types none of the earlier ones compiled)",
        )

    def _same_cell_source(
        self, key: str, where: str | None, sig: Signature | None = None
    ) -> str | None:
        """The earlier cell whose same source (IPython names a cell's file after a hash
        of its text) defined this function on the same line, and whose function compiled
        the same argument types: the cell was re-run, and the re-run is why it compiled."""
        m = _CELL_FILE.match(where or "")
        if m is None:
            return None
        label = key.rpartition("@")[0]
        for other, st in self.functions.items():
            o = _CELL_FILE.match(st.stats.defined_at or "")
            if (
                other != key
                and o is not None
                and o["hash"] == m["hash"]
                and o["line"] == m["line"]
                and other.rpartition("@")[0] == label
                and (st.stats.compiles or st.stats.traces)
                and (not st.compiled or st.compiled_before(sig))
            ):
                return f"[{o['count']}]"
        return None

    def _miss_reasons(
        self, sig: Signature, obj: TracedObject, parsed: Any, fun_name: str
    ) -> list[MissReason]:
        """Why a function object traced before was traced again.  Argument types that
        were only traced (``jax.make_jaxpr``, ``jax.eval_shape``, ``jit(f).trace``) and
        never compiled left no executable that a cleared cache could have dropped: the
        call is compared with the compiled ones, or is the first compile."""
        if any(not diff_signatures(sig, s) for s in obj.signatures) and not any(
            not diff_signatures(sig, s) for s in obj.compiled
        ):
            if not obj.compiled:
                return [
                    MissReason(
                        "new_function",
                        detail=(
                            f"first compile of {fun_name} (traced before by jax.make_jaxpr, "
                            "jax.eval_shape or .trace, never compiled)"
                        ),
                    )
                ]
            return closest_diff(sig, obj.compiled)
        return self._diff_reasons(sig, obj, parsed)

    def _wrapper_inspected_diff(
        self, key: str, sig: Signature | None, fun: Any
    ) -> list[MissReason]:
        """The first trace of a library's inner jit (``fun``) whose wrapper ``%%hlo``
        compiled through the wrapper's own ``.trace().lower().compile()``: JAX's caches
        served the user's calls of the inspected types with that executable, leaving no
        record, so this trace for other types is a recompile, explained against them;
        [] when there is no such inspection (or no difference)."""
        if sig is None:
            return []
        seen = [
            _as_inner(it, sig)
            for it in self.inspected
            if it.key == key and it.signature and it.compiled and _wraps(it, fun)
        ]
        diff = closest_diff(sig, seen) if seen else []
        return diff if diff and diff[0].kind != "cache_cleared" else []

    @staticmethod
    def _diff_reasons(sig: Signature, obj: TracedObject, parsed: Any) -> list[MissReason]:
        """Why a function object that compiled before missed: the closest earlier call's
        differences, refined by JAX's own explanation where ours finds none."""
        reasons = closest_diff(sig, obj.signatures)
        concrete = [r for r in parsed.reasons if r.kind != "unknown"] if parsed else []
        if not reasons and parsed is not None:
            return list(parsed.reasons)
        if reasons and reasons[0].kind == "cache_cleared":
            if concrete and parsed is not None and not parsed.never_seen:
                return concrete  # JAX saw a difference our signature misses
            obj.entries = 0  # the same call compiled before: its executables are gone
            return reasons
        if concrete and all(r.kind == "pytree" and r.path is None for r in reasons):
            return concrete  # JAX names the paths of a structure change
        return reasons

    # -- the workbench's own inspections ---------------------------------------------------
    def inspected_trace(
        self, rec: CompileRecord, site: compat.JitTraceSite | None, fun_name: str
    ) -> TracedObject | None:
        """A trace the workbench made (``%%jaxpr``, ``%%hlo``, ``workbench.inspect``).

        Keyed like the user's function, but no reasons, no signature in the function's
        history (a later user call is never compared with it) and no new object: it is
        remembered apart, for the user's compile from this cached trace that may follow.
        JAX's own helpers stay helpers.
        """
        if site is not None and site.internal:
            return self.after_trace(rec, site, fun_name)
        rec.reasons = []
        rec.origin = "workbench"
        if site is None:
            rec.key = rec.function
            return None
        fun = traced_function(site.fun)
        rec.key, rec.defined_at = function_key(fun, fun_name)
        self._inspected_at(rec.defined_at)
        if not site.failed and not site.eager_primitive:
            try:
                ref: weakref.ref[Any] | None = weakref.ref(fun)
            except TypeError:
                ref = None
            sig = _signature(site)
            self.inspected.append(
                InspectedTrace(rec.function, rec.key, rec.defined_at, sig, ref, site.jaxpr_id, rec)
            )
        return None

    def inspected_stage(self, rec: CompileRecord, source: compat.LoweringSource | None) -> None:
        """A lowering or compile the workbench made with no trace before it."""
        rec.reasons = []
        if source is not None and not source.user:
            rec.key, rec.origin = rec.function, "jax"
            return
        rec.origin = "workbench"
        known = self.by_name.get(rec.function)
        if known is not None:
            rec.key, rec.defined_at = known, self.functions[known].stats.defined_at
        elif source is not None and source.where:
            rec.key, rec.defined_at = f"{source.name}@{source.where}", source.where
        else:
            rec.key = rec.function
        self._inspected_at(rec.defined_at)

    def _inspected_at(self, where: str | None) -> None:
        if where and len(self.inspected_sites) < MAX_FUNCTIONS:
            self.inspected_sites.add(where)

    def _take_inspected(
        self, function: str, key: str, known: str | None, source: compat.LoweringSource | None
    ) -> InspectedTrace | None:
        """The workbench's trace this user lowering comes from (same function, same input
        types), taken out of the list; None when there is none.

        The workbench traces a library's jit (``nnx.jit``) inside its own ``jax.jit``:
        the user's call then lowers the library's inner jit, cached as a nested trace of
        the workbench's.  That jaxpr is not the one recorded (the wrapper's) and its key
        has no transform chain of the wrapper's: it is matched by where it is defined.
        """
        if source is None:
            return None
        lowered = traced_function(source.fun) if source.fun is not None else None
        for it in reversed(self.inspected):
            if it.function != function:
                continue
            if (
                known is not None
                and it.key != key
                and not (source.where and it.where == source.where)
            ):
                continue
            target = it.ref() if it.ref is not None else None
            if target is None:
                continue
            # a library's inner jit (other code than the inspected wrapper), not another
            # closure of the same code (a factory's lambdas): those are told by jaxpr id
            wrapped = (
                lowered is not None
                and target is not lowered
                and compat.function_code(lowered) is not compat.function_code(target)
            )
            if not wrapped and source.jaxpr_id and it.jaxpr_id and source.jaxpr_id != it.jaxpr_id:
                continue  # another trace of it (another static value)
            if (
                source.in_types is not None
                and tuple(a.text for a in it.signature.args) != source.in_types
            ):
                continue
            self.inspected.remove(it)
            return it
        return None

    def _compile_inspected(
        self, rec: CompileRecord, it: InspectedTrace, source: compat.LoweringSource | None = None
    ) -> TracedObject | None:
        """The user's compile of a call the workbench traced first: explained as if the
        user's call had traced it (JAX skipped the trace, reusing the workbench's).

        ``lowered`` is the function of the jit the user's call runs: when the workbench
        traced a wrapper around it (a library's jit), that inner object, not the wrapper,
        is what the user's later calls trace, so it owns the executable and the call."""
        fun = it.ref() if it.ref is not None else None
        name = rec.function.removeprefix("jit(").removesuffix(")")
        key, where, sig = it.key, it.where, it.signature
        lowered = traced_function(source.fun) if source is not None and source.fun else None
        if lowered is not None and lowered is not fun:
            # the inner jit's own call: its object, key and arguments (as its trace names them)
            fun = lowered
            key, where = function_key(fun, name)
            if source is not None and source.site is not None:
                sig = _signature(source.site)  # as a later trace of it will read
            elif source is not None and source.args is not None:
                sig = Signature(source.args)
        prior = self.functions.get(key)
        state = self.state(key, rec.function, "user", where)
        rec.key, rec.defined_at, rec.origin = key, where, "user"
        obj = self._object(state, fun) if fun is not None else None
        if obj is None:
            rec.reasons = self._first_trace_reasons(rec, prior, None, name, key, where, sig)
            obj = self.track(state, fun) if fun is not None else None
        elif not obj.signatures:
            rec.reasons = [MissReason("new_function", detail=f"first call of {name}")]
        else:
            rec.reasons = self._diff_reasons(sig, obj, None)
        if obj is not None:
            obj.signatures.append(sig)
            del obj.signatures[:-MAX_SIGNATURES]
            obj.pending = sig
        self.by_name[rec.function] = key
        return obj

    def without_trace(
        self,
        rec: CompileRecord,
        source: compat.LoweringSource | None,
        stage: str,
        carried: tuple[str, TracedObject | None] | None,
    ) -> TracedObject | None:
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
        if stage == "lower":
            inspected = self._take_inspected(rec.function, key, known, source)
            if inspected is not None:
                return self._compile_inspected(rec, inspected, source)
        state = self.state(key, rec.function, "user", where)
        st = state.stats
        rec.key, rec.defined_at, rec.origin = key, st.defined_at, "user"
        first = st.compiles == 0 if stage == "compile" else st.compiles == st.lowers == 0
        if first:
            rec.reasons = [MissReason("new_function", detail=f"first compile of {rec.function}")]
        else:
            # a trace made earlier (``jax.make_jaxpr(f)``, ``f.trace``) compiled now: its
            # arguments against the ones compiled last say why, where they differ
            sig = None
            if source is not None and source.site is not None:
                sig = _signature(source.site)
            elif source is not None and source.args is not None:
                sig = Signature(source.args)
            diff = closest_diff(sig, state.compiled) if sig is not None and state.compiled else []
            if diff and diff[0].kind != "cache_cleared":
                rec.reasons = diff
            else:
                rec.reasons = [
                    MissReason(
                        "unknown",
                        detail="compiled again from a cached trace "
                        "(a transformation such as vmap or grad of it, or other "
                        "sharding, layout or compiler options)",
                    )
                ]
            if sig is not None:
                state.compiled.append(sig)
                del state.compiled[:-MAX_SIGNATURES]
        self.by_name[rec.function] = key
        return None

    def credit(self, rec: CompileRecord, obj: TracedObject | None) -> None:
        """Add a finished record to its function's totals (and the new executable to the
        object that owns it).  The workbench's own inspections are not the function's
        work: their executables are the inspection's, never in the function's cache."""
        if rec.origin == "workbench":
            return
        state = self.functions.get(rec.key) or self.state(
            rec.key, rec.function, rec.origin, rec.defined_at
        )
        st = state.stats
        st.function = rec.function
        st.add(rec)
        if rec.kind == "compile" and obj is not None and obj.alive():
            obj.entries += 1  # the traced object owns the new executable
            if obj.pending is not None:  # its argument types now have an executable
                obj.compiled.append(obj.pending)
                del obj.compiled[:-MAX_SIGNATURES]
                state.compiled.append(obj.pending)
                del state.compiled[:-MAX_SIGNATURES]
                obj.pending = None
        if rec.reasons:
            st.misses.append(rec)
            del st.misses[:-MAX_SIGNATURES]
            if rec.is_recompile:
                st.recompiles += 1


__all__ = [
    "MAX_FUNCTIONS",
    "MAX_INSPECTED",
    "MAX_SIGNATURES",
    "Attribution",
    "InspectedTrace",
    "FunctionState",
    "TracedObject",
    "call_site",
    "explanation_for",
    "function_key",
    "traced_function",
    "user_defined",
]

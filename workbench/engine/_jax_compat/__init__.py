"""The one place that touches JAX internals.

JAX moves its private modules between releases (0.10.x here, 0.11.x on GPU
machines), so every use of ``jax._src`` or a private attribute is feature-detected
here and degrades to ``None`` / a neutral answer instead of raising.  The rest of
the package imports only the functions below, and ``tests/test_compat.py`` checks
each of them against the installed JAX so a move shows up as one failing test,
not as a broken notebook.
"""

from __future__ import annotations

import functools
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import jax

from workbench.engine.common.source import SourceLine

# Each may be missing in some JAX version: typed as optional, checked before use.
_jex_core: types.ModuleType | None
_siu: types.ModuleType | None
_src_core: types.ModuleType | None

try:  # public since JAX 0.4.3x
    import jax.extend.core as _jex_core
except Exception:  # pragma: no cover - very old or very new JAX
    _jex_core = None

try:
    from jax._src import source_info_util as _siu
except Exception:  # pragma: no cover - moved
    _siu = None

try:
    from jax._src import core as _src_core
except Exception:  # pragma: no cover - moved
    _src_core = None


def _core_attr(name: str) -> Any:
    for mod in (_jex_core, _src_core):
        if mod is not None and hasattr(mod, name):
            return getattr(mod, name)
    return None


ClosedJaxpr: Any = _core_attr("ClosedJaxpr")
Jaxpr: Any = _core_attr("Jaxpr")
Literal: Any = _core_attr("Literal")
DropVar: Any = _core_attr("DropVar")


def _gspmd_sharding_class() -> Any:
    try:
        from jax._src.sharding_impls import GSPMDSharding as cls
    except Exception:  # pragma: no cover - moved or removed
        return getattr(jax.sharding, "GSPMDSharding", None)
    return cls


#: JAX's sharding given by an XLA HloSharding over a device list (private since it left
#: ``jax.sharding``); None where this JAX has none.  ``layout`` recognises it by name;
#: tests build one here to check a non-mesh sharding is placed by JAX's own answer.
GSPMDSharding: Any = _gspmd_sharding_class()

#: Which optional capabilities were found in the installed JAX (shown by ``doctor``).
FEATURES: dict[str, bool] = {
    "jax.extend.core": _jex_core is not None,
    "source_info_util.user_frame": _siu is not None and hasattr(_siu, "user_frame"),
    "source_info_util.register_exclusion": _siu is not None
    and hasattr(_siu, "register_exclusion"),
}
try:  # a jit wrapper costs nothing until called; nothing is traced here
    FEATURES["PjitFunction._jit_info"] = hasattr(jax.jit(lambda x: x), "_jit_info")
except Exception:  # pragma: no cover
    FEATURES["PjitFunction._jit_info"] = False


#: True on JAX >= 0.11, where ``ClosedJaxpr`` is an alias of ``Jaxpr``: one type holds
#: the equations and the constant values (``.consts``; ``.jaxpr`` returns the object
#: itself).  Before, a ``ClosedJaxpr`` wrapped a ``Jaxpr`` (``.jaxpr``) plus ``.consts``.
#: Also true if a later JAX drops the alias but keeps ``consts`` on ``Jaxpr``.
JAXPR_TYPES_MERGED: bool = Jaxpr is not None and (
    ClosedJaxpr is Jaxpr or (ClosedJaxpr is None and hasattr(Jaxpr, "consts")))

_JAXPR_TYPES: tuple[type, ...] = tuple(
    t for t in dict.fromkeys((Jaxpr, ClosedJaxpr)) if isinstance(t, type))
_CLOSED_TYPES: tuple[type, ...] = (
    (Jaxpr,) if JAXPR_TYPES_MERGED else (ClosedJaxpr,) if isinstance(ClosedJaxpr, type) else ())


def is_jaxpr(obj: Any) -> bool:
    """A jaxpr of either shape (closed or open, merged type or not): what a builder
    walking equation params should descend into."""
    return isinstance(obj, _JAXPR_TYPES)


def is_closed_jaxpr(obj: Any) -> bool:
    """``obj`` carries its constant values (``.consts``) beside its equations.

    Every jaxpr on a merged-type JAX; only a ``ClosedJaxpr`` before that.
    """
    return isinstance(obj, _CLOSED_TYPES)


def is_open_jaxpr(obj: Any) -> bool:
    """``obj`` is the type that holds the equations (``Jaxpr``); on a merged-type JAX
    that is every jaxpr, closed or not."""
    return Jaxpr is not None and isinstance(obj, Jaxpr)


def open_jaxpr(obj: Any) -> Any:
    """The object whose ``constvars``/``invars``/``eqns``/``outvars`` describe ``obj``.

    The inner ``Jaxpr`` of a (pre-0.11) ``ClosedJaxpr``; the jaxpr itself otherwise
    (including on 0.11, whose legacy ``.jaxpr`` returns ``self`` and may go away).
    """
    if is_open_jaxpr(obj):
        return obj
    inner = getattr(obj, "jaxpr", None)
    return inner if is_open_jaxpr(inner) else obj


def jaxpr_consts(obj: Any) -> list[Any]:
    """The constant values bound to a jaxpr's ``constvars`` ([] for an open one)."""
    if not is_closed_jaxpr(obj):
        return []
    return list(getattr(obj, "consts", None) or ())


def is_literal(atom: Any) -> bool:
    if Literal is not None:
        return isinstance(atom, Literal)
    return type(atom).__name__ == "Literal"


def is_dropvar(var: Any) -> bool:
    if DropVar is not None:
        return isinstance(var, DropVar)
    return type(var).__name__ == "DropVar"


def user_frame(source_info: Any) -> SourceLine | None:
    """The user's source line (with its column) for a jaxpr equation's ``source_info``, or None.

    Returned as the package's one source record, so nothing downstream converts it.
    """
    if _siu is None or source_info is None:
        return None
    tb = getattr(source_info, "traceback", None)
    if tb is None:
        return None
    try:
        frame = _siu.user_frame(tb)
    except Exception:
        return None
    if frame is None:
        return None
    return SourceLine(
        file=str(getattr(frame, "file_name", "")),
        line=int(getattr(frame, "start_line", 0) or 0),
        function=str(getattr(frame, "function_name", "")),
        column=int(getattr(frame, "start_column", 0) or 0),
    )


def name_stack(source_info: Any) -> str:
    """The transform/scope name stack of an equation (e.g. ``jvp(loss)/mlp``)."""
    ns = getattr(source_info, "name_stack", None)
    return "" if ns is None else str(ns)


_excluded: set[str] = set()


def exclude_path_from_user_frames(path: str) -> bool:
    """Tell JAX that frames under ``path`` (our own wrappers) are not the user's.

    Without this, equations created inside our transform wrappers would be
    attributed to ``workbench/engine/transforms.py`` instead of the user's line.
    """
    if _siu is None or not hasattr(_siu, "register_exclusion"):
        return False
    path = os.path.abspath(path).rstrip(os.sep) + os.sep
    if path in _excluded:
        return True
    try:
        _siu.register_exclusion(path)
        # register_exclusion invalidates its regex cache itself in recent JAX;
        # clear the filename cache too, which older versions forgot.
        if hasattr(_siu, "is_user_filename") and hasattr(_siu.is_user_filename, "cache_clear"):
            _siu.is_user_filename.cache_clear()
        if hasattr(_siu, "user_frame") and hasattr(_siu.user_frame, "cache_clear"):
            _siu.user_frame.cache_clear()
    except Exception:
        return False
    _excluded.add(path)
    return True


def is_jitted(fn: Any) -> bool:
    """True for a function already wrapped by ``jax.jit`` (it has AOT ``trace``)."""
    return callable(getattr(fn, "trace", None)) and callable(getattr(fn, "lower", None))


@dataclass(frozen=True)
class JitSettings:
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    donate_argnums: tuple[int, ...] = ()


def jit_settings(fn: Any) -> JitSettings | None:
    """The static/donate settings a ``jax.jit`` wrapper was created with, if readable."""
    info = getattr(fn, "_jit_info", None)
    if info is None:
        return None
    try:
        return JitSettings(
            static_argnums=tuple(getattr(info, "static_argnums", ()) or ()),
            static_argnames=tuple(getattr(info, "static_argnames", ()) or ()),
            donate_argnums=tuple(getattr(info, "donate_argnums", ()) or ()),
        )
    except Exception:
        return None


def jitted_inner(fn: Any) -> Any:
    """The Python function inside a ``jax.jit`` wrapper (for naming), else ``fn``."""
    return getattr(fn, "_fun", None) or getattr(fn, "__wrapped__", None) or fn


# --- the cache feature's JAX events --------------------------------------------------------
# Event names JAX records through ``jax.monitoring``; read from JAX where it exposes them so
# a rename shows up in tests/test_compat.py, with the 0.10 names as the fallback.
_dispatch: types.ModuleType | None
try:
    from jax._src import dispatch as _dispatch
except Exception:  # pragma: no cover - moved
    _dispatch = None

TRACE_EVENT: str = getattr(_dispatch, "JAXPR_TRACE_EVENT", "/jax/core/compile/jaxpr_trace_duration")
LOWER_EVENT: str = getattr(_dispatch, "JAXPR_TO_MLIR_MODULE_EVENT",
                           "/jax/core/compile/jaxpr_to_mlir_module_duration")
COMPILE_EVENT: str = getattr(_dispatch, "BACKEND_COMPILE_EVENT",
                             "/jax/core/compile/backend_compile_duration")

# The persistent compilation cache's events (JAX spells them out at each call site; it
# exports no constants for them).
#: a compile that will consult the persistent cache (an event, before the lookup)
PCACHE_REQUEST_EVENT = "/jax/compilation_cache/compile_requests_use_cache"
#: the persistent cache answered (an event)
PCACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"
#: JAX wrote an entry; it names this event "cache_misses" (an event)
PCACHE_WRITE_EVENT = "/jax/compilation_cache/cache_misses"
#: compile time saved by a hit, less the time reading it took (a duration, may be < 0)
PCACHE_SAVED_EVENT = "/jax/compilation_cache/compile_time_saved_sec"

#: Loggers JAX writes ``jax_explain_cache_misses`` output to (tracing-cache misses first).
EXPLAIN_LOGGERS: tuple[str, ...] = (
    "jax._src.interpreters.partial_eval", "jax._src.compiler", "jax._src.compilation_cache")

_JAX_DIR = os.path.dirname(os.path.abspath(jax.__file__)) + os.sep
# The pjit frame that is live while a top-level jit trace finishes (its locals describe the
# call: the Python function, argument paths, abstract values, static arguments).
_TRACE_FRAMES = frozenset({"_trace_for_jit", "_infer_params_impl"})


@dataclass(frozen=True)
class ArgType:
    """The abstract type of one traced argument leaf, as plain strings (no data held)."""

    path: str
    text: str  # e.g. "f32[3]"
    shape: tuple[int, ...]
    dtype: str
    weak: bool
    sharding: str  # "" when the aval carries no mesh sharding


@dataclass(frozen=True)
class JitTraceSite:
    """What a finishing jit trace was called with; ``fun`` must only be weakly kept.

    ``static_tokens`` say whether two static values are the same for JAX's cache (which
    compares them by hash and ``==``) without keeping the values: the hash where the
    value is hashable, else its ``id``.  ``tree`` is the pytree structure of the
    (args, kwargs) call; ``failed`` is True when the trace raised.
    """

    fun: Any
    args: tuple[ArgType, ...]
    statics: tuple[tuple[str, str], ...]  # (parameter name, repr of the value)
    internal: bool  # JAX's own helper (e.g. convert_element_type for an eager op)
    static_tokens: tuple[tuple[str, Any], ...] = ()
    tree: str = ""
    tree_hash: int = 0
    failed: bool = False
    eager_primitive: bool = False  # JAX's jit of one primitive for eager dispatch


@dataclass(frozen=True)
class LoweringSource:
    """The function a lowering without a fresh trace comes from (its jaxpr's debug info).

    ``user`` is True when the program holds code defined outside JAX: the function
    itself, or a body it runs (the user's function under an eager ``lax.scan``).
    """

    name: str
    where: str  # "file:line", "" when unknown
    user: bool


def _aval_type(path: str, aval: Any) -> ArgType:
    shape = tuple(int(d) if isinstance(d, int) else -1 for d in getattr(aval, "shape", ()))
    try:
        text = aval.str_short(True)
    except Exception:
        text = str(aval)
    sharding = ""
    sh = getattr(aval, "sharding", None)
    mesh = getattr(sh, "mesh", None)
    if mesh is not None and not getattr(mesh, "empty", True):
        sharding = str(getattr(sh, "spec", sh))
    dtype = str(getattr(aval, "dtype", ""))
    return ArgType(path, text, shape, dtype, bool(getattr(aval, "weak_type", False)), sharding)


def _short_repr(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _static_token(value: Any) -> Any:
    """Equal for two values JAX's cache treats as the same static argument (by hash)."""
    try:
        return ("hash", type(value).__qualname__, hash(value))
    except Exception:
        return ("id", id(value))


def _static_names(fun: Any, ji: Any, n_args: int) -> dict[int, str]:
    sig = getattr(ji, "fun_signature", None)
    if sig is None:
        try:
            import inspect as _inspect
            sig = _inspect.signature(fun)
        except Exception:
            sig = None
    names = list(sig.parameters) if sig is not None else []
    return {i: (names[i] if i < len(names) else f"args[{i}]") for i in range(n_args)}


def innermost_function(fun: Any) -> Any:
    """Follow ``__wrapped__`` (functools.wraps, JAX transforms) and ``partial.func``."""
    return unwrap_chain(fun)[1]


def unwrap_chain(fun: Any) -> tuple[tuple[Any, ...], Any]:
    """(the wrapper layers, outermost first; the innermost function) of ``fun``."""
    layers: list[Any] = []
    inner = fun
    for _ in range(16):
        nxt = getattr(inner, "__wrapped__", None) or getattr(inner, "func", None)
        if nxt is None or nxt is inner:
            break
        layers.append(inner)
        inner = nxt
    return tuple(layers), inner


def function_code(fun: Any) -> Any:
    """The code object that runs when ``fun`` is called: the function's own, or for a
    callable instance its class's ``__call__`` (so different classes stay apart)."""
    code = getattr(fun, "__code__", None)
    if code is None and not isinstance(fun, type):
        call = type(fun).__dict__.get("__call__") or next(
            (k.__dict__["__call__"] for k in type(fun).__mro__ if "__call__" in k.__dict__),
            None)
        code = getattr(call, "__code__", None)
    return code


def _in_jax(code: Any) -> bool:
    filename = getattr(code, "co_filename", "") or ""
    return bool(filename) and os.path.abspath(filename).startswith(_JAX_DIR)


def is_jax_internal(fun: Any) -> bool:
    """A function JAX jitted for itself (the eager-op helpers), not one the user jitted.

    Only a plain Python function defined inside JAX (with nothing but JAX code under
    any ``functools.wraps`` layers) counts: what the user passes to ``jax.jit`` is a
    function of theirs, a transform of one (``jax.grad(loss)`` wraps ``loss``), or a
    JAX object they chose (``jax.jit(jax.nn.relu)`` jits a ``custom_jvp``).
    """
    if not isinstance(fun, types.FunctionType):
        return False
    layers, inner = unwrap_chain(fun)
    return all(_in_jax(function_code(f)) for f in (*layers, inner))


def transform_names(fun: Any) -> tuple[str, ...]:
    """The transform/wrapper layers around the innermost function, outermost first:
    ``("grad",)`` for ``jax.grad(loss)``; ``functools.partial`` shows as "partial"."""
    out = []
    for layer in unwrap_chain(fun)[0]:
        code = function_code(layer)
        if isinstance(layer, functools.partial):
            out.append("partial")
        elif code is not None and isinstance(layer, types.FunctionType):
            if _in_jax(code):
                # JAX's transforms return their grad_f / vmap_f inside an error-filtering
                # wrapper (``api_boundary``) that takes the user's name: look one closure in
                for cell in layer.__closure__ or ():
                    try:
                        inner = cell.cell_contents
                    except ValueError:
                        continue
                    if isinstance(inner, types.FunctionType) and _in_jax(inner.__code__):
                        code = inner.__code__
                        break
            name = code.co_name
            if _in_jax(code) and name.endswith("_f"):
                name = name[:-2]  # JAX's grad_f, vmap_f ... wrappers
            out.append(name)
        else:
            name = type(layer).__name__
            out.append("jit" if "jit" in name.lower() else name)
    return tuple(out)


def _debug_source(jaxpr: Any) -> tuple[str, str] | None:
    """(name, "file:line") from a jaxpr's debug info ("fv at /x.py:3")."""
    dbg = getattr(getattr(jaxpr, "jaxpr", jaxpr), "debug_info", None)
    info = getattr(dbg, "func_src_info", None)
    if not isinstance(info, str) or " at " not in info:
        return None
    name, _, where = info.partition(" at ")
    return name, where


def _where_in_jax(where: str) -> bool:
    file = where.rpartition(":")[0] or where
    return os.path.abspath(file).startswith(_JAX_DIR)


def runs_user_code(jaxpr: Any, max_eqns: int = 64) -> bool:
    """Whether a jaxpr (or a body it calls, one level down) was traced from code defined
    outside JAX.  Only the debug info is read; big programs stop at ``max_eqns``."""
    src = _debug_source(jaxpr)
    if src is not None and not _where_in_jax(src[1]):
        return True
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in list(getattr(inner, "eqns", ()))[:max_eqns]:
        for value in getattr(eqn, "params", {}).values():
            for sub in (value if isinstance(value, (tuple, list)) else (value,)):
                if hasattr(sub, "eqns") or hasattr(getattr(sub, "jaxpr", None), "eqns"):
                    s = _debug_source(sub)
                    if s is not None and not _where_in_jax(s[1]):
                        return True
    return False


_T = TypeVar("_T")


def _walk_stack(skip: int, match: Callable[[types.FrameType], bool],
                read: Callable[[types.FrameType], _T], max_depth: int = sys.maxsize) -> _T | None:
    """``read(frame)`` of the nearest frame for which ``match(frame)``, walking outwards
    from ``skip`` frames above our caller (0: the caller itself); None when no frame
    within ``max_depth`` matches.  The one stack walker of the package: the listeners
    use it to find JAX's own frame (what is being traced or lowered) and the user's line.
    """
    frame: types.FrameType | None = sys._getframe(skip + 1)
    try:
        for _ in range(max_depth):
            if frame is None:
                return None
            if match(frame):
                return read(frame)
            frame = frame.f_back
        return None
    finally:
        del frame  # a frame kept in a local would keep every frame above it alive


def _frame_locals(frame: types.FrameType) -> dict[str, Any]:
    return frame.f_locals


def user_call_site(is_user_file: Callable[[str], bool]) -> tuple[str, int, str] | None:
    """(file, line, function) of the innermost frame of user code above our caller: the
    line that made the call JAX is tracing or compiling (read from inside a listener)."""
    return _walk_stack(
        1, lambda f: is_user_file(f.f_code.co_filename),
        lambda f: (f.f_code.co_filename, f.f_lineno, f.f_code.co_name))


def lowering_source(max_depth: int = 14) -> LoweringSource | None:
    """From inside a lower-duration listener: which function's jaxpr is being lowered.

    Reads the ``closed_jaxpr`` local of JAX's lowering frame (pxla); None when not
    found (a JAX that renamed it), then the cache tracker falls back to name matching.
    """
    try:
        loc = _walk_stack(
            1, lambda f: f.f_code.co_filename.endswith("pxla.py")
            and f.f_locals.get("closed_jaxpr") is not None, _frame_locals, max_depth)
        if loc is None:
            return None
        jaxpr = loc["closed_jaxpr"]
        src = _debug_source(jaxpr)
        name, where = src if src is not None else ("?", "")
        return LoweringSource(name, where, runs_user_code(jaxpr))
    except Exception:
        return None


def jit_trace_site(max_depth: int = 12) -> JitTraceSite | None:
    """Read the call being traced from pjit's frame, from inside a trace-duration listener.

    Only called when a trace finishes (never on cached dispatch).  Returns None when
    the frame is not found, e.g. after JAX renamed its internals; the tracker then
    falls back to JAX's own text explanation.
    """
    try:
        loc = _walk_stack(
            1, lambda f: f.f_code.co_name in _TRACE_FRAMES
            and f.f_code.co_filename.endswith("pjit.py"), _frame_locals, max_depth)
        return None if loc is None else _site_from_locals(loc)
    except Exception:
        return None


def _site_from_locals(loc: dict[str, Any]) -> JitTraceSite | None:
    fun = loc.get("fun")
    avals = loc.get("avals")
    if avals is None:
        avals = loc.get("in_avals")
    dbg = loc.get("dbg")
    ji = loc.get("ji") or loc.get("jit_info")
    if fun is None or avals is None:
        return None
    avals = tuple(avals)
    names = tuple(getattr(dbg, "arg_names", None) or ())
    if len(names) != len(avals):
        names = tuple(f"args[{i}]" for i in range(len(avals)))
    args = tuple(_aval_type(n, a) for n, a in zip(names, avals, strict=True))
    statics: list[tuple[str, str]] = []
    tokens: list[tuple[str, Any]] = []
    call_args = loc.get("args") or ()
    call_kwargs = loc.get("kwargs") or {}
    argnums = tuple(getattr(ji, "static_argnums", ()) or ())
    argnames = tuple(getattr(ji, "static_argnames", ()) or ())
    if argnums:
        labels = _static_names(fun, ji, len(call_args))
        for i in argnums:
            if 0 <= i < len(call_args):
                statics.append((labels[i], _short_repr(call_args[i])))
                tokens.append((labels[i], _static_token(call_args[i])))
    for name in argnames:
        if name in call_kwargs:
            statics.append((name, _short_repr(call_kwargs[name])))
            tokens.append((name, _static_token(call_kwargs[name])))
    tree_text, tree_hash = "", 0
    flat = loc.get("avals_ft") or loc.get("args_ft")
    tree = getattr(flat, "tree", None) if flat is not None else loc.get("in_tree")
    if tree is not None:
        try:
            full = str(tree)
            tree_hash = hash(full)
            tree_text = _short_repr_text(full.removeprefix("PyTreeDef(").removesuffix(")"))
        except Exception:
            tree_text, tree_hash = "", 0
    jaxpr = loc.get("jaxpr")
    # the trace event also fires when tracing raised: then no jaxpr was made
    failed = jaxpr is None and sys.exc_info()[1] is not None
    internal = is_jax_internal(fun) and not (jaxpr is not None and runs_user_code(jaxpr))
    return JitTraceSite(fun=fun, args=args, statics=tuple(statics), internal=internal,
                        static_tokens=tuple(tokens), tree=tree_text, tree_hash=tree_hash,
                        failed=failed,
                        eager_primitive=bool(getattr(fun, "_apply_primitive", False)))


def _short_repr_text(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _explain_state() -> Any:
    try:
        from jax._src import config as _config
    except Exception:  # pragma: no cover - moved
        return None
    state = getattr(_config, "explain_cache_misses", None)
    needed = ("swap_local", "set_local", "get_global")
    return state if all(hasattr(state, n) for n in needed) else None


_EXPLAIN_OPTION = "jax_explain_cache_misses"


def explanations_requested() -> bool:
    """Whether the user turned ``jax_explain_cache_misses`` on globally (then its log
    messages are theirs to see), read fresh each time."""
    state = _explain_state()
    if state is not None:
        return bool(state.get_global())
    # a config option is a dynamic attribute of jax.config (unknown to type checkers)
    return bool(getattr(jax.config, _EXPLAIN_OPTION))


def explain_on_this_thread() -> tuple[Any] | None:
    """Turn ``jax_explain_cache_misses`` on for the calling thread only, leaving the
    global value (the user's) alone; returns what :func:`restore_explain` puts back, or
    None when nothing was changed (already on, or a JAX without thread-local config).
    The option is in neither the jit key nor the trace context, so caches are unaffected.
    """
    state = _explain_state()
    if state is None or state.value:
        return None
    return (state.swap_local(True),)


def restore_explain(token: tuple[Any] | None) -> None:
    if token is not None:
        state = _explain_state()
        if state is not None:
            state.set_local(token[0])


def unregister_monitoring_listener(kind: str, callback: Any) -> bool:
    """Remove a ``jax.monitoring`` listener; ``kind`` is "event" or "duration".

    The public ``unregister_*`` functions exist in recent JAX; older ones only had
    ``clear_event_listeners`` (which would drop other people's listeners too), so
    there we remove ours from the private list instead.
    """
    import jax.monitoring as mon

    public = {"event": "unregister_event_listener",
              "duration": "unregister_event_duration_listener"}[kind]
    fn = getattr(mon, public, None)
    try:
        if fn is not None:
            fn(callback)
            return True
        from jax._src import monitoring as _mon
        lst = {"event": "_event_listeners",
               "duration": "_event_duration_secs_listeners"}[kind]
        getattr(_mon, lst).remove(callback)
        return True
    except (AssertionError, ValueError, AttributeError, ImportError):
        return False


def monitoring_listeners(kind: str) -> list[Any]:
    """The listeners currently registered (for tests of a clean unload)."""
    from jax._src import monitoring as _mon

    getter = {"event": "get_event_listeners",
              "duration": "get_event_duration_listeners"}[kind]
    fn = getattr(_mon, getter, None)
    if fn is not None:
        return list(fn())
    lst = {"event": "_event_listeners", "duration": "_event_duration_secs_listeners"}[kind]
    return list(getattr(_mon, lst, []))


def available_backends() -> list[str]:
    """Platform names of the backends this JAX initialised (e.g. ``["cpu"]``).

    Uses ``xla_bridge.backends()`` where present (private); otherwise probes the
    common platform names with the public ``jax.devices(name)``.
    """
    try:
        from jax._src import xla_bridge

        names = sorted(xla_bridge.backends().keys())
        if names:
            return names
    except Exception:
        pass
    found = []
    for name in ("cpu", "gpu", "cuda", "rocm", "tpu"):
        try:
            if jax.devices(name):
                found.append(name)
        except Exception:
            continue
    return found or [jax.default_backend()]


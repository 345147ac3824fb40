"""The package's one stack walker, and the JAX frames it looks for from inside a listener.

``jax.monitoring`` listeners are called with a name and a duration only; what is being
traced or lowered, and from which line of the user's, is read from the stack.  Wraps
the names of JAX's frames: ``pxla.py`` with its ``closed_jaxpr`` local (a lowering) and
``pjit.py``'s ``_trace_for_jit`` / ``_infer_params_impl`` (a top-level jit trace, whose
locals :mod:`.trace_site` reads).  Each answer is None when the frame is not found, so a
JAX that renamed them degrades the cache's attribution instead of breaking it.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from workbench.engine._jax_compat.jit import (
    bound_jitted,
    debug_source,
    is_jitted,
    runs_user_code,
)
from workbench.engine._jax_compat.trace_site import (
    ArgType,
    JitTraceSite,
    aval_text,
    aval_type,
    site_from_locals,
)

# The pjit frame that is live while a top-level jit trace finishes (its locals describe the
# call: the Python function, argument paths, abstract values, static arguments).
_TRACE_FRAMES = frozenset({"_trace_for_jit", "_infer_params_impl"})


@dataclass(frozen=True)
class LoweringSource:
    """The function a lowering without a fresh trace comes from (its jaxpr's debug info).

    ``user`` is True when the program holds code defined outside JAX: the function
    itself, or a body it runs (the user's function under an eager ``lax.scan``).
    """

    name: str
    where: str  # "file:line", "" when unknown
    user: bool
    #: the lowered program's input types (``f32[3]``), as the trace site writes them;
    #: None when unknown
    in_types: tuple[str, ...] | None = None
    #: ``id`` of the jaxpr being lowered (that of the trace it comes from); 0 when unknown
    jaxpr_id: int = 0
    #: the Python function the jit being called wraps (pjit's ``fun``), None when unknown
    #: or lowered ahead of time: the object a later trace of the same jit reads.  Only
    #: for the listener's use: never stored (it would keep the user's function alive)
    fun: Any = field(default=None, compare=False, repr=False)
    #: the traced jaxpr's arguments, named as a trace site names them (its debug info);
    #: None when unknown
    args: tuple[ArgType, ...] | None = None
    #: the call being run, read as a trace site reads it (argument names as the user
    #: wrote them, static arguments, tree): what a later trace of the same jit is
    #: compared with.  None when unknown; like ``fun``, only for the listener's use
    site: JitTraceSite | None = field(default=None, compare=False, repr=False)


_T = TypeVar("_T")


def _walk_stack(
    skip: int,
    match: Callable[[types.FrameType], bool],
    read: Callable[[types.FrameType], _T],
    max_depth: int = sys.maxsize,
) -> _T | None:
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
        1,
        lambda f: is_user_file(f.f_code.co_filename),
        lambda f: (f.f_code.co_filename, f.f_lineno, f.f_code.co_name),
    )


def lowering_source(max_depth: int = 14) -> LoweringSource | None:
    """From inside a lower-duration listener: which function's jaxpr is being lowered.

    Reads the ``closed_jaxpr`` local of JAX's lowering frame (pxla); None when not
    found (a JAX that renamed it), then the cache tracker falls back to name matching.
    """
    try:
        loc = _walk_stack(
            1,
            lambda f: (
                f.f_code.co_filename.endswith("pxla.py")
                and f.f_locals.get("closed_jaxpr") is not None
            ),
            _frame_locals,
            max_depth,
        )
        if loc is None:
            return None
        jaxpr = loc["closed_jaxpr"]
        src = debug_source(jaxpr)
        name, where = src if src is not None else ("?", "")
        # the traced jaxpr (pxla lowers a processed copy): pjit's frame that calls it
        traced = _walk_stack(
            1,
            lambda f: (
                f.f_code.co_filename.endswith("pjit.py") and f.f_locals.get("jaxpr") is not None
            ),
            _frame_locals,
            max_depth + 6,
        )
        inner = None if traced is None else getattr(traced["jaxpr"], "jaxpr", None)
        jaxpr_id = 0 if inner is None else id(inner)
        # the call being run (``f(x)``, not ``f.lower(x)``): pjit's frame holding its function
        call = _walk_stack(
            1,
            lambda f: (
                f.f_code.co_name == "_run_python_pjit" and f.f_code.co_filename.endswith("pjit.py")
            ),
            _frame_locals,
            max_depth + 10,
        )
        fun = None if call is None else call.get("fun")
        return LoweringSource(
            name,
            where,
            runs_user_code(jaxpr),
            _in_types(jaxpr),
            jaxpr_id,
            fun,
            _arg_types(traced["jaxpr"] if traced is not None else jaxpr),
            _running_call_site(max_depth + 12) if fun is not None else None,
        )
    except Exception:
        return None


def _running_call_site(max_depth: int) -> JitTraceSite | None:
    """The call a lowering runs (``f(x)`` compiling a trace JAX had cached), read from
    pjit's ``cache_miss`` frame as a trace site is from the trace frame: a call whose
    trace was the workbench's (nested in its own jit) is then recorded with the same
    signature (Equinox's names mapped, statics, tree) as a later trace of it."""
    found = _walk_stack(
        2,
        lambda f: (
            f.f_code.co_name == "cache_miss"
            and f.f_code.co_filename.endswith("pjit.py")
            and "jit_info" in f.f_locals
            and "p" in f.f_locals
        ),
        lambda f: (f.f_locals, f.f_globals.get("FlatTree")),
        max_depth,
    )
    if found is None:
        return None
    loc, flat_tree = found
    try:
        p, ji = loc["p"], loc["jit_info"]
        args, kwargs = tuple(loc.get("args") or ()), dict(loc.get("kwargs") or {})
        site_loc: dict[str, Any] = {
            "fun": loc.get("fun"),
            "avals": tuple(p.in_avals),
            "ji": ji,
            "args": args,
            "kwargs": kwargs,
            "dbg": types.SimpleNamespace(arg_names=tuple(p.arg_names)),
            "jaxpr": p.params.get("jaxpr"),
        }
        if flat_tree is not None:
            # the trace frame's tree (with the static arguments), not p.in_tree (without)
            site_loc["args_ft"] = flat_tree.flatten_static_argnums_argnames(
                args, kwargs, ji.static_argnums, ji.static_argnames
            )
        return site_from_locals(site_loc)
    except Exception:
        return None


def _arg_types(closed_jaxpr: Any) -> tuple[ArgType, ...] | None:
    try:
        avals = tuple(closed_jaxpr.in_avals)
        names = tuple(getattr(closed_jaxpr.jaxpr.debug_info, "arg_names", None) or ())
        if len(names) != len(avals) or not all(isinstance(n, str) and n for n in names):
            names = tuple(f"args[{i}]" for i in range(len(avals)))
        return tuple(aval_type(n, a) for n, a in zip(names, avals, strict=True))
    except Exception:
        return None


def _in_types(closed_jaxpr: Any) -> tuple[str, ...] | None:
    try:
        return tuple(aval_text(a) for a in closed_jaxpr.in_avals)
    except Exception:
        return None


def outermost_frame(
    match: Callable[[str, str, Callable[[], dict[str, Any]]], _T | None],
) -> _T | None:
    """The last non-None ``match(filename, function name, locals getter)`` walking
    outwards from our caller: the outermost frame of a kind (the magic that called the
    Python twin that called the engine).  Locals are read only if ``match`` asks."""
    frame: types.FrameType | None = sys._getframe(1)
    found: _T | None = None
    try:
        while frame is not None:
            hit = match(
                frame.f_code.co_filename,
                frame.f_code.co_name,
                functools.partial(_frame_locals, frame),
            )
            if hit is not None:
                found = hit
            frame = frame.f_back
        return found
    finally:
        del frame


def jit_trace_site(max_depth: int = 12) -> JitTraceSite | None:
    """Read the call being traced from pjit's frame, from inside a trace-duration listener.

    Only called when a trace finishes (never on cached dispatch).  Returns None when
    the frame is not found, e.g. after JAX renamed its internals; the tracker then
    falls back to JAX's own text explanation.
    """
    try:
        found = _walk_stack(
            1,
            lambda f: (
                f.f_code.co_name in _TRACE_FRAMES and f.f_code.co_filename.endswith("pjit.py")
            ),
            lambda f: (f.f_locals, jit_maker(f)),
            max_depth,
        )
        if found is None:
            return None
        site = site_from_locals(found[0])
        maker = found[1]
        if (
            site is not None
            and maker is not None
            and maker[1] is site.fun
            # ``jax.make_jaxpr(f)`` of the user's own jit (or a method bound from one)
            # runs that jit: the record keeps its name
            and not is_jitted(site.fun)
            and bound_jitted(site.fun) is None
        ):
            site = dataclasses.replace(site, maker=maker[0])
        return site
    except Exception:
        return None


#: JAX's own functions that make a ``jit`` of the function they are given and trace it:
#: (file name suffix, frame's function name) -> what the user called
_JIT_MAKERS = {
    ("api.py", "make_jaxpr_f"): "make_jaxpr",
    ("api.py", "eval_shape"): "eval_shape",
}


def jit_maker(frame: types.FrameType, depth: int = 10) -> tuple[str, Any] | None:
    """(what the user called, the function it was given) when the jit being traced in
    pjit's ``frame`` was made by JAX itself (``jax.make_jaxpr(np.sum)`` traces a
    ``jit(sum)`` nobody wrote); None for a ``jit`` of the user's.  Looks a few frames out
    for the maker's frame, and reads its ``fun`` so the caller can check it is the very
    function traced (a nested jit of the user's inside it is the user's)."""
    f: types.FrameType | None = frame.f_back
    try:
        for _ in range(depth):
            if f is None:
                return None
            code = f.f_code
            name = code.co_name
            if "jax" in code.co_filename:
                for (suffix, fname), label in _JIT_MAKERS.items():
                    if name == fname and code.co_filename.endswith(suffix):
                        return label, f.f_locals.get("fun")
            f = f.f_back
        return None
    finally:
        del f

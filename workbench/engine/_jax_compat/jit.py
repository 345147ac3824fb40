"""What a ``jax.jit`` wrapper holds, and whether a function (or a jaxpr) is JAX's own code.

Wraps the private attributes of JAX's jit wrapper (``PjitFunction._jit_info`` for the
static/donate settings, ``_fun`` for the wrapped function), the ``__wrapped__`` chains
JAX's transforms leave (``grad_f``, ``vmap_f`` inside ``api_boundary``), and the
``debug_info.func_src_info`` of a jaxpr.  "JAX's own" means defined under the installed
``jax`` package: the cache tracker uses it to tell the user's compiles from the jits JAX
makes for itself (eager ops).
"""

from __future__ import annotations

import functools
import os
import types
from dataclasses import dataclass
from typing import Any

import jax

_JAX_DIR = os.path.dirname(os.path.abspath(jax.__file__)) + os.sep


# The type ``jax.jit`` returns (``PjitFunction``), taken from a public call so no private
# import is needed.  Other libraries' jit wrappers (``nnx.jit``, ``eqx.filter_jit``) also
# have ``.trace``/``.lower``, but return their own objects from them: only this type
# gives ``jax.stages.Traced``.
_JIT_TYPE: type = type(jax.jit(lambda: None))


def is_jitted(fn: Any) -> bool:
    """True exactly for a function wrapped by ``jax.jit`` (not a method bound from one,
    not another library's jit wrapper: those are inspected as plain callables)."""
    return isinstance(fn, _JIT_TYPE)


def bound_jitted(fn: Any) -> tuple[Any, Any] | None:
    """``(the jax.jit function, self)`` for a method defined with ``jax.jit``
    (``@partial(jax.jit, static_argnums=0) def apply(self, x)``), else None: its
    ``.trace`` would drop ``self``, so the caller passes it back explicitly."""
    if isinstance(fn, types.MethodType) and is_jitted(fn.__func__):
        return fn.__func__, fn.__self__
    return None


def transform_label(fn: Any, name: str) -> str:
    """``name`` wrapped in the JAX transforms around ``fn``: ``grad(loss)`` for
    ``jax.grad(loss)`` (they copy ``loss``'s ``__name__``, so the name alone would
    hide the transform).  jit layers and ``functools.partial`` add nothing."""
    layers, inner = unwrap_chain(fun=fn)
    chain = (*layers, inner)
    for k in range(len(layers) - 1, -1, -1):
        layer = layers[k]
        if not isinstance(layer, types.FunctionType) or not _in_jax(layer.__code__):
            continue
        code = layer.__code__
        for cell in layer.__closure__ or ():  # look inside JAX's api_boundary wrapper
            try:
                found = cell.cell_contents
            except ValueError:
                continue
            if (
                isinstance(found, types.FunctionType)
                and found is not chain[k + 1]
                and _in_jax(found.__code__)
                and "<locals>" in found.__code__.co_qualname
            ):
                code = found.__code__
                break
        outer = code.co_qualname.split(".<locals>")[0] if "<locals>" in code.co_qualname else ""
        # a private helper (``_auto_axes`` behind ``jax.sharding.auto_axes``) is no name a
        # user wrote or can look up: the label (and an error's "while tracing ...") keeps
        # the user's function instead
        if outer and outer.isidentifier() and outer != "jit" and not outer.startswith("_"):
            name = f"{outer}({name})"
    return name


def make_jaxpr_target(fn: Any) -> tuple[Any, tuple[int, ...]] | None:
    """``(fun, static_argnums)`` when ``fn`` is what ``jax.make_jaxpr(fun, static_argnums=...)``
    returned, else None.

    A cell ending in ``jax.make_jaxpr(f)(x)`` asks for the jaxpr of ``f(x)``: tracing the
    ``make_jaxpr`` wrapper itself would fail (it returns a jaxpr, no JAX type).  Read from
    the closure of JAX's ``make_jaxpr_f``; a wrapper made with ``axis_env`` or
    ``return_shape`` (or one this JAX builds differently) gives None and is traced as is.
    """
    if not isinstance(fn, types.FunctionType) or not _in_jax(fn.__code__):
        return None
    candidates = [fn, *_closure_functions(fn)]
    for f in candidates:
        if f.__code__.co_name != "make_jaxpr_f" or not _in_jax(f.__code__):
            continue
        env = dict(zip(f.__code__.co_freevars, _cell_values(f), strict=False))
        fun = env.get("fun", _MISSING)
        if fun is _MISSING or env.get("axis_env") or env.get("return_shape"):
            return None
        static = env.get("static_argnums", ())
        static = (static,) if isinstance(static, int) else tuple(static or ())
        if isinstance(fun, functools.partial) and not fun.args and not fun.keywords:
            fun = fun.func  # make_jaxpr's own wrapping of what it cannot weak-reference
        return fun, static
    return None


_MISSING = object()


def _cell_values(f: types.FunctionType) -> list[Any]:
    out = []
    for cell in f.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # an empty cell
            out.append(_MISSING)
    return out


def _closure_functions(f: types.FunctionType) -> list[types.FunctionType]:
    return [v for v in _cell_values(f) if isinstance(v, types.FunctionType)]


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
            (k.__dict__["__call__"] for k in type(fun).__mro__ if "__call__" in k.__dict__), None
        )
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
    layers, inner = unwrap_chain(fun)
    if isinstance(inner, types.MethodType):
        # a JAX object's method, e.g. ``partial(Primitive.bind, axis=0)`` that JAX 0.12's
        # key-reuse checker jits; a method of the user's own object is theirs
        return _in_jax(function_code(inner.__func__)) and all(
            isinstance(f, functools.partial) or _in_jax(function_code(f)) for f in layers
        )
    if not isinstance(fun, types.FunctionType):
        return False
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


def debug_source(jaxpr: Any) -> tuple[str, str] | None:
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
    src = debug_source(jaxpr)
    if src is not None and not _where_in_jax(src[1]):
        return True
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in list(getattr(inner, "eqns", ()))[:max_eqns]:
        for value in getattr(eqn, "params", {}).values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(sub, "eqns") or hasattr(getattr(sub, "jaxpr", None), "eqns"):
                    s = debug_source(sub)
                    if s is not None and not _where_in_jax(s[1]):
                        return True
    return False

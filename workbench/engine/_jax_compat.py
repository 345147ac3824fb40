"""The one place that touches JAX internals.

JAX moves its private modules between releases (0.10.x here, 0.11.x on GPU
machines), so every use of ``jax._src`` or a private attribute is feature-detected
here and degrades to ``None`` / a neutral answer instead of raising.  The rest of
the package imports only the functions below, and ``tests/test_compat.py`` checks
each of them against the installed JAX so a move shows up as one failing test,
not as a broken notebook.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import jax

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


@dataclass(frozen=True)
class UserFrame:
    """The innermost frame of user code that produced an equation."""

    file: str
    line: int
    column: int
    function: str


def is_closed_jaxpr(obj: Any) -> bool:
    return ClosedJaxpr is not None and isinstance(obj, ClosedJaxpr)


def is_open_jaxpr(obj: Any) -> bool:
    return Jaxpr is not None and isinstance(obj, Jaxpr)


def is_literal(atom: Any) -> bool:
    if Literal is not None:
        return isinstance(atom, Literal)
    return type(atom).__name__ == "Literal"


def is_dropvar(var: Any) -> bool:
    if DropVar is not None:
        return isinstance(var, DropVar)
    return type(var).__name__ == "DropVar"


def user_frame(source_info: Any) -> UserFrame | None:
    """The user's source location for a jaxpr equation's ``source_info``, or None."""
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
    return UserFrame(
        file=str(getattr(frame, "file_name", "")),
        line=int(getattr(frame, "start_line", 0) or 0),
        column=int(getattr(frame, "start_column", 0) or 0),
        function=str(getattr(frame, "function_name", "")),
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

"""Where an equation came from: JAX's source info (``jax._src.source_info_util``).

Wraps ``source_info_util.user_frame`` (the user's line of an equation's traceback),
the ``name_stack`` of an equation's ``source_info`` and
``source_info_util.register_exclusion`` (so frames of our own wrappers are not taken
for the user's).  Each degrades to None / False where this JAX lacks it.
"""

from __future__ import annotations

import os
from typing import Any

from workbench.engine._jax_compat._modules import siu as _siu
from workbench.engine.common.source import SourceLine


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


def user_frames(source_info: Any) -> list[SourceLine]:
    """Every user frame of an equation's traceback, innermost first (the innermost is
    :func:`user_frame`'s); just that one where this JAX cannot list them all."""
    if _siu is None or source_info is None:
        return []
    tb = getattr(source_info, "traceback", None)
    if tb is None:
        return []
    frames_of = getattr(_siu, "user_frames", None)
    if frames_of is None:
        one = user_frame(source_info)
        return [] if one is None else [one]
    try:
        return [
            SourceLine(
                file=str(getattr(f, "file_name", "")),
                line=int(getattr(f, "start_line", 0) or 0),
                function=str(getattr(f, "function_name", "")),
            )
            for f in frames_of(tb)
        ]
    except Exception:
        return []

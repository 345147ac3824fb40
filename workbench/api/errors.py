"""The front doors' short errors: bad arguments to the Python twins, reported the way the
magics report theirs, and :func:`releases_arguments`, which both doors' entry points wear.

A wrong argument (``workbench.inspect(3)``, ``stage='nonsense'``, an unknown backend or
transform) is the caller's mistake, not a failure inside the workbench: IPython should
show one short line, not a traceback through our internals.  The raised exception is
still a ``TypeError``/``ValueError`` (so a script's ``except`` keeps working) and keeps
the engine's message; only IPython's rendering (``_render_traceback_``) is added.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from workbench.engine.common.errors import ErrorReport
from workbench.views.errors import error_text


class _ShortRendering(Exception):
    """IPython shows the error view's line instead of a traceback."""

    #: the engine's exception name, kept so the line names what the user would catch
    kind = ""

    def _render_traceback_(self) -> list[str]:
        rep = ErrorReport(
            phase="arguments", kind=self.kind or type(self).__name__, summary=str(self)
        )
        return error_text(rep, color=True).splitlines()


class ArgumentTypeError(_ShortRendering, TypeError):
    """A twin's argument of the wrong type (``workbench.inspect(3)``)."""


class ArgumentValueError(_ShortRendering, ValueError):
    """A twin's argument with a value it cannot use (``stage='nonsense'``)."""


def short_input_error(exc: Exception) -> Exception:
    """``exc`` as the same kind of error (TypeError or ValueError) with the short rendering."""
    cls = ArgumentTypeError if isinstance(exc, TypeError) else ArgumentValueError
    out = cls(*exc.args)
    out.kind = type(exc).__name__
    return out


def check_static(static_argnums: object, static_argnames: object) -> None:
    """``static_argnums`` must be integers and ``static_argnames`` strings, as ``jax.jit``
    requires: checked here so a wrong one is one short line, not an IndexError or a
    "not iterable" from deep inside the engine."""
    nums = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
    if (
        isinstance(nums, (str, bytes))
        or not isinstance(nums, (tuple, list))
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in nums)
    ):
        raise short_input_error(
            TypeError(
                f"static_argnums must be an integer or a sequence of integers, got {static_argnums!r}"
            )
        )
    names = (static_argnames,) if isinstance(static_argnames, str) else static_argnames
    if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) for n in names):
        raise short_input_error(
            TypeError(
                f"static_argnames must be a name or a sequence of names, got {static_argnames!r}"
            )
        )


def check_backend(backend: object) -> None:
    """``backend`` is a platform name such as ``'cpu'`` or ``'gpu'`` (or None)."""
    if backend is not None and not isinstance(backend, str):
        raise short_input_error(
            TypeError(f"backend must be a platform name such as 'cpu' or 'gpu', got {backend!r}")
        )


_F = TypeVar("_F", bound=Callable[..., Any])

#: the short, user-facing errors of the twins (``WorkbenchError`` and the argument errors)
_SHORT: tuple[type[BaseException], ...] = (_ShortRendering,)


def releases_arguments(*short: type[BaseException]) -> Callable[[_F], _F]:
    """Raise the short errors ``short`` of the decorated front door (a magic, a twin)
    without the frames and chained exceptions that hold the user's arrays.

    Why: IPython keeps the last error (``sys.last_value``) until the next one.  A short
    error raised inside the engine's frames, or chaining the user's exception (``raise ...
    from None`` only hides the context, it still references it), keeps every frame's locals
    alive through its traceback: the call's arguments, possibly gigabytes of device memory,
    outlive the user's ``del``.  The short error needs neither: IPython renders it from its
    report, not from the traceback.  Other exceptions (bugs) keep their traceback.
    """
    caught = short + _SHORT

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            failure: BaseException | None = None
            try:
                return fn(*args, **kwargs)
            except caught as exc:
                failure = exc
            # outside the ``except``: nothing is chained implicitly, and this frame (which
            # the raised error's traceback keeps) holds only the error
            del args, kwargs
            failure.__context__ = None
            failure.__cause__ = None
            raise failure.with_traceback(None)

        return wrapper  # type: ignore[return-value]

    return decorate


__all__ = [
    "ArgumentTypeError",
    "ArgumentValueError",
    "check_backend",
    "check_static",
    "releases_arguments",
    "short_input_error",
]

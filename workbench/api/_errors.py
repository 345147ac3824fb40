"""Bad arguments to the Python twins, reported the way the magics report theirs.

A wrong argument (``workbench.inspect(3)``, ``stage='nonsense'``, an unknown backend or
transform) is the caller's mistake, not a failure inside the workbench: IPython should
show one short line, not a traceback through our internals.  The raised exception is
still a ``TypeError``/``ValueError`` (so a script's ``except`` keeps working) and keeps
the engine's message; only IPython's rendering (``_render_traceback_``) is added.
"""

from __future__ import annotations

from workbench.engine.common.errors import ErrorReport
from workbench.views.errors import error_text


class _ShortRendering(Exception):
    """IPython shows the error view's line instead of a traceback."""

    #: the engine's exception name, kept so the line names what the user would catch
    kind = ""

    def _render_traceback_(self) -> list[str]:
        rep = ErrorReport(phase="arguments", kind=self.kind or type(self).__name__,
                          summary=str(self))
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


__all__ = ["ArgumentTypeError", "ArgumentValueError", "short_input_error"]

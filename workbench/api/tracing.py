"""The stages every call-inspecting front door forces, and the short errors they raise
(shared by the twins in :mod:`workbench.api` and the magics in :mod:`workbench.ipython`).

``workbench.jaxpr``/``hlo`` and the ``%%jaxpr``/``%%hlo`` magics all come through here, so a
Python ``if`` on a traced value fails in the same place, with the same short
:class:`~workbench.views.errors.WorkbenchError`, whichever door it came in by: when the
function is traced, never later inside a display.  Bad options (an unknown transform or
backend) stay the engine's own short ``ValueError``s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from workbench.engine.common.errors import calling_user_line, report
from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.report import HloReport, build_hlo_report, fusion_for
from workbench.engine.jaxpr.transforms import TransformError, TransformSpec
from workbench.engine.stages import BackendUnavailable, Inspection, inspect_stages
from workbench.views.errors import WorkbenchError


def caller_line() -> SourceLine | None:
    """The innermost frame of user code above us: the line that called the twin."""
    return calling_user_line()


def trace_stages(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    transforms: Sequence[str | TransformSpec] | str | None = (),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    compare: bool = False,
    backend: str | None = None,
    door: str = "magic",
    model: bool = True,
    scoped: bool = False,
) -> list[Inspection]:
    """The inspections of ``fn(*args, **kwargs)``, traced now (errors surface here).

    Raises :class:`WorkbenchError` (phase ``transform`` or ``trace``) for a failure in the
    user's function or in JAX; its report names the user's line when the traceback has one.
    ``door`` is ``"twin"`` for the Python functions: advice then names their keywords
    (``static_argnums=``) instead of the magics' flags (``--static-argnums``).
    ``model=False`` traces without building the structured jaxpr model: ``%%hlo`` shows
    none, and on a 5,000-equation gradient it costs a tenth of a second.  ``scoped=True``
    (``%%hlo``) names each call of the user's functions in the op_names
    (:mod:`workbench.engine.common.call_scopes`).
    """
    try:
        stages = inspect_stages(
            fn,
            args,
            kwargs,
            transforms,
            static_argnums,
            static_argnames,
            compare=compare,
            backend=backend,
            scoped=scoped,
        )
    except TransformError as exc:
        if door == "twin":
            raise TransformError(for_twins(str(exc))) from None
        raise
    except BackendUnavailable:
        raise
    except Exception as exc:
        raise WorkbenchError(report(exc, "transform")) from None
    for ins in stages:
        try:
            ins.model if model else ins.traced  # noqa: B018 - forces trace (+ model build)
        except Exception as exc:
            raise WorkbenchError(report(exc, "trace"), subject=ins.label) from None
    return stages


def for_twins(text: str) -> str:
    """A message's magic flags as the twins' keywords: ``--static-argnums`` -> ``static_argnums=``."""
    return _FLAG.sub(lambda m: m.group(1).replace("-", "_") + "=", text)


_FLAG = re.compile(r"--(static-argnums|static-argnames)\b")


def compile_report(ins: Inspection, stage: str, fusion: bool | None) -> HloReport:
    """Lower (and compile) a traced inspection; a failure is a short :class:`WorkbenchError`."""
    fusion_for(stage, fusion)  # bad options: HloOptionError, before any work
    try:
        return build_hlo_report(ins, stage, fusion=fusion)
    except Exception as exc:
        raise WorkbenchError(report(exc, "compile"), subject=ins.label) from None


__all__ = ["WorkbenchError", "caller_line", "compile_report", "trace_stages"]

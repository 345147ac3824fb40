"""``workbench.hlo(fn, *args)``: the Python twin of ``%hlo``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.api.errors import check_backend, releases_arguments, short_input_error
from workbench.api.tracing import caller_line, compile_report, trace_stages
from workbench.engine.hlo.report import HloOptionError, HloReport, fusion_for
from workbench.engine.jaxpr.transforms import TransformError, TransformSpec, normalize
from workbench.engine.stages import BackendUnavailable, resolve_backend
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.hlo import hlo_display


@releases_arguments(WorkbenchError)
def hlo(
    fn: Callable[..., Any],
    *args: Any,
    stage: str = "compiled",
    fusion: bool | None = None,
    text: bool = False,
    backend: str | None = None,
    transforms: Sequence[str | TransformSpec] | str | None = (),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    **kwargs: Any,
) -> Display[HloReport]:
    """What XLA made of ``fn(*args, **kwargs)``, as a displayable object.

    The Python twin of ``%hlo``: ``stage="compiled"`` (optimized HLO, with the fusion
    diagram unless ``fusion=False``) or ``"lowered"`` (StableHLO); ``backend`` picks a
    backend other than the default.  Traced and compiled now: a failure raises a short
    :class:`~workbench.views.errors.WorkbenchError`.  ``.report`` is the engine's record.
    """
    check_backend(backend)
    try:  # bad options are the caller's: one short line, before any work
        fusion_for(stage, fusion)
        normalize(transforms)
        backend = resolve_backend(backend) if backend is not None else None
    except (HloOptionError, BackendUnavailable, TransformError) as exc:
        raise short_input_error(exc) from None
    try:
        (ins,) = trace_stages(
            fn,
            args,
            kwargs,
            transforms,
            static_argnums,
            static_argnames,
            backend=backend,
            door="twin",
            model=False,
            scoped=True,  # the user's calls named in the op_names (the views cluster by them)
        )
        rep = compile_report(ins, stage, fusion)
    except WorkbenchError as exc:
        raise exc.located(caller_line()) from None
    return hlo_display(rep, text_only=text)

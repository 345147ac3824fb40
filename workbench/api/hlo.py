"""``workbench.hlo(fn, *args)``: the Python twin of ``%hlo``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.engine.hlo.report import build_hlo_report
from workbench.engine.jaxpr.inspection import inspect_stages, resolve_backend
from workbench.engine.jaxpr.transforms import TransformSpec
from workbench.views.hlo import HloDisplay


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
) -> HloDisplay:
    """What XLA made of ``fn(*args, **kwargs)``, as a displayable object.

    The Python twin of ``%hlo``: ``stage="compiled"`` (optimized HLO, with the fusion
    diagram unless ``fusion=False``) or ``"lowered"`` (StableHLO); ``backend`` picks a
    backend other than the default.  ``.report`` is the engine's record.
    """
    if backend is not None:
        backend = resolve_backend(backend)
    (ins,) = inspect_stages(fn, args, kwargs, transforms, static_argnums, static_argnames,
                            backend=backend)
    return HloDisplay(build_hlo_report(ins, stage, fusion=fusion), text_only=text)

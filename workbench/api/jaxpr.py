"""``workbench.jaxpr(fn, *args)``: the Python twin of ``%jaxpr``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.api.errors import releases_arguments
from workbench.api.tracing import caller_line, trace_stages
from workbench.engine.jaxpr.transforms import TransformSpec
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.jaxpr import jaxpr_display


@releases_arguments(WorkbenchError)
def jaxpr(
    fn: Callable[..., Any],
    *args: Any,
    transforms: Sequence[str | TransformSpec] | str | None = (),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    compare: bool = False,
    depth: int = 1,
    text: bool = False,
    **kwargs: Any,
) -> Display[Any]:
    """The jaxpr of ``fn(*args, **kwargs)`` under ``transforms``, as a displayable object.

    The Python twin of ``%jaxpr``: same flags, same display (HTML in notebooks, JAX's own
    text in a terminal), and the same stages forced now: a function JAX cannot trace
    raises a short :class:`~workbench.views.errors.WorkbenchError` naming the user's line.
    ``.inspection`` is the engine's record (``.stages`` with ``compare=True``).
    """
    try:
        stages = trace_stages(
            fn,
            args,
            kwargs,
            transforms,
            static_argnums,
            static_argnames,
            compare=compare,
            door="twin",
        )
    except WorkbenchError as exc:
        raise exc.located(caller_line()) from None
    return jaxpr_display(stages, compare=compare, depth=depth, text_only=text)

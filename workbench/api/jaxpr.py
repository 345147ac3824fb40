"""``workbench.jaxpr(fn, *args)``: the Python twin of ``%jaxpr``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.engine.jaxpr.inspection import inspect_stages
from workbench.engine.jaxpr.transforms import TransformSpec
from workbench.views.jaxpr import JaxprDisplay


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
) -> JaxprDisplay:
    """The jaxpr of ``fn(*args, **kwargs)`` under ``transforms``, as a displayable object.

    The Python twin of ``%jaxpr``: same flags, same display (HTML in notebooks,
    JAX's own text in a terminal).
    """
    stages = inspect_stages(fn, args, kwargs, transforms, static_argnums, static_argnames,
                            compare=compare)
    return JaxprDisplay(stages, compare=compare, depth=depth, text_only=text)

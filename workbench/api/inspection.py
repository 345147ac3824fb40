"""``workbench.inspect(fn, *args)``: the engine's :class:`Inspection`, with bad arguments
reported in one short line (the engine's own :func:`~workbench.engine.inspect` raises
plain ``TypeError``/``ValueError``, which IPython would show with our internals)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.api.errors import check_static, short_input_error
from workbench.engine.jaxpr.transforms import TransformError, TransformSpec
from workbench.engine.stages import Inspection
from workbench.engine.stages import inspect as _engine_inspect


def inspect(
    fn: Callable[..., Any],
    *args: Any,
    transforms: Sequence[str | TransformSpec] | str | None = (),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    **kwargs: Any,
) -> Inspection:
    """Inspect ``fn(*args, **kwargs)`` under ``transforms`` (innermost first).

    Nothing is traced until a stage is asked for: ``.jaxpr``, ``.model``,
    ``.stablehlo_text``, ``.hlo_text``, ``.cost``, ``.memory``...  A wrong ``fn`` or
    transform raises a ``TypeError``/``ValueError`` that IPython shows in one line.
    """
    if not callable(fn):
        raise short_input_error(
            TypeError(f"inspect() needs a function as its first argument, got {type(fn).__name__}")
        )
    check_static(static_argnums, static_argnames)
    if transforms is not None and not isinstance(transforms, (str, TransformSpec, Sequence)):
        raise short_input_error(
            TypeError(
                "transforms must be a name such as 'grad', a TransformSpec or a list of them, "
                f"got {type(transforms).__name__}"
            )
        )
    try:
        return _engine_inspect(
            fn,
            *args,
            transforms=transforms,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            **kwargs,
        )
    except TransformError as exc:
        raise short_input_error(exc) from None


__all__ = ["inspect"]

"""``workbench.sharding(x)``: the Python twin of ``%sharding``."""

from __future__ import annotations

from typing import Any

from workbench.api.errors import releases_arguments
from workbench.api.tracing import caller_line
from workbench.engine.common.errors import ErrorReport
from workbench.engine.sharding.layout import Layout, ShardingInputError, layouts_of_tree
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.sharding import sharding_display


@releases_arguments(WorkbenchError)
def sharding(x: Any, text: bool = False) -> Display[list[Layout]]:
    """The layout of ``x`` (a ``jax.Array`` or a pytree of them), as a displayable object.

    The Python twin of ``%sharding``; ``.layouts`` holds the engine records.  A value
    without a layout (a tracer inside ``jit``, a list of ints) raises a short
    :class:`~workbench.views.errors.WorkbenchError` naming the calling line.
    """
    try:
        layouts = layouts_of_tree(x)
    except ShardingInputError as exc:
        raise WorkbenchError(
            ErrorReport(
                phase="layout", kind="ShardingInputError", summary=str(exc), where=caller_line()
            )
        ) from None
    return sharding_display(layouts, text_only=text)

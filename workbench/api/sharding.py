"""``workbench.sharding(x)``: the Python twin of ``%sharding``."""

from __future__ import annotations

from typing import Any

from workbench.engine.sharding.layout import layouts_of_tree
from workbench.views.sharding import ShardingDisplay


def sharding(x: Any, text: bool = False) -> ShardingDisplay:
    """The layout of ``x`` (a ``jax.Array`` or a pytree of them), as a displayable object.

    The Python twin of ``%sharding``; ``.layouts`` holds the engine records.
    """
    return ShardingDisplay(layouts_of_tree(x), text_only=text)

"""JAX's private modules that several concerns read, imported once, and what was found.

Wraps ``jax.extend.core`` (public since 0.4.3x), ``jax._src.core`` (the fallback for
names ``jax.extend`` lacks) and ``jax._src.source_info_util`` (the user's frame of an
equation).  Each may be missing or moved in some JAX version, so each is imported
optionally and typed as optional; :data:`FEATURES` records which were found, for
``doctor``.
"""

from __future__ import annotations

import types
from typing import Any

import jax

# Each may be missing in some JAX version: typed as optional, checked before use.
jex_core: types.ModuleType | None
siu: types.ModuleType | None
src_core: types.ModuleType | None

try:  # public since JAX 0.4.3x
    import jax.extend.core as jex_core
except Exception:  # pragma: no cover - very old or very new JAX
    jex_core = None

try:
    from jax._src import source_info_util as siu
except Exception:  # pragma: no cover - moved
    siu = None

try:
    from jax._src import core as src_core
except Exception:  # pragma: no cover - moved
    src_core = None


def core_attr(name: str) -> Any:
    """``name`` from ``jax.extend.core``, else from ``jax._src.core``, else None."""
    for mod in (jex_core, src_core):
        if mod is not None and hasattr(mod, name):
            return getattr(mod, name)
    return None


#: Which optional capabilities were found in the installed JAX (shown by ``doctor``).
FEATURES: dict[str, bool] = {
    "jax.extend.core": jex_core is not None,
    "source_info_util.user_frame": siu is not None and hasattr(siu, "user_frame"),
    "source_info_util.register_exclusion": siu is not None and hasattr(siu, "register_exclusion"),
}
try:  # a jit wrapper costs nothing until called; nothing is traced here
    FEATURES["PjitFunction._jit_info"] = hasattr(jax.jit(lambda x: x), "_jit_info")
except Exception:  # pragma: no cover
    FEATURES["PjitFunction._jit_info"] = False

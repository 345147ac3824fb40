"""Which backends this JAX initialised (``jax._src.xla_bridge.backends()``).

The public API only answers "the devices of platform X" and raises for a platform that
is absent, so the private registry is read first and the common platform names are
probed only where it is missing.
"""

from __future__ import annotations

import jax


def available_backends() -> list[str]:
    """Platform names of the backends this JAX initialised (e.g. ``["cpu"]``).

    Uses ``xla_bridge.backends()`` where present (private); otherwise probes the
    common platform names with the public ``jax.devices(name)``.
    """
    try:
        from jax._src import xla_bridge

        names = sorted(xla_bridge.backends().keys())
        if names:
            return names
    except Exception:
        pass
    found = []
    for name in ("cpu", "gpu", "cuda", "rocm", "tpu"):
        try:
            if jax.devices(name):
                found.append(name)
        except Exception:
            continue
    return found or [jax.default_backend()]


def backends_initialized() -> bool:
    """Whether JAX has started its backends (``xla_bridge.backends_are_initialized()``,
    private).  Why ask: reading devices or live arrays starts them, after which
    ``jax.distributed.initialize()``, ``jax_platforms`` or ``jax_num_cpu_devices`` can no
    longer be set; a tool that only watches must not do that.  False where the JAX in use
    cannot say (a watcher then waits rather than start them)."""
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except Exception:
        return False

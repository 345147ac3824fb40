"""What a multi-process cluster needs from JAX's internals: the executable a backend
compile just made, its parameters' shardings, and ``jax.distributed`` settings that moved
between releases.

Why a frame walk: JAX announces each backend compile with a monitoring duration event
(``BACKEND_COMPILE_EVENT``) from a ``log_elapsed_time`` block that has just assigned the
compiled executable to a local (``xla_executable`` in ``pxla._cached_compilation``, 0.10
to 0.12).  Reading it from the listener gives the optimized program of every compile
without compiling anything twice.  Every function here degrades to ``None`` / a neutral
answer when JAX moved it.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import jax

#: the local that holds the compiled executable in JAX's compile frame
_EXECUTABLE_LOCALS = ("xla_executable", "executable", "compiled")


def compiled_executable_on_stack(max_depth: int = 12) -> Any:
    """The executable JAX just compiled, read from a compile-duration listener; or None."""
    try:
        frame: Any = sys._getframe(2)
    except ValueError:
        return None
    try:
        for _ in range(max_depth):
            if frame is None:
                return None
            if "jax" in frame.f_code.co_filename:
                loc = frame.f_locals
                for name in _EXECUTABLE_LOCALS:
                    value = loc.get(name)
                    if value is not None and (
                        hasattr(value, "hlo_modules") or hasattr(value, "as_text")
                    ):
                        return value
            frame = frame.f_back
        return None
    finally:
        del frame


def executable_hlo_text(executable: Any) -> str | None:
    """The optimized HLO text of ``executable`` (its first module), or None."""
    try:
        modules = executable.hlo_modules()
        if modules:
            return str(modules[0].to_string())
    except Exception:
        pass
    try:
        return str(executable.as_text())
    except Exception:
        return None


def parameter_shardings(executable: Any) -> list[str] | None:
    """Each parameter's sharding as XLA writes it (``{devices=[2,1]<=[2]}``), or None."""
    try:
        protos = executable.get_parameter_shardings()
    except Exception:
        return None
    if protos is None:
        return None
    try:
        from jax._src.lib import xla_client as xc

        # ``str`` is XLA's text on every release (``to_string()`` is 0.12's only)
        return [str(xc.HloSharding.from_proto(p)) for p in protos]
    except Exception:
        return None


def enable_recoverability() -> bool:
    """``jax_enable_recoverability=True``: one process dying then leaves the others usable
    (without it the coordination service ends the survivors within a heartbeat).  False
    where this JAX has no such option."""
    try:
        jax.config.update("jax_enable_recoverability", True)
        return True
    except Exception:
        return False


def distributed_initialize(
    coordinator_address: str,
    num_processes: int,
    process_id: int,
    *,
    initialization_timeout: int = 60,
    heartbeat_timeout_seconds: int | None = None,
) -> None:
    """``jax.distributed.initialize`` with the keywords this JAX accepts (the heartbeat
    timeout is dropped where the signature has no such parameter)."""
    kwargs: dict[str, Any] = {
        "coordinator_address": coordinator_address,
        "num_processes": num_processes,
        "process_id": process_id,
        "initialization_timeout": initialization_timeout,
    }
    if heartbeat_timeout_seconds is not None:
        try:
            params = inspect.signature(jax.distributed.initialize).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        if "heartbeat_timeout_seconds" in params:
            kwargs["heartbeat_timeout_seconds"] = int(heartbeat_timeout_seconds)
    jax.distributed.initialize(**kwargs)


__all__ = [
    "compiled_executable_on_stack",
    "distributed_initialize",
    "enable_recoverability",
    "executable_hlo_text",
    "parameter_shardings",
]

"""Fake CPU devices: how many, asked for before JAX starts its backend.

On a machine without accelerators JAX can split the host into ``N`` CPU
devices, which is how sharding is explored on a laptop.  JAX reads the count
once, when its backend starts, from two places: its ``jax_num_cpu_devices``
option (set from ``JAX_NUM_CPU_DEVICES`` when JAX is imported) and, when that
option is unset, the XLA flag ``--xla_force_host_platform_device_count``.
Setting both keeps an older value in either from silently winning, and the
environment variables reach child processes (kernels, servers) too.

Once the backend has started the count is fixed for the life of the process:
:func:`fake_devices` then says so in one line with the way to restart, rather
than returning as if it had worked.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import MutableMapping

_DEVICE_FLAG = re.compile(r"--xla_force_host_platform_device_count=\S*")


class FakeDevicesError(RuntimeError):
    """JAX's backend already runs with another device count; only a restart changes it."""


def with_device_count(xla_flags: str, n: int) -> str:
    """``xla_flags`` with the host device count set to ``n`` (replacing any previous one)."""
    _check_count(n)
    rest = _DEVICE_FLAG.sub("", xla_flags).split()
    return " ".join([*rest, f"--xla_force_host_platform_device_count={n}"])


def set_fake_devices(env: MutableMapping[str, str], n: int) -> None:
    """Ask for ``n`` fake CPU devices in ``env`` (e.g. a child process's) by both of JAX's routes."""
    env["XLA_FLAGS"] = with_device_count(env.get("XLA_FLAGS", ""), n)
    env["JAX_NUM_CPU_DEVICES"] = str(n)


def restart_hint(n: int) -> str:
    """How to start again with ``n`` fake CPU devices (JAX reads the count once, at start-up)."""
    return (
        f"For {n} fake CPU devices, restart with XLA_FLAGS="
        f"--xla_force_host_platform_device_count={n} set before JAX starts (or "
        f"JAX_NUM_CPU_DEVICES={n}, or `jax-workbench lab --fake-devices {n}`); on GPUs/TPUs "
        f"the device count is the hardware's"
    )


def fake_devices(n: int) -> None:
    """Give this process ``n`` fake CPU devices; call it before any JAX computation runs.

    Sets ``XLA_FLAGS`` and ``JAX_NUM_CPU_DEVICES`` (inherited by child processes)
    and, when JAX is already imported, its ``jax_num_cpu_devices`` option.  Raises
    :class:`FakeDevicesError` when JAX's backend already started with a different
    count, and ``ValueError`` for ``n < 1``.
    """
    _check_count(n)
    if "jax" in sys.modules:
        import jax

        try:
            jax.config.update("jax_num_cpu_devices", n)
        except RuntimeError:  # the backend started: the count it has is final
            have = _cpu_device_count()
            if have != n:
                raise FakeDevicesError(
                    f"JAX is already running with {have} device(s) and cannot change that in "
                    f"this process. {restart_hint(n)}"
                ) from None
    set_fake_devices(os.environ, n)


def _cpu_device_count() -> int:
    """CPU devices of the running backend (all devices when there is no CPU backend)."""
    import jax

    try:
        return len(jax.devices("cpu"))
    except RuntimeError:
        return len(jax.devices())


def _check_count(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(
            f"the number of fake devices must be a whole number of at least 1, got {n!r}"
        )


__all__ = [
    "FakeDevicesError",
    "fake_devices",
    "restart_hint",
    "set_fake_devices",
    "with_device_count",
]

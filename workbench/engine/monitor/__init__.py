"""Devices and memory as plain records, for the side panel's memory chart.

Why here and not in the panel: reading memory is JAX's business (``jax.live_arrays()``,
``Device.memory_stats()``), the panel only draws numbers.  Records hold numbers and
strings only: a sample never keeps a reference to a user's array, so taking one
cannot keep memory alive (jax#8096 asks for exactly this kind of monitoring).
"""

from workbench.engine.monitor.memory import (
    DeviceInfo,
    DeviceMemory,
    KernelInfo,
    MemorySample,
    device_info,
    jax_started,
    kernel_info,
    sample_memory,
)

__all__ = [
    "DeviceInfo",
    "DeviceMemory",
    "KernelInfo",
    "MemorySample",
    "device_info",
    "jax_started",
    "kernel_info",
    "sample_memory",
]

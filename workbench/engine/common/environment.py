"""The environment JAX runs in: what a benchmark stores and what ``doctor`` prints.

Two timings are only comparable when they came from the same software and
hardware; :class:`Environment` (JAX and jaxlib versions, backend, device kind and
count, ``XLA_FLAGS``, CPU model and count, Python) travels with a benchmark's
JSON, so a result loaded next month can say *why* it differs from today's.

A bug report needs the same facts and a few more (every backend with its
devices, the process count, which JAX internals we found, whether our JupyterLab
extension is installed): :class:`DoctorReport`, which ``jax-workbench doctor``
formats as text or JSON.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import platform
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import jax

#: the name our prebuilt JupyterLab extension is installed under
EXTENSION_NAME = "jax-workbench"
#: platforms ``doctor`` asks JAX about, present or not
PLATFORMS = ("cpu", "gpu", "cuda", "rocm", "tpu")


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's marketing name (Linux ``/proc/cpuinfo``, else ``platform``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _usable_cpus() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def _jaxlib_version() -> str:
    try:
        import jaxlib

        return str(getattr(jaxlib, "__version__", "unknown"))
    except Exception:
        return "unknown"


@dataclass(slots=True)
class Environment:
    """The software and hardware a measurement came from (the fields two results compare)."""

    jax_version: str
    jaxlib_version: str
    backend: str
    device_kind: str
    device_count: int
    xla_flags: str
    jax_platforms: str
    cpu_model: str
    cpu_count: int | None
    cpu_count_usable: int | None
    python: str
    platform: str
    timestamp: str
    extra: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Environment:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)

    def differences(self, other: Environment) -> dict[str, tuple[Any, Any]]:
        """Fields that differ (timestamp aside): what to suspect when two results disagree."""
        a, b = self.to_dict(), other.to_dict()
        return {k: (a[k], b[k]) for k in a if k != "timestamp" and a[k] != b[k]}


def environment() -> Environment:
    """The current process's environment (JAX's backend is initialised if it was not)."""
    try:
        devices = jax.devices()
        backend = jax.default_backend()
    except Exception:  # no backend could start: still describe the software
        devices, backend = [], "unavailable"
    kinds = sorted({d.device_kind for d in devices})
    return Environment(
        jax_version=jax.__version__,
        jaxlib_version=_jaxlib_version(),
        backend=backend,
        device_kind=", ".join(kinds) or "none",
        device_count=len(devices),
        xla_flags=os.environ.get("XLA_FLAGS", ""),
        jax_platforms=os.environ.get("JAX_PLATFORMS", ""),
        cpu_model=cpu_model(),
        cpu_count=os.cpu_count(),
        cpu_count_usable=_usable_cpus(),
        python=platform.python_version(),
        platform=platform.platform(),
        timestamp=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    )


@dataclass(slots=True)
class ExtensionStatus:
    """Is our JupyterLab extension installed (where), and is it enabled?"""

    installed: bool
    enabled: bool
    path: str | None = None
    note: str | None = None  # why the answer is unknown (jupyter_core missing)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "installed": self.installed,
            "enabled": self.enabled,
            "path": self.path,
        }
        if self.note is not None:
            d["note"] = self.note
        return d


@dataclass(slots=True)
class DoctorReport:
    """What ``jax-workbench doctor`` prints: the environment, every backend, our own state."""

    environment: Environment
    workbench_version: str
    process_count: int
    #: platform -> its devices ("id: kind (process p)"), or why it is not available
    backends: dict[str, list[str] | str]
    jupyterlab: str | None
    extension: ExtensionStatus
    #: the JAX internals :mod:`workbench.engine._jax_compat` looks for, and whether found
    compat_features: dict[str, bool]
    #: JAX's own device-count variable, which wins over the XLA flag when set
    jax_num_cpu_devices: str = ""

    @property
    def missing_features(self) -> list[str]:
        return [k for k, ok in self.compat_features.items() if not ok]

    def to_dict(self) -> dict[str, Any]:
        env = self.environment
        return {
            "jax-workbench": self.workbench_version,
            "python": env.python,
            "jax": env.jax_version,
            "jaxlib": env.jaxlib_version,
            "default_backend": env.backend,
            "device_count": env.device_count,
            "device_kind": env.device_kind,
            "process_count": self.process_count,
            "backends": self.backends,
            "XLA_FLAGS": env.xla_flags,
            "JAX_PLATFORMS": env.jax_platforms,
            "JAX_NUM_CPU_DEVICES": self.jax_num_cpu_devices,
            "cpu_model": env.cpu_model,
            "cpu_count": env.cpu_count,
            "cpu_count_usable": env.cpu_count_usable,
            "platform": env.platform,
            "jupyterlab": self.jupyterlab,
            "extension": self.extension.to_dict(),
            "compat_features": dict(self.compat_features),
        }


def backends() -> dict[str, list[str] | str]:
    """Every platform in :data:`PLATFORMS`: its devices, or why JAX has none there."""
    out: dict[str, list[str] | str] = {}
    for name in PLATFORMS:
        try:
            devs = jax.devices(name)
        except Exception as exc:  # not present: say so briefly
            out[name] = f"not available ({type(exc).__name__})"
            continue
        out[name] = [f"{d.id}: {d.device_kind} (process {d.process_index})" for d in devs]
    return out


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def doctor_report(workbench_version: str, extension: ExtensionStatus) -> DoctorReport:
    """The report for this process (JAX's backend is initialised if it was not).

    The package's version and the JupyterLab extension's status come from the caller:
    the engine imports neither the package root (which imports every layer) nor
    Jupyter's packages (finding an installed extension is the front door's business).
    """
    from workbench.engine import _jax_compat

    env = environment()
    try:
        processes = jax.process_count()
    except Exception:  # no backend could start
        processes = 1
    return DoctorReport(
        environment=env,
        workbench_version=workbench_version,
        process_count=processes,
        backends=backends(),
        jupyterlab=_distribution_version("jupyterlab"),
        extension=extension,
        compat_features=dict(_jax_compat.FEATURES),
        jax_num_cpu_devices=os.environ.get("JAX_NUM_CPU_DEVICES", ""),
    )

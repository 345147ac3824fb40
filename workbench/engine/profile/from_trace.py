"""A profile recorded elsewhere (another machine, a GPU, an earlier session), attributed
the way ``%%jaxprof`` attributes a live one.

Inputs are what ``jax.profiler`` and JAX write: the ``.xplane.pb`` trace
(``jax.profiler.trace(dir)`` around the calls) and the optimized HLO of the program that
ran (``jax.jit(f).lower(*args).compile().as_text()``).  The backend, the device kind and
the JAX version are read from the trace itself (its device planes and its metadata plane),
so the peak figures are the recording device's, not this machine's.  Anything unusable
(a missing file, something that is not a trace, HLO text that does not parse, a trace in
which the module never ran) is a :class:`~workbench.engine.profile.run.ProfileError` with
a one-line summary.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

import jax

from workbench.engine.bench.peaks import peak_for
from workbench.engine.common.errors import ErrorReport
from workbench.engine.hlo.costs import instruction_costs
from workbench.engine.hlo.model import HloModule
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.profile.attribute import attribute
from workbench.engine.profile.events import NoDeviceEvents
from workbench.engine.profile.report import ProfileReport
from workbench.engine.profile.run import ProfileError, check_calls, device_events
from workbench.engine.profile.store import text_key


def _fail(summary: str, kind: str, phase: str = "profiling") -> ProfileError:
    return ProfileError(ErrorReport(phase=phase, kind=kind, summary=summary))


def _trace_file(trace: str | os.PathLike[str]) -> Path:
    """``trace`` itself, or the newest ``*.xplane.pb`` under a directory
    (``jax.profiler.trace(dir)`` writes ``dir/plugins/profile/<run>/<host>.xplane.pb``)."""
    path = Path(trace)
    if path.is_dir():
        found = sorted(
            glob.glob(os.path.join(path, "**", "*.xplane.pb"), recursive=True), key=os.path.getmtime
        )
        if not found:
            raise _fail(f"no .xplane.pb trace under {path}", "FileNotFoundError", "arguments")
        return Path(found[-1])
    if not path.is_file():
        raise _fail(f"no such trace file: {path}", "FileNotFoundError", "arguments")
    return path


def _hlo_text(hlo: str | os.PathLike[str]) -> tuple[str, str]:
    """``(text, where)``: the HLO text given, or read from the file ``hlo`` names."""
    if isinstance(hlo, os.PathLike) or (
        isinstance(hlo, str) and "\n" not in hlo and not hlo.lstrip().startswith("HloModule")
    ):
        path = Path(hlo)
        if not path.is_file():
            raise _fail(f"no such HLO file: {path}", "FileNotFoundError", "arguments")
        return path.read_text(), str(path)
    if not isinstance(hlo, str):
        raise _fail(
            f"hlo must be the optimized HLO text or a path to it, got a {type(hlo).__name__}",
            "TypeError",
            "arguments",
        )
    return hlo, "the HLO text"


def _module(text: str, where: str) -> HloModule:
    if not text.lstrip().startswith("HloModule"):
        raise _fail(
            f"{where} is not optimized HLO text (it should start with 'HloModule': "
            f"write jax.jit(f).lower(*args).compile().as_text())",
            "ValueError",
            "arguments",
        )
    try:
        return parse_hlo(text)
    except Exception as exc:
        raise _fail(
            f"{where} could not be parsed as HLO: {type(exc).__name__}: {exc}",
            "ValueError",
            "arguments",
        ) from None


def _stats(plane: Any) -> dict[str, Any]:
    try:
        return {k: v for k, v in plane.stats if k}
    except Exception:
        return {}


def _recording(profile: Any, device_id: int) -> tuple[str, str, str]:
    """``(platform, device kind, JAX version)`` as the trace records them."""
    planes = {p.name: p for p in profile.planes}
    version = str(_stats(planes.get("/host:metadata")).get("jax_version", ""))
    gpu = planes.get(f"/device:GPU:{device_id}")
    if gpu is not None:
        return "gpu", str(_stats(gpu).get("gpu_device_name", "GPU")), version
    return "cpu", "cpu", version


def profile_recorded(
    trace: str | os.PathLike[str],
    hlo: str | os.PathLike[str],
    *,
    calls: int,
    device_id: int = 0,
    label: str | None = None,
    device_kind: str | None = None,
) -> ProfileReport:
    """The :class:`ProfileReport` of ``calls`` calls of the program ``hlo`` in ``trace``.

    ``trace``: an ``.xplane.pb`` file or a directory holding one; ``hlo``: the program's
    optimized HLO text, or a path to a file holding it; ``calls``: how many calls the
    trace holds (its device work is cut into that many steps); ``device_id``: whose
    events to read; ``device_kind``: overrides the kind the trace names (the peak figures
    are looked up by it); ``label``: the report's title.
    """
    check_calls(calls)
    text, where = _hlo_text(hlo)
    module = _module(text, where)
    path = _trace_file(trace)
    try:
        profile = jax.profiler.ProfileData.from_file(str(path))
    except Exception as exc:
        raise _fail(
            f"{path} could not be read as a jax.profiler trace: {type(exc).__name__}: {exc}",
            "ValueError",
            "arguments",
        ) from None
    platform, kind, version = _recording(profile, device_id)
    kind = device_kind or kind
    try:
        events = device_events(profile, platform, module, calls, device_id)
    except NoDeviceEvents as exc:
        raise _fail(
            f"{exc}: was the trace recorded running this HLO module?", "NoDeviceEvents"
        ) from None
    finally:
        del profile
    if label is None:
        label = f"{module.name}, recorded on {kind}" + (f" with JAX {version}" if version else "")
    return attribute(
        events,
        module,
        label=label,
        backend=platform,
        device_kind=kind,
        module_key=text_key(text),
        costs=instruction_costs(module),
        peak=peak_for(kind),
    )


__all__ = ["profile_recorded"]

"""One real compile of a call under the profiler, split into where its time went.

The call comes as an :class:`~workbench.engine.stages.Inspection` made with
``scoped=True`` (every call of the user's functions named in the op_names: what finds
unrolled loops), traced in :func:`fresh_compile_context`: a trace context no trace has
used, so JAX's trace caches miss it, the user's entries and the workbench's own earlier
scoped traces alike; its lowering is a new module, and jit's in-memory caches cannot
serve the compile.  The compile runs with JAX's
persistent compilation cache bypassed (:func:`compat.persistent_cache_bypassed`): it reads
no entry and writes none, and no setting changes.  It is the workbench's own
ahead-of-time compile (``inspecting``): never put in the function's call cache, never
reported as a recompile of the user's function.  The profiler runs only around the
compile, in a temporary directory that is removed after.
"""

from __future__ import annotations

import time
from typing import Any

import jax

from workbench.engine import _jax_compat as compat
from workbench.engine.cache.tracker import inspecting
from workbench.engine.common.errors import ErrorReport, report
from workbench.engine.common.gcpause import gc_paused
from workbench.engine.compile_time.phases import compile_phases
from workbench.engine.compile_time.report import CompileTimeReport
from workbench.engine.compile_time.sizes import program_size
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.profile.run import (
    ProfileError,
    export_note,
    export_trace,
    profiler_session,
    read_trace,
)


def _module_name(hlo_text: str) -> str:
    first = hlo_text.lstrip().split("\n", 1)[0]
    parts = first.split()
    return parts[1].rstrip(",") if len(parts) > 1 and parts[0] == "HloModule" else ""


def fresh_compile_context() -> Any:
    """The context to trace a call for :func:`compile_time_profile` in: a trace context no
    trace has used, so no cache of JAX's (trace, lowering, executable) serves any stage,
    the workbench's own earlier profiles of the same call included."""
    return compat.unique_trace_context()


def compile_time_profile(
    ins: Any,
    *,
    tmp_root: str | None = None,
    inspected_by: str = "%%jaxprof --compile",
    trace_dir: str | None = None,
) -> CompileTimeReport:
    """Trace (if not yet), lower and compile ``ins`` once under the profiler.

    ``ins`` is an ``Inspection`` made with ``scoped=True``; a caller that traces it first
    (to report a trace error in its own words) traces it inside
    :func:`fresh_compile_context`.

    ``trace_dir`` (checked by :func:`~workbench.engine.profile.run.check_trace_dir`): the
    compile's trace is copied there, with a note on how to open it.

    Raises :class:`~workbench.engine.profile.run.ProfileError` with a short report for a
    call that does not lower or compile, or a profiler that cannot run.
    """
    # each stage on its own (the Inspection times each; lowering first would trace inside
    # its own timing), traced here when the caller has not traced it yet
    with fresh_compile_context():
        for stage, phase in (("traced", "trace"), ("lowered", "lower")):
            try:
                lowered = getattr(ins, stage)
            except Exception as exc:
                raise ProfileError(report(exc, phase)) from None
    trace_s = ins.timings.trace or 0.0
    lower_s = ins.timings.lower or 0.0
    failure: ErrorReport | None = None
    exported = ""
    with profiler_session(tmp_root, perfetto=trace_dir is not None) as where:
        t0 = time.perf_counter()
        try:
            with inspecting(inspected_by), compat.persistent_cache_bypassed() as bypassed:
                compiled = lowered.compile()
        except Exception as exc:
            failure = report(exc, "compile")
        compile_s = time.perf_counter() - t0
        if failure is None:
            try:
                jax.profiler.stop_trace()
                profile = read_trace(where)
                if trace_dir is not None:
                    exported = export_trace(where, trace_dir)
            except ProfileError:
                raise
            except Exception as exc:  # disk full while writing, a file the reader rejects
                raise ProfileError(
                    ErrorReport(
                        phase="profiling",
                        kind="ProfileError",
                        summary=f"the profiler's trace could not be written or read: "
                        f"{type(exc).__name__}: {exc}",
                    )
                ) from None
    if failure is not None:
        raise ProfileError(failure)
    text = compiled.as_text()
    module_name = _module_name(text)
    with gc_paused():
        phases = compile_phases(profile, module_name)
        del profile
        module = parse_hlo(text)
        size = program_size(ins.jaxpr, module)
    devices = (
        compiled.runtime_executable().local_devices()
        if hasattr(compiled.runtime_executable(), "local_devices")
        else jax.devices()
    )
    rep = CompileTimeReport(
        label=ins.label,
        backend=devices[0].platform if devices else jax.default_backend(),
        module=module_name,
        trace_s=trace_s,
        lower_s=lower_s,
        compile_s=compile_s,
        phases=phases,
        size=size,
        cache_bypassed=bypassed,
    )
    if not bypassed:
        rep.notes.append(
            "JAX's persistent compilation cache could not be bypassed on this JAX: a cached "
            "program compiles nothing, and its phases are missing"
        )
    if exported:
        rep.notes.append(export_note(exported, trace_dir or exported))
    if not phases.found:
        rep.notes.append(
            f"XLA's passes for {module_name or 'the module'} were not found in the trace: "
            "the compile was served from a cache, or this XLA names its passes differently"
        )
    return rep


__all__ = ["compile_time_profile", "fresh_compile_context"]

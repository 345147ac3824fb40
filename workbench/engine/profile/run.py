"""Run a compiled call under the profiler and attribute what the device did.

Order of work: trace, lower and compile the call (errors name the user's line), one
warm-up call (compilation caches, allocator, thread pools; not profiled), then ``calls``
calls under ``jax.profiler.trace`` into a fresh temporary directory, each followed by
``block_until_ready`` on every output, so a call's device work ends inside its own step.
The trace is read back with ``jax.profiler.ProfileData`` and the directory removed, the
profiler stopped in every case (an error in a call, an interrupt).  A profiler that is
already running (the user's own ``jax.profiler.trace``) is left alone and reported.
Outputs are dropped after each call: nothing here keeps the user's arrays alive.
"""

from __future__ import annotations

import glob
import linecache
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax

from workbench.engine import _jax_compat as compat
from workbench.engine.bench.peaks import peak_for
from workbench.engine.bench.state import StateCopyError, private_arguments
from workbench.engine.cache.tracker import inspecting
from workbench.engine.common.errors import ErrorReport, is_user_file, report
from workbench.engine.common.gcpause import gc_paused
from workbench.engine.common.source import SourceLine, code_label
from workbench.engine.hlo.costs import instruction_costs
from workbench.engine.hlo.model import HloModule
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.jaxpr.arguments import filter_arrays, needs_filtering, referable
from workbench.engine.profile.attribute import attribute
from workbench.engine.profile.events import (
    NoDeviceEvents,
    ProfileEvents,
    cpu_events,
    gpu_events,
    launch_schedule,
)
from workbench.engine.profile.report import ProfileReport
from workbench.engine.profile.store import parsed, remember, text_key
from workbench.engine.stages import function_name

DEFAULT_CALLS = 10
MAX_CALLS = 1000


class ProfileError(Exception):
    """A profile that could not be taken; ``.report`` says why and where (front doors show it)."""

    def __init__(self, rep: ErrorReport) -> None:
        super().__init__(rep.summary)
        self.report = rep


def _fail(summary: str, kind: str = "ProfileError", phase: str = "profiling") -> ProfileError:
    return ProfileError(ErrorReport(phase=phase, kind=kind, summary=summary))


def check_calls(calls: object) -> int:
    if isinstance(calls, bool) or not isinstance(calls, int) or not 1 <= calls <= MAX_CALLS:
        raise ValueError(
            f"n (the number of profiled calls) must be an integer from 1 to "
            f"{MAX_CALLS}, got {calls!r}"
        )
    return calls


@dataclass
class PreparedCall:
    """The compiled executable and the arguments it takes (static ones removed)."""

    label: str
    compiled: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    #: per leaf of ``(args, kwargs)`` flattened: whether the executable donates it
    #: (``donate_argnums`` and ``donate_argnames`` alike, from ``Compiled.args_info``)
    donated: tuple[bool, ...]
    compile_s: float
    note: str = ""


def prepare(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    command_buffers: bool = True,
    inspected_by: str = "workbench.profile",
) -> PreparedCall:
    """Trace, lower and compile ``fn(*args, **kwargs)`` as ``jax.jit`` would run it.

    A ``jax.jit`` function keeps its own settings (static arguments, donation); so does an
    ``nnx.jit`` function, compiled and called through its own AOT stages on a copy of the
    call's NNX objects (wrapped in another ``jax.jit``, its state updates would be no output
    and XLA would drop them: a smaller program than the one that runs; called on the
    user's objects, the profiled calls would train their model); anything else is
    wrapped in ``jax.jit``.  ``command_buffers=False`` compiles for a GPU without
    XLA's command buffers, so each kernel's event names its instruction.
    """
    if not callable(fn):
        raise _fail(
            f"%jaxprof needs a call of a function, got a {type(fn).__name__}",
            "TypeError",
            "arguments",
        )
    label = compat.transform_label(fn, function_name(fn))
    bound = compat.bound_jitted(fn)
    if bound is not None:
        fn, args = bound[0], (bound[1], *args)
    nnx_call = compat.nnx_jit_call(fn, args, kwargs)
    if nnx_call is not None:
        fn, args, kwargs = _on_copies(*nnx_call)
    elif not compat.is_jitted(fn) and needs_filtering(args, kwargs):
        # an Equinox module (its activation functions are leaves) or any argument with
        # non-array leaves: compiled over its array leaves, as %%hlo and
        # eqx.filter_jit do
        fn, args, kwargs = filter_arrays(fn, args, kwargs)
    jitted: Any = fn if compat.is_jitted(fn) or nnx_call is not None else jax.jit(referable(fn))
    settings = compat.jit_settings(fn) if compat.is_jitted(fn) else None
    t0 = time.perf_counter()
    # the profile's own executable (ahead of time, never in the function's call cache):
    # the workbench inspecting the call, as %%hlo does, so the user's later call is not
    # told it "recompiled", nor the profile's wrapper (a fresh ``jax.jit`` around an
    # ``nnx.jit``) a "new function object" of the user's function
    # (the front door names itself: the stack is not read for it, since reading a frame's
    # locals on Python 3.12 leaves a snapshot on it that outlives the magic's ``del``)
    with inspecting(inspected_by):
        got = _trace_and_compile(jitted, args, kwargs, command_buffers)
    if isinstance(got, ProfileError):
        # raised here, not through the context manager, so its traceback holds only this
        # front door's frames (which the magics release), none of the tracker's
        raise got from None
    compiled, note = got
    compile_s = time.perf_counter() - t0
    n = len(args)
    static = set()
    names: set[str] = set()
    if settings is not None:
        static = {i + n if i < 0 else i for i in settings.static_argnums}
        names = set(settings.static_argnames)
    dyn = tuple(a for i, a in enumerate(args) if i not in static)
    dyn_kw = {k: v for k, v in kwargs.items() if k not in names}
    return PreparedCall(label, compiled, dyn, dyn_kw, _donated_leaves(compiled), compile_s, note)


def _on_copies(
    wrapper: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """An ``nnx.jit`` call with its NNX objects replaced by one joint copy (buffers
    copied, see :mod:`workbench.engine.bench.state`): its compiled calls write the new
    state into the copy, never into the user's model, optimizer or ``Rngs``."""
    try:
        private = private_arguments(args, kwargs)
    except StateCopyError as exc:
        # the benchmark's one line, less its --allow-mutation offer (no such flag here)
        why = str(exc).split("; the timed calls", 1)[0].replace("to time on", "to profile on")
        raise _fail(
            f"{why}; the profiled calls would change yours: nothing ran",
            "StateCopyError",
            "arguments",
        ) from None
    return wrapper, private.args, private.kwargs


def _trace_and_compile(
    jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any], command_buffers: bool
) -> tuple[Any, str] | ProfileError:
    """The compiled executable of ``jitted(*args, **kwargs)`` and a note on how, or the
    error to raise (returned, not raised: the caller raises it outside ``inspecting``)."""
    try:
        lowered = jitted.trace(*args, **kwargs).lower()
    except Exception as exc:
        return ProfileError(report(exc, "trace"))
    note = ""
    if not command_buffers and jax.default_backend() != "gpu":
        note = f"command buffers are a GPU feature: nothing to turn off on {jax.default_backend()}"
    try:
        if command_buffers or jax.default_backend() != "gpu":
            compiled = lowered.compile()
        else:
            compiled = lowered.compile({"xla_gpu_enable_command_buffer": ""})
            note = (
                "profiled a copy compiled with XLA's command buffers off "
                "(--xla_gpu_enable_command_buffer=): kernel events name their instruction"
            )
    except Exception as exc:
        return ProfileError(report(exc, "compile"))
    return compiled, note


def _cell_of_the_function(rep: ProfileReport, fn: Any) -> None:
    """Key the lines of the profiled function's file on the cell run that defined it.

    A file names a cell only while no other cell has the same text (ipykernel names a
    cell's file after a hash of its text, and keeps the latest cell for it): the function's
    code object knows its own run (recorded by the shell, :func:`code_label`), so its lines
    are charged to that cell, not to a later one that happens to read the same."""
    bound = compat.bound_jitted(fn)
    code = compat.function_code(compat.innermost_function(bound[0] if bound else fn))
    label = code_label(code) if code is not None else None
    if label is None:
        return
    file = code.co_filename
    rep.cells[file] = label
    for ln in rep.lines:
        if ln.file == file:
            ln.cell = label.number
    for ls in rep.listings:
        if ls.file == file:
            ls.cell = label.number


def _donated_leaves(compiled: Any) -> tuple[bool, ...]:
    """Which leaves of the call's ``(args, kwargs)`` the executable donates.

    ``Compiled.donate_argnums`` counts keyword arguments as positions after the positional
    ones (a ``donate_argnames`` argument shows up as its index there), so it cannot be
    mapped onto ``args`` alone; ``args_info`` has one ``ArgInfo`` per leaf of
    ``(args, kwargs)`` in the pytree order the call flattens them in.
    """
    try:
        info = compiled.args_info
    except Exception:  # no per-leaf info: when it donates anything, every array is copied
        return (True,) if getattr(compiled, "donate_argnums", ()) else ()  # (length mismatch)
    leaves = jax.tree.leaves(info, is_leaf=lambda x: hasattr(x, "donated"))
    flags = tuple(bool(getattr(leaf, "donated", False)) for leaf in leaves)
    return flags if any(flags) else ()


def _fresh(call: PreparedCall) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Arguments for one call: donated ones copied, so the user's arrays are never consumed."""
    if not call.donated:
        return call.args, call.kwargs
    leaves, tree = jax.tree.flatten((call.args, call.kwargs))
    every = len(leaves) != len(call.donated)  # cannot tell which: copy every array
    leaves = [
        x.copy() if isinstance(x, jax.Array) and (every or d) else x
        for x, d in zip(leaves, call.donated if not every else [True] * len(leaves), strict=True)
    ]
    args, kwargs = jax.tree.unflatten(tree, leaves)
    return tuple(args), dict(kwargs)


def _run_once(call: PreparedCall, where: str) -> None:
    args, kwargs = _fresh(call)
    try:
        leaves: list[Any] = jax.tree.leaves(call.compiled(*args, **kwargs))
        for leaf in leaves:
            if not isinstance(leaf, jax.Array):
                raise TypeError(f"the call returned a {type(leaf).__name__}, not an array")
        jax.block_until_ready(leaves)
        leaves.clear()  # drop the outputs now: nothing keeps the user's arrays alive
    except Exception as exc:
        rep = _runtime_report(exc)
        rep.summary = f"{rep.summary} ({where})"
        raise ProfileError(rep) from None


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_RAISED = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Interrupt)): (.*)$")


def _runtime_report(exc: Exception) -> ErrorReport:
    """A failure while the compiled call ran.  A host callback's exception reaches us as an
    XLA runtime error with the Python traceback inside its message: its last line (the
    user's exception) and the user's innermost frame make the report, not XLA's wrapper."""
    rep = report(exc, "running the call")
    text = str(exc)
    if "Traceback (most recent call last)" not in text:
        return rep
    lines = text.splitlines()
    raised = [m for m in map(_RAISED.match, lines) if m]
    if raised:
        rep.kind, rep.summary = raised[-1].group(1).rsplit(".", 1)[-1], raised[-1].group(2)
    frames = [(f, int(n), fn) for f, n, fn in _FRAME.findall(text) if is_user_file(f)]
    if frames:
        file, line, function = frames[-1]
        rep.where = SourceLine(file, line, function, linecache.getline(file, line).strip())
    return rep


class _Background:
    """``fn()`` on a thread, the cyclic GC paused meanwhile (it builds ~10^5 short-lived
    objects the GC would rescan again and again); ``result()`` joins and re-raises."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._value: Any = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                with gc_paused():
                    self._value = fn()
            except BaseException as exc:  # handed to result(): never lost on the thread
                self._error = exc

        self._thread = threading.Thread(target=run, name="jaxprof-parse", daemon=True)
        self._thread.start()

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _options() -> Any:
    """No Python tracer (every Python call of the calls would be recorded, then converted
    and written: most of the profiler's cost, none of it device work) and no HLO protos in
    the trace (we have the optimized text); the host tracer stays on: XLA:CPU's thunk events
    and the dispatch events are host TraceMes."""
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    options.enable_hlo_proto = False
    return options


class TraceDir(NamedTuple):
    """The directory ``--trace-dir`` names (absolute), and the outermost folder of it that
    :func:`check_trace_dir` made (None when it was there already): what a failed run
    removes, so it leaves behind nothing it made."""

    path: str
    made: str | None

    def remove_made(self) -> None:
        """Remove what :func:`check_trace_dir` made (a failed run: no trace was exported)."""
        if self.made is not None:
            shutil.rmtree(self.made, ignore_errors=True)


def check_trace_dir(path: str) -> TraceDir:
    """The absolute directory ``--trace-dir`` names, made if missing and checked writable
    before anything runs; raises ``ValueError`` with one line saying why not (having
    removed any folder it made)."""
    where = os.path.abspath(os.path.expanduser(path))
    missing = where
    while not os.path.exists(os.path.dirname(missing)) and os.path.dirname(missing) != missing:
        missing = os.path.dirname(missing)
    made = TraceDir(where, None if os.path.exists(where) else missing)
    try:
        os.makedirs(where, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".jaxprof-probe-", dir=where)
        os.close(fd)
        os.remove(probe)
    except OSError as exc:
        made.remove_made()
        why = exc.strerror or type(exc).__name__
        raise ValueError(f"cannot write the trace to {where}: {why}") from None
    return made


def export_trace(where: str, to: str) -> str:
    """Copy the profiler's run under ``where`` into ``to`` (XProf's layout:
    ``to/plugins/profile/<run>/``); returns the run's directory there."""
    runs = sorted(glob.glob(os.path.join(where, "plugins", "profile", "*")))
    try:
        shutil.copytree(where, to, dirs_exist_ok=True)
    except OSError as exc:
        raise _fail(
            f"the trace could not be copied to {to}: {exc.strerror or exc}", type(exc).__name__
        ) from None
    return os.path.join(to, os.path.relpath(runs[-1], where)) if runs else to


def export_note(run_dir: str, root: str) -> str:
    """How to open an exported trace (one line)."""
    perfetto = os.path.join(run_dir, "perfetto_trace.json.gz")
    return (
        f"trace saved in {run_dir}: open it in XProf (xprof --logdir {root}, or TensorBoard's "
        f"Profile tab: tensorboard --logdir {root}) or in Perfetto (ui.perfetto.dev, "
        f"Open trace file: {perfetto})"
    )


@contextmanager
def profiler_session(tmp_root: str | None = None, perfetto: bool = False) -> Iterator[str]:
    """A running ``jax.profiler`` writing into a fresh directory, stopped and removed after.

    Yields the directory; the caller reads the trace inside the ``with`` (and copies it out
    with :func:`export_trace`).  ``perfetto``: the profiler also writes
    ``perfetto_trace.json.gz`` when it stops (what Perfetto's UI opens).
    """
    try:
        where = tempfile.mkdtemp(prefix="jaxprof-", dir=tmp_root)
    except OSError as exc:
        place = tmp_root or tempfile.gettempdir()
        raise _fail(
            f"cannot create a temporary directory for the profile in {place} "
            f"({exc.strerror or exc}); set TMPDIR to a writable directory",
            type(exc).__name__,
        ) from None
    try:
        try:
            jax.profiler.start_trace(
                where, create_perfetto_trace=perfetto, profiler_options=_options()
            )
        except RuntimeError as exc:
            if "already" in str(exc).lower():
                raise _fail(
                    "a profiler is already running (a jax.profiler.trace or "
                    "start_trace of your own?); stop it first: only one profile may "
                    "run at a time",
                    "ProfilerBusy",
                ) from None
            raise _fail(f"the profiler could not start: {exc}", type(exc).__name__) from None
        try:
            yield where
        finally:
            try:
                jax.profiler.stop_trace()
            except Exception:  # stopped already, or failing to stop: the error that
                pass  # brought us here is the one to report
    finally:
        shutil.rmtree(where, ignore_errors=True)


def read_trace(where: str) -> Any:
    """The ``ProfileData`` of the trace written under ``where``."""
    found = sorted(glob.glob(os.path.join(where, "**", "*.xplane.pb"), recursive=True))
    if not found:
        raise _fail(f"the profiler wrote no trace under {where} (disk full or not writable?)")
    return jax.profiler.ProfileData.from_file(found[-1])


def device_events(
    profile: Any,
    platform: str,
    module: HloModule,
    calls: int,
    device_id: int = 0,
    single_device: bool = False,
) -> ProfileEvents:
    """The steps of ``module`` in ``profile``, read the way ``platform`` records them."""
    if platform == "cpu":
        return cpu_events(
            profile,
            module.name,
            (i.name for i in module.instructions()),
            device_id,
            single_device=single_device,
        )
    if platform in ("gpu", "cuda", "rocm"):
        schedule = launch_schedule((i.name, i.opcode) for i in module.entry.instructions)
        return gpu_events(
            profile,
            module.name,
            schedule,
            calls,
            device_id,
            (i.name for i in module.instructions()),
        )
    raise NoDeviceEvents(f"reading device events of the {platform} backend is not supported")


#: instructions that move no data and compute nothing: a program of only these has no
#: device work for the profiler to see
_NO_WORK = frozenset({"parameter", "tuple", "get-tuple-element", "constant", "bitcast"})


def no_device_work(module: HloModule, compiled: Any) -> str:
    """Why the compiled call does no device work ("" when it does some): it returns no
    arrays (``None``, a ``print``), or XLA left nothing to run (its outputs are its inputs
    or constants)."""
    try:
        outputs = jax.tree.leaves(compiled.out_info)
    except Exception:  # a JAX without out_info: judge by the instructions alone
        outputs = None
    if outputs == []:
        return (
            "returns no arrays (its result is None or holds none), so it starts no device "
            "work and there is nothing to profile; profile the call that computes the "
            "arrays (return them, any pytree of them)"
        )
    if all(i.opcode in _NO_WORK for i in module.instructions()):
        return (
            "compiles to a program with no device work (its outputs are its inputs or "
            "constants), so there is nothing to profile"
        )
    return ""


def profile_call(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    calls: int = DEFAULT_CALLS,
    tmp_root: str | None = None,
    command_buffers: bool = True,
    label: str | None = None,
    costs: Callable[[HloModule], Any] | None = instruction_costs,
    inspected_by: str = "workbench.profile",
    trace_dir: str | None = None,
) -> ProfileReport:
    """Profile ``calls`` calls of ``fn(*args, **kwargs)`` and attribute the device time.

    ``costs``: ``module -> {instruction name: OpCost}`` for the FLOPs/bytes columns (our
    counts of the optimized HLO, :func:`~workbench.engine.hlo.costs.instruction_costs`).
    Raises :class:`ProfileError` with a short report for anything that goes wrong.
    ``trace_dir`` (checked by :func:`check_trace_dir`): the profiled calls' trace is
    copied there, with a note on how to open it.
    ``inspected_by`` names the front door on the compile line ("%%jaxprof"): the
    profile's compile is the workbench's, never a compile of the user's function.
    """
    check_calls(calls)
    call = prepare(fn, args, kwargs, command_buffers, inspected_by)
    t0 = time.perf_counter()  # profile_s: all but the compile (parse, warm-up included)
    phases: dict[str, float] = {}
    mark = t0

    def phase(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        phases[name] = now - mark
        mark = now

    text = call.compiled.as_text()
    _run_once(call, "the warm-up call")
    phase("warm-up call")
    exported = ""
    with profiler_session(tmp_root, perfetto=trace_dir is not None) as where:
        for i in range(calls):
            _run_once(call, f"profiled call {i + 1} of {calls}")
        phase("profiled calls")
        # the module is parsed and counted while the profiler converts its trace (C++,
        # without the GIL): not before the calls, where it would only add to the wait,
        # nor during them, where it would take the CPU the calls are measured on
        reading = _Background(lambda: parsed(text, parse_hlo, costs))
        try:
            jax.profiler.stop_trace()
            profile = read_trace(where)
        except ProfileError:
            raise
        except Exception as exc:  # disk full while writing, a file the reader rejects
            raise _fail(
                f"the profiler's trace could not be written or read: {type(exc).__name__}: {exc}",
                "ProfileError",
            ) from None
        if trace_dir is not None:
            exported = export_trace(where, trace_dir)
        phase("stop and read the trace")
        module, op_costs = reading.result()
    phase("parse and count (rest)")
    devices = (
        call.compiled.runtime_executable().local_devices()
        if hasattr(call.compiled.runtime_executable(), "local_devices")
        else jax.devices()
    )
    device = devices[0]
    platform = device.platform
    try:
        with gc_paused():
            events = device_events(
                profile,
                platform,
                module,
                calls,
                getattr(device, "id", 0),
                single_device=len(devices) == 1,
            )
    except NoDeviceEvents as exc:
        idle = no_device_work(module, call.compiled)
        if idle:  # said plainly, as %jaxbench says it: not as a trace that lacks events
            raise _fail(f"{label or call.label} {idle}", "NoDeviceWork") from None
        raise _fail(f"{exc}: no per-instruction device time to show", "NoDeviceEvents") from None
    finally:
        del profile
    phase("events")
    with gc_paused():
        rep = attribute(
            events,
            module,
            label=label or call.label,
            backend=platform,
            device_kind=device.device_kind,
            module_key=text_key(text),
            costs=op_costs,
            peak=peak_for(device.device_kind),
        )
    phase("attribution")
    _cell_of_the_function(rep, fn)
    rep.phases = phases
    rep.profile_s = time.perf_counter() - t0
    rep.compile_s = call.compile_s
    if call.note:
        rep.notes.insert(0, call.note)
    if exported:
        rep.notes.append(export_note(exported, trace_dir or exported))
    remember(rep)
    return rep


__all__ = [
    "DEFAULT_CALLS",
    "ProfileError",
    "check_calls",
    "TraceDir",
    "check_trace_dir",
    "export_note",
    "export_trace",
    "prepare",
    "profile_call",
    "profiler_session",
    "read_trace",
]

"""Device events of a profile, grouped into steps and named by HLO instruction.

What the profiler writes (read through ``jax.profiler.ProfileData``: planes, lines, events,
each event with ``name``, ``start_ns``, ``duration_ns`` and ``stats``), as found by
reading real traces:

- **XLA:CPU** (JAX 0.10.2): plane ``/host:CPU``; the thread lines named
  ``tf_XLAPjRtCpuClient/...`` (and ``tf_XLAEigen/...`` for intra-op work) carry one event
  per executed thunk, named exactly like the HLO instruction (``ynn_fusion.308``,
  ``dot``, ``wrapped_reduce-window``) with stats ``hlo_op`` (the same name),
  ``hlo_module`` (``jit_loss``), ``program_id`` and ``run_id`` (one per call).  The same
  line has a ``ThunkExecutor::Execute`` event spanning the whole step (it carries no
  ``run_id``, and only programs run by the concurrent executor have it; a zero-length
  ``ThunkExecutor::Execute (wait for completion)`` with the ``run_id`` closes every
  step), the calling (``python``) thread has ``CommonPjRtLoadedExecutable::
  ExecuteHelperOnSingleDevice`` where the call was dispatched, zero-length ``end: <name>`` markers and thread-pool bookkeeping
  (``ThreadpoolListener::*``, ``SlinkyThreadPool::Await``) that are not device work.
  A small program runs inline on the calling thread: its thunk events are then on the
  ``python`` line, among the Python and PjRt events.
- **GPU** (JAX 0.11.2, H100): plane ``/device:GPU:0``, lines ``Stream #N(Compute)`` (also
  ``(Compute,Memset)``): one event per kernel, named after the fusion with ``.`` turned
  into ``_`` (``gemm_fusion_dot_4``) or after the library's kernel for custom calls
  (``nvjet_sm90_...`` for cuBLAS), plus ``Memset N`` events.  Stats ``hlo_module``,
  ``hlo_op``, ``kernel_details``, occupancy.  Under XLA's command buffers (CUDA graphs,
  the default) ``hlo_op`` names the command buffer (``command_buffer_1``), not the
  instruction; the kernel name then identifies the fusion, except that XLA gives one
  kernel to identical fusions (``gemm_fusion_dot_5`` runs for ``gemm_fusion_dot.5``,
  ``.6`` and ``.7``), so :func:`match_kernels` walks the module's schedule in order.
  Without command buffers ``hlo_op`` is the instruction's name.

Nothing here talks to the profiler: the functions take a ``ProfileData`` (or any object
with the same ``planes``/``lines``/``events`` shape), so recorded GPU profiles are parsed
by the same code on a machine without a GPU.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class DeviceEvent:
    """One executed instruction (CPU thunk) or kernel (GPU), in nanoseconds.

    ``self_ns`` is the time not covered by events nested inside it on the same line (a
    ``while`` thunk around its body's thunks): summing ``self_ns`` never counts twice.
    """

    name: str  # as the profiler wrote it (kernel name on GPU)
    instruction: str | None  # the HLO instruction it ran for, None when it cannot be told
    start_ns: float
    duration_ns: float
    self_ns: float = 0.0
    how: str = ""  # "hlo_op" | "kernel name" | "order" (multi-kernel / library kernel)

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns


@dataclass(slots=True)
class Step:
    """One profiled call: its device events in start order and its measured span."""

    start_ns: float
    end_ns: float
    events: list[DeviceEvent] = field(default_factory=list)
    #: XLA:CPU: host time from the call's dispatch to the executor's start (argument
    #: handling, output buffers, the hand-off to the executor's threads): not in the step
    dispatch_ns: float = 0.0

    @property
    def duration_ns(self) -> float:
        return self.end_ns - self.start_ns


@dataclass(slots=True)
class ProfileEvents:
    """What the trace said about one compiled module, independent of the platform."""

    platform: str  # "cpu" | "gpu"
    module_name: str
    steps: list[Step]
    #: how events were named: "hlo_op" (the stat names the instruction), "kernel names"
    #: (command buffers: kernel names matched to the schedule), "thunks" (XLA:CPU)
    attribution: str
    #: how the step's time was measured (shown next to coverage)
    step_source: str
    notes: list[str] = field(default_factory=list)


class NoDeviceEvents(RuntimeError):
    """The profile has no device events for the module (a backend that records none)."""


def _stats(event: Any) -> dict[str, Any]:
    try:
        return dict(event.stats)
    except Exception:  # a stat that cannot be decoded is no reason to lose the event
        return {}


def _self_times(events: list[DeviceEvent]) -> None:
    """Fill ``self_ns``: duration minus the parts covered by events nested inside (same line)."""
    stack: list[DeviceEvent] = []
    for ev in sorted(events, key=lambda e: (e.start_ns, -e.duration_ns)):
        ev.self_ns = ev.duration_ns
        while stack and stack[-1].end_ns <= ev.start_ns:
            stack.pop()
        if stack and ev.end_ns <= stack[-1].end_ns:
            stack[-1].self_ns -= ev.duration_ns
        stack.append(ev)
    for ev in events:
        ev.self_ns = max(ev.self_ns, 0.0)


# -- XLA:CPU ---------------------------------------------------------------------------------
#: events of the executor's threads that are bookkeeping, never an instruction
#: (small programs run inline on the calling thread: its line is read too)
_NOT_WORK = (
    "end: ",
    "ThreadpoolListener::",
    "SlinkyThreadPool::",
    "$",
    "PjitFunction",
    "CommonPjRt",
    "Wait for",
    "Handle input",
    "ParseArguments",
    "PythonRefManager",
    "AllocateOutputBuffers",
)


def cpu_events(
    profile: Any,
    module_name: str,
    instructions: Iterable[str],
    device: int = 0,
    single_device: bool = False,
) -> ProfileEvents:
    """The steps of ``module_name`` in a host trace: one per ``run_id``.

    ``single_device``: the program runs on one device, so the steps can be told apart by
    time (see :func:`_cpu_windows`) instead of by each event's stats, which cost ~20 µs an
    event to read (most of our share of the profiling cost: a 24-layer gradient has
    1,140 thunks a call).

    A step runs from the executor's start (the ``ThunkExecutor::Execute`` event opening the
    run, the latest one between the call's dispatch and its first thunk; the dispatch
    itself, ``CommonPjRtLoadedExecutable::Execute...`` on the calling thread, when the
    program has none) to its completion (``ThunkExecutor::Execute (wait for completion)``,
    else its last thunk's end): the gaps between thunks count as overhead, not as
    attributed time.  The host's dispatch before the executor starts (argument handling,
    output buffers, waking an executor thread: ~0.3 ms for a 24-layer gradient's hundreds
    of buffers, several ms on a loaded machine) is kept apart as ``Step.dispatch_ns``, as
    a GPU step does not include the host's launch of its first kernel either.  A program on several
    devices (SPMD) runs the same steps on each: ``device``'s events are read (its
    ``device_ordinal`` stat), so times are one device's, not the sum over devices.
    """
    known = set(instructions)
    if single_device:
        found = _cpu_windows(profile, module_name, known)
        if found is not None:
            return found
    by_run: dict[Any, list[DeviceEvent]] = {}
    dispatches: list[float] = []
    execs: list[float] = []
    done: dict[Any, float] = {}
    ordinals: set[Any] = set()
    for plane in profile.planes:
        if not plane.name.startswith("/host:"):
            continue
        for line in plane.lines:
            line_events: list[DeviceEvent] = []
            for e in line.events:
                name = e.name
                if name.startswith("CommonPjRtLoadedExecutable::Execute") and "Prepare" not in name:
                    dispatches.append(e.start_ns)
                    continue
                if name == "ThunkExecutor::Execute":
                    execs.append(e.start_ns)
                    continue
                if name.startswith(_NOT_WORK):
                    continue  # reading stats is most of the cost: skip what cannot be work
                st = _stats(e)
                if name.startswith("ThunkExecutor::Execute (wait"):
                    done[st.get("run_id")] = e.start_ns + e.duration_ns
                    continue
                if st.get("hlo_module") != module_name or "hlo_op" not in st:
                    continue
                ordinal = st.get("device_ordinal", device)
                ordinals.add(ordinal)
                if ordinal != device:
                    continue
                op = str(st["hlo_op"])
                ev = DeviceEvent(
                    name, op if op in known else None, e.start_ns, e.duration_ns, how="hlo_op"
                )
                line_events.append(ev)
                by_run.setdefault(st.get("run_id"), []).append(ev)
            _self_times(line_events)
    if not by_run:
        raise NoDeviceEvents(f"the trace has no events of {module_name} on the host plane")
    dispatches.sort()
    execs.sort()
    steps = []
    dispatched = started = 0
    for run, evs in by_run.items():
        evs.sort(key=lambda e: e.start_ns)
        first, hi = evs[0].start_ns, max(e.end_ns for e in evs)
        lo, lead = first, 0.0
        before = [d for d in dispatches if d <= first]
        if before:
            lo, by_executor = _executor_start(execs, before[-1], first)
            lead = lo - before[-1]
            dispatched += 1
            started += by_executor
        hi = max(hi, done.get(run, hi))
        steps.append(Step(lo, hi, evs, dispatch_ns=lead))
    steps.sort(key=lambda s: s.start_ns)
    source = (
        _SOURCE_EXECUTOR
        if started == len(steps)
        else _SOURCE_DISPATCH
        if dispatched == len(steps)
        else "first thunk start to completion"
    )
    notes = []
    if len(ordinals) > 1:
        notes.append(f"the program ran on {len(ordinals)} devices: times are device {device}'s")
    return ProfileEvents("cpu", module_name, steps, "thunks", source, notes)


_SOURCE_EXECUTOR = (
    "the executor's run of the call (ThunkExecutor::Execute) to its completion on the host"
)
_SOURCE_DISPATCH = "dispatch of the call to its completion on the host"


def _executor_start(execs: list[float], dispatch: float, first: float) -> tuple[float, bool]:
    """Where a step starts: the latest executor start in ``[dispatch, first thunk]``, else
    the dispatch; and whether it was an executor's start."""
    i = bisect.bisect_right(execs, first) - 1
    if i >= 0 and execs[i] >= dispatch:
        return execs[i], True
    return dispatch, False


def _cpu_windows(profile: Any, module_name: str, known: set[str]) -> ProfileEvents | None:
    """Steps of a single-device program by time, reading almost no stats.

    Each dispatch opens a window that the next one closes; a thunk event whose name is an
    instruction of the module belongs to the window it starts in (XLA:CPU names thunk
    events exactly like the instruction, so the name is the ``hlo_op``); the step ends at
    the window's completion marker or last thunk.  One event per window has its stats read
    to check it is this module's (a window of another program, such as the copy of a
    donated argument, is dropped).  None when the trace has no dispatch events: the caller
    then reads every event's stats.
    """
    dispatches: list[float] = []
    execs: list[float] = []
    done: list[float] = []
    candidates: list[tuple[DeviceEvent, Any]] = []  # (ours, the profiler's)
    lines: list[list[DeviceEvent]] = []
    for plane in profile.planes:
        if not plane.name.startswith("/host:"):
            continue
        for line in plane.lines:
            line_events: list[DeviceEvent] = []
            lines.append(line_events)
            for e in line.events:
                name = e.name
                if name in known:
                    ev = DeviceEvent(name, name, e.start_ns, e.duration_ns, how="hlo_op")
                    line_events.append(ev)
                    candidates.append((ev, e))
                elif (
                    name.startswith("CommonPjRtLoadedExecutable::Execute") and "Prepare" not in name
                ):
                    dispatches.append(e.start_ns)
                elif name == "ThunkExecutor::Execute":
                    execs.append(e.start_ns)
                elif name.startswith("ThunkExecutor::Execute (wait"):
                    done.append(e.start_ns + e.duration_ns)
    if not dispatches:
        return None
    dispatches.sort()
    execs.sort()
    done.sort()
    edges = [*dispatches[1:], float("inf")]
    windows: list[list[DeviceEvent]] = [[] for _ in dispatches]
    firsts: list[Any] = [None] * len(dispatches)
    first_start = [float("inf")] * len(dispatches)
    for ev, raw in candidates:
        i = bisect.bisect_right(dispatches, ev.start_ns) - 1
        if i < 0:
            continue
        windows[i].append(ev)
        if ev.start_ns < first_start[i]:
            first_start[i], firsts[i] = ev.start_ns, raw
    steps = []
    started = 0
    for i, evs in enumerate(windows):
        if not evs or _stats(firsts[i]).get("hlo_module") != module_name:
            continue
        evs.sort(key=lambda e: e.start_ns)
        hi = max(e.end_ns for e in evs)
        j = bisect.bisect_left(done, hi)
        if j < len(done) and done[j] < edges[i]:
            hi = done[j]
        lo, by_executor = _executor_start(execs, dispatches[i], evs[0].start_ns)
        started += by_executor
        steps.append(Step(lo, hi, evs, dispatch_ns=lo - dispatches[i]))
    if not steps:
        raise NoDeviceEvents(f"the trace has no events of {module_name} on the host plane")
    for line_events in lines:
        _self_times(line_events)
    return ProfileEvents(
        "cpu",
        module_name,
        steps,
        "thunks",
        _SOURCE_EXECUTOR if started == len(steps) else _SOURCE_DISPATCH,
    )


# -- GPU -------------------------------------------------------------------------------------
_TRAILING_NUMBER = re.compile(r"[._](\d+)$")


def kernel_name(instruction: str) -> str:
    """The name XLA gives a fusion's kernel: ``gemm_fusion_dot.264`` -> ``gemm_fusion_dot_264``."""
    return instruction.replace(".", "_").replace("-", "_")


def _base(name: str) -> str:
    return _TRAILING_NUMBER.sub("", name)


def match_kernels(
    kernels: Sequence[str], schedule: Sequence[tuple[str, str]], elsewhere: Iterable[str] = ()
) -> list[tuple[str | None, str]]:
    """The instruction each kernel of one step ran for, walking ``schedule`` in order.

    ``schedule``: ``(name, opcode)`` of the instructions that launch work, in the module's
    schedule order (``is_scheduled=true`` modules list them in execution order).  For each
    kernel: the next instruction whose kernel name is exactly the kernel's; else an
    instruction of ``elsewhere`` (a ``while`` body's or a branch's: they run, trip after
    trip, inside the schedule's ``while``) whose kernel name is exactly the kernel's, the
    position in the schedule kept (a body's ``loop_fusion.3`` must not be taken for the
    entry's ``loop_fusion.7`` by family, which would skip everything between); else the next
    one of the same family (XLA reuses one kernel for identical fusions, named after the
    first: ``loop_reduce_fusion`` runs for ``loop_reduce_fusion.1`` too); else, for a
    library kernel (cuBLAS's ``nvjet_...``, cuDNN's), the next custom call; a ``Memset``
    belongs to the kernel after it; anything else left (a second kernel of one
    instruction) goes to the instruction matched last.  Returns ``(instruction or None,
    how)`` per kernel, ``how`` one of "kernel name", "kernel family", "library kernel",
    "memset", "order", "unmatched".
    """
    names = [n for n, _ in schedule]
    mangled = [kernel_name(n) for n in names]
    bases = [_base(m) for m in mangled]
    calls = [op == "custom-call" for _, op in schedule]
    scheduled = set(names)
    inner = {kernel_name(n): n for n in elsewhere if n not in scheduled}
    pos = 0
    last: str | None = None
    last_call = False  # the instruction matched last is a custom call
    out: list[tuple[str | None, str]] = []
    memsets: list[int] = []
    for k in kernels:
        if k.startswith("Memset"):
            memsets.append(len(out))
            out.append((None, "memset"))
            continue
        hit = next((i for i in range(pos, len(names)) if mangled[i] == k), None)
        how = "kernel name"
        if hit is None and k in inner:
            last, last_call = inner[k], False
            out.append((last, "kernel name"))
            continue
        if hit is None:
            b = _base(k)
            hit = next((i for i in range(pos, len(names)) if bases[i] == b), None)
            how = "kernel family"
        if hit is None and not last_call:
            hit = next((i for i in range(pos, len(names)) if calls[i]), None)
            how = "library kernel"
        if hit is None:
            out.append((last, "order") if last is not None else (None, "unmatched"))
            continue
        last, last_call = names[hit], calls[hit]
        pos = hit + 1
        out.append((last, how))
    for i in memsets:  # a memset prepares the kernel after it (cuBLAS workspace, output zeroing)
        after = next((out[j][0] for j in range(i + 1, len(out)) if out[j][0] is not None), None)
        before = next((out[j][0] for j in range(i - 1, -1, -1) if out[j][0] is not None), None)
        out[i] = (after or before, "memset")
    return out


def _split_steps(events: list[DeviceEvent], calls: int) -> list[list[DeviceEvent]]:
    """Kernels of ``calls`` calls, cut into calls: equal chunks with the same kernel names
    when the count divides; else at the ``calls - 1`` widest gaps (the host's
    ``block_until_ready`` and next dispatch sit between calls)."""
    n = len(events)
    if calls <= 1 or n < calls:
        return [events] if events else []
    if n % calls == 0:
        size = n // calls
        chunks = [events[i : i + size] for i in range(0, n, size)]
        names = [e.name for e in chunks[0]]
        if all([e.name for e in c] == names for c in chunks[1:]):
            return chunks
    gaps = sorted(
        range(1, n), key=lambda i: events[i].start_ns - events[i - 1].end_ns, reverse=True
    )[: calls - 1]
    cuts = [0, *sorted(gaps), n]
    return [events[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def gpu_events(
    profile: Any,
    module_name: str,
    schedule: Sequence[tuple[str, str]],
    calls: int,
    device: int = 0,
    instructions: Iterable[str] | None = None,
) -> ProfileEvents:
    """The steps of ``module_name`` on ``/device:GPU:<device>``'s compute streams.

    A step's time is the span from its first kernel's start to its last kernel's end
    (what the device was given to do; gaps inside are launch/host overhead).
    ``instructions``: every instruction name of the module (a loop body's too), for the
    ``hlo_op`` stat; default: the schedule's.
    """
    known = set(instructions) if instructions is not None else {n for n, _ in schedule}
    plane_name = f"/device:GPU:{device}"
    raw: list[tuple[DeviceEvent, str]] = []
    for plane in profile.planes:
        if plane.name != plane_name:
            continue
        for line in plane.lines:
            if not line.name.startswith("Stream") or "Compute" not in line.name:
                continue
            line_events: list[DeviceEvent] = []
            for e in line.events:
                st = _stats(e)
                if st.get("hlo_module") != module_name:
                    continue
                ev = DeviceEvent(e.name, None, e.start_ns, e.duration_ns)
                line_events.append(ev)
                raw.append((ev, str(st.get("hlo_op", ""))))
            _self_times(line_events)
    if not raw:
        raise NoDeviceEvents(f"the trace has no kernels of {module_name} on {plane_name}")
    raw.sort(key=lambda r: r[0].start_ns)
    by_name = 0
    for ev, op in raw:
        if op in known:
            ev.instruction, ev.how = op, "hlo_op"
    chunks = _split_steps([ev for ev, _ in raw], calls)
    for chunk in chunks:
        pending = [ev for ev in chunk if ev.instruction is None]
        if not pending:
            continue
        by_name += len(pending)
        # command buffers: the kernels hlo_op does not name are matched by name, in order,
        # against the schedule of what the step ran (those hlo_op named are known already)
        matched = match_kernels([e.name for e in pending], schedule, known)
        for ev, (ins, how) in zip(pending, matched, strict=True):
            ev.instruction, ev.how = ins, how
    steps = [Step(c[0].start_ns, max(e.end_ns for e in c), c) for c in chunks]
    attribution = "kernel names" if by_name else "hlo_op"
    notes = []
    if by_name:
        notes.append(
            "XLA ran the kernels inside command buffers (CUDA graphs), whose "
            "events name the buffer, not the instruction: kernels were matched to "
            "instructions by kernel name in schedule order"
        )
    return ProfileEvents(
        "gpu",
        module_name,
        steps,
        attribution,
        "first kernel start to last kernel end on the compute stream",
        notes,
    )


def launch_schedule(names_opcodes: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(name, opcode)`` of the instructions that may launch device work, in schedule order."""
    quiet = {
        "parameter",
        "constant",
        "tuple",
        "get-tuple-element",
        "bitcast",
        "after-all",
        "partition-id",
        "replica-id",
    }
    return [(n, op) for n, op in names_opcodes if op not in quiet]


__all__ = [
    "DeviceEvent",
    "NoDeviceEvents",
    "ProfileEvents",
    "Step",
    "cpu_events",
    "gpu_events",
    "kernel_name",
    "launch_schedule",
    "match_kernels",
]

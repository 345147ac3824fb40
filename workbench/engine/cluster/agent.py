"""The workbench's side of one JAX process in a cluster: its compile ledger and its state.

Each process (an ipyparallel engine) runs one :class:`Agent`.  It listens to JAX's trace,
lowering and backend-compile events, and for every compile of the user's code keeps a
:class:`ClusterCompile`: the function, its argument signature (global types), its static
arguments, its parameters' shardings and a fingerprint of the optimized program (a hash of
the HLO text with metadata, stack-frame tables and the module's name stripped, so the same
program compiled by two processes hashes alike).  A compile is matched to its trace through
the lowering (the jaxpr JAX's trace cache hands it), so a function compiled again for inputs
sharded otherwise, which JAX does not trace again, is still recorded in the function's row
with the trace's types.  :func:`snapshot` is what the notebook's kernel gathers from each
process; it holds strings and numbers only.

Why a ledger of its own beside the cache tracker's: comparing processes needs the program
itself (its fingerprint), which the tracker's records never hold.  Reading it costs one
``hlo_modules()`` per compile, paid only in processes of a cluster.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import threading
import time
from collections import OrderedDict, deque
from dataclasses import asdict, dataclass, field
from typing import Any

import jax

from workbench.engine import _jax_compat as compat
from workbench.engine.hlo.program_text import program_text

#: compiles kept per process (the newest)
MAX_COMPILES = 10_000

_MODULE_NAME = re.compile(r"^(HloModule\s+)[^\s,]+", re.MULTILINE)
#: an instruction's or computation's name (``%x.1``, ``%fused_computation``), or a
#: parameter's in a computation's header (``(x.1: f32[8])``)
_NAME = re.compile(r"%[\w.\-]+|(?<=[( ])[\w.\-]+(?=: )")


def fingerprint(hlo_text: str) -> str:
    """A short hash of the program in ``hlo_text``: metadata, stack frames, the module's
    name and every instruction's name left out (names are numbered in order of first use),
    so two processes compiling the same code under other names (a function, an argument
    renamed) hash alike."""
    names: dict[str, str] = {}

    def number(m: re.Match[str]) -> str:
        return names.setdefault(m.group(0).lstrip("%"), f"%{len(names)}")

    text = _NAME.sub(number, _MODULE_NAME.sub(r"\1m", program_text(hlo_text)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass
class ClusterCompile:
    """One backend compile of the user's code in one process."""

    #: JAX's name of the compile and the first line of the function's code
    #: ("jit(<lambda>) at line 6"): the row it is compared in; the file is left out, since
    #: each process runs a ``%%px`` cell from a file of its own
    function: str
    signature: str  # "f32[8], f32[8,4]": the arguments' global types
    statics: str  # "n=3": the static arguments' values ("" when none)
    shardings: str  # the parameters' shardings as XLA writes them ("" when unknown)
    fingerprint: str
    compile_s: float
    seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class StepTime:
    """The latest measured step of one process (``%jaxbench`` or ``%%jaxprof``)."""

    source: str  # "%jaxbench" | "%%jaxprof"
    label: str
    seconds: float
    collectives_s: float | None = None  # where a profile shows collective instructions

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Traced:
    """A jit trace's facts a following compile records (no reference to the function)."""

    skip: bool  # JAX's own helper: not the user's program
    name: str
    signature: str  # the arguments' global types (the jaxpr's, never one device's shard)
    statics: str
    line: int | None  # the first line of the function's code (two lambdas of a cell differ)
    #: ``id`` of the jaxpr the trace made (0: unknown): a later lowering of it (the same
    #: function called again with inputs sharded otherwise) is matched to it by this
    jaxpr_id: int = 0

    def of(self, fun_name: str) -> bool:
        """Whether a lower or compile event named ``fun_name`` can be of this trace."""
        return not self.name or self.name in fun_name


def _from_lowering(source: Any) -> _Traced:
    """What a lowering whose trace this agent never saw says of itself (its jaxpr's debug
    info): the function's name and first line, the global input types, and the static
    arguments where the lowering runs a call."""
    line = None
    tail = source.where.rpartition(":")[2]
    if tail.isdigit():
        line = int(tail)
    if source.args is not None:
        signature = ", ".join(a.text for a in source.args)
    else:
        signature = ", ".join(source.in_types or ())
    site = source.site
    return _Traced(
        skip=not source.user,
        name=source.name if source.name != "?" else "",
        signature=signature,
        statics="" if site is None else ", ".join(f"{k}={v}" for k, v in site.statics),
        line=line,
        jaxpr_id=source.jaxpr_id,
    )


#: traces remembered by their jaxpr (what a later lowering of the same trace is matched to)
MAX_TRACES = 4096


@dataclass
class Agent:
    """One process's listener and ledger (see the module doc)."""

    compiles: deque[ClusterCompile] = field(default_factory=lambda: deque(maxlen=MAX_COMPILES))
    step: StepTime | None = None
    profile_step: StepTime | None = None
    _installed: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    #: each thread's newest trace (a lowering without a known jaxpr takes it)
    _sites: dict[int, _Traced | None] = field(default_factory=dict)
    #: the traces seen, by the ``id`` of their jaxpr (JAX's trace cache hands the same
    #: jaxpr to every lowering of that trace), newest last
    _traces: OrderedDict[int, _Traced] = field(default_factory=OrderedDict)
    #: each thread's lowerings not compiled yet: JAX's name of the lowering -> its trace
    _lowered: dict[int, dict[str, _Traced]] = field(default_factory=dict)
    _seq: int = 0

    def install(self) -> None:
        """Listen to JAX's trace, lower and compile events (once)."""
        if self._installed:
            return
        jax.monitoring.register_event_duration_secs_listener(self._on_duration)
        self._installed = True

    def uninstall(self) -> None:
        if self._installed:
            compat.unregister_monitoring_listener("duration", self._on_duration)
            self._installed = False

    def _on_duration(self, event: str, duration_secs: float, **kwargs: str | int) -> None:
        try:
            if event == compat.TRACE_EVENT:
                self._on_trace()
            elif event == compat.LOWER_EVENT:
                self._on_lower(str(kwargs.get("fun_name", "?")))
            elif event == compat.COMPILE_EVENT:
                self._on_compile(duration_secs, str(kwargs.get("fun_name", "?")))
        except Exception:  # a listener never fails the user's compile
            pass

    def _on_trace(self) -> None:
        site = compat.jit_trace_site()
        seen = None
        if site is not None:  # what the compile needs, not the function itself
            seen = _Traced(
                skip=bool(site.internal or site.eager_primitive),
                name=str(getattr(site.fun, "__name__", "") or ""),
                signature=", ".join(a.text for a in site.args),
                statics=", ".join(f"{k}={v}" for k, v in site.statics),
                line=getattr(getattr(site.fun, "__code__", None), "co_firstlineno", None),
                jaxpr_id=site.jaxpr_id,
            )
        with self._lock:
            self._sites[threading.get_ident()] = seen
            if seen is not None and seen.jaxpr_id:
                self._traces[seen.jaxpr_id] = seen
                self._traces.move_to_end(seen.jaxpr_id)
                while len(self._traces) > MAX_TRACES:
                    self._traces.popitem(last=False)

    def _on_lower(self, fun_name: str) -> None:
        """Which trace this lowering is of.  Not always the thread's newest: a function
        called again with its inputs sharded otherwise (or ``f.lower`` of new shardings)
        reuses its cached trace, and only the lowering and compile run again; that compile
        belongs in the function's row, with the trace's global types and static arguments,
        so that another sharding reads as one."""
        source = compat.lowering_source()
        tid = threading.get_ident()
        with self._lock:
            fresh = self._sites.pop(tid, None)
            traced = None
            if source is not None and source.jaxpr_id:
                traced = self._traces.get(source.jaxpr_id)
            if traced is None or not traced.of(fun_name):
                traced = fresh if fresh is not None and fresh.of(fun_name) else None
            if traced is None and source is not None:
                traced = _from_lowering(source)
            if traced is None:
                return
            lowered = self._lowered.setdefault(tid, {})
            lowered.pop(fun_name, None)
            lowered[fun_name] = traced
            while len(lowered) > 16:  # lowered and never compiled
                del lowered[next(iter(lowered))]

    def _on_compile(self, duration: float, fun_name: str) -> None:
        tid = threading.get_ident()
        with self._lock:
            traced = self._lowered.get(tid, {}).pop(fun_name, None)
            if traced is None:  # a JAX whose lowering said nothing: the thread's newest trace
                traced = self._sites.pop(tid, None)
        if traced is not None and not traced.of(fun_name):
            traced = None  # that trace was of another function (this one's was cached)
        if traced is not None and traced.skip:
            return
        executable = compat.compiled_executable_on_stack()
        text = None if executable is None else compat.executable_hlo_text(executable)
        if text is None:
            return
        shardings = compat.parameter_shardings(executable)
        line = None
        if traced is not None:
            signature, statics, line = traced.signature, traced.statics, traced.line
        else:  # nothing known of the trace: the entry layout's (one device's) parameter types
            m = re.search(r"entry_computation_layout=\{\((.*?)\)->", text)
            signature = re.sub(r"\{[\d,]*\}", "", m.group(1)) if m else "?"
            statics = ""
        rec = ClusterCompile(
            function=fun_name if line is None else f"{fun_name} at line {line}",
            signature=signature,
            statics=statics,
            shardings=", ".join(shardings) if shardings else "",
            fingerprint=fingerprint(text),
            compile_s=float(duration),
        )
        with self._lock:
            self._seq += 1
            rec.seq = self._seq
            self.compiles.append(rec)

    def note_bench(self, label: str, seconds: float | None) -> None:
        if seconds is not None:
            self.step = StepTime("%jaxbench", label, float(seconds))

    def note_profile(self, label: str, seconds: float, collectives_s: float | None) -> None:
        self.profile_step = StepTime("%%jaxprof", label, float(seconds), collectives_s)

    def clear(self) -> None:
        with self._lock:
            self.compiles.clear()
            self.step = None
            self.profile_step = None


#: this process's agent
AGENT = Agent()


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        try:
            import resource

            return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
        except Exception:
            return None


def _live_bytes() -> int | None:
    try:
        from workbench.engine.monitor.memory import live_bytes_by_device

        per_device, _ = live_bytes_by_device()
        return sum(per_device.values())
    except Exception:
        return None


#: the opcodes of collective instructions (their async halves included)
_COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all")


def _profile_step() -> StepTime | None:
    """The latest ``%%jaxprof`` of this process: its step and the time in collectives."""
    try:
        from workbench.engine.profile.store import latest

        rep = latest()
    except Exception:
        return None
    if rep is None:
        return None
    coll = [i.seconds for i in rep.instructions if i.opcode.startswith(_COLLECTIVES)]
    return StepTime("%%jaxprof", rep.label, float(rep.step_s), float(sum(coll)) if coll else None)


def snapshot(max_compiles: int | None = None, agent: Agent | None = None) -> dict[str, Any]:
    """What the notebook's kernel gathers from this process: who it is, its devices, its
    memory, its compile ledger (the newest ``max_compiles``) and its latest step times
    (``agent``: another ledger than the process's own, for tests)."""
    agent = AGENT if agent is None else agent
    with agent._lock:
        compiles = list(agent.compiles)
    profile = agent.profile_step or _profile_step()
    if max_compiles is not None:
        compiles = compiles[len(compiles) - max_compiles :] if max_compiles > 0 else []
    try:
        local = jax.local_devices()
        devices = [f"{d.platform}:{d.id}" for d in local]
        process_index, process_count = jax.process_index(), jax.process_count()
    except Exception:
        devices, process_index, process_count = [], -1, 0
    return {
        "process_index": process_index,
        "process_count": process_count,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "devices": devices,
        "rss_bytes": _rss_bytes(),
        "live_array_bytes": _live_bytes(),
        "compiles": [c.to_dict() for c in compiles],
        "compiles_total": len(agent.compiles),
        "step": None if agent.step is None else agent.step.to_dict(),
        "profile_step": None if profile is None else profile.to_dict(),
        "time": time.time(),
    }


def install() -> None:
    """Start this process's agent (idempotent); what a cluster runs in each engine."""
    AGENT.install()


__all__ = [
    "AGENT",
    "MAX_COMPILES",
    "Agent",
    "ClusterCompile",
    "StepTime",
    "fingerprint",
    "install",
    "snapshot",
]

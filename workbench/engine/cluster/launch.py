"""Start, attach to and stop the processes of a cluster (ipyparallel engines).

``start(n)`` runs n ipyparallel engines on this machine; each becomes one JAX process
through ``jax.distributed.initialize`` over loopback (CPU collectives through gloo), with
``jax_enable_recoverability`` set first so that one process dying leaves the others
usable.  ``attach(...)`` takes engines the user started elsewhere and touches neither
``jax.distributed`` nor its settings: those belong to the user's own set-up.
:meth:`ClusterHandle.stop` ends what ``start`` started and nothing else, and waits until
those processes are gone (ipyparallel's nanny processes outlive ``stop_cluster_sync`` by
a few seconds).  A watchdog process started beside the kernel ends a started cluster's
processes if the kernel dies without stopping them (killed: no ``atexit`` runs).  The
workbench adds no transport of its own: everything goes through ipyparallel's client.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.cluster.compare import ClusterReport, compare

#: run in each engine before anything there imports JAX: CPU devices of its own (the
#: notebook's XLA_FLAGS may ask for another count of fake devices), JAX on the CPU
_PREPARE = """
import os as _os
_os.environ["JAX_PLATFORMS"] = {platform!r}
_os.environ["XLA_FLAGS"] = " ".join(
    f for f in _os.environ.get("XLA_FLAGS", "").split()
    if not f.startswith("--xla_force_host_platform_device_count")
)
del _os
"""


#: the watchdog, run as ``python -I -S -c`` beside the kernel that starts a cluster: it
#: reads pids to guard from its stdin, one a line, until that kernel closes the pipe, by
#: stopping the cluster or by dying (a kernel killed, or ended by its manager in the middle
#: of its ``atexit``, runs no clean-up of its own).  Then it ends whatever of the cluster
#: still runs: the pids it was given that are still the processes it was told of (the same
#: start time, read when told: a pid reused since by someone else's process is left alone)
#: and still ipyparallel's, and every process whose environment carries the cluster's
#: ``IPP_CLUSTER_ID`` (ipyparallel's launchers set it; the controller's schedulers and the
#: engines' nannies inherit it).  Without ``/proc`` it signals the pids it was given only.
_WATCHDOG = r"""
import os, signal, sys, time
mark = ("IPP_CLUSTER_ID=" + sys.argv[1]).encode()
proc = os.path.isdir("/proc")
def started(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None
pids = {}
for line in sys.stdin:  # as each line comes: a start time read now, not at the end
    if line.strip().isdigit():
        pids[int(line)] = started(int(line)) if proc else None
def alive(pid):
    if not proc:
        try:
            os.kill(pid, 0)
            return True
        except OSError:
            return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False
def read(pid, what):
    try:
        with open(f"/proc/{pid}/{what}", "rb") as f:
            return f.read()
    except OSError:
        return b""
def ours(pid):
    if not proc:
        return pid in pids
    if pid in pids and pids[pid] is not None and started(pid) == pids[pid]:
        if b"ipyparallel" in read(pid, "cmdline"):
            return True
    return mark in read(pid, "environ").split(b"\0")
def targets():
    found = set(pids)
    if proc:
        found.update(int(e) for e in os.listdir("/proc") if e.isdigit())
    return [p for p in found if p != os.getpid() and alive(p) and ours(p)]
# JAX's preemption notifier catches SIGTERM in a process of jax.distributed (it only notes
# it), and such an engine may wait at its exit for partners that are going too: a short
# grace, then SIGKILL
for sig, grace in ((signal.SIGTERM, 0.5), (signal.SIGKILL, 2.0)):
    left = targets()
    for p in left:
        try:
            os.kill(p, sig)
        except OSError:
            pass
    end = time.monotonic() + grace
    while time.monotonic() < end and any(alive(p) for p in left):
        time.sleep(0.05)
"""


def _start_watchdog(cluster_id: str) -> subprocess.Popen[bytes] | None:
    """The cluster's watchdog (see :data:`_WATCHDOG`), in a session of its own so that a
    signal to the kernel's process group (how Jupyter kills a kernel) does not reach it."""
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHDOG, cluster_id],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return None


def _ipyparallel() -> Any:
    """ipyparallel, or an ImportError that says how to get it (an optional dependency)."""
    try:
        import ipyparallel
    except ImportError as exc:
        raise ImportError(
            "workbench.cluster() runs its processes as ipyparallel engines: "
            "pip install 'jax-workbench[cluster]' (or pip install ipyparallel)"
        ) from exc
    return ipyparallel


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def init_process(
    process_id: int,
    num_processes: int,
    port: int,
    devices_per_process: int,
    heartbeat_timeout_seconds: int | None,
    initialization_timeout: int,
) -> dict[str, Any]:
    """In an engine: become JAX process ``process_id`` of ``num_processes`` and start the
    workbench's agent.  Returns what it became (process index, devices)."""
    import jax

    from workbench.engine import _jax_compat as compat
    from workbench.engine.cluster import agent

    jax.config.update("jax_num_cpu_devices", int(devices_per_process))
    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except Exception:
        pass
    recoverable = compat.enable_recoverability()
    compat.distributed_initialize(
        f"127.0.0.1:{port}",
        num_processes,
        process_id,
        initialization_timeout=initialization_timeout,
        heartbeat_timeout_seconds=heartbeat_timeout_seconds,
    )
    agent.install()
    return {
        "process_index": jax.process_index(),
        "process_count": jax.process_count(),
        "local_devices": len(jax.local_devices()),
        "devices": len(jax.devices()),
        "recoverable": recoverable,
    }


def leave_process() -> None:
    """In an engine this cluster started: leave ``jax.distributed`` now, with the others
    (its shutdown is a barrier: left to the engine's exit, each process waits there for
    partners that are already stopping, and the stop takes seconds)."""
    import jax

    try:
        jax.distributed.shutdown()
    except Exception:
        pass


def attach_process() -> dict[str, Any]:
    """In an engine the user started: start the workbench's agent (JAX as the user set it)."""
    from workbench.engine.cluster import agent

    agent.install()
    return {"pid": os.getpid()}


def process_family() -> list[int]:
    """In an engine: its pid and its children's (the nanny ipyparallel starts beside it)."""
    me = os.getpid()
    pids = [me]
    try:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    stat = f.read()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == me:
                pids.append(int(entry))
    except OSError:
        pass
    return pids


def pid_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except OSError:
            return False


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


@dataclass
class ClusterHandle:
    """A cluster's processes as the notebook's kernel holds them."""

    client: Any
    started: bool
    cluster: Any = None  # the ipyparallel Cluster this handle started (None: attached)
    engines: list[int] = field(default_factory=list)
    #: the processes this handle started (engines, their nannies, the controller)
    pids: list[int] = field(default_factory=list)
    startup_s: float = 0.0
    stopped: bool = False
    #: False when the user handed in the client (``connect=rc``): stop leaves it open
    owns_client: bool = True
    _controller_pid: int | None = None
    #: ends this cluster's processes if the kernel dies without stopping them
    watchdog: subprocess.Popen[bytes] | None = None

    def guard(self, pids: Sequence[int]) -> None:
        """Tell the watchdog of ``pids`` (it also finds the cluster's processes by their
        environment; these are named in case it cannot read it)."""
        if self.watchdog is None or self.watchdog.stdin is None:
            return
        try:
            self.watchdog.stdin.write("".join(f"{p}\n" for p in pids).encode("ascii"))
            self.watchdog.stdin.flush()
        except (OSError, ValueError):
            pass

    def _release_watchdog(self, until: float) -> list[int]:
        """Close the watchdog's pipe (what it guards is gone, or it ends it now) and wait
        for it to exit; its pid if it still runs at ``until``."""
        dog = self.watchdog
        if dog is None:
            return []
        try:
            if dog.stdin is not None:
                dog.stdin.close()
        except OSError:
            pass
        try:
            dog.wait(max(0.0, until - time.monotonic()))
        except subprocess.TimeoutExpired:
            return [dog.pid]
        return []

    # -- gathering --------------------------------------------------------------------
    def gather(
        self, max_compiles: int | None = None, timeout: float = 30.0
    ) -> tuple[list[dict[str, Any] | None], list[int], list[str | None]]:
        """Each engine's snapshot (None and a reason for one that did not answer)."""
        from workbench.engine.cluster.agent import snapshot

        engines = list(self.engines) or sorted(self.client.ids)
        live = set(self.client.ids)
        pending: dict[int, Any] = {}
        errors: dict[int, str | None] = {}
        for e in engines:
            if e not in live:
                errors[e] = (
                    f"process on engine {e} is gone (its engine unregistered: it died or "
                    "was stopped); the other processes are shown"
                )
                continue
            pending[e] = self.client[e].apply_async(snapshot, max_compiles)
        snaps: dict[int, dict[str, Any] | None] = {}
        deadline = time.monotonic() + timeout
        for e, ar in pending.items():
            try:
                ar.wait(max(0.0, deadline - time.monotonic()))
                if not ar.ready():  # busy (a long cell) or stuck in a collective
                    errors[e] = (
                        f"process on engine {e} did not answer within {timeout:g} s "
                        "(busy, or waiting in a collective)"
                    )
                    continue
                snaps[e] = ar.get()
            except Exception as exc:  # its engine died mid-request
                errors[e] = f"process on engine {e} failed to answer: {type(exc).__name__}: {exc}"
        return (
            [snaps.get(e) for e in engines],
            engines,
            [errors.get(e) for e in engines],
        )

    def report(
        self, view: str = "ledger", max_compiles: int | None = None, timeout: float = 30.0
    ) -> ClusterReport:
        t0 = time.perf_counter()
        snaps, engines, errors = self.gather(max_compiles, timeout)
        return compare(snaps, engines, errors, view=view, gather_s=time.perf_counter() - t0)

    # -- stopping ---------------------------------------------------------------------
    def running(self) -> list[int]:
        """The processes this handle started that are still running."""
        return [p for p in self.pids if pid_running(p)]

    def _leave_distributed(self, wait_s: float) -> None:
        """Every live engine leaves ``jax.distributed`` at once (see :func:`leave_process`)."""
        try:
            live = [e for e in self.engines if e in self.client.ids]
            pending = [self.client[e].apply_async(leave_process) for e in live]
            end = time.monotonic() + wait_s
            for ar in pending:
                ar.wait(max(0.0, end - time.monotonic()))
            # the engines end while the controller still runs: their nannies' goodbyes are
            # delivered at once (to a stopped controller each lingers 3 s)
            self.client.shutdown(targets=live, hub=False, block=False)
        except Exception:
            pass

    def stop(self, timeout: float = 10.0) -> list[int]:
        """End what this handle started (nothing, when it attached) and wait until those
        processes are gone; returns any still running after ``timeout`` (after a kill).

        The order matters for the time it takes: the engines leave ``jax.distributed``
        together, then end while the controller still runs (their nannies' goodbyes reach
        it at once; to a stopped controller each lingers 3 s), then the controller stops.
        An engine that does not end when asked (the coordinator's process can wait on its
        service) is signalled, by pid: SIGTERM briefly, then SIGKILL, since JAX's
        preemption notifier catches SIGTERM in a process of ``jax.distributed`` (it only
        notes it), so an engine stuck at its exit does not end by it."""
        if self.stopped:
            return self.running()
        self.stopped = True
        deadline = time.monotonic() + timeout
        if self.started and self.cluster is not None:
            self._leave_distributed(min(2.0, timeout / 5))
            engines = [p for p in self.pids if "ipyparallel.engine" in _cmdline(p)]
            engines = [p for p in engines if "nanny" not in _cmdline(p)]
            self._wait([*engines], min(deadline, time.monotonic() + 1.0))
            self._signal(engines, signal.SIGTERM)
            self._wait(engines, min(deadline, time.monotonic() + 0.3))
            self._signal(engines, signal.SIGKILL)
            workers = [p for p in self.pids if p != self._controller_pid]
            self._wait(workers, deadline - 3.0)
        if self.owns_client:
            try:
                self.client.close()
            except Exception:
                pass
        if not self.started or self.cluster is None:
            return []
        try:
            self.cluster.stop_cluster_sync()
        except Exception:
            pass
        self._wait(self.pids, deadline - 1.0)
        self._signal(self.pids, signal.SIGKILL)
        self._wait(self.pids, deadline - 0.5)
        return self.running() + self._release_watchdog(deadline)

    @staticmethod
    def _wait(pids: Sequence[int], until: float) -> None:
        while any(pid_running(p) for p in pids) and time.monotonic() < until:
            time.sleep(0.05)

    @staticmethod
    def _signal(pids: Sequence[int], sig: int) -> None:
        """Signal those of ``pids`` still running that are still ipyparallel's processes
        (a pid is never signalled once it may belong to someone else)."""
        for pid in pids:
            if pid_running(pid) and "ipyparallel" in _cmdline(pid):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass


def start(
    n: int,
    devices_per_process: int = 1,
    *,
    heartbeat_timeout_seconds: int | None = None,
    platform: str = "cpu",
    timeout: float = 120.0,
) -> ClusterHandle:
    """Start ``n`` engines on 127.0.0.1 and make them JAX processes 0..n-1 of one program."""
    ipp = _ipyparallel()

    t0 = time.perf_counter()
    cluster = ipp.Cluster(n=n, log_level=40)
    # before anything starts: a kernel killed from here on leaves nothing behind
    watchdog = _start_watchdog(str(cluster.cluster_id))
    handle: ClusterHandle | None = None
    try:
        cluster.start_cluster_sync()
        client = cluster.connect_client_sync()
        client.wait_for_engines(n, timeout=timeout, interactive=False)
        engines = sorted(client.ids)[:n]
        handle = ClusterHandle(client, True, cluster, engines, watchdog=watchdog)
        view = client[engines]
        view.execute(_PREPARE.format(platform=platform), block=True)
        families = view.apply_sync(process_family)
        handle.pids = [p for fam in families for p in fam]
        ctl = getattr(getattr(cluster, "controller", None), "process", None)
        if ctl is not None and getattr(ctl, "pid", None):
            handle._controller_pid = int(ctl.pid)
            handle.pids.append(int(ctl.pid))
        handle.guard(handle.pids)
        port = _free_port()
        pending = [
            client[e].apply_async(
                init_process,
                i,
                n,
                port,
                devices_per_process,
                heartbeat_timeout_seconds,
                int(timeout),
            )
            for i, e in enumerate(engines)
        ]
        for ar in pending:
            ar.get(timeout=timeout)
        handle.startup_s = time.perf_counter() - t0
        return handle
    except BaseException:
        if handle is not None:
            handle.stop()
        else:
            try:
                cluster.stop_cluster_sync()
            except Exception:
                pass
            if watchdog is not None and watchdog.stdin is not None:
                watchdog.stdin.close()  # it ends what the failed start left
        raise


def attach(connect: Any, timeout: float = 60.0) -> ClusterHandle:
    """Attach to running engines: ``connect`` is an ipyparallel ``Client``, a ``Cluster``,
    a connection file (``ipcontroller-client.json``) or an ``ipcluster`` profile name."""
    ipp = _ipyparallel()

    owns_client = not isinstance(connect, ipp.Client)
    if isinstance(connect, ipp.Client):
        client = connect
    elif isinstance(connect, ipp.Cluster):
        client = connect.connect_client_sync()
    elif isinstance(connect, str | os.PathLike) and str(connect).endswith(".json"):
        client = ipp.Client(os.fspath(connect), timeout=timeout)
    elif isinstance(connect, str):
        client = ipp.Client(profile=connect, timeout=timeout)
    else:
        raise TypeError(
            "connect= takes an ipyparallel Client or Cluster, a connection file "
            f"(ipcontroller-client.json) or an ipcluster profile name, not {type(connect).__name__}"
        )
    engines = sorted(client.ids)
    if not engines:
        raise RuntimeError("connect=: the controller has no engines registered")
    client[engines].apply_sync(attach_process)
    return ClusterHandle(client, False, None, engines, owns_client=owns_client)


__all__ = [
    "ClusterHandle",
    "attach",
    "attach_process",
    "init_process",
    "pid_running",
    "process_family",
    "start",
]

"""``workbench.cluster(...)``: a multi-process JAX program driven from this notebook.

``workbench.cluster(n=4, devices_per_process=2)`` starts n JAX processes as ipyparallel
engines on 127.0.0.1 (``jax.distributed`` over loopback, CPU collectives), loads the
workbench in each and returns a :class:`Cluster`, which is used as the ipyparallel client
(``rc[:]``, ``rc.ids``; ``.client`` is the client itself); ``%%px`` then runs cells on
every process.  ``workbench.cluster(connect=...)`` attaches to engines started elsewhere
and leaves ``jax.distributed`` and what survives a failure to the user's own set-up.
``%jaxcluster`` (or :meth:`Cluster.report`) compares the processes.
"""

from __future__ import annotations

import atexit
from typing import Any

from workbench.engine.cluster import launch
from workbench.engine.cluster.compare import ClusterReport
from workbench.views.cluster import cluster_display
from workbench.views.display import Display

#: the clusters this kernel started or attached to, newest last (``%jaxcluster`` reads
#: the newest one still running)
_CLUSTERS: list[Cluster] = []


class Cluster:
    """The processes of a cluster, used as their ipyparallel client.

    Attributes the cluster lacks are the client's (``rc.ids``, ``rc[:]``, ``rc.wait``).
    :meth:`stop` ends what :func:`cluster` started and nothing else.
    """

    def __init__(self, handle: launch.ClusterHandle) -> None:
        self.handle = handle
        self.client = handle.client

    @property
    def started(self) -> bool:
        """True when this cluster started its processes (False: attached with ``connect=``)."""
        return self.handle.started

    @property
    def startup_s(self) -> float:
        return self.handle.startup_s

    @property
    def stopped(self) -> bool:
        return self.handle.stopped

    def __getitem__(self, key: Any) -> Any:
        return self.client[key]

    def __len__(self) -> int:
        return len(self.client.ids)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("handle", "client"):
            raise AttributeError(name)
        return getattr(self.client, name)

    def report(
        self, profile: bool = False, max_compiles: int | None = None, timeout: float = 30.0
    ) -> ClusterReport:
        """The processes side by side (what ``%jaxcluster`` shows), as the engine record."""
        if self.handle.stopped:
            raise RuntimeError("this cluster was stopped")
        return self.handle.report("profile" if profile else "ledger", max_compiles, timeout)

    def show(self, profile: bool = False) -> Display[ClusterReport]:
        """:meth:`report` as a displayable object."""
        return cluster_display(self.report(profile))

    def stop(self, timeout: float = 10.0) -> None:
        """End the processes this cluster started (nothing, when it attached) and wait until
        they are gone; raises if any still runs after ``timeout`` seconds."""
        left = self.handle.stop(timeout)
        previous = current()
        if previous is not None:  # %%px goes back to the cluster still running
            _activate(previous.client)
        if left:
            raise RuntimeError(f"cluster processes still running after {timeout:.0f} s: {left}")

    def __repr__(self) -> str:
        state = "stopped" if self.stopped else f"{len(self.handle.engines)} processes"
        how = "started" if self.started else "attached"
        return f"<workbench cluster ({how}): {state}>"


def current() -> Cluster | None:
    """The newest cluster of this kernel that was not stopped."""
    for c in reversed(_CLUSTERS):
        if not c.stopped:
            return c
    return None


def _setup_engines(handle: launch.ClusterHandle) -> None:
    """``%load_ext workbench`` in each engine, its results feeding the process's agent."""
    from workbench.ipython.cluster_magics import engine_setup

    handle.client[handle.engines].apply_sync(engine_setup)


def _activate(client: Any) -> None:
    """``%%px`` and ``%px`` in this shell, when there is one."""
    try:
        from IPython import get_ipython

        if get_ipython() is not None:
            view = client[:]
            view.block = True  # a %%px cell ends when every process ran it, outputs shown
            view.activate()
    except Exception:
        pass


def cluster(
    n: int = 2,
    devices_per_process: int = 1,
    *,
    connect: Any = None,
    heartbeat_timeout_seconds: int | None = None,
    timeout: float = 120.0,
) -> Cluster:
    """Start ``n`` JAX processes on this machine (or attach to running engines with
    ``connect=``: an ipyparallel ``Client`` or ``Cluster``, a connection file or an
    ``ipcluster`` profile name) and load the workbench in each.

    Started processes get ``jax_enable_recoverability=True`` before
    ``jax.distributed.initialize`` (one process dying leaves the others usable) and
    ``heartbeat_timeout_seconds`` (JAX's default is 100 s).  Attached ones are left as the
    user set them up.
    """
    if connect is not None:
        handle = launch.attach(connect, timeout=timeout)
    else:
        if n < 1:
            raise ValueError("n must be at least 1")
        handle = launch.start(
            n,
            devices_per_process,
            heartbeat_timeout_seconds=heartbeat_timeout_seconds,
            timeout=timeout,
        )
    try:
        _setup_engines(handle)
    except BaseException:
        handle.stop()
        raise
    c = Cluster(handle)
    _CLUSTERS[:] = [old for old in _CLUSTERS if not old.stopped] + [c]
    if handle.started:  # a kernel shutdown ends them too (and waits for the nannies)
        atexit.register(handle.stop)
    _activate(handle.client)
    return c


__all__ = ["Cluster", "cluster", "current"]

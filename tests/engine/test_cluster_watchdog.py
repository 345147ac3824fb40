"""The watchdog a started cluster leaves beside the kernel (``launch._WATCHDOG``): when the
kernel's pipe closes it ends the cluster's processes and nothing else.

Plain ``python -I -S`` sleepers stand in for the cluster's processes and for the user's
other ones (no ipyparallel, no JAX: this runs in a fraction of a second).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from workbench.engine.cluster.launch import ClusterHandle, _start_watchdog, pid_running

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")

SLEEP = "import time; time.sleep(60)"


def _sleeper(*argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", SLEEP, *argv],
        env=dict(os.environ, **(env or {})),
    )


def _running_its_own_code(p: subprocess.Popen[bytes]) -> None:
    """Wait until ``p`` runs the sleeper (its cmdline and environment are its own)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(f"/proc/{p.pid}/cmdline", "rb") as f:
            if b"time.sleep" in f.read():
                return
        time.sleep(0.01)
    raise AssertionError(f"sleeper {p.pid} did not start")


def test_watchdog_ends_the_clusters_processes_and_leaves_everyone_elses():
    cluster_id = f"test-{uuid.uuid4().hex[:8]}"
    dog = _start_watchdog(cluster_id)
    assert dog is not None
    ours = {
        "guarded, ipyparallel's": _sleeper("ipyparallel.engine"),
        "the cluster's environment": _sleeper(env={"IPP_CLUSTER_ID": cluster_id}),
    }
    theirs = {
        "guarded, not ipyparallel's": _sleeper(),
        "ipyparallel's, not guarded": _sleeper("ipyparallel.engine"),
        "another cluster's environment": _sleeper(env={"IPP_CLUSTER_ID": cluster_id + "x"}),
    }
    everyone = {**ours, **theirs}
    try:
        for p in everyone.values():
            _running_its_own_code(p)
        handle = ClusterHandle(None, True, watchdog=dog)
        handle.guard([ours["guarded, ipyparallel's"].pid, theirs["guarded, not ipyparallel's"].pid])
        time.sleep(0.2)
        assert {k: p.poll() for k, p in everyone.items()} == dict.fromkeys(everyone)  # it waits
        assert handle._release_watchdog(time.monotonic() + 10) == []  # the kernel's pipe closes
        for p in ours.values():
            p.wait(timeout=5)
        assert {k: p.returncode for k, p in ours.items()} == dict.fromkeys(ours, -signal.SIGTERM)
        assert {k: pid_running(p.pid) for k, p in theirs.items()} == dict.fromkeys(theirs, True)
    finally:
        for p in everyone.values():
            if p.poll() is None:
                p.kill()
            p.wait()
        if dog.poll() is None:
            dog.kill()
            dog.wait()

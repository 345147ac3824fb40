"""Four JAX processes on 127.0.0.1 driven from the test's shell: ``workbench.cluster()``,
``%%px`` and ``%jaxcluster``; and Jupyter kernels that start a cluster and end.

One 4-process cluster (2 CPU devices each, gloo collectives, a short heartbeat timeout) is
started for the whole module and always stopped; the tests run in order and the last ones
kill a process and stop the cluster.  Every divergence is made by *compiling*
(``.lower(...).compile()``), never by running, so no collective is left waiting for a
partner; with four processes the odd one out is named against the other three.

Two real ipykernels (jupyter_client) each start a one-process cluster, one after the other,
while the module's cluster starts (most of a start is waiting); the last tests shut one
down and kill the other and check by pid that neither leaves an engine or controller behind.
"""

from __future__ import annotations

import os
import signal
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from IPython.utils.capture import capture_output
from jupyter_client.manager import KernelManager

from tests.browser import kernel_env
from workbench.engine.cluster.launch import pid_running

pytestmark = pytest.mark.slow  # starts JAX processes that talk over TCP

N = 4  # processes of the module's cluster
DEVICES_PER_PROCESS = 2
HEARTBEAT_S = 2


def _short(shape: tuple[int, ...]) -> str:
    return jax.core.ShapedArray(shape, jnp.float32).str_short(short_dtypes=True)


def _others(odd: int) -> str:
    """The processes other than ``odd``, as a divergence names them."""
    rest = [p for p in range(N) if p != odd]
    return "processes " + ", ".join(map(str, rest[:-1])) + f" and {rest[-1]}"


def _cluster_procs(cluster_id: str) -> list[int]:
    """Processes of this cluster (controller and its schedulers, engines, nannies): the
    launchers put ``IPP_CLUSTER_ID`` in their environment, which their children inherit
    (the command lines do not name the cluster)."""
    mark = f"IPP_CLUSTER_ID={cluster_id}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if mark in env and pid_running(int(entry)):
                found.append(int(entry))
    return found


def _gone_within(pids: list[int], cluster_id: str, seconds: float) -> float:
    """Seconds until none of ``pids`` (nor any process of the cluster) runs; fails the
    test past ``seconds``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if not any(pid_running(p) for p in pids) and not _cluster_procs(cluster_id):
            return time.monotonic() - t0
        time.sleep(0.1)
    assert [p for p in pids if pid_running(p)] == []
    assert _cluster_procs(cluster_id) == []
    return time.monotonic() - t0


#: what each Jupyter kernel runs: a cluster of its own, and what it started
KERNEL_CELL = """
import workbench
c = workbench.cluster(n=1)
print(*c.handle.pids, "|", c.handle.watchdog.pid, c.handle.cluster.cluster_id, flush=True)
"""


class ClusterKernel:
    """A real ipykernel (jupyter_client) that starts a one-process cluster; the kernel is
    started and the cell sent from a thread, so its start-up overlaps the module's.  With
    ``after``, the cell waits until that kernel's cell has finished: two clusters starting
    at once beside the module's, on a loaded 2-core machine, once kept a kernel's cell
    silent for three minutes."""

    def __init__(self, after: ClusterKernel | None = None) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="wb-cluster-kernel-")
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=dict(kernel_env(), IPYTHONDIR=self._dir.name), cwd=self._dir.name)
        self.stdout, self.error = "", None
        self._after = after
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        kc = self.km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=120)
            if self._after is not None:
                self._after._thread.join(timeout=300)
            msg_id = kc.execute(KERNEL_CELL)
            while True:
                msg = kc.get_iopub_msg(timeout=180)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind == "stream":
                    self.stdout += content["text"]
                elif kind == "error":
                    self.error = "\n".join(content["traceback"])
                elif kind == "status" and content["execution_state"] == "idle":
                    return
        except Exception as exc:
            alive = self.km.is_alive()
            self.error = f"{exc!r} (the kernel is {'alive' if alive else 'dead'})"
        finally:
            kc.stop_channels()

    def started(self) -> tuple[int, list[int], str]:
        """(the kernel's pid, the pids its cluster started and its watchdog's, the
        cluster's id), once the cell ran."""
        self._thread.join(timeout=540)
        assert not self._thread.is_alive(), ("the cell is still running", self.stdout)
        assert self.error is None and "|" in self.stdout, (self.error, self.stdout)
        cluster, rest = self.stdout.split("|")
        watchdog, cluster_id = rest.split()
        pids = [int(p) for p in cluster.split()] + [int(watchdog)]
        return int(self.km.provisioner.process.pid), pids, cluster_id

    def close(self) -> None:
        if self.km.has_kernel:
            self.km.shutdown_kernel(now=True)
        self._dir.cleanup()


@pytest.fixture(scope="module")
def kernels():
    """Started before the module's cluster so that the start-ups overlap; read by the
    last tests (one shuts its kernel down, the other kills it)."""
    first = ClusterKernel()
    ks = {"shut down": first, "killed": ClusterKernel(after=first)}
    try:
        yield ks
    finally:
        for k in ks.values():
            k.close()


@pytest.fixture(scope="module")
def rc(shell, run, kernels):
    t0 = time.perf_counter()
    run(
        f"rc = workbench.cluster(n={N}, devices_per_process={DEVICES_PER_PROCESS}, "
        f"heartbeat_timeout_seconds={HEARTBEAT_S})"
    ).ok()
    c = shell.user_ns["rc"]
    print(f"\n{N}-process cluster started in {time.perf_counter() - t0:.1f} s")
    try:
        px(
            run,
            f"""
            import os, time
            import jax, jax.numpy as jnp, numpy as np
            from jax.sharding import NamedSharding, PartitionSpec as P
            mesh = jax.make_mesh(({N * DEVICES_PER_PROCESS},), ("d",))
            """,
        )
        yield c
    finally:
        c.handle.stop()
        shell.user_ns.pop("rc", None)


def px(run, code: str):
    return run("%%px\n" + textwrap.dedent(code)).ok()


def test_started_processes_are_one_jax_program_listed_by_jaxcluster(rc, run):
    info = rc[:].apply_sync(
        lambda: (jax.process_index(), jax.process_count(), [f"cpu:{d.id}" for d in jax.devices()])
    )
    total = N * DEVICES_PER_PROCESS
    assert [i[:2] for i in info] == [(p, N) for p in range(N)]  # engine i is process i
    assert [i[0] for i in info] == sorted(rc.handle.engines)
    everyone = info[0][2]
    assert len(everyone) == total and all(i[2] == everyone for i in info)
    rep = rc.report()
    assert [p.index for p in rep.processes] == list(range(N))
    held = [d for p in rep.processes for d in p.devices]
    assert sorted(held) == sorted(everyone)  # each device held by exactly one process
    assert all(len(p.devices) == DEVICES_PER_PROCESS for p in rep.processes)
    text = run("%jaxcluster").ok().bundle["text/plain"]
    assert f"cluster: {N} processes" in text
    for p in rep.processes:
        assert f"process {p.index} (engine {p.engine}" in text
        assert f"{DEVICES_PER_PROCESS} devices ({' '.join(p.devices)})" in text


def test_consistent_program_shows_no_divergence_and_sums_across_processes(rc, run):
    px(
        run,
        """
        @jax.jit
        def total(x):
            return jnp.sum(x * 2.0)
        data = np.arange(16.0, dtype=np.float32)
        x = jax.make_array_from_callback((16,), NamedSharding(mesh, P("d")), lambda i: data[i])
        s = float(total(x))
        """,
    )
    expected = float(jnp.sum(jnp.arange(16.0) * 2.0))
    assert rc[:].pull("s", block=True) == [expected] * N
    rep = rc.report()
    assert rep.divergences == []
    (row,) = [r for r in rep.rows if r.function.startswith("jit(total) at line")]
    fps = {fp for cell in row.cells.values() for _, fp in cell.variants}
    assert sorted(row.cells) == list(range(N)) and len(fps) == 1
    out = run("%jaxcluster").ok()
    text = out.bundle["text/plain"]
    assert f"cluster: {N} processes" in text and "no divergence" in text
    assert f"#{fps.pop()}" in text


def test_magics_under_px_show_each_process_output_labelled(rc, shell):
    with capture_output() as cap:
        res = shell.run_cell("%%px\nlayout = %sharding x\ndisplay(layout)\n")
    assert res.error_in_exec is None, cap.stdout + cap.stderr
    mime = "application/vnd.jax-workbench.sharding+json"
    shown = {o.metadata.get("engine", 0): o.data[mime] for o in cap.outputs if mime in o.data}
    assert sorted(shown) == list(range(N)), [(o.metadata, list(o.data)) for o in cap.outputs]
    for engine, payload in shown.items():  # each process draws the global array from its side
        assert payload["layouts"][0]["process_index"] == engine
        assert len(payload["layouts"][0]["devices"]) == N * DEVICES_PER_PROCESS


def test_profile_view_puts_steps_and_collectives_side_by_side(rc, run):
    px(run, "%jaxprof -n 3 total(x)")  # the cross-process sum: an all-reduce
    rep = rc.report(profile=True)
    assert rep.view == "profile" and [s.process for s in rep.steps] == list(range(N))
    for s in rep.steps:
        assert s.source == "%%jaxprof" and s.seconds > 0
        assert s.collectives_s is not None and 0 < s.collectives_s <= s.seconds
    assert sum(s.slowest for s in rep.steps) == 1
    text = run("%jaxcluster profile").ok().bundle["text/plain"]
    assert "collectives" in text and "compile ledger" not in text


def test_shape_branch_in_process_zero_names_process_zero(rc, run):
    px(
        run,
        """
        def branchy(x):
            return x + 1.0
        n = 8 if jax.process_index() == 0 else 16
        jax.jit(branchy).lower(
            jax.ShapeDtypeStruct((n,), jnp.float32, sharding=NamedSharding(mesh, P()))
        ).compile()
        """,
    )
    rep = rc.report()
    (d,) = [d for d in rep.divergences if d.function.startswith("jit(branchy) at line")]
    assert d.kind == "shape" and d.processes == [0]  # the odd one, not the three others
    assert f"process 0 compiled {_short((8,))} that {_others(0)} never compiled" in d.text
    assert _short((16,)) in d.text and "wait forever" in d.text
    text = run("%jaxcluster").ok().bundle["text/plain"]
    assert d.text in text


def test_different_static_argument_names_the_process(rc, run):
    px(
        run,
        """
        def scaled(x, k):
            return x * k
        jax.jit(scaled, static_argnums=1).lower(
            jax.ShapeDtypeStruct((8,), jnp.float32, sharding=NamedSharding(mesh, P())),
            2 + (jax.process_index() == 2),
        ).compile()
        """,
    )
    (d,) = [d for d in rc.report().divergences if d.function.startswith("jit(scaled) at line")]
    assert d.kind == "static" and d.processes == [2]
    assert f"process 2 compiled {_short((8,))} with static k=3 where {_others(2)} used k=2" in (
        d.text
    )


def test_recompile_for_new_shardings_is_a_sharding_divergence_in_the_function_row(rc, run):
    # a mesh whose axes are not in the arrays' types: the resharded input has the same
    # abstract type, so process 3's second compile reuses the trace of its first call
    px(
        run,
        """
        auto = jax.sharding.Mesh(np.array(jax.devices()), ("d",))
        values = np.arange(16.0, dtype=np.float32)
        def on(spec):
            return jax.make_array_from_callback(
                (16,), NamedSharding(auto, spec), lambda i: values[i]
            )
        @jax.jit
        def halved(x):
            return x / 2.0
        split = on(P("d"))
        h = halved(split)
        if jax.process_index() == 3:
            whole = on(P())
            assert jax.typeof(whole) == jax.typeof(split)
            halved.lower(whole).compile()
        """,
    )
    rep = rc.report()
    rows = [r for r in rep.rows if r.function.startswith("jit(halved)")]
    assert len(rows) == 1 and rows[0].function.startswith("jit(halved) at line")
    (row,) = rows
    (d,) = [d for d in rep.divergences if d.function == row.function]
    assert d.kind == "sharding" and d.processes == [3]
    (first,) = {v for p in range(3) for v, _ in row.cells[p].variants}
    (again,) = {v for v, _ in row.cells[3].variants} - {first}
    assert first.signature == again.signature == _short((16,))  # global types, not shards
    assert first.shardings != again.shardings
    assert (
        f"process 3 compiled {_short((16,))} with shardings {again.shardings} where "
        f"{_others(3)} compiled {_short((16,))} with {first.shardings}"
    ) in d.text


def test_first_compile_for_other_shardings_is_a_sharding_divergence(rc, run):
    # the module's mesh has explicit axes: the sharding is part of the argument's type
    px(
        run,
        """
        def quartered(x):
            return x / 4.0
        spec = P() if jax.process_index() == 1 else P("d")
        jax.jit(quartered).lower(
            jax.ShapeDtypeStruct((16,), jnp.float32, sharding=NamedSharding(mesh, spec))
        ).compile()
        """,
    )
    rep = rc.report()
    (d,) = [d for d in rep.divergences if d.function.startswith("jit(quartered) at line")]
    assert d.kind == "sharding" and d.processes == [1]
    (row,) = [r for r in rep.rows if r.function == d.function]
    s0 = row.cells[0].variants[0][0].shardings
    s1 = row.cells[1].variants[0][0].shardings
    assert s0 != s1 and f"with shardings {s1} where {_others(1)} compiled" in d.text
    assert s0 in d.text


def test_sleeping_process_is_the_straggler_and_outputs_are_labelled(rc, shell):
    code = textwrap.dedent(
        """\
        %%px
        bump = jax.jit(lambda x: x * 2 + 1)
        y = jnp.ones(64)
        def step(y):
            if jax.process_index() == 1:
                time.sleep(0.02)
            return bump(y)
        %jaxbench --budget 0.3 step(y)
        """
    )
    with capture_output() as cap:
        res = shell.run_cell(code)
    assert res.error_in_exec is None, cap.stdout + cap.stderr
    bench = [o for o in cap.outputs if "application/vnd.jax-workbench.bench+json" in o.data]
    assert sorted(o.metadata.get("engine", 0) for o in bench) == list(range(N))  # one each
    rep = rc.report()
    by = {s.process: s for s in rep.steps}
    assert [p for p, s in by.items() if s.slowest] == [1]
    assert by[1].seconds >= 0.02 > max(s.seconds for p, s in by.items() if p != 1)
    assert rep.straggler is not None and rep.straggler.startswith("process 1 is the straggler")


def test_connect_attaches_to_running_engines_and_stop_leaves_them(rc, run, shell):
    cl = rc.handle.cluster
    url = os.path.join(cl.profile_dir, "security", f"ipcontroller-{cl.cluster_id}-client.json")
    assert os.path.isfile(url)
    run(f"attached = workbench.cluster(connect={url!r})").ok()
    attached = shell.user_ns.pop("attached")
    try:
        assert not attached.started
        rep = attached.report()
        assert sorted(p.pid for p in rep.processes) == sorted(p.pid for p in rc.report().processes)
        assert any(r.function.startswith("jit(total) at line") for r in rep.rows)
    finally:
        attached.stop()
    assert rc[:].apply_sync(lambda: jax.process_index()) == list(range(N))  # still running
    shell.user_ns["user_client"] = rc.client
    run("workbench.cluster(connect=user_client).stop()").ok()  # the user's own client ...
    shell.user_ns.pop("user_client")
    assert rc.client.ids and not rc.client._closed  # ... is left open
    out = run("%jaxcluster").ok()  # back to the started cluster
    assert f"cluster: {N} processes" in out.bundle["text/plain"]
    again = px(run, "pid_now = os.getpid()")  # %%px too
    assert again.error is None
    assert sorted(rc[:].pull("pid_now", block=True)) == sorted(p.pid for p in rc.report().processes)


def test_a_dead_process_and_a_busy_one_are_named_and_the_others_stay_usable(rc, run):
    dead, busy = N - 1, 1
    died = run(f"%%px\nif jax.process_index() == {dead}:\n    os._exit(1)\n")
    assert died.error is not None
    deadline = time.monotonic() + 20
    while dead in rc.client.ids and time.monotonic() < deadline:
        time.sleep(0.2)
    assert dead not in rc.client.ids, died.message
    # ipyparallel's EngineError names the engine that died (raised, or shown as it streamed)
    said = died.stdout + died.stderr + "".join(str(o.get("text/plain", "")) for o in died.outputs)
    error = getattr(died.error, "original_error", died.error)
    said += "".join(str(e[1]) for e in getattr(error, "elist", []))
    assert f"Engine {dead} died" in said, (died.error, said)
    # while the heartbeat timeout passes (after it the survivors must still run): a process
    # busy in a cell does not answer in time, and is named apart from the dead one
    t0 = time.monotonic()
    sleeping = rc[busy].execute("time.sleep(2)", block=False)
    rep = rc.report(timeout=1.0)
    assert [p.error is None for p in rep.processes] == [p not in (busy, dead) for p in range(N)]
    assert "did not answer within" in rep.processes[busy].error
    assert f"process on engine {dead} is gone" in rep.processes[dead].error
    assert sorted(d.processes[0] for d in rep.divergences if d.kind == "gone") == [busy, dead]
    sleeping.get(timeout=30)
    time.sleep(max(0.0, HEARTBEAT_S + 1.5 - (time.monotonic() - t0)))
    text = run("%jaxcluster").ok().bundle["text/plain"]
    assert f"process on engine {dead} is gone" in text
    for p in range(dead):
        assert f"process {p} (engine {p}" in text
    expected = float(jnp.sum(jnp.arange(4.0) ** 2))
    got = rc[list(range(dead))].apply_sync(
        lambda: float(jax.jit(lambda v: jnp.sum(v * v))(jnp.arange(4.0)))
    )
    assert got == [expected] * dead


def test_stop_leaves_nothing_running_within_ten_seconds(rc):
    pids = list(rc.handle.pids)
    watchdog = rc.handle.watchdog
    cluster_id = rc.handle.cluster.cluster_id
    assert pids and watchdog is not None and pid_running(watchdog.pid)
    running = {p for p in pids if pid_running(p)}  # not the dead process's
    assert running and running <= set(_cluster_procs(cluster_id))  # the table check sees them
    t0 = time.monotonic()
    rc.stop(timeout=10)
    assert time.monotonic() - t0 <= 10.5
    assert [p for p in [*pids, watchdog.pid] if pid_running(p)] == []
    assert _cluster_procs(cluster_id) == []


@pytest.mark.parametrize("end", ["shut down", "killed"])
def test_a_jupyter_kernel_that_ends_leaves_no_cluster_process(kernels, end):
    kernel = kernels[end]
    kernel_pid, pids, cluster_id = kernel.started()
    assert all(pid_running(p) for p in pids) and _cluster_procs(cluster_id)
    if end == "shut down":
        kernel.km.shutdown_kernel(now=False)  # its atexit stops the cluster
    else:
        os.kill(kernel_pid, signal.SIGKILL)  # no atexit: the watchdog ends the cluster
    took = _gone_within([kernel_pid, *pids], cluster_id, 10.0)
    print(f"\nkernel {end}: its cluster gone {took:.1f} s later")

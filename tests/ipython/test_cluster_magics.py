"""Two JAX processes on 127.0.0.1 driven from the test's shell: ``workbench.cluster()``,
``%%px`` and ``%jaxcluster``.

One 2-process cluster (2 CPU devices each, gloo collectives, a short heartbeat timeout) is
started for the whole module and always stopped; the tests run in order and the last one
kills a process.  Every divergence is made by *compiling* (``.lower(...).compile()``), never
by running, so no collective is left waiting for a partner.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from IPython.utils.capture import capture_output

from workbench.engine.cluster.launch import pid_running

pytestmark = pytest.mark.slow  # starts JAX processes that talk over TCP

ROOT = Path(__file__).resolve().parents[2]
HEARTBEAT_S = 2


def _short(shape: tuple[int, ...]) -> str:
    return jax.core.ShapedArray(shape, jnp.float32).str_short(short_dtypes=True)


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


#: a "kernel" that starts a cluster and exits without stopping it (its shutdown must)
EXITING_KERNEL = """
import workbench
c = workbench.cluster(n=1)
print(" ".join(map(str, c.handle.pids)), c.handle.cluster.cluster_id, flush=True)
"""


@pytest.fixture(scope="module")
def exiting_kernel(tmp_path_factory):
    """Started before the module's cluster so that the two start-ups overlap (most of an
    engine's start is waiting); read by the last test."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.Popen(
        [sys.executable, "-c", EXITING_KERNEL],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path_factory.mktemp("exiting_kernel"),
        env=env,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.fixture(scope="module")
def rc(shell, run, exiting_kernel):
    run(
        "rc = workbench.cluster(n=2, devices_per_process=2, "
        f"heartbeat_timeout_seconds={HEARTBEAT_S})"
    ).ok()
    c = shell.user_ns["rc"]
    try:
        px(
            run,
            """
            import os, time
            import jax, jax.numpy as jnp, numpy as np
            from jax.sharding import NamedSharding, PartitionSpec as P
            mesh = jax.make_mesh((4,), ("d",))
            """,
        )
        yield c
    finally:
        c.handle.stop()
        shell.user_ns.pop("rc", None)


def px(run, code: str):
    return run("%%px\n" + textwrap.dedent(code)).ok()


def test_started_processes_are_one_jax_program(rc):
    info = rc[:].apply_sync(lambda: (jax.process_index(), jax.process_count(), jax.device_count()))
    assert sorted(info) == [(0, 2, 4), (1, 2, 4)]
    assert [i[0] for i in info] == sorted(rc.handle.engines)  # engine i is process i


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
    assert rc[:].pull("s", block=True) == [expected, expected]
    rep = rc.report()
    assert rep.divergences == []
    (row,) = [r for r in rep.rows if r.function.startswith("jit(total) at line")]
    fps = {fp for cell in row.cells.values() for _, fp in cell.variants}
    assert sorted(row.cells) == [0, 1] and len(fps) == 1
    out = run("%jaxcluster").ok()
    text = out.bundle["text/plain"]
    assert "cluster: 2 processes" in text and "no divergence" in text
    assert f"#{fps.pop()}" in text


def test_magics_under_px_show_each_process_output_labelled(rc, shell):
    with capture_output() as cap:
        res = shell.run_cell("%%px\nlayout = %sharding x\ndisplay(layout)\n")
    assert res.error_in_exec is None, cap.stdout + cap.stderr
    mime = "application/vnd.jax-workbench.sharding+json"
    shown = {o.metadata.get("engine", 0): o.data[mime] for o in cap.outputs if mime in o.data}
    assert sorted(shown) == [0, 1], [(o.metadata, list(o.data)) for o in cap.outputs]
    for engine, payload in shown.items():  # each process draws the global array from its side
        assert payload["layouts"][0]["process_index"] == engine
        assert len(payload["layouts"][0]["devices"]) == 4


def test_profile_view_puts_steps_and_collectives_side_by_side(rc, run):
    px(run, "%jaxprof -n 3 total(x)")  # the cross-process sum: an all-reduce
    rep = rc.report(profile=True)
    assert rep.view == "profile" and [s.process for s in rep.steps] == [0, 1]
    for s in rep.steps:
        assert s.source == "%%jaxprof" and s.seconds > 0
        assert s.collectives_s is not None and 0 < s.collectives_s <= s.seconds
    assert sum(s.slowest for s in rep.steps) == 1
    text = run("%jaxcluster profile").ok().bundle["text/plain"]
    assert "collectives" in text and "compile ledger" not in text


def test_shape_branch_on_process_index_is_named(rc, run):
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
    assert d.kind == "shape" and d.processes == [1]
    assert f"process 1 compiled {_short((16,))} that process 0 never compiled" in d.text
    assert _short((8,)) in d.text and "wait forever" in d.text
    text = run("%jaxcluster").ok().bundle["text/plain"]
    assert d.text in text


def test_different_static_argument_is_named(rc, run):
    px(
        run,
        """
        def scaled(x, k):
            return x * k
        jax.jit(scaled, static_argnums=1).lower(
            jax.ShapeDtypeStruct((8,), jnp.float32, sharding=NamedSharding(mesh, P())),
            2 + jax.process_index(),
        ).compile()
        """,
    )
    (d,) = [d for d in rc.report().divergences if d.function.startswith("jit(scaled) at line")]
    assert d.kind == "static" and d.processes == [1]
    assert "process 1" in d.text and "k=3" in d.text and "k=2" in d.text


def test_different_sharding_is_named(rc, run):
    px(
        run,
        """
        def halved(x):
            return x / 2.0
        spec = P("d") if jax.process_index() == 0 else P()
        jax.jit(halved).lower(
            jax.ShapeDtypeStruct((16,), jnp.float32, sharding=NamedSharding(mesh, spec))
        ).compile()
        """,
    )
    rep = rc.report()
    (d,) = [d for d in rep.divergences if d.function.startswith("jit(halved) at line")]
    assert d.kind == "sharding" and d.processes == [1]
    (row,) = [r for r in rep.rows if r.function.startswith("jit(halved) at line")]
    s0 = row.cells[0].variants[0][0].shardings
    s1 = row.cells[1].variants[0][0].shardings
    assert s0 != s1 and s0 in d.text and s1 in d.text


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
    assert sorted(o.metadata.get("engine", 0) for o in bench) == [0, 1]  # one per process
    rep = rc.report()
    by = {s.process: s for s in rep.steps}
    assert by[1].slowest and not by[0].slowest
    assert by[1].seconds >= 0.02 > by[0].seconds
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
    assert sorted(rc[:].apply_sync(lambda: jax.process_index())) == [0, 1]  # still running
    shell.user_ns["user_client"] = rc.client
    run("workbench.cluster(connect=user_client).stop()").ok()  # the user's own client ...
    shell.user_ns.pop("user_client")
    assert rc.client.ids and not rc.client._closed  # ... is left open
    out = run("%jaxcluster").ok()  # back to the started cluster
    assert "cluster: 2 processes" in out.bundle["text/plain"]
    again = px(run, "pid_now = os.getpid()")  # %%px too
    assert again.error is None
    assert sorted(rc[:].pull("pid_now", block=True)) == sorted(p.pid for p in rc.report().processes)


def test_a_busy_process_is_named_and_the_others_shown(rc):
    busy = rc[1].execute("time.sleep(3)", block=False)
    rep = rc.report(timeout=1.0)
    assert [p.error is None for p in rep.processes] == [True, False]
    assert "did not answer within" in rep.processes[1].error
    assert rep.divergences[0].kind == "gone" and rep.divergences[0].processes == [1]
    busy.get(timeout=30)


def test_process_dying_mid_cell_is_named_and_the_other_stays_usable(rc, run):
    died = run("%%px\nif jax.process_index() == 1:\n    os._exit(1)\n")
    assert died.error is not None
    deadline = time.monotonic() + 20
    while 1 in rc.client.ids and time.monotonic() < deadline:
        time.sleep(0.2)
    assert 1 not in rc.client.ids, died.message
    # ipyparallel's EngineError names the engine that died (raised, or shown as it streamed)
    said = died.stdout + died.stderr + "".join(str(o.get("text/plain", "")) for o in died.outputs)
    error = getattr(died.error, "original_error", died.error)
    said += "".join(str(e[1]) for e in getattr(error, "elist", []))
    assert "Engine 1 died" in said, (died.error, said)
    time.sleep(HEARTBEAT_S + 1.5)  # past the heartbeat timeout: the survivor is not ended
    text = run("%jaxcluster").ok().bundle["text/plain"]
    assert "process on engine 1 is gone" in text and "process 0 (engine 0" in text
    got = rc[0].apply_sync(lambda: float(jax.jit(lambda v: jnp.sum(v * v))(jnp.arange(4.0))))
    assert got == float(jnp.sum(jnp.arange(4.0) ** 2))


def test_stop_leaves_nothing_running_within_ten_seconds(rc):
    pids = list(rc.handle.pids)
    cluster_id = rc.handle.cluster.cluster_id
    assert pids
    running = {p for p in pids if pid_running(p)}  # not process 1's: it died above
    assert running and running <= set(_cluster_procs(cluster_id))  # the table check sees them
    t0 = time.monotonic()
    rc.stop(timeout=10)
    assert time.monotonic() - t0 <= 10.5
    assert [p for p in pids if pid_running(p)] == []
    assert _cluster_procs(cluster_id) == []


def test_kernel_exit_ends_the_cluster_it_started(exiting_kernel):
    out, err = exiting_kernel.communicate(timeout=180)
    assert exiting_kernel.returncode == 0, err[-3000:]
    *pids, cluster_id = out.split()
    deadline = time.monotonic() + 10  # the exit itself waited for them; this is slack
    while time.monotonic() < deadline and any(pid_running(int(p)) for p in pids):
        time.sleep(0.1)
    assert [p for p in pids if pid_running(int(p))] == []
    assert _cluster_procs(cluster_id) == []

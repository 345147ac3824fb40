"""Two shells side by side in one process, each with the workbench loaded: each keeps its
own session (cell ids, the cache feature's cells, live mode, the side panel's link, the
result listeners), and unloading one leaves the other working.  And what every session
promises: a listener's bug breaks no cell, no result is kept alive, the side panel's comm
target goes back to a hub still open, and the ``workbench.bench`` twin tells the running
shell's session without a script ever importing the IPython front door.

The first shell is the suite's ``InteractiveShell.instance()``; the second is a real
``InteractiveShell`` constructed directly (IPython allows several; only ``.instance()`` is
a singleton), with its history in memory.  Each shell gets a stand-in kernel whose
current request carries ``metadata.cellId``, as ipykernel gives JupyterLab's cell ids.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from traitlets.config import Config

import workbench
from tests.conftest import CellRun
from workbench.engine.cache import CACHE
from workbench.engine.common.source import cell_label
from workbench.ipython import sidepanel
from workbench.ipython.session import Result, Session
from workbench.views import sidepanel_messages as pm
from workbench.views.cache import CACHE_CELL_MIME


class _Kernel:
    """What ``prompt.current_cell_id`` reads: the execute request's ``metadata.cellId``."""

    def __init__(self) -> None:
        self.cell_id: str | None = None

    def get_parent(self) -> dict[str, Any]:
        return {"metadata": {"cellId": self.cell_id}} if self.cell_id else {}


class _Comm:
    """A front end's comm, as the hub's target receives it."""

    def __init__(self, comm_id: str) -> None:
        self.comm_id = comm_id
        self.sent: list[dict[str, Any]] = []

    def send(self, data: Any) -> None:
        self.sent.append(data)

    def on_msg(self, callback: Any) -> None:
        pass

    def on_close(self, callback: Any) -> None:
        pass

    def close(self) -> None:
        pass


class Watched:
    """One shell with the workbench loaded, a stand-in kernel and a record of what its
    session told its listeners."""

    def __init__(self, shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
        self.shell = shell
        self.kernel = _Kernel()
        monkeypatch.setattr(shell, "kernel", self.kernel, raising=False)
        self.ended: list[tuple[int, str, str | None]] = []
        self.results: list[Result] = []
        session = self.session
        self._off = [
            session.on_cell_end(lambda *a: self.ended.append(a)),
            session.on_result(self.results.append),
        ]

    @property
    def session(self) -> Session:
        session = Session.of(self.shell)
        assert session is not None
        return session

    def run(self, cell_id: str, code: str) -> CellRun:
        self.kernel.cell_id = cell_id
        c = CellRun(self.shell, code)
        assert c.error is None, c.stdout + c.stderr
        return c

    def stop_watching(self) -> None:
        for off in self._off:
            off()


@pytest.fixture
def second_shell(shell):
    """A second ``InteractiveShell`` in this process, with the workbench loaded.

    Constructing a shell points ``sys.modules["__main__"]`` at its namespace; the suite's
    shell gets it back, so nothing else in the process notices the second one.
    """
    main = sys.modules["__main__"]
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    other = InteractiveShell(config=config)
    sys.modules["__main__"] = main
    assert other is not InteractiveShell.instance()
    other.run_cell("%load_ext workbench", store_history=False)
    other.run_cell("import jax, jax.numpy as jnp", store_history=False)
    yield other
    if Session.of(other) is not None:
        workbench.unload_ipython_extension(other)
    other.history_manager.end_session()
    sys.modules["__main__"] = main


@pytest.fixture
def pair(shell, second_shell, monkeypatch):
    a, b = Watched(shell, monkeypatch), Watched(second_shell, monkeypatch)
    yield a, b
    a.stop_watching()
    b.stop_watching()


def test_each_shell_has_its_own_session(pair):
    a, b = pair
    assert a.session is not b.session
    assert a.session.shell is a.shell and b.session.shell is b.shell
    assert sidepanel.hub_for(a.shell) is a.session.sidepanel
    assert sidepanel.hub_for(b.shell) is b.session.sidepanel
    assert a.session.sidepanel is not b.session.sidepanel


def test_cell_ids_are_kept_per_shell(pair):
    a, b = pair
    ran_a = a.run("a-cell", "def two_a(x):\n    return x * 2\n")
    ran_b = b.run("b-cell", "def two_b(x):\n    return x * 3\n")
    n_a, n_b = ran_a.result.execution_count, ran_b.result.execution_count
    assert a.session.cell_ids.ids[n_a] == "a-cell"
    assert b.session.cell_ids.ids[n_b] == "b-cell"
    assert "b-cell" not in a.session.cell_ids.ids.values()
    assert "a-cell" not in b.session.cell_ids.ids.values()
    # a function defined in each shell's ordinary cell is labelled with its own cell
    for w, name, number, cell_id in ((a, "two_a", n_a, "a-cell"), (b, "two_b", n_b, "b-cell")):
        file = w.shell.user_ns[name].__code__.co_filename
        label = cell_label(file)
        assert label is not None and (label.number, label.cell_id) == (number, cell_id)


def test_compile_records_go_to_the_cells_of_the_shell_that_ran_them(pair):
    a, b = pair
    ran = b.run("b-jit", "@jax.jit\ndef only_in_b(x):\n    return x * 5\nonly_in_b(jnp.ones(3))")
    assert a.ended == []  # the other shell's cell is not one of a's
    ((run, label, cell_id),) = b.ended
    assert cell_id == "b-jit" and label == str(ran.result.execution_count)
    recs = [r for r in CACHE.records(run) if r.origin != "workbench"]
    assert "jit(only_in_b)" in {r.function for r in recs}  # (jnp.ones's helpers may compile too)
    assert {(r.cell, r.cell_id) for r in recs} == {(label, "b-jit")}
    # the badge is b's side panel's, not a's
    hub_a, hub_b = sidepanel.hub_for(a.shell), sidepanel.hub_for(b.shell)
    assert hub_a is not None and hub_b is not None
    assert "b-jit" in hub_b._cells and "b-jit" not in hub_a._cells
    # the badge counts the user's compiles, JAX's helpers (jnp.ones) apart
    badge = hub_b._cells["b-jit"]
    assert badge["compiles"] == sum(r.kind == "compile" and r.origin != "jax" for r in recs) >= 1
    assert badge["helper_compiles"] == sum(r.kind == "compile" and r.origin == "jax" for r in recs)


def test_results_reach_the_listeners_of_their_own_shell(pair):
    a, b = pair
    ran = b.run("b-jaxpr", "%%jaxpr\njnp.sin(jnp.ones(3))")
    assert a.results == []
    (res,) = b.results
    assert res.kind == "jaxpr" and res.cell_id == "b-jaxpr"
    assert res.cell == str(ran.result.execution_count)
    a.run("a-bench", "%jaxbench -n 1 -r 2 --budget 1 --no-roofline jnp.cos(jnp.ones(3))")
    assert [r.kind for r in b.results] == ["jaxpr"]
    (bench,) = a.results  # the magic's result, once
    assert bench.kind == "bench" and bench.cell_id == "a-bench"
    hub_a, hub_b = sidepanel.hub_for(a.shell), sidepanel.hub_for(b.shell)
    assert hub_a is not None and hub_b is not None
    assert any(ref() is bench.value for ref in hub_a._benched)
    assert not any(ref() is bench.value for ref in hub_b._benched)


def test_live_mode_compares_a_cell_only_with_its_own_shells_runs(pair):
    a, b = pair
    first = "%%jaxpr\ndef lm(x):\n    return jnp.sin(x)\nlm(jnp.ones(3))"
    second = first.replace("jnp.sin(x)", "jnp.cos(jnp.sin(x))")
    a.run("same-id", first)
    b.run("same-id", second)  # the same cell id, in the other shell: a first run there
    assert [r.live_diff for r in b.results] == [None]
    a.run("same-id", second)
    diff = a.results[-1].live_diff
    assert diff is not None
    added = [g.what for g in diff.added]
    assert added == ["cos"]
    assert len(b.session.live_mode) == 1


def test_unloading_one_shell_keeps_the_other_working(pair):
    import comm as comm_pkg

    a, b = pair
    manager = comm_pkg.get_comm_manager()
    hub_a, hub_b = sidepanel.hub_for(a.shell), sidepanel.hub_for(b.shell)
    assert hub_a is not None and hub_b is not None
    hello = {"content": {"data": {"protocol": 1, "type": "hello"}}}
    newest = _Comm("to-the-newest")
    manager.targets[pm.COMM_TARGET](newest, hello)
    assert newest.comm_id in hub_b._peers  # the shell loaded last answers

    b.stop_watching()
    workbench.unload_ipython_extension(b.shell)
    assert Session.of(b.shell) is None and sidepanel.hub_for(b.shell) is None
    assert hub_b.on_record not in CACHE._subscribers
    assert "jaxpr" not in b.shell.magics_manager.magics["cell"]
    assert not any(
        isinstance(getattr(cb, "__self__", None), Session)
        for cb in b.shell.events.callbacks["post_run_cell"]
    )

    # the other shell: its session, its hooks, the tracker's listeners and the comm target
    assert Session.of(a.shell) is a.session and hub_a.on_record in CACHE._subscribers
    a.run("a-after", "@jax.jit\ndef after_unload(x):\n    return x - 7\nafter_unload(jnp.ones(2))")
    (run, _, cell_id), *_ = a.ended
    assert cell_id == "a-after"
    assert "jit(after_unload)" in {r.function for r in CACHE.records(run)}
    assert "a-after" in hub_a._cells
    defined = a.run("a-def", "def defined_after_unload(x):\n    return x * 4\n")
    label = cell_label(a.shell.user_ns["defined_after_unload"].__code__.co_filename)
    assert label is not None
    assert (label.number, label.cell_id) == (defined.result.execution_count, "a-def")
    again = _Comm("after-the-unload")
    manager.targets[pm.COMM_TARGET](again, hello)
    try:
        assert again.comm_id in hub_a._peers and again.sent[-1]["type"] == "snapshot"
    finally:
        hub_a._on_close({"content": {"comm_id": again.comm_id}})
        hub_a._on_close({"content": {"comm_id": newest.comm_id}})
    # b, without the workbench, runs cells as any shell does
    c = CellRun(b.shell, "@jax.jit\ndef b_unloaded(x):\n    return x + 1\nb_unloaded(jnp.ones(2))")
    assert c.error is None and [e[2] for e in a.ended] == ["a-after", "a-def"]
    # a's tracker still hears the process's compiles, but b's cell is none of a's cells
    recs = [r for r in CACHE.records() if r.function == "jit(b_unloaded)"]
    assert recs and all(r.cell_run is None and r.cell_id is None for r in recs)


@pytest.mark.slow  # a second JAX process
@pytest.mark.jax_process
def test_the_bench_twin_in_a_script_imports_no_ipython_front_door():
    """A script calling ``workbench.bench`` has no shell, so no session to tell of the
    result: finding that out must not import the IPython front door (every magic module
    and the side panel's comm) into a program that never uses it."""
    code = (
        "import sys, jax.numpy as jnp, workbench\n"
        "r = workbench.bench(lambda x: x + 1, jnp.ones(3), budget=0.1, roofline=False)\n"
        "assert r.record.measurements\n"
        "print(sorted(m for m in sys.modules if m.startswith('workbench.ipython')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_bench_twin_tells_the_running_shells_session_once(shell, monkeypatch):
    w = Watched(shell, monkeypatch)
    try:
        w.run(
            "twin",
            "import workbench\nr = workbench.bench(jnp.sin, jnp.ones(3), budget=0.1, roofline=False)",
        )
    finally:
        w.stop_watching()
    (res,) = w.results
    assert res.kind == "bench" and res.cell_id == "twin"
    assert res.value is shell.user_ns["r"].record


def _raise(*args: Any) -> None:
    raise RuntimeError("a listener's bug")


def test_a_listener_that_raises_breaks_no_cell_and_no_later_listener(shell, monkeypatch):
    """Listeners subscribed before the side panel's and the test's raise on every cell and
    result: the cells still succeed, the compile line is still shown, and the listeners
    after the failing ones (the side panel's badge, the test's record) still hear."""
    session = Session.of(shell)
    assert session is not None
    offs = [session.on_cell_start(_raise), session.on_cell_end(_raise), session.on_result(_raise)]
    # subscribed first: move the side panel's listeners after the failing ones
    hub = sidepanel.hub_for(shell)
    assert hub is not None
    for off in hub._unsubscribe:
        off()
    hub._unsubscribe = [
        session.on_cell_start(hub.cell_started),
        session.on_cell_end(hub.cell_ended),
        session.on_result(hub.on_result),
    ]
    w = Watched(shell, monkeypatch)
    try:
        w.kernel.cell_id = "raising-jit"
        with capture_output() as cap:
            ran = shell.run_cell(
                "@jax.jit\ndef past_a_bad_listener(x):\n    return x * 11\n"
                "past_a_bad_listener(jnp.ones(3))",
                store_history=True,
            )
        assert ran.success
        lines = [o.data[CACHE_CELL_MIME] for o in cap.outputs if CACHE_CELL_MIME in o.data]
        (line,) = lines
        assert "jit(past_a_bad_listener)" in {g["function"] for g in line["functions"]}
        assert [e[2] for e in w.ended] == ["raising-jit"]
        assert "raising-jit" in hub._cells
        first = "%%jaxpr\njnp.sin(jnp.ones(3))"
        w.run("raising-jaxpr", first)
        w.run("raising-jaxpr", first.replace("sin", "cos"))
        assert [r.kind for r in w.results] == ["jaxpr", "jaxpr"]
        assert w.results[-1].live_diff is not None
        assert "raising-jaxpr" in hub._diffs
    finally:
        w.stop_watching()
        for off in offs:
            off()


def test_the_session_keeps_no_result_alive(shell, monkeypatch):
    """Live mode keeps fingerprints, never the results (which hold the user's constants):
    once the cell's output is dropped, the results a session saw are gone."""
    kernel = _Kernel()
    monkeypatch.setattr(shell, "kernel", kernel, raising=False)
    kernel.cell_id = "not-kept"
    session = Session.of(shell)
    assert session is not None
    seen: list[tuple[weakref.ref[Any], bool]] = []
    off = session.on_result(lambda r: seen.append((weakref.ref(r.value), r.live_diff is not None)))
    try:
        for body in ("jnp.sin(jnp.ones(3))", "jnp.cos(jnp.ones(3))"):
            shown = shell.run_cell_magic("jaxpr", "", body)
            assert shown is not None
            del shown
    finally:
        off()
    gc.collect()
    assert [diffed for _, diffed in seen] == [False, True]  # compared with the first run
    assert [ref() for ref, _ in seen] == [None, None]


def test_the_comm_target_goes_back_past_a_closed_hub_to_an_open_one(pair):
    """Three hubs, loaded in order: the suite shell's, the second shell's, a third.  The
    middle one closes first (its shell unloads: the third keeps the target), then the
    third: the target goes back past the closed middle hub to the suite shell's."""
    import comm as comm_pkg

    a, b = pair
    manager = comm_pkg.get_comm_manager()
    hub_a, hub_b = sidepanel.hub_for(a.shell), sidepanel.hub_for(b.shell)
    assert hub_a is not None and hub_b is not None
    assert manager.targets[pm.COMM_TARGET] == hub_b.open_comm
    third = sidepanel.open_sidepanel(Session(b.shell))
    try:
        assert manager.targets[pm.COMM_TARGET] == third.open_comm
        b.stop_watching()
        workbench.unload_ipython_extension(b.shell)
        assert hub_b.is_closed
        assert manager.targets[pm.COMM_TARGET] == third.open_comm  # not the closed hub's
    finally:
        third.close()
    assert manager.targets[pm.COMM_TARGET] == hub_a.open_comm
    hello = {"content": {"data": {"protocol": 1, "type": "hello"}}}
    comm = _Comm("past-the-closed-hub")
    manager.targets[pm.COMM_TARGET](comm, hello)
    try:
        assert comm.comm_id in hub_a._peers and comm.sent[-1]["type"] == "snapshot"
    finally:
        hub_a._on_close({"content": {"comm_id": comm.comm_id}})


def test_an_unload_that_fails_half_way_still_unloads_so_a_load_starts_afresh(pair, monkeypatch):
    """Putting JAX's configuration back fails (the error reaches the user's cell), yet the
    rest of the unload happens: the session leaves the shell, its hooks, the side panel and
    the magics go, and the next ``%load_ext`` opens a working session, not the dead one."""
    from workbench.ipython.cache_magics import CellCompiles

    a, b = pair
    old, hub_b = b.session, sidepanel.hub_for(b.shell)
    assert hub_b is not None
    uninstall = CellCompiles.uninstall

    def fails_after_undoing(self: CellCompiles) -> None:
        uninstall(self)
        raise RuntimeError("JAX's configuration could not be put back")

    b.stop_watching()
    with monkeypatch.context() as m:
        m.setattr(CellCompiles, "uninstall", fails_after_undoing)
        with pytest.raises(RuntimeError, match="could not be put back"):
            workbench.unload_ipython_extension(b.shell)
    assert Session.of(b.shell) is None and hub_b.is_closed
    assert old.pre_run_cell not in b.shell.events.callbacks["pre_run_cell"]
    assert "jaxpr" not in b.shell.magics_manager.magics["cell"]
    assert "jaxcache" not in b.shell.magics_manager.magics["line"]

    workbench.load_ipython_extension(b.shell)
    fresh = Watched(b.shell, monkeypatch)
    try:
        assert fresh.session is not old
        fresh.run(
            "after-a-failed-unload",
            "@jax.jit\ndef reloaded(x):\n    return x * 9\nreloaded(jnp.ones(2))",
        )
        ((run, _, cell_id),) = fresh.ended
        assert cell_id == "after-a-failed-unload"
        assert "jit(reloaded)" in {r.function for r in CACHE.records(run)}
    finally:
        fresh.stop_watching()

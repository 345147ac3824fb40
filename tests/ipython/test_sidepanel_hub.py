"""The side panel's hub in a real ``InteractiveShell`` (quick; the kernel tests in
test_sidepanel_comm.py drive the same code through a real ipykernel).

A :class:`FakeComm` stands in for the comm ipykernel would give the target: it records
what the hub sends and validates every message against the comm schema.  Expected values
come from the tracker's own records and from JAX.
"""

from __future__ import annotations

import json
import math
import threading
import uuid
from types import SimpleNamespace
from typing import Any

import jax
import pytest

from workbench import schemas
from workbench.engine.cache import CACHE
from workbench.engine.live import LiveDiff, TotalChange
from workbench.engine.monitor import memory
from workbench.ipython import sidepanel
from workbench.ipython.session import Session
from workbench.views import sidepanel_messages as pm


class FakeComm:
    def __init__(self) -> None:
        self.comm_id = uuid.uuid4().hex
        self.sent: list[dict[str, Any]] = []
        self.closed = False

    def send(self, data: Any) -> None:
        schemas.validate_message(data)
        # what jupyter_client's packer does: NaN / Infinity are not JSON
        json.dumps(data, allow_nan=False)
        self.sent.append(data)

    def on_msg(self, callback: Any) -> None:
        self.msg_callback = callback

    def on_close(self, callback: Any) -> None:
        self.close_callback = callback

    def close(self) -> None:
        self.closed = True

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["type"] == kind]


@pytest.fixture
def hub(shell):
    h = sidepanel.hub_for(shell)
    assert h is not None
    yield h
    for comm_id in list(h._peers):  # no comm of one test outlives it
        h._on_close({"content": {"comm_id": comm_id}})
    assert not h._listening()
    h.flush()


def _connect(hub: sidepanel.SidePanelHub) -> FakeComm:
    comm = FakeComm()
    hub.attach(comm, {"protocol": 1, "type": "hello"})
    assert comm.sent[-1]["type"] == "snapshot"
    return comm


def _updates(comm: FakeComm, hub: sidepanel.SidePanelHub) -> list[dict[str, Any]]:
    hub.flush()  # what a timer would send a moment later
    return comm.of("update")


def test_snapshot_lists_jax_devices_and_the_ledger(hub, run):
    run("@jax.jit\ndef hub_f(x):\n    return x - 1\nhub_f(jnp.ones(2))")
    comm = _connect(hub)
    snap = comm.sent[0]
    assert [d["id"] for d in snap["kernel"]["devices"]] == [d.id for d in jax.devices()]
    assert snap["kernel"]["backend"] == jax.default_backend()
    assert [r["seq"] for r in snap["records"]] == [r.seq for r in CACHE.records()]
    assert snap["dropped"] == CACHE.evicted()


def test_updates_carry_the_cells_records_and_badge(hub, run):
    comm = _connect(hub)
    c = run("@jax.jit\ndef hub_g(x):\n    return x * 3\nhub_g(jnp.ones(2))\nhub_g(jnp.ones(3))")
    assert c.error is None
    ups = _updates(comm, hub)
    recs = [r for u in ups for r in u.get("records", [])]
    ledger = [r for r in CACHE.records() if r.seq in {x["seq"] for x in recs}]
    assert [r["seq"] for r in recs] == [r.seq for r in ledger]
    cell_run = ledger[-1].cell_run
    badge = [b for u in ups for b in u.get("cells", []) if b["run"] == cell_run][0]
    mine = [r for r in CACHE.records(cell_run) if r.origin == "user"]
    assert badge["compiles"] == sum(r.kind == "compile" for r in mine)
    assert badge["misses"] == sum(r.is_recompile for r in mine) == 1
    assert badge["first_reason"] == next(r for r in mine if r.is_recompile).reasons[0].text()
    # memory was sampled at the cell's start and end (a panel listens)
    whens = [m["when"] for u in ups for m in u.get("memory", [])]
    assert whens[-2:] == ["start", "end"]


def test_badges_count_the_users_compiles_and_keep_jax_helpers_apart(hub, run):
    """A cell that builds an NNX model and calls its ``nnx.jit`` step once: JAX compiles
    a dozen helpers for the initialisers (eager ops), the user's program compiles once.
    The badge says the user's count; the helpers go in their own fields (the tooltip).
    A cell that only traces (``jax.make_jaxpr``) has no user compile, whatever JAX made
    for its inputs."""
    comm = _connect(hub)
    c = run(
        "from tests.real_models import nnx_mlp_setup\n"
        # eager work on shapes no other test uses: JAX compiles helpers for it whatever ran
        # before on this worker (the initialisers' helpers may be cached already)
        "badge_h = jnp.full((13, 17), 2.0) * jnp.arange(17.0)\n"
        "badge_m = nnx_mlp_setup()\n"
        "badge_m.train_step(badge_m.model, badge_m.optimizer, badge_m.x, badge_m.y)"
    )
    assert c.error is None, c.message
    ups = _updates(comm, hub)
    cell_run = max(r.cell_run or 0 for r in CACHE.records())
    recs = CACHE.records(cell_run)
    badge = [b for u in ups for b in u.get("cells", []) if b["run"] == cell_run][0]
    user = [r for r in recs if r.origin == "user"]
    helpers = [r for r in recs if r.origin == "jax"]
    assert [r.function for r in user if r.kind == "compile"] == ["jit(train_step)"]
    assert sum(r.kind == "compile" for r in helpers) > 1  # the case the badge must not count
    assert badge["compiles"] == 1
    assert badge["helper_compiles"] == sum(r.kind == "compile" for r in helpers)
    assert badge["helper_s"] == pytest.approx(sum(r.total_s for r in helpers))
    assert badge["compile_s"] == pytest.approx(sum(r.total_s for r in user))

    c = run("badge_x = jnp.arange(5.0) * 2\njax.make_jaxpr(jnp.sin)(badge_x)")
    assert c.error is None, c.message
    ups = _updates(comm, hub)
    cell_run = max(r.cell_run or 0 for r in CACHE.records())
    recs = CACHE.records(cell_run)
    badge = [b for u in ups for b in u.get("cells", []) if b["run"] == cell_run][0]
    assert badge["compiles"] == 0
    assert badge["traces"] == sum(r.origin == "user" and r.trace_s is not None for r in recs)
    assert badge["helper_compiles"] == sum(r.origin == "jax" and r.kind == "compile" for r in recs)


def test_without_a_panel_badges_and_memory_are_kept_for_a_later_hello(hub, shell, run):
    """Cells that run while no panel listens (a Run All before the panel's hello, a panel
    opened late): nothing is queued for nobody, but the badges and one memory sample per
    cell (at its end: the previous end stands for the next start) are kept, and the
    hello's snapshot charts every one of them."""
    assert hub.comms == 0 and not hub._listening()
    kept_before = len(hub._memory)
    run("@jax.jit\ndef hub_quiet(x):\n    return x + 42\nhub_quiet(jnp.ones(2))")
    alloc = run(
        "hub_late = jnp.ones((256, 1024), jnp.float32).block_until_ready()\n"
        "hub_nbytes = hub_late.nbytes"
    )
    run("del hub_late")
    assert hub._pending == [] and not hub._incoming  # nothing queued for nobody
    late = list(hub._memory)[kept_before:]
    assert [m["when"] for m in late] == ["end"] * 3  # one per cell, at its end
    comm = _connect(hub)
    snap = comm.sent[0]
    quiet_run = next(r.cell_run for r in CACHE.records() if "hub_quiet" in r.function)
    badge = next(b for b in snap["cells"] if b["run"] == quiet_run)
    assert badge["compiles"] >= 1
    # the snapshot carries the kept history as the kernel holds it
    assert snap["memory"] == list(hub._memory)
    assert snap["memory_dropped"] == hub._memory_dropped == 0
    nbytes = shell.user_ns["hub_nbytes"]
    before, grown, freed = late  # the cell before the allocation stands for its start
    assert alloc.error is None and grown["cell"] != before["cell"]
    assert grown["live_bytes"] - before["live_bytes"] >= nbytes
    assert grown["live_bytes"] - freed["live_bytes"] >= nbytes
    # with the panel listening, a cell is sampled at its start and end again, in updates
    run("pass")
    ups = _updates(comm, hub)
    sent = [m for u in ups for m in u.get("memory", [])]
    assert [m["when"] for m in sent][:2] == ["start", "end"]
    assert not [m for m in sent if m in snap["memory"]]


def test_with_no_panel_the_first_cell_is_sampled_at_its_start_too(shell):
    """With nobody listening a cell's start sample is left out (the previous end stands for
    it), except when there is no previous sample: the first cell after JAX started gets
    its start, so the chart sees the step that cell made."""
    h = sidepanel.SidePanelHub(shell, "test")
    assert not h._listening() and not h._memory
    for label in ("1", "2"):
        h.cell_started(label, f"cell-{label}")
        h.cell_ended(0, label, f"cell-{label}")
    assert [(m["cell"], m["when"]) for m in h._memory] == [
        ("1", "start"),
        ("1", "end"),
        ("2", "end"),
    ]


def test_the_kept_memory_history_is_bounded_and_counts_what_it_dropped(shell, monkeypatch):
    monkeypatch.setattr(sidepanel, "MAX_MEMORY_SAMPLES", 5)
    h = sidepanel.SidePanelHub(shell, "test")
    taken = [h.take_sample("request") for _ in range(8)]
    comm = FakeComm()
    h.attach(comm, {"protocol": 1, "type": "hello"})
    snap = comm.of("snapshot")[0]
    assert snap["memory"] == taken[-5:]  # the newest, oldest first
    assert snap["memory_dropped"] == 3


def test_a_batch_holds_at_most_max_records_and_counts_the_rest(hub, run, monkeypatch):
    monkeypatch.setattr(sidepanel, "MAX_BATCH_RECORDS", 5)
    # no timed or end-of-cell flush: the whole cell's records meet in one batch, however
    # slowly the machine compiles (a timer flushing every few records never drops any)
    monkeypatch.setattr(hub, "_schedule", lambda *a, **k: None)
    comm = _connect(hub)
    run("for i in range(12):\n    jax.jit(lambda x, i=i: x + i)(1.0)")
    ups = _updates(comm, hub)
    made = len(CACHE.records(max(r.cell_run or 0 for r in CACHE.records())))
    sent = sum(len(u.get("records", [])) for u in ups)
    assert all(len(u.get("records", [])) <= 5 for u in ups)
    assert sent + sum(u.get("dropped", 0) for u in ups) == made
    assert any(u.get("dropped") for u in ups)


def test_bad_messages_are_answered_with_error(hub, run):
    comm = FakeComm()
    hub.attach(comm)
    run("@jax.jit\ndef hub_nobody(x):\n    return x - 7\nhub_nobody(jnp.ones(2))")
    assert not hub._incoming and hub._pending == []  # open but silent: not listening
    for bad in (
        None,
        3,
        {"type": "hello"},
        {"protocol": 1, "type": "nope"},
        {"protocol": 1, "type": "sample"},
    ):
        hub.handle(comm, bad)
    assert [m["type"] for m in comm.sent] == ["error"] * 5
    hub.handle(comm, {"protocol": 1, "type": "hello"})
    hub.handle(comm, {"protocol": 1, "type": "sample"})
    assert comm.sent[5]["type"] == "snapshot"
    assert [m["when"] for u in _updates(comm, hub) for m in u.get("memory", [])] == ["request"]


def test_clear_sends_cleared_after_what_was_queued(hub, run):
    comm = _connect(hub)
    run("@jax.jit\ndef hub_c(x):\n    return x + 5\nhub_c(jnp.ones(2))")
    run("%jaxcache clear")
    types = [m["type"] for m in comm.sent]
    assert types.count("cleared") == 1
    # the badge of the cell before was sent before cleared; no badge after it (the cell
    # that cleared compiled nothing that is still in the ledger)
    before = [b for m in comm.sent[: types.index("cleared")] for b in m.get("cells", [])]
    after = [b for m in comm.sent[types.index("cleared") :] for b in m.get("cells", [])]
    assert before and not after
    assert hub._cells == {}
    assert CACHE.records() == []


def test_subscribers_run_only_on_compiles_and_never_break_a_call(shell, run):
    seen: list[object] = []

    def bad(rec: object) -> None:
        seen.append(rec)
        raise RuntimeError("a subscriber's bug")

    CACHE.subscribe(bad)
    try:
        c = run(
            "@jax.jit\ndef hub_sub(x):\n    return x / 2\ny = hub_sub(jnp.ones(4))\n"
            "for _i in range(200):\n    y = hub_sub(y)"
        )
        assert c.error is None
        compiled = [r for r in seen if r is not None]
        assert compiled and all(r in CACHE.records() for r in compiled)
        # cached dispatch: the 200 calls added nothing
        assert len(compiled) == len(
            [r for r in CACHE.records() if r.cell_run == compiled[-1].cell_run]
        )
        CACHE.clear()
        assert seen[-1] is None
    finally:
        CACHE.unsubscribe(bad)
    assert bad not in CACHE._subscribers


def test_unload_says_bye_and_removes_everything(shell, run):
    hub = sidepanel.hub_for(shell)
    comm = _connect(hub)
    import comm as comm_pkg

    manager = comm_pkg.get_comm_manager()
    assert pm.COMM_TARGET in manager.targets
    try:
        run("%unload_ext workbench")
        assert comm.sent[-1] == pm.bye() and comm.closed
        assert pm.COMM_TARGET not in manager.targets
        assert hub.on_record not in CACHE._subscribers
        assert sidepanel.hub_for(shell) is None
        assert hub._timer is None
    finally:
        run("%load_ext workbench")
    session = Session.of(shell)
    new = sidepanel.hub_for(shell)
    assert session is not None and new is not None and new is not hub
    assert session._cell_ended == [new.cell_ended]  # reloaded: one of each, not two
    assert session._results == [new.on_result]
    assert list(CACHE._subscribers).count(new.on_record) == 1


def test_a_rerun_that_compiles_nothing_replaces_the_badge(hub, shell, run, monkeypatch):
    class _Kernel:  # the execute request's metadata.cellId, as ipykernel gives it
        def get_parent(self) -> dict[str, Any]:
            return {"metadata": {"cellId": "rerun-cell"}}

    monkeypatch.setattr(shell, "kernel", _Kernel(), raising=False)
    comm = _connect(hub)
    code = "@jax.jit\ndef hub_rerun(x):\n    return x * 11\nhub_rerun(jnp.ones(2))"
    run(code)
    run("hub_rerun(jnp.ones(2))")  # same cell id, cached: compiles nothing
    badges = [
        b for u in _updates(comm, hub) for b in u.get("cells", []) if b["cell_id"] == "rerun-cell"
    ]
    assert [b["compiles"] > 0 for b in badges] == [True, False]
    assert badges[1]["run"] > badges[0]["run"]
    assert list(hub._cells.values())[-1] == badges[1]
    # a cell that never compiled gets no badge at all
    monkeypatch.setattr(_Kernel, "get_parent", lambda self: {"metadata": {"cellId": "quiet-cell"}})
    run("1 + 1")
    assert "quiet-cell" not in hub._cells


def test_an_error_never_echoes_a_huge_value(hub):
    comm = FakeComm()
    hub.attach(comm)
    huge = "x" * 1_000_000
    hub.handle(comm, {"protocol": huge, "type": "hello"})
    hub.handle(comm, {"protocol": 1, "type": huge})
    assert [m["type"] for m in comm.sent] == ["error", "error"]
    assert all(len(m["message"]) < 300 for m in comm.sent)


def test_non_finite_numbers_go_out_as_null(monkeypatch):
    nan, inf = float("nan"), float("inf")
    diff = LiveDiff(
        kind="hlo",
        function="f",
        added=[],
        removed=[],
        totals=[
            TotalChange("estimated flops", nan, inf, "count"),
            TotalChange("compile time", 0.5, -inf, "s"),
        ],
        t=1.0,
    )
    msg = pm.live_diff(diff, "3", "cell-nan")
    assert [(t["before"], t["after"]) for t in msg["totals"]] == [(None, None), (0.5, None)]
    stats = SimpleNamespace(min=nan, median=nan)
    bench = SimpleNamespace(
        label="f(x)",
        measurements=[SimpleNamespace(stats=stats, samples=[1.0], number=1)],
        median=nan,
        variants=["f"],
        interrupted=False,
    )
    summary = pm.bench_summary(bench, "3", None, 1.0)  # type: ignore[arg-type]
    assert summary["median_s"] is None and summary["best_s"] is None
    # an allocator that reports odd floats: no exception, None where not a byte count
    monkeypatch.setattr(
        memory,
        "_stats",
        lambda d: {"bytes_in_use": nan, "peak_bytes_in_use": inf, "bytes_limit": 2.0**40},
    )
    sample = memory.sample_memory("request")
    assert all(
        d.bytes_in_use is None and d.peak_bytes_in_use is None and d.bytes_limit == 2**40
        for d in sample.devices
    )
    comm = FakeComm()
    comm.send(pm.update(diffs=[msg], benchmarks=[summary], memory=[pm.memory_sample(sample)]))
    assert not any(
        isinstance(v, float) and not math.isfinite(v)
        for v in json.loads(json.dumps(comm.sent[0]))["diffs"][0]["totals"]
    )


def test_a_timer_that_fired_after_being_replaced_leaves_the_new_one_alone(hub):
    """The end of a cell cancels a long timer and sets a short one; if the long one had
    already fired (its thread waiting for the lock), it must neither forget the new
    timer (close() could not cancel it) nor flush out of schedule."""
    comm = _connect(hub)
    hub.take_sample("request")
    current = threading.Timer(60.0, lambda: None)  # the hub's timer now (never started)
    hub._timer = current
    try:
        hub._on_timer()  # the replaced timer's callback, on a thread that is not `current`
        assert hub._timer is current
        assert comm.of("update") == []  # the current timer sends the news, once
    finally:
        hub._cancel_timer()
    assert hub.flush() and len(comm.of("update")) == 1


def test_protocol_true_is_not_protocol_1(hub):
    comm = FakeComm()
    hub.attach(comm)
    hub.handle(comm, {"protocol": True, "type": "hello"})  # Python: True == 1; JSON: not
    assert [m["type"] for m in comm.sent] == ["error"]
    from jsonschema import ValidationError

    with pytest.raises(ValidationError):
        schemas.validate_message({"protocol": True, "type": "hello"})


_LAZY = """
import json, uuid
from IPython.core.interactiveshell import InteractiveShell
from jax._src import xla_bridge
from workbench import schemas
from workbench.ipython import sidepanel

class Comm:
    comm_id = uuid.uuid4().hex
    sent = []
    def send(self, data):
        schemas.validate_message(data)
        self.sent.append(json.loads(json.dumps(data, allow_nan=False)))
    def on_msg(self, cb): pass
    def on_close(self, cb): pass
    def close(self): pass

sh = InteractiveShell.instance()
sh.run_cell("%load_ext workbench")
hub = sidepanel.hub_for(sh)
comm = Comm()
hub.attach(comm, {"protocol": 1, "type": "hello"})
sh.run_cell("x = 1")
hub.flush()
before = xla_bridge.backends_are_initialized()
sh.run_cell("import jax, jax.numpy as jnp\\ny = jnp.ones(3)")
hub.flush()
print(json.dumps({"before": before, "sent": comm.sent,
                  "devices": [d.id for d in __import__("jax").devices()]}))
"""


@pytest.mark.slow  # a second JAX process
@pytest.mark.jax_process
def test_loading_and_a_panel_leave_jax_uninitialised_until_the_user_uses_it():
    """``jax.distributed.initialize()``, ``jax_platforms`` or ``jax_num_cpu_devices`` must
    come before JAX's backends start: neither ``%load_ext workbench`` nor a panel's hello
    nor a cell's memory sample may start them; the devices follow once the user did."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _LAZY], capture_output=True, text=True, timeout=240, check=True
    ).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got["before"] is False
    snap = got["sent"][0]
    assert snap["type"] == "snapshot" and snap["kernel"]["devices"] == []
    kernels = [u["kernel"] for u in got["sent"] if u["type"] == "update" and "kernel" in u]
    assert [[d["id"] for d in k["devices"]] for k in kernels] == [got["devices"]]

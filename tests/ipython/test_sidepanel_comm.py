"""The side panel's comm protocol, driven like a front end would: a real ipykernel (8 fake
CPU devices) through jupyter_client, comms opened from the client with ``hello``.

Every message the kernel sends on a ``jax-workbench`` comm is validated against
``workbench/schemas/comm/sidepanel.schema.json`` as it arrives (tests/sidepanel_kernel.py).
Expected values are computed in the kernel from JAX (``workbench.cache()``'s records,
``jax.devices()``, array sizes), never written down here.
"""

from __future__ import annotations

import json

import pytest

from tests.sidepanel_kernel import PanelKernel
from workbench.ipython.sidepanel import flush_times

# one kernel for the module (a kernel's start is seconds): under pytest-xdist its tests stay
# on one worker (``--dist loadfile``); each test readies the kernel itself (``_loaded``), so
# each one also runs alone
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("sidepanel-kernel")]


@pytest.fixture(scope="module")
def kernel():
    k = PanelKernel()
    yield k
    k.shutdown()


def _value(k: PanelKernel, expr: str) -> object:
    """A JSON value computed in the kernel (printed, read back)."""
    out = k.run_ok(f"import json as _json\nprint(_json.dumps({expr}))")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _updates(k: PanelKernel, comm_id: str, since: int = 0) -> list[dict]:
    return k.messages(comm_id, "update", since)


def _all(updates: list[dict], field: str) -> list[dict]:
    return [x for u in updates for x in u.get(field, [])]


def _loaded(k: PanelKernel, devices: bool = False) -> None:
    """The workbench loaded in ``k`` (idempotent), whatever ran before; with ``devices`` also
    JAX's devices up: memory is read only once they exist (reading starts no backend), so a
    cell's "start" sample and an answer to ``sample`` need them."""
    k.run_ok("%load_ext workbench")
    if devices:
        k.run_ok("import jax\njax.devices()")


def test_no_workbench_closes_the_comm_then_load_announces(kernel):
    k = kernel
    comm_id = k.open_comm({"protocol": 1, "type": "hello"})
    e = k.wait_for(lambda e: e.comm_id == comm_id, timeout=30)
    assert e.kind == "close"  # ipykernel: no such target
    k.run_ok("%load_ext workbench", cell_id="load")
    announce = [e for e in k.events if e.kind == "open"]
    assert len(announce) == 1 and announce[0].data["type"] == "announce"
    assert announce[0].data["version"] == _value(k, "__import__('workbench').__version__")
    # the front end answers hello on the announce comm: the snapshot comes back on it
    k.send(announce[0].comm_id, {"protocol": 1, "type": "hello"})
    snap = k.wait_for(
        lambda e: e.comm_id == announce[0].comm_id and e.data.get("type") == "snapshot"
    ).data
    # JAX has not started its backends yet: neither the load nor the hello starts them
    # (jax.distributed.initialize() may still come), so no devices and no memory sample
    assert snap["kernel"]["devices"] == [] and snap["kernel"]["backend"] == ""
    assert snap["memory"] == []
    assert (
        _value(k, "__import__('jax._src.xla_bridge', fromlist=['x']).backends_are_initialized()")
        is False
    )
    # the first cell that uses JAX brings the devices in an update, and memory samples
    seen = len(k.events)
    k.run_ok("import jax.numpy as jnp\n_ = jnp.zeros(1)", cell_id="first-jax")
    kernel = k.wait_for(
        lambda e: (
            e.comm_id == announce[0].comm_id
            and e.data.get("type") == "update"
            and "kernel" in e.data
        )
    ).data["kernel"]
    assert kernel["devices"] == _value(
        k,
        "[dict(id=d.id, platform=d.platform, kind=d.device_kind, "
        "process_index=d.process_index, memory_stats=d.memory_stats() is not None) "
        "for d in __import__('jax').devices()]",
    )
    assert kernel["backend"] == _value(k, "__import__('jax').default_backend()")
    assert len(kernel["devices"]) == 8
    k.pump(0.6)
    whens = [
        (m["when"], m["cell_id"]) for m in _all(_updates(k, announce[0].comm_id, seen), "memory")
    ]
    assert ("end", "first-jax") in whens


def test_hello_snapshot_then_updates_with_records_badges_and_memory(kernel):
    k = kernel
    k.run_ok("%load_ext workbench", cell_id="load2")  # idempotent: loaded once
    # JAX up before cell-a (whatever ran before in this module's kernel): a cell is sampled
    # at its start only once JAX has started its backends
    k.run_ok("import jax\njax.devices()", cell_id="jax-up")
    comm_id, snap = k.hello()
    seen = len(k.events)
    assert snap["kernel"]["jax_version"] == _value(k, "__import__('jax').__version__")
    k.run_ok(
        "import jax, jax.numpy as jnp\n"
        "@jax.jit\ndef scale(x):\n    return x * 2 + 1\n"
        "y = scale(jnp.ones(3))",
        cell_id="cell-a",
    )
    k.run_ok("y = scale(jnp.ones(5))", cell_id="cell-b")
    k.pump(0.6)  # a flush may wait for its interval
    ups = _updates(k, comm_id, seen)
    recs = _all(ups, "records")
    # the records the panel got are exactly the ledger's for these cells, in seq order
    expected = _value(
        k,
        "[r.to_dict() for r in __import__('workbench').cache().records "
        "if r.cell_id in ('cell-a', 'cell-b')]",
    )
    assert [r["seq"] for r in recs] == [r["seq"] for r in expected]
    assert [r["function"] for r in recs] == [r["function"] for r in expected]
    recompile = [r for r in recs if "scale" in r["function"] and r["cell_id"] == "cell-b"]
    assert recompile and recompile[0]["reasons"][0]["kind"] == "shape"
    badges = {b["cell_id"]: b for b in _all(ups, "cells")}
    assert set(badges) >= {"cell-a", "cell-b"}
    for cid in ("cell-a", "cell-b"):
        # the badge counts the user's records; JAX's helpers apart, for the tooltip
        mine = [r for r in expected if r["cell_id"] == cid and r["origin"] == "user"]
        helpers = [r for r in expected if r["cell_id"] == cid and r["origin"] == "jax"]
        assert badges[cid]["compiles"] == sum(r["kind"] == "compile" for r in mine)
        assert badges[cid]["traces"] == sum(r["trace_s"] is not None for r in mine)
        assert badges[cid]["compile_s"] == pytest.approx(sum(r["total_s"] for r in mine))
        assert badges[cid]["helper_compiles"] == sum(r["kind"] == "compile" for r in helpers)
        assert badges[cid]["helper_s"] == pytest.approx(sum(r["total_s"] for r in helpers))
    assert badges["cell-a"]["misses"] == 0
    assert badges["cell-b"]["misses"] == 1
    assert badges["cell-b"]["first_reason"] == recompile[0]["reasons"][0]["text"]
    memory = _all(ups, "memory")
    assert [(m["when"], m["cell_id"]) for m in memory if m["cell_id"] == "cell-a"] == [
        ("start", "cell-a"),
        ("end", "cell-a"),
    ]
    # a re-hello gets it all in its snapshot, and no update repeats a snapshot record
    comm2, snap2 = k.hello()
    assert {r["seq"] for r in recs} <= {r["seq"] for r in snap2["records"]}
    assert {b["cell_id"] for b in snap2["cells"]} >= {"cell-a", "cell-b"}
    seen2 = len(k.events)
    k.run_ok("z = scale(jnp.ones(7))", cell_id="cell-c")
    k.pump(0.6)
    for cid in (comm_id, comm2):  # two front ends both hear of it
        got = _all(_updates(k, cid, seen2), "records")
        assert any(r["cell_id"] == "cell-c" for r in got)
        assert not {r["seq"] for r in got} & {r["seq"] for r in snap2["records"]}
        assert any(b["cell_id"] == "cell-c" for b in _all(_updates(k, cid, seen2), "cells"))


_HUB_COMMS = (
    "__import__('workbench.ipython.sidepanel', fromlist=['hub_for']).hub_for(get_ipython()).comms"
)


def test_leave_makes_the_kernel_close_the_comm_and_send_nothing_more_on_it(kernel):
    """A front end done with a comm sends ``leave`` instead of closing it: the kernel drops
    the comm and closes it itself, after which nothing more arrives on it, while a comm that
    stays keeps getting updates."""
    k = kernel
    k.run_ok("%load_ext workbench", cell_id="load-leave")
    staying, _ = k.hello()
    leaving, _ = k.hello()
    before = _value(k, _HUB_COMMS)
    # news is pending when the leave arrives: a cell that compiles, with no flush yet
    k.run_ok(
        "import jax, jax.numpy as jnp\n@jax.jit\ndef on_leave(x):\n    return x - 3\n"
        "on_leave(jnp.ones(4))",
        cell_id="cell-leave-1",
    )
    k.send(leaving, {"protocol": 1, "type": "leave"})
    closed = k.wait_for(lambda e: e.comm_id == leaving and e.kind == "close", timeout=30)
    assert _value(k, _HUB_COMMS) == before - 1
    after_close = k.events.index(closed)
    k.run_ok("on_leave(jnp.ones(6))", cell_id="cell-leave-2")
    k.pump(0.6)
    # the comm that left hears nothing after the kernel's close
    assert k.messages(leaving, since=after_close + 1) == []
    assert [e.kind for e in k.events if e.comm_id == leaving].count("close") == 1
    # the other comm still gets the records of both cells, exactly the ledger's
    expected = _value(
        k,
        "[r.seq for r in __import__('workbench').cache().records "
        "if r.cell_id in ('cell-leave-1', 'cell-leave-2')]",
    )
    got = [
        r["seq"]
        for r in _all(_updates(k, staying), "records")
        if r["cell_id"] in ("cell-leave-1", "cell-leave-2")
    ]
    assert expected and got == expected
    assert not k.closed(staying)


def test_bad_messages_get_error_and_the_comm_stays_open(kernel):
    k = kernel
    _loaded(k, devices=True)
    comm_id = k.open_comm({})  # a front end may open first and say hello after
    seen = len(k.events)
    k.send(comm_id, {"protocol": 1, "type": "sample"})  # before hello
    for bad in (
        {"protocol": 1, "type": "dance"},
        {"protocol": 2, "type": "hello"},
        ["not", "an", "object"],
        {"protocol": 1},
        {"protocol": 1, "type": 7},
        "hello",
    ):
        k.send(comm_id, bad)
    # one error per message: 1 sample before hello + 6 malformed
    k.wait_for(lambda e: len(k.messages(comm_id, "error", seen)) >= 7, timeout=30)
    errors = k.messages(comm_id, "error", seen)
    assert len(errors) == 7
    assert all(e["message"] for e in errors)
    assert any("dance" in e["message"] for e in errors)
    assert any("protocol 2" in e["message"] for e in errors)
    assert not k.closed(comm_id)
    # still usable: hello, then a sample on request comes back as an update
    k.send(comm_id, {"protocol": 1, "type": "hello", "unexpected": {"field": True}})
    k.wait_for(lambda e: e.comm_id == comm_id and e.data.get("type") == "snapshot")
    k.send(comm_id, {"protocol": 1, "type": "sample"})
    got = k.wait_for(
        lambda e: (
            e.comm_id == comm_id and any(m["when"] == "request" for m in e.data.get("memory", []))
        )
    )
    assert got.data["type"] == "update"


def test_memory_grows_with_a_64_mb_array_and_falls_after_del(kernel):
    k = kernel
    _loaded(k, devices=True)
    comm_id, _ = k.hello()
    seen = len(k.events)
    k.run_ok(
        "import jax.numpy as jnp\n"
        "big = jnp.ones((16, 1024, 1024), jnp.float32).block_until_ready()",
        cell_id="alloc",
    )
    nbytes = _value(k, "big.nbytes")
    assert nbytes == 64 * 2**20
    k.run_ok("del big", cell_id="free")
    k.pump(0.6)
    memory = _all(_updates(k, comm_id, seen), "memory")
    by = {(m["cell_id"], m["when"]): m for m in memory}
    start, grown, freed = by[("alloc", "start")], by[("alloc", "end")], by[("free", "end")]
    assert grown["live_bytes"] - start["live_bytes"] >= nbytes
    assert grown["live_bytes"] - freed["live_bytes"] >= nbytes
    # the array is on the default device: its bytes are counted there
    device0 = _value(k, "jax.devices()[0].id")
    d_grown = {d["id"]: d["live_bytes"] for d in grown["devices"]}
    d_start = {d["id"]: d["live_bytes"] for d in start["devices"]}
    assert d_grown[device0] - d_start[device0] >= nbytes
    assert len(grown["devices"]) == 8
    assert all(d["bytes_in_use"] is None for d in grown["devices"])  # CPU: not reported


def test_benchmarks_and_live_diffs_reach_the_panel(kernel):
    k = kernel
    _loaded(k)
    comm_id, _ = k.hello()
    seen = len(k.events)
    k.run_ok(
        "import jax, jax.numpy as jnp\n@jax.jit\ndef tiny(x):\n    return x + 1\ntiny(jnp.ones(8))"
    )
    # each door reports its result to the shell's session once: the magic (with -q or
    # not) and the workbench.bench twin; the panel hears of each benchmark once
    k.run_ok("rb = %jaxbench -q --budget 0.3 tiny(jnp.ones(8))", cell_id="bench")
    k.run_ok("r = __import__('workbench').bench(tiny, jnp.ones(8), budget=0.3)", cell_id="bench2")
    k.run_ok("%jaxbench --budget 0.3 tiny(jnp.ones(8))", cell_id="bench3")
    first = "def g(x):\n    y = jnp.sin(x)\n    return y\ng(jnp.ones(3))"
    second = first.replace("return y", "return jnp.cos(y)").replace("ones(3)", "ones(4)")
    k.run_ok("%%jaxpr\n" + first, cell_id="live")
    k.run_ok("%%jaxpr\n" + second, cell_id="live")
    # the hub batches: wait for the update carrying the diff (sent after the benchmarks')
    k.wait_for(
        lambda e: (
            e.comm_id == comm_id and e.data.get("type") == "update" and bool(e.data.get("diffs"))
        ),
        timeout=60,
    )
    ups = _updates(k, comm_id, seen)
    benches = _all(ups, "benchmarks")
    assert [b["cell_id"] for b in benches] == ["bench", "bench2", "bench3"]  # each once
    assert benches[0]["label"] == "tiny(jnp.ones(8))"
    assert benches[0]["median_s"] == _value(k, "rb.record.median")
    assert benches[1]["median_s"] == _value(k, "r.record.median")
    assert all(b["runs"] > 0 and b["median_s"] > 0 for b in benches)
    diffs = _all(ups, "diffs")
    assert len(diffs) == 1 and diffs[0]["cell_id"] == "live" and diffs[0]["kind"] == "jaxpr"
    added = {(g["what"], g["line"]["line"] if g["line"] else None) for g in diffs[0]["added"]}
    cos_line = ("%%jaxpr\n" + second).splitlines().index("    return jnp.cos(y)") + 1
    assert ("cos", cos_line) in added  # the new op, at its line of the cell
    assert diffs[0]["removed"] == []
    totals = {t["name"]: t for t in diffs[0]["totals"]}
    assert totals["equations"]["after"] - totals["equations"]["before"] == 1


def test_clear_sends_cleared(kernel):
    k = kernel
    _loaded(k)
    comm_id, _ = k.hello()
    seen = len(k.events)
    k.run_ok("%jaxcache clear")
    k.wait_for(lambda e: e.comm_id == comm_id and e.data.get("type") == "cleared")
    _, snap = k.hello()
    assert snap["records"] == [] and snap["cells"] == [] and snap["dropped"] == 0
    assert len(k.messages(comm_id, "cleared", seen)) == 1


def test_a_thousand_compiles_make_a_handful_of_messages(kernel):
    k = kernel
    _loaded(k)
    comm_id, _ = k.hello()
    seen = len(k.events)
    out = k.run_ok(
        "import time, jax\n_t0 = time.perf_counter()\n"
        "for i in range(1000):\n    jax.jit(lambda x, i=i: x + i)(1.0)\n"
        "print(time.perf_counter() - _t0)",
        cell_id="loop",
    )
    loop_s = float(out.stdout.strip().splitlines()[-1])
    k.pump(0.6)
    ups = _updates(k, comm_id, seen)
    made = _value(k, "sum(r.cell_id == 'loop' for r in __import__('workbench').cache().records)")
    got = sum(1 for r in _all(ups, "records") if r["cell_id"] == "loop")
    assert made >= 1000
    assert got + sum(u.get("dropped", 0) for u in ups) >= made
    # the hub's schedule (0.25 s, doubling while news streams in) plus the cell's end,
    # never one per compile
    assert len(ups) <= len(flush_times(loop_s)) + 2, (len(ups), loop_s)
    assert len(ups) < made / 20
    times = [e.t for e in k.events[seen:] if e.kind == "msg" and e.comm_id == comm_id]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps, default=1.0) > 0.1  # spaced, not bursts (send times: build time varies)
    print(
        f"\n1,000-compile loop: {made} records in {loop_s:.2f} s -> {len(ups)} updates "
        f"({len(ups) / max(loop_s, 1e-9):.1f}/s)"
    )


def test_unload_says_bye_and_restart_forgets_until_load(kernel):
    k = kernel
    _loaded(k)
    comm_id, _ = k.hello()
    k.run_ok("%unload_ext workbench")
    k.wait_for(lambda e: e.comm_id == comm_id and e.data.get("type") == "bye")
    k.wait_for(lambda e: e.comm_id == comm_id and e.kind == "close")
    again = k.open_comm({"protocol": 1, "type": "hello"})
    assert k.wait_for(lambda e: e.comm_id == again).kind == "close"
    k.run_ok("%load_ext workbench")
    k.hello()
    k.restart()
    after = k.open_comm({"protocol": 1, "type": "hello"})
    assert k.wait_for(lambda e: e.comm_id == after, timeout=60).kind == "close"
    opened = sum(e.kind == "open" for e in k.events)
    k.run_ok("%load_ext workbench")
    k.wait_for(lambda e: e.kind == "open" and sum(x.kind == "open" for x in k.events) > opened)
    _, snap = k.hello()
    assert snap["records"] == [] and snap["memory"] == []  # a new process: JAX not started
    assert snap["kernel"]["devices"] == []

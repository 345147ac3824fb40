"""The side panel's comm protocol, driven like a front end would: a real ipykernel (8 fake
CPU devices) through jupyter_client, comms opened from the client with ``hello``.

Every message the kernel sends on a ``jax-workbench`` comm is validated against
``workbench/schemas/comm/panel.schema.json`` as it arrives (tests/panel_kernel.py).
Expected values are computed in the kernel from JAX (``workbench.cache()``'s records,
``jax.devices()``, array sizes), never written down here.
"""

from __future__ import annotations

import json

import pytest

from tests.panel_kernel import PanelKernel

pytestmark = pytest.mark.slow


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
    snap = k.wait_for(lambda e: e.comm_id == announce[0].comm_id
                      and e.data.get("type") == "snapshot").data
    assert snap["kernel"]["devices"] == _value(
        k, "[dict(id=d.id, platform=d.platform, kind=d.device_kind, "
           "process_index=d.process_index, memory_stats=d.memory_stats() is not None) "
           "for d in __import__('jax').devices()]")
    assert len(snap["kernel"]["devices"]) == 8
    assert [m["when"] for m in snap["memory"]] == ["load"]


def test_hello_snapshot_then_updates_with_records_badges_and_memory(kernel):
    k = kernel
    k.run_ok("%load_ext workbench", cell_id="load2")  # idempotent: loaded once
    comm_id, snap = k.hello()
    seen = len(k.events)
    assert snap["kernel"]["jax_version"] == _value(k, "__import__('jax').__version__")
    k.run_ok("import jax, jax.numpy as jnp\n"
             "@jax.jit\ndef scale(x):\n    return x * 2 + 1\n"
             "y = scale(jnp.ones(3))", cell_id="cell-a")
    k.run_ok("y = scale(jnp.ones(5))", cell_id="cell-b")
    k.pump(0.6)  # a flush may wait for its interval
    ups = _updates(k, comm_id, seen)
    recs = _all(ups, "records")
    # the records the panel got are exactly the ledger's for these cells, in seq order
    expected = _value(k, "[r.to_dict() for r in __import__('workbench').cache().records "
                         "if r.cell_id in ('cell-a', 'cell-b')]")
    assert [r["seq"] for r in recs] == [r["seq"] for r in expected]
    assert [r["function"] for r in recs] == [r["function"] for r in expected]
    recompile = [r for r in recs if "scale" in r["function"] and r["cell_id"] == "cell-b"]
    assert recompile and recompile[0]["reasons"][0]["kind"] == "shape"
    badges = {b["cell_id"]: b for b in _all(ups, "cells")}
    assert set(badges) >= {"cell-a", "cell-b"}
    for cid in ("cell-a", "cell-b"):
        mine = [r for r in expected if r["cell_id"] == cid and r["origin"] != "workbench"]
        assert badges[cid]["compiles"] == sum(r["kind"] == "compile" for r in mine)
        assert badges[cid]["traces"] == sum(r["trace_s"] is not None for r in mine)
        assert badges[cid]["compile_s"] == pytest.approx(sum(r["total_s"] for r in mine))
    assert badges["cell-a"]["misses"] == 0
    assert badges["cell-b"]["misses"] == 1
    assert badges["cell-b"]["first_reason"] == recompile[0]["reasons"][0]["text"]
    memory = _all(ups, "memory")
    assert [(m["when"], m["cell_id"]) for m in memory if m["cell_id"] == "cell-a"] == [
        ("start", "cell-a"), ("end", "cell-a")]
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

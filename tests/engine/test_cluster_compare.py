"""The cluster's comparison of processes, on this one process: program fingerprints, the
agent's compile ledger, and divergence found in snapshots shaped like the engines' own.

The multi-process checks (real engines, jax.distributed) are in
tests/ipython/test_cluster_magics.py; these run in the quick loop.
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from workbench.engine.cluster import agent, launch
from workbench.engine.cluster.compare import STRAGGLER_RATIO, compare
from workbench.views.cluster import CLUSTER_VIEW, cluster_text


def _snap(index: int, compiles: list[dict], step: float | None = None) -> dict:
    return {
        "process_index": index,
        "process_count": 2,
        "host": "h",
        "pid": 100 + index,
        "devices": [f"cpu:{index}"],
        "rss_bytes": 1000,
        "live_array_bytes": 10,
        "compiles": compiles,
        "compiles_total": len(compiles),
        "step": None if step is None else {"source": "%jaxbench", "label": "s", "seconds": step},
        "profile_step": None,
    }


def _c(fn: str, sig: str, statics: str = "", shard: str = "{replicated}", fp: str = "aa") -> dict:
    return {
        "function": fn,
        "signature": sig,
        "statics": statics,
        "shardings": shard,
        "fingerprint": fp,
        "compile_s": 0.01,
        "seq": 1,
    }


def test_same_program_under_two_names_has_one_fingerprint():
    def double(x):
        return x * 2 + 1

    def twice(y):
        return y * 2 + 1

    x = jnp.arange(8.0)
    a = jax.jit(double).lower(x).compile().as_text()
    b = jax.jit(twice).lower(x).compile().as_text()
    other = jax.jit(lambda x: x * 3).lower(x).compile().as_text()
    assert a != b  # the module names differ
    assert agent.fingerprint(a) == agent.fingerprint(b)
    assert agent.fingerprint(a) != agent.fingerprint(other)


def test_agent_records_signature_statics_shardings_and_fingerprint():
    ag = agent.Agent()
    ag.install()
    try:

        def scale(x, k):
            return x * k

        f = jax.jit(scale, static_argnums=1)
        mesh = jax.make_mesh((len(jax.devices()),), ("d",))
        x = jax.device_put(jnp.ones((16, 4)), NamedSharding(mesh, P("d")))
        out = f(x, 3)
        np.testing.assert_allclose(np.asarray(out), np.full((16, 4), 3.0))
    finally:
        ag.uninstall()
    mine = [c for c in ag.compiles if "scale" in c.function]
    assert len(mine) == 1
    rec = mine[0]
    assert rec.signature == jax.typeof(x).str_short(short_dtypes=True)
    assert rec.statics == "k=3"
    expected_hlo = f.lower(x, 3).compile().as_text()
    assert rec.fingerprint == agent.fingerprint(expected_hlo)
    assert rec.shardings and rec.shardings != "{replicated}"  # split over the devices


def test_consistent_processes_show_no_divergence():
    snaps = [_snap(p, [_c("jit(f)", "f32[8]")]) for p in (0, 1)]
    rep = compare(snaps)
    assert rep.divergences == []
    assert [r.function for r in rep.rows] == ["jit(f)"]
    assert "no divergence" in cluster_text(rep)


#: function -> (what most processes compiled, what the odd one out compiled instead), each
#: as ``_c``'s signature, statics, shardings, fingerprint; None: never compiled
PAIRS: dict[str, tuple[tuple[str, ...] | None, tuple[str, ...] | None]] = {
    "jit(shape)": (("f32[8]",), ("f32[16]",)),
    "jit(static)": (("f32[8]", "n=2"), ("f32[8]", "n=3")),
    "jit(shard)": (("f32[8]", "", "{devices=[2]<=[2]}"), ("f32[8]", "", "{replicated}")),
    "jit(prog)": (("f32[8]", "", "{replicated}", "p0"), ("f32[8]", "", "{replicated}", "p1")),
    "jit(only_most)": (("f32[8]",), None),
    "jit(only_odd)": (None, ("f32[4]",)),
}


def _ledger(odd: bool) -> list[dict]:
    return [_c(f, *pair[odd]) for f, pair in PAIRS.items() if pair[odd] is not None]


@pytest.mark.parametrize("odd", [0, 2])
def test_each_kind_of_divergence_names_the_odd_process_against_the_majority(odd):
    snaps = [_snap(p, _ledger(p == odd)) for p in range(3)]
    rep = compare(snaps)
    a, b = (p for p in range(3) if p != odd)
    most = f"processes {a} and {b}"
    by = {d.function: d for d in rep.divergences}
    assert all(d.processes == [odd] for d in rep.divergences)  # never the majority
    said = {
        "jit(shape)": ("shape", f"process {odd} compiled f32[16] that {most} never compiled"),
        "jit(static)": (
            "static",
            f"process {odd} compiled f32[8] with static n=3 where {most} used n=2",
        ),
        "jit(shard)": (
            "sharding",
            f"process {odd} compiled f32[8] with shardings {{replicated}} where {most} compiled "
            "f32[8] with {devices=[2]<=[2]}",
        ),
        "jit(prog)": (
            "program",
            f"process {odd} compiled a different program for f32[8] than {most} "
            "(fingerprint p1 vs p0)",
        ),
        "jit(only_most)": (
            "missing",
            f"process {odd} never compiled jit(only_most), which {most} compiled",
        ),
        "jit(only_odd)": ("missing", f"process {odd} compiled f32[4] that {most} never compiled"),
    }
    for function, (kind, words) in said.items():
        assert by[function].kind == kind and words in by[function].text, by[function]
        assert by[function].text.endswith(f"collectives in {function} would wait forever")
    assert len(rep.divergences) == 6  # each difference once, not from both sides
    assert all(r.diverged for r in rep.rows)
    text = cluster_text(rep)
    assert "divergence (6):" in text
    for d in rep.divergences:
        assert d.text in text


def test_processes_sharing_an_odd_set_are_named_together_and_each_odd_set_apart():
    sets = [["f32[8]"]] * 3 + [["f32[16]"]] * 2 + [["f32[8]", "f32[4]"]]
    rep = compare([_snap(p, [_c("jit(f)", sig) for sig in sigs]) for p, sigs in enumerate(sets)])
    by = {tuple(d.processes): d for d in rep.divergences}
    assert sorted(by) == [(3, 4), (5,)]
    assert by[3, 4].kind == "shape"
    assert "processes 3 and 4 compiled f32[16] that processes 0, 1 and 2 never compiled" in (
        by[3, 4].text
    )
    assert "process 5 compiled f32[4] that processes 0, 1 and 2 never compiled" in by[5,].text


def test_an_even_split_names_no_process_as_the_odd_one():
    rep = compare([_snap(0, [_c("jit(f)", "f32[8]")]), _snap(1, [_c("jit(f)", "f32[16]")])])
    (d,) = rep.divergences
    assert d.kind == "shape" and d.processes == [0, 1]
    assert "split evenly, so none is the odd one out" in d.text
    assert "process 0 compiled f32[8]; process 1 compiled f32[16]" in d.text
    four = [("{devices=[2]<=[2]}" if p < 2 else "{replicated}") for p in range(4)]
    rep = compare([_snap(p, [_c("jit(g)", "f32[8]", shard=s)]) for p, s in enumerate(four)])
    (d,) = rep.divergences
    assert d.kind == "sharding" and d.processes == [0, 1, 2, 3]
    assert "processes 0 and 1 compiled f32[8] with shardings {devices=[2]<=[2]}" in d.text
    assert "processes 2 and 3 compiled f32[8] with shardings {replicated}" in d.text
    rep = compare([_snap(0, [_c("jit(h)", "f32[8]")]), _snap(1, [])])
    (d,) = rep.divergences
    assert d.kind == "missing" and d.processes == [0, 1]
    assert "process 0 compiled f32[8]; process 1 never compiled jit(h)" in d.text


def test_a_tie_of_the_largest_groups_names_no_process_and_does_not_say_even():
    sets = ["f32[8]", "f32[8]", "f32[16]", "f32[16]", "f32[4]"]
    rep = compare([_snap(p, [_c("jit(f)", sig)]) for p, sig in enumerate(sets)])
    (d,) = rep.divergences
    assert d.kind == "shape" and d.processes == [0, 1, 2, 3, 4]
    assert "the largest groups are the same size, so none is the odd one out: " in d.text
    assert "evenly" not in d.text
    assert (
        "processes 0 and 1 compiled f32[8]; processes 2 and 3 compiled f32[16]; "
        "process 4 compiled f32[4]"
    ) in d.text


def test_slowest_step_is_flagged_and_named_straggler():
    fast, slow = 0.002, 0.002 * STRAGGLER_RATIO * 5
    rep = compare([_snap(0, [], fast), _snap(1, [], slow)])
    slowest = [s for s in rep.steps if s.slowest]
    assert [s.process for s in slowest] == [1]
    assert rep.straggler is not None and rep.straggler.startswith("process 1 is the straggler")
    even = compare([_snap(0, [], fast), _snap(1, [], fast)])
    assert even.straggler is None


def test_a_process_that_did_not_answer_is_named_and_the_others_shown():
    snaps = [_snap(0, [_c("jit(f)", "f32[8]")]), None]
    rep = compare(snaps, [0, 1], [None, "process on engine 1 is gone"])
    assert [p.index for p in rep.processes] == [0, 1]
    assert rep.processes[1].error == "process on engine 1 is gone"
    assert rep.divergences[0].kind == "gone"
    assert [r.function for r in rep.rows] == ["jit(f)"] and not rep.rows[0].diverged
    bundle = CLUSTER_VIEW.bundle(rep)  # validated against cluster.schema.json (conftest)
    assert "process on engine 1 is gone" in bundle["text/plain"]
    assert "process on engine 1 is gone" in bundle["text/html"]


def test_a_long_ledger_stays_within_the_text_bound():
    from workbench.views._bounds import TEXT_MAX_BYTES, TEXT_MAX_LINES

    many = [_c(f"jit(f{i})", "f32[8]", fp=f"{i:04d}") for i in range(3000)]
    rep = compare([_snap(0, many), _snap(1, many)])
    bundle = CLUSTER_VIEW.bundle(rep)
    text = bundle["text/plain"]
    assert len(text.splitlines()) <= TEXT_MAX_LINES + 2
    assert len(text.encode()) <= TEXT_MAX_BYTES + 500
    payload = bundle[CLUSTER_VIEW.mime]
    assert payload["rows_total"] == 3000 and len(payload["rows"]) < 3000


def test_mesh_axes_in_the_signature_are_a_sharding_difference():
    snaps = [
        _snap(0, [_c("jit(h)", "f32[16@d]", shard="{devices=[4]<=[4]}")]),
        _snap(1, [_c("jit(h)", "f32[16]", shard="{replicated}")]),
    ]
    (d,) = compare(snaps).divergences
    assert d.kind == "sharding" and d.processes == [0, 1]  # an even split: neither named
    assert "{replicated}" in d.text and "{devices=[4]<=[4]}" in d.text


def test_without_ipyparallel_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipyparallel", None)  # import fails as if absent
    with pytest.raises(ImportError, match=r"jax-workbench\[cluster\]"):
        launch.start(2)


def test_two_lambdas_are_two_rows_named_by_their_line():
    ag = agent.Agent()
    ag.install()
    try:
        double = jax.jit(lambda v: v * 2)
        shift = jax.jit(lambda v: v + 1)
        double(jnp.ones(8))
        shift(jnp.ones(16))
    finally:
        ag.uninstall()
    lines = {
        double.__wrapped__.__code__.co_firstlineno,
        shift.__wrapped__.__code__.co_firstlineno,
    }
    names = sorted(c.function for c in ag.compiles if c.function.startswith("jit(<lambda>)"))
    assert names == sorted(f"jit(<lambda>) at line {n}" for n in lines)
    snap = agent.snapshot(agent=ag)
    assert compare([snap, dict(snap, process_index=1)]).divergences == []


def test_engines_that_all_say_process_zero_get_a_column_each():
    # engines attached before jax.distributed.initialize: each is "process 0 of 1"
    alone = [dict(_snap(0, [_c("jit(f)", sig)]), process_count=1) for sig in ("f32[8]", "f32[16]")]
    rep = compare(alone, [3, 4])
    assert [(p.index, p.engine, p.pid) for p in rep.processes] == [(0, 3, 100), (1, 4, 100)]
    (row,) = rep.rows
    assert sorted(row.cells) == [0, 1]
    (d,) = rep.divergences
    assert d.kind == "shape" and d.processes == [0, 1]
    assert "process 0 compiled f32[8]; process 1 compiled f32[16]" in d.text


def _auto_mesh_arrays() -> tuple:
    """One array split over every device and the same values replicated, on a mesh whose
    axes are not in the arrays' types: the two have one abstract type, so a jitted
    function traced for one is not traced again for the other, only compiled."""
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("d",))
    data = jnp.arange(16.0)
    split = jax.device_put(data, NamedSharding(mesh, P("d")))
    whole = jax.device_put(data, NamedSharding(mesh, P()))
    assert jax.typeof(split) == jax.typeof(whole)
    return split, whole


def test_a_compile_for_new_shardings_of_a_cached_trace_lands_in_the_function_row():
    split, whole = _auto_mesh_arrays()

    def scale(v, k):
        return v * k

    f = jax.jit(scale, static_argnums=1)
    ag = agent.Agent()
    ag.install()
    try:
        f(split, 3)
        np.testing.assert_allclose(np.asarray(f(whole, 3)), np.arange(16.0) * 3)
    finally:
        ag.uninstall()
    mine = [c for c in ag.compiles if "scale" in c.function]
    assert len(mine) == 2
    line = scale.__code__.co_firstlineno
    assert {c.function for c in mine} == {f"jit(scale) at line {line}"}  # one row
    glob = jax.typeof(split).str_short(short_dtypes=True)  # the global type, not a shard's
    assert [c.signature for c in mine] == [glob, glob]
    assert [c.statics for c in mine] == ["k=3", "k=3"]
    assert mine[0].shardings != mine[1].shardings
    snap = agent.snapshot(agent=ag)
    first_only = dict(snap, compiles=snap["compiles"][:1], process_index=1)
    others = [dict(snap, process_index=p) for p in (0, 2)]
    (d,) = compare([others[0], first_only, others[1]]).divergences
    assert d.kind == "sharding" and d.processes == [1]
    assert mine[0].shardings in d.text and mine[1].shardings in d.text


def test_a_compile_of_a_trace_made_before_the_agent_keeps_global_types():
    split, whole = _auto_mesh_arrays()

    def shift(v):
        return v + 1.0

    f = jax.jit(shift)
    f(whole)  # traced before the agent listens: only the lowering will say what it is of
    ag = agent.Agent()
    ag.install()
    try:
        f(split)
    finally:
        ag.uninstall()
    (rec,) = [c for c in ag.compiles if "shift" in c.function]
    assert rec.function == f"jit(shift) at line {shift.__code__.co_firstlineno}"
    assert rec.signature == jax.typeof(split).str_short(short_dtypes=True)
    assert rec.fingerprint == agent.fingerprint(f.lower(split).compile().as_text())

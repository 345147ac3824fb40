"""Sharding layouts: geometry vs JAX's devices_indices_map, live arrays, collectives, views and
the Python twin (``%sharding`` itself: tests/ipython/test_sharding_magic.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import workbench
from workbench.engine import _jax_compat as compat
from workbench.engine.common.devices import FakeDevicesError
from workbench.engine.sharding.collectives import (
    axes_of_groups,
    axes_of_pairs,
    expand_mesh_groups,
)
from workbench.engine.sharding.layout import (
    MeshInfo,
    ShardingInputError,
    layout_of,
    layout_of_sharding,
    layouts_of_tree,
    plan_layout,
)
from workbench.engine.sharding.mesh_explorer import ExplorerConfig, explore
from workbench.engine.sharding.spec import parse_spec
from workbench.views._standalone import static_part
from workbench.views.sharding import MIME, layout_html_body, layout_text, layouts_bundle

DEVICES = jax.devices()


def _mesh(shape, names, order=None, types=AxisType.Auto):
    devs = np.array(DEVICES[: int(np.prod(shape))], dtype=object)
    if order is not None:
        devs = devs[list(order)]
    return Mesh(devs.reshape(shape), names, axis_types=(types,) * len(shape))


def _geometry(lay):
    return sorted((tuple(s.start), tuple(s.stop), tuple(sorted(s.devices))) for s in lay.shards)


# -- geometry: our own computation agrees with JAX on every mesh/spec/rank --------------------
@st.composite
def mesh_spec_shape(draw):
    n = draw(st.sampled_from([1, 2, 4, 8]))
    sizes = []
    left = n
    while left > 1:
        f = draw(st.sampled_from([f for f in (2, 4, 8) if left % f == 0]))
        sizes.append(f)
        left //= f
    if draw(st.booleans()):
        sizes.insert(draw(st.integers(0, len(sizes))), 1)  # a size-1 axis
    sizes = sizes or [1]
    names = [f"a{i}" for i in range(len(sizes))]
    order = draw(st.permutations(range(n)))
    rank = draw(st.integers(0, 4))
    dims: list[list[str]] = [[] for _ in range(rank)]
    if rank:
        for name in names:
            d = draw(st.integers(-1, rank - 1))
            if d >= 0:
                dims[d].append(name)
    split = dict(zip(names, sizes, strict=False))
    shape = [int(np.prod([split[a] for a in e])) * draw(st.integers(1, 3)) for e in dims]
    return sizes, names, order, dims, shape


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mesh_spec_shape())
def test_plan_matches_devices_indices_map(case):
    sizes, names, order, dims, shape = case
    mesh = _mesh(sizes, names, order)
    spec = P(*[tuple(e) if len(e) > 1 else (e[0] if e else None) for e in dims])
    truth = layout_of_sharding(NamedSharding(mesh, spec), shape, jnp.float32)
    info = MeshInfo(names, sizes, ["Auto"] * len(sizes), [d.id for d in mesh.devices.flat])
    ours = plan_layout(info, spec, shape, jnp.float32)
    assert _geometry(ours) == _geometry(truth)
    assert not ours.uneven
    assert ours.replication * len(ours.shards) == len(mesh.devices.flat)
    assert ours.spec == truth.spec


def test_uneven_shards_are_padded():
    info = MeshInfo(["x", "y"], [2, 4], ["Auto", "Auto"], list(range(8)))
    lay = plan_layout(info, P("x", "y"), [15, 6])
    assert lay.uneven
    rows = sorted({(s.start[0], s.stop[0], s.padded_stop[0]) for s in lay.shards})
    assert rows == [(0, 8, 8), (8, 15, 16)]
    cols = sorted({(s.start[1], s.stop[1], s.padded_stop[1]) for s in lay.shards})
    assert cols == [(0, 2, 2), (2, 4, 4), (4, 6, 6), (6, 6, 8)]  # the last block is all padding
    html = layout_html_body(lay)  # the picture the mesh explorer app draws
    assert "url(#jwb-pad" in html and "stroke-dasharray" in html
    # padding drawn only beyond the data: 3 bottom strips, the all-padding column's 2 blocks
    assert html.count('data-jwb="padding"') == 5
    assert re.search(r">3</text>", html) and re.search(r">7</text>", html)  # labelled anyway


def test_two_axes_on_one_dimension_major_first():
    mesh = _mesh((2, 4), ("x", "y"))
    for spec in (P(("x", "y"), None), P(("y", "x"), None)):
        lay = layout_of_sharding(NamedSharding(mesh, spec), (16, 4), jnp.float32)
        assert len(lay.shards) == 8 and all(s.shape == [2, 4] for s in lay.shards)
        info = MeshInfo(["x", "y"], [2, 4], ["Auto"] * 2, list(range(8)))
        assert _geometry(plan_layout(info, spec, [16, 4])) == _geometry(lay)
    first = layout_of_sharding(NamedSharding(mesh, P(("y", "x"))), (16,), jnp.float32)
    assert first.shards[1].devices == [4]  # y-major: block 1 is x=1, y=0 -> device 4
    assert "P(('y', 'x'))" in layout_text(first)


# -- live arrays ---------------------------------------------------------------------------
def test_live_array_replicated_axes_and_bytes():
    mesh = _mesh((2, 4), ("data", "model"))
    x = jax.device_put(jnp.zeros((8, 16), jnp.float32), NamedSharding(mesh, P(None, "model")))
    lay = layout_of(x)
    assert lay.kind == "named" and lay.replication == 2 and lay.replicated_axes == ["data"]
    assert len(lay.shards) == 4 and lay.shards[0].devices == [0, 4]
    d = lay.to_dict()
    assert d["shards"][0]["bytes"] == 8 * 4 * 4 and d["mesh"]["axis_types"] == ["Auto", "Auto"]
    text = layout_text(lay)
    assert "4 shards of float32[8, 4], each held by 2 devices (replicated over 'data')" in text


def test_fully_replicated_and_single_device():
    mesh = _mesh((8,), ("x",))
    rep = layout_of(jax.device_put(jnp.ones(5), NamedSharding(mesh, P())))
    assert rep.fully_replicated and rep.shards[0].devices == list(range(8))
    single = layout_of(jnp.arange(3.0))
    assert single.kind == "single" and len(single.devices) == 1 and single.mesh is None
    assert "1 shard on 1 device" in layout_text(single)


def test_gspmd_sharding_uses_jax_placement():
    gspmd_cls = compat.GSPMDSharding
    if gspmd_cls is None:
        pytest.skip("this JAX has no GSPMDSharding")
    mesh = _mesh((2, 4), ("x", "y"), order=[7, 6, 5, 4, 3, 2, 1, 0])
    named = NamedSharding(mesh, P("y", "x"))
    hlo_sharding = named._to_xla_hlo_sharding(2)
    g = gspmd_cls(tuple(mesh.devices.flat), hlo_sharding)
    lay = layout_of_sharding(g, (8, 4), jnp.float32)
    assert lay.kind == "gspmd" and lay.mesh is None
    assert _geometry(lay) == _geometry(layout_of_sharding(named, (8, 4), jnp.float32))


def test_permuted_mesh_positional_style():
    order = [3, 1, 0, 2, 7, 5, 4, 6]
    mesh = _mesh((4, 2), ("r", "c"), order=order)
    lay = layout_of(jax.device_put(jnp.zeros((4, 2)), NamedSharding(mesh, P("r", "c"))))
    assert [s.devices[0] for s in lay.shards] == order  # row-major blocks follow the mesh


def test_shard_map_outputs_and_high_rank_facets():
    mesh = _mesh((2, 4), ("x", "y"))

    @jax.jit
    @partial(jax.shard_map, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", None, "y"))
    def f(a):
        return a[:, None, :] * 2

    out = f(jnp.ones((4, 8)))
    lay = layout_of(out)
    assert lay.spec == [["x"], [], ["y"]] and len(lay.shards) == 8
    html = layout_html_body(lay)
    assert html.count('data-jwb="facet"') == 2  # one facet per block of the leading dim
    rank4 = layout_of(
        jax.device_put(jnp.zeros((2, 2, 4, 4)), NamedSharding(mesh, P("x", None, "y")))
    )
    assert layout_html_body(rank4).count('data-jwb="facet"') == 2
    scalar = layout_of(jax.device_put(jnp.float32(3), NamedSharding(mesh, P())))
    assert scalar.shape == [] and scalar.fully_replicated
    assert "<svg" in layout_html_body(scalar)


def test_pytree_and_non_arrays():
    mesh = _mesh((8,), ("x",))
    tree = {"w": jax.device_put(jnp.zeros((8, 2)), NamedSharding(mesh, P("x"))), "n": 3}
    lays = layouts_of_tree(tree)
    assert [x.path for x in lays] == ["['w']"]
    assert "not arrays, left out: ['n'] (int)" in lays[0].notes[0]
    with pytest.raises(ShardingInputError, match="not a jax.Array"):
        layouts_of_tree(np.zeros(3))
    with pytest.raises(ShardingInputError, match="empty pytree"):
        layouts_of_tree({})


def test_bundle_json_and_escaping():
    mesh = _mesh((2, 4), ("<b>x</b>", 'y"&'))
    x = jax.device_put(jnp.zeros((4, 8)), NamedSharding(mesh, P("<b>x</b>", 'y"&')))
    bundle = layouts_bundle(layouts_of_tree({"<script>": x}))
    html = static_part(bundle["text/html"])
    assert "<b>x</b>" not in html and "<script>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "y&quot;&amp;" in html
    data = bundle[MIME]
    assert data["version"] == 1 and data["kind"] == "sharding"
    assert data["layouts"][0]["mesh"]["axis_names"] == ["<b>x</b>", 'y"&']
    json.dumps(data)


# -- collectives ---------------------------------------------------------------------------
INFO = MeshInfo(["data", "model"], [2, 4], ["Auto"] * 2, list(range(8)))


def test_axes_of_groups():
    assert axes_of_groups([[0, 1, 2, 3], [4, 5, 6, 7]], INFO) == ["model"]
    assert axes_of_groups([[0, 4], [1, 5], [2, 6], [3, 7]], INFO) == ["data"]
    assert axes_of_groups([list(range(8))], INFO) == ["data", "model"]
    assert axes_of_groups([], INFO) == ["data", "model"]
    assert axes_of_groups([[0, 1], [2, 3], [4, 5], [6, 7]], INFO) is None  # half of 'model'
    assert axes_of_groups([[i] for i in range(8)], INFO) == []
    assert axes_of_pairs([[0, 4], [4, 0]], INFO) == ["data"]


def test_expand_mesh_form_groups():
    assert expand_mesh_groups("mesh['axis_0'=2,'axis_1'=4] {'axis_0'}") == [
        [0, 4],
        [1, 5],
        [2, 6],
        [3, 7],
    ]
    assert expand_mesh_groups(
        "mesh['axis_0'=1,'axis_1'=4,'axis_2'=2]", "([2,4]T(1,0)) {'axis_1'}"
    ) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert expand_mesh_groups("{{0,1},{2,3}}") is None


def test_matmul_contracting_sharded_axis_all_reduces_over_it():
    cfg = ExplorerConfig(
        operation="matmul", shape="64, 64", spec="None, model", rhs_spec="model, None"
    )
    res = explore(cfg)
    kinds = [(c.kind, c.axes) for c in res.collectives]
    assert kinds == [("all-reduce", ["model"])]
    assert res.collectives[0].description == "all-reduce over 'model'"
    assert res.collectives[0].groups == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert res.memory is not None and res.compile_s is not None and res.compile_s > 0
    # the same contraction over 'data' (mesh names swapped): the translation follows
    res2 = explore(
        ExplorerConfig(
            operation="matmul", shape="64, 64", spec="None, data", rhs_spec="data, None"
        ),
        res,
    )
    assert [(c.kind, c.axes) for c in res2.collectives] == [("all-reduce", ["data"])]
    assert res2.diff is not None and res2.diff.changed
    assert res2.diff.added and res2.diff.removed


def test_no_collectives_for_data_parallel_and_diff():
    base = explore(
        ExplorerConfig(
            operation="matmul", shape="64, 64", spec="data, None", rhs_spec="None, model"
        )
    )
    assert base.collectives == []
    assert base.outputs[0].spec == [["data"], ["model"]]
    more = explore(
        ExplorerConfig(
            operation="matmul",
            shape="64, 64",
            spec="data, None",
            rhs_spec="None, model",
            out_spec="data, None",
        ),
        base,
    )
    assert [c.kind for c in more.collectives] == ["all-gather"]
    assert more.collectives[0].axes == ["model"]
    assert more.diff.collective_bytes_after > more.diff.collective_bytes_before == 0


def test_permuted_devices_translate_by_mesh_position():
    devs = list(reversed(DEVICES))
    res = explore(
        ExplorerConfig(
            operation="matmul", shape="64, 64", spec="None, model", rhs_spec="model, None"
        ),
        devices=devs,
    )
    (c,) = res.collectives
    assert c.axes == ["model"] and c.groups == [[7, 6, 5, 4], [3, 2, 1, 0]]


def test_collective_permute_along_axis():
    mesh = _mesh((2, 4), ("x", "y"))
    perm = [(i, (i + 1) % 4) for i in range(4)]

    @partial(jax.shard_map, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    def roll(a):
        return jax.lax.ppermute(a, "y", perm)

    arg = jax.ShapeDtypeStruct((8, 8), jnp.float32, sharding=NamedSharding(mesh, P("x", "y")))
    from workbench.engine.hlo.parser import parse_hlo
    from workbench.engine.sharding.collectives import mesh_collectives
    from workbench.engine.sharding.layout import mesh_info

    text = jax.jit(roll).lower(arg).compile().as_text()
    cols = mesh_collectives(parse_hlo(text), mesh_info(mesh))
    assert [(c.kind, c.axes) for c in cols] == [("collective-permute", ["y"])]
    assert cols[0].description == "collective-permute along 'y'"


def test_reduction_and_einsum():
    res = explore(
        ExplorerConfig(operation="reduce", shape="16, 32", spec="data, model", reduce_axes="1")
    )
    assert [(c.kind, c.axes) for c in res.collectives] == [("all-reduce", ["model"])]
    ein = explore(
        ExplorerConfig(
            operation="einsum",
            equation="ij,kj->ik",
            shape="32, 32",
            spec="data, model",
            rhs_spec="None, model",
        )
    )
    assert ein.inputs[1].shape == [32, 32]
    assert any(c.axes == ["model"] for c in ein.collectives)


def test_explicit_axes_need_output_spec_and_take_it():
    explicit = dict(
        operation="matmul",
        shape="32, 32",
        axis_types="Explicit",
        spec="None, model",
        rhs_spec="model, None",
    )
    with pytest.raises(ShardingInputError, match="out_sharding"):
        explore(ExplorerConfig(**explicit))
    res = explore(ExplorerConfig(**explicit, out_spec="data"))
    assert res.outputs[0].spec[0] == ["data"] and res.mesh.axis_types == ["Explicit"] * 2


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "change, message",
    [
        ({"spec": "data, data"}, "'data' is used twice"),
        ({"spec": "nope"}, "unknown mesh axis 'nope'"),
        ({"mesh_shape": "3, 4"}, "needs 12 devices, but JAX has 8"),
        ({"mesh_shape": "4, 4"}, "xla_force_host_platform_device_count=16"),
        (
            {"mesh_shape": "2,1,1,1,1,1,1,1,1", "axis_names": "a,b,c,d,e,f,g,h,i", "spec": ""},
            "more axes than devices",
        ),
        ({"shape": "15, 8", "spec": "data"}, "15 is not a multiple of 2"),
        ({"spec": "(data"}, "unclosed"),
        ({"axis_names": "data"}, "1 axis name(s) for a mesh of 2 axes"),
        ({"dtype": "float7"}, "unknown dtype"),
        ({"shape": "2, q"}, "whole numbers"),
    ],
)
def test_bad_input_messages(change, message):
    cfg = ExplorerConfig(**{"operation": "matmul", "shape": "16, 16", **change})
    with pytest.raises(ShardingInputError) as info:
        explore(cfg)
    assert message in str(info.value)
    assert "\n" not in str(info.value) and len(str(info.value)) < 400


def test_uneven_layout_shows_padding_note():
    res = explore(ExplorerConfig(operation="layout", shape="15, 8", spec="data"))
    assert res.inputs[0].uneven and "pad it to 16" in res.inputs[0].notes[0]


def test_parse_spec_forms():
    assert parse_spec("('x', 'y'), None") == [["x", "y"], []]
    assert parse_spec("P(x, None, 'a b')") == [["x"], [], ["a b"]]
    assert parse_spec("") == []
    assert parse_spec("- data") == [[], ["data"]]


def test_fake_devices_after_start_says_how_to_restart(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))
    monkeypatch.setenv("JAX_NUM_CPU_DEVICES", "")
    have = len(jax.devices("cpu"))
    workbench.fake_devices(have)  # the count JAX runs with: nothing to change
    assert os.environ["JAX_NUM_CPU_DEVICES"] == str(have)
    for n in (have // 2, have * 8):
        with pytest.raises(FakeDevicesError) as info:
            workbench.fake_devices(n)
        msg = str(info.value)
        assert f"already running with {have} device(s)" in msg and "\n" not in msg
        assert f"--xla_force_host_platform_device_count={n}" in msg
        assert f"JAX_NUM_CPU_DEVICES={n}" in msg
    assert os.environ["JAX_NUM_CPU_DEVICES"] == str(have)  # a refused count is not set
    with pytest.raises(ValueError, match="at least 1"):
        workbench.fake_devices(0)


@pytest.mark.slow  # a fresh interpreter
def test_fake_devices_before_jax_starts_gives_that_many(tmp_path):
    code = (
        "import jax, workbench\n"
        "workbench.fake_devices(3)\n"
        "import os\n"
        "print(len(jax.devices()), os.environ['JAX_NUM_CPU_DEVICES'], os.environ['XLA_FLAGS'])"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
    env["JAX_PLATFORMS"] = "cpu"
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["3", "3", "--xla_force_host_platform_device_count=3"]


# -- workbench.sharding -------------------------------------------------------------------
def test_python_twin():
    disp = workbench.sharding(jnp.ones((2, 2)))
    bundle = disp._repr_mimebundle_()
    assert bundle[MIME]["layouts"][0]["kind"] == "single"
    assert re.search(r"float32\[2, 2\]", bundle["text/plain"])


# -- padding-only blocks, Manual axes, key dtypes, diffs, axis order, empty arrays ----------
def test_padding_only_blocks_keep_their_place_and_size():
    from workbench.views.sharding import layout_svg

    lay = plan_layout(MeshInfo(["x"], [8], ["Auto"], list(range(8))), ["x"], [3])
    tail = lay.shards[3:]
    assert [s.padded_shape for s in tail] == [[1]] * 5
    assert [s.origin for s in tail] == [[k] for k in range(3, 8)]
    assert all(s.only_padding and s.shape == [0] for s in tail)
    assert [s["bytes"] for s in lay.to_dict()["shards"]] == [4] * 8
    assert "only padding: holds [1]" in layout_text(lay)
    pads = re.findall(
        r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"[^>]*data-jwb="padding"', layout_svg(lay)
    )
    assert len(pads) == 5 and len({x for x, _ in pads}) == 5  # side by side, none on another
    assert len({w for _, w in pads}) == 1
    # rank 3: each padding-only block of the leading dimension is its own facet
    lay3 = plan_layout(MeshInfo(["x"], [8], ["Auto"], list(range(8))), [["x"], [], []], [3, 4, 4])
    svg = layout_svg(lay3)
    facets = re.findall(r'data-jwb="facet"><div>([^<]*)</div>', svg)
    assert len(facets) == 8 and facets[3] == "[padding 3:4, :, :]"
    assert all(s.padded_shape == [1, 4, 4] for s in lay3.shards)


def test_manual_axes_are_refused_clearly():
    for op in ("layout", "matmul", "reduce"):
        with pytest.raises(ShardingInputError, match="Manual axes exist only inside shard_map"):
            explore(ExplorerConfig(operation=op, shape="64, 64", axis_types="Auto, Manual"))


def test_failure_after_compile_is_a_short_message(monkeypatch):
    import workbench.engine.sharding.mesh_explorer as ex

    def trips(*a, **k):
        raise AssertionError

    monkeypatch.setattr(ex, "layout_of_sharding", trips)
    with pytest.raises(ShardingInputError, match="AssertionError: raised inside JAX without"):
        explore(ExplorerConfig(operation="matmul", shape="32, 32"))


def test_typed_prng_keys_and_sub_byte_dtypes():
    mesh = _mesh((2, 4), ("x", "y"))
    keys = jax.device_put(jax.random.split(jax.random.key(0), 8), NamedSharding(mesh, P("x")))
    disp = workbench.sharding({"rng": jax.random.key(0), "keys": keys})
    one, many = {x.path: x for x in disp.layouts}["['rng']"], disp.layouts[0]
    assert one.dtype.startswith("key<") and one.bits == 64
    data = disp._repr_mimebundle_()[MIME]["layouts"]
    by_path = {x["path"]: x for x in data}
    assert by_path["['keys']"]["shards"][0]["bytes"] == 4 * 8  # 4 keys of 2 x uint32 each
    assert by_path["['rng']"]["shards"][0]["bytes"] == 8 and many is not None
    z = jax.device_put(jnp.ones((8, 8), jnp.int4), NamedSharding(mesh, P("x")))
    lay = layout_of(z)
    assert lay.bits == 4 and lay.to_dict()["shards"][0]["bytes"] == 16  # 32 nibbles


def test_sharding_magic_never_leaks_a_traceback(run, shell, monkeypatch):
    import workbench.api.sharding as sm

    shell.user_ns["k_"] = jax.random.key(1)
    r = run("%sharding {'rng': k_}")
    assert r.error is None, r.message
    assert "key<" in r.bundle["text/plain"]

    def broken(tree):
        raise TypeError("Cannot interpret 'thing' as a data type")

    monkeypatch.setattr(sm, "layouts_of_tree", broken)
    r = run("%sharding k_")
    assert r.error is not None and "Cannot interpret 'thing'" in r.message
    assert "%sharding k_" in r.message and len(r.message.splitlines()) <= 3


def test_diff_counts_temporaries_and_text_shows_everything():
    from workbench.views.mesh_explorer import explorer_text

    f32 = explore(
        ExplorerConfig(
            operation="matmul", shape="64, 64", spec="data, model", rhs_spec="model, None"
        )
    )
    bf16 = explore(
        ExplorerConfig(
            operation="matmul",
            shape="64, 64",
            spec="data, model",
            rhs_spec="model, None",
            dtype="bfloat16",
        ),
        f32,
    )
    d = bf16.diff
    assert d is not None and not d.added and not d.removed
    if d.temp_bytes_before != d.temp_bytes_after:  # XLA's temporaries differ on this backend
        assert d.changed and "temporaries per device" in explorer_text(bf16)
    from workbench.engine.sharding.mesh_explorer import ExplorerDiff

    assert ExplorerDiff([], [], 8, 8, 100, 200, "P()", "P()").changed
    assert not ExplorerDiff([], [], 8, 8, 100, 100, "P()", "P()").changed
    text = explorer_text(bf16)
    assert "memory per device:" in text and "device groups {0,1,2,3} {4,5,6,7}" in text
    assert ("changed:" in text) == d.changed


def test_gather_scatter_axes_follow_the_order_within_groups():
    mesh = MeshInfo(["a", "b", "c"], [2, 2, 2], ["Auto"] * 3, list(range(8)))
    c_major = [[0, 4, 1, 5], [2, 6, 3, 7]]
    a_major = [[0, 1, 4, 5], [2, 3, 6, 7]]
    assert axes_of_groups(c_major, mesh) == ["a", "c"]  # all-reduce: the order is moot
    assert axes_of_groups(c_major, mesh, ordered=True) == ["c", "a"]
    assert axes_of_groups(a_major, mesh, ordered=True) == ["a", "c"]
    from workbench.engine.hlo.parser import parse_hlo
    from workbench.engine.sharding.collectives import mesh_collectives
    from workbench.engine.sharding.layout import mesh_info

    m3 = _mesh((2, 2, 2), ("a", "b", "c"))
    keys = set()
    for ax in (("c", "a"), ("a", "c")):
        f = jax.shard_map(
            lambda x, ax=ax: jax.lax.psum_scatter(x, ax, scatter_dimension=0, tiled=True),
            mesh=m3,
            in_specs=P(None, ax),
            out_specs=P(ax, None),
        )
        arg = jax.ShapeDtypeStruct((64, 64), jnp.float32, sharding=NamedSharding(m3, P(None, ax)))
        (c,) = mesh_collectives(parse_hlo(jax.jit(f).lower(arg).compile().as_text()), mesh_info(m3))
        assert c.kind == "reduce-scatter" and c.axes == list(ax)
        assert c.description == f"reduce-scatter over {ax[0]!r}, {ax[1]!r}"
        keys.add(c.key)
    assert len(keys) == 2


def test_empty_arrays_say_so():
    mesh = _mesh((2, 4), ("x", "y"))
    lay = layout_of(jax.device_put(jnp.zeros((0, 8)), NamedSharding(mesh, P("x", "y"))))
    assert lay.empty and lay.replication == 1 and not lay.fully_replicated
    text = layout_text(lay)
    assert "empty (size 0 along dimension 0)" in text and "each held by" not in text
    rep = layout_of(jax.device_put(jnp.zeros((0,)), NamedSharding(mesh, P())))
    assert rep.replication == 8 and rep.fully_replicated and lay.to_dict()["empty"]

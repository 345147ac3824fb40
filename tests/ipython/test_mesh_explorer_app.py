"""The mesh explorer's Panel app without a browser: its state machine, its function mode on
a notebook's namespace, the entry point and the CLI subcommand (its page in a real browser:
tests/chromium/test_sharding_app.py)."""

from __future__ import annotations

import pytest

import workbench
from workbench.apps.cli import build_parser
from workbench.apps.mesh_explorer import MeshExplorer
from workbench.engine.sharding.mesh_explorer import ExplorerConfig, user_functions


def test_default_config_uses_every_device():
    default = ExplorerConfig.default
    assert default(8).mesh_shape == "2, 4"
    assert default(64).mesh_shape == "8, 8"
    assert default(7).mesh_shape == "7" and default(7).axis_names == "data"
    assert default(8, operation="matmul").operation == "matmul"
    with pytest.raises(TypeError, match="unknown setting"):
        default(8, nonsense=1)


def test_app_updates_and_keeps_last_good_state():
    app = MeshExplorer(
        operation="matmul", shape="64, 64", spec="None, model", rhs_spec="model, None"
    )
    first = app.result
    assert first is not None and [c.axes for c in first.collectives] == [["model"]]
    assert "all-reduce over &#x27;model&#x27;" in app.view.object
    app.widgets["spec"].value = "data, data"  # bad: one axis twice
    assert "used twice" in app.message.object and "last good state" in app.message.object
    assert app.result is first  # the view still shows the last good compile
    app.widgets["spec"].value = "data, None"
    assert app.result is not first and app.result.diff is not None
    assert 'data-jwb="diff"' in app.view.object and "jwb-ok" in app.message.object
    app.widgets["mesh_shape"].value = "3, 3"
    assert "needs 9 devices" in app.message.object and app.result.mesh.axis_sizes == [2, 4]
    app.widgets["mesh_shape"].value = "2, 4"
    good = app.result
    app.widgets["axis_types"].value = "Manual"  # only shard_map makes Manual axes
    assert "Manual axes exist only inside shard_map" in app.message.object
    assert app.result is good and app.result.mesh.axis_types == ["Auto", "Auto"]


def test_app_function_mode_uses_notebook_functions(shell, run):
    run("def double_sum(x):\n    return (x * 2).sum(axis=0)\njitted = jax.jit(double_sum)").ok()
    ns = shell.user_ns
    found = user_functions(ns)
    assert "double_sum" in found and "jitted" in found and "jnp" not in found
    assert list(found).index("jitted") < list(found).index("double_sum")  # jitted first
    app = MeshExplorer(
        namespace=ns, operation="function", shape="16, 8", spec="data, model", mesh_shape="2, 4"
    )
    app.widgets["function_name"].value = "double_sum"
    res = app.result
    assert res is not None and res.op_text == "double_sum(x)"
    assert [(c.kind, c.axes) for c in res.collectives] == [("all-reduce", ["data"])]


def test_mesh_explorer_entry_point_returns_panel():
    import panel as pn

    obj = workbench.mesh_explorer(namespace={}, operation="layout")
    assert isinstance(obj, pn.FlexBox)  # the picture wraps under the controls when narrow


def test_cli_mesh_explorer_subcommand_parses():
    args = build_parser().parse_args(["mesh-explorer", "--port", "5999", "--fake-devices", "16"])
    assert args.command == "mesh-explorer" and args.port == 5999 and args.fake_devices == 16


# -- browser --------------------------------------------------------------------------------


def test_fake_devices_too_late_is_said_in_the_app():
    app = MeshExplorer(fake_devices=32, operation="layout")
    assert app.result is not None and app.result.device_count == 8  # keeps working
    assert "already running with 8 device(s)" in app.message.object
    assert "--xla_force_host_platform_device_count=32" in app.message.object

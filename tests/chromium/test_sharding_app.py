"""The mesh explorer: the Panel app's state machine, the CLI, and a real browser session."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request

import pytest

import workbench
from tests.browser import artifacts_dir, free_port, stop_server
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


@pytest.fixture(scope="module")
def mesh_server(tmp_path_factory):
    port = free_port()
    log_path = tmp_path_factory.mktemp("mesh") / "server.log"
    log = open(log_path, "wb")
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # --fake-devices must set it
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench.apps.cli",
            "mesh-explorer",
            "--port",
            str(port),
            "--fake-devices",
            "8",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.3)
    else:
        stop_server(proc, log)
        pytest.fail(f"mesh server did not start: {log_path.read_text()}")
    if proc.poll() is not None:
        log.close()
        pytest.fail(f"mesh server exited: {log_path.read_text()}")
    yield url
    stop_server(proc, log)


def _rows(page) -> list[str]:
    return page.locator('[data-jwb="collective"]').evaluate_all(
        "els => els.map(e => e.getAttribute('data-kind') + ':' + e.getAttribute('data-axes'))"
    )


@pytest.mark.browser
def test_browser_spec_change_changes_collectives(browser, mesh_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(mesh_server)
    page.wait_for_selector('[data-jwb="layout-svg"]', timeout=30000)
    assert "8 devices" in page.locator(".jwb-head").first.inner_text()
    page.select_option("select >> nth=1", "matmul")  # dtype, operation, ...
    page.wait_for_selector('[data-jwb="collectives"]', timeout=30000)
    before = _rows(page)  # default P('data', 'model') @ P('model', None)
    assert "all-reduce:model" in before
    rhs = page.locator('input[placeholder="second operand spec"]')
    rhs.fill("None, model")
    rhs.press("Enter")
    page.wait_for_selector('[data-jwb="diff"]', timeout=30000)
    spec = page.locator('input[placeholder="array spec"]')
    spec.fill("data, None")  # now pure data parallelism: nothing to communicate
    spec.press("Enter")
    page.wait_for_selector('[data-jwb="no-collectives"]', timeout=30000)
    after = _rows(page)
    assert after == [] and "removed" not in page.locator('[data-jwb="diff"]').inner_text()
    assert "−" in page.locator('[data-jwb="diff"]').inner_text()
    spec.fill("data, data")  # bad input: message, last good state kept
    spec.press("Enter")
    page.wait_for_selector('[data-jwb="message"].jwb-error', timeout=30000)
    assert "used twice" in page.locator('[data-jwb="message"]').inner_text()
    assert page.locator('[data-jwb="no-collectives"]').count() == 1
    page.screenshot(path=str(artifacts_dir() / "mesh-explorer.png"), full_page=True)
    page.close()


def test_fake_devices_too_late_is_said_in_the_app():
    app = MeshExplorer(fake_devices=32, operation="layout")
    assert app.result is not None and app.result.device_count == 8  # keeps working
    assert "already running with 8 device(s)" in app.message.object
    assert "--xla_force_host_platform_device_count=32" in app.message.object

"""The jax-workbench console script: doctor for real in a subprocess, lab really started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.browser import free_port, stop_server
from workbench.apps import cli
from workbench.engine.common.devices import set_fake_devices, with_device_count
from workbench.engine.common.environment import doctor_report


def test_with_device_count_replaces_previous_count():
    assert with_device_count("", 4) == "--xla_force_host_platform_device_count=4"
    flags = with_device_count("--xla_cpu_foo=1 --xla_force_host_platform_device_count=2", 8)
    assert flags == "--xla_cpu_foo=1 --xla_force_host_platform_device_count=8"
    with pytest.raises(ValueError):
        with_device_count("", 0)


def _run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "workbench.apps.cli", *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=120,
    )


@pytest.mark.slow  # a subprocess imports JAX
def test_doctor_reports_versions_devices_and_extension():
    import jax

    p = _run_cli("doctor", "--fake-devices", "3")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert f"JAX {jax.__version__}" in out
    assert "cpu: 3 device(s)" in out
    assert "--xla_force_host_platform_device_count=3" in out
    assert "JupyterLab extension jax-workbench:" in out
    p = _run_cli("doctor", "--json")
    rep = json.loads(p.stdout)
    assert rep["default_backend"] == "cpu" and rep["device_count"] == 1
    assert set(rep["extension"]) >= {"installed", "enabled"}
    assert rep["compat_features"]["source_info_util.user_frame"] is True


@pytest.mark.slow  # a subprocess imports JAX
def test_fake_devices_win_over_jax_num_cpu_devices():
    # JAX's own option, when set, overrides the XLA flag: --fake-devices must set both
    p = _run_cli("doctor", "--fake-devices", "3", env={"JAX_NUM_CPU_DEVICES": "2"})
    assert p.returncode == 0, p.stderr
    assert "cpu: 3 device(s)" in p.stdout
    env = {"XLA_FLAGS": "--xla_cpu_foo=1", "JAX_NUM_CPU_DEVICES": "2"}
    set_fake_devices(env, 5)
    assert env == {
        "XLA_FLAGS": "--xla_cpu_foo=1 --xla_force_host_platform_device_count=5",
        "JAX_NUM_CPU_DEVICES": "5",
    }


def test_doctor_formats_the_engine_record():
    import jax

    rep = doctor_report("9.9.9", cli.extension_status())
    env = rep.environment
    assert env.jax_version == jax.__version__ and env.device_count == len(jax.devices())
    text = cli.format_doctor(rep)
    assert text.startswith("jax-workbench 9.9.9 · Python ")
    assert f"cpu: {len(jax.devices('cpu'))} device(s)" in text
    assert f"CPU: {env.cpu_model}" in text
    d = rep.to_dict()
    assert json.loads(json.dumps(d)) == d  # what --json prints
    assert d["cpu_model"] == env.cpu_model and d["jax"] == jax.__version__


@pytest.mark.slow  # subprocesses
def test_bad_arguments_are_short_errors():
    p = _run_cli("lab", "--fake-devices", "0")
    assert p.returncode == 2 and "at least 1" in p.stderr
    p = _run_cli("frobnicate")
    assert p.returncode == 2
    p = _run_cli("mesh-explorer", "--fake-devices", "0")
    assert p.returncode == 2 and "at least 1" in p.stderr


def test_lab_command_opens_the_tour():
    cmd = cli.lab_command(8899, cli.notebooks_dir(), ["--no-browser"])
    assert cmd[1:3] == ["-m", "jupyterlab"]
    assert "--port=8899" in cmd and cmd[-1] == "--no-browser"
    assert any(c.endswith("00_tour.ipynb") for c in cmd)


@pytest.mark.slow  # starts a JupyterLab server
def test_lab_really_starts_on_the_notebooks(tmp_path):
    port, token = free_port(), "cli-test-token"
    log = open(tmp_path / "lab.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench.apps.cli",
            "lab",
            "--port",
            str(port),
            "--fake-devices",
            "2",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.time() + 90
        data = None
        while time.time() < deadline and data is None:
            try:
                url = f"http://127.0.0.1:{port}/api/contents/00_tour.ipynb?token={token}&content=0"
                with urllib.request.urlopen(url, timeout=2) as r:
                    data = json.load(r)
            except OSError:
                assert proc.poll() is None, (tmp_path / "lab.log").read_text()[-2000:]
                time.sleep(0.5)
        assert data is not None and data["type"] == "notebook"
        text = (tmp_path / "lab.log").read_text()
        assert "XLA_FLAGS=--xla_force_host_platform_device_count=2" in text
    finally:
        stop_server(proc, log)

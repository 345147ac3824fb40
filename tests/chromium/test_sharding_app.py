"""The mesh explorer served by Panel, in a real browser (the app without one:
tests/ipython/test_mesh_explorer_app.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.browser import artifacts_dir, free_port, stop_server


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

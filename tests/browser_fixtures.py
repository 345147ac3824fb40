"""Session fixtures of the browser tests: one Chromium and one JupyterLab server per test process.

Starting ``jupyter lab`` takes several seconds of a 2-core machine and each test module used to
start its own (one or two), as it launched its own browser.  Here each test process starts at
most one server with the extension (``jupyterlab_server``) and one with it disabled
(``jupyterlab_server_off``), when a test first asks for it; the module-scoped ``lab`` and
``lab_off`` hand them to a module after :meth:`JupyterServer.reset` (no kernels, default theme
and windowing), as a fresh server would be, and reset them again after it.  A module that
writes its notebooks overrides ``lab`` with a fixture of the same name that asks for this one.

Under ``pytest-xdist`` the modules that share a server are marked with the same
``xdist_group`` (``--dist loadgroup``; the suite runs ``--dist loadfile``, one module per worker), so one worker runs them against one server; the
browser tests are split into two such groups so that both workers have a share.

``tests/conftest.py`` imports these, which makes them every test module's fixtures.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import CHROMIUM_ARGS, JupyterServer, chromium_path

#: the two groups of browser test modules, one JupyterLab server per group and worker
BROWSER_GROUP_A = "jupyterlab-a"
BROWSER_GROUP_B = "jupyterlab-b"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's chromium driven by Playwright (never a downloaded browser), one per test
    process; each test opens its own pages (``browser.new_page()`` is a fresh context)."""
    from playwright import sync_api as playwright_api

    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield b
        b.close()


def _serve(workdir: Any, *, extension_enabled: bool) -> Iterator[JupyterServer]:
    server = JupyterServer(
        workdir, extension_enabled=extension_enabled, expose_notebook7_app=True
    ).start()
    try:
        # with the extension disabled too: still the checkout's build that is disabled
        server.assert_serves_checkout_build()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def jupyterlab_server(tmp_path_factory) -> Iterator[JupyterServer]:
    """JupyterLab 4 and Notebook 7 with this checkout's build of the extension."""
    yield from _serve(tmp_path_factory.mktemp("lab"), extension_enabled=True)


@pytest.fixture(scope="session")
def jupyterlab_server_off(tmp_path_factory) -> Iterator[JupyterServer]:
    """The same with the extension disabled: outputs render through their text/html fallback."""
    yield from _serve(tmp_path_factory.mktemp("lab-off"), extension_enabled=False)


@pytest.fixture(scope="module")
def lab(jupyterlab_server: JupyterServer) -> Iterator[JupyterServer]:
    """The shared JupyterLab (extension on), reset for this module and after it."""
    jupyterlab_server.reset()
    yield jupyterlab_server
    jupyterlab_server.reset()


@pytest.fixture(scope="module")
def lab_off(jupyterlab_server_off: JupyterServer) -> Iterator[JupyterServer]:
    """The shared JupyterLab with the extension disabled, reset for this module and after it."""
    jupyterlab_server_off.reset()
    yield jupyterlab_server_off
    jupyterlab_server_off.reset()


@pytest.fixture(scope="session")
def extension_notebooks(tmp_path_factory) -> dict[str, Any]:
    """wb.ipynb, hlo24.ipynb, jaxpr12k.ipynb and compile24.ipynb executed once per test
    session (tests/run_once.py; tens of seconds of kernel time): opened in JupyterLab by the
    extension's browser tests and exported with nbconvert by test_standalone_browser.py."""

    from tests.browser import (
        COMPILE24_CELLS,
        HLO24_CELLS,
        JAXPR12K_CELLS,
        LLVM_O0,
        ensure_extension_built,
        execute_notebook,
        workbench_outputs,
    )
    from tests.chromium.test_extension_browser import KINDS, WB_CELLS

    ensure_extension_built()  # the outputs embed the standalone runtime it builds

    d = tmp_path_factory.mktemp("notebooks")
    nbs = {
        "wb.ipynb": execute_notebook(WB_CELLS, d / "wb.ipynb"),
        # about the HLO views of two 24-block gradients: LLVM at -O0 (tests.browser.LLVM_O0)
        "hlo24.ipynb": execute_notebook(HLO24_CELLS, d / "hlo24.ipynb", xla_flags=(LLVM_O0,)),
        "jaxpr12k.ipynb": execute_notebook(JAXPR12K_CELLS, d / "jaxpr12k.ipynb"),
        "compile24.ipynb": execute_notebook(COMPILE24_CELLS, d / "compile24.ipynb"),
    }
    kinds = {k for _, k in workbench_outputs(nbs["wb.ipynb"])}
    assert set(KINDS) <= kinds, kinds
    return {"dir": d, "nb": nbs}

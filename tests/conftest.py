"""Test session set-up: 8 fake CPU devices, set before JAX initialises its backend."""

from __future__ import annotations

import os
import sys

os.environ["XLA_FLAGS"] = " ".join(
    [
        f
        for f in os.environ.get("XLA_FLAGS", "").split()
        if not f.startswith("--xla_force_host_platform_device_count")
    ]
    + ["--xla_force_host_platform_device_count=8"]
)
os.environ["JAX_PLATFORMS"] = "cpu"

# jsonschema imports rfc3987_syntax where it is installed (Jupyter's dependencies install it)
# to check the "iri" formats, and importing it builds a Lark grammar: 1.1 s of every test
# process's start, the largest part of collecting the quick loop.  No schema the tests
# validate against (ours, nbformat's, JSON Schema's metaschemas) uses the iri formats;
# jsonschema treats the module as not installed.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[call-overload]

import pytest  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from tests import extension_build, run_once  # noqa: E402
from tests.browser import build_extension  # noqa: E402

# the browser tests' shared Chromium and JupyterLab servers (one of each per test process)
from tests.browser_fixtures import (  # noqa: E402, F401
    browser,
    extension_notebooks,
    jupyterlab_server,
    jupyterlab_server_off,
    lab,
    lab_off,
)


def pytest_configure(config: pytest.Config) -> None:
    """The controlling process makes the folder where workers share what they run once.

    Outputs embed the standalone runtime, which the extension's build writes; a checkout
    never built (a clone that was not ``pip install -e``'d) gets it built here, once, as the
    browser tests build a stale one (``tests/browser.py``), or stops with one line on why it
    could not be: dozens of tests would otherwise fail on what is missing.  Only a missing
    build is made here (a Python-only run after editing TypeScript does not wait for a
    rebuild); the browser tests still rebuild a stale one.
    """
    if not hasattr(config, "workerinput"):
        run_once.session_started()
        if extension_build.missing() and not _only_reports(config):
            try:
                build_extension()
            except Exception:
                if not (extension_build.EXT / "node_modules").is_dir():
                    why = "extension/node_modules is missing: `cd extension && npm ci`"
                else:
                    why = "`npm run build` failed: run it in extension/ to see why"
                pytest.exit(
                    f"the extension is not built in this checkout and could not be built "
                    f"({why}); then run pytest again, which builds it",
                    returncode=4,
                )


def _only_reports(config: pytest.Config) -> bool:
    """``--help``, ``--fixtures``, ``--markers``, ``--collect-only``: nothing runs."""
    o = config.option
    return any(getattr(o, n, False) for n in ("help", "showfixtures", "markers", "collectonly"))


def pytest_unconfigure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):
        run_once.session_finished()


#: the module that executes the extension's notebooks (``extension_notebooks``: minutes of
#: kernel time) and reads them most
NOTEBOOKS_MADE_BY = "tests/chromium/test_extension_browser.py"
#: modules of the quick loop that take tens of seconds, though no test of theirs is marked
#: slow: tool runs (mypy, ruff; tsc, vitest, ESLint, Prettier) and %jaxmem's walks and full
#: collections, whose time grows with the worker's heap (a warm quick loop: 23 s after most
#: of the other modules, 18 s first in a fresh worker)
LONG_QUICK_MODULES = (
    "tests/project/test_hygiene.py",
    "tests/extension/test_extension_unit.py",
    "tests/ipython/test_jaxmem_magic.py",
)


def _module(item: pytest.Item) -> str:
    """``item``'s file, as ``--dist loadfile`` groups items (its node id up to ``::``)."""
    return item.nodeid.split("::", 1)[0]


def _run_order(items: list[pytest.Item]) -> dict[str, float]:
    """Where each module goes in the run, longest work first: the module that executes the
    extension's notebooks (0), the quick loop's long modules (0.5), the modules with a slow
    test (browsers, kernels, servers, subprocesses: 1), the other modules reading those
    notebooks (2), then the rest (3): hundreds of tests of a second or less.

    The suite runs as ``-n 2 --dist loadfile --no-loadscope-reorder`` (noxfile.py): xdist
    hands out whole modules in this order as workers free up, so the long ones start early
    and the short ones fill both cores to the end.  (xdist's own order, most tests first,
    left one worker running a minute of browser tests at the end with the other one idle,
    and started readers of the notebooks before they existed: a worker waiting on
    ``tests/run_once.py``'s lock keeps its core idle.)  The place is the module's, not each
    test's: a module stays in one piece, its tests in their order (a stable sort)."""
    readers = {
        _module(item)
        for item in items
        if "extension_notebooks" in getattr(item, "fixturenames", ())
    }
    long = {_module(item) for item in items if item.get_closest_marker("slow")}
    order = {module: 1.0 for module in long}
    order |= {module: 0.5 for module in LONG_QUICK_MODULES}
    order |= {module: 2 for module in readers}
    order[NOTEBOOKS_MADE_BY] = 0
    return order


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser and notebook tests start a browser or a kernel: they are slow too, so
    ``-m "not slow"`` leaves them out without each one carrying two marks; and the modules
    that read the executed extension notebooks run after the one that executes them."""
    for item in items:
        if item.get_closest_marker("browser") or item.get_closest_marker("notebook"):
            item.add_marker(pytest.mark.slow)
    order = _run_order(items)
    items.sort(key=lambda item: order.get(_module(item), 3))


@pytest.fixture(scope="session")
def shell() -> InteractiveShell:
    sh = InteractiveShell.instance()
    sh.run_cell("%load_ext workbench", store_history=False)
    sh.run_cell("import jax, jax.numpy as jnp, numpy as np", store_history=False)
    return sh


class CellRun:
    """One cell run in the session's shell, the one way tests run a cell: IPython's result,
    the captured output and displays, the value's formatted bundle, and the compile line
    (the ``cache-cell`` display) the workbench printed under the cell."""

    def __init__(self, shell: InteractiveShell, code: str) -> None:
        with capture_output() as cap:
            self.result = shell.run_cell(code, store_history=True)
        self.stdout = cap.stdout
        self.stderr = cap.stderr
        self.outputs: list[dict] = [o.data for o in cap.outputs]
        self.error = self.result.error_in_exec or self.result.error_before_exec
        self.bundle: dict = {}
        if self.result.result is not None:
            self.bundle, _ = shell.display_formatter.format(self.result.result)

    @property
    def message(self) -> str:
        return str(self.error) if self.error is not None else ""

    def ok(self) -> CellRun:
        """This run, checked to have raised nothing."""
        assert self.error is None, f"{self.error}\n{self.stdout}{self.stderr}"
        return self

    def short_error(self) -> str:
        """The printed error, checked to be the short kind: no traceback, a few lines."""
        assert self.error is not None
        text = self.stdout + self.stderr
        assert "Traceback (most recent call last)" not in text
        assert len(text.strip().splitlines()) <= 8, text
        return text

    @property
    def lines(self) -> list[dict]:
        """The compile lines shown under the cell (at most one): their bundles."""
        from workbench.views.cache import CACHE_CELL_MIME

        return [d for d in self.outputs if CACHE_CELL_MIME in d]

    @property
    def summary(self) -> dict | None:
        """The compile line's payload (``cache-cell``), or None when the cell compiled nothing."""
        from workbench.views.cache import CACHE_CELL_MIME

        assert len(self.lines) <= 1
        return self.lines[0][CACHE_CELL_MIME] if self.lines else None

    @property
    def line_text(self) -> str:
        """The compile line as text ("" when there is none)."""
        return self.lines[0]["text/plain"] if self.lines else ""

    def groups(self, function: str, origin: str | None = None) -> list[dict]:
        """The compile line's groups for ``function`` (of ``origin``: user, jax, workbench)."""
        return [
            g
            for g in (self.summary or {}).get("functions", [])
            if g["function"] == function and (origin is None or g["origin"] == origin)
        ]

    def group(self, function: str) -> dict:
        """The first group for ``function``, checked to exist."""
        assert self.summary is not None, "the cell compiled nothing"
        found = self.groups(function)
        assert found, [g["function"] for g in self.summary["functions"]]
        return found[0]

    def reasons(self, function: str) -> list[dict]:
        """The recompile reasons of the user's one group for ``function``."""
        groups = self.groups(function, "user")
        assert len(groups) == 1, self.summary
        return groups[0]["reasons"]


@pytest.fixture(scope="session")
def run(shell: InteractiveShell):
    """``run(code)``: runs one cell in the session's shell and returns its :class:`CellRun`."""

    def _run(code: str) -> CellRun:
        return CellRun(shell, code)

    return _run


@pytest.fixture(autouse=True)
def validate_every_payload(monkeypatch):
    """Every application/vnd.jax-workbench.* payload the test builds must match its schema,
    packed as it is shown and unpacked (``schemas.unpack``) as a front end reads it.

    All bundles are built by ``View.bundle`` (the one display protocol: magics, twins, the
    compile line, ``%jaxcache``, the benchmark progress display's final output) and lone payloads
    by ``View.payload``; both are wrapped here.  IPython's display formatter swallows
    exceptions raised while formatting, so failures are also collected and fail the test
    at teardown.
    """
    from workbench import schemas
    from workbench.views.display import View

    failures: list[str] = []

    def check(mime: str, payload: object) -> None:
        try:
            schemas.validate(mime, payload)
            inner = schemas.unpack(payload)
            if inner is not payload:  # packed: the restored fields obey the schema too
                schemas.validate(mime, inner)
        except Exception as exc:
            failures.append(f"{mime}: {exc}")
            raise

    bundle, payload = View.bundle, View.payload

    def checked_bundle(self, *args, **kwargs):
        out = bundle(self, *args, **kwargs)
        for mime, data in out.items():
            if schemas.kind_of(mime) is not None:
                check(mime, data)
        return out

    def checked_payload(self, *args, **kwargs):
        out = payload(self, *args, **kwargs)
        check(self.mime, out)
        return out

    monkeypatch.setattr(View, "bundle", checked_bundle)
    monkeypatch.setattr(View, "payload", checked_payload)
    yield
    assert not failures, "payloads that do not match their schema:\n" + "\n".join(failures)

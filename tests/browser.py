"""Real browsers for tests: Debian's chromium driven by Playwright, never a downloaded one."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from tests import extension_build, run_once

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        raise RuntimeError(
            "Debian's chromium is required for browser tests: apt-get install chromium"
        )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def artifacts_dir() -> Path:
    d = Path(
        os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parent.parent / "test-artifacts")
    )
    d.mkdir(parents=True, exist_ok=True)
    return d


def stop_server(proc: subprocess.Popen, log: IO[bytes]) -> None:
    """Terminate a server started by a test (kill it if it lingers) and close its log."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


# -- JupyterLab / Notebook 7 servers on the checkout's build of the extension -------------------

ROOT = Path(__file__).resolve().parent.parent
LABEXTENSION = extension_build.LABEXTENSION
EXTENSION_NAME = "jax-workbench"
TOKEN = "workbench-test-token"
WORKBENCH_MIME_PREFIX = "application/vnd.jax-workbench."


def ensure_extension_built() -> Path:
    """The checkout's built extension (workbench/labextension) and standalone runtime
    (workbench/views/static/standalone.js, which outputs embed), built now if either is
    missing or older than its sources (tests/extension_build.py: the rule noxfile.py builds
    by), so a browser test never shows a build of other sources than the checkout's.  One
    worker builds, the others wait for it (tests/run_once.py)."""
    if extension_build.stale_reason() is not None:
        run_once.once("extension-build", build_extension)
    return LABEXTENSION


def build_extension() -> None:
    """``npm run build`` unless the build is current by now (another worker built it while
    this one waited); an error that says why when it cannot build or leaves it stale."""
    why = extension_build.stale_reason()
    if why is None:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(f"the extension must be built ({why}) and npm is not on PATH")
    print(f"tests.browser: npm run build ({why})", file=sys.stderr)
    # `jupyter labextension build` is the one of this Python's environment, as nox's is
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    proc = subprocess.run(
        [npm, "run", "build"],
        cwd=ROOT / "extension",
        env=dict(os.environ, PATH=path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"`npm run build` in extension/ failed ({why}):\n{(proc.stdout + proc.stderr)[-4000:]}"
        )
    still = extension_build.stale_reason()
    if still is not None:  # a source changed while it built, or it wrote elsewhere
        raise RuntimeError(f"`npm run build` left the extension's build stale: {still}")


class _PortTaken(Exception):
    """The port free_port() picked was taken before the server could bind it."""


class JupyterServer:
    """A real ``jupyter lab`` on 127.0.0.1 with its own root, token, config, data and settings.

    ``JUPYTER_PATH`` points at a temporary directory whose ``labextensions/jax-workbench`` is
    a symlink to this checkout's build, so it shadows any copy installed in the environment's
    share/ (an editable install's included): what is tested is the checkout.  The same server
    serves Notebook 7 at ``/notebooks/<name>.ipynb`` (notebook's server extension).  With
    ``extension_enabled=False`` the extension is disabled the way ``jupyter labextension
    disable`` does it (``labconfig/page_config.json`` in the config dir): outputs then render
    through their ``text/html`` fallback.  JupyterLab's app is always exposed to the page as
    ``window.jupyterapp``; Notebook 7's only with ``expose_notebook7_app`` (its own flag).

    One server is shared by many test modules (the session fixtures in
    ``tests/browser_fixtures.py``): :meth:`reset` gives each module a server with no kernels
    and the default theme and windowing, as a fresh one would be.
    """

    def __init__(
        self, workdir: Path, *, extension_enabled: bool = True, expose_notebook7_app: bool = False
    ) -> None:
        self.workdir = workdir
        self.root = workdir / "root"
        self.root.mkdir(parents=True, exist_ok=True)
        self.extension_enabled = extension_enabled
        jp = workdir / "jupyter-path" / "labextensions"
        jp.mkdir(parents=True, exist_ok=True)
        link = jp / EXTENSION_NAME
        if not link.exists():
            link.symlink_to(ensure_extension_built(), target_is_directory=True)
        self.config_dir = workdir / "config"
        self.data_dir = workdir / "data"
        for d in (
            self.config_dir / "labconfig",
            self.data_dir,
            workdir / "settings",
            workdir / "workspaces",
            workdir / "runtime",
        ):
            d.mkdir(parents=True, exist_ok=True)
        # no "get notified about Jupyter news?" toast over the outputs in screenshots
        news = workdir / "settings" / "@jupyterlab" / "apputils-extension"
        news.mkdir(parents=True, exist_ok=True)
        (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
        if not extension_enabled:
            (self.config_dir / "labconfig" / "page_config.json").write_text(
                json.dumps({"disabledExtensions": {EXTENSION_NAME: True}})
            )
        if expose_notebook7_app:
            (self.config_dir / "jupyter_server_config.json").write_text(
                json.dumps({"JupyterNotebookApp": {"expose_app_in_browser": True}})
            )
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
        self.env.update(
            JUPYTER_PATH=str(workdir / "jupyter-path"),
            JUPYTER_CONFIG_DIR=str(self.config_dir),
            JUPYTER_DATA_DIR=str(self.data_dir),
            JUPYTER_RUNTIME_DIR=str(workdir / "runtime"),
            JUPYTERLAB_SETTINGS_DIR=str(workdir / "settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(workdir / "workspaces"),
            # no ~/.ipython profile or startup scripts of this machine in the kernels
            IPYTHONDIR=str(workdir / "ipython"),
            PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        )
        self.proc: subprocess.Popen | None = None
        self.base = ""
        self._pages = 0
        self._notebook7_errors: set[str] | None = None

    def start(self, timeout: float = 180, attempts: int = 3) -> JupyterServer:
        """Start the server on a free port (another one if that port was taken meanwhile)."""
        self.log_path = self.workdir / "server.log"
        for attempt in range(attempts):
            try:
                return self._start_once(timeout)
            except _PortTaken:
                if attempt == attempts - 1:
                    raise RuntimeError(
                        "jupyter lab found no free port:\n" + self.log_path.read_text()[-3000:]
                    ) from None
        raise AssertionError("unreachable")

    def _start_once(self, timeout: float) -> JupyterServer:
        port = free_port()
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed by stop()
        # port_retries=0: on a port taken between free_port() and the bind, fail (and retry
        # here) rather than silently serve on port+1 while the test polls `port`
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.expose_app_in_browser=True",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, env=self.env, cwd=self.workdir
        )
        self.base = f"http://127.0.0.1:{port}"
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(
                    f"{self.base}/api/status?token={TOKEN}", timeout=5
                ) as r:
                    json.load(r)
                    return self
            except OSError:
                if self.proc.poll() is not None:
                    self.stop()
                    log = self.log_path.read_text()
                    if "is already in use" in log[-3000:]:
                        raise _PortTaken from None
                    raise RuntimeError(log[-3000:]) from None
                time.sleep(0.5)
        self.stop()
        raise RuntimeError("jupyter lab did not start:\n" + self.log_path.read_text()[-3000:])

    def stop(self) -> None:
        if self.proc is not None:
            stop_server(self.proc, self._log)
            self.proc = None

    def api(self, method: str, path: str, body: dict | None = None) -> Any:
        """One call of the server's REST API (``path`` from the base URL, e.g. ``/api/sessions``)."""
        req = urllib.request.Request(
            f"{self.base}{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            data = r.read()
        return json.loads(data) if data else None

    def shutdown_kernels(self) -> None:
        """End every session and kernel (a test's kernels hold memory and CPU until then)."""
        for s in self.api("GET", "/api/sessions") or []:
            self._delete(f"/api/sessions/{s['id']}")
        for k in self.api("GET", "/api/kernels") or []:
            self._delete(f"/api/kernels/{k['id']}")

    def _delete(self, path: str) -> None:
        """DELETE ``path``; already gone is fine (sessions sharing a kernel end with it)."""
        try:
            self.api("DELETE", path)
        except urllib.error.HTTPError as e:
            if e.code != 404:
                raise

    #: the user settings tests change (theme, notebook windowing); :meth:`reset` clears them
    CHANGED_SETTINGS = (
        "@jupyterlab/apputils-extension:themes",
        "@jupyterlab/notebook-extension:tracker",
    )

    def reset(self) -> None:
        """No kernels, and the default theme and windowing: a shared server as a fresh one."""
        self.shutdown_kernels()
        for plugin in self.CHANGED_SETTINGS:
            self.api("PUT", f"/lab/api/settings/{plugin}", {"raw": "{}"})
        self._notebook7_errors = None

    def notebook7_own_errors(self, browser: Any) -> set[str]:
        """Console errors Notebook 7's page reports by itself, on a notebook without outputs
        once its kernel is idle (what other plugins say is theirs to fix; a test asks that the
        workbench add nothing).  Seen once per server, until :meth:`reset`."""
        if self._notebook7_errors is None:
            import nbformat

            name = "notebook7-own-errors.ipynb"
            nbformat.write(nbformat.v4.new_notebook(), self.root / name)
            page = browser.new_page()
            watch = PageWatch(page, self.base)
            page.goto(self.notebook7_url(name))
            wait_for_notebook(page)
            wait_for_kernel_idle(page)
            page.wait_for_timeout(1000)  # late errors (workers, observers)
            page.close()
            for session in self.api("GET", "/api/sessions") or []:
                if session["path"] == name:
                    self._delete(f"/api/sessions/{session['id']}")
            self._notebook7_errors = set(watch.errors)
        return set(self._notebook7_errors)

    def served_extension(self) -> dict | None:
        """The jax-workbench entry of the federated extensions /lab's page config lists."""
        with urllib.request.urlopen(f"{self.base}/lab?token={TOKEN}", timeout=30) as r:
            html = r.read().decode()
        m = re.search(
            r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S
        )
        assert m, "no jupyter-config-data in /lab"
        config = json.loads(m.group(1))
        return next(
            (e for e in config.get("federated_extensions", []) if e.get("name") == EXTENSION_NAME),
            None,
        )

    def assert_serves_checkout_build(self) -> None:
        """The server loads this checkout's build, not a copy installed in share/."""
        ext = self.served_extension()
        built = json.loads((LABEXTENSION / "package.json").read_text())
        assert ext is not None, "the server does not list the jax-workbench extension"
        assert ext["load"] == built["jupyterlab"]["_build"]["load"], (
            f"the server loads {ext['load']}, this checkout's build is "
            f"{built['jupyterlab']['_build']['load']} (the JUPYTER_PATH link is not in effect?)"
        )

    def lab_url(self, name: str) -> str:
        """A fresh workspace each time, so no page inherits another's open tabs."""
        self._pages += 1
        return f"{self.base}/lab/workspaces/t{self._pages}/tree/{name}?token={TOKEN}"

    def notebook7_url(self, name: str) -> str:
        return f"{self.base}/notebooks/{name}?token={TOKEN}"

    def trust(self, path: Path) -> None:
        """Sign ``path`` with this server's notary secret (``jupyter trust``)."""
        subprocess.run(
            [sys.executable, "-m", "jupyter", "trust", str(path)],
            env=self.env,
            check=True,
            capture_output=True,
            timeout=120,
        )

    def is_trusted(self, path: Path) -> bool:
        code = (
            "import sys, nbformat; from nbformat.sign import NotebookNotary; "
            "nb = nbformat.read(sys.argv[1], 4); "
            "print(NotebookNotary().check_signature(nb))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code, str(path)],
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        return out.strip() == "True"


#: XLA flag for kernels whose notebooks are about the optimized HLO, not its machine code:
#: LLVM at -O0.  XLA's HLO passes (the optimized module every HLO view, fusion and buffer
#: assignment is read from) run before LLVM and do not read it: a 4-block transformer
#: gradient's optimized module is the same text, byte for byte, with and without it
#: (tests/project/test_notebook_kernels.py checks that), and the 24-block gradient's compile
#: takes half the CPU time (19.7 s against 41.1 s on a 2-core machine).  Never for a notebook
#: whose tests read what a compile or a run measures (times, the executable's memory).
LLVM_O0 = "--xla_backend_optimization_level=0"


def kernel_env(*xla_flags: str) -> dict[str, str]:
    """A kernel with 8 fake CPU devices that imports this checkout's workbench (and the
    XLA flags ``xla_flags`` besides)."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = " ".join(
        [
            f
            for f in env.get("XLA_FLAGS", "").split()
            if not f.startswith("--xla_force_host_platform_device_count")
        ]
        + ["--xla_force_host_platform_device_count=8", *xla_flags]
    )
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def new_notebook(cells: list[str]) -> Any:
    """A notebook of code ``cells``, not run, for the ``python3`` kernel (the one the test
    servers and nbclient start)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def execute_notebook(
    cells: list[str], path: Path, timeout: int = 600, xla_flags: tuple[str, ...] = ()
) -> Any:
    """Run ``cells`` in a fresh kernel (nbclient; ``xla_flags`` added to its XLA_FLAGS) and
    save the executed notebook, unsigned.  The same cells run once per test session,
    whichever module asks first."""
    import nbformat
    from nbclient import NotebookClient

    def execute() -> Any:
        nb = new_notebook(cells)
        with tempfile.TemporaryDirectory(prefix="wb-ipython-") as ipython_dir:
            env = dict(kernel_env(*xla_flags), IPYTHONDIR=ipython_dir)  # no ~/.ipython here
            NotebookClient(
                nb,
                timeout=timeout,
                kernel_name="python3",
                resources={"metadata": {"path": str(path.parent)}},
            ).execute(env=env)
        return nb

    # once per session: another module's worker may read the same notebook (tests/run_once.py)
    nb = run_once.once("notebook-" + run_once.key_of(*cells, *xla_flags), execute)
    nbformat.write(nb, path)
    return nb


def workbench_outputs(nb: Any) -> list[tuple[int, str]]:
    """(cell index, kind) of every output that carries a workbench payload, in order."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            for mime in out.get("data", {}):
                if mime.startswith(WORKBENCH_MIME_PREFIX):
                    found.append((i, mime[len(WORKBENCH_MIME_PREFIX) :].split("+", 1)[0]))
    return found


class PageWatch:
    """Console errors, page errors and requests that leave 127.0.0.1, for one page."""

    def __init__(self, page: Any, base: str) -> None:
        self.errors: list[str] = []
        self.external: list[str] = []
        page.on(
            "console",
            lambda m: (
                self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None
            ),
        )
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

        def request(r: Any) -> None:
            url = r.url
            if not (url.startswith(base + "/") or url.startswith(("data:", "blob:", "about:"))):
                self.external.append(url)

        page.on("request", request)

    def since_now(self) -> WatchSince:
        """What this page reports from now on (a page shared by several tests)."""
        return WatchSince(self)


class WatchSince:
    """The console errors and outside requests a :class:`PageWatch` saw after a point."""

    def __init__(self, watch: PageWatch) -> None:
        self._watch = watch
        self._errors = len(watch.errors)
        self._external = len(watch.external)

    @property
    def errors(self) -> list[str]:
        return self._watch.errors[self._errors :]

    @property
    def external(self) -> list[str]:
        return self._watch.external[self._external :]


#: the notebook panel JupyterLab shows (a JavaScript expression)
CURRENT_NOTEBOOK = "window.jupyterapp.shell.currentWidget"


def scroll_to_cell(page: Any, index: int) -> None:
    """Scroll cell ``index`` to the top; back once the notebook has drawn what is now in view
    (scrollToItem settles the scroll; the cell is in the viewport; two more frames let the
    windowing attach or hide the other cells)."""
    page.evaluate(
        f"""async (i) => {{
            const nb = {CURRENT_NOTEBOOK}.content;
            const frame = () => new Promise(r => requestAnimationFrame(r));
            await nb.scrollToItem(i, 'start');
            for (let k = 0; k < 300 && !nb.widgets[i].inViewport; k++) await frame();
            await frame();
            await frame();
        }}""",
        index,
    )


def wait_for_notebook(page: Any, timeout: float = 90_000, name: str | None = None) -> None:
    """Until a notebook shows cells; with ``name``, until the notebook in front is ``name``
    and its file is loaded (before that its model holds one empty cell of its own: a check
    of the cells, their trust for one, would read that placeholder on a slow machine)."""
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout)
    if name is not None:
        page.wait_for_function(
            "(n) => { const w = window.jupyterapp?.shell.currentWidget;"
            " return !!w && w.context?.path?.split('/').pop() === n"
            " && w.context.isReady === true; }",
            arg=name.split("/")[-1],
            timeout=timeout,
        )


def open_notebook(browser: Any, server: Any, name: str) -> tuple[Any, Any]:
    """A new page showing notebook ``name`` of ``server``, back once its kernel is started;
    with the page's watch (console errors, failed requests)."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    watch = PageWatch(page, server.base)
    page.goto(server.lab_url(name))
    wait_for_notebook(page, name=name)
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel",
        timeout=60_000,
    )
    return page, watch


def wait_for_cells_run(page: Any, timeout: float = 120_000) -> None:
    """The current notebook's kernel is idle and none of its code cells is still running (the
    toolbar's indicator alone can read idle between two cells of a run-all)."""
    page.wait_for_function(
        f"() => {CURRENT_NOTEBOOK}.sessionContext.session?.kernel?.status === 'idle' && "
        f"{CURRENT_NOTEBOOK}.content.widgets.every(c => c.model.type !== 'code' || "
        "c.model.executionState !== 'running')",
        timeout=timeout,
    )


def run_all_cells(page: Any) -> None:
    """Run every cell of the current notebook (once its kernel is idle); back when all ran."""
    wait_for_cells_run(page)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_for_cells_run(page)


def wait_for_kernel_idle(page: Any, timeout: float = 90_000) -> None:
    """The page's kernel has started and is idle (the toolbar's indicator, Lab and Notebook 7)."""
    page.wait_for_selector(
        '.jp-Notebook-ExecutionIndicator[data-status="idle"]', state="attached", timeout=timeout
    )


# Text contrast of everything under the roots matching `selector`: each element with its own
# visible text, its computed colour over the background found by walking up to the first
# opaque one (semi-transparent layers composited), WCAG relative luminance.
CONTRAST_JS = r"""
(selector) => {
  const parse = (c) => {
    let m = c.match(/^rgba?\(([^)]+)\)$/);
    if (m) {
      const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    }
    m = c.match(/^color\(srgb ([^)]+)\)$/);
    if (m) {
      const p = m[1].split(/[\s\/]+/).filter(Boolean).map(Number);
      return [p[0] * 255, p[1] * 255, p[2] * 255, p.length > 3 ? p[3] : 1];
    }
    return null;
  };
  const over = (top, base) => [0, 1, 2].map(i => top[i] * top[3] + base[i] * (1 - top[3]));
  const lum = (rgb) => {
    const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]);
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c === null) return null;
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let base = [255, 255, 255];
    for (const l of layers.reverse()) base = over(l, base);
    return base;
  };
  const svgShapeBehind = (el) => {
    const svg = el.ownerSVGElement; if (!svg) return null;
    const r = el.getBoundingClientRect(); const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    let found = null;
    for (const shape of svg.querySelectorAll('rect, polygon, ellipse, circle')) {
      if (!(shape.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
      const b = shape.getBoundingClientRect();
      if (cx < b.left || cx > b.right || cy < b.top || cy > b.bottom) continue;
      const st = getComputedStyle(shape);
      if (st.fill === 'none') continue;
      const f = parse(st.fill);
      if (f === null) continue;
      const a = f[3] * parseFloat(st.fillOpacity) * parseFloat(st.opacity);
      if (a > 0) found = [f[0], f[1], f[2], a];
    }
    return found;
  };
  const results = []; const unparsed = [];
  for (const root of document.querySelectorAll(selector)) {
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent.trim()).join('');
      if (!own) continue;
      const st = getComputedStyle(el);
      if (st.visibility === 'hidden' || st.display === 'none' || el.getClientRects().length === 0) continue;
      if (parseFloat(st.opacity) === 0) continue;
      let fg, bg;
      if (el instanceof SVGElement) {
        // SVG text is painted with `fill`, over the shapes drawn before it in the same <svg>
        if (st.fill === 'none') continue;
        fg = parse(st.fill); bg = background(el.ownerSVGElement || el);
        const shape = svgShapeBehind(el);
        if (shape !== null && bg !== null) bg = over(shape, bg);
        if (fg !== null) fg = [fg[0], fg[1], fg[2], fg[3] * parseFloat(st.fillOpacity)];
      } else {
        fg = parse(st.color); bg = background(el);
      }
      if (fg === null || bg === null) { unparsed.push(st.color + ' / ' + st.fill); continue; }
      const fgc = over(fg, bg);
      const l1 = lum(fgc), l2 = lum(bg);
      const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      results.push({ratio, text: own.slice(0, 40), tag: el.tagName, cls: String(el.className).slice(0, 60),
                    color: el instanceof SVGElement ? `fill ${st.fill} (${st.fillOpacity})` : st.color, bg: `rgb(${bg.map(Math.round).join(',')})`});
    }
  }
  results.sort((a, b) => a.ratio - b.ratio);
  return {n: results.length, min: results.length ? results[0].ratio : null,
          worst: results.slice(0, 8), unparsed: unparsed.slice(0, 8)};
}
"""

# Frames per second while the notebook scrolls up and down by `step` px per frame around
# the element matching `selector` (kept on screen), for `ms` milliseconds of requestAnimationFrame.
SCROLL_FPS_JS = r"""
async ([selector, ms, step]) => {
  const el = document.querySelector(selector);
  // the notebook's own scroller (JupyterLab 4 and Notebook 7), not a scroll box inside the output
  let sc = el.closest('.jp-WindowedPanel-outer');
  if (!sc) {
    sc = el.parentElement;
    while (sc && !(sc.scrollHeight > sc.clientHeight + 10 &&
                   /(auto|scroll)/.test(getComputedStyle(sc).overflowY))) sc = sc.parentElement;
  }
  if (!sc) return {error: 'no scroll container'};
  el.scrollIntoView({block: 'start'});
  const start = sc.scrollTop; let dir = 1; const span = Math.min(600, el.offsetHeight);
  const t0 = performance.now(); let frames = 0; let last = t0; let worst = 0; let moved = 0;
  await new Promise((resolve) => {
    const tick = (t) => {
      frames++; worst = Math.max(worst, t - last); last = t;
      const before = sc.scrollTop;
      sc.scrollTop += dir * step;
      moved += Math.abs(sc.scrollTop - before);
      if (sc.scrollTop > start + span || sc.scrollTop < start - span) dir = -dir;
      if (t - t0 < ms) requestAnimationFrame(tick); else resolve();
    };
    requestAnimationFrame(tick);
  });
  const r = el.getBoundingClientRect();
  return {fps: frames * 1000 / (last - t0), worst_ms: worst, frames, moved,
          onscreen: r.bottom > 0 && r.top < innerHeight, container: sc.className};
}
"""

# received -> interactive (ms) per output of `kind`, paired by the marks' outputId.
MARKS_JS = r"""
(kind) => {
  const get = (n) => performance.getEntriesByName(n);
  const rec = new Map(get(`jwb:${kind}:received`).map(m => [m.detail && m.detail.outputId, m.startTime]));
  return get(`jwb:${kind}:interactive`).map(m => {
    const id = m.detail && m.detail.outputId;
    return {id, received: rec.get(id), interactive: m.startTime,
            ms: rec.has(id) ? m.startTime - rec.get(id) : null};
  });
}
"""


# -- two big programs, shared by the browser tests and benchmarks/bench_extension.py
FILLER = "print('\\n'.join(f'filler line {i}' for i in range(25)))"
#: a 24-block pre-norm transformer written in a cell as a user would (a Python loop over
#: blocks; functions block / attention / mlp / layernorm, einsum attention as in
#: tests/real_models.py): its gradient's %hlo between filler outputs (scrolling is measured),
#: then the same with the loss's last line changed (the only other 24-block compile)
TRANSFORMER_CELL = (
    """\
import jax, jax.numpy as jnp, numpy as np
HEADS = 4
def layernorm(x, scale, bias):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * scale + bias
def attention(p, x):
    b, t, d = x.shape
    dh = d // HEADS
    q = (x @ p["wq"]).reshape(b, t, HEADS, dh)
    k = (x @ p["wk"]).reshape(b, t, HEADS, dh)
    v = (x @ p["wv"]).reshape(b, t, HEADS, dh)
    scores = jnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(dh)
    scores = jnp.where(jnp.tril(jnp.ones((t, t), dtype=bool)), scores, -1e9)
    out = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(scores, axis=-1), v)
    return out.reshape(b, t, d) @ p["wo"]
def mlp(p, x):
    return jax.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
def block(p, x):
    x = x + attention(p, layernorm(x, p["ln1_scale"], p["ln1_bias"]))
    return x + mlp(p, layernorm(x, p["ln2_scale"], p["ln2_bias"]))
def forward(params, x):
    for p in params:
        x = block(p, x)
    return x
import sys  # the parameters are tests/real_models.py's (same shapes); the code is the cell's
"""
    + f"sys.path.insert(0, {str(ROOT)!r})\n"
    + """\
from tests.real_models import transformer_args
params, x = transformer_args()
"""
)
#: cell indices of the two 24-block gradients and of the small models' %hlo (HLO24_CELLS)
HLO24_GRAD, HLO24_GRAD_ABS = 5, 6
HLO24_NNX, HLO24_EQX, HLO24_SCOPE, HLO24_SCAN = 13, 14, 15, 16
#: the last cell of hlo24.ipynb: what the kernel keeps of the first gradient's output (its
#: ``.text``: all of XLA's text, too big to save) against the text/plain it shows
#: (tests/chromium/test_extension_browser.py reads it with the saved cell)
HLO24_TEXT_FACTS = (
    "import hashlib, json\n"
    f"_shown = Out[{HLO24_GRAD + 1}]\n"
    "_whole = _shown.text\n"
    "_plain = get_ipython().display_formatter.format(_shown)[0]['text/plain']\n"
    "_kept = '\\n'.join(_plain.split('\\n')[:-1])\n"
    "print(json.dumps({'plain_sha256': hashlib.sha256(_plain.encode()).hexdigest(),\n"
    "    'head': _whole[:10], 'newlines': _whole.count('\\n'),\n"
    "    'ends_with_newline': _whole.endswith('\\n'),\n"
    "    'kept_is_its_start': _whole.startswith(_kept + '\\n')}))"
)
#: %%jaxmem, %%jaxprof --compile and %jaxmem on real models, appended to hlo24.ipynb (its
#: kernel already holds the 24-block transformer of TRANSFORMER_CELL): the 24-block
#: gradient's peak and compile time, an NNX train step with optax, an Equinox model and its
#: train step; the last cell prints what the tests check as JSON (MEM24_FACTS)
MEM24_GRAD_SOURCE = (
    "%%jaxmem -t grad\n"
    "def mem_loss(params, x):\n    return jnp.mean(forward(params, x) ** 2)\n"
    "mem_loss(params, x)"
)
MEM24_NNX_SOURCE = """\
%%jaxmem
import optax
from flax import nnx
class MemMLP(nnx.Module):
    def __init__(self, rngs):
        self.linear1 = nnx.Linear(16, 64, rngs=rngs)
        self.dropout = nnx.Dropout(0.1, rngs=rngs)
        self.linear2 = nnx.Linear(64, 4, rngs=rngs)
    def __call__(self, x):
        return self.linear2(self.dropout(nnx.relu(self.linear1(x))))
nnx_model = MemMLP(nnx.Rngs(params=0, dropout=1))
nnx_optimizer = nnx.Optimizer(nnx_model, optax.adamw(1e-3), wrt=nnx.Param)
@nnx.jit
def nnx_train_step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss
nnx_x, nnx_y = jnp.ones((32, 16)), jnp.zeros((32, 4))
nnx_train_step(nnx_model, nnx_optimizer, nnx_x, nnx_y)"""
MEM24_EQX_LIVE_SOURCE = """\
import equinox as eqx
eqx_model = eqx.nn.MLP(16, 4, 64, depth=2, key=jax.random.key(7))
eqx_optim = optax.adam(1e-3)
eqx_state = eqx_optim.init(eqx.filter(eqx_model, eqx.is_array))
%jaxmem"""
MEM24_EQX_STEP_SOURCE = """\
%%jaxmem
@eqx.filter_jit
def eqx_step(model, state, x, y):
    def loss_fn(m):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates, state = eqx_optim.update(grads, state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), state, loss
eqx_step(eqx_model, eqx_state, jnp.ones((32, 16)), jnp.zeros((32, 4)))"""
#: what the kernel's records say (each output's Out[n] is its Display; attributes read the
#: record): the three peaks beside memory_analysis, the compile's coverage and loop advice,
#: the Equinox arrays %jaxmem found against the model's own tree paths
MEM24_FACTS_TEMPLATE = """\
import json
from workbench.views.memory import where_text
def _program(d):
    return {'peak': d.peak_bytes, 'xla_peak': d.xla_reported_peak_bytes,
            'analysis': d.analysis_bytes, 'comparable': d.comparable_bytes,
            'idle_outputs': d.idle_output_bytes, 'output_bytes': d.memory.output_bytes,
            'has_backward': d.has_backward,
            'donation': d.donation.argnums if d.donation is not None else None,
            'saved': [{'where': where_text(s.source), 'bytes': s.bytes} for s in d.saved[:5]],
            'buffers': len(d.buffers)}
_eqx_leaves = jax.tree_util.tree_flatten_with_path(eqx.filter(eqx_model, eqx.is_array))[0]
_eqx_found = {}
for _p, _x in _eqx_leaves:
    _hit = Out[@eqx_live@].find('eqx_model' + jax.tree_util.keystr(_p))
    _eqx_found['eqx_model' + jax.tree_util.keystr(_p)] = [
        _x.nbytes, None if _hit is None else [_hit[0].owner, _hit[1].nbytes]]
print(json.dumps({
    'grad': _program(Out[@grad@]), 'nnx': _program(Out[@nnx@]), 'eqx': _program(Out[@eqx_step@]),
    'blocks': len(params), 'eqx_live': _eqx_found}))"""
HLO24_CELLS = [
    "%load_ext workbench",
    TRANSFORMER_CELL,
    *[FILLER] * 3,
    "def loss(params, x):\n    return jnp.mean(forward(params, x) ** 2)\n"
    "%hlo -t grad loss(params, x)",
    "def loss(params, x):\n    return jnp.mean(jnp.abs(forward(params, x)))\n"
    "%hlo -t grad loss(params, x)",
    *[FILLER] * 6,
    "%%hlo\nfrom flax import nnx\nclass MLP(nnx.Module):\n"
    "    def __init__(self, rngs):\n        self.up = nnx.Linear(8, 16, rngs=rngs)\n"
    "        self.down = nnx.Linear(16, 2, rngs=rngs)\n"
    "    def __call__(self, x):\n        return self.down(jax.nn.relu(self.up(x)))\n"
    "model = MLP(nnx.Rngs(0))\n@nnx.jit\ndef apply(model, x):\n    return model(x)\n"
    "apply(model, jnp.ones((4, 8)))",
    "%%hlo\nimport equinox as eqx\nemlp = eqx.nn.MLP(8, 2, 16, depth=2, key=jax.random.key(3))\n"
    "@eqx.filter_jit\ndef eapply(m, x):\n    return jax.vmap(m)(x)\neapply(emlp, jnp.ones((4, 8)))",
    "%%hlo\ndef scoped(x):\n    with jax.named_scope('encoder'):\n        h = jnp.tanh(x @ x.T)\n"
    "    with jax.named_scope('decoder'):\n        return jnp.sin(h @ x)\nscoped(jnp.ones((8, 8)))",
    "%%hlo\ndef rnn(w, xs):\n    def step(h, x):\n        h = jnp.tanh(w @ h + x)\n"
    "        return h, h.sum()\n    h, s = jax.lax.scan(step, jnp.zeros(16), xs)\n"
    "    return s.sum()\nrnn(jnp.eye(16) * 0.5, jnp.ones((20, 16)))",
    HLO24_TEXT_FACTS,
]
#: cell indices in hlo24.ipynb of the cells above (each cell runs once, in order: its
#: execution count is its index + 1)
MEM24_GRAD, MEM24_NNX, MEM24_EQX_LIVE, MEM24_EQX_STEP, MEM24_FACTS = range(
    len(HLO24_CELLS), len(HLO24_CELLS) + 5
)
HLO24_TEXT_FACTS_CELL = HLO24_CELLS.index(HLO24_TEXT_FACTS)
HLO24_CELLS += [
    MEM24_GRAD_SOURCE,
    MEM24_NNX_SOURCE,
    MEM24_EQX_LIVE_SOURCE,
    MEM24_EQX_STEP_SOURCE,
    re.sub(
        r"@(\w+)@",
        lambda m: str(globals()["MEM24_" + m.group(1).upper()] + 1),
        MEM24_FACTS_TEMPLATE,
    ),
]
#: cell indices in compile24.ipynb of its %%jaxprof --compile and of the cell printing its
#: figures (a cell's execution count is its index + 1)
COMPILE24, COMPILE24_FACTS = 3, 4
#: %%jaxprof --compile on the 24-block gradient, in a notebook of its own: it measures the
#: compile, so its kernel runs with XLA's defaults (hlo24.ipynb's has LLVM at -O0); the last
#: cell prints the compile's figures as JSON
COMPILE24_CELLS = [
    "%load_ext workbench",
    TRANSFORMER_CELL,
    "def mem_loss(params, x):\n    return jnp.mean(forward(params, x) ** 2)",
    "%%jaxprof --compile -t grad\nmem_loss(params, x)",
    f"import json\n_c = Out[{COMPILE24 + 1}]\n"
    "print(json.dumps({'found': _c.phases.found, 'coverage': _c.phases.coverage,\n"
    "    'wall_s': _c.phases.wall_s, 'compile_s': _c.compile_s, 'blocks': len(params),\n"
    "    'loops': [{'function': lp.function, 'calls': lp.calls} for lp in _c.size.loops]}))",
]
assert COMPILE24_CELLS[COMPILE24].startswith("%%jaxprof --compile")
assert len(COMPILE24_CELLS) == COMPILE24_FACTS + 1
#: a 12,000-equation %jaxpr: 6,000 sin + 6,000 add
JAXPR12K_CELLS = [
    "%load_ext workbench\nimport jax.numpy as jnp",
    "def chain(x):\n    for i in range(6000):\n        x = jnp.sin(x) + i\n    return x",
    "%jaxpr chain(jnp.ones(4))",
]

"""The wheel ships the prebuilt JupyterLab extension: users need no Node.js.

Builds the wheel once from this checkout, installs it into a fresh virtualenv and, with no
``node``/``npm`` on PATH, asks JupyterLab (``jupyter labextension list``,
``python -m jupyterlab.browser_check --no-browser-test``) whether the extension is there,
enabled and OK.

The virtualenv sees the site-packages of the environment running the tests (through a
``.pth`` file listing them) so that JAX and JupyterLab are not downloaded again; its own
``workbench`` package and its own ``share/jupyter/labextensions/jax-workbench`` come from the
wheel (pip installs them into the venv, ahead of those directories on ``sys.path``; the test
environment's editable install and its copy of the extension in its prefix's share/ are not on
the venv's Jupyter data path, and the test checks both facts rather than assuming them).
``--system-site-packages`` would not do: run from inside a virtualenv (a nox session, a
developer's venv), a nested venv's "system" is the base interpreter, which has none of the
test environment's packages.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import site
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = "share/jupyter/labextensions/jax-workbench"

pytestmark = pytest.mark.slow

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # No network: the build backends come from the test environment (the `test` extras
    # install hatchling and hatch-jupyter-builder; an isolated build would download them and
    # JupyterLab from PyPI), and --no-index makes any attempt to download fail loudly.
    for backend in ("hatchling", "hatch_jupyter_builder"):
        assert importlib.util.find_spec(backend), f"{backend} is missing: pip install -e '.[test]'"
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        str(ROOT),
        "--no-deps",
        "--no-index",
        "--no-build-isolation",
        "-w",
        str(out),
    ]
    # where the extension is not built yet, the build runs `jupyter labextension build`: the
    # test environment's, found beside its interpreter even when that environment is not
    # activated (`/path/to/venv/bin/python -m pytest`)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=900, env={**os.environ, "PATH": path}
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    wheels = list(out.glob("jax_workbench-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_ships_the_prebuilt_extension_and_schemas(wheel: Path):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        data = [n for n in names if f".data/data/{DIST}/" in n]
        rel = {n.split(f".data/data/{DIST}/", 1)[1] for n in data}
        assert "package.json" in rel and "install.json" in rel, sorted(rel)
        assert any(re.fullmatch(r"static/remoteEntry\.[0-9a-f]+\.js", r) for r in rel), sorted(rel)
        assert "static/style.js" in rel
        pkg = json.loads(z.read(next(n for n in data if n.endswith(f"{DIST}/package.json"))))
        assert pkg["name"] == "jax-workbench"
        assert pkg["jupyterlab"]["_build"]["load"].startswith("static/remoteEntry.")
        install = json.loads(z.read(next(n for n in data if n.endswith(f"{DIST}/install.json"))))
        assert install["packageName"] == "jax-workbench" and install["packageManager"] == "python"
        # every chunk the remote entry names is in the wheel
        entry = pkg["jupyterlab"]["_build"]["load"]
        assert entry in rel
        schemas = {Path(n).name for n in names if n.startswith("workbench/schemas/")}
        expected = {p.name for p in (ROOT / "workbench" / "schemas").glob("*.schema.json")}
        assert expected and expected <= schemas, expected - schemas
        # the built extension is shared data only: not a second copy inside the package
        assert not any(n.startswith("workbench/labextension/") for n in names)
        # no sources or node_modules leak into the wheel
        assert not any("node_modules" in n or n.startswith("extension/") for n in names)


def test_wheel_ships_the_standalone_runtime_inside_the_package(wheel: Path):
    """The runtime outputs embed for front ends without the extension is package data (not
    only the extension's shared data): this checkout's build of it, byte for byte."""
    built = ROOT / "workbench" / "views" / "static" / "standalone.js"
    with zipfile.ZipFile(wheel) as z:
        assert z.read("workbench/views/static/standalone.js") == built.read_bytes()


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel: Path) -> dict:
    d = tmp_path_factory.mktemp("venv")
    venv = d / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    _see_this_environment(py)
    proc = subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--force-reinstall",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    empty = d / "jupyter-home"
    for sub in ("config", "data", "runtime"):
        (empty / sub).mkdir(parents=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("JUPYTER") and k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    env.update(
        PATH=str(venv / "bin"),  # only the venv: no node, no npm (checked below)
        HOME=str(empty),
        VIRTUAL_ENV=str(venv),
        JUPYTER_CONFIG_DIR=str(empty / "config"),
        JUPYTER_DATA_DIR=str(empty / "data"),
        JUPYTER_RUNTIME_DIR=str(empty / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
    )
    return {"dir": venv, "python": py, "env": env}


def _test_environment_site_dirs() -> list[str]:
    """The directories this interpreter imports installed packages from: its site-packages
    (a virtualenv's own, or the system Python's) and the user site, where enabled."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        dirs.append(site.getusersitepackages())
    return [d for d in dirs if os.path.isdir(d)]


def _see_this_environment(py: Path) -> None:
    """Let the venv import this environment's packages: one ``.pth`` line per site
    directory, appended to ``sys.path`` after the venv's own site-packages (so the wheel's
    ``workbench`` wins). A ``.pth`` line adds the directory only; the ``.pth`` files inside
    it (the editable install's path hook among them) are not run, so this checkout is not
    importable in the venv (``test_venv_uses_its_own_workbench_and_extension``)."""
    own = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    lines = [d for d in _test_environment_site_dirs() if Path(d).resolve() != Path(own).resolve()]
    assert lines, "no site-packages found for the test environment"
    (Path(own) / "_test_environment.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run(venv: dict, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv["python"]), *args],
        capture_output=True,
        text=True,
        env=venv["env"],
        cwd=venv["dir"],
        timeout=timeout,
    )


def _run_json(venv: dict, code: str) -> Any:
    """Run ``code`` with the venv's Python and read the JSON its last line prints (what it
    printed before, warnings from imports, stays out of the way); it must exit 0."""
    proc = _run(venv, "-c", code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_no_node_on_the_venv_path(venv: dict):
    import shutil

    for tool in ("node", "npm", "jlpm"):
        assert shutil.which(tool, path=venv["env"]["PATH"]) is None, tool
    proc = _run(venv, "-c", "import shutil; print(shutil.which('node'), shutil.which('npm'))")
    assert proc.stdout.split() == ["None", "None"], proc.stdout + proc.stderr


def test_venv_uses_its_own_workbench_and_extension(venv: dict):
    code = (
        "import json, workbench\n"
        "from jupyter_core.paths import jupyter_path\n"
        "from jupyterlab_server.config import get_federated_extensions\n"
        "ext = get_federated_extensions(jupyter_path('labextensions'))['jax-workbench']\n"
        "print(json.dumps({'workbench': workbench.__file__, 'ext': ext['ext_path'],"
        " 'load': ext['jupyterlab']['_build']['load'], 'paths': jupyter_path('labextensions')}))\n"
    )
    info = _run_json(venv, code)
    site = str(venv["dir"].resolve())
    assert Path(info["workbench"]).resolve().is_relative_to(site), info  # not the editable one
    assert Path(info["ext"]).resolve() == (venv["dir"] / DIST).resolve(), info
    assert info["load"].startswith("static/remoteEntry.")
    assert (venv["dir"] / DIST / info["load"]).is_file()
    # the base environment's copy (from the editable install) is not on the venv's data path
    assert not any(
        Path(p).resolve() == Path(sys.prefix, DIST).parent.resolve() for p in info["paths"]
    ), info["paths"]


def test_labextension_list_reports_enabled_and_ok(venv: dict):
    proc = _run(venv, "-m", "jupyterlab.labextensions", "list")
    out = _ANSI.sub("", proc.stdout + proc.stderr)
    assert proc.returncode == 0, out
    sections: dict[str, list[str]] = {}
    current = ""
    for line in out.splitlines():
        if line.strip().endswith("labextensions") and not line.startswith(" "):
            current = line.strip()
            sections[current] = []
        elif current:
            sections[current].append(line.strip())
    ours = [
        (path, line)
        for path, lines in sections.items()
        for line in lines
        if line.startswith("jax-workbench ")
    ]
    assert len(ours) == 1, out  # exactly one copy, ...
    path, line = ours[0]
    assert Path(path).resolve() == (venv["dir"] / DIST).parent.resolve(), out  # ... the venv's
    assert re.search(r"jax-workbench v\S+ enabled OK \(python, jax-workbench\)", line), line
    assert "disabled" not in line and "X" not in line.split("OK")[0]


def test_browser_check_passes_without_node(venv: dict):
    args = ["--allow-root"] if os.geteuid() == 0 else []
    proc = _run(venv, "-m", "jupyterlab.browser_check", "--no-browser-test", *args, timeout=300)
    out = _ANSI.sub("", proc.stdout + proc.stderr)
    assert proc.returncode == 0, out[-6000:]
    assert "jax-workbench" not in out or "error" not in out.lower(), out[-6000:]


def test_doctor_reports_the_extension_enabled_from_the_venv(venv: dict):
    proc = _run(venv, "-m", "workbench.apps.cli", "doctor", timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    line = next((ln for ln in out.splitlines() if ln.startswith("JupyterLab extension")), "")
    assert "jax-workbench: enabled" in line, out[-3000:]
    assert str((venv["dir"] / DIST).resolve()) in line or str(venv["dir"] / DIST) in line, line


def test_outputs_embed_the_runtime_where_there_is_no_node(venv: dict):
    """Installed from the wheel, with no Node.js anywhere: a jaxpr's text/html carries the
    runtime and the data it draws."""
    code = (
        "import json, jax.numpy as jnp, workbench\n"
        "from workbench.views._standalone import embedded_data, runtime_base64\n"
        "d = workbench.jaxpr(lambda x: jnp.sin(x) * 2, jnp.ones(3))\n"
        "html = d._repr_mimebundle_()['text/html']\n"
        "print(json.dumps({'runtime': runtime_base64() in html and len(runtime_base64()) > 1000,"
        " 'data': sorted(embedded_data(html)), 'file': workbench.__file__}))\n"
    )
    out = _run_json(venv, code)
    assert out["runtime"] and str(venv["dir"]) in out["file"], out
    assert out["data"] == ["application/vnd.jax-workbench.jaxpr+json", "text/plain"], out

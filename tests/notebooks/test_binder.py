"""Binder, simulated: what repo2docker builds from ``binder/`` runs the tutorials.

repo2docker clones the repository (tracked files only), picks the Python that
``binder/runtime.txt`` names, runs ``pip install -r binder/requirements.txt`` from the
repository root, then ``binder/postBuild`` if there is one, and starts the server through
``binder/start``. The slow test below does the same on this machine: a copy of the tracked
files, a fresh virtualenv with that Python (no ``--system-site-packages``: everything comes
from what ``binder/`` installs), the environment ``binder/start`` sets, Jupyter's and
IPython's directories isolated and no ``PYTHONPATH`` pointing at this checkout. In that
environment JupyterLab must list the extension enabled and OK, and every notebook of
``tutorials.ALL`` (the tour and each topic notebook, exercises holding their solutions) must
run with nbclient and a kernel of the virtualenv, without error output; always all of them,
whatever time the install took. No kernel outlives its notebook, and the temporary copy,
virtualenv and Jupyter directories are removed at the end.

The quick tests check the files themselves, and that the README's Binder link is built from
the repository URL recorded in ``pyproject.toml`` and opens the tour.
"""

from __future__ import annotations

import fnmatch
import glob
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import nbformat
import pytest

from tests import tutorials
from workbench.views._standalone import STATIC_KINDS

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
BRANCH = "main"  # the branch the README's Binder link builds
TOUR_PATH = "notebooks/00_tour.ipynb"
INSTALL_TIMEOUT_S = 900
# Every notebook runs in the simulation, the tour first: no time budget decides which.
BINDER_NOTEBOOKS = list(tutorials.ALL)
NOTEBOOK_TIMEOUT_S = int(tutorials.TIME_LIMIT_S)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _repository_url() -> str:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return meta["project"]["urls"]["Repository"]


# --- quick: the files and the README's link -------------------------------------------------


def test_readme_binder_link_is_built_from_the_repository_url():
    repo = urlparse(_repository_url())
    assert repo.scheme == "https" and repo.netloc == "github.com", repo
    owner, name = repo.path.strip("/").split("/")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\((https://mybinder\.org/v2/[^)\s]+)\)", readme)
    assert links, "README.md has no Binder link"
    for link in links:  # the badge's target and the text link alike
        u = urlparse(link)
        assert u.path == f"/v2/gh/{owner}/{name}/{BRANCH}", link
        assert parse_qs(u.query) == {"urlpath": [f"lab/tree/{TOUR_PATH}"]}, link
    assert "https://mybinder.org/badge_logo.svg" in readme
    assert (ROOT / TOUR_PATH).is_file()
    # the badge sits next to the set-up commands
    setup = readme.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    assert "mybinder.org/v2/gh/" in setup
    # binder/README.md says which repository location the link assumes
    assert _repository_url() in (BINDER / "README.md").read_text(encoding="utf-8")


def test_readme_tutorials_section_links_every_notebook_once():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Tutorials\n", 1)[1].split("\n## ", 1)[0]
    linked = re.findall(r"\]\(notebooks/([\w.]+)\.ipynb\)", section)
    assert linked == tutorials.ALL, linked  # in order, each once


def test_binder_simulation_runs_every_notebook_with_no_budget():
    """Every notebook of tutorials.ALL runs in the simulated Binder, the tour first, and
    nothing in this module skips one for time."""
    assert BINDER_NOTEBOOKS == tutorials.ALL and BINDER_NOTEBOOKS[0] == tutorials.TOUR
    for fn in (_build, _run_in_binder, test_binder_runs_every_notebook):
        assert "skip" not in inspect.getsource(fn), fn.__name__


def test_binder_files_follow_repo2docker_rules():
    reqs = [
        ln.strip()
        for ln in (BINDER / "requirements.txt").read_text().splitlines()
        if ln.strip() and not ln.strip().startswith("#")
    ]
    # the package itself with its `cluster` extra (ipyparallel: tutorial 05 starts two JAX
    # processes); repo2docker installs nothing by itself
    assert reqs == [".[cluster]"], reqs
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), runtime
    minor = int(runtime.split(".")[1])
    assert minor >= 12, "JAX newer than 0.10 needs Python 3.12"
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["requires-python"] == ">=3.11"
    start = (BINDER / "start").read_text()
    assert start.startswith("#!/bin/bash\n")
    assert start.rstrip().splitlines()[-1] == 'exec "$@"'
    assert os.access(BINDER / "start", os.X_OK)
    if (ROOT / ".git").exists():  # the mode the clone gets is the index's
        mode = subprocess.run(
            ["git", "ls-files", "-s", "binder/start"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()[0]
        assert mode == "100755", mode
    post = BINDER / "postBuild"
    if post.exists():
        lines = [ln for ln in post.read_text().splitlines() if ln and not ln.startswith("#")]
        assert lines[0].strip() == "set -e", lines[:1]
    # with a binder/ folder repo2docker ignores root-level configuration: none to mislead
    for name in ("requirements.txt", "environment.yml", "runtime.txt", "postBuild", "start"):
        assert not (ROOT / name).exists(), name


@pytest.mark.parametrize(
    "before",
    [
        None,
        "",
        "--xla_cpu_enable_fast_math=false",
        "--xla_force_host_platform_device_count=2 --foo=1",
    ],
)
def test_binder_start_sets_eight_cpu_devices(before):
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_PLATFORMS")}
    if before is not None:
        env["XLA_FLAGS"] = before
    out = subprocess.run(
        [
            str(BINDER / "start"),
            sys.executable,
            "-c",
            "import json, os; print(json.dumps(dict(os.environ)))",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    got = json.loads(out.stdout)
    flags = got["XLA_FLAGS"].split()
    assert flags[-1] == "--xla_force_host_platform_device_count=8"
    assert sum(f.startswith("--xla_force_host_platform_device_count") for f in flags) == 1
    kept = [f for f in (before or "").split() if "device_count" not in f]
    assert flags[:-1] == kept
    assert got["JAX_PLATFORMS"] == "cpu"


# --- slow: the simulated Binder build --------------------------------------------------------


def _tracked_copy(dest: Path) -> None:
    """The files repo2docker's clone has: git's files (tracked, and new ones not ignored,
    which the next commit would add), or without .git the checkout minus what .gitignore
    names (build outputs, node_modules)."""
    if (ROOT / ".git").exists():
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        for rel in filter(None, out.split("\0")):
            src = ROOT / rel
            if src.is_file():  # a tracked file deleted in the working tree is not copied
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / rel)
        return
    _copy_without_ignored(ROOT, dest)


def _copy_without_ignored(src: Path, dest: Path) -> None:
    """Copy ``src`` to ``dest`` leaving out .git and what the .gitignore files (the root's
    and nested ones, each anchored at its folder) name."""
    rules: list[tuple[str, str]] = []  # (folder relative to src, pattern)

    def ignored(rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if name == ".git":
            return True
        for base, pat in rules:
            if base and not rel.startswith(base + "/"):
                continue
            inner = rel[len(base) + 1 :] if base else rel
            if "/" in pat.rstrip("/"):  # anchored at the .gitignore's folder
                if fnmatch.fnmatch(inner, pat.strip("/")):
                    return True
            elif fnmatch.fnmatch(name, pat.rstrip("/")):
                return True
        return False

    for folder, dirs, files in os.walk(src):
        base = Path(folder).relative_to(src).as_posix()
        base = "" if base == "." else base
        gi = Path(folder) / ".gitignore"
        if gi.is_file():
            rules.extend(
                (base, ln.strip())
                for ln in gi.read_text().splitlines()
                if ln.strip() and not ln.startswith(("#", "!"))
            )
        dirs[:] = [d for d in dirs if not ignored(f"{base}/{d}" if base else d)]
        for f in files:
            rel = f"{base}/{f}" if base else f
            if not ignored(rel):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(folder) / f, dest / rel)


def test_copy_without_git_leaves_out_ignored_build_outputs(tmp_path):
    """Without .git the simulation copies the checkout minus what the .gitignore files name,
    compared here with git's own answer for this checkout."""
    if not (ROOT / ".git").exists():
        pytest.skip("no git metadata to compare with")
    dest = tmp_path / "copy"
    _copy_without_ignored(ROOT, dest)
    copied = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}
    git = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    expected = {f for f in git.split("\0") if f and (ROOT / f).is_file()}
    assert copied == expected, (sorted(copied - expected)[:10], sorted(expected - copied)[:10])


def _runtime_python() -> tuple[str, str]:
    """The interpreter binder/runtime.txt names, and the version it reports."""
    version = (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")
    home = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [
        shutil.which(f"python{version}"),
        f"/usr/bin/python{version}",
        f"/usr/local/bin/python{version}",
        *sorted(
            glob.glob(str(home / "versions" / f"{version}*" / "bin" / "python3")), reverse=True
        ),
    ]
    for c in filter(None, candidates):
        try:  # a pyenv shim exists even where the version is not selected: ask it
            got = subprocess.run(
                [c, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout.strip()
        except OSError:
            continue
        if got == version:
            return c, version
    warnings.warn(
        f"binder/runtime.txt asks for Python {version}, not found on this machine: "
        f"the Binder simulation uses this interpreter ({sys.version.split()[0]}) "
        "instead",
        stacklevel=2,
    )
    return sys.executable, f"{sys.version_info[0]}.{sys.version_info[1]}"


# binder_seconds: kernel start to the reply of the learner's last cell (argv[5]: its index)
_RUNNER = r"""
import json, sys, time
import nbformat
from nbclient import NotebookClient
src, out, cwd = sys.argv[1:4]
last = int(sys.argv[5])
nb = nbformat.read(src, as_version=4)
client = NotebookClient(nb, timeout=int(sys.argv[4]), kernel_name="python3",
                        resources={"metadata": {"path": cwd}}, allow_errors=True)
start = time.monotonic()
done = []
client.on_cell_executed = lambda **kw: (
    done.append(time.monotonic()) if kw["cell_index"] == last else None)
client.execute()
nb.metadata["binder_seconds"] = (done[0] if done else time.monotonic()) - start
nbformat.write(nb, out)
"""

_PROBE = (
    "import json as _j, os as _o, resource as _r, sys as _s, jax as _jax, "
    "workbench as _wb\n"
    "print('binder-probe', _j.dumps({'executable': _s.executable, "
    "'workbench': _wb.__file__, 'jax': _jax.__version__, "
    "'devices': _jax.device_count(), 'platform': _jax.default_backend(), "
    "'peak_rss_kib': " + tutorials.PEAK_RSS_KIB_EXPR + "}))"
)


def _processes_under(path: Path) -> list[int]:
    """This user's processes whose command line names something under ``path`` (the kernels
    of the virtualenv: their interpreter and connection file live there)."""
    me, found = os.getuid(), []
    needle = str(path).encode()
    for d in Path("/proc").glob("[0-9]*"):
        try:
            if int(d.name) == os.getpid() or d.stat().st_uid != me:
                continue
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue  # gone meanwhile, or not ours to read
        if any(needle in a for a in argv):
            found.append(int(d.name))
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _none_left(path: Path, grace_s: float = 15.0) -> list[int]:
    """Wait up to ``grace_s`` for the processes under ``path`` to exit; those still running."""
    end = time.monotonic() + grace_s
    while (left := _processes_under(path)) and time.monotonic() < end:
        time.sleep(0.2)
    return left


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory):
    t0 = time.monotonic()
    base = tmp_path_factory.mktemp("binder")
    try:
        yield _build(base, t0)
    finally:  # no kernel outlives the simulation, and its files (a venv of ~1 GB) go
        _kill(_processes_under(base))
        shutil.rmtree(base, ignore_errors=True)


def _build(base: Path, t0: float) -> dict:
    repo = base / "repo"
    repo.mkdir()
    _tracked_copy(repo)
    python, version = _runtime_python()
    venv = base / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
    home = base / "home"
    dirs = {
        k: home / k.lower()
        for k in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR")
    }
    for d in dirs.values():
        d.mkdir(parents=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JUPYTER", "JAX_", "XLA_", "PYTEST", "COV_"))
        and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "IPYTHONDIR")
    }
    env.update({k: str(v) for k, v in dirs.items()})
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONNOUSERSITE="1",
    )
    lock = (repo / "extension" / "package-lock.json").read_bytes()
    pip = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-r",
            "binder/requirements.txt",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    assert pip.returncode == 0, (pip.stdout + pip.stderr)[-6000:]
    # npm installed what the lock file pins; it did not re-resolve it
    assert (repo / "extension" / "package-lock.json").read_bytes() == lock
    post = repo / "binder" / "postBuild"
    if post.exists():
        proc = subprocess.run(
            [str(post)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
        )
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    installed = time.monotonic() - t0
    # the environment binder/start gives the server, and so every kernel
    proc = subprocess.run(
        [
            str(repo / "binder" / "start"),
            str(venv / "bin" / "python"),
            "-c",
            "import json, os; print(json.dumps(dict(os.environ)))",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    started = json.loads(proc.stdout)
    assert "PYTHONPATH" not in started
    return {
        "repo": repo,
        "venv": venv,
        "python": venv / "bin" / "python",
        "env": started,
        "version": version,
        "base": base,
        "install_s": installed,
        "t0": t0,
    }


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.binder
def test_binder_installs_the_extension_enabled_and_ok(binder_env):
    print(f"binder: Python {binder_env['version']}, installed in {binder_env['install_s']:.0f} s")
    missing = [
        b for b in ("jupyter", "jupyter-lab") if not (binder_env["venv"] / "bin" / b).exists()
    ]
    assert not missing, f"pip install -r binder/requirements.txt installed no {missing}"
    proc = subprocess.run(
        [str(binder_env["venv"] / "bin" / "jupyter"), "labextension", "list"],
        cwd=binder_env["repo"],
        env=binder_env["env"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = _ANSI.sub("", proc.stdout + proc.stderr)
    assert proc.returncode == 0, out
    ours = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("jax-workbench ")]
    assert len(ours) == 1, out
    assert re.match(r"jax-workbench v\S+ enabled OK", ours[0]), out
    # listed under the virtualenv's share/, the copy pip installed there
    section = out.split(ours[0])[0].strip().splitlines()
    heads = [ln for ln in section if ln.strip().endswith("labextensions")]
    assert (
        heads
        and Path(heads[-1].strip().split()[0]).resolve()
        == (binder_env["venv"] / "share" / "jupyter" / "labextensions").resolve()
    ), out
    # python -c from the repository root imports the installed package, not the copy
    proc = subprocess.run(
        [str(binder_env["python"]), "-c", "import sys, workbench; print(workbench.__file__)"],
        cwd=binder_env["base"],
        env=binder_env["env"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert Path(proc.stdout.strip()).is_relative_to(binder_env["venv"]), proc


def _run_in_binder(binder_env, name: str):
    """Run ``name`` as :func:`tests.tutorials.run` would (the learner's notebook, then each
    stub's check and the peak memory), in the Binder virtualenv, plus a probe of where it
    ran; :func:`tests.tutorials.remember` keeps the run for the tutorials' own checks."""
    repo = binder_env["repo"]
    src = repo / "notebooks" / f"{name}.ipynb"
    committed = nbformat.read(src, as_version=4)
    nb, main_count = tutorials.learner_notebook(committed)
    nb.cells.append(nbformat.v4.new_code_cell(_PROBE))
    todo = binder_env["base"] / f"{name}.in.ipynb"
    done = binder_env["base"] / f"{name}.out.ipynb"
    nbformat.write(nb, todo)
    runner = binder_env["base"] / "run_notebook.py"
    runner.write_text(_RUNNER)
    # nbclient of the virtualenv, its python3 kernel (ipykernel installed by binder/); the
    # runner in a session of its own, so that a timeout ends it and its children
    proc = subprocess.Popen(
        [
            str(binder_env["python"]),
            str(runner),
            str(todo),
            str(done),
            str(repo / "notebooks"),
            str(NOTEBOOK_TIMEOUT_S),
            str(main_count - 1),
        ],
        cwd=repo / "notebooks",
        env=binder_env["env"],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=NOTEBOOK_TIMEOUT_S + 120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        _kill(_processes_under(binder_env["base"]))  # the kernel runs in its own session
        pytest.fail(f"{name} on Binder did not finish: {output[-6000:]}")
    assert proc.returncode == 0, output[-6000:]
    # nbclient shut its kernel down: nothing of the virtualenv is left running
    left = _none_left(binder_env["base"])
    _kill(left)
    assert not left, f"{name}: processes left running after the notebook: {left}"
    ran = nbformat.read(done, as_version=4)
    tutorials.remember(
        tutorials.collect(name, committed, ran, main_count, ran.metadata["binder_seconds"])
    )
    learner = [c for c in ran.cells[:main_count] if c.cell_type == "code"]
    code = [c for c in ran.cells if c.cell_type == "code"]
    problems = []
    for c in learner:
        tags = tutorials.tags(c)
        for o in c.outputs:
            if o.output_type == "error" and "raises-exception" not in tags:
                problems.append((c.source[:80], o["ename"], o["evalue"][:500]))
            if o.output_type == "stream" and o.name == "stderr" and "stderr-expected" not in tags:
                problems.append((c.source[:80], "stderr", o.text[:500]))
        if "raises-exception" in tags and not [o for o in c.outputs if o.output_type == "error"]:
            problems.append((c.source[:80], "expected an error", ""))
        # the package as Binder installs it ships the standalone runtime: with no extension
        # listening, every workbench output's text/html carries its data and the runtime
        for o in c.outputs:
            html = o.get("data", {}).get("text/html", "")
            kind = re.search(r'<div class="jwb-out" data-jwb-kind="([\w-]+)"', html)
            if (
                kind
                and kind.group(1) not in STATIC_KINDS
                and not ('class="jwb-data"' in html and 'class="jwb-runtime"' in html)
            ):
                problems.append(
                    (c.source[:80], f"{kind.group(1)}: no runtime in its text/html", "")
                )
    probe_text = tutorials.printed(code[-1])
    assert "binder-probe" in probe_text, code[-1].outputs
    probe = json.loads(probe_text.split("binder-probe", 1)[1])
    probe["seconds"] = ran.metadata["binder_seconds"]
    print(
        f"binder {name}: {probe['seconds']:.0f} s, JAX {probe['jax']}, "
        f"peak RSS {probe['peak_rss_kib'] / 1024:.0f} MiB"
    )
    assert not problems, f"{name} on Binder (JAX {probe['jax']}): {problems}"
    # the kernel was the virtualenv's, and imported the workbench pip installed there
    venv = binder_env["venv"].resolve()
    assert Path(probe["executable"]).resolve().is_relative_to(venv) or Path(
        probe["executable"]
    ).parent.resolve() == (venv / "bin"), probe
    assert Path(probe["workbench"]).resolve().is_relative_to(venv), probe
    assert not Path(probe["workbench"]).resolve().is_relative_to(ROOT), probe
    assert probe["devices"] == 8 and probe["platform"] == "cpu", probe
    assert probe["seconds"] <= tutorials.TIME_LIMIT_S, probe
    assert probe["peak_rss_kib"] * 1024 < 1024**3, probe
    return probe


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.binder
@pytest.mark.parametrize("name", BINDER_NOTEBOOKS)
def test_binder_runs_every_notebook(binder_env, name, record_property):
    """The tour, then each topic notebook as the learner finishes it (exercise cells holding
    their solutions), on Binder's Python and JAX: every one, every time."""
    assert tutorials.path(name).is_file(), f"notebooks/{name}.ipynb is missing"
    probe = _run_in_binder(binder_env, name)
    record_property("jax_version", probe["jax"])
    record_property("seconds", round(probe["seconds"], 1))

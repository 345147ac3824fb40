"""The test sessions: ``nox`` runs what CI runs (``.ci/run`` ends with the README's command).

Default sessions, in this order:

``oldest``
    the quick loop (``-m "not slow"``: Python tests, mypy, ruff, tsc, vitest, ESLint, Prettier)
    and the slow tests whose checks differ by JAX version (``jax_process``: JAX started in a
    second process; ``jax_versions``: JAX's tracing names, XLA's dumps) on Python 3.11 with the
    oldest JAX ``pyproject.toml`` allows (``jax>=X`` installs ``X``);
``full``
    the whole suite but the Binder simulation on Python 3.12 with the newest JAX the package
    index serves, ``-n 2`` (pytest-xdist; browser tests sharing a server keep to one worker
    through ``--dist loadfile``);
``binder``
    the Binder simulation (``-m binder``: a fresh virtualenv from ``binder/``, every tutorial),
    which installs the package the way repo2docker does and so takes its own time, and the
    tutorials' own checks, which read the notebooks it executed (each tutorial runs once).

Not run by default: ``quick``, the quick loop on Python 3.12 with the newest JAX (the
developer's loop: ``nox -s quick``, then ``nox -R -s quick`` to reuse its virtualenv without
reinstalling).  Arguments after ``--`` go to pytest: ``nox -s quick -- tests/test_views.py -x``.

The JupyterLab extension is built once, here, not once per virtualenv: ``npm ci`` when
``extension/node_modules`` does not match ``package-lock.json`` and ``npm run build`` when the
build in ``workbench/labextension`` is missing or older than its sources; each session's
``pip install -e .`` then skips npm (``HATCH_JUPYTER_BUILDER_SKIP_NPM``).  Virtualenvs are
made and filled by uv where it is installed (``pip install "nox[uv]"``, as the README's test
command does): from uv's cache, shared by all sessions and runs, a session's install takes
seconds; without uv, by venv and pip.

Interpreters come from this machine, never downloaded: ``python3.X`` on PATH when it runs,
else pyenv's ``versions/3.X.*`` (pyenv puts a ``python3.12`` shim on PATH that fails while
3.12 is installed but not selected).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
EXT = ROOT / "extension"
# nox loads this file by its path, not from a folder on sys.path: the checkout's own helper
# (standard library only) is imported from the checkout
sys.path.insert(0, str(ROOT))
from tests import extension_build  # noqa: E402

nox.needs_version = ">=2025.5.1"
# uv when installed (`pip install "nox[uv]"`): it installs from its own cache, which pip's HTTP
# cache is no match for here (the registry's responses are not cached by pip at all); else venv
nox.options.default_venv_backend = "uv|venv"
nox.options.download_python = "never"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["oldest", "full", "binder"]

NO_NPM = {"HATCH_JUPYTER_BUILDER_SKIP_NPM": "1"}
# loadfile: a module's tests stay on one worker, in order (many build a shell's state cell by
# cell). Not loadgroup: with pytest 9 and pytest-xdist 3.8 its xdist_group marks group nothing.
# --no-loadscope-reorder: modules are handed out in the order tests/conftest.py gives them
# (longest work first), not by their number of tests
XDIST = ("-n", "2", "--dist", "loadfile", "--no-loadscope-reorder")


def _pyenv_root() -> Path:
    if os.environ.get("PYENV_ROOT"):
        return Path(os.environ["PYENV_ROOT"])
    pyenv = shutil.which("pyenv")
    if pyenv:
        out = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    return Path.home() / ".pyenv"


def _interpreter(candidate: str, version: str) -> str | None:
    """The real executable behind ``candidate`` if it runs, is Python ``version`` and can make
    a virtualenv (Debian's own pythons need python3-venv for that); None otherwise."""
    code = (
        "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2]); print(sys.executable)"
    )
    try:
        out = subprocess.run([candidate, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    if out.returncode != 0 or len(lines) != 2 or lines[0] != version:
        return None
    return lines[1]


def find_python(version: str) -> str:
    """An interpreter for Python ``version`` ("3.12") on this machine, as an absolute path.

    Where there is none, a warning says what was tried and the version string is returned:
    the sessions needing it then fail (``error_on_missing_interpreters``) and the others run.
    """
    tried = []
    on_path = shutil.which(f"python{version}")
    if on_path:
        tried.append(on_path)
    root = _pyenv_root()
    installed = glob.glob(str(root / "versions" / f"{version}.*" / "bin" / f"python{version}"))

    def patch(path: str) -> int:
        m = re.search(rf"/versions/{re.escape(version)}\.(\d+)/", path)
        return int(m.group(1)) if m else -1

    tried += sorted(installed, key=patch, reverse=True)
    for candidate in tried:
        found = _interpreter(candidate, version)
        if found:
            return found
    print(
        f"noxfile.py: no working Python {version} on this machine (tried: "
        f"{', '.join(tried) or f'python{version} on PATH (none), {root}/versions/{version}.*'}); "
        f"the sessions on Python {version} fail. Install it, e.g. `pyenv install {version}`.",
        file=sys.stderr,
    )
    return version


PY_OLDEST = find_python("3.11")
PY_NEWEST = find_python("3.12")


def _lower_bound(name: str) -> str:
    """``X`` from the ``name>=X`` requirement in pyproject.toml's dependencies."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "dependencies"
    ]
    for dep in deps:
        m = re.fullmatch(rf"{re.escape(name)}\s*>=\s*([0-9][\w.]*)", dep.strip())
        if m:
            return m.group(1)
    raise ValueError(f"pyproject.toml has no `{name}>=...` dependency")


def _timed(session: nox.Session, what: str, t0: float) -> None:
    session.log(f"{what} took {time.monotonic() - t0:.0f} s")


def _node_modules(session: nox.Session) -> None:
    """``npm ci`` unless extension/node_modules was installed from the current lock file
    (scripts/npm-ci.mjs decides, the same rule as for ``pip install -e .``)."""
    t0 = time.monotonic()
    with session.chdir(EXT):
        session.run("node", "scripts/npm-ci.mjs", "install", external=True)
    _timed(session, "npm ci", t0)


def _build_extension(session: nox.Session) -> None:
    """``npm run build`` (workbench/labextension and the standalone runtime in
    workbench/views/static/) when either is missing or older than its sources: the rule
    tests/extension_build.py states, which the tests' own check (tests/browser.py) shares."""
    why = extension_build.stale_reason()
    if why is None:
        session.log("the extension's builds are newer than their sources: no build")
        return
    session.log(f"the extension is built: {why}")
    t0 = time.monotonic()
    with session.chdir(EXT):
        session.run("npm", "run", "build", external=True)
    _timed(session, "the extension build", t0)


def _bytecode_cache_on(session: nox.Session) -> None:
    """Python's bytecode cache on for this session's commands, whatever the machine says.

    Some machines (ours, CI's) set ``PYTHONDONTWRITEBYTECODE=1``, and uv installs without
    compiling: then every Python process of the suite (hundreds: xdist workers, kernels,
    JupyterLab servers, CLI and cluster processes) compiled JAX, NumPy, IPython, Jupyter and
    this package from source again, 2 to 4 s of CPU each (``import jax, IPython`` took 2.3 s
    against 0.7 s with the cache), and pytest rewrote and compiled every test module again in
    each worker (10 s of a 2-core machine).  With it on, the first import of a module writes
    its ``__pycache__`` (in the session's virtualenv and the checkout, both git-ignored) and
    every later process reads it, as in any Python installation."""
    session.env["PYTHONDONTWRITEBYTECODE"] = None  # None: removed from the commands' env


def _install(session: nox.Session, *extra: str) -> None:
    """This checkout with its test extras (npm skipped: see the module doc), then ``extra``."""
    _bytecode_cache_on(session)
    t0 = time.monotonic()
    # pip too: the wheel test builds with `python -m pip wheel` (uv's virtualenvs have no pip)
    session.install("pip", "-e", ".[test]", *extra, env=NO_NPM)
    session.run(
        "python",
        "-c",
        "import sys, jax, jaxlib; "
        "print(f'Python {sys.version.split()[0]}, jax {jax.__version__}, jaxlib {jaxlib.__version__}')",
    )
    _timed(session, "the install", t0)


def _pytest(session: nox.Session, *args: str) -> None:
    t0 = time.monotonic()
    # --tb=short: a failure is its test's failing line and message, so a CI log cut to its
    # head and tail still says what failed (a long browser test's whole source did not fit)
    session.run("python", "-m", "pytest", "-q", "--tb=short", *args, *session.posargs)
    _timed(session, "pytest", t0)


@nox.session(python=PY_OLDEST)
def oldest(session: nox.Session) -> None:
    """The quick loop on Python 3.11 and the oldest JAX the package allows."""
    _node_modules(session)
    _install(session, f"jax=={_lower_bound('jax')}", f"jaxlib=={_lower_bound('jaxlib')}")
    _build_extension(session)  # the standalone runtime every output's text/html carries
    # and the slow tests of a fresh JAX process or of JAX's and XLA's internals: what they
    # check differs by JAX version
    _pytest(session, *XDIST, "-m", "not slow or jax_process or jax_versions")


@nox.session(python=PY_NEWEST)
def full(session: nox.Session) -> None:
    """Every test but the Binder simulation, on Python 3.12 and the newest JAX."""
    _node_modules(session)
    _install(session, "--upgrade", "jax", "jaxlib")
    _build_extension(session)  # after the install: `jupyter labextension build` is the venv's
    _pytest(session, *XDIST, "-m", "not binder", "--durations=30")


@nox.session(python=PY_NEWEST)
def binder(session: nox.Session) -> None:
    """The Binder simulation, repo2docker's install from binder/ and every tutorial, then the
    tutorials' checks on those runs.

    It makes its own fresh virtualenv; this session's virtualenv runs pytest and the checks'
    own JAX computations.  test_binder.py is collected first (pytest takes a folder's files in
    name order), so every tutorial has run in Binder's environment before a check reads it.
    npm ci and the build are no-ops after the other sessions; run alone, they give the
    checkout the runtime the outputs carry."""
    _node_modules(session)
    _install(session)
    _build_extension(session)
    # one process (no -n): a check reads the run test_binder.py remembered in it, and a
    # tutorial Binder did not run fails its checks rather than running here unseen
    session.env["WORKBENCH_TEST_TUTORIALS_FROM_BINDER"] = "1"  # tests/tutorials.py
    _pytest(session, "-m", "binder", "--durations=15", "tests/notebooks/")


@nox.session(python=PY_NEWEST, default=False)
def quick(session: nox.Session) -> None:
    """The quick loop on Python 3.12 and the newest JAX: the developer's loop."""
    _node_modules(session)
    _install(session, "--upgrade", "jax", "jaxlib")
    _build_extension(session)
    _pytest(session, *XDIST, "-m", "not slow")

"""The layer rule as checked contracts: `lint-imports` over the import-linter contracts in
pyproject.toml (engine -> views -> front doors; no display code in the engine, no JAX in
the views; JAX internals only through workbench.engine._jax_compat; the side panel's
modules imported by the extension loader only, never by a magic)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lint_imports(cwd: Path, pythonpath: list[Path]) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports")
    cmd = (
        [exe]
        if exe
        else [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command; "
            "sys.exit(lint_imports_command())",
        ]
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in pythonpath))
    return subprocess.run(
        [*cmd, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_import_contracts_are_kept():
    out = _lint_imports(ROOT, [ROOT])
    report = out.stdout + out.stderr
    assert out.returncode == 0, report
    # every contract ran (a contract that failed to load would not be listed as kept)
    for name in (
        "above views above engine",
        "Only the extension loader imports the side panel",
        "engine imports no display",
        "Views import no JAX",
        "Only workbench.engine._jax_compat",
    ):
        assert f"{name}" in report and "BROKEN" not in report, report


def test_private_imports_contract_finds_each_form(tmp_path):
    """The custom contract (tests/contracts.py) on a package with two allowed shims (a
    module, and a package whose submodules are allowed too) and private imports written
    every way: each is reported, public ones are not, and neither is a module inside the
    allowed package, while a sibling whose name merely starts like it is."""
    pkg = tmp_path / "pkg"
    (pkg / "compat").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "shim.py": "from jax._src import core\n",
        "public.py": "import jax\nimport jaxlib\nfrom jax import numpy\n",
        "direct.py": "from jax._src import core\n",
        "dotted.py": "import jax._src.dispatch as d\n",
        "attribute.py": "from jax import _src\n",
        "lib.py": "def f():\n    from jaxlib import xla_client\n    return xla_client\n",
        "multiline.py": "from jax._src.lib import (\n    xla_client,\n)\n",
        "compat/__init__.py": "from jax._src import config\nfrom pkg.compat.core import core\n",
        "compat/core.py": "from jax._src import core\n",
        "compat_extra.py": "from jax._src import dispatch\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    (tmp_path / ".importlinter").write_text(
        textwrap.dedent("""\
        [importlinter]
        root_package = pkg
        include_external_packages = True
        contract_types =
            private_imports: tests.contracts.PrivateImportsContract

        [importlinter:contract:internals]
        name = Only the shims touch JAX internals
        type = private_imports
        source_modules = pkg
        private_modules =
            jax._src
            jaxlib.*
        allowed_importers =
            pkg.shim
            pkg.compat
        """)
    )
    out = _lint_imports(tmp_path, [tmp_path, ROOT])
    report = out.stdout + out.stderr
    assert out.returncode == 1 and "BROKEN" in report, report
    for bad in ("direct", "dotted", "attribute", "lib", "multiline", "compat_extra"):
        assert f"- pkg.{bad} " in report, (bad, report)
    for good in ("shim", "public", "compat", "compat.core"):
        assert f"- pkg.{good} " not in report, (good, report)


def test_a_magic_importing_the_side_panel_breaks_the_contract(tmp_path):
    """The side panel contract of pyproject.toml, run on a copy of the package in which a
    magic imports the side panel's comm module and another its messages: both reported."""
    shutil.copytree(
        ROOT / "workbench",
        tmp_path / "workbench",
        ignore=shutil.ignore_patterns("labextension", "__pycache__"),
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for name, line in (
        ("jaxpr_magics.py", "from workbench.ipython import sidepanel  # noqa: F401\n"),
        ("bench_magics.py", "from workbench.views import sidepanel_messages  # noqa: F401\n"),
    ):
        magic = tmp_path / "workbench" / "ipython" / name
        magic.write_text(magic.read_text() + line)
    out = _lint_imports(tmp_path, [tmp_path, ROOT])
    report = out.stdout + out.stderr
    assert out.returncode == 1, report
    broken = report.split("Broken contracts", 1)[-1]
    assert "Only the extension loader imports the side panel" in broken, report
    assert "workbench.ipython.jaxpr_magics -> workbench.ipython.sidepanel" in broken, report
    assert "workbench.ipython.bench_magics -> workbench.views.sidepanel_messages" in broken, report

"""One version for both packages: ``extension/package.json`` is the only place it is written.

The Python distribution takes it from there at build time (hatch-nodejs-version, configured in
``pyproject.toml``), ``workbench.__version__`` reads the installed distribution's metadata, and
the built extension (``workbench/labextension/package.json``, which ``jupyter labextension
list`` and the side panel's handshake show) is copied from the same file by the build.
"""

from __future__ import annotations

import json
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.version import Version

import workbench

ROOT = Path(__file__).resolve().parents[2]


def _npm_version() -> str:
    return json.loads((ROOT / "extension" / "package.json").read_text(encoding="utf-8"))["version"]


def test_pyproject_takes_the_version_from_the_extension_package():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in meta["project"]["dynamic"] and "version" not in meta["project"]
    assert meta["tool"]["hatch"]["version"] == {
        "source": "nodejs",
        "path": "extension/package.json",
    }
    assert any(r.startswith("hatch-nodejs-version") for r in meta["build-system"]["requires"])
    # no second copy of the version in the Python sources
    init = (ROOT / "workbench" / "__init__.py").read_text(encoding="utf-8")
    assert not re.search(r"__version__\s*=\s*['\"]", init)


def test_python_and_extension_versions_agree():
    from hatch_nodejs_version.version_source import NodeJSVersionSource

    expected = Version(NodeJSVersionSource.node_version_to_python(_npm_version()))
    assert Version(workbench.__version__) == expected
    assert Version(metadata.version("jax-workbench")) == expected


def test_built_extension_carries_the_same_version():
    built = ROOT / "workbench" / "labextension" / "package.json"
    if not built.is_file():
        pytest.skip("extension not built here (cd extension && npm run build)")
    assert json.loads(built.read_text(encoding="utf-8"))["version"] == _npm_version()

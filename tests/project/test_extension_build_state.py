"""The rule by which noxfile.py and the browser tests rebuild the extension
(tests/extension_build.py), on a small tree of files standing for the checkout's."""

from __future__ import annotations

import os

import pytest

from tests import extension_build


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A built checkout in miniature: one source, one schema, the build's outputs, each a
    second newer than the one before, as a build leaves them."""
    src, schemas = tmp_path / "src", tmp_path / "schemas"
    lab, standalone = tmp_path / "labextension", tmp_path / "standalone.js"
    files = {
        "source": src / "view.ts",
        "schema": schemas / "bench.schema.json",
        "standalone": standalone,
        "package": lab / "package.json",
        "remote": lab / "static" / "remoteEntry.abc.js",
        "style": lab / "static" / "style.js",
    }
    for k, (_, f) in enumerate(files.items()):
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("x")
        os.utime(f, (1000 + k, 1000 + k))
    monkeypatch.setattr(extension_build, "ROOT", tmp_path)
    monkeypatch.setattr(extension_build, "LABEXTENSION", lab)
    monkeypatch.setattr(extension_build, "STANDALONE", standalone)
    monkeypatch.setattr(extension_build, "SOURCES", ((src, "*"), (schemas, "*.json")))
    return files


def test_a_build_newer_than_its_sources_is_current(tree):
    assert extension_build.stale_reason() is None


def test_a_source_edited_after_the_build_makes_it_stale(tree):
    os.utime(tree["source"], (2000, 2000))
    assert extension_build.stale_reason() == "sources changed since the last build: src/view.ts"


def test_a_schema_newer_than_the_labextension_makes_it_stale(tree):
    """Newer than the labextension's files though older than the runtime: the older of the
    two outputs decides."""
    os.utime(tree["standalone"], (3000, 3000))
    os.utime(tree["schema"], (2000, 2000))
    assert "schemas/bench.schema.json" in (extension_build.stale_reason() or "")


def test_python_written_beside_the_schemas_is_not_a_source(tree):
    cache = tree["schema"].parent / "__pycache__" / "__init__.cpython-312.pyc"
    cache.parent.mkdir()
    cache.write_text("x")
    assert extension_build.stale_reason() is None


@pytest.mark.parametrize("output", ["standalone", "remote", "style", "package"])
def test_a_missing_output_is_not_built(tree, output):
    tree[output].unlink()
    why = extension_build.stale_reason() or ""
    assert why.startswith("not built: no ") and tree[output].name.split(".")[0] in why, why

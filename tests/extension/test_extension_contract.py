"""The contract the extension is built against: its TypeScript types are the ones generated
from the JSON Schemas, none is copied by hand, and its test fixtures are payloads of the
schemas' current versions.

The generated types are committed (``extension/src/generated/``, so a build needs neither
the generator nor Python); these checks keep them honest.  They need ``extension/node_modules``
(``cd extension && npm ci``) and fail without it, as the other extension checks do.
"""

from __future__ import annotations

import ast
import filecmp
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from jsonschema import ValidationError

from workbench import schemas

EXT = Path(__file__).resolve().parents[2] / "extension"
GENERATED = EXT / "src" / "generated"
FIXTURES = EXT / "test" / "fixtures"
#: fixtures that are not payloads: texts the Python views print, number formats
NOT_PAYLOADS = {"bench-format", "bench-texts", "cache-texts", "memory-texts"}
#: fixtures of one hlo graph (the view models' clustering and layout tests)
HLO_GRAPHS = {"hlo-4layer-graph", "hlo-straight-graph"}


def _schema_types(folder: Path) -> list[str]:
    """The generated TypeScript files under ``folder`` (the worker bundles beside them are not)."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*.ts")
        if not p.name.endswith(".worker-source.ts")
    )


def test_generated_types_are_current(tmp_path):
    """``npm run generate`` would change nothing: the committed types are the schemas'."""
    node = shutil.which("node")
    assert node, "Node.js is needed to check the generated types"
    assert (EXT / "node_modules" / "json-schema-to-typescript").is_dir(), (
        "extension/node_modules is missing: run `cd extension && npm ci`"
    )
    out = tmp_path / "generated"
    proc = subprocess.run(
        [node, "scripts/generate-types.mjs", "--out", str(out)],
        cwd=EXT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fresh, committed = _schema_types(out), _schema_types(GENERATED)
    assert fresh == committed, "generated files differ: run `cd extension && npm run generate`"
    stale = [f for f in fresh if not filecmp.cmp(out / f, GENERATED / f, shallow=False)]
    assert not stale, f"{stale} are not current: run `cd extension && npm run generate`"


#: a declaration of a type (``interface X``, ``type X =``), not an ``import type { X }``
DECLARATION = re.compile(
    r"^\s*(?:export\s+)?(?:declare\s+)?"
    r"(?:(?:interface|class|enum)\s+([A-Za-z_]\w*)|type\s+([A-Za-z_]\w*)\s*(?:<[^=]*>)?\s*=)",
    re.M,
)


def _declared(path: Path) -> list[str]:
    return [a or b for a, b in DECLARATION.findall(path.read_text())]


def test_no_hand_written_copy_of_a_schema_type():
    """Every name the schemas define (a definition's title, a payload's root type) is declared
    only in src/generated/; the rest of the extension imports it."""
    generated = set()
    for rel in _schema_types(GENERATED):
        generated |= set(_declared(GENERATED / rel))
    titles = {
        d["title"]
        for s in [
            schemas.common_schema(),
            *(schemas.comm_schema(c) for c in schemas.comms()),
            *(schemas.schema_for(schemas.mime_type(k)) for k in schemas.kinds()),
        ]
        for d in s.get("$defs", {}).values()
    }
    assert titles <= generated, f"not generated: {sorted(titles - generated)}"
    copies = []
    for folder in (EXT / "src", EXT / "test"):
        for path in sorted(folder.rglob("*.ts")):
            if GENERATED in path.parents:
                continue
            for name in _declared(path):
                if name in generated:
                    copies.append(f"{path.relative_to(EXT)}: {name}")
    assert not copies, "hand-written copies of generated types:\n" + "\n".join(copies)


def _fixtures() -> list[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.json"))


def test_every_fixture_is_known():
    payloads = [f for f in _fixtures() if f not in NOT_PAYLOADS | HLO_GRAPHS]
    assert payloads, "no payload fixtures found"
    assert (NOT_PAYLOADS | HLO_GRAPHS) <= set(_fixtures())


def _written_by_make_fixtures() -> set[str]:
    """The fixture names ``make_fixtures.py`` writes: the literal first argument of each
    ``_save(...)`` call and the names in its ``CACHE_NAMES`` table (read, not run: running it
    takes minutes of JAX)."""
    tree = ast.parse((FIXTURES / "make_fixtures.py").read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_save"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(node.args[0].value)
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "CACHE_NAMES" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            names |= {v.value for v in node.value.values if isinstance(v, ast.Constant)}
    return names


def test_one_command_writes_every_fixture():
    """``make_fixtures.py`` rebuilds exactly the fixtures the tests read: none is left to go
    stale under an old name, none is written that nothing reads."""
    written = _written_by_make_fixtures()
    assert written, "no _save(...) calls found in make_fixtures.py"
    on_disk = set(_fixtures())
    assert sorted(on_disk - written) == [], "fixtures make_fixtures.py does not rebuild"
    assert sorted(written - on_disk) == [], "make_fixtures.py writes fixtures that are not here"


@pytest.mark.parametrize("name", _fixtures())
def test_fixture_is_a_current_payload(name):
    """Each fixture validates against its schema at the schema's version: the TypeScript is
    tested against what today's kernel sends (make_fixtures.py rebuilds them all)."""
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    if name in NOT_PAYLOADS:
        return
    if name in HLO_GRAPHS:
        schemas.validate_definition("urn:jax-workbench:schema:hlo#/$defs/graph", data)
        return
    bundle = data if "kind" not in data else {schemas.mime_type(data["kind"]): data}
    ours = {m: p for m, p in bundle.items() if schemas.kind_of(m) is not None}
    assert ours, f"{name}: neither a payload nor a bundle with one"
    for mime, payload in ours.items():
        schemas.validate(mime, payload)
        current = schemas.schema_for(mime)["properties"]["version"]["const"]
        assert payload["version"] == current, f"{name}: v{payload['version']}, schema v{current}"


def test_a_stale_fixture_would_fail():
    """The check above is not vacuous: an older version, or a payload of the wrong shape, fails."""
    payload = json.loads((FIXTURES / "jaxpr-control-flow.json").read_text())
    mime = schemas.mime_type("jaxpr")
    with pytest.raises(ValidationError):
        schemas.validate(mime, {**payload, "version": payload["version"] - 1})
    graph = json.loads((FIXTURES / "hlo-straight-graph.json").read_text())
    with pytest.raises(ValidationError):
        schemas.validate_definition(
            "urn:jax-workbench:schema:hlo#/$defs/graph", {**graph, "nodes": "none"}
        )

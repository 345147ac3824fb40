"""The JSON Schemas are contracts: one per payload kind, real payloads pass, broken ones fail.

Every bundle built anywhere in the suite is also validated by the autouse fixture in
``conftest.py``; here each kind is built on purpose (so none goes unchecked), and
mutated payloads (a field missing, a field of the wrong type, a wrong kind, an unknown
field) are shown to fail, so the schemas are precise enough to catch a broken producer.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from jsonschema import Draft202012Validator, ValidationError

import workbench
from tests.programs import small_sweep, two_process_cluster_report
from workbench import schemas
from workbench.engine.memory.program import build_program_memory
from workbench.engine.sharding.mesh_explorer import ExplorerConfig, explore
from workbench.engine.stages import Inspection
from workbench.views import (
    bench,
    cache,
    cluster,
    compile_time,
    hlo,
    jaxpr,
    memory,
    mesh_explorer,
    profile,
    sharding,
)
from workbench.views.display import View

SCHEMA_DIR = Path(schemas.__file__).parent
VIEW_MODULES = (
    jaxpr,
    hlo,
    bench,
    sharding,
    mesh_explorer,
    cache,
    profile,
    compile_time,
    memory,
    cluster,
)


def _views() -> list[View]:
    return [v for m in VIEW_MODULES for v in vars(m).values() if isinstance(v, View)]


def _loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def _with_cond(x):
    return jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x) + 1.0


def _sharded(x):
    return jnp.sum(x, axis=0)


@pytest.fixture(scope="module")
def payloads(shell) -> dict[str, list[dict]]:
    """At least one real payload of every kind, built through the front doors."""
    out: dict[str, list[dict]] = {}

    def add(display_or_bundle):
        bundle = (
            display_or_bundle
            if isinstance(display_or_bundle, dict)
            else display_or_bundle._repr_mimebundle_()
        )
        for mime, data in bundle.items():
            kind = schemas.kind_of(mime)
            if kind is not None:
                out.setdefault(kind, []).append(data)

    w, x = jnp.ones((4, 4)), jnp.ones((2, 4))
    add(workbench.jaxpr(_loss, w, x, transforms="grad"))
    add(workbench.jaxpr(_with_cond, jnp.ones(3)))  # nested jaxprs, literals
    add(
        workbench.jaxpr(
            _loss,
            w,
            jnp.ones((3, 2, 4)),
            transforms=["grad", "vmap(in_axes=(None, 0))"],
            compare=True,
        )
    )
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    xs = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))
    add(workbench.hlo(_sharded, xs))  # collectives
    add(workbench.hlo(_with_cond, jnp.ones(3)))  # control-flow graphs
    add(workbench.hlo(_loss, w, x, stage="lowered"))
    add(workbench.bench({"a": jax.jit(_loss), "b": _loss}, w, x, budget=0.05, progress=False))
    add(small_sweep())
    add(workbench.sharding({"x": xs, "y": jnp.ones(3)}))
    first = explore(
        ExplorerConfig(
            operation="matmul", shape="64, 64", spec="data, model", rhs_spec="model, None"
        )
    )
    add(mesh_explorer.explorer_bundle(first))
    add(
        mesh_explorer.explorer_bundle(
            explore(
                ExplorerConfig(
                    operation="matmul", shape="64, 64", spec="data, None", rhs_spec="None, None"
                ),
                first,
            )
        )
    )  # with a diff
    add(mesh_explorer.explorer_bundle(explore(ExplorerConfig())))  # layout only
    # the cache kinds, as the kernel shows them: the compile line, %jaxcache, %jaxcache persist
    shell.run_cell(
        "import jax.numpy as jnp\n_schema_f = jax.jit(lambda v: v + 1)\n"
        "_schema_f(jnp.ones(3)); _schema_f(jnp.ones(4))",
        store_history=True,
    )
    add(cache.cache_display(workbench.cache()))
    add(cache.persistent_bundle(workbench.cache().persistent))
    from workbench.engine.cache import CACHE

    runs = [r.cell_run for r in CACHE.snapshot().records if r.cell_run is not None]
    add(cache.cell_bundle(CACHE.cell_summary(max(runs), "1")))
    add(workbench.profile(_loss, w, x, n=2))  # a real CPU profile
    shell.user_ns.update(_schema_loss=_loss, _schema_w=w, _schema_x=x)
    compiled = shell.run_cell("%jaxprof --compile _schema_loss(_schema_w, _schema_x)")
    add(shell.display_formatter.format(compiled.result)[0])  # a real compile's profile
    add(workbench.memory())  # the live arrays by owner
    add(memory.program_display(build_program_memory(Inspection(_loss, (w, x), {}))))
    add(cluster.cluster_display(two_process_cluster_report(_loss, w, x)))
    return out


def test_one_schema_file_per_kind_and_each_is_valid():
    files = sorted(p.name for p in SCHEMA_DIR.glob("*.json"))
    assert files == sorted(f"{k}.schema.json" for k in [*schemas.kinds(), *schemas.SHARED])
    view_kinds = {v.kind for v in _views()}
    assert view_kinds == set(schemas.kinds()), "every view's kind has a schema and vice versa"
    for kind in schemas.kinds():
        s = schemas.schema_for(schemas.mime_type(kind))
        Draft202012Validator.check_schema(s)
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert s["$id"] == f"urn:jax-workbench:schema:{kind}"
        assert s["title"] == schemas.mime_type(kind)
        assert {"version", "kind"} <= set(s["required"])
        assert s["properties"]["kind"] == {"const": kind}


def _refs(node):
    """Every ``$ref`` in a schema, depth first."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _every_schema() -> list[dict]:
    return [
        *(schemas.schema_for(schemas.mime_type(k)) for k in schemas.kinds()),
        schemas.common_schema(),
        *(schemas.comm_schema(c) for c in schemas.comms()),
    ]


def test_shared_definitions_live_once_in_the_common_schema():
    common = schemas.common_schema()
    Draft202012Validator.check_schema(common)
    assert common["$id"] == "urn:jax-workbench:schema:common"
    assert "kind" not in common.get("properties", {}), "the common schema is not a payload"
    shared = set(common["$defs"])
    for name in ("source_line", "call_site", "compile_record", "miss_reason", "origin", "seconds"):
        assert name in shared, name
    # no other schema defines a definition of the same name again
    for schema in _every_schema():
        if schema is not common:
            again = shared & set(schema.get("$defs", {}))
            assert not again, f"{schema['$id']} defines {sorted(again)} again"


def test_every_reference_resolves_within_the_package():
    """Every ``$ref`` names a schema of the package (``urn:jax-workbench:schema:...``) or a
    place in its own file, and lands on a definition: validation never needs a network."""
    ids = {s["$id"]: s for s in _every_schema()}
    for schema in ids.values():
        for ref in _refs(schema):
            base, _, pointer = ref.partition("#")
            target = ids[base] if base else schema
            assert base == "" or base in ids, f"{schema['$id']}: {ref} is not one of ours"
            for part in [p for p in pointer.split("/") if p]:
                assert part in target, f"{schema['$id']}: {ref} does not resolve"
                target = target[part]


def test_every_definition_has_a_unique_title():
    """Each definition's ``title`` is the name of its generated TypeScript type: present and
    unique across every schema, so the generated names are stable and never collide."""
    seen: dict[str, str] = {}
    for schema in _every_schema():
        for name, definition in schema.get("$defs", {}).items():
            title = definition.get("title")
            assert isinstance(title, str) and title.isidentifier(), f"{schema['$id']}#{name}"
            assert title not in seen, f"{title} titles {seen.get(title)} and {schema['$id']}#{name}"
            seen[title] = f"{schema['$id']}#{name}"


def test_every_kind_built_and_valid(payloads):
    assert set(payloads) == set(schemas.kinds())
    for kind, items in payloads.items():
        for p in items:
            assert p["kind"] == kind and list(p)[:2] == ["version", "kind"]  # one envelope
            schemas.validate(schemas.mime_type(kind), p)
            json.dumps(p, allow_nan=False)


def _first_dict_with(obj, key):
    """The first nested dict holding ``key`` (depth first), for targeted mutations."""
    if isinstance(obj, dict):
        if key in obj:
            return obj
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            found = _first_dict_with(v, key)
            if found is not None:
                return found
    return None


#: (kind, key of a nested field, a value of the wrong type)
NESTED = [
    ("jaxpr", "primitive", 3),
    ("jaxpr", "weak_type", "no"),
    ("jaxpr-compare", "equations", "14"),
    ("hlo", "bytes_moved", "64"),
    ("hlo", "stage", "optimized"),
    ("hlo", "replica_groups", "[[0,1]]"),
    ("bench", "samples", [0.1, "fast"]),
    ("bench", "median", "1 ms"),
    ("sharding", "devices", "0,1"),
    ("sharding", "axis_types", ["Sometimes"]),
    ("mesh-explorer", "operation", "conv"),
    ("mesh-explorer", "collective_bytes", -1),
    ("cache", "compiles", 1.5),
    ("cache", "persistent_cache", {"directory": None}),
    ("cache-cell", "functions", {}),
    ("cache-persistent", "hits", None),
    ("profile", "seconds", "1 ms"),
    ("profile", "bound", "latency"),
    ("profile", "coverage", "95%"),
    ("profile", "coverage", 1.5),  # a fraction of the step: never over 1
    ("compile-time", "kind", "hlo pass"),
    ("compile-time", "instruction_share", 2.0),
]


@pytest.mark.parametrize("kind,key,bad", NESTED)
def test_a_wrong_field_type_fails(payloads, kind, key, bad):
    good = copy.deepcopy(payloads[kind][0])
    target = _first_dict_with(good, key)
    assert target is not None, f"no {key!r} in the {kind} payload"
    target[key] = bad
    with pytest.raises(ValidationError):
        schemas.validate(schemas.mime_type(kind), good)


@pytest.mark.parametrize("kind", sorted(schemas.kinds()))
def test_missing_wrong_or_extra_fields_fail(payloads, kind):
    mime = schemas.mime_type(kind)
    good = payloads[kind][0]
    for field in schemas.schema_for(mime)["required"]:
        broken = {k: v for k, v in good.items() if k != field}
        with pytest.raises(ValidationError):
            schemas.validate(mime, broken)
    for field, bad in (
        ("kind", "other"),
        ("version", str(good["version"])),
        ("version", good["version"] + 1),
        ("not_in_the_contract", 1),
    ):
        with pytest.raises(ValidationError):
            schemas.validate(mime, {**good, field: bad})


def test_lookup_comes_from_the_mime_type():
    assert schemas.kind_of("application/vnd.jax-workbench.cache-cell+json") == "cache-cell"
    assert schemas.kind_of("text/html") is None
    with pytest.raises(schemas.UnknownPayload):
        schemas.schema_for("application/vnd.jax-workbench.no-such-kind+json")
    with pytest.raises(schemas.UnknownPayload):
        schemas.validate("text/plain", "x")


@pytest.mark.slow  # a fresh interpreter
def test_schemas_module_needs_neither_jax_nor_jsonschema_to_load():
    """The schemas are readable on their own (a front end's build, a CI step): loading the
    module and a schema imports no JAX, and jsonschema only when validating."""
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('wb_schemas', {str(SCHEMA_DIR / '__init__.py')!r},"
        f" submodule_search_locations=[{str(SCHEMA_DIR)!r}])\n"
        "m = importlib.util.module_from_spec(spec); sys.modules['wb_schemas'] = m\n"
        "spec.loader.exec_module(m)\n"
        f"assert m.kinds() == {schemas.kinds()!r}, m.kinds()\n"
        "m.schema_for(m.mime_type('hlo'))\n"
        "assert 'jax' not in sys.modules and 'jsonschema' not in sys.modules\n"
        "m.validate(m.mime_type('cache-persistent'), {'version': 1, 'kind': 'cache-persistent',"
        " 'directory': None, 'min_compile_time_s': 1.0, 'min_entry_size_bytes': 0,"
        " 'max_size_bytes': -1, 'hits': 0, 'misses': 0, 'written': 0, 'time_saved_s': 0.0})\n"
        "assert 'jsonschema' in sys.modules and 'jax' not in sys.modules\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_docs_point_to_the_schemas():
    docs = Path(__file__).parents[2] / "docs"
    text = "".join(p.read_text() for p in docs.glob("mime-*.md"))
    for kind in schemas.kinds():
        assert f"workbench/schemas/{kind}.schema.json" in text, kind

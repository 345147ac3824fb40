"""Compact payloads: ``packed`` (gzip + base64) for big hlo/jaxpr fields, ``unpack`` back,
the 24-layer ``%%hlo`` within 1.5 MB, every equation of a big jaxpr in its JSON, and the
pytree summaries (``trees``) of arguments and results."""

from __future__ import annotations

import base64
import copy
import gzip
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jsonschema import ValidationError

import workbench
from tests.programs import sin_chain
from workbench import schemas
from workbench.engine.jaxpr.trees import Node, summarize
from workbench.views._envelope import PACK_OVER, pack
from workbench.views._standalone import embedded_data
from workbench.views.hlo import HLO_MIME
from workbench.views.jaxpr import JAXPR_MIME

# -- pack / unpack ---------------------------------------------------------------------------


def test_small_fields_stay_plain_and_big_ones_are_packed_in_place():
    small = {"version": 1, "kind": "k", "a": [1, 2], "b": "x"}
    assert pack(small, ["a", "b"]) is small
    big = {"version": 1, "kind": "k", "a": list(range(PACK_OVER // 3)), "c": 1, "b": "x" * 10}
    out = pack(big, ["a", "b"])
    assert list(out) == ["version", "kind", "packed", "c"]  # where the first packed field was
    p = out["packed"]
    assert p["encoding"] == "gzip+base64" and p["fields"] == ["a", "b"]
    inner = json.loads(gzip.decompress(base64.b64decode(p["data"])))
    assert inner == {"a": big["a"], "b": big["b"]}
    assert schemas.unpack(out) == big and list(schemas.unpack(out)) == [
        "version",
        "kind",
        "a",
        "b",
        "c",
    ]
    assert len(p["data"]) < len(json.dumps(big["a"])) / 2
    assert schemas.unpack(small) is small


def test_unpack_refuses_what_it_cannot_restore():
    out = pack({"a": list(range(PACK_OVER))}, ["a"])
    with pytest.raises(ValueError, match="encoding"):
        schemas.unpack({**out, "packed": {**out["packed"], "encoding": "brotli"}})
    with pytest.raises(ValueError, match="fields"):
        schemas.unpack({**out, "packed": {**out["packed"], "fields": ["a", "b"]}})


LINKS = 1500  # 3,000 equations: over the 64 KiB packing threshold


@pytest.fixture(scope="module")
def big_jaxpr() -> dict:
    return workbench.jaxpr(sin_chain(LINKS), jnp.ones(4))._repr_mimebundle_(include={JAXPR_MIME})[
        JAXPR_MIME
    ]


def test_big_jaxpr_carries_every_equation_packed(big_jaxpr):
    n = LINKS
    payload = big_jaxpr
    assert payload["version"] == 3 and "packed" in payload
    assert "jaxpr" not in payload and "avals" not in payload
    assert payload["packed"]["fields"] == ["avals", "jaxpr"]
    schemas.validate(JAXPR_MIME, payload)
    data = schemas.unpack(payload)
    schemas.validate(JAXPR_MIME, data)
    assert not data["truncated"] and len(data["jaxpr"]["eqns"]) == 2 * n
    assert [e["primitive"] for e in data["jaxpr"]["eqns"]][:2] == ["sin", "add"]
    # a packed payload with a broken inner field is caught by validating the unpacked one
    broken = copy.deepcopy(data)
    broken["jaxpr"]["eqns"][0]["primitive"] = 3
    with pytest.raises(ValidationError):
        schemas.validate(JAXPR_MIME, schemas.unpack(pack(broken, ["avals", "jaxpr"])))


def test_the_schemas_describe_packed(big_jaxpr):
    # the envelope is the shared definition; each kind says what its data holds
    envelope = schemas.common_schema()["$defs"]["packed"]
    assert envelope["properties"]["encoding"] == {"const": schemas.PACKED_ENCODING}
    assert envelope["properties"]["data"]["contentEncoding"] == "base64"
    assert envelope["properties"]["data"]["contentMediaType"] == "application/gzip"
    for kind, fields in (("hlo", ["graphs", "module"]), ("jaxpr", ["avals", "jaxpr"])):
        s = schemas.schema_for(schemas.mime_type(kind))
        packed = s["properties"]["packed"]
        assert packed["$ref"] == "urn:jax-workbench:schema:common#/$defs/packed"
        assert set(packed["properties"]["data"]["contentSchema"]["properties"]) == set(fields)
    with pytest.raises(ValidationError):  # both the fields and packed: not allowed
        p = big_jaxpr
        schemas.validate(JAXPR_MIME, {**schemas.unpack(p), "packed": p["packed"]})


def test_small_hlo_stays_plain_with_op_names_and_no_layouts():
    d = workbench.hlo(lambda x: jnp.tanh(x) * 2, jnp.ones(4))
    payload = d._repr_mimebundle_()[HLO_MIME]
    assert payload["version"] == 3 and "packed" not in payload and "layouts" not in payload
    nodes = next(iter(payload["graphs"].values()))["nodes"]
    fusion = next(n for n in nodes if n["kind"] == "fusion")
    assert fusion["op_name"].startswith("jit(<lambda>)/") and fusion["op_name"].rsplit("/", 1)[
        1
    ] in ("tanh", "mul")


@pytest.mark.slow  # compiles the 24-layer gradient (a few seconds)
def test_24_layer_hlo_fits_the_notebook_budget():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_jaxpr import init_params, make_loss

    params, x = init_params()
    d = workbench.hlo(jax.grad(make_loss()), params, x)
    bundle = d._repr_mimebundle_()
    from bench_notebook_size import GOALS, stored_sizes

    sizes = stored_sizes(bundle)  # as nbformat saves them
    assert d.text == d.report.text  # exactly JAX's text, whatever the budget
    # the summary, the runtime and the data (payload and text/plain, gzipped) for the runtime
    assert sizes["text/html"] <= 480_000
    assert sum(sizes.values()) <= GOALS["hlo"], sizes
    payload = bundle[HLO_MIME]
    assert payload["packed"]["fields"] == ["graphs", "module"]
    full = schemas.unpack(payload)
    entry = next(iter(full["graphs"].values()))
    assert len(entry["nodes"]) == len(next(iter(d.report.graphs.values())).nodes) > 1000
    assert sum(1 for n in entry["nodes"] if n.get("op_name", "").startswith("jit(loss)")) > 900
    html = bundle["text/html"]
    assert 'data-jwb="top-fusions"' in html and "<a " not in html
    assert embedded_data(html) == {HLO_MIME: full, "text/plain": bundle["text/plain"]}


# -- trees ----------------------------------------------------------------------------------


def _leaf(aval: str) -> Node:
    return Node("leaf", aval=aval)


def test_tree_summaries_collapse_what_repeats():
    layer = Node(
        "dict", tuple(_leaf("f32[128,128]") for _ in range(5)), keys=("w1", "w2", "wk", "wq", "wv")
    )
    assert (
        summarize(Node("list", (layer,) * 24)) == "list[24] of {w1, w2, wk, wq, wv: f32[128,128]}"
    )
    mixed = Node("dict", (_leaf("f32[4]"), _leaf("i32[]")), keys=("a", "b"))
    assert summarize(mixed) == "{a: f32[4], b: i32[]}"
    assert summarize(Node("tuple", (mixed, mixed))) == "tuple[2] of {a: f32[4], b: i32[]}"
    assert (
        summarize(Node("list", tuple(_leaf(f"f32[{i}]") for i in range(1, 7))))
        == "[f32[1], f32[2], f32[3], f32[4], …+2]"
    )
    assert summarize(Node("tuple", (_leaf("f32[]"),))) == "(f32[],)"
    assert summarize(Node("none")) == "None"
    long = Node(
        "list", tuple(Node("dict", (_leaf("f32[2]"),), keys=(f"k{i}" * 40,)) for i in range(4))
    )
    assert len(summarize(long)) <= 200


def test_trees_in_payload_and_header():
    params = [{"w1": jnp.ones((8, 8)), "wq": jnp.ones((8, 8))} for _ in range(3)]

    def loss(ps, x, *, scale=1.0):
        for p in ps:
            x = jnp.tanh(x @ p["w1"] @ p["wq"])
        return jnp.sum(x) * scale

    d = workbench.jaxpr(loss, params, jnp.ones((2, 8)), transforms="grad")
    bundle = d._repr_mimebundle_()
    trees = bundle[JAXPR_MIME]["trees"]
    assert trees["in"] == [
        {"name": "ps", "summary": "list[3] of {w1, wq: f32[8,8]}", "leaves": 6},
        {"name": "x", "summary": "f32[2,8]", "leaves": 1},
    ]
    assert trees["out"] == [
        {"name": "out", "summary": "list[3] of {w1, wq: f32[8,8]}", "leaves": 6}
    ]
    head = bundle["text/html"].split('class="jwb-hist"')[0]
    assert "ps: list[3] of {w1, wq: f32[8,8]}, x: f32[2,8]" in head
    assert head.count("f32[8,8]") == 2  # not one per leaf


def test_trees_name_keywords_and_tuple_results():
    d = workbench.jaxpr(lambda a, b=None: (a, {"q": a, "r": (a, b)}), 1.0, b=jnp.ones(3))
    trees = d._repr_mimebundle_()[JAXPR_MIME]["trees"]
    assert [t["name"] for t in trees["in"]] == ["a", "b"]
    assert [(t["name"], t["summary"]) for t in trees["out"]] == [
        ("out[0]", "f32[]"),
        ("out[1]", "{q: f32[], r: (f32[], f32[3])}"),
    ]


def test_trees_of_custom_nodes_and_a_broken_tree_never_fail(monkeypatch):
    from workbench.engine.jaxpr import trees as tr

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    jax.tree_util.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    d = workbench.jaxpr(lambda p: p.a + p.b, Pair(jnp.ones(2), jnp.ones(2)))
    (t,) = d._repr_mimebundle_()[JAXPR_MIME]["trees"]["in"]
    assert t == {"name": "p", "summary": "Pair(f32[2], f32[2])", "leaves": 2}

    def broken(*a, **k):
        raise RuntimeError("no")

    monkeypatch.setattr(tr, "from_treedef", broken)
    d = workbench.jaxpr(lambda x, y: x * y, jnp.ones(2), 2.0)
    trees = d._repr_mimebundle_()[JAXPR_MIME]["trees"]
    assert [t["name"] for t in trees["in"]] == ["arg0", "arg1"]


def test_packing_starts_just_over_256_kib():
    def sized(n):  # fields that serialise to exactly n bytes
        return {"kind": "k", "a": "x" * (n - len('{"a":""}'))}

    at = sized(PACK_OVER)
    assert len(json.dumps({"a": at["a"]}, separators=(",", ":")).encode()) == PACK_OVER
    assert pack(at, ["a"]) is at
    over = sized(PACK_OVER + 1)
    assert "packed" in pack(over, ["a"]) and schemas.unpack(pack(over, ["a"])) == over


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: {**p, "data": "not base64 at all!"},
        lambda p: {**p, "data": base64.b64encode(b"plain, not gzip").decode()},
        lambda p: {**p, "data": p["data"][: len(p["data"]) // 2]},  # cut short
        lambda p: {**p, "data": base64.b64encode(gzip.compress(b"[1, 2")).decode()},
        lambda p: {**p, "data": base64.b64encode(gzip.compress(b"\xff\xfe")).decode()},
        lambda p: {k: v for k, v in p.items() if k != "data"},
        lambda p: {**p, "data": 42},
        lambda p: {**p, "fields": "a"},
    ],
)
def test_a_damaged_packed_field_is_a_value_error(damage):
    out = pack({"a": list(range(PACK_OVER))}, ["a"])
    with pytest.raises(ValueError, match="packed"):
        schemas.unpack({**out, "packed": damage(out["packed"])})


def test_a_packed_field_never_overwrites_a_plain_one():
    out = pack({"a": list(range(PACK_OVER))}, ["a"])
    with pytest.raises(ValueError, match="both"):
        schemas.unpack({**out, "a": [1]})


def test_notebook_sizes_are_measured_as_nbformat_saves_them():
    """The 1.5 MB budget is of the saved .ipynb: nbformat splits text into lines and
    indents JSON, which a plain ``json.dumps`` of each value undercounts (by 11% for the
    24-layer ``%%hlo``: its text/plain has 20,000 lines)."""
    import nbformat

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_notebook_size import stored_sizes

    bundle = {
        "text/plain": "\n".join(f"line {i}" for i in range(500)),
        "text/html": "<pre>\n" + "a\n" * 300 + "</pre>",
        HLO_MIME: {"version": 2, "cells": {"f": {"number": 1, "cell_id": None}}},
    }

    def saved(data):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%%hlo")])
        empty = len(nbformat.writes(nb).encode())
        nb.cells[0].outputs.append(nbformat.v4.new_output("display_data", data=data))
        return len(nbformat.writes(nb).encode()) - empty

    sizes = stored_sizes(bundle)
    for mime, value in bundle.items():
        assert abs(sizes[mime] - saved({mime: value})) <= 200, (mime, sizes[mime])
    assert abs(sum(sizes.values()) - saved(bundle)) <= 200

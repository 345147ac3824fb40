"""JSON Schemas (draft 2020-12) of every ``application/vnd.jax-workbench.<kind>+json`` payload.

One file per kind, ``<kind>.schema.json``, shipped in the wheel: the contract the
JupyterLab extension is written against (its TypeScript types are generated from these
files, ``extension/scripts/generate-types.mjs``) and that the test suite checks every bundle
it produces against.  The schema of a payload is found from its MIME type alone, so a new
kind needs only its file.  What several kinds share (a source line, a compile record, a
miss reason, the seconds of a stage) is defined once in ``common.schema.json`` and
referenced as ``urn:jax-workbench:schema:common#/$defs/<name>``; the side panel's comm
messages are ``comm/sidepanel.schema.json``.  All references resolve offline, within this
package.  Importing this module imports neither JAX nor ``jsonschema``
(a test dependency: :func:`validate` imports it when called).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

MIME_PREFIX = "application/vnd.jax-workbench."
MIME_SUFFIX = "+json"
ID_PREFIX = "urn:jax-workbench:schema:"
#: the one encoding of a payload's ``packed`` field (see :func:`unpack`)
PACKED_ENCODING = "gzip+base64"
#: schema files beside the kinds' that are not a kind: definitions the others reference
SHARED = ("common",)


class UnknownPayload(LookupError):
    """A MIME type of ours that has no schema (or not one of ours at all)."""


def mime_type(kind: str) -> str:
    """``"hlo"`` -> ``application/vnd.jax-workbench.hlo+json``."""
    return f"{MIME_PREFIX}{kind}{MIME_SUFFIX}"


def kind_of(mime: str) -> str | None:
    """``application/vnd.jax-workbench.hlo+json`` -> ``hlo``; None for any other type."""
    if mime.startswith(MIME_PREFIX) and mime.endswith(MIME_SUFFIX):
        return mime[len(MIME_PREFIX) : -len(MIME_SUFFIX)]
    return None


def kinds() -> list[str]:
    """Every kind with a schema file, sorted (the shared definitions are not a kind)."""
    suffix = ".schema.json"
    return sorted(
        name
        for p in resources.files(__name__).iterdir()
        if p.name.endswith(suffix) and (name := p.name[: -len(suffix)]) not in SHARED
    )


@cache
def _load(kind: str) -> dict[str, Any]:
    path = resources.files(__name__) / f"{kind}.schema.json"
    if kind in SHARED or not path.is_file():
        raise UnknownPayload(f"no schema for kind {kind!r} (have: {', '.join(kinds())})")
    return _read(path)


def _read(path: Any) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


@cache
def common_schema() -> dict[str, Any]:
    """The shared definitions (``common.schema.json``) that payload and comm schemas
    reference: not a payload, so it has no MIME type and is not one of :func:`kinds`."""
    return _read(resources.files(__name__) / "common.schema.json")


def schema_for(mime: str) -> dict[str, Any]:
    """The JSON Schema of the payload of MIME type ``mime`` (raises :class:`UnknownPayload`)."""
    kind = kind_of(mime)
    if kind is None:
        raise UnknownPayload(f"{mime!r} is not an application/vnd.jax-workbench.*+json type")
    return _load(kind)


@cache
def _registry() -> Any:
    """Every schema of the package by its ``$id`` (``urn:jax-workbench:schema:...``), so any
    ``$ref`` between them resolves from the package alone, never over a network."""
    from referencing import Registry, Resource

    every = [_load(k) for k in kinds()] + [common_schema()] + [comm_schema(n) for n in comms()]
    return Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in every)


def validate(mime: str, payload: Any) -> None:
    """Check ``payload`` against its schema; raises ``jsonschema.ValidationError`` (with the
    path of the offending field) or :class:`UnknownPayload`.  Needs ``jsonschema``."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    error = best_match(_validator(mime).iter_errors(payload))
    if error is not None:
        raise error


@cache
def _validator(mime: str) -> Any:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    return Draft202012Validator(schema_for(mime), registry=_registry())


def validate_definition(ref: str, value: Any) -> None:
    """Check ``value`` against one definition of the package's schemas, named by its URI
    (``urn:jax-workbench:schema:hlo#/$defs/graph``): a piece of a payload kept on its own,
    such as a test fixture of one graph.  Raises ``jsonschema.ValidationError``.  Needs
    ``jsonschema``."""
    from jsonschema.exceptions import best_match

    if not ref.startswith(ID_PREFIX):
        raise UnknownPayload(f"{ref!r} is not a {ID_PREFIX}... reference")
    error = best_match(_ref_validator(ref).iter_errors(value))
    if error is not None:
        raise error


@cache
def _ref_validator(ref: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator({"$ref": ref}, registry=_registry())


#: the comm schemas (``comm/<name>.schema.json``): messages, not MIME payloads, so they are
#: not :func:`kinds` and have no MIME type
COMM_DIR = "comm"
#: the side panel's comm (target ``jax-workbench``): ``comm/sidepanel.schema.json``
SIDEPANEL = "sidepanel"


def comms() -> list[str]:
    """Every comm with a schema file, sorted."""
    suffix = ".schema.json"
    return sorted(
        p.name[: -len(suffix)]
        for p in (resources.files(__name__) / COMM_DIR).iterdir()
        if p.name.endswith(suffix)
    )


@cache
def comm_schema(name: str = SIDEPANEL) -> dict[str, Any]:
    """The JSON Schema of the messages on comm ``name`` (``sidepanel``: the side panel's)."""
    path = resources.files(__name__) / COMM_DIR / f"{name}.schema.json"
    if not path.is_file():
        raise UnknownPayload(f"no comm schema {name!r}")
    return _read(path)


@cache
def _message_validator(name: str, kind: str | None) -> Any:
    from jsonschema import Draft202012Validator

    schema = comm_schema(name)
    if kind is not None:  # one message type: errors name the field, not "no oneOf matched"
        schema = {"$ref": f"{schema['$id']}#/$defs/{kind}"}
    return Draft202012Validator(schema, registry=_registry())


def validate_message(msg: Any, comm: str = SIDEPANEL) -> None:
    """Check one comm message (the ``data`` of a comm_open / comm_msg) against the comm's
    schema; raises ``jsonschema.ValidationError`` with the offending field's path.  Needs
    ``jsonschema``."""
    from jsonschema.exceptions import best_match

    kinds_of_messages = {r["$ref"].rsplit("/", 1)[-1] for r in comm_schema(comm)["oneOf"]}
    kind = msg.get("type") if isinstance(msg, dict) else None
    for validator in (
        _message_validator(comm, kind if kind in kinds_of_messages else None),
        _message_validator(comm, None),
    ):
        error = best_match(validator.iter_errors(msg))
        if error is not None:
            raise error


def unpack(payload: Any) -> Any:
    """A payload with its ``packed`` field (if any) restored into the fields it holds.

    Big payloads carry ``{"packed": {"encoding": "gzip+base64", "fields": [...], "data":
    ...}}`` in place of their biggest fields: ``data`` is base64 of gzip of the JSON object
    of those fields.  The result is the payload as if it had never been packed (a new dict;
    the argument is not changed); a payload without ``packed`` is returned as it is.  A
    ``jaxpr-compare`` payload's ``stages`` are unpacked each.
    """
    if not isinstance(payload, dict):
        return payload
    out = payload
    packed = payload.get("packed")
    if isinstance(packed, dict):
        import base64
        import gzip

        if packed.get("encoding") != PACKED_ENCODING:
            raise ValueError(f"unknown packed encoding {packed.get('encoding')!r}")
        fields, data = packed.get("fields"), packed.get("data")
        if (
            not isinstance(fields, list)
            or not all(isinstance(f, str) for f in fields)
            or not isinstance(data, str)
        ):
            raise ValueError("packed needs a list of field names and a data string")
        try:  # one error whatever is wrong with the data: base64, gzip, UTF-8 or JSON
            inner = json.loads(gzip.decompress(base64.b64decode(data, validate=True)))
        except (ValueError, OSError, EOFError) as exc:
            raise ValueError(f"packed data cannot be read: {exc}") from exc
        if not isinstance(inner, dict) or sorted(inner) != sorted(fields):
            raise ValueError("packed data does not hold exactly the fields it names")
        both = sorted(set(inner) & (set(payload) - {"packed"}))
        if both:
            raise ValueError(f"fields both packed and plain: {', '.join(both)}")
        out = {}
        for key, value in payload.items():
            if key == "packed":
                out.update(inner)
            else:
                out[key] = value
    if isinstance(out.get("stages"), list):
        out = {**out, "stages": [unpack(s) for s in out["stages"]]}
    return out


__all__ = [
    "COMM_DIR",
    "MIME_PREFIX",
    "PACKED_ENCODING",
    "SHARED",
    "SIDEPANEL",
    "UnknownPayload",
    "common_schema",
    "comm_schema",
    "comms",
    "kind_of",
    "kinds",
    "mime_type",
    "schema_for",
    "unpack",
    "validate",
    "validate_definition",
    "validate_message",
]

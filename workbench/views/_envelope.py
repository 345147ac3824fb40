"""The JSON envelope of every payload: built here and nowhere else.

Each rich output carries one ``application/vnd.jax-workbench.<kind>+json`` payload whose
top level starts with ``{"version": N, "kind": "<kind>"}``; the kind in the payload is the
kind in the MIME type, and ``workbench/schemas/<kind>.schema.json`` is its contract (the
JupyterLab extension is written against those files; the MIME naming lives with them in
:mod:`workbench.schemas`).  Views hand in the body (an engine record's ``to_dict()`` or
their own data); this module puts the envelope on it, so a kind or a version can never
disagree between the MIME type, the payload and the schema.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.schemas import MIME_PREFIX, PACKED_ENCODING, kind_of, mime_type

#: fields that serialise to more than this many bytes are packed (gzip + base64).  A notebook
#: saves a payload indented, about twice its compact size: at 256 KiB a 2-block transformer's
#: gradient saved 0.45 MB of plain JSON that packs to 20 KB
PACK_OVER = 64 * 1024


def envelope(kind: str, version: int, body: Mapping[str, Any]) -> dict[str, Any]:
    """``{"version", "kind", **body}``; an engine record's own ``version``/``kind`` keys give
    way (the record's version is passed in as ``version``), so the envelope is the one truth."""
    out: dict[str, Any] = {"version": version, "kind": kind}
    out.update((k, v) for k, v in body.items() if k not in ("version", "kind"))
    return out


def pack(payload: dict[str, Any], fields: Sequence[str], over: int = PACK_OVER) -> dict[str, Any]:
    """``payload`` with ``fields`` replaced by one ``packed`` field when together they
    serialise to more than ``over`` bytes (else ``payload`` unchanged).

    ``packed`` is ``{"encoding": "gzip+base64", "fields": [...], "data": base64(gzip(json))}``
    where the JSON is the object of those fields; ``workbench.schemas.unpack`` (and the
    extension's ``unpack``) restore them.  A notebook stores a payload as JSON text, where
    the big graph and equation lists are very repetitive: gzip makes them 10-25 times smaller.
    The packed field goes where the first packed field was, so the key order stays stable.
    """
    present = [f for f in fields if f in payload]
    if not present:
        return payload
    inner = {f: payload[f] for f in present}
    text = json.dumps(inner, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    if len(text.encode()) <= over:
        return payload
    data = base64.b64encode(gzip.compress(text.encode(), compresslevel=6, mtime=0)).decode()
    out: dict[str, Any] = {}
    for key, value in payload.items():
        if key == present[0]:
            out["packed"] = {"encoding": PACKED_ENCODING, "fields": present, "data": data}
        elif key not in inner:
            out[key] = value
    return out


__all__ = ["MIME_PREFIX", "PACK_OVER", "envelope", "kind_of", "mime_type", "pack"]

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

from collections.abc import Mapping
from typing import Any

from workbench.schemas import MIME_PREFIX, kind_of, mime_type


def envelope(kind: str, version: int, body: Mapping[str, Any]) -> dict[str, Any]:
    """``{"version", "kind", **body}``; an engine record's own ``version``/``kind`` keys give
    way (the record's version is passed in as ``version``), so the envelope is the one truth."""
    out: dict[str, Any] = {"version": version, "kind": kind}
    out.update((k, v) for k, v in body.items() if k not in ("version", "kind"))
    return out


__all__ = ["MIME_PREFIX", "envelope", "kind_of", "mime_type"]

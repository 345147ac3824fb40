"""Sharding layouts as MIME bundles (the mesh explorer's results: :mod:`.mesh_explorer`).

A layout is drawn as the array cut into its shards: 1-D arrays as a strip, 2-D
as a grid, higher ranks as one small grid per block of the leading dimensions
(facets), rank 0 as a single cell.  Each shard is coloured by the device set that
holds it (the same colour in every picture of the same devices), labelled with
those device ids when the label fits, and has a tooltip with its index, shape and
devices.  Padding of uneven shards is hatched.  A per-device table (collapsed for
large meshes) gives the process, addressable or not, mesh coordinates, shard
shape and bytes.

Pure functions of engine records; every user-originated string goes through ``esc``.
Payload: ``application/vnd.jax-workbench.sharding+json`` (``docs/mime-sharding.md``,
schema ``workbench/schemas/sharding.schema.json``).
"""

from __future__ import annotations

import json
from typing import Any

from workbench.engine.sharding.layout import LAYOUT_VERSION, Layout, Shard, mesh_text
from workbench.engine.sharding.mesh_explorer import per_device_bytes
from workbench.views._format import fmt_bytes
from workbench.views._html import (
    PRE_STYLE,
    STYLED_ONLY,
    SUMMARY_ROWS,
    UNSTYLED_ONLY,
    esc,
    new_id,
    summary_table,
)
from workbench.views.display import Display, View

MAX_FACETS = 32
MAX_LABELLED_TILES = 256
#: Size bound of one output (a pytree of 20,000 arrays drew 23 MB): the first
#: MAX_DRAWN_LAYOUTS layouts are drawn in full in the text, the next MAX_LISTED_LAYOUTS
#: are one line each, the rest one line saying how many (the HTML's static summary draws
#: fewer: :data:`SUMMARY_LAYOUTS`).
MAX_DRAWN_LAYOUTS = 16
MAX_LISTED_LAYOUTS = 500
#: the JSON payload carries the first MAX_JSON_LAYOUTS layouts (and ``total_layouts``),
#: fewer when their shards add up to more than MAX_JSON_SHARDS (each array lists one
#: entry per device, so on a big mesh the count of arrays alone would not bound it)
MAX_JSON_LAYOUTS = 2000
MAX_JSON_SHARDS = 16_000

CSS = """
.jwb-sh .jwb-sh-grid{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start;margin:4px 0}
.jwb-sh .jwb-sh-facet{font-size:11px;color:var(--jp-content-font-color2,#57606a)}
.jwb-sh table{border-collapse:collapse;font-size:11.5px;margin:4px 0}
.jwb-sh td,.jwb-sh th{border:1px solid var(--jp-border-color2,#d0d7de);padding:1px 6px;text-align:left}
.jwb-sh th{background:var(--jp-layout-color2,#f3f4f6)}
.jwb-sh .jwb-sh-remote{color:var(--jp-content-font-color2,#57606a);font-style:italic}
.jwb-sh .jwb-sh-add{color:var(--jp-success-color0,#1a7f37)}.jwb-sh .jwb-sh-del{color:var(--jp-content-font-color1,#1f2328);border-left:3px solid var(--jp-error-color1,#cf222e);padding-left:4px}
.jwb-sh svg text{font-family:var(--jp-code-font-family,monospace);pointer-events:none}
.jwb-sh h4{margin:8px 0 2px 0;font-family:var(--jp-ui-font-family,system-ui,sans-serif)}
.jwb-sh .jwb-sh-scroll{overflow-x:auto;max-width:100%}
.jwb-sh .jwb-col{overflow-x:auto}
"""
#: Wraps a table that may be wider than its column (the explorer's columns share the cell's
#: width): it scrolls in place instead of painting over the column beside it.
SCROLL = '<div class="jwb-sh-scroll">'


# -- colours and words ----------------------------------------------------------------------
def device_colour(devices: list[int]) -> str:
    """A stable colour per device set: the hue comes from the ids (golden-angle spread)."""
    h = 0.0
    for d in devices:
        h = (h * 31 + d * 137.508 + 17) % 360
    light = 78 if len(devices) == 1 else 70
    return f"hsl({h:.0f},62%,{light}%)"


def dims_text(dtype: str, shape: list[int]) -> str:
    return f"{dtype}[{', '.join(map(str, shape))}]"


def _devices_text(ids: list[int], limit: int = 8) -> str:
    if len(ids) <= limit:
        return ",".join(map(str, ids))
    return ",".join(map(str, ids[:limit])) + f",… ({len(ids)})"


def layout_headline(lay: Layout) -> str:
    parts = [f"{lay.path + ': ' if lay.path else ''}{dims_text(lay.dtype, lay.shape)}"]
    if lay.kind == "named" and lay.mesh is not None:
        parts += [mesh_text(lay.mesh), lay.spec_text]
    else:
        parts.append(lay.sharding_text)
    return " · ".join(parts)


def layout_summary(lay: Layout) -> str:
    n = len(lay.shards)
    shard_shape = dims_text(lay.dtype, lay.shards[0].padded_shape) if lay.shards else "?"
    if lay.empty:
        dims = ", ".join(str(d) for d, size in enumerate(lay.shape) if size == 0)
        what = (
            f"empty (size 0 along dimension {dims}): no device holds any data, "
            f"{len(lay.devices)} device(s) hold empty shards"
        )
        procs = sorted({d.process for d in lay.devices})
        if len(procs) > 1:
            what += f" · processes {', '.join(map(str, procs))}"
        return what
    if lay.fully_replicated:
        what = f"fully replicated on {len(lay.devices)} devices"
    elif n == 1:
        what = "1 shard on 1 device"
    else:
        what = f"{n} shards of {shard_shape}"
        if lay.replication > 1:
            axes = ", ".join(repr(a) for a in lay.replicated_axes)
            partial = ", ".join(repr(a) for a in lay.unreduced)
            what += f", each held by {lay.replication} devices" + (
                f" (replicated over {axes})" if axes else ""
            )
            if partial:
                what += f" (partial sums over {partial})"
    what += f" · {fmt_bytes(per_device_bytes(lay))} per device"
    if lay.uneven:
        what += " · uneven: padding hatched"
    procs = sorted({d.process for d in lay.devices})
    if len(procs) > 1:
        what += f" · processes {', '.join(map(str, procs))}"
    return what


# -- text ----------------------------------------------------------------------------------
def layout_text(lay: Layout, max_rows: int = 32) -> str:
    lines = [layout_headline(lay), "  " + layout_summary(lay)]
    me = lay.process_index
    for s in lay.shards[:max_rows]:
        held = [lay.device(d) for d in s.devices]
        remote = [d.id for d in held if d is not None and not d.addressable]
        pad = (
            f"  (only padding: holds {s.padded_shape})"
            if s.only_padding
            else f"  (padded to {s.padded_shape})"
            if s.padded
            else ""
        )
        extra = f"  not addressable from process {me}: {_devices_text(remote)}" if remote else ""
        lines.append(f"  {s.index_text():<24} devices {_devices_text(s.devices, 16)}{pad}{extra}")
    if len(lay.shards) > max_rows:
        lines.append(f"  … {len(lay.shards) - max_rows} more shards")
    lines.extend(f"  note: {n}" for n in lay.notes)
    return "\n".join(lines)


# -- SVG -------------------------------------------------------------------------------------
def _extent(lay: Layout, dim: int) -> int:
    return max((s.padded_stop[dim] for s in lay.shards), default=lay.shape[dim]) or 1


def _grid_svg(
    lay: Layout,
    shards: list[Shard],
    rows_dim: int | None,
    cols_dim: int | None,
    pattern: str,
    width: int = 360,
    label: bool = True,
) -> str:
    """One grid: shards over (rows_dim, cols_dim); ``None`` stands for a dimension of 1."""
    nrow = _extent(lay, rows_dim) if rows_dim is not None else 1
    ncol = _extent(lay, cols_dim) if cols_dim is not None else 1
    w = float(width)
    if rows_dim is None:
        h = 44.0
    else:
        h = max(40.0, min(360.0, w * nrow / ncol))
    sx, sy = w / ncol, h / nrow
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + 2:.0f}" height="{h + 2:.0f}" '
        f'role="img" data-jwb="layout-svg">'
    ]
    many = len(shards) > MAX_LABELLED_TILES
    for s in shards:
        # (r0, c0) the block's own corner, (r1, c1) where its data ends, (rp, cp) where
        # the block ends; a block holding only padding has no data rectangle at all.
        r0 = s.origin[rows_dim] if rows_dim is not None else 0
        r1 = s.stop[rows_dim] if rows_dim is not None else 1
        rp = s.padded_stop[rows_dim] if rows_dim is not None else 1
        c0 = s.origin[cols_dim] if cols_dim is not None else 0
        c1 = s.stop[cols_dim] if cols_dim is not None else 1
        cp = s.padded_stop[cols_dim] if cols_dim is not None else 1
        has_data = not s.only_padding
        if not has_data:
            r1, c1 = r0, c0
        x, y = 1 + c0 * sx, 1 + r0 * sy
        tw, th = (c1 - c0) * sx, (r1 - r0) * sy
        what = "only padding, " if s.only_padding else ""
        tip = (
            f"{s.index_text()} shape {s.shape} ({what}padded {s.padded_shape}) on device(s) "
            f"{_devices_text(s.devices, 32)}"
            if s.padded
            else f"{s.index_text()} shape {s.shape} on device(s) {_devices_text(s.devices, 32)}"
        )
        colour = device_colour(s.devices)
        out.append(
            f'<g data-devices="{esc(",".join(map(str, s.devices)))}"><title>{esc(tip)}</title>'
        )
        if has_data:
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{tw:.1f}" height="{th:.1f}" '
                f'fill="{colour}" stroke="#444" stroke-width="{0.3 if many else 0.8}"/>'
            )
        if cp > c1 or rp > r1:  # padding: only the part beyond the data, tinted and hatched
            strips = [(c1, r0, cp, rp), (c0, r1, c1, rp)] if has_data else [(c0, r0, cp, rp)]
            for a0, b0, a1, b1 in strips:
                if a1 > a0 and b1 > b0:
                    px, py = 1 + a0 * sx, 1 + b0 * sy
                    pw, ph = (a1 - a0) * sx, (b1 - b0) * sy
                    out.append(
                        f'<rect x="{px:.1f}" y="{py:.1f}" width="{pw:.1f}" '
                        f'height="{ph:.1f}" fill="{colour}" fill-opacity="0.35"/>'
                        f'<rect x="{px:.1f}" y="{py:.1f}" width="{pw:.1f}" '
                        f'height="{ph:.1f}" fill="url(#{pattern})" stroke="#888" '
                        f'stroke-dasharray="3,2" data-jwb="padding"/>'
                    )
        text = _devices_text(s.devices, 4)
        if tw < 7.2 * len(text) + 4 or th <= 13:  # a block of (mostly) padding: label it there
            x, y, tw, th = 1 + c0 * sx, 1 + r0 * sy, (cp - c0) * sx, (rp - r0) * sy
        if label and not many and tw > 7.2 * len(text) + 4 and th > 13:
            out.append(
                f'<text x="{x + tw / 2:.1f}" y="{y + th / 2 + 4:.1f}" font-size="11" '
                f'text-anchor="middle" fill="#111">{esc(text)}</text>'
            )
        out.append("</g>")
    out.append(
        f'<defs><pattern id="{pattern}" width="6" height="6" '
        f'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="2"/>'
        f"</pattern></defs></svg>"
    )
    return "".join(out)


def layout_svg(lay: Layout, width: int = 360) -> str:
    """The picture: strip, grid, or facets over the leading dimensions."""
    pattern = new_id("jwb-pad")
    rank = len(lay.shape)
    if rank == 0:
        return _grid_svg(lay, lay.shards, None, None, pattern, 80)
    if rank == 1:
        return _grid_svg(lay, lay.shards, None, 0, pattern, width)
    if rank == 2:
        return _grid_svg(lay, lay.shards, 0, 1, pattern, width)
    lead = list(range(rank - 2))
    # Facets are blocks of the leading dimensions, keyed by the whole block (padding
    # included), so blocks lying past the end keep a facet each.
    facets: dict[tuple[tuple[int, int, int], ...], list[Shard]] = {}
    for s in lay.shards:
        key = tuple((s.origin[d], s.stop[d], s.padded_stop[d]) for d in lead)
        facets.setdefault(key, []).append(s)
    keys = sorted(facets)
    fw = max(120, width // 2) if len(keys) > 1 else width
    parts = ['<div class="jwb-sh-grid">']

    def lead_text(a: int, b: int, p: int) -> str:
        if p <= b:
            return f"{a}:{b}"
        if b <= a:
            return f"padding {a}:{p}"
        return f"{a}:{b} +{p - b} padding"

    for key in keys[:MAX_FACETS]:
        idx = ", ".join(lead_text(*k) for k in key) + ", :, :"
        parts.append(
            f'<div class="jwb-sh-facet" data-jwb="facet"><div>[{esc(idx)}]</div>'
            f"{_grid_svg(lay, facets[key], rank - 2, rank - 1, pattern, fw)}</div>"
        )
    parts.append("</div>")
    if len(keys) > MAX_FACETS:
        parts.append(
            f'<div class="jwb-note">… {len(keys) - MAX_FACETS} more blocks of the '
            f"leading dimensions not drawn</div>"
        )
    return "".join(parts)


def device_table(lay: Layout, open_limit: int = 16) -> str:
    shard_of = lay.shard_of()
    rows = []
    for d in lay.devices:
        i = shard_of.get(d.id)
        s = lay.shards[i] if i is not None else None
        cls = "" if d.addressable else ' class="jwb-sh-remote"'
        coords = (
            ""
            if d.coords is None
            else ", ".join(
                f"{esc(a)}={c}"
                for a, c in zip(lay.mesh.axis_names if lay.mesh else [], d.coords, strict=False)
            )
        )
        rows.append(
            f'<tr{cls} data-device="{d.id}"><td>{d.id}</td><td>{d.process}</td>'
            f"<td>{'yes' if d.addressable else 'no'}</td><td>{coords}</td>"
            f"<td>{esc(s.index_text()) if s else ''}</td>"
            f"<td>{esc(s.padded_shape) if s else ''}</td>"
            f"<td>{fmt_bytes(per_device_bytes(lay)) if s else ''}</td>"
            f"<td>{esc(_devices_text([x for x in s.devices if x != d.id])) if s else ''}</td></tr>"
        )
    table = (
        "<table><tr><th>device</th><th>process</th><th>addressable</th><th>mesh coords</th>"
        "<th>shard</th><th>shard shape</th><th>bytes</th><th>replicas on</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    is_open = " open" if len(lay.devices) <= open_limit else ""
    return (
        f"<details{is_open}><summary>per device ({len(lay.devices)})</summary>"
        f"{SCROLL}{table}</div></details>"
    )


def layout_html_body(lay: Layout, width: int = 360) -> str:
    notes = "".join(f'<div class="jwb-note">{esc(n)}</div>' for n in lay.notes)
    types = ""
    if lay.mesh is not None:
        types = " · axis types " + ", ".join(
            f"{esc(a)}: {esc(t)}"
            for a, t in zip(lay.mesh.axis_names, lay.mesh.axis_types, strict=False)
        )
    return (
        f'<div class="jwb-sh-layout" data-jwb="layout">'
        f'<div class="jwb-head"><span class="jwb-title">{esc(layout_headline(lay))}</span>'
        f'<div class="jwb-meta">{esc(layout_summary(lay))}{types}</div></div>'
        f"<div {STYLED_ONLY}>{layout_svg(lay, width)}</div>"
        f'<pre {UNSTYLED_ONLY} style="{PRE_STYLE}">{esc(layout_text(lay))}</pre>'
        f"{notes}{device_table(lay)}</div>"
    )


def layout_summary_html(lay: Layout) -> str:
    """One layout in the static summary: what and how, and the device blocks as the text
    grid (no SVG, no stylesheet needed; the views draw the picture from the payload)."""
    notes = "".join(f"<p>{esc(n)}</p>" for n in lay.notes)
    return (
        f'<div data-jwb="layout"><p><b>{esc(layout_headline(lay))}</b><br>'
        f"{esc(layout_summary(lay))}</p>"
        f'<pre style="{PRE_STYLE}">{esc(layout_text(lay))}</pre>{notes}</div>'
    )


#: layouts the static summary draws as device-block text; the next are rows of its table
SUMMARY_LAYOUTS = 4


def layouts_html(layouts: list[Layout]) -> str:
    """The static summary, bounded whatever the number of arrays: the first
    :data:`SUMMARY_LAYOUTS` layouts as device-block text, the next as rows of a
    :func:`~workbench.views._html.summary_table`.  The pictures are the views' own."""
    drawn = layouts[:SUMMARY_LAYOUTS]
    rest = layouts[SUMMARY_LAYOUTS:]
    body = "".join(layout_summary_html(x) for x in drawn)
    if rest:
        rows = [[layout_headline(x), layout_summary(x)] for x in rest[:SUMMARY_ROWS]]
        body += summary_table(["array", "layout"], rows, total=len(rest), what="arrays")
        body += (
            f"<p>The whole list ({len(layouts)} in all) is the result's <code>.layouts</code>.</p>"
        )
    return f'<div class="jwb jwb-sh">{body}</div>'


def _layouts_text(layouts: list[Layout]) -> str:
    """Bounded as the HTML is: full text for the drawn layouts, a line for the listed ones."""
    drawn = layouts[:MAX_DRAWN_LAYOUTS]
    listed = layouts[MAX_DRAWN_LAYOUTS : MAX_DRAWN_LAYOUTS + MAX_LISTED_LAYOUTS]
    rest = len(layouts) - len(drawn) - len(listed)
    lines = [layout_text(x) for x in drawn]
    lines += [f"{layout_headline(x)}  ({layout_summary(x)})" for x in listed]
    if rest > 0:
        lines.append(f"… {rest} more arrays not shown ({len(layouts)} in all); see .layouts")
    return "\n".join(lines)


def _layouts_data(layouts: list[Layout]) -> dict[str, Any]:
    kept: list[Layout] = []
    shards = 0
    for x in layouts[:MAX_JSON_LAYOUTS]:
        shards += len(x.shards)
        if kept and shards > MAX_JSON_SHARDS:
            break
        kept.append(x)
    data: dict[str, Any] = {"layouts": json.loads(json.dumps([x.to_dict() for x in kept]))}
    if len(kept) < len(layouts):
        data["total_layouts"] = len(layouts)
    return data


#: ``%sharding``, ``workbench.sharding``: the record is the list of layouts (``d.layouts``)
SHARDING_VIEW: View[list[Layout]] = View(
    kind="sharding",
    version=LAYOUT_VERSION,
    text=_layouts_text,
    html=layouts_html,
    data=_layouts_data,
    record_name="layouts",
)
MIME = SHARDING_VIEW.mime


def layouts_bundle(layouts: list[Layout], text_only: bool = False) -> dict[str, Any]:
    return SHARDING_VIEW.bundle(layouts, text_only=text_only)


def sharding_display(layouts: list[Layout], text_only: bool = False) -> Display[list[Layout]]:
    """What ``%sharding`` and :func:`workbench.sharding` return."""
    return Display(layouts, SHARDING_VIEW, text_only=text_only)


__all__ = [
    "CSS",
    "MAX_DRAWN_LAYOUTS",
    "MAX_JSON_LAYOUTS",
    "MAX_LISTED_LAYOUTS",
    "MIME",
    "SHARDING_VIEW",
    "device_colour",
    "layout_html_body",
    "layout_svg",
    "layout_text",
    "layouts_bundle",
    "layouts_html",
    "sharding_display",
]

/**
 * The sharding payload's types and the pure view model of one layout's picture: which
 * dimensions are drawn as rows and columns, the facets (small multiples) over the leading
 * dimensions of a higher-rank array, each shard's tile rectangle (data and padding), and a
 * colour per device set.  No DOM here: `view.ts` draws these on canvas.
 */

import type {
  Layout,
  LayoutDevice,
  MeshInfo,
  Shard
} from '../generated/sharding';

export type {
  Layout,
  LayoutDevice,
  MeshInfo,
  Shard,
  ShardingPayload
} from '../generated/sharding';

/** At most this many facets are drawn per layout; the rest are counted. */
export const MAX_FACETS = 64;
/** Labels (device ids) are drawn on tiles only below this many shards per layout. */
export const MAX_LABELLED_TILES = 256;

export function dimsText(dtype: string, shape: number[]): string {
  return `${dtype}[${shape.join(', ')}]`;
}

export function meshText(mesh: MeshInfo): string {
  return mesh.axis_names
    .map((a, i) => `${a}=${mesh.axis_sizes[i]}`)
    .join(' × ');
}

/** `a,b,c` up to `limit` ids, then `,… (n)`. */
export function devicesText(ids: number[], limit = 8): string {
  if (ids.length <= limit) {
    return ids.join(',');
  }
  return `${ids.slice(0, limit).join(',')},… (${ids.length})`;
}

/** `[0:8, 2:4]`: the shard's valid index ranges (Python slice notation). */
export function indexText(s: Shard): string {
  return `[${s.start.map((a, i) => `${a}:${s.stop[i]}`).join(', ')}]`;
}

export function isPadded(s: Shard): boolean {
  return s.padded_shape.some((p, i) => p !== s.shape[i]);
}

/** The extent drawn for a dimension: padding included, at least 1. */
export function extent(lay: Layout, dim: number): number {
  let m = 0;
  for (const s of lay.shards) {
    m = Math.max(m, s.padded_stop[dim] ?? 0);
  }
  return m || lay.shape[dim] || 1;
}

/** Which dimensions the grid draws: rows and columns (`null`: a dimension of 1). */
export function gridDims(rank: number): {
  rows: number | null;
  cols: number | null;
  lead: number[];
} {
  if (rank === 0) {
    return { rows: null, cols: null, lead: [] };
  }
  if (rank === 1) {
    return { rows: null, cols: 0, lead: [] };
  }
  return {
    rows: rank - 2,
    cols: rank - 1,
    lead: Array.from({ length: rank - 2 }, (_, i) => i)
  };
}

export interface Tile {
  /** index of the shard in `layout.shards` */
  shard: number;
  /** the data rectangle (empty for a block of only padding), in facet pixels */
  x: number;
  y: number;
  w: number;
  h: number;
  /** the whole block, padding included */
  bx: number;
  by: number;
  bw: number;
  bh: number;
  /** the colour slot of the shard's device set */
  color: number;
}

export interface Facet {
  /** `[0:2, :, :]`-style label of the leading-dimension block ('' for rank <= 2) */
  label: string;
  /** the facet's box inside the picture */
  x: number;
  y: number;
  w: number;
  h: number;
  tiles: Tile[];
}

export interface Picture {
  width: number;
  height: number;
  facets: Facet[];
  /** facets not drawn (beyond MAX_FACETS) */
  hiddenFacets: number;
  rows: number | null;
  cols: number | null;
  /** the row and column extents drawn */
  nrow: number;
  ncol: number;
}

/** Colour slots by device set, in order of first appearance (shared by one output's layouts). */
export class DeviceSetColors {
  private readonly _slots = new Map<string, number>();
  slot(devices: number[]): number {
    const key = devices.join(',');
    let s = this._slots.get(key);
    if (s === undefined) {
      s = this._slots.size;
      this._slots.set(key, s);
    }
    return s;
  }
  get size(): number {
    return this._slots.size;
  }
}

function leadLabel(a: number, b: number, p: number): string {
  if (p <= b) {
    return `${a}:${b}`;
  }
  if (b <= a) {
    return `padding ${a}:${p}`;
  }
  return `${a}:${b} +${p - b} padding`;
}

export const FACET_TITLE_H = 16;
const FACET_GAP = 10;

/**
 * The picture of `lay` at `width` pixels: one grid for rank <= 2, else one facet per block of
 * the leading dimensions (up to `MAX_FACETS`), wrapped into rows.
 */
export function layoutPicture(
  lay: Layout,
  colors: DeviceSetColors,
  width = 360
): Picture {
  const rank = lay.shape.length;
  const { rows, cols, lead } = gridDims(rank);
  const nrow = rows === null || lay.shape[rows] === 0 ? 1 : extent(lay, rows);
  const ncol = cols === null || lay.shape[cols] === 0 ? 1 : extent(lay, cols);
  const groups = new Map<string, { key: number[]; shards: number[] }>();
  lay.shards.forEach((s, i) => {
    const key = lead.flatMap(d => [
      s.block_start[d],
      s.stop[d],
      s.padded_stop[d]
    ]);
    const k = key.join(',');
    let g = groups.get(k);
    if (!g) {
      groups.set(k, (g = { key, shards: [] }));
    }
    g.shards.push(i);
  });
  const ordered = [...groups.values()].sort((a, b) => {
    for (let i = 0; i < a.key.length; i++) {
      if (a.key[i] !== b.key[i]) {
        return a.key[i] - b.key[i];
      }
    }
    return 0;
  });
  const shown = ordered.slice(0, MAX_FACETS);
  const many = shown.length > 1;
  const fw = many
    ? Math.max(96, Math.min(180, Math.floor((width - FACET_GAP) / 2)))
    : width;
  const gridH =
    rank === 0
      ? 40
      : rows === null
        ? 40
        : Math.max(32, Math.min(many ? 160 : 240, (fw * nrow) / ncol));
  const perRow = many
    ? Math.max(
        1,
        Math.floor((Math.max(width, fw) + FACET_GAP) / (fw + FACET_GAP))
      )
    : 1;
  const titleH = rank > 2 ? FACET_TITLE_H : 0;
  const facets: Facet[] = shown.map((g, fi) => {
    const fx = (fi % perRow) * (fw + FACET_GAP);
    const fy = Math.floor(fi / perRow) * (gridH + titleH + FACET_GAP) + titleH;
    const sx = fw / ncol;
    const sy = gridH / nrow;
    const tiles: Tile[] = g.shards.map(i => {
      const s = lay.shards[i];
      // a dimension of size 0 is drawn as one unit, so an empty array's blocks stay visible
      const flatR = rows === null || lay.shape[rows] === 0;
      const flatC = cols === null || lay.shape[cols] === 0;
      const r0 = flatR ? 0 : s.block_start[rows!];
      const c0 = flatC ? 0 : s.block_start[cols!];
      let r1 = flatR ? 1 : s.stop[rows!];
      let c1 = flatC ? 1 : s.stop[cols!];
      const rp = flatR ? 1 : s.padded_stop[rows!];
      const cp = flatC ? 1 : s.padded_stop[cols!];
      if (s.only_padding || lay.empty) {
        r1 = r0;
        c1 = c0;
      }
      return {
        shard: i,
        x: fx + c0 * sx,
        y: fy + r0 * sy,
        w: Math.max(0, (c1 - c0) * sx),
        h: Math.max(0, (r1 - r0) * sy),
        bx: fx + c0 * sx,
        by: fy + r0 * sy,
        bw: Math.max(0, (cp - c0) * sx),
        bh: Math.max(0, (rp - r0) * sy),
        color: colors.slot(s.devices)
      };
    });
    const label =
      rank > 2
        ? `[${lead.map((_, j) => leadLabel(g.key[3 * j], g.key[3 * j + 1], g.key[3 * j + 2])).join(', ')}, :, :]`
        : '';
    return { label, x: fx, y: fy, w: fw, h: gridH, tiles };
  });
  const nRows = Math.ceil(facets.length / perRow) || 1;
  return {
    width: many
      ? Math.min(perRow, facets.length) * (fw + FACET_GAP) - FACET_GAP
      : fw,
    height: nRows * (gridH + titleH) + (nRows - 1) * FACET_GAP,
    facets,
    hiddenFacets: ordered.length - shown.length,
    rows,
    cols,
    nrow,
    ncol
  };
}

/** The tile under (x, y) in picture pixels (padding counts as its block), or null. */
export function tileAt(pic: Picture, x: number, y: number): Tile | null {
  for (const f of pic.facets) {
    if (x < f.x || y < f.y || x > f.x + f.w || y > f.y + f.h) {
      continue;
    }
    for (const t of f.tiles) {
      if (x >= t.bx && x <= t.bx + t.bw && y >= t.by && y <= t.by + t.bh) {
        return t;
      }
    }
  }
  return null;
}

/** Bytes one device holds of this layout (the largest per-device sum). */
export function perDeviceBytes(lay: Layout): number {
  const per = new Map<number, number>();
  for (const s of lay.shards) {
    for (const d of s.devices) {
      per.set(d, (per.get(d) ?? 0) + s.bytes);
    }
  }
  let m = 0;
  for (const v of per.values()) {
    m = Math.max(m, v);
  }
  return m;
}

/** The headline: `['w']: float32[16, 8] · data=2 × model=4 · P('data', 'model')`. */
export function layoutHeadline(lay: Layout): string {
  const parts = [
    `${lay.path ? `${lay.path}: ` : ''}${dimsText(lay.dtype, lay.shape)}`
  ];
  if (lay.kind === 'named' && lay.mesh) {
    parts.push(meshText(lay.mesh), lay.spec_text);
  } else {
    parts.push(lay.sharding);
  }
  return parts.join(' · ');
}

/** The one-line summary, in the Python view's words. */
export function layoutSummary(
  lay: Layout,
  bytesText: (n: number) => string
): string {
  const n = lay.shards.length;
  const procs = [...new Set(lay.devices.map(d => d.process))].sort(
    (a, b) => a - b
  );
  const procText = procs.length > 1 ? ` · processes ${procs.join(', ')}` : '';
  if (lay.empty) {
    const dims = lay.shape
      .map((s, d) => (s === 0 ? d : -1))
      .filter(d => d >= 0)
      .join(', ');
    return (
      `empty (size 0 along dimension ${dims}): no device holds any data, ` +
      `${lay.devices.length} device(s) hold empty shards${procText}`
    );
  }
  let what: string;
  if (lay.fully_replicated) {
    what = `fully replicated on ${lay.devices.length} devices`;
  } else if (n === 1) {
    what = '1 shard on 1 device';
  } else {
    // no shards at all (the schema allows it): Python writes `0 shards of ?`
    what = `${n} shards of ${n ? dimsText(lay.dtype, lay.shards[0].padded_shape) : '?'}`;
    if (lay.replication > 1) {
      const axes = lay.replicated_axes.map(a => `'${a}'`).join(', ');
      what += `, each held by ${lay.replication} devices${axes ? ` (replicated over ${axes})` : ''}`;
    }
  }
  what += ` · ${bytesText(perDeviceBytes(lay))} per device`;
  if (lay.uneven) {
    what += ' · uneven: padding hatched';
  }
  return what + procText;
}

/** Which mesh axes split dimension `dim` (`['data']`), [] when it is not split. */
export function dimAxes(lay: Layout, dim: number | null): string[] {
  if (dim === null || !lay.spec) {
    return [];
  }
  return lay.spec[dim] ?? [];
}

/** Caption of a drawn dimension: `dim 0 · 16 · split over data`. */
export function dimCaption(lay: Layout, dim: number | null): string {
  if (dim === null) {
    return '';
  }
  const axes = dimAxes(lay, dim);
  return `dim ${dim} · ${lay.shape[dim]}${axes.length ? ` · split over ${axes.join(' × ')}` : ' · not split'}`;
}

/** The tooltip's lines for shard `i` of `lay`. */
export function shardTooltip(
  lay: Layout,
  i: number,
  bytesText: (n: number) => string
): { title: string; lines: string[] } {
  const s = lay.shards[i];
  const lines: string[] = [];
  lines.push(
    `shape ${dimsText(lay.dtype, s.shape)}${isPadded(s) ? ` (padded to [${s.padded_shape.join(', ')}])` : ''}`
  );
  if (s.only_padding) {
    lines.push('only padding: this block lies past the end of the array');
  }
  lines.push(
    `${s.devices.length === 1 ? 'device' : `${s.devices.length} devices`}: ${devicesText(s.devices, 32)}`
  );
  const byId = new Map(lay.devices.map(d => [d.id, d]));
  const coords = s.devices
    .slice(0, 8)
    .map(d => byId.get(d))
    .filter((d): d is LayoutDevice => !!d && d.coords !== null);
  if (coords.length && lay.mesh) {
    lines.push(
      `mesh coords (${lay.mesh.axis_names.join(', ')}): ` +
        coords.map(d => `${d.id}@(${(d.coords ?? []).join(',')})`).join(' ') +
        (s.devices.length > 8 ? ' …' : '')
    );
  }
  const remote = s.devices
    .map(d => byId.get(d))
    .filter(d => d && !d.addressable)
    .map(d => (d as LayoutDevice).id);
  if (remote.length) {
    lines.push(
      `not addressable from process ${lay.process_index}: ${devicesText(remote)}`
    );
  }
  lines.push(`${bytesText(s.bytes)} per device`);
  return { title: indexText(s), lines };
}

/** Layouts whose path, dtype or spec contains `query` (case-insensitive); all for ''. */
export function filterLayouts(layouts: Layout[], query: string): number[] {
  const q = query.trim().toLowerCase();
  const out: number[] = [];
  layouts.forEach((l, i) => {
    if (
      !q ||
      `${l.path} ${l.dtype}[${l.shape.join(',')}] ${l.spec_text} ${l.sharding}`
        .toLowerCase()
        .includes(q)
    ) {
      out.push(i);
    }
  });
  return out;
}

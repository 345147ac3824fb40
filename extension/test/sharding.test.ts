import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import {
  DeviceSetColors,
  filterLayouts,
  indexText,
  layoutHeadline,
  layoutPicture,
  layoutSummary,
  perDeviceBytes,
  shardTooltip,
  tileAt,
  type Layout,
  type ShardingPayload
} from '../src/sharding/model';
import { fmtBytes } from '../src/bench/format';

const load = (name: string): ShardingPayload =>
  JSON.parse(
    readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')
  ) as ShardingPayload;

const tree = load('sharding-tree');
const byPath = (p: string): Layout => tree.layouts.find(l => l.path === p)!;

describe('sharding view model (payloads from workbench.sharding on 8 CPU devices)', () => {
  it('draws a 2-D array split over both mesh axes as a 2 x 4 grid of tiles', () => {
    const w = byPath("['w']");
    const pic = layoutPicture(w, new DeviceSetColors(), 360);
    expect(pic.facets).toHaveLength(1);
    expect([pic.rows, pic.cols, pic.nrow, pic.ncol]).toEqual([0, 1, 16, 8]);
    const tiles = pic.facets[0].tiles;
    expect(tiles).toHaveLength(8);
    const xs = [...new Set(tiles.map(t => Math.round(t.x)))].sort(
      (a, b) => a - b
    );
    const ys = [...new Set(tiles.map(t => Math.round(t.y)))].sort(
      (a, b) => a - b
    );
    expect(xs).toEqual([0, 90, 180, 270]);
    expect(ys).toHaveLength(2);
    for (const t of tiles) {
      expect(t.w).toBeCloseTo(90);
    }
    // every shard on its own device: 8 colour slots
    expect(new Set(tiles.map(t => t.color)).size).toBe(8);
    expect(layoutHeadline(w)).toBe(
      "['w']: float32[16, 8] · data=2 × model=4 · P('data', 'model')"
    );
    expect(layoutSummary(w, fmtBytes)).toBe(
      '8 shards of float32[8, 2] · 64 B per device'
    );
  });

  it('gives replicated shards one colour per device set, shared across the payload', () => {
    const colors = new DeviceSetColors();
    const b = layoutPicture(byPath("['b']"), colors);
    expect(b.rows).toBeNull();
    expect(
      b.facets[0].tiles.map(t => byPath("['b']").shards[t.shard].devices)
    ).toEqual([
      [0, 4],
      [1, 5],
      [2, 6],
      [3, 7]
    ]);
    const slots = b.facets[0].tiles.map(t => t.color);
    expect(new Set(slots).size).toBe(4);
    // the same set later gets the same slot
    expect(colors.slot([1, 5])).toBe(slots[1]);
    expect(colors.slot([0])).toBe(4);
    expect(layoutSummary(byPath("['b']"), fmtBytes)).toContain(
      "each held by 2 devices (replicated over 'data')"
    );
    const r = layoutPicture(byPath("['r']"), colors);
    expect(r.facets[0].tiles).toHaveLength(1);
    expect(layoutSummary(byPath("['r']"), fmtBytes)).toContain(
      'fully replicated on 8 devices'
    );
  });

  it('shows a rank-4 array as small multiples over its leading dimensions', () => {
    const lay = load('sharding-4d').layouts[0];
    const pic = layoutPicture(lay, new DeviceSetColors(), 360);
    expect(lay.shape).toEqual([4, 2, 6, 8]);
    expect(pic.facets.map(f => f.label)).toEqual([
      '[0:2, 0:2, :, :]',
      '[2:4, 0:2, :, :]'
    ]);
    expect(pic.facets.map(f => f.tiles.length)).toEqual([4, 4]);
    expect(pic.facets[1].x).toBeGreaterThan(
      pic.facets[0].x + pic.facets[0].w - 1
    );
    // hover hit-testing finds the tile under the pointer, in the right facet
    const t = pic.facets[1].tiles[0];
    const hit = tileAt(pic, t.x + 2, t.y + 2);
    expect(hit?.shard).toBe(t.shard);
    expect(tileAt(pic, -5, -5)).toBeNull();
  });

  it('hatches padding of an uneven split and hit-tests the padding-only block', () => {
    const ex = JSON.parse(
      readFileSync(
        new URL('./fixtures/mesh-uneven.json', import.meta.url),
        'utf8'
      )
    ) as { inputs: Layout[] };
    const lay = ex.inputs[0];
    expect(lay.uneven).toBe(true);
    const pic = layoutPicture(lay, new DeviceSetColors());
    const pad = pic.facets[0].tiles.find(
      t => lay.shards[t.shard].only_padding
    )!;
    expect(pad.h).toBe(0);
    expect(pad.bh).toBeGreaterThan(0);
    expect(tileAt(pic, pad.bx + 1, pad.by + 1)?.shard).toBe(pad.shard);
    expect(layoutSummary(lay, fmtBytes)).toContain('uneven: padding hatched');
    const tip = shardTooltip(lay, pad.shard, fmtBytes);
    expect(tip.lines.join('\n')).toContain('only padding');
  });

  it('draws a scalar as one tile and an empty array as hatched blocks (no data)', () => {
    const z = layoutPicture(byPath("['z']"), new DeviceSetColors());
    expect([z.rows, z.cols, z.facets[0].tiles.length]).toEqual([null, null, 1]);
    expect(z.facets[0].tiles[0].w).toBeGreaterThan(0);
    const e = byPath("['e']");
    const pic = layoutPicture(e, new DeviceSetColors(), 360);
    expect(pic.facets[0].tiles).toHaveLength(4);
    for (const t of pic.facets[0].tiles) {
      expect(t.w * t.h).toBe(0);
      expect(t.bw).toBeCloseTo(90);
      expect(t.bh).toBeGreaterThan(0);
    }
    expect(layoutSummary(e, fmtBytes)).toMatch(
      /^empty \(size 0 along dimension 0\)/
    );
  });

  it('summarises a layout without shards as the Python view does ("0 shards of ?"), not a crash', () => {
    const w = byPath("['w']");
    expect(layoutSummary({ ...w, shards: [] }, fmtBytes)).toBe(
      '0 shards of ? · 0 B per device'
    );
    const pic = layoutPicture({ ...w, shards: [] }, new DeviceSetColors());
    expect(pic.facets.flatMap(f => f.tiles)).toEqual([]);
  });

  it('writes the tooltip from the shard: ranges, shape, devices, mesh coordinates', () => {
    const w = byPath("['w']");
    const tip = shardTooltip(w, 0, fmtBytes);
    expect(tip.title).toBe(indexText(w.shards[0]));
    expect(tip.title).toBe('[0:8, 0:2]');
    expect(tip.lines[0]).toBe('shape float32[8, 2]');
    expect(tip.lines).toContain('device: 0');
    expect(
      tip.lines.some(l => l.startsWith('mesh coords (data, model): 0@(0,0)'))
    ).toBe(true);
    expect(perDeviceBytes(w)).toBe(64);
  });

  it('filters arrays by path, dtype or spec', () => {
    expect(filterLayouts(tree.layouts, '').length).toBe(tree.layouts.length);
    expect(
      filterLayouts(tree.layouts, "['w']").map(i => tree.layouts[i].path)
    ).toEqual(["['w']"]);
    expect(filterLayouts(tree.layouts, "P('model')").length).toBe(1);
    expect(filterLayouts(tree.layouts, 'nothing-like-this')).toEqual([]);
  });

  it('lays out 2,000 layouts / 16,000 shards, one tile each, with one colour per device set', () => {
    // the wall time is in bench/algorithms.bench.ts
    const w = byPath("['w']");
    const layouts = Array.from({ length: 2000 }, (_, i) => ({
      ...w,
      path: `['p${i}']`
    }));
    const colors = new DeviceSetColors();
    let tiles = 0;
    for (const l of layouts) {
      tiles += layoutPicture(l, colors).facets[0].tiles.length;
    }
    expect(tiles).toBe(16000);
    expect(colors.size).toBe(8);
  });
});

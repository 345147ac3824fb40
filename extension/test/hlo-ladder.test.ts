import { describe, expect, it } from 'vitest';
import { layeredLayout, type LayoutResult } from '../src/hlo/layout';
import { FIT_READABLE, GraphModel } from '../src/hlo/model';
import type { UnpackedHloPayload } from '../src/hlo/types';
import { gradientGraph } from './hlo-synthetic';

function model(blocks: number): GraphModel {
  const graph = gradientGraph(blocks);
  const payload = {
    graphs: { [graph.computation]: graph }
  } as unknown as UnpackedHloPayload;
  return new GraphModel(payload, graph.computation);
}

/** pairs of boxes whose rectangles overlap */
function overlaps(m: GraphModel, r: LayoutResult): number {
  const inp = m.layoutInput();
  let n = 0;
  for (let a = 0; a < r.x.length; a++) {
    for (let b = a + 1; b < r.x.length; b++) {
      if (
        Math.abs(r.x[a] - r.x[b]) < (inp.widths[a] + inp.widths[b]) / 2 &&
        Math.abs(r.y[a] - r.y[b]) < (inp.heights[a] + inp.heights[b]) / 2
      ) {
        n++;
      }
    }
  }
  return n;
}

const blockItem = (m: GraphModel, index: number, dir: string): number =>
  m.vg.items.findIndex(
    it =>
      it.kind === 'cluster' &&
      m.tree.clusters[it.ref].name === 'block' &&
      m.tree.clusters[it.ref].index === index &&
      m.tree.clusters[it.ref].dir === dir
  );

describe('the folded gradient as a ladder', () => {
  it('puts each backward block right beside its forward, one row per block', () => {
    const m = model(24);
    const r = layeredLayout(m.layoutInput(), { nodeSep: 16, rankSep: 24 });
    const rows = new Set<number>();
    const xs: number[] = [];
    for (let k = 0; k < 24; k++) {
      const f = blockItem(m, k, 'fwd');
      const b = blockItem(m, k, 'bwd');
      expect(r.y[b]).toBe(r.y[f]);
      expect(r.x[b]).toBeGreaterThan(r.x[f]);
      rows.add(r.y[f]);
      xs.push(r.x[f]);
    }
    expect(rows.size).toBe(24);
    // straight down, no slant: the forward blocks in one column (the first and the last
    // may lean towards what is above and below them)
    const column = Math.max(...xs.map(x => xs.filter(y => y === x).length));
    expect(column).toBeGreaterThanOrEqual(22);
    expect(overlaps(m, r)).toBe(0);
  });

  it('wraps into bands to fit a viewport at a readable scale, and not when none reads', () => {
    const m = model(24);
    const vp = { width: 900, height: 720, minScale: FIT_READABLE };
    const r = layeredLayout(m.layoutInput(), {
      nodeSep: 16,
      rankSep: 24,
      viewport: vp
    });
    expect(r.bands).toBeGreaterThan(1);
    const scale = Math.min(
      (vp.width - 32) / r.width,
      (vp.height - 32) / r.height
    );
    expect(scale).toBeGreaterThanOrEqual(FIT_READABLE);
    expect(overlaps(m, r)).toBe(0);
    // every edge point inside the drawing
    for (let k = 0; k < r.edgePoints.length; k += 2) {
      expect(r.edgePoints[k]).toBeGreaterThanOrEqual(-1);
      expect(r.edgePoints[k]).toBeLessThanOrEqual(r.width + 1);
      expect(r.edgePoints[k + 1]).toBeGreaterThanOrEqual(-1);
      expect(r.edgePoints[k + 1]).toBeLessThanOrEqual(r.height + 1);
    }
    // one level down is hundreds of boxes: no band layout reads whole, one column it is
    m.openLevel();
    const down = layeredLayout(m.layoutInput(), {
      nodeSep: 16,
      rankSep: 24,
      viewport: vp
    });
    expect(down.bands).toBe(1);
    expect(overlaps(m, down)).toBe(0);
  });

  it('gives boxes without edges (the parameter group) a row of their own', () => {
    const m = model(24);
    const r = layeredLayout(m.layoutInput(), { nodeSep: 16, rankSep: 24 });
    const params = m.vg.items.findIndex(
      it => it.kind === 'cluster' && m.tree.clusters[it.ref].kind === 'group'
    );
    const f0 = blockItem(m, 0, 'fwd');
    expect(params).toBeGreaterThanOrEqual(0);
    expect(r.y[params]).toBeLessThan(r.y[f0]);
    const sameRow = m.vg.items.filter((_, k) => r.y[k] === r.y[params]);
    expect(
      sameRow.every(
        it => it.kind === 'cluster' && m.tree.clusters[it.ref].kind === 'group'
      )
    ).toBe(true);
  });
});

/** the block an item is drawn inside (its own index when it is a block), -1: none */
function blockOf(m: GraphModel, k: number): number {
  const it = m.vg.items[k];
  let c = it.kind === 'cluster' ? it.ref : m.tree.nodeCluster[it.ref];
  for (; c >= 0; c = m.tree.clusters[c].parent) {
    if (m.tree.clusters[c].name === 'block') {
      return m.tree.clusters[c].index ?? -1;
    }
  }
  return -1;
}

describe('the gradient one level down', () => {
  it('frames each opened block, its forward and backward halves in one frame holding only its boxes', () => {
    const m = model(8);
    m.openLevel();
    const r = layeredLayout(m.layoutInput(), { nodeSep: 16, rankSep: 24 });
    const s = m.scene(r, () => null);
    for (let k = 0; k < 8; k++) {
      const f = s.frames.find(
        fr => fr.label === `block ${k} · forward | backward`
      );
      expect(f, `block ${k}`).toBeDefined();
      const fr = f as (typeof s.frames)[number];
      const inside = m.vg.items
        .map((_, j) => j)
        .filter(
          j =>
            r.x[j] > fr.x0 && r.x[j] < fr.x1 && r.y[j] > fr.y0 && r.y[j] < fr.y1
        );
      expect(inside.length).toBeGreaterThan(0);
      expect(inside.every(j => blockOf(m, j) === k)).toBe(true);
    }
    expect(overlaps(m, r)).toBe(0);
  });

  it('leaves out the edges a longer path implies: no fan between far blocks', () => {
    const m = model(8);
    m.openLevel();
    expect(m.vg.implied).toBeGreaterThan(0);
    for (let e = 0; e < m.vg.src.length; e++) {
      const a = blockOf(m, m.vg.src[e]);
      const b = blockOf(m, m.vg.dst[e]);
      if (a >= 0 && b >= 0) {
        expect(Math.abs(a - b), `edge ${e}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it('opens one block into its calls inside a frame named for it, where the block was', () => {
    const m = model(8);
    const f3 = blockItem(m, 3, 'fwd');
    const cluster = m.vg.items[f3].ref;
    m.toggle(cluster);
    const r = layeredLayout(m.layoutInput(), { nodeSep: 16, rankSep: 24 });
    const s = m.scene(r, () => null);
    const f = s.frames.find(fr => fr.label === 'block 3 · forward');
    expect(f).toBeDefined();
    const fr = f as (typeof s.frames)[number];
    expect(fr.cluster).toBe(cluster);
    const names = new Set(
      m.vg.items
        .map((it, j) => ({ it, j }))
        .filter(
          ({ j }) =>
            r.x[j] > fr.x0 && r.x[j] < fr.x1 && r.y[j] > fr.y0 && r.y[j] < fr.y1
        )
        .map(({ it }) =>
          it.kind === 'cluster' ? m.tree.clusters[it.ref].name : 'op'
        )
    );
    expect(names).toEqual(new Set(['layernorm', 'attention', 'mlp']));
    // between the rows of blocks 2 and 4
    expect(fr.y0).toBeGreaterThan(r.y[blockItem(m, 2, 'fwd')]);
    expect(fr.y1).toBeLessThan(r.y[blockItem(m, 4, 'fwd')]);
    expect(overlaps(m, r)).toBe(0);
  });
});

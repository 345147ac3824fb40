import { describe, expect, it } from 'vitest';

import {
  backEdges,
  countCrossings,
  layeredLayout,
  type LayoutInput
} from '../src/hlo/layout';
import { graph, syntheticGraph } from './hlo-synthetic';

/** a hang guard for the largest inputs, not a speed bound (busy CI machines are slow):
 * their wall times are in bench/algorithms.bench.ts */
const HANG_GUARD_MS = 60_000;

function overlaps(
  input: LayoutInput,
  r: ReturnType<typeof layeredLayout>
): number {
  const byLayer = new Map<number, number[]>();
  r.layer.forEach((l, v) => {
    const a = byLayer.get(l) ?? [];
    a.push(v);
    byLayer.set(l, a);
  });
  let bad = 0;
  for (const vs of byLayer.values()) {
    vs.sort((p, q) => r.x[p] - r.x[q]);
    for (let i = 1; i < vs.length; i++) {
      const p = vs[i - 1];
      const q = vs[i];
      if (r.x[q] - r.x[p] < (input.widths[p] + input.widths[q]) / 2 - 1e-6) {
        bad++;
      }
    }
  }
  return bad;
}

describe('layered layout', () => {
  it('puts every edge downwards and nodes of a layer apart', () => {
    const g = graph(6, [
      [0, 1],
      [0, 2],
      [1, 3],
      [2, 3],
      [3, 4],
      [0, 4],
      [5, 4]
    ]);
    const r = layeredLayout(g);
    for (let e = 0; e < g.src.length; e++) {
      expect(r.layer[g.dst[e]]).toBeGreaterThan(r.layer[g.src[e]]);
    }
    expect(overlaps(g, r)).toBe(0);
    // the source 5 sits just above its user, not at the top
    expect(r.layer[5]).toBe(r.layer[4] - 1);
    // the long edge 0 -> 4 runs through dummies: its polyline has more than 2 points
    const e = 5;
    expect(r.edgeOffsets[e + 1] - r.edgeOffsets[e]).toBeGreaterThan(2);
  });

  it('breaks cycles and draws reversed edges from source to target', () => {
    const g = graph(3, [
      [0, 1],
      [1, 2],
      [2, 0]
    ]);
    const rev = backEdges(3, g.src, g.dst);
    expect([...rev].reduce((p, q) => p + q, 0)).toBe(1);
    const r = layeredLayout(g);
    const e = 2; // 2 -> 0, reversed
    const k = r.edgeOffsets[e] * 2;
    const last = (r.edgeOffsets[e + 1] - 1) * 2;
    expect(r.edgePoints[k + 1]).toBeGreaterThan(r.edgePoints[last + 1]); // starts low (at 2), ends high (at 0)
  });

  it('reduces crossings of a twisted bipartite graph to none', () => {
    // top 0..3, bottom 4..7 wired in reverse order: the initial order crosses everywhere
    const g = graph(8, [
      [0, 7],
      [1, 6],
      [2, 5],
      [3, 4]
    ]);
    const r = layeredLayout(g, { sweeps: 2 });
    expect(countCrossings(g, r)).toBe(0);
  });

  it(
    'lays out a 10,000-node graph with its dummy nodes within the cap',
    { timeout: HANG_GUARD_MS },
    () => {
      // the wall time is in bench/algorithms.bench.ts; here the work that could blow up,
      // the dummy nodes long edges add (every sweep visits them), stays within
      // maxDummies' default of 4 x nodes (+ 64), which this graph reaches
      const g = syntheticGraph(10000);
      const r = layeredLayout(g);
      expect(r.dummies).toBeLessThanOrEqual(4 * 10000 + 64);
      expect(overlaps(g, r)).toBe(0);
      for (let e = 0; e < g.src.length; e++) {
        expect(r.layer[g.dst[e]]).toBeGreaterThan(r.layer[g.src[e]]);
      }
    }
  );
});

describe('layered layout: groups, weighed cycles, weak edges', () => {
  const boxes = (n: number): Pick<LayoutInput, 'widths' | 'heights'> => ({
    widths: new Float64Array(n).fill(100),
    heights: new Float64Array(n).fill(40)
  });

  it('gives a group rows of its own: no other box beside its boxes', () => {
    // a0 -> a1 -> a2 (group 0); b0 -> b1 (group 1), read from a0: without groups b0
    // would sit beside a1
    const input: LayoutInput = {
      ...boxes(5),
      src: Int32Array.from([0, 1, 0, 3]),
      dst: Int32Array.from([1, 2, 3, 4]),
      groups: Int32Array.from([0, 0, 0, 1, 1])
    };
    const loose = layeredLayout({ ...input, groups: undefined });
    expect(loose.layer[3]).toBe(loose.layer[1]);
    const r = layeredLayout(input);
    const a = [0, 1, 2].map(v => r.layer[v]);
    const b = [3, 4].map(v => r.layer[v]);
    expect(Math.min(...b)).toBeGreaterThan(Math.max(...a));
    expect(overlaps(input, r)).toBe(0);
  });

  it('breaks a cycle at its lightest edge when the edges are weighed', () => {
    // 1 -> 2 -> 0 heavy, 0 -> 1 light: a search from 0 would turn 2 -> 0 round instead
    const input: LayoutInput = {
      ...boxes(3),
      src: Int32Array.from([0, 1, 2]),
      dst: Int32Array.from([1, 2, 0]),
      weights: Float64Array.from([1, 100, 100])
    };
    const r = layeredLayout(input);
    expect(r.layer[1]).toBeLessThan(r.layer[2]);
    expect(r.layer[2]).toBeLessThan(r.layer[0]);
    const unweighed = layeredLayout({ ...input, weights: undefined });
    expect(unweighed.layer[0]).toBeLessThan(unweighed.layer[2]);
  });

  it('places no box by a weak edge, and still draws it', () => {
    const input: LayoutInput = {
      ...boxes(3),
      src: Int32Array.from([0, 2]),
      dst: Int32Array.from([1, 0]),
      weak: Uint8Array.from([0, 1])
    };
    const r = layeredLayout(input);
    expect(r.layer[1]).toBe(r.layer[0] + 1);
    expect(r.edgeOffsets[2] - r.edgeOffsets[1]).toBeGreaterThanOrEqual(2);
  });
});

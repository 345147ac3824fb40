/**
 * `--compare` alignment: the equations of successive stages (the function, then each
 * transform) lined up side by side.  Each stage's equations (nested ones included, in
 * order) get a signature, primitive plus result avals; consecutive stages are diffed on
 * those (Myers' O(ND) algorithm after trimming the common prefix and suffix), and the
 * matches become rows of a grid with one cell per stage.  A stage's equation that matches
 * nothing in the previous stage is *added*; one with no match in the next is *removed*.
 */

import type { FlatJaxpr } from './rows';

/** `mul f32[8,3,4]` */
export function signatures(flat: FlatJaxpr): string[] {
  const out: string[] = new Array(flat.equations);
  for (let e = 0; e < flat.equations; e++) {
    const eq = flat.rows[flat.eqnRow[e]].equation!;
    out[e] = `${eq.primitive} ${eq.outvars.map(a => flat.avals[a[1]]?.text ?? '?').join(' ')}`;
  }
  return out;
}

/**
 * For each index of `a`, the index of `b` it is matched to (-1: removed), along a longest
 * common subsequence.  Beyond `maxD` differences the middle is left unmatched (a bound on
 * time and memory for unrelated programs).
 */
export function diff(a: string[], b: string[], maxD = 1500): Int32Array {
  const aToB = new Int32Array(a.length).fill(-1);
  let lo = 0;
  while (lo < a.length && lo < b.length && a[lo] === b[lo]) { aToB[lo] = lo; lo++; }
  let ha = a.length, hb = b.length;
  while (ha > lo && hb > lo && a[ha - 1] === b[hb - 1]) { ha--; hb--; aToB[ha] = hb; }
  const n = ha - lo, m = hb - lo;
  if (n === 0 || m === 0) return aToB;
  const max = Math.min(n + m, maxD);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[lo + x] === b[lo + y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) { found = d; break; }
    }
    trace.push(v.slice());
  }
  if (found < 0) return aToB;
  // walk back through the saved frontiers
  let x = n, y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d - 1];
    const k = x - y;
    const down = k === -d || (k !== d && prev[off + k - 1] < prev[off + k + 1]);
    const pk = down ? k + 1 : k - 1;
    const px = prev[off + pk];
    const py = px - pk;
    while (x > px + (down ? 0 : 1) && y > py + (down ? 1 : 0)) { x--; y--; aToB[lo + x] = lo + y; }
    x = px; y = py;
  }
  while (x > 0 && y > 0) { x--; y--; aToB[lo + x] = lo + y; }
  return aToB;
}

export type CellMark = 'same' | 'added' | 'removed' | 'changed';

export interface Alignment {
  /** grid rows: per stage, its equation index in this row or -1 */
  rows: Int32Array[];
  /** per stage, per equation: matched to the previous stage / to the next */
  matchedPrev: Uint8Array[];
  matchedNext: Uint8Array[];
}

export function align(sigs: string[][]): Alignment {
  const s = sigs.length;
  const matchedPrev = sigs.map(x => new Uint8Array(x.length));
  const matchedNext = sigs.map(x => new Uint8Array(x.length));
  let grid: Int32Array[] = sigs[0].map((_, i) => { const r = new Int32Array(s).fill(-1); r[0] = i; return r; });
  for (let k = 1; k < s; k++) {
    const aToB = diff(sigs[k - 1], sigs[k]);
    aToB.forEach((bi, ai) => { if (bi >= 0) { matchedNext[k - 1][ai] = 1; matchedPrev[k][bi] = 1; } });
    const out: Int32Array[] = [];
    let free: Int32Array[] = []; // rows since the last match with an unmatched k-1 cell and no k cell
    let nextB = 0;
    const place = (upTo: number): void => {
      for (; nextB < upTo; nextB++) {
        const slot = free.shift();
        if (slot) slot[k] = nextB;
        else { const r = new Int32Array(s).fill(-1); r[k] = nextB; out.push(r); }
      }
    };
    for (const row of grid) {
      const j = row[k - 1];
      if (j >= 0 && aToB[j] >= 0) {
        place(aToB[j]);
        free = [];
        row[k] = aToB[j];
        nextB = aToB[j] + 1;
        out.push(row);
      } else {
        out.push(row);
        if (j >= 0) free.push(row);
      }
    }
    place(sigs[k].length);
    grid = out;
  }
  return { rows: grid, matchedPrev, matchedNext };
}

/** The mark of stage `k`'s equation `e` in the grid. */
export function markOf(al: Alignment, k: number, e: number): CellMark {
  const added = k > 0 && !al.matchedPrev[k][e];
  const removed = k < al.matchedNext.length - 1 && !al.matchedNext[k][e];
  return added && removed ? 'changed' : added ? 'added' : removed ? 'removed' : 'same';
}

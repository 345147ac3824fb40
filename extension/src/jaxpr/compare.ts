/**
 * `--compare` alignment: the equations of successive stages (the function, then each
 * transform) lined up side by side.  Each stage's equations (nested ones included, in
 * order) get a signature, primitive plus result avals; consecutive stages are diffed on
 * those (Myers' O(ND) algorithm in linear space), and the
 * matches become rows of a grid with one cell per stage.  A stage's equation that matches
 * nothing in the previous stage is *added*; one with no match in the next is *removed*.
 */

import type { FlatJaxpr } from './rows';

/** `mul f32[8,3,4]` */
export function signatures(flat: FlatJaxpr): string[] {
  const out: string[] = new Array(flat.equations);
  for (let e = 0; e < flat.equations; e++) {
    const eq = flat.rows[flat.eqnRow[e]].equation!;
    out[e] =
      `${eq.primitive} ${eq.outvars.map(a => flat.avals[a[1]]?.text ?? '?').join(' ')}`;
  }
  return out;
}

/** Edit distance searched exactly per split; beyond it a split is taken heuristically. */
const MAX_COST = 2048;

/**
 * For each index of `a`, the index of `b` it is matched to (-1: removed), along a longest
 * common subsequence: Myers' O(ND) diff in linear space (the middle snake, divide and
 * conquer), so a function and its gradient, thousands of edits apart, still line up.
 * A split whose edit distance passes MAX_COST takes the furthest forward path instead (as
 * GNU diff does), so huge, very different programs still align in about a second; `budget`
 * bounds the total work (diagonal steps): past it, what is left of the middle stays unmatched.
 */
export function diff(a: string[], b: string[], budget = 2e8): Int32Array {
  const aToB = new Int32Array(a.length).fill(-1);
  const ids = new Map<string, number>();
  const intern = (s: string): number => {
    let i = ids.get(s);
    if (i === undefined) {
      ids.set(s, (i = ids.size));
    }
    return i;
  };
  const aIds = Int32Array.from(a, intern);
  const bIds = Int32Array.from(b, intern);
  // an equation whose signature the other side lacks can match nothing: leave it out of
  // the search (as GNU diff discards such lines), which keeps the edit distance that of
  // what really moved (a gradient's backward pass is mostly new signatures)
  const inA = new Uint8Array(ids.size),
    inB = new Uint8Array(ids.size);
  aIds.forEach(i => {
    inA[i] = 1;
  });
  bIds.forEach(i => {
    inB[i] = 1;
  });
  const aPos: number[] = [],
    bPos: number[] = [];
  aIds.forEach((i, p) => {
    if (inB[i]) {
      aPos.push(p);
    }
  });
  bIds.forEach((i, p) => {
    if (inA[i]) {
      bPos.push(p);
    }
  });
  const A = Int32Array.from(aPos, p => aIds[p]);
  const B = Int32Array.from(bPos, p => bIds[p]);
  const kept = diffIds(A, B, budget);
  kept.forEach((bi, ai) => {
    if (bi >= 0) {
      aToB[aPos[ai]] = bPos[bi];
    }
  });
  return aToB;
}

function diffIds(A: Int32Array, B: Int32Array, budget: number): Int32Array {
  const aToB = new Int32Array(A.length).fill(-1);
  const work = { steps: 0, budget, cap: MAX_COST };
  const stack: number[] = [0, A.length, 0, B.length];
  while (stack.length) {
    let bHi = stack.pop()!,
      bLo = stack.pop()!,
      aHi = stack.pop()!,
      aLo = stack.pop()!;
    while (aLo < aHi && bLo < bHi && A[aLo] === B[bLo]) {
      aToB[aLo] = bLo;
      aLo++;
      bLo++;
    }
    while (aLo < aHi && bLo < bHi && A[aHi - 1] === B[bHi - 1]) {
      aHi--;
      bHi--;
      aToB[aHi] = bHi;
    }
    if (aLo === aHi || bLo === bHi || work.steps > work.budget) {
      continue;
    }
    const split = middleSnake(A, aLo, aHi, B, bLo, bHi, work);
    if (!split) {
      continue;
    } // nothing in common (or out of budget)
    const [x, y] = split;
    if ((x === aLo && y === bLo) || (x === aHi && y === bHi)) {
      continue;
    } // cannot happen; never loop
    stack.push(aLo, x, bLo, y, x, aHi, y, bHi);
  }
  return aToB;
}

/**
 * Where the forward and reverse furthest-reaching paths of A[aLo:aHi] -> B[bLo:bHi] meet
 * (absolute indices): a point on a shortest edit script (Myers 1986, section 4b).  Null
 * when the two share nothing or the budget ran out.
 */
function middleSnake(
  A: Int32Array,
  aLo: number,
  aHi: number,
  B: Int32Array,
  bLo: number,
  bHi: number,
  work: { steps: number; budget: number; cap: number }
): [number, number] | null {
  const n = aHi - aLo,
    m = bHi - bLo;
  const maxD = Math.ceil((n + m) / 2);
  const off = maxD + 1;
  const len = 2 * maxD + 3;
  const v1 = new Int32Array(len).fill(-1);
  const v2 = new Int32Array(len).fill(-1);
  v1[off + 1] = 0;
  v2[off + 1] = 0;
  const delta = n - m;
  const front = (delta & 1) !== 0; // odd: the forward path finds the overlap
  let k1start = 0,
    k1end = 0,
    k2start = 0,
    k2end = 0;
  for (let d = 0; d < maxD; d++) {
    work.steps += 2 * d + 2;
    if (d > work.cap || work.steps > work.budget) {
      // too expensive (GNU diff's heuristic): split at the forward path that got furthest;
      // the halves are diffed on their own, the result may be a little longer than minimal
      let best = -1,
        bx = 0,
        by = 0;
      for (let k = -d + 1 + k1start; k <= d - 1 - k1end; k += 2) {
        const x = Math.min(v1[off + k], n),
          y = Math.min(x - k, m);
        if (x >= 0 && y >= 0 && x + y > best) {
          best = x + y;
          bx = x;
          by = y;
        }
      }
      return best > 0 && !(bx === n && by === m) ? [aLo + bx, bLo + by] : null;
    }
    for (let k1 = -d + k1start; k1 <= d - k1end; k1 += 2) {
      const k1o = off + k1;
      let x1 =
        k1 === -d || (k1 !== d && v1[k1o - 1] < v1[k1o + 1])
          ? v1[k1o + 1]
          : v1[k1o - 1] + 1;
      let y1 = x1 - k1;
      while (x1 < n && y1 < m && A[aLo + x1] === B[bLo + y1]) {
        x1++;
        y1++;
      }
      v1[k1o] = x1;
      if (x1 > n) {
        k1end += 2;
      } // off the right edge
      else if (y1 > m) {
        k1start += 2;
      } // off the bottom
      else if (front) {
        const k2o = off + delta - k1;
        if (k2o >= 0 && k2o < len && v2[k2o] !== -1 && x1 >= n - v2[k2o]) {
          return [aLo + x1, bLo + y1];
        }
      }
    }
    for (let k2 = -d + k2start; k2 <= d - k2end; k2 += 2) {
      const k2o = off + k2;
      let x2 =
        k2 === -d || (k2 !== d && v2[k2o - 1] < v2[k2o + 1])
          ? v2[k2o + 1]
          : v2[k2o - 1] + 1;
      let y2 = x2 - k2;
      while (x2 < n && y2 < m && A[aHi - x2 - 1] === B[bHi - y2 - 1]) {
        x2++;
        y2++;
      }
      v2[k2o] = x2;
      if (x2 > n) {
        k2end += 2;
      } else if (y2 > m) {
        k2start += 2;
      } else if (!front) {
        const k1o = off + delta - k2;
        if (k1o >= 0 && k1o < len && v1[k1o] !== -1) {
          const x1 = v1[k1o];
          const y1 = x1 - (k1o - off);
          if (x1 >= n - x2) {
            return [aLo + x1, bLo + y1];
          }
        }
      }
    }
  }
  return null;
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
  let grid: Int32Array[] = sigs[0].map((_, i) => {
    const r = new Int32Array(s).fill(-1);
    r[0] = i;
    return r;
  });
  for (let k = 1; k < s; k++) {
    const aToB = diff(sigs[k - 1], sigs[k]);
    aToB.forEach((bi, ai) => {
      if (bi >= 0) {
        matchedNext[k - 1][ai] = 1;
        matchedPrev[k][bi] = 1;
      }
    });
    const out: Int32Array[] = [];
    let free: Int32Array[] = []; // rows since the last match with an unmatched k-1 cell and no k cell
    let nextB = 0;
    const place = (upTo: number): void => {
      for (; nextB < upTo; nextB++) {
        const slot = free.shift();
        if (slot) {
          slot[k] = nextB;
        } else {
          const r = new Int32Array(s).fill(-1);
          r[k] = nextB;
          out.push(r);
        }
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
        if (j >= 0) {
          free.push(row);
        }
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
  return added && removed
    ? 'changed'
    : added
      ? 'added'
      : removed
        ? 'removed'
        : 'same';
}

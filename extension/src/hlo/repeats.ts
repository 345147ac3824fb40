/**
 * Phase 3 of clustering (cluster.ts): cutting a big flat scope into *repeats*, the layers
 * of a Python loop that did not jit or name_scope them.  The source line that recurs most
 * regularly starts a new repeat at each of its occurrences, in program order; a cut counts
 * only when its pieces are about even and hold the same code.
 */

import type { GraphIndex } from './graph';

/** A node's first source line (by file, then line) as `file:line`; null: none. */
function sourceKey(g: GraphIndex, i: number): string | null {
  const srcs = g.nodes[i].sources;
  if (!srcs || srcs.length === 0) {
    return null;
  }
  let best = srcs[0];
  for (const s of srcs) {
    if (s.file < best.file || (s.file === best.file && s.line < best.line)) {
      best = s;
    }
  }
  return `${best.file}:${best.line}`;
}

/** a cut is even when its repeats' sizes differ by at most this share of a mean repeat */
const EVEN = 0.5;
/** share of members whose line recurs across the pieces for a cut to count as repeats */
const SHARED = 0.5;
/** how many of the best cuts are checked for shared code */
const MAX_CHECKS = 24;

/** A candidate cut: the member positions starting each repeat, its unevenness, its k. */
interface Cut {
  at: number[];
  cost: number;
  k: number;
}

/** Each source line's positions among the members (program order). */
function linePositions(keys: (string | null)[]): Map<string, number[]> {
  const positions = new Map<string, number[]>();
  keys.forEach((key, pos) => {
    if (key === null) {
      return;
    }
    let a = positions.get(key);
    if (!a) {
      positions.set(key, (a = []));
    }
    a.push(pos);
  });
  return positions;
}

/**
 * The periods k (how many repeats) worth trying, with the members their lines cover: a
 * layer may run a line several times (layer_norm twice, three projections on one line), so
 * k is any occurrence count or the gcd of two; a line occurring c = j*k times starts a
 * repeat at every j-th occurrence.
 */
function candidatePeriods(
  positions: Map<string, number[]>,
  memberCount: number
): Map<number, number> {
  const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
  const distinct = [
    ...new Set([...positions.values()].map(p => p.length))
  ].filter(c => c >= 2);
  const ks = new Set<number>(distinct);
  for (const c1 of distinct) {
    for (const c2 of distinct) {
      ks.add(gcd(c1, c2));
    }
  }
  const covered = (k: number): number => {
    let s = 0;
    for (const ps of positions.values()) {
      if (ps.length % k === 0) {
        s += ps.length;
      }
    }
    return s;
  };
  const cover = new Map<number, number>();
  for (const k of [...ks].filter(k => k >= 2 && k <= memberCount / 2)) {
    cover.set(k, covered(k));
  }
  return cover;
}

/**
 * Every (k, anchor line) cut whose k covers at least half as many members as the best k,
 * best first: even ones (every repeat within half a mean repeat of the others) with the most
 * repeats, then the most even.
 */
function rankedCuts(
  positions: Map<string, number[]>,
  cover: Map<number, number>,
  memberCount: number
): Cut[] {
  const best = Math.max(0, ...cover.values());
  const options: Cut[] = [];
  for (const [kk, covers] of cover) {
    if (covers < 0.5 * best) {
      continue;
    }
    for (const ps of positions.values()) {
      if (ps.length % kk !== 0) {
        continue;
      }
      const j = ps.length / kk;
      const at: number[] = [];
      for (let i = 0; i < ps.length; i += j) {
        at.push(ps[i]);
      }
      options.push({ at, cost: unevenness(at, memberCount, kk), k: kk });
    }
  }
  options.sort((a, b) => {
    const ea = a.cost <= EVEN;
    const eb = b.cost <= EVEN;
    if (ea !== eb) {
      return ea ? -1 : 1;
    }
    if (ea && a.k !== b.k) {
      return b.k - a.k;
    }
    return a.cost - b.cost;
  });
  return options;
}

/**
 * How uneven the repeats starting at `at` are: (longest - shortest) / mean.  The first and
 * last repeats also hold what runs before and after the loop: judged on the inner ones when
 * there are any.
 */
function unevenness(at: number[], memberCount: number, k: number): number {
  let lo = Infinity;
  let hi = 0;
  const inner = at.length >= 4;
  for (let i = inner ? 1 : 0; i < (inner ? at.length - 1 : at.length); i++) {
    const len =
      (i + 1 < at.length ? at[i + 1] : memberCount) - (i === 0 ? 0 : at[i]);
    lo = Math.min(lo, len);
    hi = Math.max(hi, len);
  }
  return (hi - lo) / (memberCount / k);
}

/**
 * The share of keyed members whose line runs in at least two pieces and half of them, the
 * same number of times in each: a cut is only a repeat when the pieces hold the same code
 * (a straight program whose lines each run twice, a helper called at a few places, lines
 * strewn without order must not be cut into invented layers).
 */
function sharedCode(keys: (string | null)[], at: number[]): number {
  const counts = new Map<string, Map<number, number>>();
  let piece = 0;
  let keyed = 0;
  keys.forEach((key, pos) => {
    while (piece + 1 < at.length && pos >= at[piece + 1]) {
      piece++;
    }
    if (key === null) {
      return;
    }
    keyed++;
    let per = counts.get(key);
    if (!per) {
      counts.set(key, (per = new Map()));
    }
    per.set(piece, (per.get(piece) ?? 0) + 1);
  });
  const need = Math.max(2, Math.ceil(at.length / 2));
  let shared = 0;
  for (const per of counts.values()) {
    if (per.size < need) {
      continue;
    }
    let lo = Infinity;
    let hi = 0;
    let total = 0;
    for (const c of per.values()) {
      lo = Math.min(lo, c);
      hi = Math.max(hi, c);
      total += c;
    }
    if (lo === hi) {
      shared += total;
    }
  }
  return keyed ? shared / keyed : 0;
}

/** `members` cut before each position in `cuts` but the first; null for fewer than 2 pieces. */
function cutMembers(members: number[], cuts: number[]): number[][] | null {
  const cutSet = new Set(cuts.slice(1));
  const segments: number[][] = [];
  let cur: number[] = [];
  members.forEach((m, pos) => {
    if (cutSet.has(pos) && cur.length > 0) {
      segments.push(cur);
      cur = [];
    }
    cur.push(m);
  });
  if (cur.length) {
    segments.push(cur);
  }
  return segments.length >= 2 ? segments : null;
}

/**
 * Split `members` (program order) into repeats at a regularly recurring source line: among
 * all (k, line) cuts whose lines cover enough members, the most repeats that are still even
 * win, else the most even cut; the first of the best `MAX_CHECKS` whose pieces hold the
 * same code is taken (each check reads all members).  null: no such cut.
 */
export function splitRepeats(
  g: GraphIndex,
  members: number[]
): number[][] | null {
  const keys = members.map(i => sourceKey(g, i));
  const positions = linePositions(keys);
  const cover = candidatePeriods(positions, members.length);
  if (Math.max(0, ...cover.values()) === 0) {
    return null;
  }
  const options = rankedCuts(positions, cover, members.length);
  for (const o of options.slice(0, MAX_CHECKS)) {
    if (sharedCode(keys, o.at) >= SHARED) {
      return cutMembers(members, o.at);
    }
  }
  return null;
}

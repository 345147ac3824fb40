/**
 * The header's signature without listing every leaf: pytree summaries when the payload
 * has `trees` (`ps: list[24] of {w1, w2, wk, wq, wv: f32[128,128]}`), else the avals with
 * equal neighbours run-length grouped (`120 × f32[128,128]`), and grouped by value when
 * that still leaves many entries.
 */

import type { JaxprPayload, TreeSummary } from './types';

const MAX_ENTRIES = 8;

function runs(avals: string[]): [string, number][] {
  const out: [string, number][] = [];
  for (const a of avals) {
    const last = out[out.length - 1];
    if (last && last[0] === a) {
      last[1]++;
    } else {
      out.push([a, 1]);
    }
  }
  return out;
}

function byValue(avals: string[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const a of avals) {
    counts.set(a, (counts.get(a) ?? 0) + 1);
  }
  return [...counts];
}

/** `["120 × f32[128,128]", "f32[16,128]"]` for 120 equal avals and one other. */
export function groupAvals(avals: string[]): string[] {
  let groups = runs(avals);
  if (groups.length > MAX_ENTRIES) {
    groups = byValue(avals);
  }
  return groups.map(([a, n]) => (n > 1 ? `${n} × ${a}` : a));
}

function trees(list: TreeSummary[]): string[] {
  return list.map(t => (t.name ? `${t.name}: ${t.summary}` : t.summary));
}

export interface HeaderSummary {
  inputs: string[];
  outputs: string[];
  /** leaf counts, for the tooltip */
  inLeaves: number;
  outLeaves: number;
}

export function headerSummary(p: JaxprPayload): HeaderSummary {
  const tin = p.trees?.in;
  const tout = p.trees?.out;
  return {
    inputs: tin && tin.length ? trees(tin) : groupAvals(p.in_avals),
    outputs: tout && tout.length ? trees(tout) : groupAvals(p.out_avals),
    inLeaves: p.in_avals.length,
    outLeaves: p.out_avals.length
  };
}

/** `(ps: list[24] of {...}, x: f32[16,128]) → (120 × f32[128,128])` */
export function signatureText(s: HeaderSummary): string {
  return `(${s.inputs.join(', ')}) → (${s.outputs.join(', ')})`;
}

/** Top primitives of the histogram: `[["mul", 400], ...]`, largest first. */
export function topPrimitives(
  hist: Record<string, number>,
  n = 12
): [string, number][] {
  return Object.entries(hist)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n);
}

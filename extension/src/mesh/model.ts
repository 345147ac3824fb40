/**
 * The mesh explorer payload's types and its words: the operation line, collectives as rows,
 * memory and the diff from the previous state.  Pure: `view.ts` turns these into DOM.
 */

import { fmtBytes, fmtSeconds } from '../bench/format';
import type {
  ExplorerCollective,
  ExplorerDiff,
  MeshExplorerPayload
} from '../generated/mesh-explorer';

export type {
  ExplorerCollective,
  ExplorerDiff,
  MeshExplorerPayload
} from '../generated/mesh-explorer';

/** `{0,1,2,3} {4,5,6,7}`, at most `limit` groups. */
export function groupsText(c: ExplorerCollective, limit = 8): string {
  if (c.pairs) {
    const ps = c.pairs
      .slice(0, limit)
      .map(p => `${p[0]}→${p[1]}`)
      .join(' ');
    return c.pairs.length > limit ? `${ps} … (${c.pairs.length} pairs)` : ps;
  }
  if (!c.groups) {
    return '';
  }
  const gs = c.groups
    .slice(0, limit)
    .map(g => `{${g.join(',')}}`)
    .join(' ');
  return c.groups.length > limit ? `${gs} … (${c.groups.length} groups)` : gs;
}

/**
 * The device groups a collective works in, for outlining them in the mesh grids: its replica
 * groups, or for a collective-permute the connected sets its source -> target pairs form
 * (a ring over 'model' is one group per ring), in order of first appearance; null if neither.
 */
export function deviceGroups(c: ExplorerCollective): number[][] | null {
  if (c.groups) {
    return c.groups;
  }
  if (!c.pairs) {
    return null;
  }
  const parent = new Map<number, number>();
  const find = (d: number): number => {
    let r = d;
    while (parent.get(r) !== r) {
      r = parent.get(r)!;
    }
    while (parent.get(d) !== r) {
      const n = parent.get(d)!;
      parent.set(d, r);
      d = n;
    }
    return r;
  };
  const order: number[] = [];
  for (const p of c.pairs) {
    for (const d of p) {
      if (!parent.has(d)) {
        parent.set(d, d);
        order.push(d);
      }
    }
    const a = find(p[0]);
    const b = find(p[1]);
    if (a !== b) {
      parent.set(b, a);
    }
  }
  const groups = new Map<number, number[]>();
  for (const d of order) {
    const r = find(d);
    const g = groups.get(r);
    if (g) {
      g.push(d);
    } else {
      groups.set(r, [d]);
    }
  }
  return [...groups.values()];
}

/** The collectives table: one row of cells per collective. */
export function collectiveRows(cs: ExplorerCollective[]): string[][] {
  return cs.map(c => [
    c.description || c.kind,
    c.shape,
    fmtBytes(c.bytes),
    groupsText(c),
    c.op_name
  ]);
}

/** The memory_analysis fields both views show, with the Python view's labels, in its order. */
const MEMORY_FIELDS: [
  keyof NonNullable<MeshExplorerPayload['memory']>,
  string
][] = [
  ['argument_bytes', 'arguments'],
  ['output_bytes', 'outputs'],
  ['temp_bytes', 'temporaries'],
  ['alias_bytes', 'aliased'],
  ['generated_code_bytes', 'generated code'],
  ['peak_bytes', 'peak']
];

/** Memory per device, the fields XLA reported, as (label, text). */
export function memoryCells(
  m: MeshExplorerPayload['memory']
): [string, string][] {
  if (!m) {
    return [];
  }
  const out: [string, string][] = [];
  for (const [k, label] of MEMORY_FIELDS) {
    const v = m[k];
    if (typeof v === 'number') {
      out.push([label, fmtBytes(v)]);
    }
  }
  return out;
}

export function timingsText(t: MeshExplorerPayload['timings']): string {
  const parts: string[] = [];
  if (t.trace_s !== null) {
    parts.push(`trace ${fmtSeconds(t.trace_s)}`);
  }
  if (t.lower_s !== null) {
    parts.push(`lower ${fmtSeconds(t.lower_s)}`);
  }
  if (t.compile_s !== null) {
    parts.push(`compile ${fmtSeconds(t.compile_s)}`);
  }
  if (t.elapsed_s !== null) {
    parts.push(`total ${fmtSeconds(t.elapsed_s)}`);
  }
  return parts.join(' · ');
}

/** The diff's lines: `+ all-gather …`, `- …`, bytes and output before → after. */
export function diffLines(
  d: ExplorerDiff | null
): { sign: '+' | '-' | ''; text: string }[] {
  if (!d) {
    return [];
  }
  if (!d.changed) {
    return [{ sign: '', text: 'no change from the previous state' }];
  }
  const out: { sign: '+' | '-' | ''; text: string }[] = [];
  for (const a of d.added) {
    out.push({ sign: '+', text: a });
  }
  for (const r of d.removed) {
    out.push({ sign: '-', text: r });
  }
  if (d.collective_bytes_before !== d.collective_bytes_after) {
    out.push({
      sign: '',
      text: `collective bytes ${fmtBytes(d.collective_bytes_before)} → ${fmtBytes(d.collective_bytes_after)}`
    });
  }
  if (d.temp_bytes_before !== d.temp_bytes_after) {
    out.push({
      sign: '',
      text: `temp bytes ${fmtBytes(d.temp_bytes_before)} → ${fmtBytes(d.temp_bytes_after)}`
    });
  }
  if (d.output_before !== d.output_after) {
    out.push({
      sign: '',
      text: `output ${d.output_before} → ${d.output_after}`
    });
  }
  return out;
}

/**
 * Search nodes by op, shape, name or source line.
 *
 * Queries: `cell line 12` / `cell [3] line 12` / `line 12` / `:12` / `file.py:12` match
 * source lines; anything else is words that must all occur in a node's name, opcode,
 * label, shape, fused ops, primitives or op_name (case-insensitive).
 */

import type { CellMap } from '../common/cells';
import { cellNumber, isCell } from './sources';
import type { HloNode } from './types';

export type Query =
  | {
      kind: 'line';
      line: number;
      cell: 'any' | number | null;
      file: string | null;
    }
  | { kind: 'text'; words: string[] }
  | { kind: 'empty' };

export function parseQuery(raw: string): Query {
  const q = raw.trim();
  if (!q) {
    return { kind: 'empty' };
  }
  let m = /^cell\s*(?:\[\s*(\d+)\s*\])?\s*(?:line|:)\s*(\d+)$/i.exec(q);
  if (m) {
    return {
      kind: 'line',
      line: Number(m[2]),
      cell: m[1] ? Number(m[1]) : 'any',
      file: null
    };
  }
  m = /^(?:line\s*|:)(\d+)$/i.exec(q);
  if (m) {
    return { kind: 'line', line: Number(m[1]), cell: null, file: null };
  }
  m = /^(\S+?):(\d+)$/.exec(q);
  if (m) {
    return { kind: 'line', line: Number(m[2]), cell: null, file: m[1] };
  }
  return { kind: 'text', words: q.toLowerCase().split(/\s+/) };
}

export class NodeSearch {
  private _hay: string[] | null = null;

  constructor(
    private readonly _nodes: HloNode[],
    private readonly _opNames: string[],
    private readonly _cells: CellMap
  ) {}

  private _haystack(): string[] {
    if (!this._hay) {
      this._hay = this._nodes.map((n, i) =>
        [
          n.id,
          n.opcode,
          n.label,
          n.shape,
          n.fusion_kind ?? '',
          (n.fused_ops ?? []).join(' '),
          (n.primitives ?? []).join(' '),
          this._opNames[i] ?? ''
        ]
          .join('\n')
          .toLowerCase()
      );
    }
    return this._hay;
  }

  /** indices of the matching nodes, in graph order */
  find(raw: string): number[] {
    const q = parseQuery(raw);
    const out: number[] = [];
    if (q.kind === 'empty') {
      return out;
    }
    if (q.kind === 'text') {
      const hay = this._haystack();
      for (let i = 0; i < hay.length; i++) {
        if (q.words.every(w => hay[i].includes(w))) {
          out.push(i);
        }
      }
      return out;
    }
    const fileNeedle = q.file?.toLowerCase() ?? null;
    this._nodes.forEach((n, i) => {
      const hit = (n.sources ?? []).some(s => {
        if (s.line !== q.line) {
          return false;
        }
        if (q.cell === 'any') {
          return isCell(this._cells, s.file);
        }
        if (typeof q.cell === 'number') {
          return cellNumber(this._cells, s.file) === q.cell;
        }
        if (fileNeedle !== null) {
          return s.file.toLowerCase().includes(fileNeedle);
        }
        return true;
      });
      if (hit) {
        out.push(i);
      }
    });
    return out;
  }
}

/** The heaviest fusions by estimated bytes moved (all nodes when there is no fusion). */
export function topFusions(nodes: HloNode[], n = 10): number[] {
  let idx = nodes.map((_, i) => i).filter(i => nodes[i].kind === 'fusion');
  if (idx.length === 0) {
    idx = nodes.map((_, i) => i).filter(i => nodes[i].bytes_moved > 0);
  }
  idx.sort((a, b) => nodes[b].bytes_moved - nodes[a].bytes_moved || a - b);
  return idx.slice(0, n);
}

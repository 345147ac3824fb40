/** Source lines of HLO nodes: how they read ("cell [3] line 4"), and which cell they are. */

import { cellKey, type CellMap } from '../common/cells';
import type { LineSelection } from '../sourcelines/hub';
import type { HloNode, HloSource } from './types';

const MAGIC_CELL = /^<workbench-cell-(\d+)>$/;

/** The cell's prompt number of a source file, null: not a cell. */
export function cellNumber(cells: CellMap, file: string): number | null {
  const info = cells[file];
  if (info && info.number !== null && info.number !== undefined) {
    return info.number;
  }
  const m = MAGIC_CELL.exec(file);
  return m ? Number(m[1]) : null;
}

export function isCell(cells: CellMap, file: string): boolean {
  return file in cells || MAGIC_CELL.test(file);
}

/** The hub's key of a source file's cell (payload `cells`, else the magic cell's number). */
export function cellKeyOf(cells: CellMap, file: string): string | null {
  const k = cellKey(cells, file);
  if (k !== null) {
    return k;
  }
  const m = MAGIC_CELL.exec(file);
  return m ? `#${m[1]}` : null;
}

function shortPath(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? `…/${parts.slice(-2).join('/')}` : file;
}

export function formatSource(cells: CellMap, s: HloSource): string {
  if (isCell(cells, s.file)) {
    const n = cellNumber(cells, s.file);
    return `cell [${n === null ? ' ' : n}] line ${s.line}`;
  }
  return `${shortPath(s.file)}:${s.line}`;
}

/** cell key -> sorted lines, over these nodes' sources */
export function linesByCell(
  cells: CellMap,
  nodes: Iterable<HloNode>
): Map<string, number[]> {
  const acc = new Map<string, Set<number>>();
  for (const node of nodes) {
    for (const s of node.sources ?? []) {
      const key = cellKeyOf(cells, s.file);
      if (key === null || s.line <= 0) {
        continue;
      }
      let set = acc.get(key);
      if (!set) {
        acc.set(key, (set = new Set()));
      }
      set.add(s.line);
    }
  }
  const out = new Map<string, number[]>();
  for (const [k, set] of acc) {
    out.set(
      k,
      [...set].sort((a, b) => a - b)
    );
  }
  return out;
}

/** Indices of the nodes with a source line in a selection (a line picked in the editor). */
export function nodesForSelection(
  cells: CellMap,
  nodes: HloNode[],
  sel: LineSelection
): number[] {
  const lines = new Set(sel.lines);
  const out: number[] = [];
  nodes.forEach((n, i) => {
    if (
      (n.sources ?? []).some(
        s => lines.has(s.line) && cellKeyOf(cells, s.file) === sel.cell
      )
    ) {
      out.push(i);
    }
  });
  return out;
}

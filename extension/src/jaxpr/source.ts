/**
 * Where an equation came from, as the user reads it: "cell [3] line 4" for notebook cells
 * (via the payload's `cells`, or a `<workbench-cell-N>` file name when `cells` is absent),
 * `file.py:12` otherwise; and the hub keys (see common/cells.ts) under which a cell's lines
 * are linked.
 */

import { cellKey, type CellMap } from '../common/cells';
import type { Source } from './types';

const MAGIC_CELL = /^<workbench-cell-(\d+)>$/;

/** The hub key of the cell `file` is (its id, else `#<number>`); null: not a cell. */
export function fileCellKey(cells: CellMap, file: string): string | null {
  const key = cellKey(cells, file);
  if (key) {
    return key;
  }
  const m = MAGIC_CELL.exec(file);
  return m ? `#${m[1]}` : null;
}

/** Every key a selection of `file`'s lines may arrive under (cell id and `#number`). */
export function fileCellAliases(cells: CellMap, file: string): string[] {
  const out: string[] = [];
  const info = cells[file];
  if (info?.cell_id) {
    out.push(info.cell_id);
  }
  if (info && info.number !== null && info.number !== undefined) {
    out.push(`#${info.number}`);
  }
  const m = MAGIC_CELL.exec(file);
  if (m && !out.includes(`#${m[1]}`)) {
    out.push(`#${m[1]}`);
  }
  return out;
}

function basename(file: string): string {
  const i = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return i >= 0 ? file.slice(i + 1) : file;
}

/** "cell [N] line L" for a cell, "name.py:L" for a file. */
export function sourceLabel(cells: CellMap, src: Source): string {
  const info = cells[src.file];
  if (info) {
    return info.number !== null && info.number !== undefined
      ? `cell [${info.number}] line ${src.line}`
      : `cell line ${src.line}`;
  }
  const m = MAGIC_CELL.exec(src.file);
  if (m) {
    return `cell [${m[1]}] line ${src.line}`;
  }
  return `${basename(src.file)}:${src.line}`;
}

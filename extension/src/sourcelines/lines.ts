/**
 * Pure pieces of the editor side of linking: which hub keys a cell answers to, and the
 * line marks (colour, selected) to paint in its editor.
 */

import type { LineSelection } from './hub';

/** The hub keys of a cell: its id and, when it has run, `#<execution count>`. */
export function cellKeys(
  id: string | null | undefined,
  executionCount: number | null | undefined
): string[] {
  const out: string[] = [];
  if (id) {
    out.push(id);
  }
  if (typeof executionCount === 'number') {
    out.push(`#${executionCount}`);
  }
  return out;
}

/** The colours of a cell's lines under all its keys (the id's win over `#N`'s). */
export function mergeColors(
  keys: string[],
  colorsOf: (key: string) => Map<number, string>
): Map<number, string> {
  const out = new Map<number, string>();
  for (let i = keys.length - 1; i >= 0; i--) {
    for (const [l, c] of colorsOf(keys[i])) {
      out.set(l, c);
    }
  }
  return out;
}

/** The lines of `sel` that are this cell's (empty when `sel` is another cell's). */
export function selectedLines(
  keys: string[],
  sel: LineSelection | null
): number[] {
  return sel && keys.includes(sel.cell) ? [...sel.lines] : [];
}

/** The key under which `line` is coloured (what a hover on it publishes), or null. */
export function keyOfLine(
  keys: string[],
  line: number,
  colorsOf: (key: string) => Map<number, string>
): string | null {
  for (const k of keys) {
    if (colorsOf(k).has(line)) {
      return k;
    }
  }
  return null;
}

export interface LineMark {
  line: number;
  color: string | null;
  selected: boolean;
}

/** Marks in line order for a document of `lineCount` lines (lines past its end dropped). */
export function lineMarks(
  colors: Map<number, string>,
  selected: Iterable<number>,
  lineCount: number
): LineMark[] {
  const sel = new Set(selected);
  const lines = new Set<number>([...colors.keys(), ...sel]);
  return [...lines]
    .filter(l => l >= 1 && l <= lineCount)
    .sort((a, b) => a - b)
    .map(line => ({
      line,
      color: colors.get(line) ?? null,
      selected: sel.has(line)
    }));
}

/** A short fingerprint of marks, to skip editor updates that change nothing. */
export function marksKey(
  colors: Map<number, string>,
  selected: number[]
): string {
  const c = [...colors]
    .sort((a, b) => a[0] - b[0])
    .map(([l, col]) => `${l}=${col}`)
    .join(';');
  return `${c}|${[...selected].sort((a, b) => a - b).join(',')}`;
}

/**
 * What marks the boxes of a drawn graph: flags (the selected node, nodes of lines selected
 * elsewhere, search matches) and the source-line colour stripe of each box, from the
 * source-line hub's colours.
 */

import type { CellMap } from '../common/cells';
import { resolveColor } from '../sourcelines/colors';
import { HUB } from '../sourcelines/hub';
import type { GraphModel } from './model';
import { FLAG_LINKED, FLAG_SEARCH, FLAG_SELECTED, type Scene } from './scene';
import { cellKeyOf } from './sources';
import type { VisibleGraph } from './visible';

/** What is marked, as node indices of the graph (-1: nothing selected). */
export interface Marks {
  linked: Iterable<number>;
  matches: readonly number[];
  selected: number;
}

/**
 * Set `s.flags` for the boxes `vg` draws: a node's marks go to the box drawing it (its
 * own, or the folded cluster around it).
 */
export function flagScene(s: Scene, vg: VisibleGraph, marks: Marks): void {
  s.flags.fill(0);
  const rep = vg.rep;
  for (const i of marks.linked) {
    if (rep[i] >= 0) {
      s.flags[rep[i]] |= FLAG_LINKED;
    }
  }
  for (const i of marks.matches) {
    if (rep[i] >= 0) {
      s.flags[rep[i]] |= FLAG_SEARCH;
    }
  }
  const selected = marks.selected;
  if (selected >= 0) {
    const k = vg.items.findIndex(
      it => it.kind === 'node' && it.ref === selected
    );
    if (k >= 0) {
      s.flags[k] |= FLAG_SELECTED;
    } else if (rep[selected] >= 0) {
      s.flags[rep[selected]] |= FLAG_SELECTED;
    }
  }
}

/**
 * The stripe colour of item `item` (a canvas colour resolved under `box`): the hub's colour
 * of the first of its node's source lines that has one; null for clusters and lines with
 * none.
 */
export function stripeOf(
  vg: VisibleGraph,
  model: GraphModel,
  item: number,
  cells: CellMap,
  box: HTMLElement | undefined
): string | null {
  const it = vg.items[item];
  if (it.kind !== 'node') {
    return null;
  }
  for (const s of model.g.nodes[it.ref].sources ?? []) {
    const key = cellKeyOf(cells, s.file);
    if (key === null) {
      continue;
    }
    const c = HUB.colorsOf(key).get(s.line);
    if (c) {
      return box ? resolveColor(c, box) : null;
    }
  }
  return null;
}

/**
 * Showing a cell of a notebook from the panel.  Cells are found by the notebook's cell id
 * (the model's `id`, what the kernel reports as `cell_id`), never by position: execution
 * counts repeat and cells move.  A windowed notebook (JupyterLab 4's default) may have no
 * DOM for an off-screen cell, so the notebook scrolls by index (`scrollToItem`), which works
 * whether the cell is attached or not.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';

/** The index of the cell with model id `cellId`, or -1. */
export function cellIndex(panel: NotebookPanel, cellId: string): number {
  const cells = panel.content?.model?.cells;
  if (!cells) {
    return -1;
  }
  for (let i = 0; i < cells.length; i++) {
    if (cells.get(i).id === cellId) {
      return i;
    }
  }
  return -1;
}

/** Scroll `panel` to its cell `cellId` and make it the active cell; false if absent. */
export async function showCell(
  panel: NotebookPanel,
  cellId: string
): Promise<boolean> {
  const index = cellIndex(panel, cellId);
  if (index < 0) {
    return false;
  }
  const nb = panel.content;
  nb.activeCellIndex = index;
  try {
    await nb.scrollToItem(index, 'center');
  } catch {
    // an older Notebook without windowing: the active cell is scrolled into view by Lab
    nb.activeCell?.node.scrollIntoView({ block: 'center' });
  }
  return true;
}

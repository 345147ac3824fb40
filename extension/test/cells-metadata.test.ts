// @vitest-environment jsdom
/**
 * The stored badge against JupyterLab's own shared cell models (`@jupyter/ydoc`, behind
 * `CellModel.getMetadata` / `setMetadata`): a copied / pasted / duplicated cell gets a new
 * id but keeps its metadata and, by default (`NotebookActions.paste`), its outputs and
 * execution count, so the original's stored badge travels with it.  It must not be shown
 * under the copy: it describes another cell's run, and clicking it would open the panel
 * filtered to a cell with no entries.
 */
import { YNotebook, type YCodeCell } from '@jupyter/ydoc';
import { Signal } from '@lumino/signaling';
import { describe, expect, it } from 'vitest';

import { METADATA_KEY } from '../src/cells/badges';
import {
  NotebookStrips,
  type CellModelLike,
  type StripSource
} from '../src/cells/decorations';
import { recompiledBadge as badge } from './cells-fixtures';

/** A cell model the way `@jupyterlab/cells`' CodeCellModel is one: a thin face over its shared model. */
class SharedBackedModel implements CellModelLike {
  readonly metadataChanged = new Signal<this, unknown>(this);
  readonly stateChanged = new Signal<this, { name: string; newValue: unknown }>(
    this
  );
  readonly type = 'code';
  constructor(readonly sharedModel: YCodeCell) {
    sharedModel.metadataChanged.connect((_, change) =>
      this.metadataChanged.emit(change)
    );
  }
  get id(): string {
    return this.sharedModel.getId();
  }
  get executionCount(): number | null {
    return this.sharedModel.execution_count;
  }
  getMetadata(key: string): unknown {
    return this.sharedModel.getMetadata(key);
  }
  setMetadata(key: string, value: any): void {
    this.sharedModel.setMetadata(key, value);
  }
  deleteMetadata(key: string): void {
    this.sharedModel.deleteMetadata(key);
  }
}

function part(cls: string): HTMLDivElement {
  const d = document.createElement('div');
  d.className = cls;
  return d;
}

class Cell {
  readonly node = part('jp-Cell jp-CodeCell');
  readonly disposed = new Signal<this, void>(this);
  readonly isDisposed = false;
  readonly ready = Promise.resolve();
  constructor(readonly model: SharedBackedModel) {
    for (const cls of [
      'jp-CellHeader',
      'jp-Cell-inputWrapper',
      'jp-Cell-outputWrapper',
      'jp-CellFooter'
    ]) {
      this.node.appendChild(part(cls));
    }
  }
}

const source: StripSource = {
  badge: () => null,
  diff: () => null,
  liveMode: () => false,
  openPanel: () => undefined
};

describe('a copy of a cell', () => {
  it("does not show the original's stored badge (a new id, the same metadata and count)", async () => {
    const nb = YNotebook.create({ disableDocumentWideUndoRedo: true });
    const original = nb.insertCell(0, {
      cell_type: 'code',
      id: 'c-1',
      source: 'y = f(x)',
      execution_count: 5,
      metadata: { [METADATA_KEY]: { badge: badge() } }
    }) as YCodeCell;
    // what NotebookActions.paste / duplicate insert: the cell's JSON without its id
    const { id: _id, ...json } = original.toJSON();
    const copy = nb.insertCell(1, json) as YCodeCell;
    expect(copy.getId()).not.toBe('c-1');
    expect(copy.execution_count).toBe(5);

    const cells = [
      new Cell(new SharedBackedModel(original)),
      new Cell(new SharedBackedModel(copy))
    ];
    const notebook = {
      widgets: cells,
      model: { cells: { changed: new Signal<object, unknown>({}) } },
      modelChanged: new Signal<object, void>({}),
      isDisposed: false
    };
    const strips = new NotebookStrips(notebook, source);
    await new Promise(r => setTimeout(r, 0));
    const shown = (c: Cell): string | null =>
      c.node.querySelector('.jwb-cell-badge:not([hidden])')?.textContent ??
      null;
    expect(shown(cells[0])).toContain('2 compiles');
    expect(shown(cells[1])).toBeNull();
    strips.dispose();
    nb.dispose();
  });
});

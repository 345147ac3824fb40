// @vitest-environment jsdom
/**
 * Keys typed into an output's controls stay in the output: Enter in the HLO search box steps
 * to the next match without the keydown reaching the notebook around the output, Escape
 * clears a search before it leaves, and linking a node to its source line scrolls the
 * notebook without activating the cell (activation focuses the cell's editor).
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

// jsdom has no DragEvent, which @lumino/dragdrop (under @lumino/widgets) touches on import
vi.hoisted(() => {
  const g = globalThis as any;
  if (typeof g.DragEvent === 'undefined') {
    g.DragEvent = class DragEvent extends g.MouseEvent {};
  }
});

import { keepKeysInside } from '../src/common/keys';
import { WorkbenchRenderer } from '../src/common/renderer';
import type { FeatureView } from '../src/common/featureView';
import { HUB, type LineSelection } from '../src/sourcelines/hub';
import { scrollToCellOnly } from '../src/sourcelines/editors';

import { HLO_MIME, stubDrawing, whileBundle } from './hlo-fixtures';

const MIME = HLO_MIME;
const bundle = whileBundle();
/** the fixture program's first source line: a search for `:<line>` finds nodes linked to it */
const SOURCE = Object.values(
  (bundle[MIME] as { graphs: Record<string, { nodes: any[] }> }).graphs
)
  .flatMap(g => g.nodes)
  .flatMap(n => (n.sources ?? []) as Array<{ file: string; line: number }>)[0];

beforeAll(stubDrawing);

afterEach(() => {
  document.body.textContent = '';
  HUB.select(null);
});

const key = (k: string, init: KeyboardEventInit = {}): KeyboardEvent =>
  new KeyboardEvent('keydown', {
    key: k,
    bubbles: true,
    cancelable: true,
    ...init
  });

/** A cell (focusable, as JupyterLab's are) holding the HLO output drawn by the renderer. */
async function hloInCell(): Promise<{
  cell: HTMLElement;
  output: HTMLElement;
  keys: KeyboardEvent[];
  dispose: () => void;
}> {
  const { HloView } = await import('../src/hlo/output');
  const cell = document.createElement('div');
  cell.className = 'jp-Cell';
  cell.tabIndex = 0;
  document.body.appendChild(cell);
  // what the notebook and JupyterLab's shortcuts would see: keydowns leaving the output
  const keys: KeyboardEvent[] = [];
  cell.addEventListener('keydown', ev => keys.push(ev));
  const renderer = new WorkbenchRenderer(
    MIME,
    () => new HloView('') as FeatureView
  );
  cell.appendChild(renderer.node);
  const data = JSON.parse(JSON.stringify(bundle));
  // the program's file is cell 7 of the notebook: its nodes link to that cell's lines
  data[MIME].cells = { [SOURCE.file]: { number: 7, cell_id: 'cell-7' } };
  await renderer.renderModel({
    data,
    metadata: {},
    trusted: true,
    setData: () => undefined
  } as unknown as IRenderMime.IMimeModel);
  await new Promise(r => setTimeout(r, 20));
  return {
    cell,
    output: renderer.node,
    keys,
    dispose: () => renderer.dispose()
  };
}

describe('keys in an output', () => {
  it('Enter in the HLO search box steps to a match and stays in the output', async () => {
    const { output, keys, dispose } = await hloInCell();
    const published: LineSelection[] = [];
    const off = HUB.onSelect(s => {
      if (s) {
        published.push(s);
      }
    });
    const search = output.querySelector('input.jwb-hlo-search')!;
    search.focus();
    (search as HTMLInputElement).value = `:${SOURCE.line}`;
    search.dispatchEvent(new Event('input', { bubbles: true }));
    const count = output.querySelector('.jwb-hlo-search-count')!;
    expect(count.textContent).toMatch(/^[1-9]\d* match/);
    const enter = key('Enter');
    search.dispatchEvent(enter);
    await new Promise(r => setTimeout(r, 20));
    expect(keys).toEqual([]);
    expect(enter.defaultPrevented).toBe(true);
    expect(count.textContent).toMatch(/^1 \/ \d+$/);
    expect(document.activeElement).toBe(search);
    // stepping selects the node and links it to its source line (what used to take focus)
    expect(published.some(s => s.origin === 'hlo' && s.reveal)).toBe(true);
    const shiftEnter = key('Enter', { shiftKey: true });
    search.dispatchEvent(shiftEnter);
    expect(keys).toEqual([]);
    off();
    dispose();
  });

  it('letters, arrows and Enter on the canvas and table rows never reach the notebook', async () => {
    const { output, keys, dispose } = await hloInCell();
    const canvas = output.querySelector('canvas.jwb-hlo-canvas') as HTMLElement;
    const row = output.querySelector('tr[tabindex]') as HTMLElement | null;
    for (const target of [canvas, row].filter(Boolean) as HTMLElement[]) {
      for (const k of ['x', 'd', 'ArrowDown', 'Enter', ' ', 'a']) {
        target.dispatchEvent(key(k));
      }
    }
    expect(keys).toEqual([]);
    // shortcuts with a modifier (save, the command palette) are JupyterLab's
    canvas.dispatchEvent(key('s', { ctrlKey: true }));
    expect(keys.map(k => k.key)).toEqual(['s']);
    dispose();
  });

  it('Escape clears the search box, then hands the keyboard to the cell, not its editor', async () => {
    const { cell, output, keys, dispose } = await hloInCell();
    const search = output.querySelector(
      'input.jwb-hlo-search'
    ) as HTMLInputElement;
    search.focus();
    search.value = 'fusion';
    search.dispatchEvent(new Event('input', { bubbles: true }));
    search.dispatchEvent(key('Escape'));
    expect(search.value).toBe('');
    expect(output.querySelector('.jwb-hlo-search-count')!.textContent).toBe('');
    expect(document.activeElement).toBe(search);
    search.dispatchEvent(key('Escape'));
    expect(document.activeElement).toBe(cell);
    expect(keys).toEqual([]);
    dispose();
  });

  it('keepKeysInside leaves keys on the root itself and outside it alone', () => {
    const parent = document.createElement('div');
    const root = document.createElement('div');
    const button = document.createElement('button');
    root.appendChild(button);
    parent.appendChild(root);
    document.body.appendChild(parent);
    const seen: string[] = [];
    parent.addEventListener('keydown', ev => seen.push(ev.key));
    const off = keepKeysInside(root);
    root.dispatchEvent(key('a'));
    button.dispatchEvent(key('b'));
    off();
    button.dispatchEvent(key('c'));
    expect(seen).toEqual(['a', 'c']);
  });
});

describe('linking a line to its cell', () => {
  it('scrolls the notebook to the cell without selecting or activating it', async () => {
    const cells = [{ name: 'a' }, { name: 'b' }];
    const calls: string[] = [];
    const notebook = {
      widgets: cells,
      scrollToItem: (i: number, align?: string) => {
        calls.push(`scrollToItem ${i} ${align}`);
        return Promise.resolve();
      },
      // what Notebook.scrollToCell does besides scrolling: the cell's editor takes focus
      scrollToCell: () => {
        calls.push('scrollToCell');
        return Promise.resolve();
      },
      select: () => calls.push('select'),
      deselectAll: () => calls.push('deselectAll')
    };
    await scrollToCellOnly(notebook, cells[1]);
    expect(calls).toEqual(['scrollToItem 1 smart']);
    await scrollToCellOnly(notebook, { name: 'gone' });
    expect(calls).toEqual(['scrollToItem 1 smart']);
  });
});

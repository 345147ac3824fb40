// @vitest-environment jsdom
/**
 * Badges and live diffs in a DOM (jsdom) with fake cells shaped like JupyterLab 4's: a code
 * cell node holds header, input wrapper, output wrapper, footer; a windowed-out code cell
 * has every child but the output wrapper taken out (CodeCellLayout.onAfterDetach) and put
 * back when it scrolls into view; cells start as placeholders with no children until
 * `ready`.  The strip must come back with the cell, follow metadata and link changes, and
 * never put kernel text in as HTML.
 */
import { Signal } from '@lumino/signaling';
import { afterEach, describe, expect, it } from 'vitest';

import { METADATA_KEY, renderBadge } from '../src/cells/badges';
import {
  NotebookStrips,
  dropStoredBadge,
  type StripSource
} from '../src/cells/decorations';
import { renderDiff } from '../src/cells/liveDiff';
import type { CellBadge, LiveDiff } from '../src/sidepanel/protocol';
import { recompiledBadge as badge } from './cells-fixtures';

const diff = (over: Partial<LiveDiff> = {}): LiveDiff => ({
  cell: '5',
  cell_id: 'c-1',
  kind: 'jaxpr',
  t: 1,
  function: 'f',
  added: [
    {
      what: 'mul',
      line: { file: 'x.py', line: 3, function: 'f', text: 'y = x * 2' },
      count: 2,
      examples: ['b:f32[4] = mul a 2.0']
    }
  ],
  removed: [],
  totals: [{ name: 'equations', before: 3, after: 5, unit: 'count' }],
  ...over
});

class FakeModel {
  readonly metadataChanged = new Signal<this, unknown>(this);
  readonly stateChanged = new Signal<this, { name: string; newValue: unknown }>(
    this
  );
  readonly type = 'code';
  private _meta: Record<string, unknown> = {};
  private _count: number | null = null;
  constructor(
    readonly id: string,
    count: number | null = null
  ) {
    this._count = count;
  }
  get executionCount(): number | null {
    return this._count;
  }
  set executionCount(v: number | null) {
    this._count = v;
    this.stateChanged.emit({ name: 'executionCount', newValue: v });
  }
  run(): void {
    this._count = null;
    this.stateChanged.emit({ name: 'executionCount', newValue: null });
    this.stateChanged.emit({ name: 'executionState', newValue: 'running' });
  }
  getMetadata(key: string): unknown {
    return this._meta[key];
  }
  setMetadata(key: string, value: unknown): void {
    this._meta[key] = JSON.parse(JSON.stringify(value));
    this.metadataChanged.emit({ key });
  }
  deleteMetadata(key: string): void {
    delete this._meta[key];
    this.metadataChanged.emit({ key });
  }
}

function part(cls: string): HTMLDivElement {
  const d = document.createElement('div');
  d.className = cls;
  return d;
}

class FakeCell {
  readonly node = part('jp-Cell jp-CodeCell');
  readonly disposed = new Signal<this, void>(this);
  isDisposed = false;
  private _resolve!: () => void;
  readonly ready = new Promise<void>(r => (this._resolve = r));
  header!: HTMLElement;
  input!: HTMLElement;
  output!: HTMLElement;
  footer!: HTMLElement;
  constructor(public model: FakeModel) {}
  /** initializeDOM: a placeholder becomes a rendered cell */
  render(): void {
    this.header = this.node.appendChild(part('jp-CellHeader'));
    this.input = this.node.appendChild(part('jp-Cell-inputWrapper'));
    this.output = this.node.appendChild(part('jp-Cell-outputWrapper'));
    this.footer = this.node.appendChild(part('jp-CellFooter'));
    this._resolve();
  }
  /** full windowing: out of the viewport (CodeCellLayout.onAfterDetach keeps only the output wrapper) */
  windowOut(): void {
    this.node.style.display = 'none';
    for (const n of [this.header, this.input, this.footer]) {
      n.remove();
    }
  }
  /** back into the viewport (CodeCellLayout.onBeforeAttach) */
  windowIn(): void {
    this.node.style.display = '';
    this.node.insertBefore(this.header, this.output);
    this.node.insertBefore(this.input, this.output);
    this.node.appendChild(this.footer);
  }
  dispose(): void {
    this.isDisposed = true;
    this.node.remove();
    (this as { model: FakeModel | null }).model = null; // as Cell.dispose does
    this.disposed.emit();
  }
}

class FakeCells {
  readonly changed = new Signal<this, unknown>(this);
}

class FakeNotebook {
  readonly modelChanged = new Signal<this, void>(this);
  readonly cellInViewportChanged = new Signal<this, FakeCell>(this);
  readonly model = { cells: new FakeCells() };
  readonly node = document.body.appendChild(part('jp-Notebook'));
  isDisposed = false;
  widgets: FakeCell[] = [];
  add(cell: FakeCell, index = this.widgets.length): void {
    this.widgets.splice(index, 0, cell);
    this.node.appendChild(cell.node);
    this.model.cells.changed.emit({});
  }
}

class FakeSource implements StripSource {
  badges = new Map<string, CellBadge>();
  diffs = new Map<string, LiveDiff>();
  live = false;
  opened: string[] = [];
  badge(id: string): CellBadge | null {
    return this.badges.get(id) ?? null;
  }
  diff(id: string): LiveDiff | null {
    return this.diffs.get(id) ?? null;
  }
  liveMode(): boolean {
    return this.live;
  }
  openPanel(id: string): void {
    this.opened.push(id);
  }
}

const tick = (): Promise<void> => new Promise(r => setTimeout(r, 0));
const stripIn = (cell: FakeCell): HTMLElement | null =>
  cell.node.querySelector('.jwb-cell-strip');
const badgeIn = (cell: FakeCell): HTMLButtonElement | null =>
  cell.node.querySelector('.jwb-cell-badge:not([hidden])');

afterEach(() => {
  document.body.textContent = '';
});

describe('badge and diff rendering', () => {
  it('keeps a reason with HTML in it as text', () => {
    const button = document.createElement('button');
    const evil = '<img src=x onerror=alert(1)>';
    renderBadge(button, badge({ first_reason: evil }));
    expect(button.querySelector('img')).toBeNull();
    expect(button.textContent).toContain(evil);
    expect(button.title).toContain(evil);
  });

  it('names the badge button with its visible text first (WCAG 2.5.3, label in name), then the details', () => {
    const button = document.createElement('button');
    renderBadge(button, badge());
    const label = button.getAttribute('aria-label') ?? '';
    const visible = [...button.children].map(c => c.textContent).join(' ');
    expect(visible).toBe(
      'JAX 2 compiles · 1.2 s · 1 miss: w: shape (3,) → (4,)'
    );
    expect(label.startsWith(visible)).toBe(true);
    expect(label).toContain('first reason: w: shape (3,) → (4,)');
    expect(label).not.toContain('Click');
  });

  it('renders the diff groups and totals as text, collapsible', () => {
    const details = document.createElement('details');
    const evil = '<img src=x onerror=alert(1)>';
    renderDiff(
      details,
      diff({
        function: evil,
        removed: [
          {
            what: evil,
            line: { file: evil, line: 2, function: evil, text: evil },
            label: 'cell [7] line 2',
            count: 3,
            examples: [evil]
          }
        ]
      })
    );
    expect(details.querySelector('img')).toBeNull();
    expect(details.querySelector('summary')?.textContent).toContain('+2 −3');
    expect(details.querySelector('summary')?.textContent).toContain(
      'equations 3 → 5 (+2)'
    );
    const rows = [...details.querySelectorAll('.jwb-live-group')].map(
      r => r.textContent
    );
    expect(rows[0]).toContain('+2');
    expect(rows[0]).toContain('mul');
    expect(rows[0]).toContain('line 3: y = x * 2');
    expect(rows[1]).toContain(`cell [7] line 2: ${evil}`); // the kernel's label
    expect(rows[1]).toContain('−3');
    expect(rows[1]).toContain(evil);
    expect(details.querySelector('.jwb-live-delta')?.textContent).toBe('+2');
    expect(
      (details.querySelector('.jwb-live-example') as HTMLElement).title
    ).toBe('b:f32[4] = mul a 2.0');
  });

  it('lists a dozen groups and counts the rest', () => {
    const details = document.createElement('details');
    const many = Array.from({ length: 15 }, (_, i) => ({
      what: `op${i}`,
      line: null,
      count: 2,
      examples: []
    }));
    renderDiff(details, diff({ added: many }));
    expect(
      details.querySelectorAll('.jwb-live-added .jwb-live-group').length
    ).toBe(12);
    expect(details.querySelector('.jwb-live-more')?.textContent).toBe(
      '… 3 more groups (6 items)'
    );
  });
});

describe('strips in a windowed notebook', () => {
  it('shows a stored badge once the placeholder cell is rendered, in its footer', async () => {
    const nb = new FakeNotebook();
    const model = new FakeModel('c-1', 5);
    model.setMetadata(METADATA_KEY, { badge: badge() });
    const cell = new FakeCell(model);
    nb.add(cell);
    const strips = new NotebookStrips(nb, new FakeSource());
    await tick();
    expect(stripIn(cell)).toBeNull(); // still a placeholder
    cell.render();
    await tick();
    expect(stripIn(cell)?.parentElement).toBe(cell.footer);
    expect(cell.footer.classList.contains('jwb-cell-footer')).toBe(true);
    expect(badgeIn(cell)?.textContent).toBe(
      'JAX2 compiles · 1.2 s · 1 miss: w: shape (3,) → (4,)'
    );
    strips.dispose();
    expect(stripIn(cell)).toBeNull();
  });

  it('hides a stored badge under the outputs of a later headless run with the same count', async () => {
    // nbclient / papermill re-ran the notebook: same execution count, the interactive
    // run's badge still in the metadata, the runner's record of when the cell ran
    const nb = new FakeNotebook();
    const model = new FakeModel('c-1', 5);
    const stored = badge();
    model.setMetadata(METADATA_KEY, { badge: stored });
    const cell = new FakeCell(model);
    nb.add(cell);
    cell.render();
    const strips = new NotebookStrips(nb, new FakeSource());
    await tick();
    expect(badgeIn(cell)?.hidden).toBe(false);
    const later = new Date(stored.t * 1000 + 3_600_000).toISOString();
    model.setMetadata('execution', { 'iopub.execute_input': later });
    await tick();
    expect(badgeIn(cell)?.hidden ?? true).toBe(true);
    strips.dispose();
  });

  it('comes back with the cell after scrolling far away and back', async () => {
    const nb = new FakeNotebook();
    const source = new FakeSource();
    const cells = Array.from(
      { length: 60 },
      (_, i) => new FakeCell(new FakeModel(`c-${i}`, i + 1))
    );
    cells.forEach(c => nb.add(c));
    cells[3].model.setMetadata(METADATA_KEY, {
      badge: badge({ cell: '4', cell_id: 'c-3' })
    });
    const strips = new NotebookStrips(nb, source);
    cells.forEach(c => c.render());
    await tick();
    expect(badgeIn(cells[3])).not.toBeNull();
    const strip = stripIn(cells[3]);
    // scroll to the end: the cell goes out of the window, a link change refreshes meanwhile
    cells[3].windowOut();
    nb.cellInViewportChanged.emit(cells[3]);
    source.badges.set(
      'c-3',
      badge({ cell: '4', cell_id: 'c-3', t: 2000, compiles: 7 })
    );
    strips.refreshAll();
    // the strip waits in the detached footer; the output wrapper stays the cell node's first
    // child (CodeCellLayout.onBeforeAttach puts the other parts back around it)
    expect(cells[3].footer.contains(strip)).toBe(true);
    expect(stripIn(cells[3])).toBeNull();
    expect(cells[3].node.firstElementChild).toBe(cells[3].output);
    cells[3].windowIn();
    nb.cellInViewportChanged.emit(cells[3]);
    expect(stripIn(cells[3])).toBe(strip);
    expect(strip?.parentElement).toBe(cells[3].footer);
    expect(cells[3].node.querySelectorAll('.jwb-cell-strip').length).toBe(1);
    expect(badgeIn(cells[3])?.textContent).toContain('7 compiles');
  });

  it('re-places the strip when JupyterLab gives the cell a new footer', async () => {
    const nb = new FakeNotebook();
    const model = new FakeModel('c-1', 5);
    model.setMetadata(METADATA_KEY, { badge: badge() });
    const cell = new FakeCell(model);
    nb.add(cell);
    new NotebookStrips(nb, new FakeSource());
    cell.render();
    await tick();
    cell.footer.remove();
    cell.footer = cell.node.appendChild(part('jp-CellFooter'));
    nb.cellInViewportChanged.emit(cell);
    expect(stripIn(cell)?.parentElement).toBe(cell.footer);
  });

  it('follows a re-created cell widget (same model, new widget)', async () => {
    const nb = new FakeNotebook();
    const model = new FakeModel('c-1', 5);
    model.setMetadata(METADATA_KEY, { badge: badge() });
    const old = new FakeCell(model);
    nb.add(old);
    const strips = new NotebookStrips(nb, new FakeSource());
    old.render();
    await tick();
    nb.widgets = [];
    old.dispose();
    const fresh = new FakeCell(model);
    nb.add(fresh);
    fresh.render();
    await tick();
    await tick();
    expect(badgeIn(fresh)).not.toBeNull();
    expect(strips.stripOf(old as never)).toBeUndefined();
  });

  it('clears the badge when the cell runs again and shows the new one when it arrives', async () => {
    const nb = new FakeNotebook();
    const model = new FakeModel('c-1', 5);
    model.setMetadata(METADATA_KEY, { badge: badge() });
    const cell = new FakeCell(model);
    nb.add(cell);
    const source = new FakeSource();
    const strips = new NotebookStrips(nb, source);
    cell.render();
    await tick();
    expect(badgeIn(cell)).not.toBeNull();
    model.run();
    expect(badgeIn(cell)).toBeNull();
    expect(model.getMetadata(METADATA_KEY)).toBeUndefined(); // dropped: a restart may reuse count 5
    // the run compiled: the link gets the badge, writes the metadata, the reply sets the count
    source.badges.set(
      'c-1',
      badge({ cell: '6', t: 2000, compiles: 1, misses: 0 })
    );
    strips.refreshAll();
    expect(badgeIn(cell)).toBeNull(); // no count yet: still running
    model.setMetadata(METADATA_KEY, {
      badge: badge({ cell: '6', t: 2000, compiles: 1, misses: 0 })
    });
    model.executionCount = 6;
    expect(badgeIn(cell)?.textContent).toBe('JAX1 compile · 1.2 s');
    // a re-run that compiles nothing: the kernel's all-zero badge for count 7, or none at all
    model.run();
    const empty = badge({
      cell: '7',
      t: 3000,
      compiles: 0,
      traces: 0,
      lowers: 0,
      misses: 0,
      first_reason: null,
      compile_s: 0
    });
    source.badges.set('c-1', empty);
    model.setMetadata(METADATA_KEY, { badge: empty });
    model.executionCount = 7;
    expect(badgeIn(cell)).toBeNull();
    source.badges.delete('c-1');
    model.deleteMetadata(METADATA_KEY);
    strips.refreshAll();
    expect(badgeIn(cell)).toBeNull();
    expect(stripIn(cell)).toBeNull();
    expect(cell.footer.classList.contains('jwb-cell-footer')).toBe(false);
  });

  it('keeps other data under the key when dropping the badge', () => {
    const model = new FakeModel('c-1', 5);
    model.setMetadata(METADATA_KEY, { badge: badge(), other: 1 });
    dropStoredBadge(model);
    expect(model.getMetadata(METADATA_KEY)).toEqual({ other: 1 });
  });

  it('opens the panel for its cell on click', async () => {
    const nb = new FakeNotebook();
    const model = new FakeModel('c-1', 5);
    const cell = new FakeCell(model);
    nb.add(cell);
    const source = new FakeSource();
    source.badges.set('c-1', badge());
    new NotebookStrips(nb, source);
    cell.render();
    await tick();
    badgeIn(cell)?.click();
    expect(source.opened).toEqual(['c-1']);
  });

  it('shows the live diff only in live mode, remembering if the user folded it', async () => {
    const nb = new FakeNotebook();
    const model = new FakeModel('c-1', 5);
    const cell = new FakeCell(model);
    nb.add(cell);
    const source = new FakeSource();
    source.diffs.set('c-1', diff());
    const strips = new NotebookStrips(nb, source);
    cell.render();
    await tick();
    const visibleDiff = (): HTMLDetailsElement | null =>
      cell.node.querySelector('details.jwb-live-diff:not([hidden])');
    expect(visibleDiff()).toBeNull();
    source.live = true;
    strips.refreshAll();
    expect(visibleDiff()?.open).toBe(true);
    expect(visibleDiff()?.textContent).toContain('equations 3 → 5 (+2)');
    visibleDiff()!.open = false;
    visibleDiff()!.dispatchEvent(new Event('toggle'));
    source.diffs.set(
      'c-1',
      diff({
        totals: [{ name: 'equations', before: 5, after: 6, unit: 'count' }]
      })
    );
    strips.refreshAll();
    expect(visibleDiff()?.open).toBe(false);
    expect(visibleDiff()?.textContent).toContain('5 → 6');
    source.live = false;
    strips.refreshAll();
    expect(visibleDiff()).toBeNull();
    expect(stripIn(cell)).toBeNull();
  });

  it('follows link changes (batched), re-deriving only cells whose link data changed', async () => {
    const nb = new FakeNotebook();
    const cells = [
      new FakeCell(new FakeModel('a', 1)),
      new FakeCell(new FakeModel('b', 2))
    ];
    cells.forEach(c => nb.add(c));
    const source = new FakeSource();
    const strips = new NotebookStrips(nb, source);
    cells.forEach(c => c.render());
    await tick();
    source.badges.set('b', badge({ cell: '2', cell_id: 'b' }));
    let lookups = 0;
    const get = source.badge.bind(source);
    source.badge = id => {
      lookups++;
      return get(id);
    };
    strips.scheduleRefresh();
    strips.scheduleRefresh(); // one pass for both
    await new Promise(r => setTimeout(r, 30));
    expect(badgeIn(cells[0])).toBeNull();
    expect(badgeIn(cells[1])?.textContent).toContain('2 compiles');
    // one lookup per cell to see what changed, one more to re-derive the changed one
    expect(lookups).toBe(3);
    source.live = true;
    source.diffs.set('a', diff({ cell: '1', cell_id: 'a' }));
    strips.scheduleRefresh();
    await new Promise(r => setTimeout(r, 30));
    expect(
      cells[0].node.querySelector('details.jwb-live-diff:not([hidden])')
    ).not.toBeNull();
  });

  it('never throws on a broken link or junk metadata', async () => {
    const nb = new FakeNotebook();
    const model = new FakeModel('c-1', 5);
    model.setMetadata(METADATA_KEY, {
      badge: { cell: '<b>', compiles: 'many' }
    });
    const cell = new FakeCell(model);
    nb.add(cell);
    const source = new FakeSource();
    source.badge = () => {
      throw new Error('link gone');
    };
    new NotebookStrips(nb, source);
    cell.render();
    await tick();
    expect(stripIn(cell)).toBeNull();
  });
});

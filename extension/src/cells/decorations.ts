/**
 * Where badges and live diffs live in a notebook, and how they survive JupyterLab 4's
 * windowed notebooks.
 *
 * Each code cell that has something to show gets one strip (`div.jwb-cell-strip`: the badge
 * button, then the live diff) inside the cell's own footer (`.jp-CellFooter`, the last child
 * of the cell node, right under the output area).  Inside the cell's node, the strip goes
 * wherever the cell goes: in `full` windowing mode an off-screen code cell is hidden and
 * its sub-widgets' nodes (the footer among them) are taken out of the cell node and put back
 * when it scrolls into view; the footer's node keeps its children, so the strip comes back
 * with it.  Cells are created as placeholders (no footer yet) and rendered later (on idle or
 * when scrolled to), so a strip is placed only once `cell.ready` resolved, and re-placed
 * (if JupyterLab built a new footer or the strip was lost) whenever the cell comes into the
 * viewport (`cellInViewportChanged`), its model changes (metadata, execution), the link
 * changes, or the cell list changes (a moved, re-typed or re-created cell is a new widget).
 *
 * What is shown is derived from state that outlives any DOM node: the badge from the
 * cell's metadata (saved with the notebook) and the link, the diff from the link; nothing
 * is kept only in the DOM.  A strip whose cell shows nothing is taken out.
 *
 * The types here are the few members of JupyterLab's `Cell` / `Notebook` used, so the logic
 * runs against fakes in unit tests.
 */

import type { ISignal } from '@lumino/signaling';

import type { CellBadge, LiveDiff } from '../sidepanel/protocol';
import { el } from '../common/dom';
import { keepKeysInside } from '../common/keys';
import {
  METADATA_KEY,
  badgeFromMetadata,
  badgeKey,
  ranAfter,
  currentBadge,
  renderBadge
} from './badges';
import { currentDiff, diffKey, parseDiff, renderDiff } from './liveDiff';

export interface CellModelLike {
  readonly id: string;
  readonly type: string;
  readonly metadataChanged: ISignal<any, any>;
  readonly stateChanged: ISignal<any, any>;
  getMetadata(key: string): unknown;
  setMetadata(key: string, value: any): void;
  deleteMetadata(key: string): void;
}

export interface CellLike {
  readonly node: HTMLElement;
  readonly model: CellModelLike;
  readonly ready: Promise<void>;
  readonly isDisposed: boolean;
  readonly disposed: ISignal<any, any>;
}

export interface NotebookLike {
  readonly widgets: readonly CellLike[];
  readonly model: {
    readonly cells: { readonly changed: ISignal<any, any> };
  } | null;
  readonly modelChanged: ISignal<any, any>;
  readonly cellInViewportChanged?: ISignal<any, any>;
  readonly isDisposed: boolean;
}

/** What the strips read: the notebook's link and the side panel (see `sidepanel/tokens.ts`). */
export interface StripSource {
  badge(cellId: string): CellBadge | null;
  diff(cellId: string): LiveDiff | null;
  liveMode(): boolean;
  openPanel(cellId: string): void;
}

const FOOTER = 'jp-CellFooter';
const OUTPUT_WRAPPER = 'jp-Cell-outputWrapper';
/** the class a footer holding a strip gets (JupyterLab gives footers no height) */
export const FOOTER_WITH_STRIP = 'jwb-cell-footer';

function executionCount(model: CellModelLike): number | null {
  const n = (model as { executionCount?: unknown }).executionCount;
  return typeof n === 'number' ? n : null;
}

function childWithClass(node: HTMLElement, cls: string): HTMLElement | null {
  for (const child of Array.from(node.children)) {
    if (child.classList.contains(cls)) {
      return child as HTMLElement;
    }
  }
  return null;
}

/** One code cell's strip. */
export class CellStrip {
  readonly strip: HTMLDivElement = el('div', 'jwb-cell-strip');
  private readonly _button: HTMLButtonElement = el('button', 'jwb-cell-badge');
  private readonly _details: HTMLDetailsElement = el(
    'details',
    'jwb-live-diff'
  );
  private _badgeKey = '';
  private _diffKey = '';
  private _open = true;
  private _ready = false;
  private _disposed = false;
  /** what the link gave last (to skip link changes that are not about this cell) */
  private _seen: { live: unknown; diff: unknown; mode: boolean } = {
    live: null,
    diff: null,
    mode: false
  };
  /** the cell's model, kept: a disposed cell widget's `model` is null */
  private readonly _model: CellModelLike;

  constructor(
    readonly cell: CellLike,
    private readonly _source: StripSource
  ) {
    this._model = cell.model;
    // the badge and the diff are controls of the cell, not shortcuts of the notebook
    keepKeysInside(this.strip);
    this._button.type = 'button';
    this._button.addEventListener('click', ev => {
      ev.stopPropagation();
      this._source.openPanel(this._model.id);
    });
    this._details.open = true;
    this._details.addEventListener('toggle', () => {
      this._open = this._details.open;
    });
    this._model.metadataChanged.connect(this._onMetadata, this);
    this._model.stateChanged.connect(this._onState, this);
    void cell.ready.then(
      () => {
        this._ready = true;
        this.refresh();
      },
      () => undefined
    );
  }

  /** The badge and diff shown now (null: none). */
  current(): { badge: CellBadge | null; diff: LiveDiff | null } {
    const model = this._model;
    const count = executionCount(model);
    let stored: CellBadge | null = null;
    let live: CellBadge | null = null;
    let diff: LiveDiff | null = null;
    try {
      stored = badgeFromMetadata(model.getMetadata(METADATA_KEY));
      // a copied / pasted / duplicated cell keeps the original's metadata (and, by default,
      // its outputs and execution count) under a new id: that badge is another cell's run
      if (stored && stored.cell_id !== model.id) {
        stored = null;
      }
    } catch {
      stored = null;
    }
    try {
      live = this._source.badge(model.id);
      const mode = this._source.liveMode();
      const raw = mode ? this._source.diff(model.id) : null;
      this._seen = { live, diff: raw, mode };
      diff = parseDiff(raw);
    } catch {
      /* a link in trouble shows what the notebook stored */
    }
    let ranAt: number | null = null;
    try {
      ranAt = ranAfter(
        model.getMetadata('execution'),
        model.getMetadata('papermill')
      );
    } catch {
      ranAt = null;
    }
    return {
      badge: currentBadge(stored, live, count, ranAt),
      diff: currentDiff(diff, count)
    };
  }

  /**
   * After a link change: re-derive only if the link's badge or diff for this cell (or the
   * live mode) changed, so that a busy kernel's many updates cost a few lookups per cell.
   */
  refreshFromLink(): void {
    let live: unknown = null;
    let diff: unknown = null;
    let mode = false;
    try {
      live = this._source.badge(this._model.id);
      mode = this._source.liveMode();
      diff = mode ? this._source.diff(this._model.id) : null;
    } catch {
      /* refresh() says what a link in trouble means */
    }
    if (
      live === this._seen.live &&
      diff === this._seen.diff &&
      mode === this._seen.mode
    ) {
      return;
    }
    this.refresh();
  }

  /** Re-derive what to show and make sure the strip is in the cell's footer. */
  refresh(): void {
    if (this._disposed || this.cell.isDisposed || !this._ready) {
      return;
    }
    const { badge, diff } = this.current();
    const bKey = badgeKey(badge);
    const dKey = diffKey(diff);
    if (bKey !== this._badgeKey) {
      this._badgeKey = bKey;
      if (badge) {
        renderBadge(this._button, badge);
      } else {
        this._button.textContent = '';
      }
    }
    if (dKey !== this._diffKey) {
      this._diffKey = dKey;
      if (diff) {
        renderDiff(this._details, diff);
        this._details.open = this._open;
      } else {
        this._details.textContent = '';
      }
    }
    this._button.hidden = !badge;
    this._details.hidden = !diff;
    if (badge && this._button.parentNode !== this.strip) {
      this.strip.insertBefore(this._button, this.strip.firstChild);
    }
    if (diff && this._details.parentNode !== this.strip) {
      this.strip.appendChild(this._details);
    }
    if (badge || diff) {
      this.place();
    } else {
      this.unplace();
    }
  }

  /** Put the strip into the cell's footer (or, lacking one, right after the output area). */
  place(): void {
    const node = this.cell.node;
    const footer = childWithClass(node, FOOTER);
    if (footer) {
      if (this.strip.parentNode !== footer) {
        footer.appendChild(this.strip);
      }
      footer.classList.add(FOOTER_WITH_STRIP);
      return;
    }
    // a windowed-out code cell's footer is out of the cell node for now and comes back with
    // the strip still in it
    if (this.strip.parentElement?.classList.contains(FOOTER)) {
      return;
    }
    const wrapper = childWithClass(node, OUTPUT_WRAPPER);
    if (!wrapper) {
      return;
    } // not rendered yet: placed when ready / in view
    if (
      this.strip.parentNode !== node ||
      this.strip.previousElementSibling !== wrapper
    ) {
      wrapper.after(this.strip);
    }
  }

  unplace(): void {
    const parent = this.strip.parentElement;
    if (parent) {
      parent.classList.remove(FOOTER_WITH_STRIP);
      this.strip.remove();
    }
  }

  private _onMetadata(): void {
    this.refresh();
  }

  private _onState(
    _model: unknown,
    change: { name?: string; newValue?: unknown }
  ): void {
    if (change?.name === 'executionState' && change.newValue === 'running') {
      dropStoredBadge(this._model);
    }
    if (
      change?.name === 'executionCount' ||
      change?.name === 'executionState'
    ) {
      this.refresh();
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._model.metadataChanged.disconnect(this._onMetadata, this);
    this._model.stateChanged.disconnect(this._onState, this);
    this.unplace();
  }
}

/**
 * A cell that starts running no longer shows the run its stored badge describes: drop the
 * badge (the rest of the key, if any, stays), so that a run that compiles nothing, or a
 * kernel without the workbench, does not leave the old badge to be matched again after a
 * kernel restart reuses its execution count.
 */
export function dropStoredBadge(model: CellModelLike): void {
  try {
    const value = model.getMetadata(METADATA_KEY);
    if (
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value) ||
      !('badge' in value)
    ) {
      return;
    }
    const rest: Record<string, unknown> = {
      ...(value as Record<string, unknown>)
    };
    delete rest.badge;
    if (Object.keys(rest).length) {
      model.setMetadata(METADATA_KEY, rest);
    } else {
      model.deleteMetadata(METADATA_KEY);
    }
  } catch {
    /* a read-only model: the execution-count check still hides the stale badge */
  }
}

/** Every code cell's strip in one notebook, kept in step with its cells. */
export class NotebookStrips {
  private readonly _strips = new Map<CellLike, CellStrip>();
  private _scanPending = false;
  private _refreshPending = false;
  private _disposed = false;
  private _cellsSignal: ISignal<any, any> | null = null;

  constructor(
    readonly notebook: NotebookLike,
    private readonly _source: StripSource
  ) {
    notebook.modelChanged.connect(this._connectModel, this);
    notebook.cellInViewportChanged?.connect(this._onInViewport, this);
    this._connectModel();
  }

  /** the strip of a cell (tests) */
  stripOf(cell: CellLike): CellStrip | undefined {
    return this._strips.get(cell);
  }

  /** Make strips for new code cells, drop those of cells gone. */
  scan(): void {
    this._scanPending = false;
    if (this._disposed || this.notebook.isDisposed) {
      return;
    }
    const present = new Set<CellLike>();
    for (const cell of this.notebook.widgets) {
      if (cell.model.type !== 'code' || cell.isDisposed) {
        continue;
      }
      present.add(cell);
      if (this._strips.has(cell)) {
        continue;
      }
      const strip = new CellStrip(cell, this._source);
      this._strips.set(cell, strip);
      cell.disposed.connect(() => {
        strip.dispose();
        this._strips.delete(cell);
      });
    }
    for (const [cell, strip] of this._strips) {
      if (!present.has(cell)) {
        strip.dispose();
        this._strips.delete(cell);
      }
    }
  }

  /** Re-derive every cell's strip now. */
  refreshAll(): void {
    this._refreshPending = false;
    if (this._disposed) {
      return;
    }
    for (const strip of this._strips.values()) {
      strip.refresh();
    }
  }

  /** Refresh, soon, the strips whose link data changed (the link changes many times a second while cells run). */
  scheduleRefresh(): void {
    if (this._refreshPending || this._disposed) {
      return;
    }
    this._refreshPending = true;
    const run = (): void => {
      this._refreshPending = false;
      if (this._disposed) {
        return;
      }
      for (const strip of this._strips.values()) {
        strip.refreshFromLink();
      }
    };
    if (typeof requestAnimationFrame === 'function') {
      requestAnimationFrame(run);
    } else {
      setTimeout(run, 0);
    }
  }

  private _scheduleScan(): void {
    if (this._scanPending || this._disposed) {
      return;
    }
    this._scanPending = true;
    setTimeout(() => this.scan(), 0);
  }

  private _connectModel(): void {
    this._cellsSignal?.disconnect(this._scheduleScan, this);
    this._cellsSignal = this.notebook.model?.cells.changed ?? null;
    this._cellsSignal?.connect(this._scheduleScan, this);
    this.scan();
  }

  private _onInViewport(_nb: unknown, cell: CellLike): void {
    this._strips.get(cell)?.refresh();
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._cellsSignal?.disconnect(this._scheduleScan, this);
    this.notebook.modelChanged.disconnect(this._connectModel, this);
    this.notebook.cellInViewportChanged?.disconnect(this._onInViewport, this);
    for (const strip of this._strips.values()) {
      strip.dispose();
    }
    this._strips.clear();
  }
}

/**
 * The "JAX Workbench" side panel: the active notebook's link drawn as a header (notebook,
 * connection state, the "Load workbench" button, live mode), devices, memory over time,
 * the compile ledger and the latest benchmarks.
 *
 * It shows one link at a time (the active notebook's; `setLink`) and redraws at most once
 * per animation frame however fast batches arrive.  Every string from the kernel is set as
 * `textContent`.
 */

import { Widget } from '@lumino/widgets';

import { add, el } from '../common/dom';
import { LedgerView } from './ledger';
import { memoryChart, memoryFigures } from './memory';
import type { BenchSummary, KernelInfo } from './protocol';
import { cellLabel, formatSeconds, type WorkbenchStore } from './store';
import type { IWorkbenchLink, LinkState } from './tokens';

export const PANEL_ID = 'jax-workbench-panel';

/** What the sidebar needs of a link: the token's interface plus the link's data. */
export interface SidebarLink extends IWorkbenchLink {
  readonly store: WorkbenchStore;
  requestSample(userClick?: boolean): boolean;
}

export interface SidebarOptions {
  /** show the cell `cellId` of the link's notebook; resolves false if it is not there */
  showCell(link: SidebarLink, cellId: string): Promise<boolean>;
  liveMode(): boolean;
  setLiveMode(on: boolean): void;
}

export const STATE_LABELS: Record<LinkState, string> = {
  'no-kernel': 'No kernel',
  connecting: 'Connecting…',
  connected: 'Connected',
  'not-loaded': 'Workbench not loaded',
  error: 'Cannot use this kernel'
};

function section(
  parent: HTMLElement,
  title: string,
  name: string
): HTMLElement {
  const box = add(parent, el('section', `jwb-panel-section jwb-panel-${name}`));
  box.setAttribute('data-jwb', name);
  add(box, el('h3', 'jwb-panel-h', title));
  return add(box, el('div', 'jwb-panel-body'));
}

/** "8 × cpu" per device kind, with the processes they live on. */
export function describeDevices(k: KernelInfo): string[] {
  const kinds = new Map<
    string,
    { n: number; procs: Set<number>; platform: string }
  >();
  for (const d of k.devices) {
    const key = d.kind || d.platform || '?';
    let e = kinds.get(key);
    if (!e) {
      kinds.set(key, (e = { n: 0, procs: new Set(), platform: d.platform }));
    }
    e.n++;
    e.procs.add(d.process_index);
  }
  return [...kinds].map(
    ([kind, e]) =>
      `${e.n} × ${kind}${e.platform && e.platform !== kind ? ` (${e.platform})` : ''} on process${e.procs.size === 1 ? '' : 'es'} ${[...e.procs].sort((a, b) => a - b).join(', ')}`
  );
}

export class WorkbenchSidebar extends Widget {
  private _link: SidebarLink | null = null;
  private _frame = 0;
  private _drawnKey = '';
  private _dirty = false;
  private readonly _name: HTMLDivElement;
  private readonly _state: HTMLSpanElement;
  private readonly _message: HTMLDivElement;
  private readonly _load: HTMLButtonElement;
  private readonly _live: HTMLInputElement;
  private readonly _note: HTMLDivElement;
  private readonly _devices: HTMLElement;
  private readonly _memory: HTMLElement;
  private readonly _bench: HTMLElement;
  readonly ledger: LedgerView;

  constructor(private readonly _opts: SidebarOptions) {
    super();
    this.id = PANEL_ID;
    this.addClass('jwb-panel');
    this.node.setAttribute('data-jwb', 'panel');
    this.title.caption = 'JAX Workbench';
    this.title.iconClass = 'jwb-panel-icon';
    const head = add(this.node, el('header', 'jwb-panel-header'));
    head.setAttribute('data-jwb', 'header');
    add(head, el('h2', 'jwb-panel-title', 'JAX Workbench'));
    this._name = add(head, el('div', 'jwb-panel-notebook'));
    this._name.setAttribute('data-jwb', 'notebook');
    const stateLine = add(head, el('div', 'jwb-panel-stateline'));
    this._state = add(stateLine, el('span', 'jwb-panel-state'));
    this._state.setAttribute('data-jwb', 'state');
    this._load = add(
      stateLine,
      el(
        'button',
        'jwb-panel-load jp-mod-styled jp-mod-accept',
        'Load workbench'
      )
    );
    this._load.type = 'button';
    this._load.setAttribute('data-jwb', 'load');
    this._load.title = 'Run %load_ext workbench in this kernel';
    this._load.addEventListener('click', () => {
      void this._link?.loadWorkbench();
    });
    this._message = add(head, el('div', 'jwb-panel-message'));
    this._message.setAttribute('data-jwb', 'message');
    const live = add(head, el('label', 'jwb-panel-livemode'));
    this._live = add(live, el('input'));
    this._live.type = 'checkbox';
    this._live.setAttribute('data-jwb', 'live-mode');
    this._live.checked = _opts.liveMode();
    this._live.addEventListener('change', () =>
      _opts.setLiveMode(this._live.checked)
    );
    add(
      live,
      el(
        'span',
        undefined,
        'Live mode: show what changed when a %%jaxpr / %%hlo cell re-runs'
      )
    );
    this._note = add(head, el('div', 'jwb-panel-note'));
    this._note.setAttribute('data-jwb', 'note');
    this._note.setAttribute('role', 'status');

    const body = add(this.node, el('div', 'jwb-panel-sections'));
    this._devices = section(body, 'Devices', 'devices');
    this._memory = section(body, 'Memory', 'memory');
    const ledgerBox = section(body, 'Compile ledger', 'ledger-section');
    ledgerBox.parentElement?.classList.add('jwb-panel-grow');
    this.ledger = new LedgerView({
      openCell: (id, label) => void this._openCell(id, label)
    });
    add(ledgerBox, this.ledger.node);
    this._bench = section(body, 'Latest timings and benchmarks', 'bench');
    this._draw();
  }

  get link(): SidebarLink | null {
    return this._link;
  }

  /** Follow another notebook's link (null: no notebook). */
  setLink(link: SidebarLink | null): void {
    if (link === this._link) {
      return;
    }
    this._link?.changed.disconnect(this._schedule, this);
    this._link = link;
    link?.changed.connect(this._schedule, this);
    this._note.textContent = '';
    this._drawnKey = '';
    this._draw();
  }

  /** The live-mode checkbox follows the token's value. */
  setLiveMode(on: boolean): void {
    this._live.checked = on;
  }

  /** Filter the ledger to one cell (a badge's click) or show all (null). */
  filterCell(cellId: string | null): void {
    this.ledger.setCellFilter(cellId);
  }

  private _schedule(): void {
    // a collapsed panel costs nothing: it redraws when shown
    if (this.isAttached && !this.isVisible) {
      this._dirty = true;
      return;
    }
    if (this._frame) {
      return;
    }
    if (typeof requestAnimationFrame === 'undefined') {
      this._draw();
      return;
    }
    this._frame = requestAnimationFrame(() => {
      this._frame = 0;
      this._draw();
    });
  }

  /** Redraw now (tests; the panel's own redraws are scheduled). */
  flush(): void {
    if (this._frame) {
      cancelAnimationFrame(this._frame);
    }
    this._frame = 0;
    this._draw();
  }

  protected onAfterShow(): void {
    if (this._dirty) {
      this._dirty = false;
      this._draw();
    }
    this.ledger.list.update();
  }

  protected onResize(): void {
    this.ledger.list.update();
  }

  private _draw(): void {
    if (this.isDisposed) {
      return;
    }
    const link = this._link;
    const state: LinkState | 'no-notebook' = link ? link.state : 'no-notebook';
    this.node.setAttribute('data-jwb-state', state);
    this._name.textContent = link
      ? link.notebook.title.label || link.notebook.context?.path || 'notebook'
      : 'No notebook';
    this._state.textContent = link ? STATE_LABELS[link.state] : 'No notebook';
    this._state.className = `jwb-panel-state jwb-state-${state}`;
    this._message.textContent = link
      ? link.message
      : 'Open a notebook to see its kernel’s devices, memory and compiles.';
    this._load.hidden = !link || link.state !== 'not-loaded';
    const store = link ? link.store : null;
    const key = store ? `${store.version}:${state}` : state;
    if (key === this._drawnKey) {
      return;
    }
    this._drawnKey = key;
    this._drawDevices(link && link.state === 'connected' ? link.kernel : null);
    this._drawMemory(store, link?.state === 'connected');
    this._drawBench(store ? store.benchmarks : []);
    this.ledger.setStore(link && link.state === 'connected' ? store : null);
  }

  private _drawDevices(k: KernelInfo | null): void {
    const box = this._devices;
    box.textContent = '';
    if (!k) {
      add(box, el('div', 'jwb-panel-empty', '–'));
      return;
    }
    if (!k.backend && !k.devices.length) {
      // the kernel never starts JAX's backends itself (that would fix the platform and device
      // count before the user's code could choose them)
      box.removeAttribute('data-jwb-count');
      add(
        box,
        el(
          'div',
          'jwb-panel-empty',
          `JAX ${k.jax_version} has not started its backends yet: the devices appear after the first JAX computation.`
        )
      ).setAttribute('data-jwb', 'devices-not-started');
      return;
    }
    box.setAttribute('data-jwb-count', String(k.devices.length));
    const dl = add(box, el('dl', 'jwb-panel-facts'));
    const fact = (name: string, value: string, key: string): void => {
      add(dl, el('dt', undefined, name));
      add(dl, el('dd', undefined, value)).setAttribute('data-jwb', key);
    };
    fact('devices', String(k.devices.length), 'device-count');
    for (const line of describeDevices(k)) {
      fact('kind', line, 'device-kind');
    }
    fact('backend', k.backend, 'backend');
    fact('process', `${k.process_index} of ${k.process_count}`, 'process');
    fact('JAX', k.jax_version, 'jax-version');
  }

  private _drawMemory(store: WorkbenchStore | null, connected: boolean): void {
    const box = this._memory;
    box.textContent = '';
    if (!store || !connected) {
      add(box, el('div', 'jwb-panel-empty', '–'));
      return;
    }
    const samples = store.memory;
    add(box, memoryChart(samples));
    add(box, memoryFigures(samples, store.memoryDropped));
    const refresh = add(
      box,
      el('button', 'jwb-panel-sample jp-mod-styled', 'Sample now')
    );
    refresh.type = 'button';
    refresh.setAttribute('data-jwb', 'sample');
    refresh.title = 'Ask the kernel for a memory reading now';
    refresh.addEventListener('click', () => {
      if (!this._link?.requestSample(true)) {
        this._note.textContent = 'The workbench is not connected.';
      }
    });
  }

  private _drawBench(benchmarks: readonly BenchSummary[]): void {
    const box = this._bench;
    box.textContent = '';
    if (!benchmarks.length) {
      add(
        box,
        el('div', 'jwb-panel-empty', 'No %jaxbench or %timeit-style run yet.')
      );
      return;
    }
    const list = add(box, el('ol', 'jwb-panel-benchlist'));
    for (const b of [...benchmarks].reverse().slice(0, 12)) {
      const li = add(list, el('li', 'jwb-panel-bench'));
      if (b.cell_id) {
        li.setAttribute('data-jwb-cell-id', b.cell_id);
      }
      add(li, el('span', 'jwb-panel-bench-label', b.label));
      const parts = [`median ${formatSeconds(b.median_s)}`];
      if (b.best_s !== null && b.best_s !== undefined) {
        parts.push(`best ${formatSeconds(b.best_s)}`);
      }
      parts.push(`${b.runs} run${b.runs === 1 ? '' : 's'}`);
      if (b.variants && b.variants.length > 1) {
        parts.push(`${b.variants.length} variants`);
      }
      if (b.interrupted) {
        parts.push('interrupted');
      }
      if (b.cell) {
        parts.push(`cell ${cellLabel(b.cell)}`);
      }
      add(li, el('span', 'jwb-panel-dim', parts.join(' · ')));
      li.addEventListener(
        'click',
        () => void this._openCell(b.cell_id, cellLabel(b.cell))
      );
    }
  }

  private async _openCell(cellId: string | null, label: string): Promise<void> {
    const link = this._link;
    if (!link) {
      return;
    }
    if (!cellId) {
      this._note.textContent = `Cell ${label} ran outside this notebook's cells (no cell id).`;
      return;
    }
    const found = await this._opts.showCell(link, cellId);
    this._note.textContent = found
      ? `Showing cell ${label}.`
      : `Cell ${label} is not in this notebook (deleted, or run from another notebook on the same kernel).`;
    this._note.setAttribute('data-jwb-found', String(found));
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    if (this._frame) {
      cancelAnimationFrame(this._frame);
    }
    this._link?.changed.disconnect(this._schedule, this);
    this.ledger.dispose();
    super.dispose();
  }
}

/**
 * The compile ledger view: a filter box, origin toggles, a cell chip, and a virtualised list
 * of fixed-height rows (`WorkbenchStore.rows`): only the rows in view exist in the DOM, so
 * 10,000 entries cost what 40 do.  Every kernel string goes in as text.
 */

import { add, el } from '../common/dom';
import { VirtualList } from '../jaxpr/virtual';
import type { CompileRecord } from './protocol';
import {
  NO_FILTER,
  ORIGINS,
  formatSeconds,
  type LedgerFilter,
  type LedgerRow,
  type Origin,
  type WorkbenchStore
} from './store';

export const ROW_HEIGHT = 22;

export interface LedgerOptions {
  /** a click on an entry or a cell header: show that cell in the notebook */
  openCell(cellId: string | null, label: string): void;
}

function times(r: CompileRecord): string {
  const parts: string[] = [];
  if (r.trace_s !== null) {
    parts.push(`trace ${formatSeconds(r.trace_s)}`);
  }
  if (r.lower_s !== null) {
    parts.push(`lower ${formatSeconds(r.lower_s)}`);
  }
  if (r.compile_s !== null) {
    parts.push(`XLA ${formatSeconds(r.compile_s)}`);
  }
  if (!parts.length) {
    parts.push(`total ${formatSeconds(r.total_s)}`);
  }
  return parts.join(' · ');
}

function persistent(r: CompileRecord): string | null {
  switch (r.persistent_cache) {
    case 'hit':
      return r.time_saved_s !== null
        ? `cache hit (saved ${formatSeconds(r.time_saved_s)})`
        : 'cache hit';
    case 'written':
      return 'cache written';
    case 'miss':
      return 'cache miss';
    default:
      return null;
  }
}

export class LedgerView {
  readonly node: HTMLDivElement;
  readonly list: VirtualList;
  private _store: WorkbenchStore | null = null;
  private _rows: LedgerRow[] = [];
  private _filter: {
    text: string;
    origins: Set<Origin>;
    cellId: string | null;
  } = {
    text: '',
    origins: new Set(NO_FILTER.origins),
    cellId: null
  };
  private _cellLabel: string | null = null;
  private readonly _input: HTMLInputElement;
  private readonly _chip: HTMLSpanElement;
  private readonly _chipText: HTMLSpanElement;
  private readonly _count: HTMLDivElement;
  private readonly _empty: HTMLDivElement;
  private readonly _toggles = new Map<Origin, HTMLButtonElement>();

  constructor(private readonly _opts: LedgerOptions) {
    this.node = el('div', 'jwb-panel-ledger');
    this.node.setAttribute('data-jwb', 'ledger');
    const bar = add(this.node, el('div', 'jwb-panel-ledger-bar'));
    this._input = add(bar, el('input', 'jwb-panel-filter'));
    this._input.type = 'search';
    this._input.placeholder = 'Filter: function, reason, cell';
    this._input.setAttribute('aria-label', 'Filter the compile ledger');
    this._input.addEventListener('input', () => {
      this._filter.text = this._input.value;
      this.refresh();
    });
    const toggles = add(bar, el('div', 'jwb-panel-origins'));
    toggles.setAttribute('role', 'group');
    toggles.setAttribute('aria-label', 'Origins shown');
    for (const origin of ORIGINS) {
      const b = add(toggles, el('button', 'jwb-panel-origin', origin));
      b.type = 'button';
      b.setAttribute('data-jwb-origin', origin);
      b.setAttribute('aria-pressed', 'true');
      b.title = {
        user: 'compiles of your functions',
        jax: "JAX's own (jnp operations, internal jits)",
        workbench: "the workbench's inspections (%%jaxpr, %%hlo, …)"
      }[origin];
      b.addEventListener('click', () => {
        if (this._filter.origins.has(origin)) {
          this._filter.origins.delete(origin);
        } else {
          this._filter.origins.add(origin);
        }
        b.setAttribute(
          'aria-pressed',
          String(this._filter.origins.has(origin))
        );
        this.refresh();
      });
      this._toggles.set(origin, b);
    }
    this._chip = add(this.node, el('span', 'jwb-panel-cellchip'));
    this._chip.setAttribute('data-jwb', 'cell-filter');
    this._chipText = add(this._chip, el('span', 'jwb-panel-cellchip-text'));
    const clear = add(
      this._chip,
      el('button', 'jwb-panel-cellchip-clear', '×')
    );
    clear.type = 'button';
    clear.title = 'Show every cell';
    clear.setAttribute('aria-label', 'Clear the cell filter');
    clear.addEventListener('click', () => this.setCellFilter(null));
    this._chip.hidden = true;
    this._count = add(this.node, el('div', 'jwb-panel-ledger-count'));
    this._count.setAttribute('data-jwb', 'ledger-count');
    this._empty = add(this.node, el('div', 'jwb-panel-empty'));
    this.list = new VirtualList({
      rowHeight: ROW_HEIGHT,
      overscan: 8,
      render: i => this._render(i)
    });
    this.list.scroller.classList.add('jwb-panel-rows');
    this.list.scroller.setAttribute('data-jwb', 'ledger-rows');
    this.list.scroller.addEventListener('click', ev => this._click(ev));
    add(this.node, this.list.scroller);
  }

  get filter(): LedgerFilter {
    return this._filter;
  }

  /** Show one cell's entries (the badge's click), or all (null). */
  setCellFilter(cellId: string | null, label: string | null = null): void {
    this._filter.cellId = cellId;
    this._cellLabel = label;
    this.refresh();
  }

  setStore(store: WorkbenchStore | null): void {
    this._store = store;
    this.refresh();
  }

  /** Recompute the rows (a new batch, a filter change) and redraw those in view. */
  refresh(): void {
    const store = this._store;
    this._rows = store ? store.rows(this._filter) : [];
    const cellId = this._filter.cellId;
    this._chip.hidden = cellId === null;
    if (cellId !== null) {
      const group = this._rows.find(r => r.kind === 'group');
      const label =
        group && group.kind === 'group' ? group.label : this._cellLabel;
      this._chipText.textContent = `cell ${label ?? cellId}`;
      this._chip.setAttribute('data-jwb-cell-id', cellId);
    }
    const total = store ? store.records.length : 0;
    const shown = this._rows.reduce(
      (n, r) => n + (r.kind === 'record' ? 1 : 0),
      0
    );
    let text =
      shown === total
        ? `${total.toLocaleString('en-US')} entr${total === 1 ? 'y' : 'ies'}`
        : `${shown.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} entries`;
    if (store && store.dropped) {
      text += ` (${store.dropped.toLocaleString('en-US')} older not kept)`;
    }
    this._count.textContent = text;
    this._count.setAttribute('data-jwb-shown', String(shown));
    this._empty.textContent = !store
      ? ''
      : total === 0
        ? 'Nothing traced, lowered or compiled yet: run a cell that calls a jitted function.'
        : shown === 0
          ? 'No entry matches the filter.'
          : '';
    this._empty.hidden = !this._empty.textContent;
    this.list.setCount(this._rows.length);
  }

  rows(): readonly LedgerRow[] {
    return this._rows;
  }

  private _render(i: number): HTMLElement {
    const row = this._rows[i];
    const node = el('div', 'jwb-panel-row');
    if (!row) {
      return node;
    }
    node.setAttribute('data-jwb-row', String(i));
    const cellId = row.kind === 'group' ? row.cellId : row.record.cell_id;
    if (cellId) {
      node.setAttribute('data-jwb-cell-id', cellId);
    }
    switch (row.kind) {
      case 'group': {
        node.classList.add('jwb-panel-group');
        add(node, el('span', 'jwb-panel-group-label', `cell ${row.label}`));
        add(
          node,
          el(
            'span',
            'jwb-panel-dim',
            `${row.count} entr${row.count === 1 ? 'y' : 'ies'} · ${formatSeconds(row.seconds)}`
          )
        );
        node.title = row.cellId
          ? 'Show this cell in the notebook'
          : 'Not a notebook cell';
        break;
      }
      case 'record': {
        const r = row.record;
        node.classList.add('jwb-panel-entry', `jwb-origin-${r.origin}`);
        node.setAttribute('data-jwb-seq', String(r.seq));
        // a miss of a function seen before (the first call's reason is `new_function`)
        const again = r.reasons.some(x => x.kind !== 'new_function');
        const kind = add(
          node,
          el(
            'span',
            `jwb-panel-kind jwb-kind-${r.kind}`,
            again ? `re${r.kind}` : r.kind
          )
        );
        if (again) {
          kind.classList.add('jwb-panel-miss');
          node.classList.add('jwb-panel-recompile');
        }
        add(node, el('span', 'jwb-panel-fn', r.function));
        add(node, el('span', 'jwb-panel-tag jwb-panel-origin-tag', r.origin));
        node.title = r.call_site
          ? `${r.function} — ${r.call_site.file}:${r.call_site.line}`
          : r.function;
        break;
      }
      case 'times': {
        const r = row.record;
        node.classList.add('jwb-panel-times');
        add(node, el('span', 'jwb-panel-dim jwb-panel-times-text', times(r)));
        const pc = persistent(r);
        if (pc) {
          add(
            node,
            el('span', `jwb-panel-tag jwb-pcache-${r.persistent_cache}`, pc)
          );
        }
        if (r.inspected_by) {
          add(node, el('span', 'jwb-panel-dim', r.inspected_by));
        }
        node.title = [
          times(r),
          pc,
          r.inspected_by ? `inspected by ${r.inspected_by}` : null,
          r.persistent_note
        ]
          .filter(Boolean)
          .join(' · ');
        break;
      }
      case 'reason': {
        node.classList.add('jwb-panel-reason');
        add(node, el('span', 'jwb-panel-reason-text', row.text));
        node.title = row.text;
        break;
      }
    }
    return node;
  }

  private _click(ev: Event): void {
    const target = ev.target as HTMLElement | null;
    const node = target?.closest?.('.jwb-panel-row');
    if (!node) {
      return;
    }
    const i = Number(node.getAttribute('data-jwb-row'));
    const row = this._rows[i];
    if (!row) {
      return;
    }
    const cellId = row.kind === 'group' ? row.cellId : row.record.cell_id;
    const label = row.kind === 'group' ? row.label : row.group.label;
    this._opts.openCell(cellId, label);
  }

  dispose(): void {
    this.list.dispose();
  }
}

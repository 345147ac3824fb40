// @vitest-environment jsdom
// The sidebar with a fake link: virtualised ledger, kernel strings as text, states, clicks.
import { Signal } from '@lumino/signaling';
import { describe, expect, it, vi } from 'vitest';

// jsdom has no DragEvent, which @lumino/dragdrop (under @lumino/widgets) touches on import
vi.hoisted(() => {
  const g = globalThis as any;
  if (typeof g.DragEvent === 'undefined') {
    g.DragEvent = class DragEvent extends g.MouseEvent {};
  }
});

import { parseKernelMessage } from '../src/sidepanel/parse';
import { WorkbenchSidebar, type SidebarLink } from '../src/sidepanel/sidebar';
import { WorkbenchStore } from '../src/sidepanel/store';
import type { LinkState } from '../src/sidepanel/tokens';
import { KERNEL, record, sample, snapshot } from './sidepanel-fixtures';

const XSS = '<img src=x onerror="window.__pwned=1">';

class FakeLink {
  readonly store = new WorkbenchStore();
  readonly changed = new Signal<any, void>(this);
  state: LinkState = 'connected';
  message = 'Connected.';
  loads = 0;
  samples = 0;
  notebook = { title: { label: 'demo.ipynb' } } as any;
  get kernel() {
    return this.store.kernel;
  }
  badge() {
    return null;
  }
  diff() {
    return null;
  }
  async loadWorkbench() {
    this.loads++;
  }
  requestSample() {
    this.samples++;
    return true;
  }
  feed(data: Record<string, unknown>) {
    const msg = parseKernelMessage(data);
    if (msg.type === 'snapshot') {
      this.store.applySnapshot(msg.kernel, msg.version, msg.batch);
    } else if (msg.type === 'update') {
      this.store.apply(msg.batch);
    } else {
      throw new Error(msg.type);
    }
    this.changed.emit();
  }
}

function sidebar(link: FakeLink, shown: string[] = []) {
  const w = new WorkbenchSidebar({
    showCell: async (_l, id) => {
      shown.push(id);
      return id !== 'gone';
    },
    liveMode: () => false,
    setLiveMode: () => undefined
  });
  document.body.appendChild(w.node);
  w.setLink(link as unknown as SidebarLink);
  w.flush();
  return w;
}

describe('WorkbenchSidebar', () => {
  it('draws only the visible rows of 10,000 ledger entries', () => {
    const link = new FakeLink();
    link.feed(
      snapshot({ records: Array.from({ length: 10_000 }, (_, i) => record(i)) })
    );
    const w = sidebar(link);
    const rows = w.ledger.rows();
    expect(rows.length).toBe(10_000 * 2 + 5);
    const inDom = w.node.querySelectorAll('.jwb-panel-row').length;
    expect(inDom).toBeGreaterThan(10);
    expect(inDom).toBeLessThan(100);
    expect(w.node.querySelector('[data-jwb="ledger-count"]')!.textContent).toBe(
      '10,000 entries'
    );
    // scrolling far down draws other rows, still a handful
    const sc = w.ledger.list.scroller;
    sc.scrollTop = 22 * 15_000;
    w.ledger.list.update();
    const drawn = [...w.node.querySelectorAll('.jwb-panel-row')].map(n =>
      Number(n.getAttribute('data-jwb-row'))
    );
    expect(Math.min(...drawn)).toBeGreaterThan(14_000);
    expect(drawn.length).toBeLessThan(100);
    w.dispose();
  }, 30_000); // building 10,000 records is slow on a loaded 2-core machine, not the drawing

  it('puts every kernel string in as text', () => {
    const link = new FakeLink();
    link.feed(
      snapshot({
        kernel: {
          ...KERNEL,
          jax_version: XSS,
          devices: [
            {
              id: 0,
              platform: 'cpu',
              kind: XSS,
              process_index: 0,
              memory_stats: false
            }
          ]
        },
        records: [
          record(1, {
            function: XSS,
            cell: XSS,
            cell_id: 'a',
            reasons: [{ text: XSS }]
          })
        ],
        benchmarks: [
          {
            label: XSS,
            cell: XSS,
            cell_id: 'a',
            t: 1,
            median_s: 0.001,
            best_s: null,
            runs: 3
          }
        ],
        memory: [sample(1, 10), sample(2, 2048, { cell: XSS })]
      })
    );
    link.message = XSS;
    const w = sidebar(link);
    expect(w.node.querySelector('img')).toBeNull();
    expect((window as any).__pwned).toBeUndefined();
    const text = w.node.textContent!;
    expect(text.split(XSS).length - 1).toBeGreaterThanOrEqual(6); // message, version, kind, fn, reason, bench ...
    expect(w.node.querySelector('.jwb-panel-fn')!.textContent).toBe(XSS);
    expect(
      w.node.querySelector('.jwb-panel-chart title')!.textContent
    ).toContain(XSS);
    w.dispose();
  });

  it('shows each state, with the load button only when not loaded', () => {
    const link = new FakeLink();
    const w = sidebar(link);
    const load = w.node.querySelector<HTMLButtonElement>('[data-jwb="load"]')!;
    const states: LinkState[] = [
      'no-kernel',
      'connecting',
      'connected',
      'not-loaded',
      'error'
    ];
    const labels = new Set<string>();
    for (const s of states) {
      link.state = s;
      link.changed.emit();
      w.flush();
      expect(w.node.getAttribute('data-jwb-state')).toBe(s);
      expect(load.hidden).toBe(s !== 'not-loaded');
      labels.add(w.node.querySelector('[data-jwb="state"]')!.textContent!);
    }
    expect(labels.size).toBe(states.length);
    load.click();
    expect(link.loads).toBe(1);
    w.setLink(null);
    expect(w.node.getAttribute('data-jwb-state')).toBe('no-notebook');
    w.dispose();
  });

  it('lists devices and memory; a ledger click shows its cell, or says it is not here', async () => {
    const link = new FakeLink();
    link.feed(
      snapshot({
        records: [
          record(1, { cell: '3', cell_id: 'a' }),
          record(2, { cell: '4', cell_id: 'gone' })
        ],
        memory: [sample(1, 0), sample(2, 64 * 1024 * 1024), sample(3, 0)]
      })
    );
    const shown: string[] = [];
    const w = sidebar(link, shown);
    expect(w.node.querySelector('[data-jwb="device-count"]')!.textContent).toBe(
      '8'
    );
    expect(w.node.querySelector('[data-jwb="device-kind"]')!.textContent).toBe(
      '8 × cpu on process 0'
    );
    expect(w.node.querySelectorAll('.jwb-panel-chart-mark')).toHaveLength(2);
    expect(w.node.querySelector('.jwb-panel-live-bytes')!.textContent).toBe(
      '0 B'
    );
    const entry = w.node.querySelector<HTMLElement>(
      '.jwb-panel-entry[data-jwb-cell-id="a"]'
    )!;
    entry.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    await Promise.resolve();
    await Promise.resolve();
    expect(shown).toEqual(['a']);
    expect(w.node.querySelector('[data-jwb="note"]')!.textContent).toBe(
      'Showing cell [3].'
    );
    w.node
      .querySelector<HTMLElement>('.jwb-panel-entry[data-jwb-cell-id="gone"]')!
      .dispatchEvent(new MouseEvent('click', { bubbles: true }));
    await Promise.resolve();
    await Promise.resolve();
    expect(w.node.querySelector('[data-jwb="note"]')!.textContent).toContain(
      'not in this notebook'
    );
    // the cell chip filters the ledger to a cell and clears
    w.filterCell('a');
    expect(w.ledger.rows().filter(r => r.kind === 'record')).toHaveLength(1);
    const chip = w.node.querySelector<HTMLElement>('[data-jwb="cell-filter"]')!;
    expect(chip.hidden).toBe(false);
    expect(chip.textContent).toContain('[3]');
    chip.querySelector('button')!.click();
    expect(chip.hidden).toBe(true);
    expect(w.ledger.rows().filter(r => r.kind === 'record')).toHaveLength(2);
    // origin toggles
    w.node
      .querySelector<HTMLButtonElement>('[data-jwb-origin="user"]')!
      .click();
    expect(w.ledger.rows()).toHaveLength(0);
    expect(
      w.node.querySelector('.jwb-panel-ledger .jwb-panel-empty')!.textContent
    ).toContain('No entry matches');
    w.dispose();
  });
});

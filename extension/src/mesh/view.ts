/**
 * `application/vnd.jax-workbench.mesh-explorer+json`: one state of the mesh explorer — the
 * mesh, the planned inputs and the output sharding XLA chose (drawn as the sharding view
 * draws layouts), the collectives it inserted, memory, timings and the diff.
 */

import { add, el, onThemeChange } from '../common/dom';
import { fmtBytes } from '../bench/format';
import type { FeatureViewFactory } from '../common/featureView';
import { LayoutCards, Tooltip } from '../sharding/card';
import { DeviceSetColors, meshText } from '../sharding/model';
import {
  collectiveRows,
  deviceGroups,
  diffLines,
  memoryCells,
  timingsText,
  type MeshExplorerPayload
} from './model';

function table(
  parent: HTMLElement,
  head: string[],
  rows: string[][],
  cls: string
): HTMLTableElement {
  const t = add(parent, el('table', `jwb-mx-table ${cls}`));
  const hr = add(add(t, el('thead')), el('tr'));
  for (const h of head) {
    add(hr, el('th', undefined, h));
  }
  const body = add(t, el('tbody'));
  for (const r of rows) {
    const tr = add(body, el('tr'));
    for (const c of r) {
      add(tr, el('td', undefined, c));
    }
  }
  return t;
}

export const meshExplorerView: FeatureViewFactory = () => {
  let cards: LayoutCards | null = null;
  let stopTheme: (() => void) | null = null;
  return {
    render(host, raw, ctx) {
      const p = raw as unknown as MeshExplorerPayload;
      host.textContent = '';
      const root = add(host, el('div', 'jwb-mx'));
      cards?.dispose();
      cards = new LayoutCards(root, new DeviceSetColors(), new Tooltip(root));
      add(
        root,
        el(
          'div',
          'jwb-mx-head',
          p.op_text ? `${p.operation}: ${p.op_text}` : p.operation
        )
      );
      add(
        root,
        el(
          'div',
          'jwb-mx-sub',
          `mesh ${meshText(p.mesh)} · ${p.device_count} devices` +
            (p.process_count > 1 ? ` · ${p.process_count} processes` : '') +
            (timingsText(p.timings) ? ` · ${timingsText(p.timings)}` : '')
        )
      );
      const sections = add(root, el('div', 'jwb-mx-layouts'));
      const column = (
        title: string,
        lays: MeshExplorerPayload['inputs']
      ): void => {
        if (!lays.length) {
          return;
        }
        const col = add(sections, el('div', 'jwb-mx-col'));
        add(col, el('div', 'jwb-mx-title', title));
        for (const l of lays) {
          cards!.card(col, l, 300);
        }
      };
      column('inputs (planned)', p.inputs);
      column('output (XLA chose)', p.outputs);
      const coll = add(root, el('div', 'jwb-mx-section'));
      add(
        coll,
        el(
          'div',
          'jwb-mx-title',
          p.collectives.length
            ? `${p.collectives.length} collective${p.collectives.length === 1 ? '' : 's'} · ${fmtBytes(p.collective_bytes)} per device`
            : p.operation === 'layout'
              ? 'no operation compiled'
              : 'no collectives: every device computes on its own shard'
        )
      );
      if (p.collectives.length) {
        const t = table(
          coll,
          ['collective', 'shape', 'bytes/device', 'groups', 'op'],
          collectiveRows(p.collectives),
          'jwb-mx-coll'
        );
        add(
          coll,
          el(
            'div',
            'jwb-mx-hint',
            'hover a collective to outline its device groups in the mesh grids'
          )
        );
        t.querySelectorAll('tbody tr').forEach((tr, i) => {
          const c = p.collectives[i];
          tr.addEventListener('mouseenter', () =>
            cards?.markGroups(deviceGroups(c))
          );
          tr.addEventListener('mouseleave', () => cards?.markGroups(null));
        });
      }
      const mem = memoryCells(p.memory);
      if (mem.length) {
        add(root, el('div', 'jwb-mx-title', 'memory per device'));
        table(
          root,
          mem.map(m => m[0]),
          [mem.map(m => m[1])],
          'jwb-mx-mem'
        );
      }
      const diff = diffLines(p.diff);
      if (diff.length) {
        const box = add(root, el('div', 'jwb-mx-section jwb-mx-diff'));
        add(box, el('div', 'jwb-mx-title', 'change from the previous state'));
        for (const d of diff) {
          add(
            box,
            el(
              'div',
              d.sign === '+'
                ? 'jwb-mx-add'
                : d.sign === '-'
                  ? 'jwb-mx-del'
                  : '',
              d.sign ? `${d.sign} ${d.text}` : d.text
            )
          );
        }
      }
      for (const n of p.notes) {
        add(root, el('div', 'jwb-sh-note', `note: ${n}`));
      }
      stopTheme?.();
      stopTheme = onThemeChange(() => cards?.redrawAll());
      cards.whenDrawn(() => ctx.interactive());
    },
    dispose() {
      stopTheme?.();
      stopTheme = null;
      cards?.dispose();
      cards = null;
    }
  };
};

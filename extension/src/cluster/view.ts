/**
 * The `cluster` output (%jaxcluster): the processes, the divergences in words first (what
 * would hang), the compile ledgers side by side, the step times with the slowest flagged.
 */

import { add, el, headedTable } from '../common/dom';
import { drawnView } from '../common/featureView';
import {
  headline,
  ledgerTable,
  processRows,
  stepLine,
  type ClusterPayload
} from './model';

export const clusterView = drawnView<ClusterPayload>(
  'jwb-cluster',
  (root, p) => {
    add(root, el('div', 'jwb-cluster-head', headline(p)));
    if (p.divergences.length) {
      const ul = add(root, el('ul', 'jwb-cluster-divergences'));
      for (const d of p.divergences) {
        add(ul, el('li', `jwb-cluster-${d.kind}`, d.text));
      }
    }
    const procs = add(root, el('ul', 'jwb-cluster-processes'));
    for (const r of processRows(p)) {
      const li = add(procs, el('li', r.gone ? 'jwb-cluster-gone' : undefined));
      add(li, el('b', undefined, r.label));
      add(li, el('span', undefined, ` ${r.detail}`));
    }
    if (p.view === 'ledger' && p.rows.length) {
      const ledger = ledgerTable(p);
      const [t, body] = headedTable('jwb-table jwb-cluster-table', ledger.head);
      add(root, t);
      for (const row of ledger.rows) {
        const tr = add(
          body,
          el('tr', row.diverged ? 'jwb-cluster-diverged' : undefined)
        );
        for (const c of row.cells) {
          add(tr, el('td', undefined, c));
        }
      }
      if (ledger.more) {
        add(root, el('div', undefined, `… ${ledger.more} more functions`));
      }
    }
    if (p.steps.length) {
      const ul = add(root, el('ul', 'jwb-cluster-steps'));
      for (const s of p.steps) {
        add(
          ul,
          el(
            'li',
            s.slowest ? 'jwb-cluster-slowest' : undefined,
            stepLine(s) + (s.slowest ? ' ← slowest' : '')
          )
        );
      }
    }
    if (p.straggler) {
      add(root, el('div', 'jwb-cluster-straggler', p.straggler));
    }
  }
);

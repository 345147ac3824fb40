/**
 * The view model of a `cluster` payload (%jaxcluster): what the view draws, as plain data,
 * so it is tested without a DOM.  The words (divergences, the straggler) are the kernel's;
 * the model only orders and labels them.
 */

import { fmtBytes, fmtSeconds } from '../bench/format';
import type {
  ClusterCell,
  ClusterPayload,
  ClusterProcess,
  ClusterStep
} from '../generated/cluster';

export type {
  ClusterCell,
  ClusterPayload,
  ClusterProcess,
  ClusterStep
} from '../generated/cluster';

/** variants drawn in one process's cell before "+N more" (as the text view) */
export const MAX_VARIANTS = 3;

export function headline(p: ClusterPayload): string {
  const alive = p.processes.filter(q => q.error === null);
  const hosts = [...new Set(alive.map(q => q.host))].sort();
  const diverged = p.divergences.filter(d => d.kind !== 'gone').length;
  const verdict = diverged
    ? `${diverged} divergence${diverged === 1 ? '' : 's'}`
    : 'no divergence';
  const n = p.processes.length;
  return (
    `cluster: ${n} process${n === 1 ? '' : 'es'} on ${hosts.length} ` +
    `host${hosts.length === 1 ? '' : 's'}; ${verdict}`
  );
}

/** One process's cell of the ledger: each variant's signature and program fingerprint. */
export function cellText(cell: ClusterCell | null): string {
  if (cell === null) {
    return '-';
  }
  const parts = cell.variants.slice(0, MAX_VARIANTS).map(v => {
    const sig = v.signature || '()';
    const statics = v.statics ? ` static ${v.statics}` : '';
    const shard =
      v.shardings && v.shardings !== '{replicated}' ? ` @${v.shardings}` : '';
    return `${sig}${statics}${shard} #${v.fingerprint}`;
  });
  const more = cell.variants.length - MAX_VARIANTS;
  if (more > 0) {
    parts.push(`+${more} more`);
  }
  return parts.join('; ');
}

export interface ProcessRow {
  label: string;
  detail: string;
  gone: boolean;
}

export function processRows(p: ClusterPayload): ProcessRow[] {
  return p.processes.map((q: ClusterProcess) => {
    const label = `process ${q.index} (engine ${q.engine})`;
    if (q.error !== null) {
      return { label, detail: q.error, gone: true };
    }
    const mem = q.rss_bytes === null ? 'n/a' : fmtBytes(q.rss_bytes);
    return {
      label,
      detail:
        `${q.host}, pid ${q.pid ?? '?'}: ${q.devices.join(' ')}; memory ${mem}; ` +
        `${q.compiles_total} compile${q.compiles_total === 1 ? '' : 's'}`,
      gone: false
    };
  });
}

export interface LedgerTable {
  head: string[];
  rows: { cells: string[]; diverged: boolean }[];
  /** functions the payload left out (its row limit) */
  more: number;
}

export function ledgerTable(p: ClusterPayload): LedgerTable {
  return {
    head: ['function', ...p.processes.map(q => `process ${q.index}`)],
    rows: p.rows.map(r => ({
      cells: [r.function, ...r.cells.map(cellText)],
      diverged: r.diverged
    })),
    more: Math.max(0, p.rows_total - p.rows.length)
  };
}

export function stepLine(s: ClusterStep): string {
  const coll =
    s.collectives_s === null
      ? ''
      : `, collectives ${fmtSeconds(s.collectives_s)}`;
  return `process ${s.process}: ${fmtSeconds(s.seconds)} (${s.source} ${s.label}${coll})`;
}

/**
 * What one notebook's link knows about its kernel, as plain data (no DOM, no JupyterLab):
 * the compile ledger, badges, live diffs, memory over time, benchmarks and kernel info.
 *
 * Bounded on purpose: a 1,000-compile loop or a long session must not grow the page without
 * limit, so the ledger keeps the newest `MAX_RECORDS` (counting what it dropped, and what the
 * kernel itself no longer held) and memory the newest `MAX_SAMPLES`.  `rows(filter)` turns the
 * ledger into the flat list of fixed-height rows the virtualised view draws, grouped per
 * cell; it is cached per (version, filter) because the view asks on every scroll.
 */

import { ORIGINS, type Batch } from './parse';
import type {
  BenchSummary,
  CellBadge,
  CompileRecord,
  KernelInfo,
  LiveDiff,
  MemorySample,
  Origin
} from './protocol';

export const MAX_RECORDS = 10_000;
export const MAX_SAMPLES = 2_000;
export const MAX_BENCHMARKS = 50;

export type { Origin } from './protocol';
/** every origin, `unknown` included: the ledger shows what the kernel could not attribute */
export { ORIGINS };

export interface LedgerFilter {
  /** case-insensitive text over function, reasons and the cell's label */
  text: string;
  origins: ReadonlySet<Origin>;
  /** only this cell's entries (the notebook's cell id), or all */
  cellId: string | null;
}

export const NO_FILTER: LedgerFilter = {
  text: '',
  origins: new Set(ORIGINS),
  cellId: null
};

export interface GroupRow {
  kind: 'group';
  key: string;
  /** `[5]` for execution count 5, or what the kernel called the cell (`background`) */
  label: string;
  cellId: string | null;
  /** entries of this cell that pass the filter */
  count: number;
  /** their trace + lower + compile seconds */
  seconds: number;
}

export interface RecordRow {
  kind: 'record';
  record: CompileRecord;
  group: GroupRow;
}

/** the second line of an entry: its times, persistent cache and origin */
export interface TimesRow {
  kind: 'times';
  record: CompileRecord;
  group: GroupRow;
}

export interface ReasonRow {
  kind: 'reason';
  record: CompileRecord;
  text: string;
  group: GroupRow;
}

export type LedgerRow = GroupRow | RecordRow | TimesRow | ReasonRow;

/** `[5]` for an execution count, the kernel's own word otherwise. */
export function cellLabel(cell: string | null | undefined): string {
  if (!cell) {
    return 'outside a cell';
  }
  return /^\d+$/.test(cell) ? `[${cell}]` : cell;
}

function groupKey(r: CompileRecord): string {
  return r.cell_id ? `id:${r.cell_id}` : `cell:${r.cell}`;
}

function matches(r: CompileRecord, f: LedgerFilter, needle: string): boolean {
  if (!f.origins.has(r.origin)) {
    return false;
  }
  if (f.cellId !== null && r.cell_id !== f.cellId) {
    return false;
  }
  if (!needle) {
    return true;
  }
  if (r.function.toLowerCase().includes(needle)) {
    return true;
  }
  if (cellLabel(r.cell).toLowerCase().includes(needle)) {
    return true;
  }
  for (const reason of r.reasons) {
    if (reason.text.toLowerCase().includes(needle)) {
      return true;
    }
  }
  return false;
}

export class WorkbenchStore {
  records: CompileRecord[] = [];
  /** records neither here nor shown: dropped by the kernel or by the cap */
  dropped = 0;
  /** malformed items the kernel sent (each dropped alone) */
  rejected = 0;
  kernel: KernelInfo | null = null;
  workbenchVersion: string | null = null;
  memory: MemorySample[] = [];
  /** memory samples taken since load but held neither here nor by the kernel (the oldest) */
  memoryDropped = 0;
  benchmarks: BenchSummary[] = [];
  readonly badges = new Map<string, CellBadge>();
  readonly diffs = new Map<string, LiveDiff>();
  /** bumped on every change (the views' cache key) */
  version = 0;
  private _rowsKey = '';
  private _rows: LedgerRow[] = [];

  /** Everything forgotten (kernel restart or change, comm gone). */
  reset(): void {
    this.records = [];
    this.dropped = 0;
    this.rejected = 0;
    this.kernel = null;
    this.workbenchVersion = null;
    this.memory = [];
    this.memoryDropped = 0;
    this.benchmarks = [];
    this.badges.clear();
    this.diffs.clear();
    this.version++;
  }

  /** `%jaxcache clear`: the ledger and the badges' records are gone; memory is not. */
  clearLedger(): void {
    this.records = [];
    this.dropped = 0;
    this.badges.clear();
    this.version++;
  }

  /** The answer to hello: everything, memory since load included (the kernel keeps its
   * samples while no panel listens); `memoryDropped`: older samples it no longer holds. */
  applySnapshot(
    kernel: KernelInfo | null,
    version: string,
    batch: Batch,
    memoryDropped = 0
  ): void {
    this.reset();
    this.kernel = kernel;
    this.workbenchVersion = version;
    this.memoryDropped = memoryDropped;
    this.apply(batch);
  }

  /** Add a batch (an update, or a snapshot's lists after reset); `kernel`: the devices an
   * update brings once JAX started its backends after the snapshot. */
  apply(batch: Batch, kernel: KernelInfo | null = null): void {
    if (kernel) {
      this.kernel = kernel;
      this.version++;
    }
    this.rejected += batch.rejected;
    this.dropped += batch.dropped;
    if (batch.records.length) {
      const last = this.records.length
        ? this.records[this.records.length - 1].seq
        : -Infinity;
      let fresh = batch.records;
      // normally in seq order after what we hold; a replay or disorder is tolerated
      if (
        fresh.some(
          (r, i) => r.seq <= last || (i > 0 && r.seq <= fresh[i - 1].seq)
        )
      ) {
        const seen = new Set(this.records.map(r => r.seq));
        fresh = fresh.filter(r => !seen.has(r.seq) && (seen.add(r.seq), true));
        this.records = this.records.concat(fresh).sort((a, b) => a.seq - b.seq);
      } else {
        this.records = this.records.concat(fresh);
      }
      const over = this.records.length - MAX_RECORDS;
      if (over > 0) {
        this.records = this.records.slice(over);
        this.dropped += over;
      }
    }
    for (const b of batch.cells) {
      if (b.cell_id) {
        this.badges.set(b.cell_id, b);
      }
    }
    for (const d of batch.diffs) {
      if (d.cell_id) {
        this.diffs.set(d.cell_id, d);
      }
    }
    if (batch.memory.length) {
      this.memory = this.memory.concat(batch.memory);
      if (this.memory.length > MAX_SAMPLES) {
        this.memoryDropped += this.memory.length - MAX_SAMPLES;
        this.memory = this.memory.slice(this.memory.length - MAX_SAMPLES);
      }
    }
    if (batch.benchmarks.length) {
      this.benchmarks = this.benchmarks.concat(batch.benchmarks);
      if (this.benchmarks.length > MAX_BENCHMARKS) {
        this.benchmarks = this.benchmarks.slice(
          this.benchmarks.length - MAX_BENCHMARKS
        );
      }
    }
    this.version++;
  }

  /** Records that pass `filter` (ledger order: oldest first). */
  filtered(filter: LedgerFilter): CompileRecord[] {
    const needle = filter.text.trim().toLowerCase();
    return this.records.filter(r => matches(r, filter, needle));
  }

  /**
   * The ledger as rows: one header per cell (the cell that compiled most recently first),
   * then its entries newest first: a row, a row of times, and one row per reason.
   */
  rows(filter: LedgerFilter): LedgerRow[] {
    const key = `${this.version}\u0000${filter.text}\u0000${[...filter.origins].sort().join(',')}\u0000${filter.cellId ?? ''}`;
    if (key === this._rowsKey) {
      return this._rows;
    }
    const groups = new Map<
      string,
      { row: GroupRow; records: CompileRecord[]; last: number }
    >();
    for (const r of this.filtered(filter)) {
      const k = groupKey(r);
      let g = groups.get(k);
      if (!g) {
        g = {
          row: {
            kind: 'group',
            key: k,
            label: cellLabel(r.cell),
            cellId: r.cell_id,
            count: 0,
            seconds: 0
          },
          records: [],
          last: r.seq
        };
        groups.set(k, g);
      }
      g.records.push(r);
      g.row.count++;
      g.row.seconds += r.total_s;
      g.row.label = cellLabel(r.cell); // the latest run's execution count
      g.last = r.seq;
    }
    const rows: LedgerRow[] = [];
    for (const g of [...groups.values()].sort((a, b) => b.last - a.last)) {
      rows.push(g.row);
      for (let i = g.records.length - 1; i >= 0; i--) {
        const record = g.records[i];
        rows.push({ kind: 'record', record, group: g.row });
        rows.push({ kind: 'times', record, group: g.row });
        for (const reason of record.reasons) {
          rows.push({
            kind: 'reason',
            record,
            text: reason.text,
            group: g.row
          });
        }
      }
    }
    this._rowsKey = key;
    this._rows = rows;
    return rows;
  }

  /** The newest memory sample. */
  latestMemory(): MemorySample | null {
    return this.memory.length ? this.memory[this.memory.length - 1] : null;
  }
}

// -- formatting shared by the views -------------------------------------------------------

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) {
    return '–';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Math.abs(n);
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const s =
    u === 0
      ? String(Math.round(v))
      : v >= 100
        ? v.toFixed(0)
        : v >= 10
          ? v.toFixed(1)
          : v.toFixed(2);
  return `${n < 0 ? '−' : ''}${s} ${units[u]}`;
}

export function formatSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) {
    return '–';
  }
  if (s >= 10) {
    return `${s.toFixed(1)} s`;
  }
  if (s >= 1) {
    return `${s.toFixed(2)} s`;
  }
  if (s >= 1e-3) {
    return `${(s * 1e3).toFixed(s >= 0.1 ? 0 : 1)} ms`;
  }
  if (s >= 1e-6) {
    return `${(s * 1e6).toFixed(1)} µs`;
  }
  return s === 0 ? '0 s' : `${(s * 1e9).toFixed(0)} ns`;
}

// The kernel-message reader (tolerant) and the bounded, grouped, filterable store.
import { describe, expect, it } from 'vitest';

import { parseKernelMessage, type Batch } from '../src/sidepanel/parse';
import {
  MAX_RECORDS,
  MAX_SAMPLES,
  NO_FILTER,
  WorkbenchStore,
  cellLabel,
  formatBytes,
  type LedgerFilter
} from '../src/sidepanel/store';
import { KERNEL, record, sample, snapshot } from './sidepanel-fixtures';

function batchOf(data: Record<string, unknown>): Batch {
  const msg = parseKernelMessage({ protocol: 1, type: 'update', ...data });
  if (msg.type !== 'update') {
    throw new Error(msg.type);
  }
  return msg.batch;
}

describe('parseKernelMessage', () => {
  it('reads a valid snapshot whole', () => {
    const msg = parseKernelMessage(
      snapshot({
        records: [
          record(0),
          record(1, {
            reasons: [
              {
                kind: 'shape',
                path: 'x',
                before: 'f32[3]',
                after: 'f32[4]',
                detail: null,
                text: 'x: f32[3] -> f32[4]'
              }
            ]
          })
        ]
      })
    );
    expect(msg.type).toBe('snapshot');
    if (msg.type !== 'snapshot') {
      return;
    }
    expect(msg.kernel).toEqual(KERNEL);
    expect(msg.batch.records).toHaveLength(2);
    expect(msg.batch.records[1].reasons[0].text).toBe('x: f32[3] -> f32[4]');
    expect(msg.batch.rejected).toBe(0);
  });

  it('never throws, and says what was wrong', () => {
    const cases: unknown[] = [
      undefined,
      null,
      0,
      'snapshot',
      [],
      { type: 'snapshot' },
      { protocol: '1', type: 'update' },
      { protocol: 1 },
      { protocol: 1, type: 42 },
      { protocol: 1, type: 'snapshot', kernel: 'x', records: {}, cells: 7 },
      {
        protocol: 1,
        type: 'update',
        records: [
          null,
          1,
          'x',
          { function: 'f' },
          { ...record(1), kind: 'jit' }
        ]
      }
    ];
    for (const c of cases) {
      const msg = parseKernelMessage(c);
      expect(msg).toBeTruthy();
    }
    expect(parseKernelMessage(null)).toMatchObject({
      type: 'invalid',
      fatal: false
    });
    const other = parseKernelMessage({ protocol: 2, type: 'snapshot' });
    expect(other).toMatchObject({ type: 'invalid', fatal: true });
    expect(other.type === 'invalid' && other.message).toContain('protocol 2');
    const unknown = parseKernelMessage({ protocol: 1, type: 'telemetry' });
    expect(unknown).toMatchObject({ type: 'invalid', fatal: false });
    expect(unknown.type === 'invalid' && unknown.message).toContain(
      'telemetry'
    );
    const bad = batchOf({
      records: [
        null,
        1,
        'x',
        { function: 'f' },
        { ...record(1), kind: 'jit' },
        record(2)
      ]
    });
    expect(bad.records.map(r => r.seq)).toEqual([2]);
    expect(bad.rejected).toBe(5);
  });

  it('ignores unknown fields and fixes wrong types of optional ones', () => {
    const b = batchOf({
      future: { x: 1 },
      records: [
        record(4, {
          trace_s: '1',
          persistent_cache: 'maybe',
          reasons: ['plain text', { text: 'ok', kind: 3 }, 5],
          extra: [1]
        })
      ],
      memory: [sample(1, 10, { devices: 'x' }), { t: 'now', live_bytes: 1 }]
    });
    const r = b.records[0];
    expect(r.trace_s).toBeNull();
    expect(r.persistent_cache).toBeNull();
    expect(r.reasons.map(x => x.text)).toEqual(['plain text', 'ok']);
    expect(r).not.toHaveProperty('extra');
    expect(b.memory).toHaveLength(1);
    expect(b.memory[0].devices).toEqual([]);
  });
});

describe('WorkbenchStore', () => {
  it('keeps the newest 10,000 records and counts the rest', () => {
    const s = new WorkbenchStore();
    const all = Array.from({ length: MAX_RECORDS + 500 }, (_, i) => record(i));
    s.apply(batchOf({ records: all.slice(0, 6000), dropped: 7 }));
    s.apply(batchOf({ records: all.slice(6000) }));
    expect(s.records).toHaveLength(MAX_RECORDS);
    expect(s.records[0].seq).toBe(500);
    expect(s.records[s.records.length - 1].seq).toBe(MAX_RECORDS + 499);
    expect(s.dropped).toBe(500 + 7);
    // a replayed batch is not counted twice
    s.apply(batchOf({ records: all.slice(MAX_RECORDS + 490) }));
    expect(s.records).toHaveLength(MAX_RECORDS);
  });

  it('keeps at most 2,000 memory samples', () => {
    const s = new WorkbenchStore();
    s.apply(
      batchOf({
        memory: Array.from({ length: MAX_SAMPLES + 10 }, (_, i) => sample(i, i))
      })
    );
    expect(s.memory).toHaveLength(MAX_SAMPLES);
    expect(s.memory[0].t).toBe(10);
    expect(s.memoryDropped).toBe(10);
  });

  it("charts a snapshot's memory history and counts what neither side kept", () => {
    const kept = Array.from({ length: 5 }, (_, i) => sample(i, 100 * (i + 1)));
    const msg = parseKernelMessage(
      snapshot({ memory: kept, memory_dropped: 7 })
    );
    if (msg.type !== 'snapshot') {
      throw new Error(msg.type);
    }
    expect(msg.memoryDropped).toBe(7);
    const s = new WorkbenchStore();
    s.applySnapshot(msg.kernel, msg.version, msg.batch, msg.memoryDropped);
    expect(s.memory.map(m => m.live_bytes)).toEqual(
      kept.map(m => m.live_bytes)
    );
    expect(s.memoryDropped).toBe(7);
    // an older kernel says nothing: none counted; a wrong type is not trusted
    for (const over of [{}, { memory_dropped: 'x' }, { memory_dropped: -3 }]) {
      const m = parseKernelMessage(snapshot(over));
      expect(m.type === 'snapshot' && m.memoryDropped).toBe(0);
    }
    s.reset();
    expect(s.memoryDropped).toBe(0);
  });

  it('groups per cell, newest cell and entry first, with a row per reason', () => {
    const s = new WorkbenchStore();
    s.apply(
      batchOf({
        records: [
          record(1, { cell: '3', cell_id: 'a' }),
          record(2, { cell: '4', cell_id: 'b' }),
          record(3, {
            cell: '5',
            cell_id: 'a',
            reasons: [{ text: 'x: f32[3] -> f32[4]' }]
          }),
          record(4, { cell: 'background', cell_id: null })
        ]
      })
    );
    const rows = s.rows(NO_FILTER);
    const shape = rows.map(r =>
      r.kind === 'group'
        ? `G ${r.label} ${r.count}`
        : r.kind === 'reason'
          ? `  R ${r.text}`
          : `  ${r.kind} ${r.record.seq}`
    );
    expect(shape).toEqual([
      'G background 1',
      '  record 4',
      '  times 4',
      'G [5] 2',
      '  record 3',
      '  times 3',
      '  R x: f32[3] -> f32[4]',
      '  record 1',
      '  times 1',
      'G [4] 1',
      '  record 2',
      '  times 2'
    ]);
    expect(s.rows(NO_FILTER)).toBe(rows); // cached until something changes
  });

  it('filters by text over function, reason and cell, by origin and by cell id', () => {
    const s = new WorkbenchStore();
    s.apply(
      batchOf({
        records: [
          record(1, { function: 'loss', cell: '3', cell_id: 'a' }),
          record(2, {
            function: 'jnp.sin',
            origin: 'jax',
            cell: '4',
            cell_id: 'b'
          }),
          record(3, {
            function: 'step',
            cell: '5',
            cell_id: 'a',
            reasons: [{ text: 'Loss shape changed' }]
          }),
          record(4, {
            function: 'inspect',
            origin: 'workbench',
            cell: '6',
            cell_id: 'c'
          })
        ]
      })
    );
    const f = (over: Partial<LedgerFilter>): number[] =>
      s.filtered({ ...NO_FILTER, ...over }).map(r => r.seq);
    expect(f({ text: 'LOSS' })).toEqual([1, 3]);
    expect(f({ text: '[4]' })).toEqual([2]);
    expect(f({ origins: new Set(['user']) })).toEqual([1, 3]);
    expect(f({ origins: new Set(['jax', 'workbench']) })).toEqual([2, 4]);
    expect(f({ cellId: 'a' })).toEqual([1, 3]);
    expect(f({ cellId: 'a', text: 'step' })).toEqual([3]);
    expect(f({ cellId: 'zzz' })).toEqual([]);
  });

  it("keeps a compile the kernel could not attribute as unknown, never as the user's", () => {
    const records = batchOf({
      records: [
        record(1, { origin: 'unknown' }),
        record(2), // the user's
        record(3, { origin: undefined }), // a kernel that said nothing
        record(4, { origin: 'elsewhere' }) // a word this panel does not know
      ]
    }).records;
    expect(records.map(r => [r.seq, r.origin])).toEqual([
      [1, 'unknown'],
      [2, 'user'],
      [3, 'unknown'],
      [4, 'unknown']
    ]);
    const s = new WorkbenchStore();
    s.apply(
      batchOf({ records: [record(1, { origin: 'unknown' }), record(2)] })
    );
    const f = (over: Partial<LedgerFilter>): number[] =>
      s.filtered({ ...NO_FILTER, ...over }).map(r => r.seq);
    expect(f({})).toEqual([1, 2]); // shown by default
    expect(f({ origins: new Set(['user']) })).toEqual([2]);
    expect(f({ origins: new Set(['unknown']) })).toEqual([1]);
  });

  it('reads a reason given as bare text as one of unknown kind', () => {
    const [r] = batchOf({
      records: [record(1, { reasons: ['x changed', { text: 'y changed' }] })]
    }).records;
    expect(r.reasons.map(x => [x.kind, x.text])).toEqual([
      ['unknown', 'x changed'],
      ['unknown', 'y changed']
    ]);
  });

  it('cleared empties the ledger and badges, restart empties everything', () => {
    const s = new WorkbenchStore();
    const msg = parseKernelMessage(
      snapshot({
        cells: [
          {
            cell: '1',
            cell_id: 'a',
            run: 1,
            t: 1,
            compiles: 1,
            traces: 1,
            lowers: 1,
            compile_s: 0.1,
            misses: 0,
            first_reason: null,
            persistent_hits: 0,
            inspections: 0
          }
        ]
      })
    );
    if (msg.type !== 'snapshot') {
      throw new Error(msg.type);
    }
    s.applySnapshot(msg.kernel, msg.version, msg.batch);
    expect(s.badges.size).toBe(1);
    s.clearLedger();
    expect(s.records).toEqual([]);
    expect(s.badges.size).toBe(0);
    expect(s.memory).toHaveLength(1);
    s.reset();
    expect(s.memory).toEqual([]);
    expect(s.kernel).toBeNull();
  });

  it('formats labels and bytes', () => {
    expect(cellLabel('12')).toBe('[12]');
    expect(cellLabel('background')).toBe('background');
    expect(formatBytes(64 * 1024 * 1024)).toBe('64.0 MiB');
    expect(formatBytes(-2048)).toBe('−2.00 KiB');
    expect(formatBytes(null)).toBe('–');
  });
});

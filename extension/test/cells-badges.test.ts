/** Badge and live-diff text: counts, times, reasons, staleness, malformed input. */
import { describe, expect, it } from 'vitest';

import {
  REASON_CHARS,
  badgeFromMetadata,
  badgeText,
  counted,
  currentBadge,
  formatSeconds,
  parseBadge,
  truncate
} from '../src/cells/badges';
import {
  currentDiff,
  formatBytes,
  formatDelta,
  formatFlops,
  parseDiff,
  summaryText,
  totalText
} from '../src/cells/liveDiff';
import type { LiveDiff } from '../src/sidepanel/protocol';
import { badge } from './cells-fixtures';

describe('badge text', () => {
  it('says singular and plural right', () => {
    expect(counted(1, 'compile')).toBe('1 compile');
    expect(counted(2, 'compile')).toBe('2 compiles');
    expect(counted(0, 'compile')).toBe('0 compiles');
    expect(counted(1, 'miss', 'misses')).toBe('1 miss');
    expect(counted(3, 'miss', 'misses')).toBe('3 misses');
    expect(badgeText(badge()).short).toBe('1 compile · 250 ms');
    expect(
      badgeText(
        badge({
          compiles: 3,
          compile_s: 1.234,
          misses: 1,
          first_reason: 'x: shape (3,) → (4,)',
          persistent_hits: 2
        })
      ).short
    ).toBe(
      '3 compiles · 1.2 s · 1 miss: x: shape (3,) → (4,) · 2 persistent hits'
    );
    expect(
      badgeText(badge({ misses: 2, first_reason: null, persistent_hits: 1 }))
        .short
    ).toBe('1 compile · 250 ms · 2 misses · 1 persistent hit');
  });

  it('falls back to lowerings, traces, inspections when nothing compiled', () => {
    expect(badgeText(badge({ compiles: 0, lowers: 2, traces: 2 })).short).toBe(
      '2 lowerings · 250 ms'
    );
    expect(
      badgeText(badge({ compiles: 0, lowers: 0, traces: 1, compile_s: 0.004 }))
        .short
    ).toBe('1 trace · 4.0 ms');
    expect(
      badgeText(
        badge({
          compiles: 0,
          lowers: 0,
          traces: 0,
          compile_s: 0,
          inspections: 2
        })
      ).short
    ).toBe('2 inspections');
  });

  it('formats times across scales', () => {
    expect(formatSeconds(0)).toBe('0 s');
    expect(formatSeconds(0.00042)).toBe('420 µs');
    expect(formatSeconds(0.0042)).toBe('4.2 ms');
    expect(formatSeconds(0.25)).toBe('250 ms');
    expect(formatSeconds(1.25)).toBe('1.3 s');
    expect(formatSeconds(42.4)).toBe('42 s');
    expect(formatSeconds(125)).toBe('2 min 5 s');
    expect(formatSeconds(-0.003)).toBe('−3.0 ms');
  });

  it('cuts a long reason in the compact text and keeps it whole in the title', () => {
    const reason = `argument w: shape changed from float32[${'4,'.repeat(40)}4] to float32[${'8,'.repeat(40)}8]`;
    const t = badgeText(badge({ misses: 1, first_reason: reason }));
    const shown = t.short.split('1 miss: ')[1];
    expect(shown.endsWith('…')).toBe(true);
    expect(shown.length).toBe(REASON_CHARS);
    expect(reason.startsWith(shown.slice(0, -1))).toBe(true);
    expect(t.full).toContain(reason);
    expect(truncate('a\n  b', 10)).toBe('a b');
  });
});

describe('badge input is untrusted', () => {
  it('accepts a well-formed badge and drops unknown fields', () => {
    const b = parseBadge({ ...badge(), extra: { nested: 1 } });
    expect(b).toEqual(badge());
    expect(badgeFromMetadata({ badge: badge() })).toEqual(badge());
  });

  it('rejects wrong types instead of throwing', () => {
    for (const bad of [
      null,
      3,
      'x',
      [],
      { ...badge(), compiles: '3' },
      { ...badge(), compiles: -1 },
      { ...badge(), first_reason: 7 },
      { ...badge(), compile_s: Number.NaN },
      { ...badge(), cell: {} }
    ]) {
      expect(parseBadge(bad)).toBeNull();
    }
    expect(badgeFromMetadata({ badge: 'nope' })).toBeNull();
    expect(badgeFromMetadata(undefined)).toBeNull();
  });
});

describe('which badge a cell shows', () => {
  it('shows the badge of the run whose outputs the cell shows', () => {
    expect(currentBadge(badge({ cell: '5' }), null, 5)).not.toBeNull();
    // re-run (count 6) that compiled nothing: the old badge is stale
    expect(currentBadge(badge({ cell: '5' }), null, 6)).toBeNull();
    // running (no count yet): nothing
    expect(currentBadge(badge({ cell: '5' }), null, null)).toBeNull();
  });

  it("shows nothing for a run that did no JAX work (the kernel's all-zero badge of a cached re-run)", () => {
    const empty = badge({
      cell: '6',
      t: 2000,
      compiles: 0,
      traces: 0,
      lowers: 0,
      compile_s: 0
    });
    expect(currentBadge(badge({ cell: '5' }), empty, 6)).toBeNull();
    expect(currentBadge(empty, null, 6)).toBeNull();
    expect(
      currentBadge(
        badge({ cell: '6', compiles: 0, traces: 0, lowers: 0, inspections: 1 }),
        null,
        6
      )
    ).not.toBeNull();
  });

  it('prefers the newer of stored and live', () => {
    const stored = badge({ cell: '5', t: 10, compiles: 1 });
    const live = badge({ cell: '7', t: 20, compiles: 4 });
    expect(currentBadge(stored, live, 7)?.compiles).toBe(4);
    expect(currentBadge(live, stored, 7)?.compiles).toBe(4);
    // the live one is older (a snapshot replayed an earlier run): the stored one stands
    expect(currentBadge(badge({ cell: '9', t: 30 }), live, 9)?.cell).toBe('9');
  });
});

const diff = (over: Partial<LiveDiff> = {}): LiveDiff => ({
  cell: '8',
  cell_id: 'c-1',
  kind: 'jaxpr',
  t: 1,
  function: 'loss',
  added: [
    {
      what: 'mul',
      line: {
        file: '/tmp/ipykernel_1/2.py',
        line: 3,
        function: 'loss',
        text: 'h = h * 2'
      },
      count: 2,
      examples: ['c:f32[4] = mul b 2.0']
    }
  ],
  removed: [{ what: 'tanh', line: null, count: 1, examples: [] }],
  totals: [
    { name: 'equations', before: 12, after: 13, unit: 'count' },
    { name: 'compile time', before: 0.012, after: 0.015, unit: 's' },
    { name: 'temp bytes', before: 1024, after: 4096, unit: 'bytes' },
    { name: 'estimated bytes', before: null, after: 2048, unit: 'bytes' }
  ],
  ...over
});

describe('live diff text', () => {
  it('formats totals with deltas', () => {
    const [eqs, time, temp, est] = diff().totals;
    expect(totalText(eqs)).toBe('12 → 13 (+1)');
    expect(totalText(time)).toBe('12 ms → 15 ms (+3.0 ms)');
    expect(totalText(temp)).toBe('1.0 KiB → 4.0 KiB (+3.0 KiB)');
    expect(totalText(est)).toBe('– → 2.0 KiB');
    expect(formatDelta({ name: 'x', before: 5, after: 2, unit: 'count' })).toBe(
      '−3'
    );
    expect(formatDelta({ name: 'x', before: 5, after: 5, unit: 'count' })).toBe(
      '±0'
    );
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
  });

  it('formats big memory and FLOP totals with their units', () => {
    const mem = {
      name: 'memory: temp',
      before: 126964391936,
      after: 126962294784,
      unit: 'bytes' as const
    };
    expect(totalText(mem)).toBe('118.2 GiB → 118.2 GiB (−2.0 MiB)');
    const flops = {
      name: 'estimated flops',
      before: 127.0e9,
      after: 127.5e9,
      unit: 'flops' as const
    };
    expect(totalText(flops)).toBe('127.0 GFLOP → 127.5 GFLOP (+500.0 MFLOP)');
    expect(formatFlops(96)).toBe('96 FLOP');
    expect(formatFlops(1500)).toBe('1.5 kFLOP');
    expect(
      totalText({
        name: 'instructions',
        before: 12000,
        after: 12001,
        unit: 'count'
      })
    ).toBe('12,000 → 12,001 (+1)');
    // a diff from the kernel keeps its flops unit
    const parsed = parseDiff({ ...diff(), totals: [flops] });
    expect(parsed?.totals[0].unit).toBe('flops');
  });

  it('sums the gist', () => {
    expect(summaryText(diff())).toBe(
      'Live diff of loss since the previous run: +2 −1 · equations 12 → 13 (+1)'
    );
    expect(
      summaryText(
        diff({
          added: [],
          removed: [],
          totals: [{ name: 'equations', before: 3, after: 3, unit: 'count' }]
        })
      )
    ).toBe('Live diff of loss: no change since the previous run');
  });

  it('keeps what is well formed of a malformed diff', () => {
    const d = parseDiff({
      ...diff(),
      added: [
        null,
        { what: 3 },
        { what: 'add', count: 'x', line: 'no', examples: [1, 'a + b'] }
      ],
      totals: 'x',
      extra: 1
    });
    expect(d?.added).toEqual([
      { what: 'add', count: 1, line: null, examples: ['a + b'] }
    ]);
    expect(d?.totals).toEqual([]);
    expect(parseDiff('nope')).toBeNull();
  });

  it('shows a diff only for the run on screen', () => {
    expect(currentDiff(diff({ cell: '8' }), 8)).not.toBeNull();
    expect(currentDiff(diff({ cell: '8' }), 9)).toBeNull();
    expect(currentDiff(diff({ cell: '8' }), null)).toBeNull();
    expect(currentDiff(diff({ cell: null }), 9)).not.toBeNull();
  });
});

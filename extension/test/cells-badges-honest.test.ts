/**
 * Badges count the user's compiles (JAX's helper compiles only in the tooltip), and a badge
 * stored by an interactive run is not shown under the outputs of a later headless run
 * (nbclient / papermill) that happens to reuse its execution count.
 */
import { describe, expect, it } from 'vitest';

import {
  CLOCK_SKEW_MS,
  badgeText,
  currentBadge,
  parseBadge,
  ranAfter
} from '../src/cells/badges';
import { badge } from './cells-fixtures';

describe('helper compiles', () => {
  it('are kept apart from the count and shown in the tooltip', () => {
    const b = parseBadge({
      ...badge({ compiles: 1 }),
      helper_compiles: 20,
      helper_s: 3.5
    });
    expect(b).not.toBeNull();
    const { short, full } = badgeText(b!);
    expect(short.startsWith('1 compile ·')).toBe(true);
    expect(full).toContain('20 JAX helper compiles');
    expect(full).toContain('3.5 s');
  });

  it('a trace-only cell says trace, whatever JAX compiled for itself', () => {
    const b = parseBadge({
      ...badge({ compiles: 0, lowers: 0, traces: 1 }),
      helper_compiles: 3,
      helper_s: 0.1
    });
    expect(badgeText(b!).short.startsWith('1 trace')).toBe(true);
  });

  it('a badge from a kernel without the split still reads', () => {
    const b = parseBadge(badge());
    expect(b).not.toBeNull();
    expect(badgeText(b!).full).not.toContain('helper');
  });

  it('rejects malformed helper counts', () => {
    expect(parseBadge({ ...badge(), helper_compiles: -1 })).toBeNull();
    expect(parseBadge({ ...badge(), helper_s: 'x' })).toBeNull();
  });
});

describe('a headless re-run', () => {
  const t = 1_700_000_000; // the kernel's clock when the interactive run made its badge
  const iso = (ms: number): string => new Date(ms).toISOString();

  it('reads when the cell ran from nbclient and papermill metadata', () => {
    expect(ranAfter({ 'iopub.execute_input': iso(t * 1000) }, undefined)).toBe(
      t * 1000
    );
    expect(ranAfter(undefined, { start_time: iso(t * 1000 + 5) })).toBe(
      t * 1000 + 5
    );
    expect(
      ranAfter({ 'iopub.execute_input': iso(1) }, { start_time: iso(2) })
    ).toBe(2);
    expect(ranAfter({ 'iopub.execute_input': 42 }, null)).toBeNull();
    expect(ranAfter(undefined, undefined)).toBeNull();
  });

  it("hides the interactive run's badge under a later run with the same count", () => {
    const stored = badge({ cell: '3', t });
    const later = ranAfter(
      { 'iopub.execute_input': iso(t * 1000 + 3_600_000) },
      null
    );
    expect(currentBadge(stored, null, 3, later)).toBeNull();
    const papermill = ranAfter(null, { start_time: iso(t * 1000 + 3_600_000) });
    expect(currentBadge(stored, null, 3, papermill)).toBeNull();
  });

  it('keeps the badge of the run it describes (recorded before the badge was made)', () => {
    const stored = badge({ cell: '3', t });
    const started = ranAfter(
      { 'iopub.execute_input': iso(t * 1000 - 2_000) },
      null
    );
    expect(currentBadge(stored, null, 3, started)).toEqual(stored);
    // a browser clock somewhat ahead of the kernel's is not a later run
    const skewed = ranAfter(
      { 'iopub.execute_input': iso(t * 1000 + CLOCK_SKEW_MS / 2) },
      null
    );
    expect(currentBadge(stored, null, 3, skewed)).toEqual(stored);
    expect(currentBadge(stored, null, 3, null)).toEqual(stored);
  });

  it("reads papermill's zone-less start_time as UTC, whatever the browser's zone", () => {
    // papermill writes datetime.utcnow().isoformat(): UTC with no zone designator, which
    // Date.parse would read as local time (hours off west of Greenwich)
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      const naive = new Date(t * 1000).toISOString().replace('Z', '123');
      expect(ranAfter(null, { start_time: naive })).toBe(t * 1000);
      // an interactive run 1 minute after a papermill run keeps its fresh badge (the
      // papermill metadata stays on the cell; JupyterLab does not clear it)
      const fresh = badge({ cell: '3', t: t + 60 });
      expect(
        currentBadge(fresh, null, 3, ranAfter(null, { start_time: naive }))
      ).toEqual(fresh);
      // zone-qualified times are read as written
      expect(
        ranAfter(
          { 'iopub.execute_input': '2023-11-14T17:13:20.000-05:00' },
          null
        )
      ).toBe(t * 1000);
    } finally {
      if (zone === undefined) {
        delete process.env.TZ;
      } else {
        process.env.TZ = zone;
      }
    }
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import {
  fmtBytes,
  fmtCount,
  fmtPercent,
  fmtSeconds,
  sig
} from '../src/bench/format';
import {
  benchRows,
  finiteSamples,
  fitText,
  headline,
  histogram,
  rooflineLines,
  rooflineSource,
  rowCells,
  rowWarnings,
  runOrder,
  scaleAt,
  sharedScale,
  sortRows,
  type BenchPayload
} from '../src/bench/model';

const read = <T>(name: string): T =>
  JSON.parse(
    readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')
  ) as T;

const two = read<BenchPayload>('bench-two');
const sweep = read<BenchPayload>('bench-sweep');

describe('number formats agree with workbench/views/_format.py', () => {
  const expected = read<{
    seconds3: [number, string][];
    seconds2: [number, string][];
    bytes: [number, string][];
    count: [number, string][];
    sig: [number, number, string][];
    percent: [number, number, string][];
  }>('bench-format');
  it('seconds, bytes, counts, significant digits', () => {
    for (const [v, s] of expected.seconds3) {
      expect(fmtSeconds(v)).toBe(s);
    }
    for (const [v, s] of expected.seconds2) {
      expect(fmtSeconds(v, 2)).toBe(s);
    }
    for (const [v, s] of expected.bytes) {
      expect(fmtBytes(v)).toBe(s);
    }
    for (const [v, s] of expected.count) {
      expect(fmtCount(v, 'FLOP')).toBe(s);
    }
    for (const [v, d, s] of expected.sig) {
      expect(sig(v, d)).toBe(s);
    }
    for (const [v, d, s] of expected.percent) {
      expect(fmtPercent(v, d)).toBe(s);
    }
    expect(fmtSeconds(null)).toBe('n/a');
  });
});

describe('ties round as Python does (half to even), not half up as toFixed/toPrecision do', () => {
  // each expected text is what workbench/views/_format.py prints for the value
  it('bytes, seconds, significant digits and percentages at exact ties', () => {
    expect(fmtBytes(1280)).toBe('1.2 KiB'); // 1.25 KiB, e.g. f32[320, 1024] is 1.25 MiB
    expect(fmtBytes(2304)).toBe('2.2 KiB');
    expect(fmtBytes(1.25 * 2 ** 20)).toBe('1.2 MiB');
    expect(fmtBytes(3840)).toBe('3.8 KiB');
    expect(fmtBytes(2 ** 41)).toBe('2048.0 GiB'); // Python has no TiB
    expect(fmtSeconds(1.125)).toBe('1.12 s');
    expect(fmtSeconds(12.5, 2)).toBe('12 s');
    expect(fmtSeconds(0.0625)).toBe('62.5 ms');
    expect(fmtSeconds(0.0125, 2)).toBe('13 ms'); // 0.0125 is not exact in binary: no tie
    expect(sig(0.125, 2)).toBe('0.12');
    expect(sig(-0.125, 2)).toBe('-0.12');
    expect(sig(2.5, 1)).toBe('2');
    expect(sig(3.5, 1)).toBe('4');
    expect(fmtPercent(0.125, 0)).toBe('12%');
    expect(fmtCount(1250, 'FLOP', 2)).toBe('1.2 kFLOP');
    expect(fmtSeconds(1250, 3)).toBe('1250 s');
    expect(fmtSeconds(12450, 3)).toBe('12400 s');
    expect(fmtSeconds(12350, 3)).toBe('12400 s');
  });
});

describe('bench view model (payloads from workbench.bench)', () => {
  it('one row per measurement with the ratio to the reference variant', () => {
    const rows = benchRows(two);
    expect(rows.map(r => r.m.variant)).toEqual(['jit', 'eager']);
    expect(rows[0].reference).toBe(true);
    expect(rows[1].ratio?.median).toBe(two.comparisons[0].ratio.median);
    const cells = rowCells(rows[1]);
    expect(cells.median).toBe(fmtSeconds(two.measurements[1].stats!.median));
    expect(
      cells.ratio.startsWith(`×${sig(two.comparisons[0].ratio.median!)}`)
    ).toBe(true);
    expect(rowCells(rows[0]).ratio).toBe('reference');
    expect(cells.n).toBe(
      `${two.measurements[1].stats!.n} × ${two.measurements[1].number}`
    );
    expect(rowCells(rows[0]).first).toMatch(
      /^\S+ m?s \(trace .* · lower .* · XLA .*\)$/
    );
  });

  it('leaves out a ratio interval the payload has no bounds for (null), never "NaN"', () => {
    const p = {
      ...two,
      comparisons: two.comparisons.map(c => ({
        ...c,
        ratio: { ...c.ratio, ci_low: null, ci_high: null }
      }))
    };
    const cell = rowCells(benchRows(p)[1]).ratio;
    expect(cell).toBe(`×${sig(two.comparisons[0].ratio.median!)}`);
  });

  it('a shared plot scale, histograms that count every sample, bounded run-order plots', () => {
    const rows = benchRows(two);
    const scale = sharedScale(rows)!;
    const all = rows.flatMap(r => finiteSamples(r.m));
    expect(scale.lo).toBe(Math.min(...all));
    expect(scale.hi).toBe(Math.max(...all));
    expect(scale.log).toBe(scale.hi / scale.lo > 20);
    expect(scaleAt(scale, scale.lo)).toBe(0);
    expect(scaleAt(scale, scale.hi)).toBeCloseTo(1);
    const s0 = finiteSamples(rows[0].m);
    expect(histogram(s0, scale, 50).reduce((a, b) => a + b, 0)).toBe(s0.length);
    expect(runOrder(s0, 100)).toHaveLength(Math.min(100, s0.length));
    expect(runOrder([3, 1, 2], 100)).toEqual([3, 1, 2]);
    expect(
      sharedScale(
        benchRows({
          ...two,
          measurements: two.measurements.map(m => ({ ...m, samples: [] }))
        })
      )
    ).toBeNull();
  });

  it('sorts rows by median and names the sweep points', () => {
    const rows = benchRows(sweep);
    expect(rows.map(r => r.params)).toEqual(['n=16', 'n=32', 'n=64']);
    const up = sortRows(rows, 'median', false).map(r => r.m.stats!.median);
    expect(up).toEqual([...up].sort((a, b) => a - b));
    const down = sortRows(rows, 'median', true).map(r => r.m.stats!.median);
    expect(down).toEqual([...up].reverse());
    // the fit line is the kernel's (workbench/views/bench.py fit_text), numbers included
    const kernel =
      read<Record<string, string>>('bench-texts')['bench-sweep'].split('\n');
    expect(sweep.fits.length).toBeGreaterThan(0);
    for (const f of sweep.fits) {
      expect(kernel).toContain(fitText(f, sweep.sweep_param));
    }
    expect(headline(sweep)).toMatch(/ · \d+ samples in /);
  });

  it('says what the Python views warn about, and skips roofline numbers nobody measured', () => {
    const m = {
      ...two.measurements[0],
      sampling_compiles: 3,
      stopped_by_budget: true
    };
    const w = rowWarnings(m);
    expect(w).toContain(
      'recompiled 3 times during sampling: the steady state includes compiles'
    );
    expect(w).toContain(`budget reached after ${m.stats!.n} samples`);
    // workbench/engine/bench/result.py: one compile is "1 time"
    expect(rowWarnings({ ...m, sampling_compiles: 1 })[0]).toBe(
      'recompiled 1 time during sampling: the steady state includes compiles'
    );
    expect(
      rowWarnings({ ...m, sampling_compiles: 0, warmup_compiles: 1 })
    ).toContain('compiled 1 time during warm-up');
    const eager = two.measurements[1];
    expect(rooflineLines(eager.roofline)).toEqual(
      eager.roofline ? [eager.roofline.note] : []
    );
    expect(rooflineLines(two.measurements[0].roofline)[1]).toMatch(
      /^achieved \S+ \S*FLOP\/s/
    );
  });

  it('says where the roofline figures came from: XLA, our count of the HLO, or both', () => {
    const r = two.measurements[0].roofline!;
    expect(r).not.toBeNull();
    const { flops_source: _f, bytes_source: _b, ...old } = r;
    expect(rooflineLines(old)[0]).toContain("per call (XLA's cost analysis)");
    const counted = {
      ...r,
      flops_source: 'counted' as const,
      bytes_source: 'counted' as const
    };
    expect(rooflineSource(counted)).toBe('our count of the optimized HLO');
    expect(rooflineLines(counted)[0]).toContain(
      'per call (our count of the optimized HLO)'
    );
    expect(
      rooflineSource({ ...r, flops_source: 'counted', bytes_source: 'xla' })
    ).toBe(
      "FLOPs from our count of the optimized HLO, bytes from XLA's cost analysis"
    );
  });
});

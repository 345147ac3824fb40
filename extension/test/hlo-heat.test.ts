import { describe, expect, it } from 'vitest';

import { formatBytes, formatCount, heatScale } from '../src/hlo/heat';

describe('heat scale', () => {
  it('gives the top colour to at most ~10% of a realistic distribution', () => {
    // log-normal-ish sizes with many ties, as fusions of a transformer are
    let s = 7;
    const rnd = (): number => {
      s = (s * 16807) % 2147483647;
      return s / 2147483647;
    };
    const values: number[] = [];
    for (let i = 0; i < 1200; i++) {
      const tier = rnd();
      values.push(
        tier < 0.3
          ? 81920
          : tier < 0.5
            ? 16384
            : Math.round(Math.exp(4 + rnd() * 10))
      );
    }
    for (let i = 0; i < 120; i++) {
      values.push(0);
    } // parameters
    const h = heatScale(values);
    const top = [...h.bucket].filter(b => b === h.top).length;
    expect(top / values.length).toBeLessThanOrEqual(0.1);
    expect(top).toBeGreaterThan(0);
    // heavier never gets a lighter colour
    const order = values
      .map((v, i) => [v, h.bucket[i]])
      .sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < order.length; i++) {
      expect(order[i][1]).toBeGreaterThanOrEqual(order[i - 1][1]);
    }
    expect(h.bucket[values.length - 1]).toBe(0);
  });

  it('does not let a crowd of equal values take the top colour', () => {
    const values = [...new Array(60).fill(100), ...new Array(40).fill(10)];
    const h = heatScale(values);
    expect([...h.bucket].filter(b => b === h.top).length).toBe(0);
    const one = heatScale([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 1000
    ]);
    expect(one.bucket[19]).toBe(one.top);
    expect([...one.bucket].filter(b => b === one.top).length).toBe(1);
  });

  it('formats sizes and unreported counts', () => {
    expect(formatBytes(81920)).toBe('80 KB');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatCount(null)).toBe('n/a (not reported)');
    expect(formatCount(-1)).toBe('n/a (not reported)');
    // backends report -1 for what they do not know: never '-1 B'
    expect(formatBytes(-1)).toBe('n/a');
    expect(formatBytes(Number.NaN)).toBe('n/a');
    expect(formatBytes(0)).toBe('0 B');
    expect(formatCount(198142688)).toBe('198.1M');
  });
});

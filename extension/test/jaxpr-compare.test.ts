import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { align, diff, markOf, signatures } from '../src/jaxpr/compare';
import { groupAvals, headerSummary, signatureText } from '../src/jaxpr/header';
import { flatten } from '../src/jaxpr/rows';
import type {
  UnpackedJaxprComparePayload,
  UnpackedJaxprPayload
} from '../src/jaxpr/types';
import { functionAndGradient, syntheticPayload } from './jaxpr-synthetic';

/** a hang guard for the largest inputs, not a speed bound (busy CI machines are slow):
 * their wall times are in bench/algorithms.bench.ts */
const HANG_GUARD_MS = 60_000;

/** Naive O(nm) LCS length, to check diff() finds a longest common subsequence. */
function lcsLength(a: string[], b: string[]): number {
  const dp = Array.from({ length: a.length + 1 }, () =>
    new Array<number>(b.length + 1).fill(0)
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      dp[i][j] =
        a[i - 1] === b[j - 1]
          ? dp[i - 1][j - 1] + 1
          : Math.max(dp[i - 1][j], dp[i][j - 1]);
    }
  }
  return dp[a.length][b.length];
}

function checkMatching(a: string[], b: string[], aToB: Int32Array): number {
  let last = -1;
  let n = 0;
  aToB.forEach((bi, ai) => {
    if (bi < 0) {
      return;
    }
    expect(bi).toBeGreaterThan(last); // monotone
    expect(b[bi]).toBe(a[ai]); // equal elements
    last = bi;
    n++;
  });
  return n;
}

describe('diff', () => {
  it('matches a longest common subsequence', () => {
    const cases: [string, string][] = [
      ['abcabba', 'cbabac'],
      ['', 'abc'],
      ['abc', ''],
      ['abc', 'abc'],
      ['xaby', 'ab'],
      ['kitten', 'sitting']
    ];
    for (const [x, y] of cases) {
      const a = [...x],
        b = [...y];
      expect(checkMatching(a, b, diff(a, b))).toBe(lcsLength(a, b));
    }
    // random sequences over a small alphabet
    let seed = 7;
    const rnd = (): number =>
      (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let t = 0; t < 50; t++) {
      const a = Array.from(
        { length: Math.floor(rnd() * 40) },
        () => 'abcd'[Math.floor(rnd() * 4)]
      );
      const b = Array.from(
        { length: Math.floor(rnd() * 40) },
        () => 'abcd'[Math.floor(rnd() * 4)]
      );
      expect(checkMatching(a, b, diff(a, b))).toBe(lcsLength(a, b));
    }
  });
});

describe('compare alignment', () => {
  it('aligns stages row by row, marking added and removed equations', () => {
    const sigs = [
      ['sin', 'mul', 'cos', 'add'],
      ['sin', 'mul', 'exp', 'add', 'neg'],
      ['sin', 'exp', 'add', 'neg']
    ];
    const al = align(sigs);
    const grid = al.rows.map(r =>
      [...r].map((e, k) => (e < 0 ? '.' : sigs[k][e])).join(' ')
    );
    expect(grid).toEqual([
      'sin sin sin',
      'mul mul .',
      'cos exp exp', // a replaced equation shares the row with its replacement
      'add add add',
      '. neg neg'
    ]);
    expect(markOf(al, 0, 2)).toBe('removed'); // cos
    expect(markOf(al, 1, 2)).toBe('added'); // exp: new in stage 1, kept in stage 2
    expect(markOf(al, 2, 1)).toBe('same');
  });

  it('marks with both neighbours', () => {
    const al = align([['a', 'b'], ['a', 'c'], ['a']]);
    expect(markOf(al, 1, 1)).toBe('changed'); // c: new in stage 1, gone in stage 2
    expect(markOf(al, 0, 1)).toBe('removed');
    expect(markOf(al, 1, 0)).toBe('same');
  });

  it('aligns the real grad / vmap(grad) stages', () => {
    const p = JSON.parse(
      readFileSync(
        new URL('./fixtures/jaxpr-compare.json', import.meta.url),
        'utf8'
      )
    ) as UnpackedJaxprComparePayload;
    const flats = p.stages.map(s => flatten(s.jaxpr!, s.avals));
    const sigs = flats.map(signatures);
    const al = align(sigs);
    // every equation of every stage appears exactly once
    sigs.forEach((s, k) => {
      const seen = al.rows
        .map(r => r[k])
        .filter(e => e >= 0)
        .sort((x, y) => x - y);
      expect(seen).toEqual(s.map((_, i) => i));
    });
    // tanh keeps its place through every stage
    const tanhRows = al.rows.filter(r =>
      [...r].every((e, k) => e >= 0 && sigs[k][e].startsWith('tanh '))
    );
    expect(tanhRows.length).toBe(1);
  });

  it('aligns two 12,000-equation programs within a linear work budget', () => {
    const a = signatures(
      (() => {
        const p = syntheticPayload(12000);
        return flatten(p.jaxpr!, p.avals);
      })()
    );
    const b = a.slice();
    for (let i = 0; i < b.length; i += 97) {
      b[i] = 'neg f32[16,128]';
    }
    b.splice(5000, 0, 'custom f32[]');
    const al = align([a, b]);
    const removed = a.filter((_, i) => !al.matchedNext[0][i]).length;
    expect(removed).toBe(Math.ceil(a.length / 97));
    // the work, counted: diff's budget bounds its search steps, and past it what is left
    // stays unmatched; a few hundred edits need about 10,000 steps, so a budget of the
    // programs' length finds the same matching (a quadratic search would need 1.4e8)
    const aToB = diff(a, b, a.length + b.length);
    expect([...aToB].map(x => (x >= 0 ? 1 : 0))).toEqual([
      ...al.matchedNext[0]
    ]);
  });
});

describe('compare of a function and its gradient', () => {
  // grad's jaxpr holds the forward equations (with residuals interleaved) and then the
  // backward pass: the edit distance is the backward pass's size, thousands for a real
  // model (24-layer transformer: 748 forward, 2,333 in grad(loss), distance 1,585)
  const gradLike = (fwd: string[], extra: number): string[] => {
    const out: string[] = [];
    fwd.forEach((s, i) => {
      out.push(s);
      if (i % 2) {
        out.push(`residual f32[${i % 5}]`);
      }
    });
    // half of the backward pass has signatures the forward pass has too
    for (let i = 0; i < extra; i++) {
      out.push(
        i % 2
          ? `transpose f32[${i % 7},128]`
          : ['mul f32[]', 'add f32[16,128]'][(i % 4) >> 1]
      );
    }
    return out;
  };
  const forward = (n: number): string[] =>
    Array.from(
      { length: n },
      (_, i) =>
        [
          'dot_general f32[16,128]',
          'tanh f32[16,128]',
          'add f32[16,128]',
          'mul f32[]'
        ][i % 4] + (i % 9 ? '' : ' f32[4]')
    );

  it('matches every forward equation however many the backward pass adds', () => {
    const a = forward(800);
    const b = gradLike(a, 1500);
    const aToB = diff(a, b);
    expect(checkMatching(a, b, aToB)).toBe(800);
    const al = align([a, b]);
    expect([...al.matchedNext[0]].every(x => x === 1)).toBe(true);
  });

  it(
    'aligns a 12,000-equation function with its 36,000-equation gradient within a tenth of quadratic work',
    { timeout: HANG_GUARD_MS },
    () => {
      // worst case: backward equations drawn from the forward's few signatures, interleaved
      const { a, b } = functionAndGradient();
      // the work, counted: diff's budget bounds its search steps (past it, what is left stays
      // unmatched); a tenth of the 12,000 x 36,000 cells a quadratic diff fills is enough
      // (this case takes about 1.9e7 steps; the wall time is in bench/algorithms.bench.ts)
      const aToB = diff(a, b, (a.length * b.length) / 10);
      expect(checkMatching(a, b, aToB)).toBe(12000); // a is a subsequence of b: all of it matches
    }
  );
});

describe('header summary', () => {
  it('groups equal avals instead of listing them', () => {
    const avals = [...Array(120).fill('f32[128,128]'), 'f32[16,128]'];
    expect(groupAvals(avals)).toEqual(['120 × f32[128,128]', 'f32[16,128]']);
    expect(groupAvals(['f32[4]', 'i32[]', 'f32[4]'])).toEqual([
      'f32[4]',
      'i32[]',
      'f32[4]'
    ]);
    // many alternating runs: grouped by value, in first-seen order
    const alt = Array.from({ length: 20 }, (_, i) =>
      i % 2 ? 'f32[2]' : 'f32[3]'
    );
    expect(groupAvals(alt)).toEqual(['10 × f32[3]', '10 × f32[2]']);
  });

  it('prefers the pytree summaries', () => {
    const p = syntheticPayload(300, 2) as UnpackedJaxprPayload;
    expect(signatureText(headerSummary(p))).toBe(
      '(10 × f32[128,128], f32[16,128]) → (f32[16,128])'
    );
    p.trees = {
      in: [
        {
          name: 'ps',
          summary: 'list[2] of {w1, wk, wo, wq, wv: f32[128,128]}',
          leaves: 10
        },
        { name: 'x', summary: 'f32[16,128]', leaves: 1 }
      ],
      out: [{ name: '', summary: 'f32[16,128]', leaves: 1 }]
    };
    expect(signatureText(headerSummary(p))).toBe(
      '(ps: list[2] of {w1, wk, wo, wq, wv: f32[128,128]}, x: f32[16,128]) → (f32[16,128])'
    );
  });

  it('reads the trees of a real version-3 payload (2-layer transformer gradient)', () => {
    const p = JSON.parse(
      readFileSync(
        new URL('./fixtures/jaxpr-trees.json', import.meta.url),
        'utf8'
      )
    ) as UnpackedJaxprPayload;
    expect(p.version).toBe(3);
    expect(signatureText(headerSummary(p))).toBe(
      '(params: list[2] of {w1, wk, wo, wq, wv: f32[128,128]}, x: f32[16,128]) → ' +
        '(out: list[2] of {w1, wk, wo, wq, wv: f32[128,128]})'
    );
    expect(flatten(p.jaxpr!, p.avals).equations).toBe(p.stats.equations);
  });
});

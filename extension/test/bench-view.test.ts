// @vitest-environment jsdom
/** The bench view in a DOM (jsdom): live updates keep the user's place, and only their own. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import {
  rowWarnings,
  type BenchPayload,
  type Measurement
} from '../src/bench/model';
import { MAX_OPEN_CARDS, benchView } from '../src/bench/view';
import type { Payload } from '../src/common/payload';
import type { RenderContext } from '../src/common/featureView';

const read = (name: string): Payload =>
  JSON.parse(
    readFileSync(join(__dirname, 'fixtures', `${name}.json`), 'utf8')
  ) as Payload;
/** a fixture as the generated payload type (the schema's records, never hand-written) */
const bench = (name: string): BenchPayload =>
  read(name) as unknown as BenchPayload;
const asPayload = (p: BenchPayload): Payload => p as unknown as Payload;

const ctx = (): RenderContext => ({
  mimeType: 'x',
  bundle: {},
  cells: {},
  outputId: 'o',
  interactive: () => undefined
});

afterEach(() => {
  document.body.textContent = '';
});

describe('bench view: live display updates', () => {
  it('keeps focus on the control the user focused in this output', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const view = benchView();
    await view.render(host, read('bench-two'), ctx());
    const toggle = host.querySelectorAll<HTMLElement>('.jwb-bench-toggle')[1];
    toggle.focus();
    await view.render(host, read('bench-two'), ctx());
    const now = host.querySelectorAll<HTMLElement>('.jwb-bench-toggle')[1];
    expect(now).not.toBe(toggle);
    expect(document.activeElement).toBe(now);
  });

  it('an update of one bench output does not pull focus out of another one', async () => {
    const a = document.body.appendChild(document.createElement('div'));
    const b = document.body.appendChild(document.createElement('div'));
    const va = benchView();
    const vb = benchView();
    await va.render(a, read('bench-two'), ctx());
    await vb.render(b, read('bench-two'), ctx());
    const sort = a.querySelectorAll<HTMLElement>('.jwb-bench-sort')[0];
    sort.focus();
    await vb.render(b, read('bench-two'), ctx()); // b updates live while the user works in a
    expect(document.activeElement).toBe(sort);
  });
});

describe('bench view: what the calls ran on', () => {
  it("says the timed calls ran on copies of the user's objects", async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const payload = read('bench-two') as unknown as {
      measurements: { state_note?: string }[];
    };
    const note =
      'timed on copies of model (MLP), opt (Optimizer): your objects are unchanged';
    payload.measurements[0].state_note = note;
    await benchView().render(host, payload as unknown as Payload, ctx());
    const shown = [...host.querySelectorAll('.jwb-bench-state')].map(
      e => e.textContent
    );
    expect(shown).toEqual([note]);
  });

  it('says nothing when the arguments held no mutable state', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    await benchView().render(host, read('bench-two'), ctx());
    expect(host.querySelectorAll('.jwb-bench-state')).toHaveLength(0);
  });
});

describe('bench view: everything in plain view, every control labelled', () => {
  const noisy = (): BenchPayload => {
    const p = bench('bench-two');
    p.measurements[0].sampling_compiles = 4;
    p.measurements[0].stats!.warnings = [
      'noisy: the IQR is 31% of the median; other work on this machine may have interfered'
    ];
    return p;
  };

  it("shows each row's histogram and run order, and the warnings in words, without a click", async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const payload = noisy();
    await benchView().render(host, asPayload(payload), ctx());
    const ms = payload.measurements;
    const hists = host.querySelectorAll('svg.jwb-bench-hist');
    const runs = host.querySelectorAll('svg.jwb-bench-runorder');
    expect(hists).toHaveLength(ms.length);
    expect(runs).toHaveLength(ms.length);
    ms.forEach((m, i) => {
      const n = m.samples.filter(x => typeof x === 'number').length;
      const counts = [...hists[i].querySelectorAll('rect[data-count]')].map(r =>
        Number(r.getAttribute('data-count'))
      );
      expect(counts.reduce((a, c) => a + c, 0)).toBe(n); // every sample in a bar
      expect(runs[i].querySelectorAll('circle.jwb-bench-pt')).toHaveLength(
        Math.min(n, 300)
      );
    });
    const warnings = [...host.querySelectorAll('.jwb-bench-warn')].map(
      w => w.textContent
    );
    const expected = ms.flatMap((m: Measurement) =>
      rowWarnings(m).map(w => `⚠ ${m.variant}: ${w}`)
    );
    expect(warnings).toEqual(expected);
    expect(warnings.slice(0, 2)).toEqual([
      `⚠ ${ms[0].variant}: recompiled 4 times during sampling: the steady state includes compiles`,
      `⚠ ${ms[0].variant}: noisy: the IQR is 31% of the median; other work on this machine may have interfered`
    ]);
    const mark = host.querySelector('tr[data-key] .jwb-bench-warnmark');
    expect(mark?.textContent).toBe('⚠ 2 warnings below');
  });

  it('puts the names a user wrote on the page as text, never as markup', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const p = noisy();
    const evil = '<img src=x onerror="window.__jwbPwned=1"><b>f</b>';
    p.measurements[0].variant = evil;
    p.variants[0] = evil;
    p.measurements[0].first_call = {
      total_s: 0.5,
      trace_s: 0.1,
      lower_s: 0.1,
      compile_s: 0.3,
      compiles: 1,
      functions: ['<script>boom()</script>'],
      source: 'first call'
    };
    await benchView().render(host, asPayload(p), ctx());
    expect(host.querySelector('img, b, script')).toBeNull();
    expect(
      host.querySelector('tr[data-key] td[data-col="variant"] .jwb-bench-value')
        ?.textContent
    ).toBe(evil);
    expect(host.querySelector('.jwb-bench-card-title')?.textContent).toBe(evil);
    expect(host.querySelector('.jwb-bench-warn-of')?.textContent).toBe(
      `${evil}: `
    );
    expect(host.textContent).toContain('(<script>boom()</script>)');
  });

  it("folds a card with its labelled button, and a sweep's many cards start folded", async () => {
    const host = document.body.appendChild(document.createElement('div'));
    await benchView().render(host, read('bench-two'), ctx());
    const toggle = host.querySelector<HTMLButtonElement>('.jwb-bench-toggle')!;
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(toggle.getAttribute('aria-label')).toMatch(
      /^Hide the histogram, run order and details of /
    );
    toggle.click();
    const again = host.querySelector<HTMLButtonElement>('.jwb-bench-toggle')!;
    expect(again.getAttribute('aria-expanded')).toBe('false');
    expect(
      host.querySelectorAll('.jwb-bench-card')[0].querySelector('svg')
    ).toBeNull();

    // a short sweep (at most MAX_OPEN_CARDS points) opens every card; a longer one folds
    // them all, each still with its labelled button
    const short = bench('bench-sweep');
    expect(short.measurements.length).toBeLessThanOrEqual(MAX_OPEN_CARDS);
    const long = bench('bench-sweep');
    long.measurements = Array.from({ length: MAX_OPEN_CARDS + 2 }, (_, i) => ({
      ...short.measurements[i % short.measurements.length],
      params: { n: 16 * (i + 1) }
    }));
    for (const [p, open] of [
      [short, true],
      [long, false]
    ] as const) {
      const sweep = document.body.appendChild(document.createElement('div'));
      await benchView().render(sweep, asPayload(p), ctx());
      const toggles = sweep.querySelectorAll('.jwb-bench-toggle');
      expect(toggles).toHaveLength(p.measurements.length);
      for (const t of toggles) {
        expect(t.getAttribute('aria-expanded')).toBe(String(open));
      }
      expect(sweep.querySelectorAll('svg.jwb-bench-hist')).toHaveLength(
        open ? p.measurements.length : 0
      );
    }
  });

  it('sorts with labelled header buttons and says the order', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    await benchView().render(host, read('bench-two'), ctx());
    const controls = [...host.querySelectorAll<HTMLElement>('button, summary')];
    for (const c of controls) {
      expect(c.dataset.jwbControl).toBeTruthy();
      expect(c.getAttribute('aria-label') ?? c.textContent).toBeTruthy();
    }
    const ms = bench('bench-two').measurements;
    const byMedian = (desc: boolean): string[] =>
      [...ms]
        .sort(
          (a, b) =>
            (desc ? -1 : 1) * ((a.stats?.median ?? 0) - (b.stats?.median ?? 0))
        )
        .map(m => m.variant);
    const shown = (): string[] =>
      [
        ...host.querySelectorAll(
          'tr[data-key] td[data-col="variant"] .jwb-bench-value'
        )
      ].map(v => v.textContent ?? '');
    expect(new Set(ms.map(m => m.stats?.median)).size).toBe(ms.length);
    for (const desc of [false, true]) {
      host
        .querySelector<HTMLButtonElement>('[data-jwb-control="sort:median"]')!
        .click();
      expect(
        host.querySelector('th[data-col="median"]')!.getAttribute('aria-sort')
      ).toBe(desc ? 'descending' : 'ascending');
      expect(host.querySelectorAll('th[aria-sort]')).toHaveLength(1);
      expect(shown()).toEqual(byMedian(desc));
    }
  });
});

// @vitest-environment jsdom
/** The bench view in a DOM (jsdom): live updates keep the user's place, and only their own. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { rowWarnings, type Measurement } from '../src/bench/model';
import { MAX_OPEN_CARDS, benchView } from '../src/bench/view';
import type { Payload } from '../src/common/payload';
import type { RenderContext } from '../src/common/featureView';

const read = (name: string): Payload =>
  JSON.parse(
    readFileSync(join(__dirname, 'fixtures', `${name}.json`), 'utf8')
  ) as Payload;

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
  const noisy = (): Payload => {
    const p = read('bench-two') as unknown as {
      measurements: {
        sampling_compiles?: number | null;
        stats: { warnings: string[] } | null;
      }[];
    };
    p.measurements[0].sampling_compiles = 4;
    p.measurements[0].stats!.warnings = [
      'noisy: the IQR is 31% of the median; other work on this machine may have interfered'
    ];
    return p as unknown as Payload;
  };

  it("shows each row's histogram and run order, and the warnings in words, without a click", async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const payload = noisy();
    await benchView().render(host, payload, ctx());
    const ms = (
      payload as unknown as {
        measurements: { variant: string; samples: (number | null)[] }[];
      }
    ).measurements;
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
    const expected = (
      payload as unknown as { measurements: Measurement[] }
    ).measurements.flatMap(m =>
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

    const sweep = document.body.appendChild(document.createElement('div'));
    const payload = read('bench-sweep') as unknown as {
      measurements: unknown[];
    };
    await benchView().render(sweep, payload as unknown as Payload, ctx());
    const toggles = sweep.querySelectorAll('.jwb-bench-toggle');
    expect(toggles).toHaveLength(payload.measurements.length);
    const open = payload.measurements.length <= MAX_OPEN_CARDS;
    for (const t of toggles) {
      expect(t.getAttribute('aria-expanded')).toBe(String(open));
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
    host
      .querySelector<HTMLButtonElement>('[data-jwb-control="sort:median"]')!
      .click();
    expect(
      host.querySelector('th[data-col="median"]')!.getAttribute('aria-sort')
    ).toBe('ascending');
    expect(host.querySelectorAll('th[aria-sort]')).toHaveLength(1);
  });
});

// @vitest-environment jsdom
/**
 * The bench view while a benchmark runs: display updates carry `progress` (fixture
 * bench-progress.json: a real partial payload, `Progress.snapshot()` of a two-variant run after
 * 5 of 12 rounds, through `bench_bundle`), then the finished result without it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { headline, progressState, type BenchPayload } from '../src/bench/model';
import { benchView } from '../src/bench/view';
import type { Payload } from '../src/common/payload';
import type { RenderContext } from '../src/common/featureView';

const read = (name: string): BenchPayload =>
  JSON.parse(
    readFileSync(join(__dirname, 'fixtures', `${name}.json`), 'utf8')
  ) as BenchPayload;
const asPayload = (p: BenchPayload): Payload => p as unknown as Payload;
const ctx = (): RenderContext => ({
  mimeType: 'x',
  bundle: {},
  cells: {},
  outputId: 'o',
  interactive: () => undefined
});

/** The progress fixture `k` rounds further on: more samples, a larger fraction. */
function later(p: BenchPayload, extra: number): BenchPayload {
  const q = JSON.parse(JSON.stringify(p)) as BenchPayload;
  for (const m of q.measurements) {
    const last = m.samples[m.samples.length - 1] as number;
    for (let i = 0; i < extra; i++) {
      m.samples.push(last * (1 + 0.01 * i));
    }
  }
  const pr = q.progress!;
  pr.fraction = Math.min(1, pr.fraction + extra / 12);
  for (const k of Object.keys(pr.samples)) {
    pr.samples[k] += extra;
  }
  pr.message = `${5 + extra} runs`;
  return q;
}

afterEach(() => {
  document.body.textContent = '';
});

describe('bench progress state (pure)', () => {
  it('reads the partial payload: phase, percent, counts', () => {
    const s = progressState(read('bench-progress'))!;
    expect(s.state).toBe('running');
    expect(s.phase).toBe('sampling');
    expect(s.percent).toBeCloseTo(41.67, 1);
    expect(s.text).toMatch(/^sampling · 5 runs · 42% · \d/);
    expect(s.counts).toBe('jit 5 · plus 5');
    expect(headline(read('bench-progress'))).toContain('10 samples so far');
  });

  it('is null for a finished result and "stopped" for a run an exception ended', () => {
    expect(progressState(read('bench-two'))).toBeNull();
    const p = read('bench-progress');
    p.progress = { ...p.progress!, done: true, message: 'interrupted' };
    const s = progressState(p)!;
    expect(s.state).toBe('stopped');
    expect(s.percent).toBe(100);
    expect(s.text).toMatch(/^stopped before the end: interrupted/);
    expect(headline(p)).not.toContain('so far');
  });

  it('clamps a fraction outside 0..1 and names sweep points', () => {
    const p = read('bench-progress');
    p.progress = { ...p.progress!, fraction: 1.7, point: 1, points: 3 };
    const s = progressState(p)!;
    expect(s.percent).toBe(100);
    expect(s.text).toContain('point 2 of 3');
  });
});

describe('bench view: progress updates then the final table', () => {
  it('shows a bar and phase, plots that grow, then the table alone', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const view = benchView();
    const partial = read('bench-progress');
    await view.render(host, asPayload(partial), ctx());
    expect(host.dataset.progress).toBe('running');
    const strip = host.querySelector<HTMLElement>('.jwb-bench-progress')!;
    expect(strip.dataset.phase).toBe('sampling');
    expect(
      host.querySelector<HTMLElement>('.jwb-bench-progress-bar')!.style.width
    ).toBe('41.7%');
    expect(
      host.querySelector('[role="progressbar"]')!.getAttribute('aria-valuenow')
    ).toBe('42');
    expect(host.querySelector('.jwb-bench-progress-text')!.textContent).toMatch(
      /^sampling · 5 runs/
    );
    expect(host.dataset.samples).toBe('10');
    const bars = (): number =>
      host.querySelectorAll('.jwb-bench-plot .jwb-bench-bar').length;
    const before = bars();
    expect(before).toBeGreaterThan(0);

    await view.render(host, asPayload(later(partial, 6)), ctx());
    expect(host.querySelectorAll('.jwb-bench-progress')).toHaveLength(1); // swapped, not stacked
    expect(
      host.querySelector<HTMLElement>('.jwb-bench-progress-bar')!.style.width
    ).toBe('91.7%');
    expect(host.dataset.samples).toBe('22');
    expect(bars()).toBeGreaterThanOrEqual(before);

    const final = read('bench-progress');
    delete final.progress;
    await view.render(host, asPayload(final), ctx());
    expect(host.querySelector('.jwb-bench-progress')).toBeNull();
    expect(host.dataset.progress).toBeUndefined();
    expect(host.querySelectorAll('tr[data-key]')).toHaveLength(2);
  });

  it('keeps a folded card folded across progress updates', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const view = benchView();
    const partial = read('bench-progress');
    await view.render(host, asPayload(partial), ctx());
    const open = (): number =>
      host.querySelectorAll('.jwb-bench-card-body').length;
    const rows = host.querySelectorAll('tr[data-key]').length;
    expect(open()).toBe(rows); // a short table: every card open without a click
    host.querySelector<HTMLElement>('.jwb-bench-toggle')!.click();
    expect(open()).toBe(rows - 1);
    await view.render(host, asPayload(later(partial, 3)), ctx());
    expect(open()).toBe(rows - 1);
    expect(
      host.querySelector('.jwb-bench-toggle')!.getAttribute('aria-expanded')
    ).toBe('false');
  });

  it('a stopped run keeps its table and says why, without a moving bar', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const p = read('bench-progress');
    p.progress = { ...p.progress!, done: true, message: 'RuntimeError: boom' };
    await benchView().render(host, asPayload(p), ctx());
    expect(host.dataset.progress).toBe('stopped');
    expect(
      host.querySelector<HTMLElement>('.jwb-bench-progress')!.dataset.state
    ).toBe('stopped');
    expect(
      host.querySelector('.jwb-bench-progress-text')!.textContent
    ).toContain('RuntimeError: boom');
    expect(host.querySelectorAll('tr[data-key]')).toHaveLength(2);
  });
});

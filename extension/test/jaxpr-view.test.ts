// @vitest-environment jsdom
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Blob as NodeBlob } from 'node:buffer';
import { describe, expect, it } from 'vitest';

import type { Payload } from '../src/common/payload';
import type { RenderContext } from '../src/common/featureView';
import { jaxprCompareView, jaxprView } from '../src/jaxpr/view';
import { HUB } from '../src/sourcelines/hub';
import { syntheticPayload } from './jaxpr-synthetic';

/** a hang guard for the largest inputs, not a speed bound (busy CI machines are slow):
 * their wall times are in bench/algorithms.bench.ts */
const HANG_GUARD_MS = 60_000;

function context(
  id: string,
  bundle: Record<string, unknown> = {}
): RenderContext & { ready: number } {
  const ctx = {
    mimeType: 'application/vnd.jax-workbench.jaxpr+json',
    bundle,
    cells: {},
    outputId: id,
    ready: 0,
    interactive: () => {
      ctx.ready++;
    }
  };
  return ctx;
}

const rows = (host: HTMLElement): HTMLElement[] => [
  ...host.querySelectorAll<HTMLElement>('.jwb-jaxpr-row')
];

describe('jaxpr view (DOM)', () => {
  it(
    'draws only the visible rows of 12,000 equations and links them to the hub',
    { timeout: HANG_GUARD_MS },
    () => {
      const host = document.createElement('div');
      document.body.appendChild(host);
      const p = syntheticPayload(12000, 24, 3);
      const view = jaxprView();
      const ctx = context('out-12k');
      view.render(host, p as unknown as Payload, ctx);
      expect(ctx.ready).toBe(1);
      // the work that would blow up is drawing all 12,000 rows: only those in view are
      // (the wall time is in bench/algorithms.bench.ts)
      const drawn = rows(host);
      expect(drawn.length).toBeGreaterThan(10);
      expect(drawn.length).toBeLessThan(120);
      expect(host.querySelector('.jwb-jaxpr-header')!.textContent).toContain(
        '(120 × f32[128,128], f32[16,128])'
      );
      // the cell's lines were coloured for the editor under '#3'
      expect(HUB.colorsOf('#3').size).toBeGreaterThan(5);

      // a selection from the editor lights every equation of that line, and counts them
      HUB.select({ cell: '#3', lines: [30], origin: 'editor', reveal: true });
      const root = host.querySelector('.jwb-jaxpr')!;
      expect(root.getAttribute('data-highlighted')).toBe('24'); // one pjit per layer
      expect(
        host.querySelectorAll('.jwb-jaxpr-row.jwb-linked').length
      ).toBeGreaterThan(0);
      HUB.select({ cell: '#4', lines: [30], origin: 'editor', reveal: false });
      expect(root.getAttribute('data-highlighted')).toBe('0');

      // clicking an equation's source selects its line, reveal: true
      const src = host.querySelector<HTMLElement>(
        '.jwb-jaxpr-row[data-eqn] .jwb-jaxpr-src'
      )!;
      src.click();
      expect(HUB.selection).toMatchObject({
        cell: '#3',
        origin: 'jaxpr',
        reveal: true
      });
      expect(src.textContent).toMatch(/^cell \[3\] line \d+$/);

      // search finds folded equations too, counts them, and steps through
      const input = host.querySelector<HTMLInputElement>(
        'input.jwb-jaxpr-search'
      )!;
      input.value = 'tanh';
      input.dispatchEvent(new Event('input'));
      const count = host.querySelector('.jwb-jaxpr-search-count')!;
      expect(count.textContent).toBe(
        `1 of ${p.stats.histogram.tanh.toLocaleString('en-US')}`
      );
      host.querySelector<HTMLElement>('.jwb-jaxpr-next')!.click();
      expect(count.textContent).toMatch(/^2 of /);
      expect(
        host.querySelector('.jwb-jaxpr-row.jwb-jaxpr-current')
      ).not.toBeNull();
      const measures = performance.getEntriesByName('jwb:jaxpr:search');
      expect(measures.length).toBeGreaterThan(0);

      // clicking a variable marks its definition and uses
      const v = host.querySelector<HTMLElement>(
        '.jwb-jaxpr-row[data-eqn] .jwb-jaxpr-v:not(.jwb-jaxpr-d)'
      )!;
      v.click();
      expect(
        host.querySelectorAll('.jwb-jaxpr-row.jwb-jaxpr-varrow').length
      ).toBeGreaterThanOrEqual(2);
      expect(
        host.querySelector(
          `.jwb-jaxpr-d.jwb-jaxpr-vhl[data-v="${v.dataset.v}"]`
        )
      ).not.toBeNull();

      view.dispose!();
      expect(HUB.colorsOf('#3').size).toBe(0);
      host.remove();
    }
  );

  it('says the text under a too-big program is its first lines when text/plain is cut', () => {
    const host = document.createElement('div');
    document.body.appendChild(host);
    const p = syntheticPayload(120, 2, 3) as unknown as Record<string, unknown>;
    const kept = ['{ lambda ; a:f32[4]. let', '    b:f32[4] = sin a'];
    p.truncated = true;
    p.avals = [];
    p.jaxpr = null;
    p.text_size = {
      lines: 250_003,
      bytes: 9_000_000,
      shown_lines: kept.length,
      shown_bytes: kept.join('\n').length
    };
    const plain = `${kept.join('\n')}\n[… 250,001 more lines left out: the full text is .jaxpr_text of the returned object (e.g. _.jaxpr_text or Out[n].jaxpr_text)]`;
    const view = jaxprView();
    view.render(
      host,
      p as unknown as Payload,
      context('out-big', { 'text/plain': plain })
    );
    const note = host.querySelector('.jwb-jaxpr-note')?.textContent ?? '';
    expect(note).not.toContain('has them all');
    expect(note).toContain(`first ${kept.length} of 250,003 lines`);
    expect(note).toContain('.jaxpr_text of');
    expect(host.querySelector('.jwb-jaxpr-text')?.textContent).toBe(plain);
    view.dispose?.();
  });

  it('folds and unfolds a nested jaxpr by clicking its header row', () => {
    const p = JSON.parse(
      readFileSync(join(__dirname, 'fixtures/jaxpr-control-flow.json'), 'utf8')
    );
    const host = document.createElement('div');
    const view = jaxprView();
    view.render(host, p, context('out-cf'));
    const before = rows(host).length;
    const header = rows(host).find(r =>
      r.classList.contains('jwb-jaxpr-foldable')
    )!;
    expect(header.textContent).toContain('{ lambda');
    header.click();
    const folded = rows(host);
    expect(folded.length).toBeLessThan(before);
    const again = folded.find(r => r.dataset.row === header.dataset.row)!;
    expect(again.textContent).toMatch(/… \d+ equations? …/);
    again.click();
    expect(rows(host).length).toBe(before);
    view.dispose!();
  });

  it('lines up compare stages with added and removed rows marked, stages packed or not', async () => {
    const p = JSON.parse(
      readFileSync(join(__dirname, 'fixtures/jaxpr-compare.json'), 'utf8')
    );
    // the last stage packed, as the kernel sends big stages
    const last = p.stages[p.stages.length - 1];
    const data = gzipSync(
      Buffer.from(JSON.stringify({ avals: last.avals, jaxpr: last.jaxpr }))
    ).toString('base64');
    delete last.avals;
    delete last.jaxpr;
    last.packed = { encoding: 'gzip+base64', fields: ['avals', 'jaxpr'], data };
    const host = document.createElement('div');
    const view = jaxprCompareView();
    const ctx = context('out-cmp');
    const jsdomBlob = globalThis.Blob; // jsdom's Blob has no stream(); unpack needs one
    globalThis.Blob = NodeBlob as unknown as typeof Blob;
    try {
      await view.render(host, p, ctx);
    } finally {
      globalThis.Blob = jsdomBlob;
    }
    expect(ctx.ready).toBe(1);
    expect(host.querySelectorAll('.jwb-jaxpr-compare-head').length).toBe(
      p.stages.length
    );
    const crows = host.querySelectorAll('.jwb-jaxpr-crow');
    expect(crows.length).toBeGreaterThan(10);
    expect(crows[0].querySelectorAll('.jwb-jaxpr-ccell').length).toBe(
      p.stages.length
    );
    expect(
      host.querySelectorAll('.jwb-jaxpr-ccell.jwb-jaxpr-added').length
    ).toBeGreaterThan(0);
    const all = crows.length;
    const box = host.querySelector<HTMLInputElement>(
      '.jwb-jaxpr-onlydiff input'
    )!;
    box.checked = true;
    box.dispatchEvent(new Event('change'));
    expect(host.querySelectorAll('.jwb-jaxpr-crow').length).toBeLessThan(all);
    view.dispose!();
  });
});

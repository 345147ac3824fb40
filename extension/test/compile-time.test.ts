// @vitest-environment jsdom
/**
 * The compile-time view on a real CPU payload (`%%jaxprof --compile` of a cell whose Python
 * loop calls a layer 6 times, written by test/fixtures/make_fixtures.py with its
 * `text/plain`): the model says what the Python view says, and the DOM draws it as text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import type { Payload } from '../src/common/payload';
import type { RenderContext } from '../src/common/featureView';
import { VIEWS } from '../src/common/viewRegistry';
import {
  coverageLine,
  headline,
  lineCells,
  phaseCells,
  restLine,
  type CompileTimePayload
} from '../src/compile/model';

interface Fixture {
  payload: CompileTimePayload;
  text: string;
}

/** The fixture is the output's bundle: the payload and the Python view's `text/plain`. */
const fixture = (): Fixture => {
  const bundle = JSON.parse(
    readFileSync(join(__dirname, 'fixtures', 'compile-time-cpu.json'), 'utf8')
  ) as Record<string, unknown>;
  return {
    payload: bundle[
      'application/vnd.jax-workbench.compile-time+json'
    ] as CompileTimePayload,
    text: bundle['text/plain'] as string
  };
};

/** The Python text's rows, the table's two-space indent and column padding undone. */
const row = (cells: string[]): RegExp =>
  new RegExp(
    '^  ' +
      cells.map(c => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s{2,}') +
      '$',
    'm'
  );

let ready = 0;
const ctx = (p: CompileTimePayload): RenderContext => ({
  mimeType: 'x',
  bundle: {},
  cells: p.cells,
  outputId: 'o',
  interactive: () => {
    ready++;
  }
});

afterEach(() => {
  document.body.textContent = '';
});

describe('compile-time model', () => {
  it("says the headline and coverage in the Python view's words", () => {
    const { payload: p, text } = fixture();
    expect(p.kind).toBe('compile-time');
    const lines = text.split('\n');
    expect(lines).toContain(headline(p));
    expect(lines).toContain(coverageLine(p));
  });

  it("builds the tables' rows the Python view prints", () => {
    const { payload: p, text } = fixture();
    for (const r of p.xla.phases.slice(0, p.top)) {
      expect(text).toMatch(row(phaseCells(r)));
    }
    for (const r of p.size.lines.slice(0, p.top)) {
      expect(text).toMatch(row(lineCells(r, p.cells)));
    }
    // the loop's layer line is labelled by its cell
    expect(p.size.lines.map(r => lineCells(r, p.cells)[0])).toContain(
      `cell [${Object.values(p.cells)[0].number}] line 3 (layer)`
    );
    expect(restLine(3, 3, 'lines')).toBe('');
    expect(restLine(p.xla.phases_total, p.top, 'passes and phases')).toMatch(
      /^\.\.\. \d+ more passes and phases$/
    );
  });
});

describe('compile-time view', () => {
  it('draws the three tables cut at top, the advice and no markup from the source', () => {
    const { payload: p } = fixture();
    const host = document.createElement('div');
    document.body.appendChild(host);
    const before = ready;
    VIEWS['compile-time']().render(host, p as unknown as Payload, ctx(p));
    expect(ready).toBe(before + 1);
    const tables = host.querySelectorAll('table');
    expect(tables).toHaveLength(3);
    expect(tables[0].querySelectorAll('tbody tr')).toHaveLength(
      Math.min(p.top, p.xla.phases.length)
    );
    const advice = host.querySelectorAll('.jwb-compile-advice');
    expect(advice).toHaveLength(p.advice.length);
    expect(p.advice[0]).toContain('runs 6 times');
    expect(advice[0].textContent).toBe(`advice: ${p.advice[0]}`);
    expect(host.querySelector('img')).toBeNull();
    expect(host.textContent).toContain(headline(p));
    // each table cut at top says how many rows it left out, the workers' included
    const meta = [...host.querySelectorAll('.jwb-prof-meta')].map(
      e => e.textContent
    );
    const shownWorkers = Math.min(p.top, p.xla.workers.length);
    if (p.xla.workers_total > shownWorkers) {
      expect(meta).toContain(
        restLine(p.xla.workers_total, shownWorkers, 'events')
      );
    }
  });

  it("draws markup in the user's names as text", () => {
    const { payload } = fixture();
    const evil = '<img src=x onerror="alert(1)">';
    const p: CompileTimePayload = {
      ...payload,
      label: evil,
      xla: {
        ...payload.xla,
        phases: [{ ...payload.xla.phases[0], name: evil }]
      },
      advice: [evil],
      notes: [evil]
    };
    const host = document.createElement('div');
    document.body.appendChild(host);
    VIEWS['compile-time']().render(host, p as unknown as Payload, ctx(p));
    expect(host.querySelector('img')).toBeNull();
    expect(host.textContent).toContain(evil);
  });
});

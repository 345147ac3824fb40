// @vitest-environment jsdom
/** The bench view in a DOM (jsdom): live updates keep the user's place, and only their own. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { benchView } from '../src/bench/view';
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
  it('keeps focus on the row the user focused in this output', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const view = benchView();
    await view.render(host, read('bench-two'), ctx());
    const row = host.querySelectorAll<HTMLElement>('tr[data-key]')[1];
    row.focus();
    await view.render(host, read('bench-two'), ctx());
    const now = host.querySelectorAll<HTMLElement>('tr[data-key]')[1];
    expect(now).not.toBe(row);
    expect(document.activeElement).toBe(now);
  });

  it('an update of one bench output does not pull focus out of another one', async () => {
    const a = document.body.appendChild(document.createElement('div'));
    const b = document.body.appendChild(document.createElement('div'));
    const va = benchView();
    const vb = benchView();
    await va.render(a, read('bench-two'), ctx());
    await vb.render(b, read('bench-two'), ctx());
    const row = a.querySelectorAll<HTMLElement>('tr[data-key]')[0];
    row.focus();
    await vb.render(b, read('bench-two'), ctx()); // b updates live while the user works in a
    expect(document.activeElement).toBe(row);
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

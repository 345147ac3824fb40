// @vitest-environment jsdom
/**
 * The profile view on a real CPU payload (`%%jaxprof` in an IPython shell, written by
 * tests/data/make_profile_fixture.py): the model's pieces and the drawn DOM.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import type { Payload } from '../src/common/payload';
import type { RenderContext } from '../src/common/featureView';
import { VIEWS } from '../src/common/viewRegistry';
import {
  OTHER_FILL,
  attributedSeconds,
  coverageLine,
  gapMicroseconds,
  sourceLabel,
  timelineBars,
  timelineColors,
  type ProfilePayload
} from '../src/profile/model';
import { profileView } from '../src/profile/view';

const payload = (): ProfilePayload =>
  JSON.parse(
    readFileSync(join(__dirname, 'fixtures', 'profile-cpu.json'), 'utf8')
  ) as ProfilePayload;

let ready = 0;
const ctx = (): RenderContext => ({
  mimeType: 'x',
  bundle: {},
  cells: {},
  outputId: 'o',
  interactive: () => {
    ready++;
  }
});

afterEach(() => {
  document.body.textContent = '';
});

describe('profile model', () => {
  it('reads a real payload: per-line times add up to the per-instruction ones', () => {
    const p = payload();
    expect(p.kind).toBe('profile');
    const lines = p.lines.reduce((s, l) => s + l.seconds, 0);
    expect(lines).toBeCloseTo(attributedSeconds(p), 12);
    expect(p.coverage).toBeGreaterThan(0);
    expect(p.coverage).toBeLessThanOrEqual(1);
    expect(coverageLine(p)).toContain(`median over ${p.calls} calls`);
  });

  it('colours the heaviest instructions and leaves gaps for overhead', () => {
    const p = payload();
    const colors = timelineColors(p);
    expect([...colors.keys()]).toEqual(
      p.instructions.slice(0, colors.size).map(r => r.name)
    );
    const bars = timelineBars(p, 900);
    expect(bars).toHaveLength(p.timeline.events.length);
    bars.forEach((b, i) => {
      const e = p.timeline.events[i];
      expect(b.fill).toBe(colors.get(e.instruction ?? '') ?? OTHER_FILL);
      expect(b.x).toBeGreaterThanOrEqual(0);
      expect(b.x + b.w).toBeLessThanOrEqual(900 + 1);
    });
    const busy = p.timeline.events.reduce((s, e) => s + e.duration_us, 0);
    // events of one CPU step run one after another: the gap is the rest of the step
    expect(gapMicroseconds(p)).toBeCloseTo(
      Math.max(0, p.timeline.step_us - busy),
      6
    );
  });

  it('labels cell sources by prompt number', () => {
    const p = payload();
    const [file, info] = Object.entries(p.cells)[0];
    expect(sourceLabel({ file, line: 3, function: 'mlp' }, p.cells)).toBe(
      `cell [${info.number}] line 3`
    );
    expect(
      sourceLabel({ file: '/a/b/model.py', line: 7, function: 'f' }, p.cells)
    ).toBe('model.py:7');
  });
});

describe('profile view', () => {
  it('is the renderer registered for the profile kind', () => {
    expect(VIEWS.profile).toBe(profileView);
  });

  it('draws the listing, the top table and the timeline, source text as text', async () => {
    const p = payload();
    const host = document.body.appendChild(document.createElement('div'));
    const before = ready;
    await profileView().render(host, p as unknown as Payload, ctx());
    expect(ready).toBe(before + 1);
    expect(host.querySelector('img')).toBeNull(); // the markup in the cell's comment stays text
    const code = [...host.querySelectorAll('.jwb-prof-code')].map(
      c => c.textContent
    );
    expect(code.some(t => t?.includes('<img src=x onerror=alert(1)>'))).toBe(
      true
    );
    const timed = host.querySelectorAll('tr.jwb-prof-timed');
    expect(timed.length).toBe(
      p.listings.reduce(
        (n, l) => n + l.rows.filter(r => r[2] !== null).length,
        0
      )
    );
    const top = host.querySelectorAll('tr[data-instruction]');
    expect([...top].map(t => (t as HTMLElement).dataset.instruction)).toEqual(
      p.instructions.slice(0, p.top).map(r => r.name)
    );
    expect(host.querySelectorAll('.jwb-prof-svg rect')).toHaveLength(
      p.timeline.events.length
    );
    expect(host.textContent).toContain('unknown peak'); // CPU: not in the peak table
    expect(host.textContent).toContain(coverageLine(p));
  });
});

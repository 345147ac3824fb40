/**
 * `application/vnd.jax-workbench.profile+json` (`%%jaxprof`, `workbench.profile`): measured
 * device time.  Compact: the headline and coverage, the cell's (and the user's files') lines
 * annotated with time and share and a bar, the top-N instructions table, the median call's
 * timeline (bars in order; gaps are host/launch overhead), then the notes.  Every payload
 * string goes through `textContent` (source text is user code).
 */

import { add, el, headedTable, svg } from '../common/dom';
import { fmtBytes, fmtCount, fmtPercent, fmtSeconds } from '../bench/format';
import { drawnView } from '../common/featureView';
import {
  boundText,
  coverageLine,
  fileTitle,
  gapMicroseconds,
  headline,
  sourceLabel,
  timelineBars,
  timelineColors,
  type ProfilePayload
} from './model';

const TIMELINE_W = 900;
const TIMELINE_H = 26;
const TOP_HEAD = [
  'instruction',
  'what',
  'time',
  'share',
  'FLOPs',
  'bytes',
  'FLOP/s',
  'bytes/s',
  'FLOP/byte',
  'bound',
  'line'
];

function listings(p: ProfilePayload): HTMLElement {
  const box = el('div', 'jwb-prof-listings');
  for (const l of p.listings) {
    add(box, el('div', 'jwb-prof-file', fileTitle(l)));
    const [t, body] = headedTable('jwb-table jwb-prof-table', [
      'time',
      'share',
      '',
      'line',
      'source'
    ]);
    for (const [n, text, sec, share] of l.rows) {
      const tr = add(
        body,
        el('tr', sec === null ? 'jwb-prof-quiet' : 'jwb-prof-timed')
      );
      add(tr, el('td', 'jwb-prof-num', sec === null ? '' : fmtSeconds(sec)));
      add(
        tr,
        el('td', 'jwb-prof-num', share === null ? '' : fmtPercent(share))
      );
      const barCell = add(tr, el('td'));
      if (share !== null) {
        const bar = add(barCell, el('span', 'jwb-prof-bar'));
        bar.style.width = `${Math.max(1, Math.round(100 * share))}px`;
      }
      add(tr, el('td', 'jwb-prof-num', String(n)));
      add(add(tr, el('td')), el('code', 'jwb-prof-code', text));
    }
    add(box, t);
  }
  const lost = p.lines.find(l => !l.file);
  if (lost) {
    add(
      box,
      el(
        'div',
        'jwb-prof-meta',
        `${fmtSeconds(lost.seconds)} (${fmtPercent(lost.share)}) in instructions with no source line`
      )
    );
  }
  return box;
}

function topTable(p: ProfilePayload): HTMLElement {
  const box = el('div');
  const rows = p.instructions.slice(0, p.top);
  add(
    box,
    el(
      'div',
      'jwb-prof-title',
      `top ${rows.length} of ${p.instructions.length} instructions by measured time (~ = too short or noisy to resolve)`
    )
  );
  const [t, body] = headedTable('jwb-table jwb-prof-table', TOP_HEAD);
  const known = p.peak.name !== null;
  for (const r of rows) {
    const tr = add(body, el('tr'));
    tr.dataset.instruction = r.name;
    let src = r.sources.length
      ? sourceLabel(r.sources[0], p.cells)
      : '(no source line)';
    if (r.sources.length > 1) {
      src += ` +${r.sources.length - 1}`;
    }
    const cells = [
      (r.resolved ? '' : '~') + r.name,
      r.label,
      fmtSeconds(r.seconds),
      fmtPercent(r.share),
      r.flops === null ? 'n/a' : fmtCount(r.flops),
      r.bytes === null ? 'n/a' : fmtBytes(r.bytes),
      r.flops_per_s === null ? 'n/a' : fmtCount(r.flops_per_s, 'FLOP/s'),
      r.bytes_per_s === null ? 'n/a' : fmtCount(r.bytes_per_s, 'B/s'),
      r.intensity === null ? 'n/a' : r.intensity.toPrecision(3),
      boundText(r, known),
      src
    ];
    cells.forEach((c, i) =>
      add(tr, el('td', i >= 2 && i <= 8 ? 'jwb-prof-num' : undefined, c))
    );
  }
  add(box, t);
  return box;
}

function timeline(p: ProfilePayload): HTMLElement | null {
  const bars = timelineBars(p, TIMELINE_W);
  if (!bars.length) {
    return null;
  }
  const box = el('div', 'jwb-prof-timeline');
  add(
    box,
    el(
      'div',
      'jwb-prof-title',
      `timeline of the median call (${fmtSeconds(p.timeline.step_us * 1e-6)}; gaps = host and launch ` +
        `overhead, ${fmtSeconds(gapMicroseconds(p) * 1e-6)} here)`
    )
  );
  const g = svg('svg', {
    width: TIMELINE_W + 2,
    height: TIMELINE_H,
    viewBox: `-1 0 ${TIMELINE_W + 2} ${TIMELINE_H}`,
    role: 'img',
    class: 'jwb-prof-svg'
  });
  for (const b of bars) {
    const r = add(
      g,
      svg('rect', {
        x: b.x.toFixed(2),
        y: 2,
        width: b.w.toFixed(2),
        height: TIMELINE_H - 4
      })
    );
    r.style.fill = b.fill;
    add(r, svg('title')).textContent = b.tip;
  }
  add(box, g);
  const legend = add(box, el('div', 'jwb-prof-meta'));
  for (const [name, color] of timelineColors(p)) {
    const item = add(legend, el('span', 'jwb-prof-key'));
    add(item, el('span', 'jwb-prof-swatch')).style.background = color;
    add(item, document.createTextNode(` ${name} `));
  }
  add(legend, document.createTextNode('· grey: other instructions'));
  return box;
}

export const profileView = drawnView<ProfilePayload>('jwb-prof', (root, p) => {
  add(root, el('div', 'jwb-prof-head', headline(p)));
  add(root, el('div', 'jwb-prof-coverage', coverageLine(p)));
  if (p.peak.name === null) {
    add(
      root,
      el(
        'div',
        'jwb-prof-meta',
        `peak: unknown peak for ${p.device_kind} (not in the table): compute- or memory-bound cannot be told`
      )
    );
  }
  add(root, listings(p));
  add(root, topTable(p));
  const prims = p.primitives
    .slice(0, 8)
    .map(x => `${x.name || '(none)'} ${fmtPercent(x.share)}`)
    .join(', ');
  add(root, el('div', 'jwb-prof-meta', `by jaxpr primitive: ${prims}`));
  const tl = timeline(p);
  if (tl) {
    add(root, tl);
  }
  for (const n of p.notes) {
    add(root, el('div', 'jwb-prof-note', n));
  }
});

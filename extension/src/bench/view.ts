/**
 * `application/vnd.jax-workbench.bench+json`: the timing table (median, CI, IQR, range,
 * runs, first call split into trace/lower/XLA, ratio to the reference variant) with a
 * distribution sparkline per row on one shared scale, then, in plain view, every warning in
 * words and one card per row with its histogram, run-order plot and details (warm-up,
 * first call, roofline, errors), then fits and the environment.
 *
 * Nothing a user needs hides behind an unlabelled click: a row with warnings says how many
 * next to its ⚠ and the warnings' text is listed under the table; the cards are open when
 * the table has at most `MAX_OPEN_CARDS` rows (a sweep's many points fold theirs), and each
 * folds with its own labelled button.  The controls are buttons (sorting, folding) and the
 * environment's `<details>`: reachable with Tab, operable with Enter or Space (the
 * renderer keeps those keys inside the output, away from the notebook's shortcuts).
 *
 * Narrow outputs (the side panel open leaves a notebook ~500 px): the view is a CSS size
 * container and below 900 px the table reflows into one block per row (each value with its
 * column's name), the plots scale down to the width, long texts wrap: nothing is cut.
 *
 * Progress: while the kernel measures, `%jaxbench` / `workbench.bench()` send display updates of
 * one output, so `render` is called again with the growing payload: it carries `progress`
 * (phase, fraction, samples so far), shown as a bar and a phase line above the table whose
 * plots grow; the last update is the finished result (no `progress`).  The new content is
 * built off-document and swapped in one step, keeping the sort, the folded cards and the
 * focused control, so nothing flickers or jumps.
 */

import { add, el, svg } from '../common/dom';
import { fmtPercent, fmtSeconds } from './format';
import type { FeatureViewFactory } from '../common/featureView';
import {
  benchRows,
  finiteSamples,
  fitText,
  headline,
  histogram,
  progressState,
  rooflineLines,
  rowCells,
  rowWarnings,
  runOrder,
  scaleAt,
  sharedScale,
  sortRows,
  type BenchPayload,
  type ProgressState,
  type Row,
  type Scale
} from './model';

const COLUMNS: [string, string][] = [
  ['variant', 'variant'],
  ['median', 'median'],
  ['plot', 'distribution'],
  ['ratio', 'ratio'],
  ['ci', '95% CI'],
  ['iqr', 'IQR'],
  ['range', 'min – max'],
  ['n', 'runs × calls'],
  ['first', 'first call']
];
const SORTABLE = new Set(['variant', 'median', 'iqr', 'n', 'first', 'ratio']);
const PLOT_W = 120;
const PLOT_H = 26;
/** rows whose cards (histogram, run order, details) are open without a click */
export const MAX_OPEN_CARDS = 4;
const HIST_W = 360;
const HIST_H = 120;
const RUN_W = 360;
const RUN_H = 110;

interface State {
  sort: string | null;
  desc: boolean;
  /** cards the user folded or unfolded (row key -> open); the rest follow the default */
  open: Map<string, boolean>;
}

function isOpen(state: State, key: string, rowCount: number): boolean {
  return state.open.get(key) ?? rowCount <= MAX_OPEN_CARDS;
}

/** A row's name in words: the variant and its sweep point. */
function rowLabel(r: Row): string {
  return r.m.variant + (r.params ? ` (${r.params})` : '');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function distPlot(r: Row, scale: Scale | null): SVGSVGElement {
  const box = svg('svg', {
    width: PLOT_W,
    height: PLOT_H,
    class: 'jwb-bench-plot',
    role: 'img'
  });
  const s = r.m.stats;
  const samples = finiteSamples(r.m);
  if (!scale || !s || !samples.length) {
    return box;
  }
  const bins = histogram(samples, scale, 50);
  const top = Math.max(...bins);
  const bw = PLOT_W / bins.length;
  bins.forEach((c, i) => {
    if (!c) {
      return;
    }
    const h = Math.max(1, (c / top) * (PLOT_H - 8));
    add(
      box,
      svg('rect', {
        x: i * bw,
        y: PLOT_H - 4 - h,
        width: Math.max(1, bw - 0.5),
        height: h,
        class: 'jwb-bench-bar'
      })
    );
  });
  const x = (v: number): number =>
    Math.max(0, Math.min(PLOT_W, scaleAt(scale, v) * PLOT_W));
  add(
    box,
    svg('rect', {
      x: x(s.q1),
      y: PLOT_H - 4,
      width: Math.max(1, x(s.q3) - x(s.q1)),
      height: 4,
      class: 'jwb-bench-iqr'
    })
  );
  add(
    box,
    svg('line', {
      x1: x(s.median),
      x2: x(s.median),
      y1: 1,
      y2: PLOT_H,
      class: 'jwb-bench-median'
    })
  );
  const t = svg('title');
  t.textContent = `median ${fmtSeconds(s.median)} · IQR ${fmtSeconds(s.q1)} – ${fmtSeconds(s.q3)}`;
  box.appendChild(t);
  return box;
}

/** Text in a plot, in the theme's text colour (fill and color alike: contrast checks read it). */
function plotText(
  parent: SVGElement,
  x: number,
  y: number,
  text: string,
  anchor: 'start' | 'end' = 'start'
): void {
  const t = add(
    parent,
    svg('text', { x, y, class: 'jwb-bench-axis', 'text-anchor': anchor })
  );
  t.textContent = text;
}

/**
 * The histogram of a row's per-call times on the rows' shared scale (the table's
 * sparklines use the same one), its median dashed; each bar says its count
 * (`data-count`, and a tooltip).
 */
export function histogramPlot(r: Row, scale: Scale | null): SVGSVGElement {
  const samples = finiteSamples(r.m);
  const s = r.m.stats;
  const box = svg('svg', {
    viewBox: `0 0 ${HIST_W} ${HIST_H}`,
    class: 'jwb-bench-hist',
    role: 'img',
    'aria-label':
      `histogram of ${plural(samples.length, 'sample')} of ${rowLabel(r)}` +
      (s ? `, median ${fmtSeconds(s.median)}` : '')
  });
  if (!scale || !samples.length) {
    return box;
  }
  const padL = 4;
  const padB = 16;
  const bins = histogram(
    samples,
    scale,
    Math.max(5, Math.min(30, Math.floor(Math.sqrt(samples.length)) + 1))
  );
  const top = Math.max(...bins) || 1;
  const bw = (HIST_W - 2 * padL) / bins.length;
  bins.forEach((c, i) => {
    if (!c) {
      return;
    }
    const h = ((HIST_H - padB - 6) * c) / top;
    const bar = add(
      box,
      svg('rect', {
        x: (padL + i * bw).toFixed(1),
        y: (HIST_H - padB - h).toFixed(1),
        width: Math.max(1, bw - 1).toFixed(1),
        height: h.toFixed(1),
        class: 'jwb-bench-bar',
        'data-count': c
      })
    );
    add(bar, svg('title')).textContent = plural(c, 'run');
  });
  const x = (v: number): number =>
    padL + Math.max(0, Math.min(1, scaleAt(scale, v))) * (HIST_W - 2 * padL);
  if (s) {
    add(
      box,
      svg('line', {
        x1: x(s.median).toFixed(1),
        x2: x(s.median).toFixed(1),
        y1: 2,
        y2: HIST_H - padB,
        class: 'jwb-bench-median jwb-bench-dashed'
      })
    );
  }
  plotText(box, padL, HIST_H - 3, fmtSeconds(scale.lo));
  plotText(
    box,
    HIST_W - padL,
    HIST_H - 3,
    fmtSeconds(scale.hi) + (scale.log ? ' (log)' : ''),
    'end'
  );
  return box;
}

/** Seconds per call in the order the runs were taken (drift, warm-up tails); outliers
 * hollow; above 300 runs, the medians of consecutive buckets. */
export function runOrderPlot(r: Row): SVGSVGElement {
  const samples = finiteSamples(r.m);
  const pts = runOrder(samples, 300);
  const box = svg('svg', {
    viewBox: `0 0 ${RUN_W} ${RUN_H}`,
    class: 'jwb-bench-runorder',
    role: 'img',
    'aria-label': `run order of ${plural(samples.length, 'sample')} of ${rowLabel(r)}`
  });
  if (!pts.length) {
    return box;
  }
  const padL = 58;
  const padR = 6;
  const padT = 6;
  const padB = 16;
  const w = RUN_W - padL - padR;
  const h = RUN_H - padT - padB;
  const lo = Math.min(...pts);
  const hi = Math.max(...pts);
  const y = (v: number): number =>
    hi === lo ? padT + h / 2 : padT + h - ((v - lo) / (hi - lo)) * h;
  const xAt = (i: number): number =>
    padL + (pts.length <= 1 ? w / 2 : (i / (pts.length - 1)) * w);
  if (r.m.stats) {
    const med = y(r.m.stats.median).toFixed(1);
    add(
      box,
      svg('line', {
        x1: padL,
        x2: RUN_W - padR,
        y1: med,
        y2: med,
        class: 'jwb-bench-median jwb-bench-dashed'
      })
    );
  }
  if (pts.length > 1) {
    add(
      box,
      svg('path', {
        d: pts
          .map(
            (v, i) => `${i ? 'L' : 'M'}${xAt(i).toFixed(1)},${y(v).toFixed(1)}`
          )
          .join(''),
        class: 'jwb-bench-line'
      })
    );
  }
  const outliers =
    pts.length === samples.length
      ? new Set(r.m.stats?.outliers ?? [])
      : new Set<number>();
  pts.forEach((v, i) => {
    const dot = add(
      box,
      svg('circle', {
        cx: xAt(i).toFixed(1),
        cy: y(v).toFixed(1),
        r: 2.5,
        class: `jwb-bench-pt${outliers.has(i) ? ' jwb-bench-outlier' : ''}`
      })
    );
    add(dot, svg('title')).textContent =
      `run ${i + 1}: ${fmtSeconds(v)}${outliers.has(i) ? ' (outlier)' : ''}`;
  });
  plotText(box, padL - 4, padT + 8, fmtSeconds(hi), 'end');
  plotText(box, padL - 4, padT + h, fmtSeconds(lo), 'end');
  plotText(box, padL, RUN_H - 3, 'run 1');
  plotText(box, RUN_W - padR, RUN_H - 3, `run ${pts.length}`, 'end');
  return box;
}

function figure(plot: SVGSVGElement, caption: string): HTMLElement {
  const f = el('figure', 'jwb-bench-figure');
  f.appendChild(plot);
  add(f, el('figcaption', undefined, caption));
  return f;
}

/** A row's card: its name and fold button, then (open) its plots and details. */
function card(
  r: Row,
  scale: Scale | null,
  open: boolean,
  toggle: () => void
): HTMLElement {
  const box = el('section', 'jwb-bench-card');
  box.dataset.key = r.key;
  const label = rowLabel(r);
  const head = add(box, el('div', 'jwb-bench-card-head'));
  add(head, el('span', 'jwb-bench-card-title', label));
  const button = add(
    head,
    el(
      'button',
      'jwb-bench-toggle',
      open ? 'hide plots and details' : 'show plots and details'
    )
  );
  button.type = 'button';
  button.setAttribute('aria-expanded', String(open));
  button.setAttribute(
    'aria-label',
    `${open ? 'Hide' : 'Show'} the histogram, run order and details of ${label}`
  );
  button.dataset.jwbControl = `toggle:${r.key}`;
  button.addEventListener('click', toggle);
  if (!open) {
    return box;
  }
  const body = add(box, el('div', 'jwb-bench-card-body'));
  const m = r.m;
  if (m.error) {
    const e = add(
      body,
      el(
        'div',
        'jwb-bench-error',
        `${m.error.kind} in ${m.error.phase}: ${m.error.summary}`
      )
    );
    if (m.error.where) {
      add(
        e,
        el(
          'div',
          undefined,
          `at ${m.error.where.file}:${m.error.where.line} (${m.error.where.function}): ${m.error.where.text}`
        )
      );
    }
    for (const h of m.error.hints) {
      add(body, el('div', 'jwb-bench-hint', `hint: ${h}`));
    }
  }
  const n = finiteSamples(m).length;
  if (n) {
    const plots = add(body, el('div', 'jwb-bench-figures'));
    plots.appendChild(
      figure(
        histogramPlot(r, scale),
        `per-call time: histogram of ${plural(n, 'run')}, median dashed`
      )
    );
    plots.appendChild(
      figure(
        runOrderPlot(r),
        n > 300
          ? 'run order: seconds per call, medians of buckets (hollow: outliers)'
          : 'run order: seconds per call (hollow: outliers)'
      )
    );
  }
  const s = m.stats;
  const facts: string[] = [];
  if (m.output) {
    facts.push(`output ${m.output}`);
  }
  if (s) {
    facts.push(
      `mean ${fmtSeconds(s.mean)} ± ${fmtSeconds(s.std)} (std)`,
      `${s.outliers.length} outliers`,
      `CI coverage ${fmtPercent(s.ci_coverage)}`
    );
  }
  facts.push(`${m.warmup_calls} warm-up calls`);
  add(body, el('div', 'jwb-bench-fact', facts.join(' · ')));
  const fc = m.first_call;
  if (fc) {
    add(
      body,
      el(
        'div',
        'jwb-bench-fact',
        `first call: ${fmtSeconds(fc.total_s)} · ${fc.compiles === null ? 'compiles not measured' : `${fc.compiles} compile${fc.compiles === 1 ? '' : 's'}`}` +
          (fc.functions.length ? ` (${fc.functions.join(', ')})` : '') +
          ` · split from ${fc.source}`
      )
    );
  }
  for (const l of rooflineLines(m.roofline)) {
    add(body, el('div', 'jwb-bench-roof', l));
  }
  return box;
}

function progressStrip(ps: ProgressState): HTMLElement {
  const box = el('div', 'jwb-bench-progress');
  box.dataset.state = ps.state;
  box.dataset.phase = ps.phase;
  const track = add(box, el('div', 'jwb-bench-progress-track'));
  track.setAttribute('role', 'progressbar');
  track.setAttribute('aria-valuemin', '0');
  track.setAttribute('aria-valuemax', '100');
  track.setAttribute('aria-valuenow', ps.percent.toFixed(0));
  const bar = add(track, el('div', 'jwb-bench-progress-bar'));
  bar.style.width = `${ps.percent.toFixed(1)}%`;
  add(box, el('span', 'jwb-bench-progress-text', ps.text));
  if (ps.counts) {
    add(box, el('span', 'jwb-bench-progress-counts', `samples: ${ps.counts}`));
  }
  return box;
}

function build(
  p: BenchPayload,
  state: State,
  rerender: () => void
): HTMLElement {
  const root = el('div', 'jwb-bench');
  add(root, el('div', 'jwb-bench-head', headline(p)));
  const ps = progressState(p);
  if (ps) {
    root.appendChild(progressStrip(ps));
  }
  const rows = sortRows(benchRows(p), state.sort, state.desc);
  const scale = sharedScale(rows);
  const table = add(
    add(root, el('div', 'jwb-bench-scroll')),
    el('table', 'jwb-table jwb-bench-table')
  );
  const hr = add(add(table, el('thead')), el('tr'));
  const columns = COLUMNS.filter(
    ([id]) => id !== 'ratio' || p.variants.length > 1
  );
  for (const [id, label] of columns) {
    const th = add(hr, el('th'));
    th.dataset.col = id;
    if (!SORTABLE.has(id)) {
      th.textContent = label;
    } else {
      const sorted = state.sort === id;
      if (sorted) {
        th.setAttribute('aria-sort', state.desc ? 'descending' : 'ascending');
      }
      const b = add(
        th,
        el(
          'button',
          `jwb-bench-sort${sorted ? (state.desc ? ' jwb-sort-desc' : ' jwb-sort-asc') : ''}`,
          label
        )
      );
      b.type = 'button';
      b.dataset.jwbControl = `sort:${id}`;
      b.setAttribute(
        'aria-label',
        `sort by ${label}${sorted ? (state.desc ? ', sorted descending' : ', sorted ascending') : ''}`
      );
      b.addEventListener('click', () => {
        if (state.sort === id) {
          state.desc = !state.desc;
        } else {
          state.sort = id;
          state.desc = false;
        }
        rerender();
      });
    }
  }
  if (scale) {
    const th = hr.querySelector('th[data-col="plot"]') as HTMLElement;
    add(
      th,
      el(
        'span',
        'jwb-bench-scale',
        ` ${fmtSeconds(scale.lo)} … ${fmtSeconds(scale.hi)}${scale.log ? ' (log)' : ''}`
      )
    );
  }
  const body = add(table, el('tbody'));
  const warned: Array<[Row, string[]]> = [];
  for (const r of rows) {
    const cells = rowCells(r);
    const tr = add(body, el('tr', 'jwb-bench-row'));
    tr.dataset.key = r.key;
    if (r.m.error) {
      tr.classList.add('jwb-bench-failed');
    }
    const warnings = rowWarnings(r.m);
    if (warnings.length) {
      tr.classList.add('jwb-bench-warned');
      warned.push([r, warnings]);
    }
    for (const [id, label] of columns) {
      const td = add(tr, el('td'));
      td.dataset.col = id;
      td.dataset.label = label; // the narrow layout names each value
      if (id === 'plot') {
        td.appendChild(distPlot(r, scale));
      } else {
        add(td, el('span', 'jwb-bench-value', cells[id] ?? ''));
      }
      if (id === 'variant' && warnings.length) {
        add(
          td,
          el(
            'span',
            'jwb-bench-warnmark',
            `⚠ ${plural(warnings.length, 'warning')} below`
          )
        );
      }
    }
  }
  if (warned.length) {
    const list = add(root, el('div', 'jwb-bench-warnings'));
    list.setAttribute('role', 'note');
    for (const [r, warnings] of warned) {
      for (const w of warnings) {
        const line = add(list, el('div', 'jwb-bench-warn'));
        add(line, el('span', 'jwb-bench-warn-icon', '⚠ '));
        add(line, el('span', 'jwb-bench-warn-of', `${rowLabel(r)}: `));
        add(line, document.createTextNode(w));
      }
    }
  }
  const cards = add(root, el('div', 'jwb-bench-cards'));
  for (const r of rows) {
    const open = isOpen(state, r.key, rows.length);
    cards.appendChild(
      card(r, scale, open, () => {
        state.open.set(r.key, !open);
        rerender();
      })
    );
  }
  // what the calls ran on, always in sight: copies of the user's NNX objects (or, allowed,
  // the objects themselves); one line per distinct note (sweep points repeat it)
  for (const note of new Set(p.measurements.map(m => m.state_note ?? ''))) {
    if (note) {
      add(root, el('div', 'jwb-bench-state', note));
    }
  }
  if (p.fits.length) {
    const f = add(root, el('div', 'jwb-bench-fits'));
    for (const fit of p.fits) {
      add(f, el('div', undefined, fitText(fit, p.sweep_param)));
    }
  }
  const env = add(root, el('details', 'jwb-bench-env'));
  const summary = add(
    env,
    el('summary', undefined, 'environment and settings')
  );
  summary.dataset.jwbControl = 'env';
  const envText = Object.entries(p.env)
    .filter(
      ([, v]) =>
        v !== '' &&
        v !== null &&
        !(typeof v === 'object' && v && !Object.keys(v).length)
    )
    .map(
      ([k, v]) =>
        `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`
    );
  envText.push(
    `budget ${fmtSeconds(p.config.budget_s)} · precision ${p.config.precision} · min runs ${p.config.min_runs}` +
      (p.config.number ? ` · number ${p.config.number}` : '') +
      (p.config.repeat ? ` · repeat ${p.config.repeat}` : '')
  );
  add(env, el('pre', undefined, envText.join('\n')));
  return root;
}

export const benchView: FeatureViewFactory = () => {
  const state: State = { sort: null, desc: false, open: new Map() };
  let envOpen = false;
  return {
    render(host, raw, ctx) {
      const p = raw as unknown as BenchPayload;
      const draw = (): void => {
        const old = host.querySelector<HTMLElement>(':scope > .jwb-bench');
        const oldEnv = old?.querySelector<HTMLDetailsElement>('.jwb-bench-env');
        if (oldEnv) {
          envOpen = oldEnv.open;
        }
        // only this output's focused control (another bench output may hold the focus)
        const active = document.activeElement as HTMLElement | null;
        const focused =
          active && host.contains(active)
            ? (active
                .closest('[data-jwb-control]')
                ?.getAttribute('data-jwb-control') ?? null)
            : null;
        const next = build(p, state, draw);
        (next.querySelector('.jwb-bench-env') as HTMLDetailsElement).open =
          envOpen;
        if (old) {
          old.replaceWith(next);
        } else {
          host.textContent = '';
          host.appendChild(next);
        }
        if (focused) {
          for (const c of next.querySelectorAll<HTMLElement>(
            '[data-jwb-control]'
          )) {
            if (c.dataset.jwbControl === focused) {
              c.focus({ preventScroll: true });
            }
          }
        }
        host.dataset.rows = String(p.measurements.length);
        const ps = progressState(p);
        if (ps) {
          host.dataset.progress = ps.state;
        } else {
          delete host.dataset.progress;
        }
        host.dataset.samples = String(
          p.measurements.reduce((a, m) => a + finiteSamples(m).length, 0)
        );
      };
      draw();
      ctx.interactive();
    }
  };
};

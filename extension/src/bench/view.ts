/**
 * `application/vnd.jax-workbench.bench+json`: the timing table (median, CI, IQR, range,
 * runs, first call split into trace/lower/XLA, ratio to the reference variant), a
 * distribution plot per row on one shared scale, detail rows (warnings, roofline, run order,
 * errors), fits and the environment.
 *
 * Progress: while the kernel measures, `%jaxbench` / `workbench.bench()` send display updates of
 * one output, so `render` is called again with the growing payload: it carries `progress`
 * (phase, fraction, samples so far), shown as a bar and a phase line above the table whose
 * distribution plots grow; the last update is the finished result (no `progress`): the
 * table alone.  The new content is built off-document and swapped in one step, keeping the
 * sort, the open detail rows and the selected row, so nothing flickers or jumps.
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
const PLOT_W = 200;
const PLOT_H = 26;

interface State {
  sort: string | null;
  desc: boolean;
  open: Set<string>;
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

function runOrderPlot(r: Row): SVGSVGElement | null {
  const pts = runOrder(finiteSamples(r.m), 300);
  if (pts.length < 2) {
    return null;
  }
  const W = 420;
  const H = 70;
  const lo = Math.min(...pts);
  const hi = Math.max(...pts);
  const g = svg('svg', {
    width: W,
    height: H,
    class: 'jwb-bench-run',
    role: 'img'
  });
  const y = (v: number): number =>
    hi === lo ? H / 2 : H - 4 - ((v - lo) / (hi - lo)) * (H - 8);
  const d = pts
    .map(
      (v, i) =>
        `${i ? 'L' : 'M'}${((i / (pts.length - 1)) * (W - 4) + 2).toFixed(1)},${y(v).toFixed(1)}`
    )
    .join('');
  if (r.m.stats) {
    const med = y(r.m.stats.median);
    add(
      g,
      svg('line', { x1: 0, x2: W, y1: med, y2: med, class: 'jwb-bench-median' })
    );
  }
  add(g, svg('path', { d, class: 'jwb-bench-line' }));
  return g;
}

function detail(r: Row, ncol: number): HTMLTableRowElement {
  const tr = el('tr', 'jwb-bench-detail');
  const td = add(tr, el('td'));
  td.colSpan = ncol;
  const m = r.m;
  if (m.error) {
    const e = add(
      td,
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
      add(td, el('div', 'jwb-bench-hint', `hint: ${h}`));
    }
  }
  for (const w of rowWarnings(m)) {
    add(td, el('div', 'jwb-bench-warn', `⚠ ${w}`));
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
  add(td, el('div', undefined, facts.join(' · ')));
  const fc = m.first_call;
  if (fc) {
    add(
      td,
      el(
        'div',
        undefined,
        `first call: ${fmtSeconds(fc.total_s)} · ${fc.compiles === null ? 'compiles not measured' : `${fc.compiles} compile${fc.compiles === 1 ? '' : 's'}`}` +
          (fc.functions.length ? ` (${fc.functions.join(', ')})` : '') +
          ` · split from ${fc.source}`
      )
    );
  }
  for (const l of rooflineLines(m.roofline)) {
    add(td, el('div', 'jwb-bench-roof', l));
  }
  const plot = runOrderPlot(r);
  if (plot) {
    add(
      td,
      el(
        'div',
        'jwb-bench-caption',
        'run order (seconds per call; medians of buckets above 300 runs)'
      )
    );
    td.appendChild(plot);
  }
  return tr;
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
    el('table', 'jwb-bench-table')
  );
  const hr = add(add(table, el('thead')), el('tr'));
  const columns = COLUMNS.filter(
    ([id]) => id !== 'ratio' || p.variants.length > 1
  );
  for (const [id, label] of columns) {
    const th = add(hr, el('th', undefined, label));
    th.dataset.col = id;
    if (SORTABLE.has(id)) {
      th.classList.add('jwb-sortable');
      th.tabIndex = 0;
      if (state.sort === id) {
        th.classList.add(state.desc ? 'jwb-sort-desc' : 'jwb-sort-asc');
      }
      const click = (): void => {
        if (state.sort === id) {
          state.desc = !state.desc;
        } else {
          state.sort = id;
          state.desc = false;
        }
        rerender();
      };
      th.addEventListener('click', click);
      th.addEventListener('keydown', ev => {
        if (ev.key === 'Enter') {
          click();
        }
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
  for (const r of rows) {
    const cells = rowCells(r);
    const tr = add(body, el('tr', 'jwb-bench-row'));
    tr.dataset.key = r.key;
    tr.tabIndex = 0;
    if (r.m.error) {
      tr.classList.add('jwb-bench-failed');
    }
    if (rowWarnings(r.m).length) {
      tr.classList.add('jwb-bench-warned');
    }
    for (const [id] of columns) {
      const td = add(tr, el('td'));
      td.dataset.col = id;
      if (id === 'plot') {
        td.appendChild(distPlot(r, scale));
      } else {
        td.textContent = cells[id] ?? '';
      }
    }
    const open = state.open.has(r.key);
    tr.classList.toggle('jwb-open', open);
    tr.setAttribute('aria-expanded', String(open));
    const toggle = (): void => {
      if (state.open.has(r.key)) {
        state.open.delete(r.key);
      } else {
        state.open.add(r.key);
      }
      rerender();
    };
    tr.addEventListener('click', toggle);
    tr.addEventListener('keydown', ev => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        toggle();
      }
    });
    if (open) {
      body.appendChild(detail(r, columns.length));
    }
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
  add(env, el('summary', undefined, 'environment and settings'));
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
  const state: State = { sort: null, desc: false, open: new Set() };
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
        // only this output's focused row (another bench output may hold the focus)
        const active = document.activeElement as HTMLElement | null;
        const focused =
          active && host.contains(active)
            ? (active.closest('[data-key]')?.getAttribute('data-key') ?? null)
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
          for (const tr of next.querySelectorAll<HTMLElement>('tr[data-key]')) {
            if (tr.dataset.key === focused) {
              tr.focus({ preventScroll: true });
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

/**
 * The memory section: live array bytes over time as an SVG step chart, one point per sample
 * (samples are taken at cell start/end, so x is "sample", not wall time: an idle hour would
 * otherwise squash every step into a line), with a marker on each cell end that changed
 * memory and a label on the biggest steps, so a user sees which cell grew memory.  Where JAX
 * reports `memory_stats()` (GPU, TPU) the allocator's bytes in use are drawn too, and each
 * device's figures are listed as text.
 */

import { add, el, svg } from '../common/dom';
import type { MemorySample } from './protocol';
import { cellLabel, formatBytes } from './store';

export const CHART_W = 320;
export const CHART_H = 120;
const PAD = { l: 4, r: 4, t: 14, b: 6 };
/** labelled steps at most (the biggest) */
const MAX_LABELS = 4;

export interface MemoryStep {
  index: number;
  sample: MemorySample;
  /** change of live bytes since the sample before */
  delta: number;
}

/** Cell ends that changed live bytes, in sample order. */
export function memorySteps(samples: readonly MemorySample[]): MemoryStep[] {
  const steps: MemoryStep[] = [];
  for (let i = 1; i < samples.length; i++) {
    const s = samples[i];
    const delta = s.live_bytes - samples[i - 1].live_bytes;
    if (delta !== 0 && (s.when === 'end' || s.when === 'request')) {
      steps.push({ index: i, sample: s, delta });
    }
  }
  return steps;
}

function inUse(s: MemorySample): number | null {
  let total: number | null = null;
  for (const d of s.devices) {
    if (d.bytes_in_use !== null) {
      total = (total ?? 0) + d.bytes_in_use;
    }
  }
  return total;
}

/** The chart's points: x in [PAD.l, W - PAD.r], y top-down, for a series of values. */
export function chartPoints(
  values: readonly number[],
  max: number
): Array<[number, number]> {
  const n = values.length;
  const w = CHART_W - PAD.l - PAD.r;
  const h = CHART_H - PAD.t - PAD.b;
  const top = max > 0 ? max : 1;
  return values.map((v, i) => [
    PAD.l + (n <= 1 ? w / 2 : (i * w) / (n - 1)),
    PAD.t + h - (Math.max(0, v) / top) * h
  ]);
}

function stepPath(points: Array<[number, number]>): string {
  if (!points.length) {
    return '';
  }
  let d = `M${points[0][0].toFixed(1)},${points[0][1].toFixed(1)}`;
  for (let i = 1; i < points.length; i++) {
    d += `H${points[i][0].toFixed(1)}V${points[i][1].toFixed(1)}`;
  }
  return d;
}

function signed(n: number): string {
  return `${n > 0 ? '+' : ''}${formatBytes(n)}`;
}

/** The SVG chart of `samples` (oldest first). */
export function memoryChart(samples: readonly MemorySample[]): SVGSVGElement {
  const root = svg('svg', {
    class: 'jwb-panel-chart',
    viewBox: `0 0 ${CHART_W} ${CHART_H}`,
    role: 'img',
    'aria-label': samples.length
      ? `live array bytes at ${samples.length} sample${samples.length === 1 ? '' : 's'} since the workbench loaded, oldest left`
      : 'no memory sample yet',
    'data-jwb-samples': samples.length
  });
  add(
    root,
    svg('rect', {
      class: 'jwb-panel-chart-bg',
      x: 0,
      y: 0,
      width: CHART_W,
      height: CHART_H
    })
  );
  if (!samples.length) {
    return root;
  }
  const live = samples.map(s => s.live_bytes);
  const used = samples.map(inUse);
  const hasUsed = used.some(v => v !== null);
  const top = Math.max(...live, ...(hasUsed ? used.map(v => v ?? 0) : []));
  const max = Math.max(1, top);
  if (hasUsed) {
    add(
      root,
      svg('path', {
        class: 'jwb-panel-chart-inuse',
        d: stepPath(
          chartPoints(
            used.map(v => v ?? 0),
            max
          )
        )
      })
    );
  }
  const pts = chartPoints(live, max);
  add(root, svg('path', { class: 'jwb-panel-chart-live', d: stepPath(pts) }));
  const steps = memorySteps(samples);
  const labelled = new Set(
    [...steps]
      .sort((a, b) => Math.abs(b.delta) - Math.abs(a.delta))
      .slice(0, MAX_LABELS)
      .map(s => s.index)
  );
  for (const step of steps) {
    const [x, y] = pts[step.index];
    const mark = add(
      root,
      svg('circle', {
        class: `jwb-panel-chart-mark ${step.delta > 0 ? 'jwb-up' : 'jwb-down'}`,
        cx: x.toFixed(1),
        cy: y.toFixed(1),
        r: 2.5,
        'data-jwb-cell-id': step.sample.cell_id ?? ''
      })
    );
    const tip = add(mark, svg('title'));
    tip.textContent = `${cellLabel(step.sample.cell)}: ${signed(step.delta)} (live ${formatBytes(step.sample.live_bytes)})`;
    if (labelled.has(step.index)) {
      const text = add(
        root,
        svg('text', {
          class: 'jwb-panel-chart-label',
          x: Math.min(CHART_W - 24, Math.max(60, x - 8)).toFixed(1),
          y: Math.max(10, y - 4).toFixed(1)
        })
      );
      text.textContent = cellLabel(step.sample.cell);
    }
  }
  // the scale's top at the top left (the newest steps, drawn right, are what users look at)
  const maxText = add(
    root,
    svg('text', { class: 'jwb-panel-chart-axis', x: PAD.l + 2, y: 10 })
  );
  maxText.textContent = formatBytes(top);
  return root;
}

/** Current figures as text, and a table per device where the allocator reports. */
export function memoryFigures(
  samples: readonly MemorySample[],
  dropped = 0
): HTMLElement {
  const box = el('div', 'jwb-panel-memfig');
  const last = samples.length ? samples[samples.length - 1] : null;
  if (!last) {
    box.textContent =
      'No memory sample yet (one is taken when the workbench loads and as each cell ends).';
    return box;
  }
  const steps = memorySteps(samples);
  const lastStep = steps.length ? steps[steps.length - 1] : null;
  const line = add(box, el('div', 'jwb-panel-memnow'));
  add(
    line,
    el('strong', 'jwb-panel-live-bytes', formatBytes(last.live_bytes))
  ).setAttribute('data-jwb-bytes', String(last.live_bytes));
  add(
    line,
    document.createTextNode(
      ` live in ${last.live_arrays.toLocaleString('en-US')} array${last.live_arrays === 1 ? '' : 's'}`
    )
  );
  if (lastStep) {
    add(
      box,
      el(
        'div',
        'jwb-panel-memstep',
        `last change: ${cellLabel(lastStep.sample.cell)} ${signed(lastStep.delta)}`
      )
    );
  }
  const peak = Math.max(...samples.map(s => s.live_bytes));
  add(
    box,
    el(
      'div',
      'jwb-panel-memstep',
      `highest live: ${formatBytes(peak)} over ${samples.length} samples` +
        (dropped > 0
          ? ` (${dropped.toLocaleString('en-US')} older sample${dropped === 1 ? '' : 's'} no longer kept)`
          : '')
    )
  ).setAttribute('data-jwb', 'memory-extent');
  const hint = add(box, el('div', 'jwb-panel-memstep', 'who holds it: run '));
  hint.setAttribute('data-jwb', 'memory-jaxmem-hint');
  add(hint, el('code', undefined, '%jaxmem'));
  add(
    hint,
    document.createTextNode(
      ' in a cell (arrays by owner; --free-history, --free-traceback)'
    )
  );
  const reported = last.devices.filter(
    d => d.bytes_in_use !== null || d.bytes_limit !== null
  );
  if (reported.length) {
    const table = add(box, el('table', 'jwb-panel-memtable'));
    const head = add(add(table, el('thead')), el('tr'));
    for (const h of ['device', 'live', 'in use', 'peak', 'limit']) {
      add(head, el('th', undefined, h));
    }
    const body = add(table, el('tbody'));
    for (const d of reported) {
      const tr = add(body, el('tr'));
      add(tr, el('td', undefined, String(d.id)));
      add(tr, el('td', undefined, formatBytes(d.live_bytes)));
      add(tr, el('td', undefined, formatBytes(d.bytes_in_use)));
      add(tr, el('td', undefined, formatBytes(d.peak_bytes_in_use)));
      add(tr, el('td', undefined, formatBytes(d.bytes_limit)));
    }
  }
  return box;
}

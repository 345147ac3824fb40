/**
 * The memory outputs: `memory` (%jaxmem: owners largest first, each unfolding to its
 * arrays) and `memory-program` (%%jaxmem CALL: the peak beside memory_analysis, a chart of
 * the bytes live over the program order, the buffers live at the peak, donation and
 * checkpoint advice).
 */

import { add, el, headedTable, svg } from '../common/dom';
import { drawnView } from '../common/featureView';
import {
  liveHeadline,
  liveNotes,
  ownerRows,
  programFigures,
  timelinePoints,
  type MemoryPayload,
  type MemoryProgramPayload
} from './model';
import { fmtBytes } from '../bench/format';

export const memoryView = drawnView<MemoryPayload>('jwb-mem', (root, p) => {
  add(root, el('div', 'jwb-mem-title', liveHeadline(p)));
  for (const n of liveNotes(p)) {
    add(root, el('div', 'jwb-mem-note', n));
  }
  const table = add(root, el('table', 'jwb-mem-owners'));
  for (const r of ownerRows(p)) {
    const tr = add(table, el('tr'));
    add(tr, el('td', 'jwb-mem-bytes', r.bytes));
    const td = add(tr, el('td'));
    const det = add(td, el('details'));
    const sum = add(det, el('summary'));
    add(sum, el('code', undefined, r.label));
    add(sum, el('span', 'jwb-mem-kind', ` ${r.kind} · ${r.what}`));
    const inner = add(det, el('table', 'jwb-mem-arrays'));
    for (const a of r.arrays) {
      const row = add(inner, el('tr'));
      add(row, el('td', 'jwb-mem-bytes', a.bytes));
      add(add(row, el('td')), el('code', undefined, a.path));
      add(
        row,
        el(
          'td',
          undefined,
          a.also ? `${a.shape} (also held by ${a.also} more)` : a.shape
        )
      );
    }
    if (r.more > 0) {
      add(add(inner, el('tr')), el('td', undefined, `... ${r.more} more`));
    }
    add(tr, el('td', 'jwb-mem-devices', r.devices));
  }
  if (p.total_groups > p.groups.length) {
    add(
      root,
      el(
        'div',
        'jwb-mem-note',
        `... ${p.total_groups - p.groups.length} more owners`
      )
    );
  }
});

export const memoryProgramView = drawnView<MemoryProgramPayload>(
  'jwb-mem',
  (root, p) => {
    add(
      root,
      el(
        'div',
        'jwb-mem-title',
        `${p.label}: memory at its peak (${p.backend})`
      )
    );
    const figs = add(root, el('table', 'jwb-mem-figures'));
    for (const [name, value, means] of programFigures(p)) {
      const tr = add(figs, el('tr'));
      add(tr, el('th', undefined, name));
      add(tr, el('td', 'jwb-mem-bytes', value));
      add(tr, el('td', 'jwb-mem-note', means));
    }
    const width = 480;
    const height = 80;
    const { points, peakX } = timelinePoints(p, width, height);
    const chart = add(
      root,
      svg('svg', { width: `${width}`, height: `${height + 4}` })
    );
    chart.setAttribute('role', 'img');
    chart.setAttribute('aria-label', 'bytes live over the program order');
    add(
      chart,
      svg('polyline', { fill: 'none', stroke: 'currentColor', points })
    );
    add(
      chart,
      svg('line', {
        x1: peakX.toFixed(1),
        x2: peakX.toFixed(1),
        y1: '0',
        y2: `${height}`,
        stroke: 'var(--jp-warn-color1, #bc4c00)'
      })
    );
    const [bt, buffers] = headedTable('jwb-mem-buffers', [
      'bytes',
      'shape',
      'instruction',
      'line'
    ]);
    add(root, bt);
    for (const b of p.buffers) {
      const tr = add(buffers, el('tr'));
      add(tr, el('td', 'jwb-mem-bytes', fmtBytes(b.bytes)));
      add(tr, el('td', undefined, b.shape));
      add(
        add(tr, el('td')),
        el('code', undefined, `${b.name} (${b.opcode || '?'}, ${b.role})`)
      );
      add(tr, el('td', undefined, b.where));
    }
    add(root, el('div', 'jwb-mem-advice', p.donation_text));
    if (p.saved.length) {
      add(
        root,
        el(
          'div',
          'jwb-mem-advice',
          'checkpoint: the forward pass keeps these for the backward pass at the peak; ' +
            'jax.checkpoint around the code of a line recomputes them instead:'
        )
      );
      const ul = add(root, el('ul'));
      for (const s of p.saved.slice(0, 5)) {
        add(
          ul,
          el(
            'li',
            undefined,
            `${fmtBytes(s.bytes)}: ${s.count} buffers from ${s.where || s.op_name}`
          )
        );
      }
    }
  }
);

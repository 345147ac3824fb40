import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import {
  devicesText,
  liveHeadline,
  liveNotes,
  ownerRows,
  programFigures,
  timelinePoints,
  type MemoryPayload,
  type MemoryProgramPayload
} from '../src/memory/model';

const read = <T>(name: string): T =>
  JSON.parse(
    readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')
  ) as T;
/** the text/plain the kernel sent beside each payload (workbench/views/memory.py) */
const texts = read<Record<string, string>>('memory-texts');

describe('%jaxmem (a real shell holding arrays by each kind of owner)', () => {
  const p = read<MemoryPayload>('memory-live');

  it("says the headline in the kernel's words", () => {
    expect(liveHeadline(p)).toBe(texts['memory-live'].split('\n')[0]);
  });

  it('lists owners largest first with their kind and arrays', () => {
    const rows = ownerRows(p);
    expect(rows.length).toBe(p.groups.length);
    const bytes = p.groups.map(g => g.nbytes);
    expect(bytes).toEqual([...bytes].sort((a, b) => b - a));
    const params = rows.find(r => r.label === 'params');
    expect(params?.kind).toBe('attributes');
    expect(params?.arrays.map(a => a.path)).toContain("params[2]['w1']");
    const tb = rows.find(r => r.kind === 'last exception');
    expect(tb?.arrays.map(a => a.path)).toEqual(['local']);
    for (const r of rows) {
      expect(texts['memory-live']).toContain(
        `${r.bytes}  ${r.label}  [${r.kind}]`
      );
    }
  });

  it('says why the CPU has no allocator figures, and what the free actions would free', () => {
    const notes = liveNotes(p);
    expect(notes.some(n => n.includes('no allocator statistics'))).toBe(true);
    expect(notes.at(-1)).toBe(texts['memory-live'].trim().split('\n').at(-1));
  });

  it('names the devices as the Python view does', () => {
    expect(devicesText({ 'cpu:0': 4 })).toBe('on cpu:0');
    expect(devicesText({ 'cpu:0': 2048, 'cpu:1': 2048 })).toBe(
      'on 2 devices, 2.0 KiB each'
    );
    expect(devicesText({})).toBe('');
  });
});

describe('%%jaxmem (a gradient compiled in a cell)', () => {
  const p = read<MemoryProgramPayload>('memory-program');

  it('gives both figures with what each counts', () => {
    const [peak, analysis] = programFigures(p);
    expect(peak[0]).toBe('live-range peak');
    expect(peak[2]).toBe(p.peak_means);
    expect(texts['memory-program']).toContain(peak[2]);
    expect(analysis[1].startsWith('')).toBe(true);
    expect(texts['memory-program']).toContain(
      `memory_analysis   ${analysis[1]}`
    );
  });

  it('adds the comparable figure only when output buffers are empty at the peak', () => {
    expect(p.idle_output_bytes).toBe(0);
    expect(programFigures(p).length).toBe(2);
    const analysis = p.analysis_bytes ?? 0;
    const idle = {
      ...p,
      idle_output_bytes: 1024,
      comparable_bytes: analysis - 1024
    };
    const rows = programFigures(idle);
    expect(rows.length).toBe(3);
    expect(rows[2][0]).toBe('comparable');
    expect(rows[2][1]).toContain('of output buffers empty at the peak');
    expect(rows[2][2]).toBe(p.comparable_means);
  });

  it('draws the chart inside its box with the peak marked', () => {
    const { points, peakX } = timelinePoints(p, 480, 80);
    const xy = points.split(' ').map(s => s.split(',').map(Number));
    expect(xy.length).toBe(p.timeline.length);
    for (const [x, y] of xy) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThanOrEqual(480);
      expect(y).toBeGreaterThanOrEqual(0);
      expect(y).toBeLessThanOrEqual(80);
    }
    expect(Math.min(...xy.map(([, y]) => y))).toBe(0);
    expect(peakX).toBeCloseTo((p.peak_step / p.steps) * 480);
  });

  it("names the cell's lines and the donation the kernel advised", () => {
    expect(p.buffers.some(b => b.where.startsWith('cell ['))).toBe(true);
    expect(p.donation?.argnums).toEqual([0]);
    expect(texts['memory-program']).toContain(p.donation_text);
  });
});

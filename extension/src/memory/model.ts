/**
 * The memory payloads' types (generated from workbench/schemas/memory*.schema.json) and
 * their pure view models: `%jaxmem`'s owner rows in the Python view's words, and
 * `%%jaxmem`'s figures, buffers, chart points and advice.
 */

import { fmtBytes } from '../bench/format';
import type {
  DeviceBytes,
  MemoryPayload,
  OwnerGroup
} from '../generated/memory';
import type { MemoryProgramPayload } from '../generated/memory-program';

export type {
  DeviceBytes,
  HeldArray,
  MemoryPayload,
  OwnerGroup
} from '../generated/memory';
export type {
  MemoryProgramPayload,
  PeakBuffer
} from '../generated/memory-program';

/** What each owner kind is called (the Python view's words). */
export const KIND_WORDS: Record<OwnerGroup['kind'], string> = {
  name: 'name',
  attribute: 'attributes',
  closure: 'closure',
  history: 'output history',
  traceback: 'last exception',
  module: 'module global',
  frame: 'running frame',
  unreachable: 'unreachable',
  unplaced: 'not placed'
};

/** `on cpu:0`, `on 8 devices, 16.0 KiB each`, as the Python view. */
export function devicesText(devices: DeviceBytes): string {
  const entries = Object.entries(devices);
  if (!entries.length) {
    return '';
  }
  if (entries.length === 1) {
    return `on ${entries[0][0]}`;
  }
  const sizes = new Set(entries.map(([, b]) => b));
  const each = sizes.size === 1 ? `, ${fmtBytes(entries[0][1])} each` : '';
  return `on ${entries.length} devices${each}`;
}

function perDevice(devices: DeviceBytes): string {
  const items = Object.entries(devices).sort((a, b) => b[1] - a[1]);
  const shown = items
    .slice(0, 4)
    .map(([d, b]) => `${d} ${fmtBytes(b)}`)
    .join(', ');
  return items.length > 4
    ? `${shown}, ... ${items.length - 4} more devices`
    : shown;
}

/** The first line of the text: arrays, bytes, bytes per device. */
export function liveHeadline(p: MemoryPayload): string {
  const dev = Object.keys(p.devices).length ? ` (${perDevice(p.devices)})` : '';
  return (
    `Device memory held by live arrays: ${p.total_arrays} arrays, ` +
    `${fmtBytes(p.total_bytes)}${dev}`
  );
}

export interface OwnerRow {
  bytes: string;
  label: string;
  kind: string;
  what: string;
  devices: string;
  arrays: { bytes: string; path: string; shape: string; also: number }[];
  more: number;
}

/** One row per owner, largest first (the payload's order). */
export function ownerRows(p: MemoryPayload): OwnerRow[] {
  return p.groups.map(g => ({
    bytes: fmtBytes(g.nbytes),
    label: g.label,
    kind: KIND_WORDS[g.kind],
    what:
      g.count === 1 && g.arrays.length
        ? g.arrays[0].shape
        : `${g.count} arrays`,
    devices: devicesText(g.devices),
    arrays: g.arrays.map(a => ({
      bytes: fmtBytes(a.nbytes),
      path: a.path,
      shape: a.shape,
      also: a.also
    })),
    more: g.count - g.arrays.length
  }));
}

/** The lines under the headline: freed bytes, allocator figures or why there are none. */
export function liveNotes(p: MemoryPayload): string[] {
  const out: string[] = [];
  for (const f of p.freed) {
    const what =
      f.action === 'history' ? 'the output history' : 'the last exception';
    out.push(
      f.note ||
        `freed ${fmtBytes(f.nbytes)} (${f.arrays} arrays) held by ${what}`
    );
  }
  for (const a of p.allocator) {
    out.push(
      `allocator ${a.device}: in use ${fmtBytes(a.bytes_in_use)}, peak ` +
        `${fmtBytes(a.peak_bytes_in_use)}, limit ${fmtBytes(a.bytes_limit)}`
    );
  }
  if (p.allocator_note) {
    out.push(p.allocator_note);
  }
  if (p.walk.cut_short) {
    out.push('the walk was cut short at its time budget');
  }
  out.push(...p.notes);
  const hints: string[] = [];
  if (p.history_only_bytes) {
    hints.push(
      `%jaxmem --free-history frees ${fmtBytes(p.history_only_bytes)}`
    );
  }
  if (p.traceback_only_bytes) {
    hints.push(
      `%jaxmem --free-traceback frees ${fmtBytes(p.traceback_only_bytes)}`
    );
  }
  if (hints.length) {
    out.push(hints.join('; '));
  }
  return out;
}

/** `%%jaxmem`: the two figures, each with what it counts. */
export function programFigures(
  p: MemoryProgramPayload
): [string, string, string][] {
  const m = p.memory;
  const analysis =
    p.analysis_bytes === null
      ? 'not reported by this backend'
      : `${fmtBytes(p.analysis_bytes)} = arguments ${fmtBytes(m.argument_bytes)} + ` +
        `outputs ${fmtBytes(m.output_bytes)} + temp ${fmtBytes(m.temp_bytes)} - alias ` +
        `${fmtBytes(m.alias_bytes ?? 0)}`;
  const rows: [string, string, string][] = [
    [
      'live-range peak',
      `${fmtBytes(p.peak_bytes)} at step ${p.peak_step} of ${p.steps}`,
      p.peak_means
    ],
    ['memory_analysis', analysis, p.analysis_means]
  ];
  // output buffers allocated for the whole call but empty at the peak: memory_analysis
  // counts them, the live-range peak does not (payloads from before this field have none)
  if (
    p.comparable_bytes !== null &&
    p.comparable_bytes !== undefined &&
    p.idle_output_bytes &&
    p.analysis_bytes !== null
  ) {
    rows.push([
      'comparable',
      `${fmtBytes(p.comparable_bytes)} = ${fmtBytes(p.analysis_bytes)} - ` +
        `${fmtBytes(p.idle_output_bytes)} of output buffers empty at the peak`,
      p.comparable_means
    ]);
  }
  return rows;
}

/** The chart's polyline points in a `width` x `height` box, and the peak's x. */
export function timelinePoints(
  p: MemoryProgramPayload,
  width: number,
  height: number
): { points: string; peakX: number } {
  const last = Math.max(p.steps, 1);
  const top = Math.max(1, ...p.timeline.map(([, b]) => b));
  const points = p.timeline
    .map(
      ([s, b]) =>
        `${((s / last) * width).toFixed(1)},${(height - (b / top) * height).toFixed(1)}`
    )
    .join(' ');
  return { points, peakX: (p.peak_step / last) * width };
}

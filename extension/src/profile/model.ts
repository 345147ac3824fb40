/**
 * `application/vnd.jax-workbench.profile+json` as data: the types of the payload
 * (`workbench/schemas/profile.schema.json`) and the pure pieces the view draws from,
 * kept apart from the DOM so they are unit-tested on their own.
 */

import { fmtPercent, fmtSeconds } from '../bench/format';
import type { CellMap } from '../common/cells';
import type { SourceLine } from '../generated/common';
import type {
  ProfileInstruction,
  ProfileListing,
  ProfilePayload
} from '../generated/profile';

export type {
  ListingRow,
  ProfileInstruction,
  ProfileLine,
  ProfileListing,
  ProfilePayload,
  TimelineEvent
} from '../generated/profile';

/** Distinct fills for the heaviest instructions (the Python view's palette); grey for the rest. */
export const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac'
];
export const OTHER_FILL = '#9aa4ad';

export function attributedSeconds(p: ProfilePayload): number {
  return p.instructions.reduce((s, r) => s + r.seconds, 0);
}

export function headline(p: ProfilePayload): string {
  return (
    `profile of ${p.label}: ${p.calls} calls on ${p.backend} (${p.device_kind}), median step ` +
    `${fmtSeconds(p.step_s)}, attributed ${fmtSeconds(attributedSeconds(p))} ` +
    '(sum of per-instruction medians)'
  );
}

export function coverageLine(p: ProfilePayload): string {
  return (
    `coverage: ${fmtPercent(p.coverage)} of the measured step time is attributed to HLO ` +
    `instructions (median over ${p.calls} calls; step = ${p.step_source})`
  );
}

/** `cell [3]` for a notebook cell, else the file's path. */
export function fileTitle(l: ProfileListing): string {
  if (l.in_cell) {
    return l.cell !== null ? `cell [${l.cell}]` : 'cell';
  }
  return l.file;
}

export function sourceLabel(s: SourceLine, cells: CellMap): string {
  const cell = cells[s.file];
  if (cell) {
    return cell.number !== null
      ? `cell [${cell.number}] line ${s.line}`
      : `cell line ${s.line}`;
  }
  const base = s.file.split(/[\\/]/).pop() ?? s.file;
  return `${base}:${s.line}`;
}

/** Colour of each of the `PALETTE.length` heaviest instructions (the payload is heaviest first). */
export function timelineColors(p: ProfilePayload): Map<string, string> {
  const out = new Map<string, string>();
  p.instructions
    .slice(0, PALETTE.length)
    .forEach((r, i) => out.set(r.name, PALETTE[i]));
  return out;
}

export interface Bar {
  x: number;
  w: number;
  fill: string;
  tip: string;
}

/** The median call's events as bars on `[0, width]`; gaps between them are overhead. */
export function timelineBars(p: ProfilePayload, width: number): Bar[] {
  const step = p.timeline.step_us;
  if (!(step > 0)) {
    return [];
  }
  const colors = timelineColors(p);
  const scale = width / step;
  return p.timeline.events.map(e => {
    let tip = `${e.instruction ?? e.name}: ${fmtSeconds(e.duration_us * 1e-6)} at +${e.start_us.toFixed(1)} µs`;
    if (e.instruction && e.name !== e.instruction) {
      tip += ` (kernel ${e.name})`;
    }
    return {
      x: e.start_us * scale,
      w: Math.max(e.duration_us * scale, 0.5),
      fill: colors.get(e.instruction ?? '') ?? OTHER_FILL,
      tip
    };
  });
}

/** Time not covered by any event of the median call: host and launch overhead. */
export function gapMicroseconds(p: ProfilePayload): number {
  const spans = p.timeline.events
    .map(e => [e.start_us, e.start_us + e.duration_us])
    .sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let end = -Infinity;
  let start = 0;
  for (const [s, t] of spans) {
    if (s > end) {
      if (end > -Infinity) {
        covered += end - start;
      }
      start = s;
      end = t;
    } else {
      end = Math.max(end, t);
    }
  }
  if (end > -Infinity) {
    covered += end - start;
  }
  return Math.max(0, p.timeline.step_us - covered);
}

export function boundText(r: ProfileInstruction, peakKnown: boolean): string {
  if (r.bound) {
    return `${r.bound}-bound`;
  }
  if (r.intensity === null) {
    return 'n/a';
  }
  return peakKnown ? 'n/a' : 'unknown peak';
}

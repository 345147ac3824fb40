/**
 * `application/vnd.jax-workbench.compile-time+json` (`%%jaxprof --compile`) as data: the
 * pure pieces the view draws from (the Python view's headline, coverage line and table
 * rows, in the same words and number formats), kept apart from the DOM so they are
 * unit-tested on their own.
 */

import { fmtCount, fmtPercent, fmtSeconds } from '../bench/format';
import type { CellMap } from '../common/cells';
import type { SourceLine } from '../generated/common';
import type {
  CompileLineSize,
  CompilePhase,
  CompileTimePayload
} from '../generated/compile-time';
import { sourceLabel } from '../profile/model';

export type {
  CompileLineSize,
  CompilePhase,
  CompileTimePayload,
  UnrolledLoop
} from '../generated/compile-time';

export const KIND_WORDS: Record<CompilePhase['kind'], string> = {
  'hlo-pass': 'HLO pass',
  backend: 'backend phase',
  'mlir-pass': 'MLIR pass',
  worker: 'worker',
  other: 'other'
};

export function headline(p: CompileTimePayload): string {
  const xla = p.xla.found ? ` (XLA: ${fmtSeconds(p.xla.wall_s)})` : '';
  return (
    `compile profile of ${p.label} on ${p.backend}: trace ${fmtSeconds(p.trace_s)}, ` +
    `lower ${fmtSeconds(p.lower_s)}, compile ${fmtSeconds(p.compile_s)}${xla}`
  );
}

export function coverageLine(p: CompileTimePayload): string {
  const x = p.xla;
  if (!x.found) {
    return "XLA's passes and phases: not found in the trace";
  }
  const of = (s: number): string => fmtPercent(x.wall_s ? s / x.wall_s : 0);
  const backend = x.phases
    .filter(r => r.kind !== 'hlo-pass')
    .reduce((s, r) => s + r.seconds, 0);
  return (
    `named passes and phases cover ${fmtPercent(x.coverage)} of XLA's compile wall ` +
    `time: HLO passes ${of(x.hlo_passes_s)}, backend phases ${of(backend)}, ` +
    `unnamed ${of(x.unnamed_s)}`
  );
}

/** `cell [2] line 6 (net)`, the file's base name outside a cell; the Python view's words. */
export function where(s: SourceLine | null, cells: CellMap): string {
  if (s === null || !s.file) {
    return '(no source line)';
  }
  const label = sourceLabel(s, cells);
  return s.function ? `${label} (${s.function})` : label;
}

export function phaseCells(r: CompilePhase): string[] {
  return [
    r.name,
    KIND_WORDS[r.kind] ?? r.kind,
    fmtSeconds(r.seconds),
    fmtPercent(r.share),
    String(r.count)
  ];
}

export function lineCells(r: CompileLineSize, cells: CellMap): string[] {
  return [
    where(r.source, cells),
    fmtCount(r.equations),
    fmtPercent(r.equation_share),
    fmtCount(r.instructions),
    fmtPercent(r.instruction_share)
  ];
}

/** The "... N more" line under a table cut at `shown` rows of `total` ('' when none are left out). */
export function restLine(
  total: number,
  shown: number,
  what: string,
  seconds?: number
): string {
  if (total <= shown) {
    return '';
  }
  const more = seconds === undefined ? '' : `, ${fmtSeconds(seconds)}`;
  return `... ${total - shown} more ${what}${more}`;
}

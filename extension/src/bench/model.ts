/**
 * The bench payload's types and the pure view model of the timing table: one row per
 * measurement (variant × sweep point) with its summary texts, the ratio to the reference
 * variant, a shared scale for the distribution plots, histogram bins and run-order buckets.
 */

import {
  fmtBytes,
  fmtCount,
  fmtPercent,
  fmtRatio,
  fmtSeconds,
  pyFixed,
  sig
} from './format';

export interface Stats {
  n: number;
  min: number;
  max: number;
  median: number;
  mean: number;
  std: number | null;
  q1: number;
  q3: number;
  iqr: number;
  ci_low: number;
  ci_high: number;
  ci_coverage: number;
  outliers: number[];
  warnings: string[];
}

export interface FirstCall {
  total_s: number | null;
  trace_s: number | null;
  lower_s: number | null;
  compile_s: number | null;
  compiles: number | null;
  functions: string[];
  source: string;
}

export interface Roofline {
  device_kind: string;
  dtype: string;
  seconds: number | null;
  flops: number | null;
  bytes_accessed: number | null;
  flops_per_s: number | null;
  bytes_per_s: number | null;
  intensity: number | null;
  peak_name: string | null;
  peak_source: string;
  peak_flops_per_s: number | null;
  peak_bytes_per_s: number | null;
  flops_fraction: number | null;
  bytes_fraction: number | null;
  bound: string | null;
  note: string;
  /** where flops / bytes_accessed came from ("xla", "counted": ours from the optimized HLO,
   *  "unknown"); absent in records older than our own count, whose figures were XLA's */
  flops_source?: string;
  bytes_source?: string;
}

export interface BenchError {
  phase: string;
  kind: string;
  summary: string;
  hints: string[];
  where: { file: string; line: number; function: string; text: string } | null;
}

export interface Measurement {
  variant: string;
  params: Record<string, unknown>;
  number: number;
  samples: (number | null)[];
  warmup_calls: number;
  first_call: FirstCall | null;
  output: string;
  stats: Stats | null;
  roofline: Roofline | null;
  error: BenchError | null;
  interrupted: boolean;
  warmup_compiles: number | null;
  sampling_compiles: number | null;
  stopped_by_budget?: boolean;
}

export interface Ratio {
  variant: string;
  reference: string;
  median: number | null;
  ci_low: number | null;
  ci_high: number | null;
  ci_coverage: number | null;
  pairs: number;
}

export interface Fit {
  variant: string;
  exponent: number | null;
  coefficient: number | null;
  r2: number | null;
  exponent_stderr: number | null;
  points: number;
}

/** Present only on the partial payloads of a running benchmark (display updates). */
export interface Progress {
  phase: string;
  message: string;
  fraction: number;
  elapsed_s: number;
  point: number;
  points: number;
  /** samples so far per variant, all sweep points together */
  samples: Record<string, number>;
  /** true when an exception stopped the run before its result */
  done: boolean;
}

export interface BenchPayload {
  version: number;
  kind: 'bench';
  label: string;
  variants: string[];
  sweep_param: string | null;
  sweep_values: unknown[];
  measurements: Measurement[];
  comparisons: { params: Record<string, unknown>; ratio: Ratio }[];
  fits: Fit[];
  env: Record<string, unknown>;
  config: {
    budget_s: number;
    number: number | null;
    repeat: number | null;
    precision: number;
    min_runs: number;
    roofline: boolean;
  };
  interrupted: boolean;
  wall_s: number | null;
  progress?: Progress;
}

const PHASE_WORDS: Record<string, string> = {
  compile: 'compiling',
  warmup: 'warming up',
  sampling: 'sampling',
  roofline: 'cost analysis',
  error: 'a sweep point failed'
};

/** What the progress strip shows; `null` for a finished result (the table alone). */
export interface ProgressState {
  /** 'running' while the kernel measures; 'stopped' when an exception ended the run early */
  state: 'running' | 'stopped';
  phase: string;
  /** 0..100, for the bar's width */
  percent: number;
  /** `sampling · 7 runs · 42% · 1.2 s` */
  text: string;
  /** `jit 120 · eager 118` */
  counts: string;
}

export function progressState(p: BenchPayload): ProgressState | null {
  const pr = p.progress;
  if (!pr) {
    return null;
  }
  const fraction = Number.isFinite(pr.fraction)
    ? Math.min(1, Math.max(0, pr.fraction))
    : 0;
  const counts = Object.entries(pr.samples)
    .map(([k, n]) => `${k} ${n}`)
    .join(' · ');
  if (pr.done) {
    return {
      state: 'stopped',
      phase: pr.phase,
      percent: 100,
      counts,
      text: `stopped before the end: ${pr.message} · ${fmtSeconds(pr.elapsed_s)}`
    };
  }
  const point = pr.points > 1 ? ` · point ${pr.point + 1} of ${pr.points}` : '';
  return {
    state: 'running',
    phase: pr.phase,
    percent: fraction * 100,
    counts,
    text: `${PHASE_WORDS[pr.phase] ?? pr.phase} · ${pr.message}${point} · ${Math.round(fraction * 100)}% · ${fmtSeconds(pr.elapsed_s)}`
  };
}

export function paramsText(params: Record<string, unknown>): string {
  return Object.entries(params)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');
}

export interface Row {
  /** stable across progress updates: variant + sweep point */
  key: string;
  m: Measurement;
  params: string;
  ratio: Ratio | null;
  reference: boolean;
}

export function rowKey(m: Measurement): string {
  return `${m.variant}\u0000${paramsText(m.params)}`;
}

export function benchRows(p: BenchPayload): Row[] {
  const ref = p.variants[0];
  return p.measurements.map(m => {
    const params = paramsText(m.params);
    const cmp = p.comparisons.find(
      c => c.ratio.variant === m.variant && paramsText(c.params) === params
    );
    return {
      key: rowKey(m),
      m,
      params,
      ratio: cmp ? cmp.ratio : null,
      reference: m.variant === ref && p.variants.length > 1
    };
  });
}

export function finiteSamples(m: Measurement): number[] {
  return m.samples.filter(
    (s): s is number => typeof s === 'number' && Number.isFinite(s)
  );
}

export interface Scale {
  lo: number;
  hi: number;
  log: boolean;
}

/** One x scale for the rows' plots (log when they span more than 20×). */
export function sharedScale(rows: Row[]): Scale | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const r of rows) {
    for (const s of finiteSamples(r.m)) {
      if (s < lo) {
        lo = s;
      }
      if (s > hi) {
        hi = s;
      }
    }
  }
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
    return null;
  }
  const log = lo > 0 && hi / lo > 20;
  if (hi === lo) {
    const pad = Math.abs(lo) * 0.05 || 1e-9;
    return { lo: lo - pad, hi: hi + pad, log: false };
  }
  return { lo, hi, log };
}

/** Position of `v` in [0, 1] on `s`. */
export function scaleAt(s: Scale, v: number): number {
  if (s.log) {
    return (Math.log(v) - Math.log(s.lo)) / (Math.log(s.hi) - Math.log(s.lo));
  }
  return (v - s.lo) / (s.hi - s.lo);
}

/** Sample counts in `bins` equal-width bins of the scale. */
export function histogram(samples: number[], s: Scale, bins = 40): number[] {
  const out = new Array<number>(bins).fill(0);
  for (const v of samples) {
    const f = scaleAt(s, v);
    if (!(f >= 0 && f <= 1)) {
      continue;
    }
    out[Math.min(bins - 1, Math.floor(f * bins))]++;
  }
  return out;
}

/** At most `max` points of the run-order plot: medians of consecutive buckets. */
export function runOrder(samples: number[], max = 200): number[] {
  if (samples.length <= max) {
    return samples.slice();
  }
  const out: number[] = [];
  const size = samples.length / max;
  for (let i = 0; i < max; i++) {
    const b = samples
      .slice(Math.floor(i * size), Math.floor((i + 1) * size))
      .sort((a, c) => a - c);
    out.push(b[Math.floor(b.length / 2)]);
  }
  return out;
}

/** Sortable numeric value of a row's column. */
export function sortValue(r: Row, col: string): number | string {
  const s = r.m.stats;
  switch (col) {
    case 'variant':
      return `${r.m.variant} ${r.params}`;
    case 'median':
      return s ? s.median : Infinity;
    case 'iqr':
      return s ? s.iqr / s.median : Infinity;
    case 'n':
      return s ? s.n : 0;
    case 'first':
      return r.m.first_call?.total_s ?? Infinity;
    case 'ratio':
      return r.ratio?.median ?? (r.reference ? 1 : Infinity);
    default:
      return 0;
  }
}

export function sortRows(
  rows: Row[],
  col: string | null,
  desc: boolean
): Row[] {
  if (!col) {
    return rows;
  }
  const out = rows.slice();
  out.sort((a, b) => {
    const x = sortValue(a, col);
    const y = sortValue(b, col);
    const c =
      typeof x === 'string' || typeof y === 'string'
        ? String(x).localeCompare(String(y))
        : x - y;
    return desc ? -c : c;
  });
  return out;
}

/** The texts of a row's cells. */
export function rowCells(r: Row): Record<string, string> {
  const m = r.m;
  const s = m.stats;
  const fc = m.first_call;
  let first = '';
  if (fc && fc.total_s !== null) {
    const split = [
      fc.trace_s !== null ? `trace ${fmtSeconds(fc.trace_s, 2)}` : '',
      fc.lower_s !== null ? `lower ${fmtSeconds(fc.lower_s, 2)}` : '',
      fc.compile_s !== null ? `XLA ${fmtSeconds(fc.compile_s, 2)}` : ''
    ]
      .filter(Boolean)
      .join(' · ');
    first = `${fmtSeconds(fc.total_s)}${split ? ` (${split})` : ''}`;
  }
  let ratio = '';
  if (r.reference) {
    ratio = 'reference';
  } else if (r.ratio && r.ratio.median !== null) {
    const { ci_low: lo, ci_high: hi } = r.ratio;
    ratio =
      fmtRatio(r.ratio.median) +
      (lo !== null && hi !== null ? ` [${sig(lo)}–${sig(hi)}]` : '');
  }
  return {
    variant: m.variant + (r.params ? ` (${r.params})` : ''),
    median: s ? fmtSeconds(s.median) : m.error ? 'failed' : 'no samples yet',
    ci: s ? `${fmtSeconds(s.ci_low)} – ${fmtSeconds(s.ci_high)}` : '',
    iqr: s
      ? `${fmtSeconds(s.iqr)} (${fmtPercent(s.median ? s.iqr / s.median : null, 0)})`
      : '',
    range: s ? `${fmtSeconds(s.min)} – ${fmtSeconds(s.max)}` : '',
    n: s ? `${s.n} × ${m.number}` : `${finiteSamples(m).length} × ${m.number}`,
    first,
    ratio
  };
}

const times = (n: number): string => `${n} time${n === 1 ? '' : 's'}`;

/**
 * The warnings of a measurement, in the Python views' words and order (the harness's
 * compile warning, then the samples' noise warnings: `Measurement.warnings`), then what
 * only this view adds (warm-up compiles, budget, interruption).
 */
export function rowWarnings(m: Measurement): string[] {
  const out: string[] = [];
  if (m.sampling_compiles) {
    out.push(
      `recompiled ${times(m.sampling_compiles)} during sampling: the steady state includes compiles`
    );
  }
  out.push(...(m.stats?.warnings ?? []));
  if (m.warmup_compiles) {
    out.push(`compiled ${times(m.warmup_compiles)} during warm-up`);
  }
  if (m.stopped_by_budget && m.stats) {
    out.push(`budget reached after ${m.stats.n} samples`);
  }
  if (m.interrupted) {
    out.push('interrupted: the samples so far are kept');
  }
  return out;
}

/** Where a roofline's figures came from, in the Python view's words (`counts_source_text`). */
export function rooflineSource(r: Roofline): string {
  const words: Record<string, string> = {
    xla: "XLA's cost analysis",
    counted: 'our count of the optimized HLO'
  };
  const f = r.flops_source ?? 'xla';
  const b = r.bytes_source ?? 'xla';
  if (f === b) {
    return words[f] ?? '';
  }
  return (
    [
      ['FLOPs', f],
      ['bytes', b]
    ] as const
  )
    .filter(([, src]) => src in words)
    .map(([what, src]) => `${what} from ${words[src]}`)
    .join(', ');
}

/** Roofline lines: achieved rates, fractions of the peak, the bound. */
export function rooflineLines(r: Roofline | null): string[] {
  if (!r) {
    return [];
  }
  if (r.flops === null && r.bytes_accessed === null) {
    return r.note ? [r.note] : [];
  }
  const src = rooflineSource(r);
  const out = [
    `${fmtCount(r.flops, 'FLOP')} and ${fmtBytes(r.bytes_accessed)} per call${src ? ` (${src})` : ''} · intensity ${r.intensity === null ? 'n/a' : sig(r.intensity)} FLOP/B`,
    `achieved ${fmtCount(r.flops_per_s, 'FLOP/s')} · ${fmtCount(r.bytes_per_s, 'B/s')}`
  ];
  if (r.peak_name) {
    out.push(
      `of ${r.peak_name} (${r.peak_source}): ${fmtPercent(r.flops_fraction)} of peak FLOP/s · ${fmtPercent(r.bytes_fraction)} of peak bandwidth` +
        (r.bound ? ` · ${r.bound}-bound` : '')
    );
  }
  if (r.note) {
    out.push(r.note);
  }
  return out;
}

/** The power-law fit line in the Python view's words and digits (`fit_text`). */
export function fitText(f: Fit, param: string | null): string {
  if (f.exponent === null) {
    return `${f.variant}: no fit`;
  }
  return (
    `${f.variant}: time ∝ ${param || 'n'}^${pyFixed(f.exponent, 2)}` +
    (f.exponent_stderr !== null ? ` ± ${pyFixed(f.exponent_stderr, 2)}` : '') +
    ` (R² ${f.r2 === null ? 'n/a' : pyFixed(f.r2, 3)}, ${f.points} sizes)`
  );
}

/** The header line: label, sample count, wall time, state. */
export function headline(p: BenchPayload): string {
  const n = p.measurements.reduce((a, m) => a + finiteSamples(m).length, 0);
  const failed = p.measurements.filter(m => m.error).length;
  const soFar = p.progress && !p.progress.done ? ' so far' : '';
  return (
    `${p.label} · ${n} samples${soFar}` +
    (p.wall_s !== null ? ` in ${fmtSeconds(p.wall_s)}` : '') +
    (p.interrupted ? ' · interrupted' : '') +
    (failed ? ` · ${failed} failed` : '')
  );
}

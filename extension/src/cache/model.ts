/**
 * The cache payloads' types (generated from workbench/schemas/cache*.schema.json) and their
 * pure view models: the compile line of one cell in the Python view's words, the ledger's
 * sortable/filterable rows, the persistent-cache summary.
 */

import { fmtBytes, fmtInUnit, fmtSeconds, secondsUnit } from '../bench/format';
import type { FunctionStats } from '../generated/cache';
import type { FunctionGroup } from '../generated/cache-cell';
import type { PersistentStatus } from '../generated/cache-persistent';
import type { CallSite, CompileRecord } from '../generated/common';

export type { CachePayload, FunctionStats } from '../generated/cache';
export type { CacheCellPayload, FunctionGroup } from '../generated/cache-cell';
export type {
  CachePersistentPayload,
  PersistentStatus
} from '../generated/cache-persistent';
export type { CompileRecord, MissReason } from '../generated/common';

/** Digits of the compact cache texts (as the Python view). */
export const DIGITS = 2;
/** Reasons spelled out in a compile line before `+N more`. */
export const MAX_REASONS_IN_LINE = 2;

const s2 = (t: number | null): string => fmtSeconds(t, DIGITS);

export function whatText(g: FunctionGroup): string {
  if (g.compiles) {
    return `compiled ${g.compiles}x in ${s2(g.total_s)}`;
  }
  if (g.lowers) {
    return `lowered ${g.lowers}x in ${s2(g.total_s)}`;
  }
  return `traced ${g.traces}x in ${s2(g.total_s)}`;
}

/** `trace 0.02 · lower 0.05 · XLA 0.34` in the unit the total was given in. */
export function stagesText(g: FunctionGroup): string {
  const unit = g.total_s ? secondsUnit(g.total_s, DIGITS)[0] : 's';
  const n = (t: number): string => fmtInUnit(t, unit, DIGITS);
  const parts: string[] = [];
  if (g.traces) {
    parts.push(`trace ${n(g.trace_s)}`);
  }
  if (g.lowers) {
    parts.push(`lower ${n(g.lower_s)}`);
  }
  if (g.compiles) {
    parts.push(`XLA ${n(g.compile_s)}`);
  }
  return parts.join(' · ');
}

const AGAIN: Record<string, string> = {
  compile: 'recompiled',
  lower: 'relowered',
  trace: 'retraced'
};

/** The word before reason `i`: the stage its call reached (a cell can compile a function
 * once and only trace it again with `jax.make_jaxpr`: those reasons are retraces). */
export function againWord(g: FunctionGroup, i: number): string {
  const from =
    g.reasons_from?.[i] ??
    (g.compiles ? 'compile' : g.lowers ? 'lower' : 'trace');
  return AGAIN[from] ?? 'recompiled';
}

/** The first `limit` reasons as `recompiled: a; b · retraced: c; +2 more` (one part per
 * word, in the order the words first appear), as the Python `again_text`. */
export function againText(
  g: FunctionGroup,
  limit: number = MAX_REASONS_IN_LINE
): string {
  const more = g.reasons.length - limit;
  return (
    againParts(g, limit)
      .map(([word, texts]) => `${word}: ${texts.join('; ')}`)
      .join(' · ') + (more > 0 ? `; +${more} more` : '')
  );
}

/** The first `limit` reasons grouped by their word: `[['recompiled', [a, b]], ['retraced', [c]]]`. */
export function againParts(
  g: FunctionGroup,
  limit: number
): [string, string[]][] {
  const parts = new Map<string, string[]>();
  g.reasons.slice(0, limit).forEach((r, i) => {
    const word = againWord(g, i);
    parts.set(word, [...(parts.get(word) ?? []), r.text]);
  });
  return [...parts];
}

/** The head of a group's line (without the reasons). */
export function groupHead(g: FunctionGroup): string {
  if (g.origin === 'jax') {
    const names = g.names
      .map(n => n.replace(/^jit\(/, '').replace(/\)$/, ''))
      .join(', ');
    return `JAX helpers (${names}): ${whatText(g)}`;
  }
  const out = [`${g.function}: ${whatText(g)} (${stagesText(g)})`];
  if (g.persistent_hits) {
    out.push(
      `${g.persistent_hits} persistent-cache hit${g.persistent_hits > 1 ? 's' : ''} (saved ${s2(g.time_saved_s)})`
    );
  }
  if (g.persistent_written) {
    out.push(`${g.persistent_written} written to the persistent cache`);
  }
  if (g.origin === 'workbench') {
    out.push(`inspected by ${g.inspected_by.join(', ') || 'the workbench'}`);
  }
  return out.join(' · ');
}

/** The whole line, as the Python `group_line` writes it. */
export function groupLine(g: FunctionGroup): string {
  const head = groupHead(g);
  if (!g.reasons.length || g.origin === 'jax') {
    return head;
  }
  return `${head} · ${againText(g)}`;
}

/** Distinct call sites (file, line, text), at most `limit`. */
export function distinctSites(sites: CallSite[], limit = 5): CallSite[] {
  const seen = new Set<string>();
  const out: CallSite[] = [];
  for (const c of sites) {
    const k = `${c.file}\u0000${c.line}\u0000${c.text}`;
    if (seen.has(k)) {
      continue;
    }
    seen.add(k);
    out.push(c);
  }
  return out.slice(0, limit);
}

/** `cell [4], line 5` for an IPython cell file, `cell line 5` for ipykernel's, else `…/dir/file:line`. */
export function siteLabel(c: CallSite): string {
  const m = /^<ipython-input-(\d+)-[0-9a-f]+>$/.exec(c.file);
  if (m) {
    return `cell [${m[1]}], line ${c.line}`;
  }
  const w = /^<workbench-cell-(\d+)>$/.exec(c.file);
  if (w) {
    return `cell [${w[1]}], line ${c.line}`;
  }
  // ipykernel's file of a notebook cell (/tmp/ipykernel_<pid>/<hash>.py): its number is not
  // in the payload, so say it is a cell (as the Python view does when it cannot tell)
  if (/ipykernel_\d+[/\\]\d+\.py$/.test(c.file)) {
    return `cell line ${c.line}`;
  }
  const parts = c.file.split(/[\\/]/);
  return `${parts.length > 2 ? `…/${parts.slice(-2).join('/')}` : c.file}:${c.line}`;
}

export function definedLabel(d: string | null): string {
  if (!d) {
    return '';
  }
  const i = d.lastIndexOf(':');
  if (i < 0) {
    return d;
  }
  const line = Number(d.slice(i + 1));
  return Number.isFinite(line)
    ? siteLabel({ file: d.slice(0, i), line, function: '', text: '' })
    : d;
}

// -- the ledger table --------------------------------------------------------------------------

export const LEDGER_COLUMNS: { id: string; label: string; numeric: boolean }[] =
  [
    { id: 'function', label: 'function', numeric: false },
    { id: 'origin', label: 'origin', numeric: false },
    { id: 'defined', label: 'defined at', numeric: false },
    { id: 'compiles', label: 'compiles', numeric: true },
    { id: 'recompiles', label: 'recompiles', numeric: true },
    { id: 'entries', label: 'entries', numeric: true },
    { id: 'trace', label: 'trace', numeric: true },
    { id: 'lower', label: 'lower', numeric: true },
    { id: 'xla', label: 'XLA', numeric: true },
    { id: 'total', label: 'total', numeric: true },
    { id: 'hits', label: 'pcache hits', numeric: true },
    { id: 'why', label: 'latest recompile reason', numeric: false }
  ];

export function totalOf(f: FunctionStats): number {
  return f.trace_s + f.lower_s + f.compile_s;
}

/** The newest miss that has a recompile reason (not a first compile). */
export function latestReason(f: FunctionStats): string {
  for (let i = f.misses.length - 1; i >= 0; i--) {
    const rs = f.misses[i].reasons.filter(r => r.kind !== 'new_function');
    if (rs.length) {
      return rs.map(r => r.text).join('; ');
    }
  }
  return '';
}

export function ledgerValue(f: FunctionStats, col: string): number | string {
  switch (col) {
    case 'function':
      return f.function;
    case 'origin':
      return f.origin;
    case 'defined':
      return f.defined_at ?? '';
    case 'compiles':
      return f.compiles;
    case 'recompiles':
      return f.recompiles;
    case 'entries':
      return f.entries;
    case 'trace':
      return f.trace_s;
    case 'lower':
      return f.lower_s;
    case 'xla':
      return f.compile_s;
    case 'total':
      return totalOf(f);
    case 'hits':
      return f.persistent_hits;
    case 'why':
      return latestReason(f);
    default:
      return '';
  }
}

export function ledgerCell(f: FunctionStats, col: string): string {
  switch (col) {
    case 'defined':
      return definedLabel(f.defined_at);
    case 'trace':
      return s2(f.trace_s);
    case 'lower':
      return s2(f.lower_s);
    case 'xla':
      return s2(f.compile_s);
    case 'total':
      return s2(totalOf(f));
    case 'hits':
      return f.persistent_hits
        ? `${f.persistent_hits} (saved ${s2(f.time_saved_s)})`
        : '0';
    default:
      return String(ledgerValue(f, col));
  }
}

/** Everything a filter query matches against for a function row. */
export function ledgerHaystack(f: FunctionStats): string {
  const reasons = f.misses.flatMap(m => m.reasons.map(r => r.text));
  return [
    f.function,
    f.key,
    f.origin,
    f.defined_at ?? '',
    definedLabel(f.defined_at),
    ...reasons
  ]
    .join('\n')
    .toLowerCase();
}

/** Indices of `rows` matching `query` (every word must occur), sorted by `col`. */
export function ledgerView(
  rows: FunctionStats[],
  query: string,
  col: string | null,
  desc: boolean
): number[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const idx: number[] = [];
  rows.forEach((f, i) => {
    const h = ledgerHaystack(f);
    if (words.every(w => h.includes(w))) {
      idx.push(i);
    }
  });
  if (col) {
    idx.sort((a, b) => {
      const x = ledgerValue(rows[a], col);
      const y = ledgerValue(rows[b], col);
      const c =
        typeof x === 'number' && typeof y === 'number'
          ? x - y
          : String(x).localeCompare(String(y));
      return (desc ? -c : c) || a - b;
    });
  }
  return idx;
}

/** One compile record as a line: `cell [2] · compile 38 ms · x changed f32[3,8] -> f32[5,8]`. */
export function recordLine(r: CompileRecord): string {
  const where =
    r.cell === 'background' ? `background (${r.thread})` : `cell [${r.cell}]`;
  const parts = [where, `${r.kind} ${s2(r.total_s)}`];
  const reasons = r.reasons.map(x => x.text).join('; ');
  if (reasons) {
    parts.push(reasons);
  }
  if (r.persistent_cache) {
    parts.push(
      `persistent cache: ${r.persistent_cache}${r.time_saved_s ? ` (saved ${s2(r.time_saved_s)})` : ''}`
    );
  }
  if (r.inspected_by) {
    parts.push(`inspected by ${r.inspected_by}`);
  }
  return parts.join(' · ');
}

export function recordMatches(r: CompileRecord, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) {
    return true;
  }
  const h = [
    r.function,
    r.key,
    r.origin,
    r.cell,
    ...r.reasons.map(x => x.text),
    r.call_site?.text ?? ''
  ]
    .join('\n')
    .toLowerCase();
  return words.every(w => h.includes(w));
}

// -- persistent cache ----------------------------------------------------------------------------

export function persistentRows(p: PersistentStatus): [string, string][] {
  if (!p.directory) {
    return [['persistent cache', 'off (%jaxcache persist DIR turns it on)']];
  }
  return [
    ['directory', p.directory],
    [
      'written when compiling takes at least',
      fmtSeconds(p.min_compile_time_s, DIGITS)
    ],
    // -1: JAX applies no size restriction
    [
      'and the entry is at least',
      p.min_entry_size_bytes < 0 ? 'any size' : fmtBytes(p.min_entry_size_bytes)
    ],
    [
      'maximum size',
      p.max_size_bytes < 0 ? 'unlimited' : fmtBytes(p.max_size_bytes)
    ],
    [
      'this session',
      `${p.hits} hit${p.hits === 1 ? '' : 's'}, ${p.misses} miss${p.misses === 1 ? '' : 'es'} (${p.written} written), saved ${s2(p.time_saved_s)}`
    ]
  ];
}

export function persistentLine(p: PersistentStatus): string {
  if (!p.directory) {
    return 'persistent cache off';
  }
  return `persistent cache ${p.directory}: ${p.hits} hits, ${p.misses} misses, ${p.written} written, saved ${s2(p.time_saved_s)}`;
}

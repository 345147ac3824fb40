/**
 * The live diff beside a re-run `%%jaxpr` / `%%hlo` cell's output: what changed since the
 * previous run of the same cell (the kernel's `live_diff`): groups of equations /
 * instructions / fusions added and removed, aligned by primitive (opcode, fusion kind) and
 * source line, with counts and a few examples, and the totals before → after with their
 * deltas (counts, compile time, memory, estimated bytes).
 *
 * Compact and collapsible (a `<details>`): the summary line says the gist (+added / −removed
 * and the first count total); the body lists groups and totals.  Everything from the kernel
 * is text (`textContent`, `title`); a malformed diff renders what is well formed and drops
 * the rest, never throws.
 */

import type {
  CallSite,
  DiffGroup,
  DiffTotal,
  LiveDiff
} from '../sidepanel/protocol';
import { el } from '../common/dom';
import { counted, formatSeconds, truncate } from './badges';

/** groups listed per side before "… N more" (the rest are in the side panel) */
export const MAX_GROUPS = 12;

const isObj = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
const num = (x: unknown): number | null =>
  typeof x === 'number' && Number.isFinite(x) ? x : null;

function parseSite(x: unknown): CallSite | null {
  if (!isObj(x)) {
    return null;
  }
  const line = num(x.line);
  return {
    file: typeof x.file === 'string' ? x.file : '',
    line: line ?? 0,
    function: typeof x.function === 'string' ? x.function : '',
    text: typeof x.text === 'string' ? x.text : ''
  };
}

function parseGroup(x: unknown): DiffGroup | null {
  if (!isObj(x) || typeof x.what !== 'string') {
    return null;
  }
  const c = num(x.count);
  return {
    what: x.what,
    line: parseSite(x.line),
    ...(typeof x.label === 'string' && x.label ? { label: x.label } : {}),
    count: c !== null && c >= 1 ? Math.floor(c) : 1,
    examples: Array.isArray(x.examples)
      ? x.examples.filter((e): e is string => typeof e === 'string').slice(0, 3)
      : []
  };
}

function parseTotal(x: unknown): DiffTotal | null {
  if (!isObj(x) || typeof x.name !== 'string') {
    return null;
  }
  const unit =
    x.unit === 's' || x.unit === 'bytes' || x.unit === 'flops'
      ? x.unit
      : 'count';
  return { name: x.name, before: num(x.before), after: num(x.after), unit };
}

/** A `live_diff` with its well-formed parts (null if it is not one at all). */
export function parseDiff(x: unknown): LiveDiff | null {
  if (!isObj(x)) {
    return null;
  }
  const list = <T>(v: unknown, f: (y: unknown) => T | null): T[] =>
    Array.isArray(v) ? v.map(f).filter((y): y is T => y !== null) : [];
  return {
    cell:
      typeof x.cell === 'string'
        ? x.cell
        : typeof x.cell === 'number'
          ? String(x.cell)
          : null,
    cell_id: typeof x.cell_id === 'string' ? x.cell_id : null,
    kind: x.kind === 'hlo' ? 'hlo' : 'jaxpr',
    t: num(x.t) ?? 0,
    function: typeof x.function === 'string' ? x.function : '',
    added: list(x.added, parseGroup),
    removed: list(x.removed, parseGroup),
    totals: list(x.totals, parseTotal)
  };
}

/** The diff to show for a cell: only for the run whose output the cell shows. */
export function currentDiff(
  diff: LiveDiff | null,
  executionCount: number | null
): LiveDiff | null {
  if (!diff || executionCount === null || executionCount === undefined) {
    return null;
  }
  return diff.cell === null || diff.cell === String(executionCount)
    ? diff
    : null;
}

const KIB = 1024;

/** Bytes in binary units, one decimal past bytes: `512 B`, `1.5 KiB`, `118.2 GiB`. */
export function formatBytes(b: number): string {
  const a = Math.abs(b);
  const sign = b < 0 ? '−' : '';
  if (a < KIB) {
    return `${sign}${Math.round(a)} B`;
  }
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = a / KIB;
  let i = 0;
  while (v >= KIB && i < units.length - 1) {
    v /= KIB;
    i++;
  }
  return `${sign}${v.toFixed(1)} ${units[i]}`;
}

/** FLOPs with an SI prefix, one decimal past units: `96 FLOP`, `1.5 kFLOP`, `127.0 GFLOP`. */
export function formatFlops(f: number): string {
  const a = Math.abs(f);
  const sign = f < 0 ? '−' : '';
  if (a < 1000) {
    return `${sign}${Math.round(a)} FLOP`;
  }
  const prefixes = ['k', 'M', 'G', 'T', 'P', 'E'];
  let v = a / 1000;
  let i = 0;
  while (v >= 1000 && i < prefixes.length - 1) {
    v /= 1000;
    i++;
  }
  return `${sign}${v.toFixed(1)} ${prefixes[i]}FLOP`;
}

function formatValue(v: number | null, unit: DiffTotal['unit']): string {
  if (v === null) {
    return '–';
  }
  if (unit === 's') {
    return formatSeconds(v);
  }
  if (unit === 'bytes') {
    return formatBytes(v);
  }
  if (unit === 'flops') {
    return formatFlops(v);
  }
  return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(2);
}

/** `+2`, `−3 ms`, `+1.5 KiB`, `±0`; empty when a side is unknown. */
export function formatDelta(t: DiffTotal): string {
  if (t.before === null || t.after === null) {
    return '';
  }
  const d = t.after - t.before;
  if (d === 0) {
    return '±0';
  }
  const mag = formatValue(Math.abs(d), t.unit);
  return `${d > 0 ? '+' : '−'}${mag}`;
}

/** `12 → 14 (+2)` */
export function totalText(t: DiffTotal): string {
  const delta = formatDelta(t);
  return `${formatValue(t.before, t.unit)} → ${formatValue(t.after, t.unit)}${delta ? ` (${delta})` : ''}`;
}

/** `cell [8] line 9: y = f(x)`: the kernel's label (the cell by its prompt number now), or
 * `line 9` from a diff that has none. */
function siteText(site: CallSite | null, label?: string): string {
  if (!site) {
    return '';
  }
  const text = site.text.trim();
  const where = label ? label : site.line > 0 ? `line ${site.line}` : '';
  return [where, text].filter(Boolean).join(': ');
}

function siteTitle(site: CallSite | null): string {
  if (!site) {
    return 'source line unknown';
  }
  return `${site.file}${site.line > 0 ? `:${site.line}` : ''}${site.function ? ` (${site.function})` : ''}\n${site.text}`;
}

const sum = (gs: DiffGroup[]): number => gs.reduce((n, g) => n + g.count, 0);

/** The one-line gist shown in the collapsed summary. */
export function summaryText(d: LiveDiff): string {
  const added = sum(d.added);
  const removed = sum(d.removed);
  const name = d.function ? ` of ${d.function}` : '';
  const changedTotals = d.totals.filter(t => t.before !== t.after);
  const first = d.totals.find(t => t.unit === 'count');
  const parts: string[] = [];
  if (added || removed) {
    parts.push(`+${added} −${removed}`);
  }
  if (first) {
    parts.push(`${first.name} ${totalText(first)}`);
  }
  if (!added && !removed && !changedTotals.length) {
    return `Live diff${name}: no change since the previous run`;
  }
  return `Live diff${name} since the previous run: ${parts.join(' · ')}`;
}

function groupRows(
  host: HTMLElement,
  groups: DiffGroup[],
  sign: '+' | '−',
  cls: string
): void {
  const list = host.appendChild(el('ul', `jwb-live-groups ${cls}`));
  for (const g of groups.slice(0, MAX_GROUPS)) {
    const li = list.appendChild(el('li', 'jwb-live-group'));
    li.appendChild(el('span', 'jwb-live-count', `${sign}${g.count}`));
    li.appendChild(el('span', 'jwb-live-what', g.what));
    const site = siteText(g.line, g.label);
    const where = li.appendChild(
      el('span', 'jwb-live-line', site ? truncate(site, 80) : '')
    );
    where.title = siteTitle(g.line);
    if (g.examples.length) {
      const ex = li.appendChild(
        el('span', 'jwb-live-example', truncate(g.examples[0], 120))
      );
      ex.title = g.examples.join('\n');
    }
  }
  if (groups.length > MAX_GROUPS) {
    const rest = groups.slice(MAX_GROUPS);
    list.appendChild(
      el(
        'li',
        'jwb-live-more',
        `… ${counted(rest.length, 'more group')} (${sum(rest)} items)`
      )
    );
  }
}

/**
 * Render a diff into `details` (a `<details class="jwb-live-diff">`): the summary line and
 * the body.  Its open state is the caller's (the strip remembers the user's choice).
 */
export function renderDiff(details: HTMLDetailsElement, d: LiveDiff): void {
  details.textContent = '';
  details.dataset.jwbKind = d.kind;
  const summary = details.appendChild(el('summary', 'jwb-live-summary'));
  summary.appendChild(
    el('span', 'jwb-live-tag', d.kind === 'hlo' ? 'HLO' : 'jaxpr')
  );
  summary.appendChild(el('span', 'jwb-live-gist', summaryText(d)));
  const body = details.appendChild(el('div', 'jwb-live-body'));

  if (d.totals.length) {
    const table = body.appendChild(el('table', 'jwb-live-totals'));
    const tbody = table.appendChild(el('tbody'));
    for (const t of d.totals) {
      const tr = tbody.appendChild(el('tr'));
      tr.appendChild(el('th', undefined, t.name));
      tr.appendChild(
        el('td', 'jwb-live-before', formatValue(t.before, t.unit))
      );
      tr.appendChild(el('td', 'jwb-live-arrow', '→'));
      tr.appendChild(el('td', 'jwb-live-after', formatValue(t.after, t.unit)));
      const delta = formatDelta(t);
      const td = tr.appendChild(el('td', 'jwb-live-delta', delta));
      if (t.before !== null && t.after !== null && t.after !== t.before) {
        td.dataset.jwbSign = t.after > t.before ? 'up' : 'down';
      }
    }
  }
  if (d.added.length) {
    body.appendChild(el('div', 'jwb-live-head', `Added (${sum(d.added)})`));
    groupRows(body, d.added, '+', 'jwb-live-added');
  }
  if (d.removed.length) {
    body.appendChild(el('div', 'jwb-live-head', `Removed (${sum(d.removed)})`));
    groupRows(body, d.removed, '−', 'jwb-live-removed');
  }
  if (!d.added.length && !d.removed.length) {
    body.appendChild(
      el(
        'div',
        'jwb-live-none',
        d.kind === 'hlo'
          ? 'No instruction or fusion kind added or removed at any source line.'
          : 'No equation added or removed at any source line.'
      )
    );
  }
}

/** A stable key of what a diff shows. */
export function diffKey(d: LiveDiff | null): string {
  return d ? JSON.stringify(d) : '';
}

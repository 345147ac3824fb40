/**
 * The per-cell compile badge: what one run of a code cell traced, lowered and compiled,
 * read from the kernel's `cell_badge` (see `sidepanel/protocol.ts`).  The badge text is
 * compact ("3 compiles · 1.2 s · 1 miss: <first reason> · 2 persistent hits"); the full
 * text, the reason uncut included, is the node's `title`.
 *
 * Badges come from two places: the cell's metadata (`jax-workbench` → `{badge}`, written by
 * the side panel's link so a badge survives windowed detach and a reload of the saved notebook)
 * and the link itself (`link.badge(cellId)`, as the kernel sent it).  Both are untrusted: a notebook file can
 * hold anything under that key, so `parseBadge` checks every field and everything from the
 * kernel reaches the page through `textContent` / `title` only.
 *
 * Which run a badge describes matters: a badge describes one run of the cell, and the
 * outputs on screen belong to the latest.  A badge is shown only while its `cell` (the
 * execution count of its run) is the cell's current execution count (`currentBadge`), so a
 * re-run that sends no badge (the kernel has no workbench, or an older one) does not leave
 * the previous run's badge under new outputs; the cell plugin also drops the stored badge
 * when the cell starts running (a restarted kernel reuses execution counts), and shows a
 * stored badge only under the cell whose id it names (a copied or pasted cell keeps the
 * original's metadata, outputs and count under a new id).  A re-run that
 * compiled nothing gets an all-zero badge from the kernel (replacing the earlier one), shown
 * as no badge at all.
 *
 * What a badge counts: the user's functions only.  JAX's helper compiles (the tiny programs
 * of eager ops: `jnp.ones`, an NNX model's initialisers) are counted apart by the kernel
 * (`helper_compiles`, `helper_s`) and shown on request, in the badge's tooltip; workbench
 * inspections (`%%jaxpr`, `%%hlo`, `%jaxprof`) likewise.  So a cell that only traces says
 * "1 trace", and an NNX cell with one compile of the user's step says "1 compile".
 *
 * A badge from another run of the same execution count: a notebook executed headless
 * (nbclient, papermill) numbers its cells from 1 again and keeps the cell metadata, so the
 * interactive run's stored badge would match the new outputs by count alone.  Those runners
 * record when each cell ran (`metadata.execution["iopub.execute_input"]`, nbclient's
 * `record_timing`, on by default; `metadata.papermill.start_time`); JupyterLab does too when
 * its `recordTiming` is on.  A badge made (kernel clock `t`) before the cell's recorded
 * start is another run's: it is not shown (`ranAfter`, `currentBadge`).  Why the timestamps
 * and not the outputs: a run that compiles nothing has no output of ours to compare with,
 * and the runners write these fields without knowing about the workbench.
 */

import type { CellBadge } from '../sidepanel/protocol';
import { el } from '../common/dom';

/** the cell-metadata key the side panel's link writes badges under */
export const METADATA_KEY = 'jax-workbench';

/** how many characters of the first miss reason the compact text keeps */
export const REASON_CHARS = 60;

const isObj = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
const count = (x: unknown): number | null =>
  typeof x === 'number' && Number.isFinite(x) && x >= 0 ? Math.floor(x) : null;
const seconds = (x: unknown): number | null =>
  typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : null;
const strOrNull = (x: unknown): string | null | undefined =>
  x === null ? null : typeof x === 'string' ? x : undefined;

/** A `cell_badge` checked field by field (null if it is not one); unknown fields are dropped. */
export function parseBadge(x: unknown): CellBadge | null {
  if (!isObj(x)) {
    return null;
  }
  const cell =
    typeof x.cell === 'string'
      ? x.cell
      : typeof x.cell === 'number' && Number.isFinite(x.cell)
        ? String(x.cell)
        : null;
  const cellId = strOrNull(x.cell_id);
  const firstReason = strOrNull(x.first_reason);
  const nums = {
    compiles: count(x.compiles),
    traces: count(x.traces),
    lowers: count(x.lowers),
    misses: count(x.misses),
    persistent_hits: count(x.persistent_hits),
    inspections: count(x.inspections)
  };
  const compileS = seconds(x.compile_s);
  const run =
    typeof x.run === 'number' && Number.isFinite(x.run) ? x.run : null;
  const t = typeof x.t === 'number' && Number.isFinite(x.t) ? x.t : null;
  // optional (kernels before the user/helper split sent none): absent reads as 0
  const helperCompiles =
    x.helper_compiles === undefined ? 0 : count(x.helper_compiles);
  const helperS = x.helper_s === undefined ? 0 : seconds(x.helper_s);
  if (
    cell === null ||
    cellId === undefined ||
    firstReason === undefined ||
    compileS === null ||
    run === null ||
    t === null ||
    helperCompiles === null ||
    helperS === null
  ) {
    return null;
  }
  if (Object.values(nums).some(v => v === null)) {
    return null;
  }
  return {
    cell,
    cell_id: cellId,
    run,
    t,
    compiles: nums.compiles as number,
    traces: nums.traces as number,
    lowers: nums.lowers as number,
    compile_s: compileS,
    misses: nums.misses as number,
    first_reason: firstReason,
    persistent_hits: nums.persistent_hits as number,
    inspections: nums.inspections as number,
    ...(x.helper_compiles === undefined
      ? {}
      : { helper_compiles: helperCompiles }),
    ...(x.helper_s === undefined ? {} : { helper_s: helperS })
  };
}

/** The badge stored in a cell's metadata value (`{badge: ...}`), if well formed. */
export function badgeFromMetadata(value: unknown): CellBadge | null {
  return isObj(value) ? parseBadge(value.badge) : null;
}

/** `1 compile`, `2 compiles`; `plural` for irregular ones (`1 miss`, `2 misses`). */
export function counted(
  n: number,
  singular: string,
  plural = `${singular}s`
): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** Seconds as people read them: `850 µs`, `4.2 ms`, `120 ms`, `1.2 s`, `14 s`, `2 min 5 s`. */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) {
    return '–';
  }
  const a = Math.abs(s);
  const sign = s < 0 ? '−' : '';
  if (a === 0) {
    return '0 s';
  }
  if (a < 1e-3) {
    return `${sign}${Math.round(a * 1e6)} µs`;
  }
  if (a < 1e-2) {
    return `${sign}${(a * 1e3).toFixed(1)} ms`;
  }
  if (a < 1) {
    return `${sign}${Math.round(a * 1e3)} ms`;
  }
  if (a < 10) {
    return `${sign}${a.toFixed(1)} s`;
  }
  if (a < 60) {
    return `${sign}${Math.round(a)} s`;
  }
  const m = Math.floor(a / 60);
  return `${sign}${m} min ${Math.round(a - m * 60)} s`;
}

/** Cut `text` to `max` characters (one line), ending in `…` when cut. */
export function truncate(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  if (one.length <= max) {
    return one;
  }
  return `${one.slice(0, Math.max(1, max - 1)).trimEnd()}…`;
}

export interface BadgeText {
  /** the compact line shown under the cell */
  short: string;
  /** everything, the full first reason included (the node's title) */
  full: string;
}

/** The compact and the full text of a badge. */
export function badgeText(b: CellBadge): BadgeText {
  const short: string[] = [];
  const full: string[] = [];
  if (b.compiles > 0) {
    short.push(counted(b.compiles, 'compile'));
  } else if (b.lowers > 0) {
    short.push(counted(b.lowers, 'lowering'));
  } else if (b.traces > 0) {
    short.push(counted(b.traces, 'trace'));
  } else if (b.inspections > 0) {
    short.push(counted(b.inspections, 'inspection'));
  }
  const work = b.compiles + b.lowers + b.traces;
  if (work > 0) {
    short.push(formatSeconds(b.compile_s));
  }
  if (b.misses > 0) {
    const misses = counted(b.misses, 'miss', 'misses');
    short.push(
      b.first_reason
        ? `${misses}: ${truncate(b.first_reason, REASON_CHARS)}`
        : misses
    );
  }
  if (b.persistent_hits > 0) {
    short.push(counted(b.persistent_hits, 'persistent hit'));
  }

  full.push(`JAX work of cell [${b.cell}] (run ${b.run})`);
  full.push(
    `${counted(b.compiles, 'XLA compile')}, ${counted(b.lowers, 'lowering')}, ${counted(b.traces, 'trace')}: ${formatSeconds(b.compile_s)} in all`
  );
  if (b.misses > 0) {
    full.push(`${counted(b.misses, 'recompile')} of functions compiled before`);
    if (b.first_reason) {
      full.push(`first reason: ${b.first_reason}`);
    }
  }
  if (b.persistent_hits > 0) {
    full.push(`${counted(b.persistent_hits, 'persistent-cache hit')}`);
  }
  if (b.inspections > 0) {
    full.push(
      `${counted(b.inspections, 'workbench inspection')} (%%jaxpr, %%hlo, …) not counted above`
    );
  }
  const helpers = b.helper_compiles ?? 0;
  if (helpers > 0) {
    full.push(
      `${counted(helpers, 'JAX helper compile')} (eager ops such as jnp.ones): ${formatSeconds(b.helper_s ?? 0)}, not counted above`
    );
  }
  full.push("Click: this cell's entries in the JAX Workbench panel");
  return { short: short.join(' · ') || 'no compiles', full: full.join('\n') };
}

/**
 * The badge to show for a cell now: the newer of the stored and the kernel's one (by the
 * kernel's clock `t`, then run number), and only if it describes the run whose outputs the
 * cell shows (its `cell` is the current execution count; none while the cell runs).
 */
export function currentBadge(
  stored: CellBadge | null,
  fromKernel: CellBadge | null,
  executionCount: number | null,
  ranAt: number | null = null
): CellBadge | null {
  let best = stored;
  if (
    fromKernel &&
    (!best ||
      fromKernel.t > best.t ||
      (fromKernel.t === best.t && fromKernel.run >= best.run))
  ) {
    best = fromKernel;
  }
  if (!best || executionCount === null || executionCount === undefined) {
    return null;
  }
  if (best.cell !== String(executionCount)) {
    return null;
  }
  if (ranAt !== null && ranAt > best.t * 1000 + CLOCK_SKEW_MS) {
    return null; // the outputs are of a later run (a headless re-run) than the badge's
  }
  return isEmptyBadge(best) ? null : best;
}

/**
 * How far the clock that recorded a cell's start may be ahead of the kernel's: a badge is
 * made after its run started, so only a start later than the badge by more than this is
 * another (later) run.  Headless re-runs come minutes or days later.
 */
export const CLOCK_SKEW_MS = 30_000;

/** A date-time with a time of day but no zone designator (`Z`, `+01:00`, `-0500`). */
const ZONELESS = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

const isoMs = (x: unknown): number | null => {
  if (typeof x !== 'string') {
    return null;
  }
  // papermill writes `datetime.utcnow().isoformat()`: UTC without a zone, which Date.parse
  // reads as the browser's local time (hours late west of Greenwich: a fresh badge hidden)
  const ms = Date.parse(ZONELESS.test(x) ? `${x}Z` : x);
  return Number.isFinite(ms) ? ms : null;
};

/**
 * When the cell's outputs were made, as the notebook records it (milliseconds since the
 * epoch; null when nothing records it): the latest of nbclient's / JupyterLab's
 * `execution["iopub.execute_input"]` and papermill's `papermill.start_time`.  Untrusted
 * notebook data: anything else than an ISO date string is ignored.
 */
export function ranAfter(
  execution: unknown,
  papermill: unknown
): number | null {
  const times: number[] = [];
  if (isObj(execution)) {
    const t = isoMs(execution['iopub.execute_input']);
    if (t !== null) {
      times.push(t);
    }
  }
  if (isObj(papermill)) {
    const t = isoMs(papermill.start_time);
    if (t !== null) {
      times.push(t);
    }
  }
  return times.length ? Math.max(...times) : null;
}

/**
 * A run that did no JAX work: the kernel sends such a badge for a re-run that compiled
 * nothing, to replace the cell's earlier badge.  It shows as no badge: under a cell,
 * silence means cached dispatch (the side panel's ledger still lists the run's cell).
 */
export function isEmptyBadge(b: CellBadge): boolean {
  return (
    b.compiles +
      b.traces +
      b.lowers +
      b.misses +
      b.persistent_hits +
      b.inspections ===
    0
  );
}

/** A stable key of what a badge shows (to skip re-rendering an unchanged one). */
export function badgeKey(b: CellBadge | null): string {
  return b
    ? JSON.stringify([
        b.cell,
        b.run,
        b.t,
        b.compiles,
        b.lowers,
        b.traces,
        b.compile_s,
        b.misses,
        b.first_reason,
        b.persistent_hits,
        b.inspections,
        b.helper_compiles ?? 0
      ])
    : '';
}

/** Fill `button` with a badge (text only); `data-jwb-*` attributes for tests and styling. */
export function renderBadge(button: HTMLElement, b: CellBadge): void {
  const { short, full } = badgeText(b);
  button.textContent = '';
  button.appendChild(el('span', 'jwb-cell-badge-icon', 'JAX'));
  button.appendChild(el('span', 'jwb-cell-badge-text', short));
  button.title = full;
  // the accessible name starts with the visible text (WCAG 2.5.3: speech users say what they
  // see), then the details of the title; not its last line (what a click does)
  button.setAttribute(
    'aria-label',
    [`JAX ${short}`, ...full.split('\n').slice(0, -1)].join('. ')
  );
  button.dataset.jwbCompiles = String(b.compiles);
  button.dataset.jwbMisses = String(b.misses);
  button.dataset.jwbCell = b.cell;
  button.classList.toggle('jwb-cell-badge-miss', b.misses > 0);
}

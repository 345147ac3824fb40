/**
 * A jaxpr flattened into display rows, nested jaxprs (pjit/scan/cond/while/custom_jvp
 * bodies) included, in JAX's own printing order and style:
 *
 *     { lambda ; a:f32[4] b:f32[4]. let              <- 'open' (depth 0)
 *       c:f32[4] = sin a                            <- 'eqn'
 *       f:f32[] g:f32[4] = scan[length=4] e a       <- 'eqn' with a body:
 *         jaxpr={ lambda ; h:f32[] i:f32[]. let     <- 'open' (depth 1, foldable)
 *           j:f32[] = cos i
 *         in (k, l) }                               <- 'close'
 *     in (w,) }
 *
 * Pure: no DOM.  `visibleRows` applies the fold state; text comes as segments so the view
 * can make variables clickable without parsing strings.
 */

import type { CellMap } from '../common/cells';
import { fileCellKey, sourceLabel } from './source';
import type { Atom, Aval, Equation, Jaxpr } from './types';

export type RowKind = 'open' | 'eqn' | 'close';

export interface Row {
  kind: RowKind;
  /** nesting level: 0 for the program's own jaxpr */
  depth: number;
  /** eqn rows: the equation's index in preorder over all equations; -1 otherwise */
  eqn: number;
  /** open rows: index of the matching close row; -1 otherwise */
  end: number;
  /** index of the open row of the jaxpr this row is in (-1 for the top open row) */
  parent: number;
  /** the jaxpr of an open/close row, the equation of an eqn row */
  jaxpr: Jaxpr | null;
  equation: Equation | null;
  /** open rows of nested jaxprs: the param holding it (`jaxpr`, `branches[1]`, ...) */
  param: string;
  /** open rows: equations inside, recursively */
  count: number;
}

export interface FlatJaxpr {
  rows: Row[];
  /** equation index -> row index */
  eqnRow: Int32Array;
  equations: number;
  avals: Aval[];
}

export function flatten(jaxpr: Jaxpr, avals: Aval[]): FlatJaxpr {
  const rows: Row[] = [];
  let eqnCount = 0;
  const eqnRows: number[] = [];
  const walk = (
    j: Jaxpr,
    depth: number,
    parent: number,
    param: string
  ): number => {
    const open = rows.length;
    rows.push({
      kind: 'open',
      depth,
      eqn: -1,
      end: -1,
      parent,
      jaxpr: j,
      equation: null,
      param,
      count: 0
    });
    const before = eqnCount;
    for (const eq of j.eqns) {
      eqnRows.push(rows.length);
      rows.push({
        kind: 'eqn',
        depth,
        eqn: eqnCount++,
        end: -1,
        parent: open,
        jaxpr: null,
        equation: eq,
        param: '',
        count: 0
      });
      if (eq.subjaxprs) {
        for (const sub of eq.subjaxprs) {
          walk(sub.jaxpr, depth + 1, open, sub.param);
        }
      }
    }
    rows[open].count = eqnCount - before;
    rows[open].end = rows.length;
    rows.push({
      kind: 'close',
      depth,
      eqn: -1,
      end: -1,
      parent: open,
      jaxpr: j,
      equation: null,
      param,
      count: 0
    });
    return open;
  };
  walk(jaxpr, 0, -1, '');
  return { rows, eqnRow: Int32Array.from(eqnRows), equations: eqnCount, avals };
}

/** Nested jaxprs deeper than `openDepth` start folded (their open rows' indices). */
export function defaultFolds(flat: FlatJaxpr, openDepth = 1): Set<number> {
  const out = new Set<number>();
  flat.rows.forEach((r, i) => {
    if (r.kind === 'open' && r.depth > openDepth) {
      out.add(i);
    }
  });
  return out;
}

/** Row indices shown given the folded open rows (a folded block shows its open row only). */
export function visibleRows(
  flat: FlatJaxpr,
  folded: ReadonlySet<number>
): Int32Array {
  const rows = flat.rows;
  const out = new Int32Array(rows.length);
  let n = 0;
  for (let i = 0; i < rows.length; i++) {
    out[n++] = i;
    if (rows[i].kind === 'open' && rows[i].depth > 0 && folded.has(i)) {
      i = rows[i].end;
    }
  }
  return out.slice(0, n);
}

/** Open rows enclosing row `row` (innermost first), e.g. to unfold before revealing it. */
export function ancestors(flat: FlatJaxpr, row: number): number[] {
  const out: number[] = [];
  let p = flat.rows[row].parent;
  while (p >= 0) {
    out.push(p);
    p = flat.rows[p].parent;
  }
  return out;
}

/**
 * The scope row `row`'s variables live in: the open row of the jaxpr whose binders or
 * equations they are (an open row binds its own invars/constvars; an equation or a close row
 * reads and writes its enclosing jaxpr's).  JAX's nested jaxprs are closed (no free
 * variables), and a jitted function called twice shares one jaxpr, so the same name in two
 * scopes is two different variables.
 */
export function scopeOf(flat: FlatJaxpr, row: number): number {
  const r = flat.rows[row];
  return r.kind === 'open' ? row : r.parent;
}

// -- text -------------------------------------------------------------------------------

export type SegKind =
  'var' | 'def' | 'type' | 'lit' | 'prim' | 'param' | 'kw' | 'punct';

export interface Segment {
  text: string;
  kind: SegKind;
  /** variable name for 'var'/'def' segments */
  name?: string;
}

const TYPED_SCALAR =
  /^Typed(?:Int|Float|Complex|Bool)\(([^]*), dtype=[\w.]+\)$/;

/**
 * A literal's value as JAX prints it: JAX 0.10 keeps Python scalars as `TypedInt(0,
 * dtype=int32)` (whose str() the payload carries), printed `0:i32[]`.
 */
export function literalText(text: string): string {
  if (!text.startsWith('Typed')) {
    return text;
  }
  const m = TYPED_SCALAR.exec(text);
  return m ? m[1] : text;
}

/** A param's text on one line (a custom_jvp's `jvp_jaxpr_fun` prints over several). */
export function paramText(text: string): string {
  return /[\r\n]/.test(text)
    ? text.replace(/[ \t]*[\r\n]+\s*/g, ' ').trim()
    : text;
}

function atomSegs(
  a: Atom,
  avals: Aval[],
  binding: boolean,
  out: Segment[]
): void {
  const type = avals[a[1]]?.text ?? '?';
  if (a.length === 3) {
    out.push(
      { text: literalText(a[2]), kind: 'lit' },
      { text: ':', kind: 'punct' },
      { text: type, kind: 'type' }
    );
  } else if (a[0] === '_') {
    out.push({ text: '_', kind: 'punct' });
    if (binding) {
      out.push({ text: ':', kind: 'punct' }, { text: type, kind: 'type' });
    }
  } else if (binding) {
    out.push(
      { text: a[0], kind: 'def', name: a[0] },
      { text: ':', kind: 'punct' },
      { text: type, kind: 'type' }
    );
  } else {
    out.push({ text: a[0], kind: 'var', name: a[0] });
  }
}

function atomsSegs(
  atoms: Atom[],
  avals: Aval[],
  binding: boolean,
  out: Segment[],
  sep = ' '
): void {
  atoms.forEach((a, i) => {
    if (i) {
      out.push({ text: sep, kind: 'punct' });
    }
    atomSegs(a, avals, binding, out);
  });
}

const CALLS = new Set(['jit', 'pjit', 'closed_call', 'core_call']);
const DEFAULT_TUPLE = /^\((?:(False|None|UnspecifiedValue)(?:, ?\1)*,?)?\)$/;

/** jit's params at their defaults, which JAX's printer leaves out too (its pjit pp rule). */
function isCallDefault(key: string, value: string): boolean {
  if (key === 'name') {
    return false;
  }
  if (value === 'False' && (key === 'keep_unused' || key === 'inline')) {
    return true;
  }
  if (key === 'inline' && value === 'Inline.AUTO') {
    return true; // JAX 0.12's default (an enum where it was False)
  }
  return value === 'Mesh()' || value === '{}' || DEFAULT_TUPLE.test(value);
}

/**
 * Params as JAX prints them, sorted, minus jaxpr-valued ones (shown as nested rows),
 * `None`s (defaults such as precision and accuracy) and a jit's default options.
 */
export function shownParams(eq: Equation): [string, string][] {
  const nested = eq.subjaxprs
    ? new Set(eq.subjaxprs.map(s => s.param.split('[', 1)[0]))
    : null;
  const call = CALLS.has(eq.primitive);
  const out: [string, string][] = [];
  for (const k in eq.params) {
    const v = eq.params[k];
    if (
      v === 'None' ||
      v === '<jaxpr>' ||
      nested?.has(k) ||
      (call && isCallDefault(k, v))
    ) {
      continue;
    }
    out.push([k, paramText(v)]);
  }
  return out.length > 1
    ? out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    : out;
}

/** The row's text as segments (without indentation). */
export function rowSegments(
  flat: FlatJaxpr,
  row: Row,
  folded = false
): Segment[] {
  const out: Segment[] = [];
  const avals = flat.avals;
  if (row.kind === 'eqn' && row.equation) {
    const eq = row.equation;
    atomsSegs(eq.outvars, avals, true, out);
    if (eq.outvars.length) {
      out.push({ text: ' = ', kind: 'punct' });
    } // JAX: no "=" without results
    out.push({ text: eq.primitive, kind: 'prim' });
    const params = shownParams(eq);
    if (params.length) {
      out.push({
        text: `[${params.map(([k, v]) => `${k}=${v}`).join(' ')}]`,
        kind: 'param'
      });
    }
    if (eq.invars.length) {
      out.push({ text: ' ', kind: 'punct' });
    }
    atomsSegs(eq.invars, avals, false, out);
  } else if (row.kind === 'open' && row.jaxpr) {
    const j = row.jaxpr;
    if (row.param) {
      out.push({ text: `${row.param}=`, kind: 'param' });
    }
    out.push({ text: '{ lambda ', kind: 'kw' });
    atomsSegs(j.constvars, avals, true, out);
    out.push({ text: '; ', kind: 'punct' }); // JAX: `lambda ; a` and `lambda a:f32[4]; b`
    atomsSegs(j.invars, avals, true, out);
    out.push({ text: '. ', kind: 'punct' }, { text: 'let', kind: 'kw' });
    if (folded) {
      out.push(
        {
          text: ` … ${row.count} equation${row.count === 1 ? '' : 's'} … `,
          kind: 'punct'
        },
        { text: 'in', kind: 'kw' },
        { text: ' (', kind: 'punct' }
      );
      atomsSegs(j.outvars, avals, false, out, ', ');
      out.push({
        text: j.outvars.length === 1 ? ',) }' : ') }',
        kind: 'punct'
      });
    }
  } else if (row.kind === 'close' && row.jaxpr) {
    out.push({ text: 'in', kind: 'kw' }, { text: ' (', kind: 'punct' });
    atomsSegs(row.jaxpr.outvars, avals, false, out, ', ');
    out.push({
      text: row.jaxpr.outvars.length === 1 ? ',) }' : ') }',
      kind: 'punct'
    });
  }
  return out;
}

function atomText(a: Atom, avals: Aval[], binding: boolean): string {
  if (a.length === 3) {
    return `${literalText(a[2])}:${avals[a[1]]?.text ?? '?'}`;
  }
  return binding ? `${a[0]}:${avals[a[1]]?.text ?? '?'}` : a[0];
}

/** An equation's text (what rowText gives for its row), built without segments: search. */
export function equationText(flat: FlatJaxpr, eq: Equation): string {
  const avals = flat.avals;
  let s = '';
  for (let i = 0; i < eq.outvars.length; i++) {
    s += (i ? ' ' : '') + atomText(eq.outvars[i], avals, true);
  }
  s += (eq.outvars.length ? ' = ' : '') + eq.primitive;
  const params = shownParams(eq);
  if (params.length) {
    s += `[${params.map(([k, v]) => `${k}=${v}`).join(' ')}]`;
  }
  for (const a of eq.invars) {
    s += ' ' + atomText(a, avals, false);
  }
  return s;
}

export function rowText(flat: FlatJaxpr, row: Row, folded = false): string {
  return rowSegments(flat, row, folded)
    .map(s => s.text)
    .join('');
}

// -- source lines ------------------------------------------------------------------------

export interface RowSources {
  /** equation index -> hub cell key of its source (null: not a cell) */
  cellOf: (string | null)[];
  /** equation index -> its source label ("cell [3] line 4", "model.py:12", "") */
  label: string[];
  /** equation index -> the text of its source line as the user wrote it ("" unknown) */
  text: string[];
  /** cell key -> the lines of that cell that produced equations */
  linesByCell: Map<string, Set<number>>;
}

/** The payload's `lines`: file -> line number (as a string) -> that line's text. */
export type SourceTexts = Record<string, Record<string, string>>;

export function rowSources(
  flat: FlatJaxpr,
  cells: CellMap,
  texts: SourceTexts = {}
): RowSources {
  const cellOf: (string | null)[] = new Array(flat.equations).fill(null);
  const label: string[] = new Array(flat.equations).fill('');
  const text: string[] = new Array(flat.equations).fill('');
  const linesByCell = new Map<string, Set<number>>();
  const keyCache = new Map<string, string | null>();
  for (const r of flat.rows) {
    const src = r.equation?.source;
    if (!src) {
      continue;
    }
    let key = keyCache.get(src.file);
    if (key === undefined) {
      key = fileCellKey(cells, src.file);
      keyCache.set(src.file, key);
    }
    cellOf[r.eqn] = key;
    label[r.eqn] = sourceLabel(cells, src);
    text[r.eqn] = texts[src.file]?.[String(src.line)] ?? '';
    if (key && src.line > 0) {
      let set = linesByCell.get(key);
      if (!set) {
        linesByCell.set(key, (set = new Set()));
      }
      set.add(src.line);
    }
  }
  return { cellOf, label, text, linesByCell };
}

/**
 * op_name scopes: `jit(loss)/transpose(jvp(jit(layer)))/dot_general` -> the user's function
 * nesting, for clustering.
 *
 * The last segment is the primitive and is dropped.  Autodiff wrappers are normalised:
 * `jvp(X)` is X's forward pass, `transpose(jvp(X))` (or `transpose(X)`) its backward pass.
 * Decision: the forward and backward of one function become two *paired* sibling clusters
 * (same name, `dir` 'fwd' / 'bwd', same pair key), never one cluster: the backward of layer
 * i consumes the forward of layer i and the backward of layer i+1, so one merged box per
 * layer would turn the cluster graph into a cycle (fwd i -> fwd i+1 -> ... -> bwd i+1 ->
 * bwd i) and the layered drawing would lose the program's direction.  An empty wrapper
 * (`jvp()`: a function that was not jitted) becomes a plain "forward" / "backward" scope.
 *
 * Call scopes: the workbench's own trace for `%%hlo` wraps each call of a user function in
 * `jax.named_scope("NAME#K")` (K counts the calls of NAME within the enclosing scope, from 0),
 * so `block#2` is the third call of `block` there: an *instance* (name `block`, index 2).
 * A user's own `jax.named_scope("attn")` has no `#K`.  XLA joins the op_names of the ops
 * it merged with `;`: their common scope is the instruction's.
 */

export type Direction = 'fwd' | 'bwd' | null;

export interface ScopeSegment {
  /** stable key of this segment among its siblings, e.g. `block#2@bwd`, `jit(layer)@fwd` */
  key: string;
  /** what the user reads, e.g. `block`, `layer` */
  name: string;
  /** K of a call scope `NAME#K`; null for any other scope */
  index: number | null;
  dir: Direction;
}

/** Split on `sep` outside parentheses and brackets (empty parts dropped). */
function splitTop(text: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[') {
      depth++;
    } else if ((c === ')' || c === ']') && depth > 0) {
      depth--;
    } else if (c === sep && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.filter(s => s.length > 0);
}

/** Split on `/` outside parentheses. */
export function splitOpName(opName: string): string[] {
  return splitTop(opName, '/');
}

const WRAPPER = /^([A-Za-z_][\w.]*)\((.*)\)$/s;
const CALL_SCOPE = /^(.+)#(\d+)$/s;

/** `jit(layer)` -> `layer`; `pjit(f)` -> `f`; anything else as it is. */
export function displayName(segment: string): string {
  const m = WRAPPER.exec(segment);
  if (m && (m[1] === 'jit' || m[1] === 'pjit') && m[2]) {
    return m[2];
  }
  return segment;
}

/** One op_name segment -> a scope segment (null: nothing left, e.g. a bare `jvp()`). */
export function normaliseSegment(segment: string): ScopeSegment | null {
  let s = segment.trim();
  let dir: Direction = null;
  for (;;) {
    const m = WRAPPER.exec(s);
    if (!m) {
      break;
    }
    if (m[1] === 'transpose') {
      dir = 'bwd';
      s = m[2];
    } else if (m[1] === 'jvp') {
      if (dir === null) {
        dir = 'fwd';
      }
      s = m[2];
    } else {
      break;
    }
  }
  if (!s) {
    if (dir === null) {
      return null;
    }
    return {
      key: `@${dir}`,
      name: dir === 'fwd' ? 'forward' : 'backward',
      index: null,
      dir
    };
  }
  const call = CALL_SCOPE.exec(s);
  const key = dir ? `${s}@${dir}` : s;
  if (call) {
    return { key, name: call[1], index: Number(call[2]), dir };
  }
  return { key, name: displayName(s), index: null, dir };
}

/** One `/`-path (primitive dropped, wrappers normalised). */
function onePath(opName: string): ScopeSegment[] {
  const segs = splitOpName(opName);
  segs.pop();
  const out: ScopeSegment[] = [];
  for (const seg of segs) {
    const n = normaliseSegment(seg);
    if (n) {
      out.push(n);
    }
  }
  return out;
}

/**
 * The scope path of an op_name (primitive dropped, wrappers normalised); for op_names XLA
 * joined with `;`, the scopes they share.
 */
export function scopePath(opName: string | undefined | null): ScopeSegment[] {
  if (!opName) {
    return [];
  }
  const parts = splitTop(opName, ';');
  let path = onePath(parts[0] ?? '');
  for (let k = 1; k < parts.length && path.length; k++) {
    const other = onePath(parts[k]);
    let n = 0;
    while (
      n < path.length &&
      n < other.length &&
      path[n].key === other[n].key
    ) {
      n++;
    }
    path = path.slice(0, n);
  }
  return path;
}

/** Scopes JAX itself opens: its jitted helpers, einsum's spec, control flow's inner names. */
const JAX_SCOPES = new Set([
  'while',
  'body',
  'cond',
  'eval_jaxpr',
  'scan',
  'checkpoint',
  'remat',
  'rematted_computation',
  'custom_jvp_call',
  'custom_vjp_call',
  'custom_vjp_call_jaxpr'
]);

/**
 * In a program traced with call scopes, the scopes worth a box: the calls (`NAME#K`), the
 * user's own named scopes and the forward / backward halves; not JAX's own (`jit(_where)`,
 * an einsum's `bthd,bshd->bhts`, `while/body/eval_jaxpr`: their ops belong to the call
 * around them).  A user function that was jitted shows as its `jit(f)` and, inside, its
 * call scope `f#0`: the latter stays.
 */
export function isUserScope(seg: ScopeSegment): boolean {
  if (seg.index !== null || seg.key.startsWith('@')) {
    return true;
  }
  const s = seg.key.replace(/@(fwd|bwd)$/, '');
  if (WRAPPER.test(s) || s.includes('->') || JAX_SCOPES.has(s)) {
    return false;
  }
  return !/^branch_\d+_fun$/.test(s);
}

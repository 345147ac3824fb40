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
 */

export type Direction = 'fwd' | 'bwd' | null;

export interface ScopeSegment {
  /** stable key of this segment among its siblings, e.g. `jit(layer)@bwd` */
  key: string;
  /** what the user reads, e.g. `layer` */
  name: string;
  dir: Direction;
}

/** Split on `/` outside parentheses. */
export function splitOpName(opName: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < opName.length; i++) {
    const c = opName[i];
    if (c === '(' || c === '[') {
      depth++;
    } else if ((c === ')' || c === ']') && depth > 0) {
      depth--;
    } else if (c === '/' && depth === 0) {
      out.push(opName.slice(start, i));
      start = i + 1;
    }
  }
  out.push(opName.slice(start));
  return out.filter(s => s.length > 0);
}

const WRAPPER = /^([A-Za-z_][\w.]*)\((.*)\)$/s;

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
      dir
    };
  }
  return { key: dir ? `${s}@${dir}` : s, name: displayName(s), dir };
}

/** The scope path of an op_name (primitive dropped, wrappers normalised). */
export function scopePath(opName: string | undefined | null): ScopeSegment[] {
  if (!opName) {
    return [];
  }
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

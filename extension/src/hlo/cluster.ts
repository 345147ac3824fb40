/**
 * Clustering of an HLO graph by op_name scope, so a 24-layer model reads as its layers.
 *
 * 1. Each node's scope path comes from its op_name (scope.ts); nodes without one (fusions
 *    XLA made without metadata, tuples) take the scope most of their operands (else users)
 *    have.  A scope every node shares (`jit(loss)`) is dropped: one box around everything
 *    says nothing.
 * 2. Scopes form a tree; nodes are direct members of their innermost scope.
 * 3. A scope with many direct members and no finer scopes (the layers of a loop in Python
 *    that did not jit or name_scope them) is split into *repeats*: the source line that
 *    recurs most regularly (the most common occurrence count among the members' lines, its
 *    earliest line) starts a new repeat at each occurrence, in program order.  Repeats are
 *    named after their commonest function: `block #3`; backward repeats count down, as the
 *    backward pass runs the layers in reverse (repeats.ts).
 * 4. Parameters form one group, constants another.
 *
 * What is drawn with some clusters open is visible.ts's.
 */

import type { GraphIndex } from './graph';
import { splitRepeats } from './repeats';
import { scopePath, type Direction, type ScopeSegment } from './scope';

export type ClusterKind = 'scope' | 'repeat' | 'group';

export interface Cluster {
  id: string;
  label: string;
  kind: ClusterKind;
  dir: Direction;
  parent: number;
  children: number[];
  /** direct member nodes */
  members: number[];
  /** all nodes under it */
  size: number;
  /** sum of members' bytes_moved (estimate) */
  bytesMoved: number;
}

export interface ClusterTree {
  clusters: Cluster[];
  /** top-level clusters and nodes (nodes in no cluster) */
  topClusters: number[];
  topNodes: number[];
  /** innermost cluster of each node, -1: none */
  nodeCluster: Int32Array;
}

export interface ClusterOptions {
  /** a scope with more direct members than this is split into repeats */
  maxLeaf?: number;
}

function inferMissingScopes(
  g: GraphIndex,
  paths: (ScopeSegment[] | null)[]
): void {
  // null: a group node (parameter/constant), never given a scope; [] with no op_name: unknown
  const n = g.nodes.length;
  const known = paths.map(
    (p, i) => p !== null && (p.length > 0 || g.opNames[i] !== '')
  );
  const preds: number[][] = Array.from({ length: n }, () => []);
  const succs: number[][] = Array.from({ length: n }, () => []);
  for (let e = 0; e < g.src.length; e++) {
    preds[g.dst[e]].push(g.src[e]);
    succs[g.src[e]].push(g.dst[e]);
  }
  const pick = (cands: number[]): ScopeSegment[] | null => {
    const votes = new Map<string, { path: ScopeSegment[]; n: number }>();
    for (const c of cands) {
      if (!known[c]) {
        continue;
      }
      const p = paths[c] as ScopeSegment[];
      const key = p.map(s => s.key).join('/');
      const v = votes.get(key);
      if (v) {
        v.n++;
      } else {
        votes.set(key, { path: p, n: 1 });
      }
    }
    let best: { path: ScopeSegment[]; n: number } | null = null;
    for (const v of votes.values()) {
      if (!best || v.n > best.n) {
        best = v;
      }
    }
    return best ? best.path : null;
  };
  for (let pass = 0; pass < 4; pass++) {
    let changed = false;
    const order =
      pass % 2 === 0 ? [...Array(n).keys()] : [...Array(n).keys()].reverse();
    for (const i of order) {
      if (known[i] || paths[i] === null) {
        continue;
      }
      const p = pick(preds[i]) ?? pick(succs[i]);
      if (p) {
        paths[i] = p;
        known[i] = true;
        changed = true;
      }
    }
    if (!changed) {
      break;
    }
  }
}

function shortFunction(name: string): string {
  const parts = name.split('.');
  return parts[parts.length - 1] || name;
}

/** A scope path per node (phase 1); null for parameters and constants (groups, phase 4). */
function scopePaths(g: GraphIndex): (ScopeSegment[] | null)[] {
  const paths: (ScopeSegment[] | null)[] = g.nodes.map((node, i) =>
    node.kind === 'parameter' || node.kind === 'constant'
      ? null
      : scopePath(g.opNames[i])
  );
  inferMissingScopes(g, paths);
  dropSharedHead(paths);
  return paths;
}

/** Drop leading scopes every scoped node shares (nodes directly in one become loose). */
function dropSharedHead(paths: (ScopeSegment[] | null)[]): void {
  for (;;) {
    let head: string | null = null;
    let all = true;
    let any = false;
    for (const p of paths) {
      if (p === null) {
        continue;
      }
      if (p.length < 1) {
        all = false;
        break;
      }
      any = true;
      if (head === null) {
        head = p[0].key;
      } else if (p[0].key !== head) {
        all = false;
        break;
      }
    }
    if (!all || !any) {
      return;
    }
    for (let i = 0; i < paths.length; i++) {
      const p = paths[i];
      if (p) {
        paths[i] = p.slice(1);
      }
    }
  }
}

/**
 * The scopes that hold nothing but one inner scope: drawn as one box with both names
 * (`while / body / cond`), not as frames nested around one another.
 */
function passThroughScopes(
  paths: (ScopeSegment[] | null)[]
): (key: string) => boolean {
  const direct = new Map<string, number>();
  const inner = new Map<string, Set<string>>();
  for (const p of paths) {
    if (p === null) {
      continue;
    }
    let key = '';
    for (const seg of p) {
      const next = key ? `${key}/${seg.key}` : seg.key;
      if (key) {
        let set = inner.get(key);
        if (!set) {
          inner.set(key, (set = new Set()));
        }
        set.add(next);
      }
      key = next;
    }
    if (key) {
      direct.set(key, (direct.get(key) ?? 0) + 1);
    }
  }
  return key => !direct.has(key) && (inner.get(key)?.size ?? 0) === 1;
}

/** A cluster tree being built: clusters are appended, parents before their children. */
class TreeBuilder {
  readonly clusters: Cluster[] = [];
  readonly topClusters: number[] = [];
  readonly topNodes: number[] = [];

  make(
    id: string,
    label: string,
    kind: ClusterKind,
    dir: Direction,
    parent: number
  ): number {
    const c = this.clusters.length;
    this.clusters.push({
      id,
      label,
      kind,
      dir,
      parent,
      children: [],
      members: [],
      size: 0,
      bytesMoved: 0
    });
    if (parent >= 0) {
      this.clusters[parent].children.push(c);
    } else {
      this.topClusters.push(c);
    }
    return c;
  }
}

/** A scope segment's label: its name, and its direction when the name does not say it. */
function segmentLabel(seg: ScopeSegment): string {
  return seg.dir && seg.key !== `@${seg.dir}`
    ? `${seg.name} · ${seg.dir === 'fwd' ? 'forward' : 'backward'}`
    : seg.name;
}

/**
 * 2. The scope tree: each scoped node becomes a direct member of its innermost scope (or
 * a top node); returns the parameters and constants, left for their groups.
 */
function placeInScopes(
  g: GraphIndex,
  paths: (ScopeSegment[] | null)[],
  t: TreeBuilder
): { params: number[]; consts: number[] } {
  const passThrough = passThroughScopes(paths);
  const byPath = new Map<string, number>();
  const params: number[] = [];
  const consts: number[] = [];
  for (let i = 0; i < paths.length; i++) {
    const p = paths[i];
    if (p === null) {
      (g.nodes[i].kind === 'parameter' ? params : consts).push(i);
      continue;
    }
    let parent = -1;
    let key = '';
    let dir: Direction = null;
    let prefix = '';
    for (const seg of p) {
      key = key ? `${key}/${seg.key}` : seg.key;
      if (seg.dir) {
        dir = seg.dir;
      }
      const label = segmentLabel(seg);
      if (passThrough(key)) {
        prefix += `${label} / `;
        continue;
      }
      let c = byPath.get(key);
      if (c === undefined) {
        c = t.make(`scope:${key}`, prefix + label, 'scope', dir, parent);
        byPath.set(key, c);
      }
      prefix = '';
      parent = c;
    }
    if (parent >= 0) {
      t.clusters[parent].members.push(i);
    } else {
      t.topNodes.push(i);
    }
  }
  return { params, consts };
}

/** The commonest (short) function name among a repeat's source lines, else 'repeat'. */
function commonestFunction(g: GraphIndex, seg: number[]): string {
  const fnCount = new Map<string, number>();
  for (const i of seg) {
    for (const src of g.nodes[i].sources ?? []) {
      const f = shortFunction(src.function);
      fnCount.set(f, (fnCount.get(f) ?? 0) + 1);
    }
  }
  let fn = 'repeat';
  let best = 0;
  for (const [f, k] of fnCount) {
    if (k > best) {
      fn = f;
      best = k;
    }
  }
  return fn;
}

/** 3. Repeats inside big flat scopes: `block #3`, counting down in a backward scope. */
function splitBigScopes(g: GraphIndex, t: TreeBuilder, maxLeaf: number): void {
  const scopeCount = t.clusters.length;
  for (let c = 0; c < scopeCount; c++) {
    const cl = t.clusters[c];
    if (cl.members.length <= maxLeaf) {
      continue;
    }
    const segs = splitRepeats(g, cl.members);
    if (!segs) {
      continue;
    }
    cl.members = [];
    segs.forEach((seg, s) => {
      const fn = commonestFunction(g, seg);
      const num = cl.dir === 'bwd' ? segs.length - s : s + 1;
      const label = `${fn} #${num}${cl.dir === 'bwd' ? ' · backward' : cl.dir === 'fwd' ? ' · forward' : ''}`;
      const r = t.make(`${cl.id}#${s}`, label, 'repeat', cl.dir, c);
      t.clusters[r].members = seg;
    });
  }
}

/** 4. Parameters in one group, constants in another (a lone one stays a top node). */
function addGroups(t: TreeBuilder, params: number[], consts: number[]): void {
  if (params.length >= 2) {
    const c = t.make(
      'group:parameters',
      `parameters (${params.length})`,
      'group',
      null,
      -1
    );
    t.clusters[c].members = params;
  } else {
    t.topNodes.push(...params);
  }
  if (consts.length >= 2) {
    const c = t.make(
      'group:constants',
      `constants (${consts.length})`,
      'group',
      null,
      -1
    );
    t.clusters[c].members = consts;
  } else {
    t.topNodes.push(...consts);
  }
  t.topNodes.sort((a, b) => a - b);
}

/** Each node's innermost cluster, and sizes and bytes summed bottom-up. */
function finishTree(g: GraphIndex, t: TreeBuilder): ClusterTree {
  const { clusters } = t;
  const nodeCluster = new Int32Array(g.nodes.length).fill(-1);
  for (let c = 0; c < clusters.length; c++) {
    for (const i of clusters[c].members) {
      nodeCluster[i] = c;
    }
  }
  // children are created after their parents
  for (let c = clusters.length - 1; c >= 0; c--) {
    const cl = clusters[c];
    cl.size += cl.members.length;
    for (const i of cl.members) {
      cl.bytesMoved += g.nodes[i].bytes_moved;
    }
    if (cl.parent >= 0) {
      clusters[cl.parent].size += cl.size;
      clusters[cl.parent].bytesMoved += cl.bytesMoved;
    }
  }
  const { topClusters, topNodes } = t;
  return { clusters, topClusters, topNodes, nodeCluster };
}

/** The cluster tree of `g`, phase by phase (see the top of this file). */
export function buildClusters(
  g: GraphIndex,
  options: ClusterOptions = {}
): ClusterTree {
  const maxLeaf = options.maxLeaf ?? 40;
  const paths = scopePaths(g);
  const t = new TreeBuilder();
  const { params, consts } = placeInScopes(g, paths, t);
  splitBigScopes(g, t, maxLeaf);
  addGroups(t, params, consts);
  return finishTree(g, t);
}

/** Ancestors of cluster c, outermost first, c last. */
export function clusterPath(tree: ClusterTree, c: number): number[] {
  const out: number[] = [];
  for (let k = c; k >= 0; k = tree.clusters[k].parent) {
    out.unshift(k);
  }
  return out;
}

/**
 * The clusters to open first: repeatedly open the biggest visible scope while the drawing
 * stays within `target` boxes (groups and repeats, the layers, stay folded).
 */
export function initialExpansion(tree: ClusterTree, target = 64): Set<number> {
  const expanded = new Set<number>();
  let visible = tree.topClusters.length + tree.topNodes.length;
  const frontier = new Set<number>(tree.topClusters);
  for (;;) {
    let best = -1;
    for (const c of frontier) {
      const cl = tree.clusters[c];
      if (cl.kind === 'group' || cl.kind === 'repeat') {
        continue;
      }
      const grow = cl.children.length + cl.members.length - 1;
      if (visible + grow > target) {
        continue;
      }
      if (best < 0 || cl.size > tree.clusters[best].size) {
        best = c;
      }
    }
    if (best < 0) {
      break;
    }
    const cl = tree.clusters[best];
    visible += cl.children.length + cl.members.length - 1;
    expanded.add(best);
    frontier.delete(best);
    for (const ch of cl.children) {
      frontier.add(ch);
    }
  }
  return expanded;
}

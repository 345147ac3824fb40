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
 *    backward pass runs the layers in reverse.
 * 4. Parameters form one group, constants another.
 */

import type { GraphIndex } from './graph';
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

function sourceKey(g: GraphIndex, i: number): string | null {
  const srcs = g.nodes[i].sources;
  if (!srcs || srcs.length === 0) {
    return null;
  }
  let best = srcs[0];
  for (const s of srcs) {
    if (s.file < best.file || (s.file === best.file && s.line < best.line)) {
      best = s;
    }
  }
  return `${best.file}:${best.line}`;
}

function shortFunction(name: string): string {
  const parts = name.split('.');
  return parts[parts.length - 1] || name;
}

/** Split `members` (program order) into repeats at a regularly recurring source line. */
const EVEN = 0.5;
/** share of members whose line recurs across the pieces for a cut to count as repeats */
const SHARED = 0.5;
/** how many of the best cuts are checked for shared code */
const MAX_CHECKS = 24;

export function splitRepeats(
  g: GraphIndex,
  members: number[]
): number[][] | null {
  const keys = members.map(i => sourceKey(g, i));
  const count = new Map<string, number>();
  const first = new Map<string, number>();
  keys.forEach((k, pos) => {
    if (k === null) {
      return;
    }
    count.set(k, (count.get(k) ?? 0) + 1);
    if (!first.has(k)) {
      first.set(k, pos);
    }
  });
  // the period k (how many repeats) and the anchor line that starts each one.  A layer
  // may run a line several times (layer_norm twice, three projections on one line), so k is
  // any occurrence count or the gcd of two; a line occurring c = j*k times starts a repeat
  // at every j-th occurrence.  Among all (k, line) whose lines cover at least half the
  // members, the most repeats that are still even (sizes within half a mean repeat) win,
  // else the most even cut.
  const positions = new Map<string, number[]>();
  keys.forEach((key, pos) => {
    if (key === null) {
      return;
    }
    let a = positions.get(key);
    if (!a) {
      positions.set(key, (a = []));
    }
    a.push(pos);
  });
  const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
  const distinct = [
    ...new Set([...positions.values()].map(p => p.length))
  ].filter(c => c >= 2);
  const ks = new Set<number>(distinct);
  for (const c1 of distinct) {
    for (const c2 of distinct) {
      ks.add(gcd(c1, c2));
    }
  }
  const covered = (k: number): number => {
    let s = 0;
    for (const ps of positions.values()) {
      if (ps.length % k === 0) {
        s += ps.length;
      }
    }
    return s;
  };
  let best = 0;
  const cands = [...ks].filter(k => k >= 2 && k <= members.length / 2);
  const cover = new Map<number, number>();
  for (const k of cands) {
    cover.set(k, covered(k));
    best = Math.max(best, cover.get(k) as number);
  }
  if (best === 0) {
    return null;
  }
  // a cut is only a repeat when the pieces hold the same code: most members' lines must run
  // in at least two pieces and half of them, the same number of times in each (a straight
  // program whose lines each run twice, a helper called at a few places, lines strewn
  // without order must not be cut into invented layers)
  const recurring = (at: number[]): number => {
    const counts = new Map<string, Map<number, number>>();
    let piece = 0;
    let keyed = 0;
    keys.forEach((key, pos) => {
      while (piece + 1 < at.length && pos >= at[piece + 1]) {
        piece++;
      }
      if (key === null) {
        return;
      }
      keyed++;
      let per = counts.get(key);
      if (!per) {
        counts.set(key, (per = new Map()));
      }
      per.set(piece, (per.get(piece) ?? 0) + 1);
    });
    const need = Math.max(2, Math.ceil(at.length / 2));
    let shared = 0;
    for (const per of counts.values()) {
      if (per.size < need) {
        continue;
      }
      let lo = Infinity;
      let hi = 0;
      let total = 0;
      for (const c of per.values()) {
        lo = Math.min(lo, c);
        hi = Math.max(hi, c);
        total += c;
      }
      if (lo === hi) {
        shared += total;
      }
    }
    return keyed ? shared / keyed : 0;
  };
  // every (k, anchor line) cut, best first: even ones (every repeat within half a mean
  // repeat of the others) with the most repeats, then the most even; the first whose pieces
  // hold the same code wins (a bounded number are checked: each check reads all members)
  const options: Array<{ at: number[]; cost: number; k: number }> = [];
  for (const kk of cands) {
    if ((cover.get(kk) as number) < 0.5 * best) {
      continue;
    }
    for (const ps of positions.values()) {
      if (ps.length % kk !== 0) {
        continue;
      }
      const j = ps.length / kk;
      const at: number[] = [];
      for (let i = 0; i < ps.length; i += j) {
        at.push(ps[i]);
      }
      let lo = Infinity;
      let hi = 0;
      // the first and last repeats also hold what runs before and after the loop: judge
      // evenness on the inner ones when there are any
      const inner = at.length >= 4;
      for (
        let i = inner ? 1 : 0;
        i < (inner ? at.length - 1 : at.length);
        i++
      ) {
        const len =
          (i + 1 < at.length ? at[i + 1] : members.length) -
          (i === 0 ? 0 : at[i]);
        lo = Math.min(lo, len);
        hi = Math.max(hi, len);
      }
      options.push({ at, cost: (hi - lo) / (members.length / kk), k: kk });
    }
  }
  options.sort((a, b) => {
    const ea = a.cost <= EVEN;
    const eb = b.cost <= EVEN;
    if (ea !== eb) {
      return ea ? -1 : 1;
    }
    if (ea && a.k !== b.k) {
      return b.k - a.k;
    }
    return a.cost - b.cost;
  });
  let cuts: number[] | null = null;
  for (const o of options.slice(0, MAX_CHECKS)) {
    if (recurring(o.at) >= SHARED) {
      cuts = o.at;
      break;
    }
  }
  if (cuts === null) {
    return null;
  }
  const cutSet = new Set(cuts.slice(1));
  const segments: number[][] = [];
  let cur: number[] = [];
  members.forEach((m, pos) => {
    if (cutSet.has(pos) && cur.length > 0) {
      segments.push(cur);
      cur = [];
    }
    cur.push(m);
  });
  if (cur.length) {
    segments.push(cur);
  }
  return segments.length >= 2 ? segments : null;
}

export function buildClusters(
  g: GraphIndex,
  options: ClusterOptions = {}
): ClusterTree {
  const maxLeaf = options.maxLeaf ?? 40;
  const n = g.nodes.length;
  const paths: (ScopeSegment[] | null)[] = g.nodes.map((node, i) =>
    node.kind === 'parameter' || node.kind === 'constant'
      ? null
      : scopePath(g.opNames[i])
  );
  inferMissingScopes(g, paths);

  // drop a leading scope every scoped node shares (nodes directly in it become loose)
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
      break;
    }
    for (let i = 0; i < n; i++) {
      const p = paths[i];
      if (p) {
        paths[i] = p.slice(1);
      }
    }
  }

  const clusters: Cluster[] = [];
  const byPath = new Map<string, number>();
  const topClusters: number[] = [];
  const topNodes: number[] = [];
  const nodeCluster = new Int32Array(n).fill(-1);
  const make = (
    id: string,
    label: string,
    kind: ClusterKind,
    dir: Direction,
    parent: number
  ): number => {
    const c = clusters.length;
    clusters.push({
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
      clusters[parent].children.push(c);
    } else {
      topClusters.push(c);
    }
    return c;
  };

  // a scope that holds nothing but one inner scope is drawn as one box with both names
  // (`while / body / cond`), not as frames nested around one another
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
  const passThrough = (key: string): boolean =>
    !direct.has(key) && (inner.get(key)?.size ?? 0) === 1;

  const params: number[] = [];
  const consts: number[] = [];
  for (let i = 0; i < n; i++) {
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
      const label =
        seg.dir && seg.key !== `@${seg.dir}`
          ? `${seg.name} · ${seg.dir === 'fwd' ? 'forward' : 'backward'}`
          : seg.name;
      if (passThrough(key)) {
        prefix += `${label} / `;
        continue;
      }
      let c = byPath.get(key);
      if (c === undefined) {
        c = make(`scope:${key}`, prefix + label, 'scope', dir, parent);
        byPath.set(key, c);
      }
      prefix = '';
      parent = c;
    }
    if (parent >= 0) {
      clusters[parent].members.push(i);
    } else {
      topNodes.push(i);
    }
  }

  // repeats inside big flat scopes
  const scopeCount = clusters.length;
  for (let c = 0; c < scopeCount; c++) {
    const cl = clusters[c];
    if (cl.members.length <= maxLeaf) {
      continue;
    }
    const segs = splitRepeats(g, cl.members);
    if (!segs) {
      continue;
    }
    cl.members = [];
    segs.forEach((seg, s) => {
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
      const num = cl.dir === 'bwd' ? segs.length - s : s + 1;
      const label = `${fn} #${num}${cl.dir === 'bwd' ? ' · backward' : cl.dir === 'fwd' ? ' · forward' : ''}`;
      const r = make(`${cl.id}#${s}`, label, 'repeat', cl.dir, c);
      clusters[r].members = seg;
    });
  }

  if (params.length >= 2) {
    make(
      'group:parameters',
      `parameters (${params.length})`,
      'group',
      null,
      -1
    );
  } else {
    topNodes.push(...params);
  }
  if (params.length >= 2) {
    clusters[clusters.length - 1].members = params;
  }
  if (consts.length >= 2) {
    const c = make(
      'group:constants',
      `constants (${consts.length})`,
      'group',
      null,
      -1
    );
    clusters[c].members = consts;
  } else {
    topNodes.push(...consts);
  }
  topNodes.sort((a, b) => a - b);

  for (let c = 0; c < clusters.length; c++) {
    for (const i of clusters[c].members) {
      nodeCluster[i] = c;
    }
  }
  // sizes bottom-up (children are created after their parents)
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
  return { clusters, topClusters, topNodes, nodeCluster };
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

export interface VisibleItem {
  kind: 'node' | 'cluster';
  /** node index or cluster index */
  ref: number;
}

export interface VisibleGraph {
  items: VisibleItem[];
  /** node -> item drawing it */
  rep: Int32Array;
  /** cluster -> item drawing it (-1: expanded, or inside a folded one) */
  clusterItem: Int32Array;
  /** aggregated edges between items */
  src: Int32Array;
  dst: Int32Array;
  count: Int32Array;
  bytes: Float64Array;
  /** expanded clusters and the items drawn inside them (for frames) */
  frames: Array<{ cluster: number; items: number[] }>;
}

export function visibleGraph(
  g: GraphIndex,
  tree: ClusterTree,
  expanded: Set<number>
): VisibleGraph {
  const items: VisibleItem[] = [];
  const n = g.nodes.length;
  const rep = new Int32Array(n).fill(-1);
  const clusterRep = new Int32Array(tree.clusters.length).fill(-1);
  const clusterItem = new Int32Array(tree.clusters.length).fill(-1);
  const frames: Array<{ cluster: number; items: number[] }> = [];
  const frameOf = new Int32Array(tree.clusters.length).fill(-1);

  const visit = (c: number): void => {
    const cl = tree.clusters[c];
    if (!expanded.has(c)) {
      clusterItem[c] = items.length;
      clusterRep[c] = items.length;
      items.push({ kind: 'cluster', ref: c });
      return;
    }
    frameOf[c] = frames.length;
    frames.push({ cluster: c, items: [] });
    for (const i of cl.members) {
      rep[i] = items.length;
      items.push({ kind: 'node', ref: i });
    }
    for (const ch of cl.children) {
      visit(ch);
    }
  };
  // items in program order of their first node keeps the layout's initial order natural
  const tops: Array<[number, boolean]> = [];
  for (const c of tree.topClusters) {
    tops.push([c, true]);
  }
  for (const i of tree.topNodes) {
    tops.push([i, false]);
  }
  for (const [ref, isCluster] of tops) {
    if (isCluster) {
      visit(ref);
    } else {
      rep[ref] = items.length;
      items.push({ kind: 'node', ref });
    }
  }
  // nodes inside folded clusters
  for (let c = 0; c < tree.clusters.length; c++) {
    const p = tree.clusters[c].parent;
    if (clusterRep[c] === -1 && p >= 0 && clusterRep[p] !== -1) {
      clusterRep[c] = clusterRep[p];
    }
  }
  for (let i = 0; i < n; i++) {
    if (rep[i] !== -1) {
      continue;
    }
    const c = tree.nodeCluster[i];
    rep[i] = c >= 0 ? clusterRep[c] : -1;
  }
  // frames: every item under an expanded cluster belongs to its frame and its ancestors'
  items.forEach((it, k) => {
    let c =
      it.kind === 'cluster'
        ? tree.clusters[it.ref].parent
        : tree.nodeCluster[it.ref];
    for (; c >= 0; c = tree.clusters[c].parent) {
      if (frameOf[c] >= 0) {
        frames[frameOf[c]].items.push(k);
      }
    }
  });

  const m = items.length;
  const agg = new Map<number, number>();
  const es: number[] = [];
  const ed: number[] = [];
  const ec: number[] = [];
  const eb: number[] = [];
  for (let e = 0; e < g.src.length; e++) {
    const a = rep[g.src[e]];
    const b = rep[g.dst[e]];
    if (a < 0 || b < 0 || a === b) {
      continue;
    }
    const key = a * m + b;
    const k = agg.get(key);
    if (k === undefined) {
      agg.set(key, es.length);
      es.push(a);
      ed.push(b);
      ec.push(1);
      eb.push(g.edgeBytes[e]);
    } else {
      ec[k]++;
      eb[k] += g.edgeBytes[e];
    }
  }
  return {
    items,
    rep,
    clusterItem,
    frames,
    src: Int32Array.from(es),
    dst: Int32Array.from(ed),
    count: Int32Array.from(ec),
    bytes: Float64Array.from(eb)
  };
}

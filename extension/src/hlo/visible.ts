/**
 * What is drawn of a clustered graph (cluster.ts) with some clusters open: one item per
 * folded cluster and per node outside one, the frames of the open clusters, and the
 * graph's edges bundled between items.
 *
 * Bundling, so that a folded drawing reads as a diagram, not a hairball:
 * - at most one edge per pair of items, whichever way the data flows (`count` and `bytes`
 *   summed, `both` when it flows both ways);
 * - a folded group of parameters or constants draws no edges: dozens of lines out of one
 *   "parameters" box say only that every layer reads weights, and cross everything.  Each
 *   item reads its count instead (`inputs`: how many of the group's values it reads); the
 *   edges come back once the group is opened;
 * - into or out of a folded cluster, an edge that a longer path of drawn edges already
 *   implies is left out (`implied` counts them): the backward of block 23 feeds the
 *   backward of every earlier block, and the loss's sign (d|x|/dx) every block's backward,
 *   but what reads is the chain loss -> 23 -> 22 -> ... -> 0.
 */

import type { ClusterTree } from './cluster';
import type { GraphIndex } from './graph';
import { backEdges } from './layout';

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
  /** bundled edges between items (see the top of this file) */
  src: Int32Array;
  dst: Int32Array;
  count: Int32Array;
  bytes: Float64Array;
  /** 1: data flows both ways between the two items */
  both: Uint8Array;
  /** per item: the parameters and constants of folded groups it reads (their edges not drawn) */
  inputs: Int32Array;
  /** edges into or out of folded clusters left out as a longer path implies them */
  implied: number;
  /** expanded clusters and the items drawn inside them (for frames) */
  frames: Array<{ cluster: number; items: number[] }>;
}

/** The items drawn, in program order, and which item draws each node and folded cluster. */
interface ItemPlacement {
  items: VisibleItem[];
  rep: Int32Array;
  clusterRep: Int32Array;
  clusterItem: Int32Array;
  frames: Array<{ cluster: number; items: number[] }>;
  /** cluster -> its frame's index (-1: folded) */
  frameOf: Int32Array;
}

/**
 * One item per folded cluster and per node outside one: the top-level clusters first (an
 * expanded one gets a frame and lists its members, then its children), then the loose
 * nodes in program order.
 */
function placeItems(
  g: GraphIndex,
  tree: ClusterTree,
  expanded: Set<number>
): ItemPlacement {
  const items: VisibleItem[] = [];
  const rep = new Int32Array(g.nodes.length).fill(-1);
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
  for (const c of tree.topClusters) {
    visit(c);
  }
  for (const i of tree.topNodes) {
    rep[i] = items.length;
    items.push({ kind: 'node', ref: i });
  }
  return { items, rep, clusterRep, clusterItem, frames, frameOf };
}

/** Nodes inside folded clusters are drawn by the outermost folded cluster's item. */
function repsInsideFolded(tree: ClusterTree, pl: ItemPlacement): void {
  const { rep, clusterRep } = pl;
  for (let c = 0; c < tree.clusters.length; c++) {
    const p = tree.clusters[c].parent;
    if (clusterRep[c] === -1 && p >= 0 && clusterRep[p] !== -1) {
      clusterRep[c] = clusterRep[p];
    }
  }
  for (let i = 0; i < rep.length; i++) {
    if (rep[i] !== -1) {
      continue;
    }
    const c = tree.nodeCluster[i];
    rep[i] = c >= 0 ? clusterRep[c] : -1;
  }
}

/** Every item under an expanded cluster belongs to its frame and its ancestors' frames. */
function fillFrames(tree: ClusterTree, pl: ItemPlacement): void {
  pl.items.forEach((it, k) => {
    let c =
      it.kind === 'cluster'
        ? tree.clusters[it.ref].parent
        : tree.nodeCluster[it.ref];
    for (; c >= 0; c = tree.clusters[c].parent) {
      if (pl.frameOf[c] >= 0) {
        pl.frames[pl.frameOf[c]].items.push(k);
      }
    }
  });
}

/** Items that draw a folded group of parameters or constants. */
function groupItems(tree: ClusterTree, items: VisibleItem[]): Uint8Array {
  const out = new Uint8Array(items.length);
  items.forEach((it, k) => {
    if (it.kind === 'cluster' && tree.clusters[it.ref].kind === 'group') {
      out[k] = 1;
    }
  });
  return out;
}

type Bundled = Pick<
  VisibleGraph,
  'src' | 'dst' | 'count' | 'bytes' | 'both' | 'inputs'
>;

/**
 * The graph's edges between items, one per pair of items (counted, bytes summed, `both`
 * when they go both ways); a folded group's edges become its readers' `inputs`.
 */
function bundleEdges(
  g: GraphIndex,
  rep: Int32Array,
  isGroup: Uint8Array
): Bundled {
  const n = isGroup.length;
  const agg = new Map<number, number>();
  const es: number[] = [];
  const ed: number[] = [];
  const ec: number[] = [];
  const eb: number[] = [];
  const both: number[] = [];
  const inputs = new Int32Array(n);
  const seenInput = new Set<number>();
  for (let e = 0; e < g.src.length; e++) {
    const a = rep[g.src[e]];
    const b = rep[g.dst[e]];
    if (a < 0 || b < 0 || a === b) {
      continue;
    }
    if (isGroup[a]) {
      // one count per (parameter, reader)
      const key = g.src[e] * n + b;
      if (!seenInput.has(key)) {
        seenInput.add(key);
        inputs[b]++;
      }
      continue;
    }
    const key = Math.min(a, b) * n + Math.max(a, b);
    const k = agg.get(key);
    if (k === undefined) {
      agg.set(key, es.length);
      es.push(a);
      ed.push(b);
      ec.push(1);
      eb.push(g.edgeBytes[e]);
      both.push(0);
    } else {
      ec[k]++;
      eb[k] += g.edgeBytes[e];
      if (es[k] !== a) {
        both[k] = 1;
      }
    }
  }
  return {
    src: Int32Array.from(es),
    dst: Int32Array.from(ed),
    count: Int32Array.from(ec),
    bytes: Float64Array.from(eb),
    both: Uint8Array.from(both),
    inputs
  };
}

/** above this many items or edges, implied edges are kept (each check is a search) */
const IMPLIED_MAX_ITEMS = 2000;
const IMPLIED_MAX_EDGES = 20000;

/**
 * A topological rank of the items along the edges one way round (`both` edges and the
 * edges closing a cycle left out, `forward` marks the others): nothing reaches an item of
 * a lower rank along `forward` edges, so a search for `to` need not go past its rank.
 */
function topoRanks(
  n: number,
  edges: Bundled
): { rank: Int32Array; forward: Uint8Array } {
  const m = edges.src.length;
  const oneWay = (e: number): boolean => !edges.both[e];
  const ids: number[] = [];
  for (let e = 0; e < m; e++) {
    if (oneWay(e)) {
      ids.push(e);
    }
  }
  const back = backEdges(
    n,
    Int32Array.from(ids, e => edges.src[e]),
    Int32Array.from(ids, e => edges.dst[e])
  );
  const forward = new Uint8Array(m);
  ids.forEach((e, j) => {
    forward[e] = back[j] ? 0 : 1;
  });
  const indeg = new Int32Array(n);
  const out: number[][] = Array.from({ length: n }, () => []);
  for (let e = 0; e < m; e++) {
    if (forward[e]) {
      indeg[edges.dst[e]]++;
      out[edges.src[e]].push(edges.dst[e]);
    }
  }
  const rank = new Int32Array(n);
  const queue: number[] = [];
  for (let v = 0; v < n; v++) {
    if (indeg[v] === 0) {
      queue.push(v);
    }
  }
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head];
    rank[v] = head;
    for (const w of out[v]) {
      if (--indeg[w] === 0) {
        queue.push(w);
      }
    }
  }
  return { rank, forward };
}

/**
 * The edges into or out of a folded cluster that another path implies: a -> c is left out
 * when c is reachable from a along other kept edges that each carry at least its bytes
 * (a widest-path test, lightest edges first).  So the backward of block 23 feeding block
 * 5's backward (a few small values) goes, as 23 -> 22 -> ... -> 5 carries more; the
 * forward of block 5 feeding its own backward (its activations) stays: no path carries
 * as much.  One level down the same leaves out the fan into the few fusions XLA made of
 * every block's gradient sums (each reads from all 24 blocks): a chain of blocks carries
 * them.  Each search follows the edges one way round (`topoRanks`) and stops at the
 * rank of its target, so a few thousand edges are checked in tens of milliseconds.
 */
function impliedEdges(items: VisibleItem[], edges: Bundled): Uint8Array {
  const m = edges.src.length;
  const n = items.length;
  const drop = new Uint8Array(m);
  if (n > IMPLIED_MAX_ITEMS || m > IMPLIED_MAX_EDGES) {
    return drop;
  }
  const { rank, forward } = topoRanks(n, edges);
  const out: number[][] = Array.from({ length: n }, () => []);
  for (let e = 0; e < m; e++) {
    if (forward[e]) {
      out[edges.src[e]].push(e);
    }
  }
  const cand: number[] = [];
  for (let e = 0; e < m; e++) {
    if (
      forward[e] &&
      (items[edges.src[e]].kind === 'cluster' ||
        items[edges.dst[e]].kind === 'cluster')
    ) {
      cand.push(e);
    }
  }
  cand.sort((x, y) => edges.bytes[x] - edges.bytes[y]);
  const seen = new Int32Array(n).fill(-1);
  const stack: number[] = [];
  for (const e of cand) {
    const to = edges.dst[e];
    const need = edges.bytes[e];
    stack.length = 0;
    stack.push(edges.src[e]);
    let found = false;
    while (stack.length && !found) {
      const v = stack.pop() as number;
      for (const f of out[v]) {
        const w = edges.dst[f];
        if (f === e || drop[f] || edges.bytes[f] < need || rank[w] > rank[to]) {
          continue;
        }
        if (w === to) {
          found = true;
          break;
        }
        if (seen[w] !== e) {
          seen[w] = e;
          stack.push(w);
        }
      }
    }
    if (found) {
      drop[e] = 1;
    }
  }
  return drop;
}

/** `edges` without the ones `drop` marks. */
function keepEdges(edges: Bundled, drop: Uint8Array): Bundled {
  const keep: number[] = [];
  for (let e = 0; e < drop.length; e++) {
    if (!drop[e]) {
      keep.push(e);
    }
  }
  return {
    src: Int32Array.from(keep, e => edges.src[e]),
    dst: Int32Array.from(keep, e => edges.dst[e]),
    count: Int32Array.from(keep, e => edges.count[e]),
    bytes: Float64Array.from(keep, e => edges.bytes[e]),
    both: Uint8Array.from(keep, e => edges.both[e]),
    inputs: edges.inputs
  };
}

/** What is drawn with the clusters `expanded` open: items, frames and bundled edges. */
export function visibleGraph(
  g: GraphIndex,
  tree: ClusterTree,
  expanded: Set<number>
): VisibleGraph {
  const pl = placeItems(g, tree, expanded);
  repsInsideFolded(tree, pl);
  fillFrames(tree, pl);
  const { items, rep, clusterItem, frames } = pl;
  const bundled = bundleEdges(g, rep, groupItems(tree, items));
  const drop = impliedEdges(items, bundled);
  const implied = drop.reduce((s, d) => s + d, 0);
  return {
    items,
    rep,
    clusterItem,
    frames,
    ...keepEdges(bundled, drop),
    implied
  };
}

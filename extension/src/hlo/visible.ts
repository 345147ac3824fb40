/**
 * What is drawn of a clustered graph (cluster.ts) with some clusters open: one item per
 * folded cluster and per node outside one, the frames of the open clusters, and the
 * graph's edges aggregated between items.
 */

import type { ClusterTree } from './cluster';
import type { GraphIndex } from './graph';

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

/** The graph's edges between items, one per (item, item) pair: counted, bytes summed. */
function aggregateEdges(
  g: GraphIndex,
  rep: Int32Array,
  itemCount: number
): Pick<VisibleGraph, 'src' | 'dst' | 'count' | 'bytes'> {
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
    const key = a * itemCount + b;
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
    src: Int32Array.from(es),
    dst: Int32Array.from(ed),
    count: Int32Array.from(ec),
    bytes: Float64Array.from(eb)
  };
}

/** What is drawn with the clusters `expanded` open: items, frames and aggregated edges. */
export function visibleGraph(
  g: GraphIndex,
  tree: ClusterTree,
  expanded: Set<number>
): VisibleGraph {
  const pl = placeItems(g, tree, expanded);
  repsInsideFolded(tree, pl);
  fillFrames(tree, pl);
  const { items, rep, clusterItem, frames } = pl;
  return {
    items,
    rep,
    clusterItem,
    frames,
    ...aggregateEdges(g, rep, items.length)
  };
}

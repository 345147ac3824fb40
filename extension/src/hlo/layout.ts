/**
 * A layered (Sugiyama-style) layout for directed graphs of up to tens of thousands of
 * nodes, top to bottom.  Pure TypeScript with typed arrays: it runs in the layout worker
 * (layout.worker.ts) and in unit tests.
 *
 * 1. Cycles broken by an iterative DFS (back edges reversed, drawn the right way round).
 * 2. Layers by longest path from the sources; then every source moves down to just above
 *    its first user (so parameters sit next to where they are read, not all at the top).
 * 3. Edges spanning several layers get dummy nodes (up to `maxDummies`, shortest spans
 *    first; longer edges are drawn straight).
 * 4. Crossing reduction: barycenter sweeps, down and up alternately, a bounded number
 *    (`sweeps`); each sweep is O(V + E) plus the sort of each layer.
 * 5. x coordinates: a few passes that pull each node to the mean of its neighbours in the
 *    previous (or next) layer, then project each layer back onto "keep the order, keep the
 *    gaps" by isotonic regression (pool adjacent violators: O(layer size)).
 */

export interface LayoutInput {
  widths: Float64Array;
  heights: Float64Array;
  src: Int32Array;
  dst: Int32Array;
}

export interface LayoutOptions {
  sweeps?: number;
  nodeSep?: number;
  rankSep?: number;
  /** at most this many dummy nodes (default 4 x nodes) */
  maxDummies?: number;
  coordPasses?: number;
}

export interface LayoutResult {
  /** centre of each node */
  x: Float64Array;
  y: Float64Array;
  layer: Int32Array;
  width: number;
  height: number;
  /** edge e's polyline: points edgePoints[2k], [2k+1] for k in edgeOffsets[e] .. edgeOffsets[e+1] */
  edgeOffsets: Int32Array;
  edgePoints: Float64Array;
  layers: number;
  dummies: number;
}

/** Compressed adjacency: for node v, nbr[off[v] .. off[v+1]]. */
function csr(
  n: number,
  from: Int32Array,
  to: Int32Array,
  count: number
): { off: Int32Array; nbr: Int32Array; eid: Int32Array } {
  const off = new Int32Array(n + 1);
  for (let e = 0; e < count; e++) {
    off[from[e] + 1]++;
  }
  for (let v = 0; v < n; v++) {
    off[v + 1] += off[v];
  }
  const fill = off.slice(0, n);
  const nbr = new Int32Array(count);
  const eid = new Int32Array(count);
  for (let e = 0; e < count; e++) {
    const k = fill[from[e]]++;
    nbr[k] = to[e];
    eid[k] = e;
  }
  return { off, nbr, eid };
}

/** Mark edges to reverse so the graph becomes acyclic (iterative DFS, back edges). */
export function backEdges(
  n: number,
  src: Int32Array,
  dst: Int32Array
): Uint8Array {
  const m = src.length;
  const rev = new Uint8Array(m);
  const out = csr(n, src, dst, m);
  const state = new Uint8Array(n); // 0 new, 1 on stack, 2 done
  const stack = new Int32Array(n);
  const cursor = new Int32Array(n);
  for (let root = 0; root < n; root++) {
    if (state[root] !== 0) {
      continue;
    }
    let sp = 0;
    stack[sp++] = root;
    state[root] = 1;
    cursor[root] = out.off[root];
    while (sp > 0) {
      const v = stack[sp - 1];
      if (cursor[v] < out.off[v + 1]) {
        const k = cursor[v]++;
        const w = out.nbr[k];
        if (state[w] === 1) {
          rev[out.eid[k]] = 1;
        } else if (state[w] === 0) {
          state[w] = 1;
          cursor[w] = out.off[w];
          stack[sp++] = w;
        }
      } else {
        state[v] = 2;
        sp--;
      }
    }
  }
  return rev;
}

/** Isotonic projection: x[i] as close to want[i] as possible with x[i+1] - x[i] >= gap[i]. */
function placeRow(
  want: Float64Array,
  gap: Float64Array,
  n: number,
  out: Float64Array
): void {
  // y[i] = x[i] - c[i] with c the cumulative gaps: then y must be non-decreasing
  const c = new Float64Array(n);
  for (let i = 1; i < n; i++) {
    c[i] = c[i - 1] + gap[i - 1];
  }
  const blockVal = new Float64Array(n);
  const blockW = new Int32Array(n);
  const blockEnd = new Int32Array(n);
  let nb = 0;
  for (let i = 0; i < n; i++) {
    blockVal[nb] = want[i] - c[i];
    blockW[nb] = 1;
    blockEnd[nb] = i;
    nb++;
    while (nb > 1 && blockVal[nb - 2] > blockVal[nb - 1]) {
      const w = blockW[nb - 2] + blockW[nb - 1];
      blockVal[nb - 2] =
        (blockVal[nb - 2] * blockW[nb - 2] +
          blockVal[nb - 1] * blockW[nb - 1]) /
        w;
      blockW[nb - 2] = w;
      blockEnd[nb - 2] = blockEnd[nb - 1];
      nb--;
    }
  }
  let i = 0;
  for (let b = 0; b < nb; b++) {
    for (; i <= blockEnd[b]; i++) {
      out[i] = blockVal[b] + c[i];
    }
  }
}

/** Compressed adjacency (see `csr`): the neighbours of v are nbr[off[v] .. off[v+1]]. */
interface Adjacency {
  off: Int32Array;
  nbr: Int32Array;
}

/** The input's edges, each pointing down (phase 1): `a[e]` above `b[e]`. */
interface OrientedEdges {
  count: number;
  /** 1 where the input's edge was reversed */
  rev: Uint8Array;
  a: Int32Array;
  b: Int32Array;
}

/** Input nodes then dummies, linked by segments between adjacent layers (phase 3). */
interface LayeredGraph {
  /** nodes, the input's first (its indices) then the dummies */
  size: number;
  layers: number;
  lay: Int32Array;
  w: Float64Array;
  h: Float64Array;
  /** segments top -> bottom and bottom -> top */
  down: Adjacency;
  up: Adjacency;
}

/** Each layer's nodes in order (phase 4): layer l is order[layerOff[l] .. layerOff[l+1]]. */
interface LayerOrder {
  layerOff: Int32Array;
  order: Int32Array;
  /** a node's position within its layer */
  pos: Float64Array;
}

/** 1. Acyclic orientation: back edges reversed. */
function orientEdges(
  n: number,
  src: Int32Array,
  dst: Int32Array
): OrientedEdges {
  const count = src.length;
  const rev = backEdges(n, src, dst);
  const a = new Int32Array(count);
  const b = new Int32Array(count);
  for (let e = 0; e < count; e++) {
    a[e] = rev[e] ? dst[e] : src[e];
    b[e] = rev[e] ? src[e] : dst[e];
  }
  return { count, rev, a, b };
}

/** 2. Longest-path layering in topological order (Kahn). */
function longestPathLayers(
  n: number,
  edges: OrientedEdges,
  out: Adjacency
): Int32Array {
  const indeg = new Int32Array(n);
  for (let e = 0; e < edges.count; e++) {
    indeg[edges.b[e]]++;
  }
  const topo = new Int32Array(n);
  let head = 0;
  let tail = 0;
  for (let v = 0; v < n; v++) {
    if (indeg[v] === 0) {
      topo[tail++] = v;
    }
  }
  const layer = new Int32Array(n);
  while (head < tail) {
    const v = topo[head++];
    for (let k = out.off[v]; k < out.off[v + 1]; k++) {
      const w = out.nbr[k];
      if (layer[v] + 1 > layer[w]) {
        layer[w] = layer[v] + 1;
      }
      if (--indeg[w] === 0) {
        topo[tail++] = w;
      }
    }
  }
  return layer;
}

/** 2. Sources move down to just above their first user (`layer` is updated in place). */
function lowerSources(
  n: number,
  edges: OrientedEdges,
  out: Adjacency,
  layer: Int32Array
): void {
  const hasIn = new Uint8Array(n);
  for (let e = 0; e < edges.count; e++) {
    hasIn[edges.b[e]] = 1;
  }
  for (let v = 0; v < n; v++) {
    if (hasIn[v] || out.off[v + 1] === out.off[v]) {
      continue;
    }
    let lo = Infinity;
    for (let k = out.off[v]; k < out.off[v + 1]; k++) {
      lo = Math.min(lo, layer[out.nbr[k]]);
    }
    if (lo - 1 > layer[v]) {
      layer[v] = lo - 1;
    }
  }
}

/** 2. Each node's layer and the number of layers. */
function assignLayers(
  n: number,
  edges: OrientedEdges
): { layer: Int32Array; layers: number } {
  const out = csr(n, edges.a, edges.b, edges.count);
  const layer = longestPathLayers(n, edges, out);
  lowerSources(n, edges, out, layer);
  let layers = 0;
  for (let v = 0; v < n; v++) {
    if (layer[v] + 1 > layers) {
      layers = layer[v] + 1;
    }
  }
  return { layer, layers };
}

/** 3. Which edges get dummy nodes: all if the budget allows, else shortest spans first. */
function chooseDummyEdges(span: Int32Array, maxDummies: number): Uint8Array {
  const m = span.length;
  let wanted = 0;
  for (let e = 0; e < m; e++) {
    wanted += Math.max(0, span[e] - 1);
  }
  const useDummies = new Uint8Array(m);
  if (wanted <= maxDummies) {
    useDummies.fill(1);
    return useDummies;
  }
  const order = Array.from({ length: m }, (_, e) => e).sort(
    (p, q) => span[p] - span[q]
  );
  let budget = maxDummies;
  for (const e of order) {
    const need = span[e] - 1;
    if (need > budget) {
      break;
    }
    budget -= need;
    useDummies[e] = 1;
  }
  return useDummies;
}

/**
 * 3. The layered graph: a chain of dummies (8 x 8) for each chosen long edge, and the
 * segments between adjacent layers; `chainStart[e]` is edge e's first dummy (-1: none).
 */
function expandLongEdges(
  input: LayoutInput,
  edges: OrientedEdges,
  layer: Int32Array,
  layers: number,
  span: Int32Array,
  useDummies: Uint8Array
): { graph: LayeredGraph; chainStart: Int32Array; dummies: number } {
  const n0 = input.widths.length;
  const { a, b } = edges;
  let dummies = 0;
  for (let e = 0; e < edges.count; e++) {
    if (useDummies[e] && span[e] > 1) {
      dummies += span[e] - 1;
    }
  }
  const size = n0 + dummies;
  const lay = new Int32Array(size);
  lay.set(layer);
  const w = new Float64Array(size);
  const h = new Float64Array(size);
  w.set(input.widths);
  h.set(input.heights);
  const segFrom: number[] = [];
  const segTo: number[] = [];
  const chainStart = new Int32Array(edges.count).fill(-1);
  let next = n0;
  for (let e = 0; e < edges.count; e++) {
    if (span[e] === 1) {
      segFrom.push(a[e]);
      segTo.push(b[e]);
    } else if (useDummies[e]) {
      chainStart[e] = next;
      let prev = a[e];
      for (let s = 1; s < span[e]; s++) {
        const d = next++;
        lay[d] = layer[a[e]] + s;
        w[d] = 8;
        h[d] = 8;
        segFrom.push(prev);
        segTo.push(d);
        prev = d;
      }
      segFrom.push(prev);
      segTo.push(b[e]);
    }
  }
  const sf = Int32Array.from(segFrom);
  const st = Int32Array.from(segTo);
  const down = csr(size, sf, st, sf.length);
  const up = csr(size, st, sf, sf.length);
  const graph = { size, layers, lay, w, h, down, up };
  return { graph, chainStart, dummies };
}

/** 4. The initial order: by layer, then input order (dummies after their layer's nodes). */
function initialOrder(g: LayeredGraph): LayerOrder {
  const L = g.layers;
  const layerSize = new Int32Array(L + 1);
  for (let v = 0; v < g.size; v++) {
    layerSize[g.lay[v] + 1]++;
  }
  const layerOff = new Int32Array(L + 1);
  for (let l = 0; l < L; l++) {
    layerOff[l + 1] = layerOff[l] + layerSize[l + 1];
  }
  const order = new Int32Array(g.size);
  const fill = layerOff.slice(0, L);
  for (let v = 0; v < g.size; v++) {
    order[fill[g.lay[v]]++] = v;
  }
  const pos = new Float64Array(g.size);
  for (let l = 0; l < L; l++) {
    for (let i = layerOff[l]; i < layerOff[l + 1]; i++) {
      pos[order[i]] = i - layerOff[l];
    }
  }
  return { layerOff, order, pos };
}

/** 4. Barycenter sweeps, down and up alternately (`ord` is reordered in place). */
function reduceCrossings(
  g: LayeredGraph,
  ord: LayerOrder,
  sweeps: number
): void {
  const { layerOff, order, pos } = ord;
  const key = new Float64Array(g.size);
  const tmp: number[] = [];
  const sortLayer = (l: number, adj: Adjacency): void => {
    const s0 = layerOff[l];
    const s1 = layerOff[l + 1];
    tmp.length = 0;
    for (let i = s0; i < s1; i++) {
      const v = order[i];
      let sum = 0;
      const deg = adj.off[v + 1] - adj.off[v];
      for (let k = adj.off[v]; k < adj.off[v + 1]; k++) {
        sum += pos[adj.nbr[k]];
      }
      key[v] = deg > 0 ? sum / deg : pos[v];
      tmp.push(v);
    }
    tmp.sort((p, q) => key[p] - key[q] || pos[p] - pos[q]);
    for (let i = 0; i < tmp.length; i++) {
      order[s0 + i] = tmp[i];
      pos[tmp[i]] = i;
    }
  };
  sweepLayers(g, sweeps, sortLayer);
}

/** Passes over the layers: even ones top-down against `up`, odd ones bottom-up against `down`. */
function sweepLayers(
  g: LayeredGraph,
  passes: number,
  visit: (l: number, adj: Adjacency) => void
): void {
  for (let p = 0; p < passes; p++) {
    if (p % 2 === 0) {
      for (let l = 1; l < g.layers; l++) {
        visit(l, g.up);
      }
    } else {
      for (let l = g.layers - 2; l >= 0; l--) {
        visit(l, g.down);
      }
    }
  }
}

/** 5. Start: each layer packed left to right, `nodeSep` apart, centred on the widest. */
function packLayers(
  g: LayeredGraph,
  ord: LayerOrder,
  nodeSep: number
): Float64Array {
  const { layerOff, order } = ord;
  const L = g.layers;
  const x = new Float64Array(g.size);
  for (let l = 0; l < L; l++) {
    let cx = 0;
    for (let i = layerOff[l]; i < layerOff[l + 1]; i++) {
      const v = order[i];
      x[v] = cx + g.w[v] / 2;
      cx += g.w[v] + nodeSep;
    }
  }
  let widest = 0;
  const rowWidth = new Float64Array(L);
  for (let l = 0; l < L; l++) {
    const s1 = layerOff[l + 1] - 1;
    rowWidth[l] = s1 >= layerOff[l] ? x[order[s1]] + g.w[order[s1]] / 2 : 0;
    widest = Math.max(widest, rowWidth[l]);
  }
  for (let l = 0; l < L; l++) {
    const shift = (widest - rowWidth[l]) / 2;
    for (let i = layerOff[l]; i < layerOff[l + 1]; i++) {
      x[order[i]] += shift;
    }
  }
  return x;
}

/**
 * 5. Passes that pull each node to the mean of its neighbours in the previous (or next)
 * layer, each layer then projected back onto its order and gaps (`placeRow`).
 */
function pullToNeighbours(
  g: LayeredGraph,
  ord: LayerOrder,
  x: Float64Array,
  nodeSep: number,
  passes: number
): void {
  const { layerOff, order } = ord;
  let maxRow = 0;
  for (let l = 0; l < g.layers; l++) {
    maxRow = Math.max(maxRow, layerOff[l + 1] - layerOff[l]);
  }
  const want = new Float64Array(maxRow);
  const gap = new Float64Array(maxRow);
  const placed = new Float64Array(maxRow);
  const pullRow = (l: number, adj: Adjacency): void => {
    const s0 = layerOff[l];
    const cnt = layerOff[l + 1] - s0;
    for (let i = 0; i < cnt; i++) {
      const v = order[s0 + i];
      const deg = adj.off[v + 1] - adj.off[v];
      let sum = 0;
      for (let k = adj.off[v]; k < adj.off[v + 1]; k++) {
        sum += x[adj.nbr[k]];
      }
      want[i] = deg > 0 ? sum / deg : x[v];
      if (i + 1 < cnt) {
        gap[i] = (g.w[v] + g.w[order[s0 + i + 1]]) / 2 + nodeSep;
      }
    }
    placeRow(want, gap, cnt, placed);
    for (let i = 0; i < cnt; i++) {
      x[order[s0 + i]] = placed[i];
    }
  };
  sweepLayers(g, passes, pullRow);
}

/** 5. Shift `x` so the leftmost node's left edge is at 0; returns the drawing's width. */
function alignLeft(g: LayeredGraph, x: Float64Array): number {
  let minX = Infinity;
  let maxX = -Infinity;
  for (let v = 0; v < g.size; v++) {
    minX = Math.min(minX, x[v] - g.w[v] / 2);
    maxX = Math.max(maxX, x[v] + g.w[v] / 2);
  }
  if (g.size === 0) {
    minX = 0;
    maxX = 0;
  }
  for (let v = 0; v < g.size; v++) {
    x[v] -= minX;
  }
  return maxX - minX;
}

/** y: layer by layer, each as tall as its tallest node, `rankSep` apart. */
function assignY(
  g: LayeredGraph,
  rankSep: number
): { y: Float64Array; height: number } {
  const L = g.layers;
  const rowH = new Float64Array(L);
  for (let v = 0; v < g.size; v++) {
    if (g.h[v] > rowH[g.lay[v]]) {
      rowH[g.lay[v]] = g.h[v];
    }
  }
  const rowY = new Float64Array(L);
  let cy = 0;
  for (let l = 0; l < L; l++) {
    rowY[l] = cy + rowH[l] / 2;
    cy += rowH[l] + rankSep;
  }
  const y = new Float64Array(g.size);
  for (let v = 0; v < g.size; v++) {
    y[v] = rowY[g.lay[v]];
  }
  return { y, height: Math.max(0, cy - rankSep) };
}

/** Edge polylines in the input's direction: bottom of the source, dummies, top of the target. */
function edgePolylines(
  edges: OrientedEdges,
  span: Int32Array,
  chainStart: Int32Array,
  x: Float64Array,
  y: Float64Array,
  h: Float64Array
): { edgeOffsets: Int32Array; edgePoints: Float64Array } {
  const m = edges.count;
  const edgeOffsets = new Int32Array(m + 1);
  for (let e = 0; e < m; e++) {
    const pts = 2 + (chainStart[e] >= 0 ? span[e] - 1 : 0);
    edgeOffsets[e + 1] = edgeOffsets[e] + pts;
  }
  const edgePoints = new Float64Array(edgeOffsets[m] * 2);
  for (let e = 0; e < m; e++) {
    let k = edgeOffsets[e] * 2;
    const u = edges.a[e];
    const t = edges.b[e];
    const pts: number[] = [x[u], y[u] + h[u] / 2];
    if (chainStart[e] >= 0) {
      for (let s = 0; s < span[e] - 1; s++) {
        const d = chainStart[e] + s;
        pts.push(x[d], y[d]);
      }
    }
    pts.push(x[t], y[t] - h[t] / 2);
    if (edges.rev[e]) {
      for (let i = pts.length - 2; i >= 0; i -= 2) {
        edgePoints[k++] = pts[i];
        edgePoints[k++] = pts[i + 1];
      }
    } else {
      for (const p of pts) {
        edgePoints[k++] = p;
      }
    }
  }
  return { edgeOffsets, edgePoints };
}

/** The layout of `input`, phase by phase (see the top of this file). */
export function layeredLayout(
  input: LayoutInput,
  options: LayoutOptions = {}
): LayoutResult {
  const n0 = input.widths.length;
  const sweeps = options.sweeps ?? 6;
  const nodeSep = options.nodeSep ?? 24;
  const rankSep = options.rankSep ?? 36;
  const maxDummies = options.maxDummies ?? 4 * n0 + 64;
  const coordPasses = options.coordPasses ?? 6;

  const edges = orientEdges(n0, input.src, input.dst);
  const { layer, layers } = assignLayers(n0, edges);
  const span = new Int32Array(edges.count);
  for (let e = 0; e < edges.count; e++) {
    span[e] = layer[edges.b[e]] - layer[edges.a[e]];
  }
  const useDummies = chooseDummyEdges(span, maxDummies);
  const { graph, chainStart, dummies } = expandLongEdges(
    input,
    edges,
    layer,
    layers,
    span,
    useDummies
  );
  const ord = initialOrder(graph);
  reduceCrossings(graph, ord, sweeps);
  const x = packLayers(graph, ord, nodeSep);
  pullToNeighbours(graph, ord, x, nodeSep, coordPasses);
  const width = alignLeft(graph, x);
  const { y, height } = assignY(graph, rankSep);
  const polylines = edgePolylines(edges, span, chainStart, x, y, graph.h);
  return {
    x: x.slice(0, n0),
    y: y.slice(0, n0),
    layer: layer.slice(0, n0),
    width,
    height,
    ...polylines,
    layers,
    dummies
  };
}

/** Edge crossings between adjacent layers of a result (for tests; O(E^2) per layer pair). */
export function countCrossings(input: LayoutInput, r: LayoutResult): number {
  let crossings = 0;
  const segs: Array<[number, number, number]> = [];
  for (let e = 0; e < input.src.length; e++) {
    const u = input.src[e];
    const v = input.dst[e];
    if (Math.abs(r.layer[u] - r.layer[v]) !== 1) {
      continue;
    }
    const [top, bot] = r.layer[u] < r.layer[v] ? [u, v] : [v, u];
    segs.push([r.layer[top], r.x[top], r.x[bot]]);
  }
  for (let i = 0; i < segs.length; i++) {
    for (let j = i + 1; j < segs.length; j++) {
      const [l1, a1, b1] = segs[i];
      const [l2, a2, b2] = segs[j];
      if (l1 === l2 && (a1 - a2) * (b1 - b2) < 0) {
        crossings++;
      }
    }
  }
  return crossings;
}

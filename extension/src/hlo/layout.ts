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
  /**
   * pairs drawn side by side in one layer, flattened [left0, right0, left1, right1, ...]:
   * a forward call and its backward, so the backward reads as the forward's mirror (a
   * ladder), one row per pair, instead of slanting beside it
   */
  pairs?: Int32Array;
  /**
   * per node, the group it is drawn in (-1: none): the nodes of one group get consecutive
   * layers of their own (`groupedLayers`), so a frame drawn around them holds no other box
   * (the calls inside an opened block stay between the blocks before and after it)
   */
  groups?: Int32Array;
  /**
   * 1 for an edge that does not place its ends (drawn, but left out of the layering): data
   * flowing both ways between two boxes says nothing of which is above the other
   */
  weak?: Uint8Array;
  /** what each edge carries (bytes): a cycle is broken at its lightest edges */
  weights?: Float64Array;
}

/** The box the drawing is fitted into (CSS px), for `wrapToViewport`. */
export interface LayoutViewport {
  width: number;
  height: number;
  /** wrap only when the wrapped drawing fits at this scale or more (its text then reads) */
  minScale: number;
}

export interface LayoutOptions {
  sweeps?: number;
  nodeSep?: number;
  rankSep?: number;
  /** at most this many dummy nodes (default 4 x nodes) */
  maxDummies?: number;
  /**
   * edges spanning more layers than this get no dummies: drawn straight (default: any).
   * A value computed once and read 100 layers further down would otherwise push a column
   * of dummies through every layer between, and with it the drawing's width.
   */
  maxSpan?: number;
  coordPasses?: number;
  /** wrap a tall drawing into side-by-side bands to fit this viewport (see `wrapToViewport`) */
  viewport?: LayoutViewport;
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
  /** side-by-side bands the layers were wrapped into (1: none) */
  bands: number;
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

/** above this many edges cycles are broken by `backEdges` (a search, not by weight) */
const WEIGHED_CYCLES_MAX_EDGES = 5000;

/**
 * Edges to reverse so the graph becomes acyclic, the lightest of each cycle: heaviest
 * first, an edge that would close a cycle among those kept is reversed.  The mirrored backward runs against the forward, so a few small values read
 * against the ladder's direction (XLA fuses the gradient sums of later blocks into an
 * earlier block's backward) close cycles; left to the layout's search, one of the
 * forward's heavy edges could be turned round and a block drawn upside down.
 */
export function lightBackEdges(
  n: number,
  src: Int32Array,
  dst: Int32Array,
  weights: Float64Array
): Uint8Array {
  const m = src.length;
  const rev = new Uint8Array(m);
  const order = Array.from({ length: m }, (_, e) => e).sort(
    (a, b) => weights[b] - weights[a] || a - b
  );
  const out: number[][] = Array.from({ length: n }, () => []);
  const seen = new Int32Array(n).fill(-1);
  const stack: number[] = [];
  for (const e of order) {
    // would src[e] -> dst[e] close a cycle: does dst[e] reach src[e] already?
    stack.length = 0;
    stack.push(dst[e]);
    seen[dst[e]] = e;
    let cycle = dst[e] === src[e];
    while (stack.length && !cycle) {
      const v = stack.pop() as number;
      for (const w of out[v]) {
        if (w === src[e]) {
          cycle = true;
          break;
        }
        if (seen[w] !== e) {
          seen[w] = e;
          stack.push(w);
        }
      }
    }
    if (cycle) {
      rev[e] = 1;
    } else {
      out[src[e]].push(dst[e]);
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

/**
 * 1. Acyclic orientation: back edges reversed, the lightest of each cycle when the edges
 * are weighed (weak edges as they are, see `pointDown`).
 */
function orientEdges(
  n: number,
  src: Int32Array,
  dst: Int32Array,
  weak?: Uint8Array,
  weights?: Float64Array
): OrientedEdges {
  const count = src.length;
  const strong: number[] = [];
  for (let e = 0; e < count; e++) {
    if (!weak?.[e]) {
      strong.push(e);
    }
  }
  const ss = Int32Array.from(strong, e => src[e]);
  const sd = Int32Array.from(strong, e => dst[e]);
  const back =
    weights && strong.length <= WEIGHED_CYCLES_MAX_EDGES
      ? lightBackEdges(
          n,
          ss,
          sd,
          Float64Array.from(strong, e => weights[e])
        )
      : backEdges(n, ss, sd);
  const rev = new Uint8Array(count);
  strong.forEach((e, j) => {
    rev[e] = back[j];
  });
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

/**
 * 2. Nodes with no edge at all (a folded group of parameters: its edges are counts) get
 * a row of their own above the rest, not a place in the first row: there they would widen
 * the row of the first block, and with it the drawing.
 */
function isolatedOnTop(
  n: number,
  edges: OrientedEdges,
  layer: Int32Array
): void {
  const linked = new Uint8Array(n);
  for (let e = 0; e < edges.count; e++) {
    linked[edges.a[e]] = 1;
    linked[edges.b[e]] = 1;
  }
  let some = false;
  let all = true;
  for (let v = 0; v < n; v++) {
    some ||= !linked[v];
    all &&= !linked[v];
  }
  if (!some || all) {
    return;
  }
  for (let v = 0; v < n; v++) {
    layer[v] = linked[v] ? layer[v] + 1 : 0;
  }
}

/** Longest-path layers, sources lowered to just above their first user (phase 2). */
function pathLayers(n: number, edges: OrientedEdges): Int32Array {
  const out = csr(n, edges.a, edges.b, edges.count);
  const layer = longestPathLayers(n, edges, out);
  lowerSources(n, edges, out, layer);
  return layer;
}

/** The edges `keep` marks, as an OrientedEdges of their own. */
function someEdges(
  edges: OrientedEdges,
  keep: (e: number) => boolean
): OrientedEdges {
  const ids: number[] = [];
  for (let e = 0; e < edges.count; e++) {
    if (keep(e)) {
      ids.push(e);
    }
  }
  return {
    count: ids.length,
    rev: Uint8Array.from(ids, e => edges.rev[e]),
    a: Int32Array.from(ids, e => edges.a[e]),
    b: Int32Array.from(ids, e => edges.b[e])
  };
}

/**
 * 2. Layers with groups kept together: each group is laid out in layers of its own
 * (longest path inside it), then the groups and the ungrouped nodes, each one unit as tall
 * as its layers, are layered as a graph of units (longest path, cycles between units
 * broken), and a node's layer is its unit's first plus its own inside it.
 */
function groupedLayers(
  n: number,
  edges: OrientedEdges,
  groups: Int32Array
): Int32Array {
  // unit of each node: its group's, or one of its own
  const unitOfGroup = new Map<number, number>();
  const unit = new Int32Array(n);
  let units = 0;
  for (let v = 0; v < n; v++) {
    const g = groups[v];
    if (g < 0) {
      unit[v] = units++;
    } else {
      let u = unitOfGroup.get(g);
      if (u === undefined) {
        u = units++;
        unitOfGroup.set(g, u);
      }
      unit[v] = u;
    }
  }
  const inner = pathLayers(
    n,
    someEdges(edges, e => unit[edges.a[e]] === unit[edges.b[e]])
  );
  const tall = new Int32Array(units).fill(1);
  for (let v = 0; v < n; v++) {
    tall[unit[v]] = Math.max(tall[unit[v]], inner[v] + 1);
  }
  const cross = someEdges(edges, e => unit[edges.a[e]] !== unit[edges.b[e]]);
  const ua = Int32Array.from(cross.a, v => unit[v]);
  const ub = Int32Array.from(cross.b, v => unit[v]);
  const back = backEdges(units, ua, ub);
  const fa: number[] = [];
  const fb: number[] = [];
  for (let e = 0; e < cross.count; e++) {
    if (!back[e]) {
      fa.push(ua[e]);
      fb.push(ub[e]);
    }
  }
  const out = csr(units, Int32Array.from(fa), Int32Array.from(fb), fa.length);
  // longest path where a unit takes `tall` layers (Kahn's order)
  const indeg = new Int32Array(units);
  for (const b of fb) {
    indeg[b]++;
  }
  const start = new Int32Array(units);
  const queue: number[] = [];
  for (let u = 0; u < units; u++) {
    if (indeg[u] === 0) {
      queue.push(u);
    }
  }
  for (let head = 0; head < queue.length; head++) {
    const u = queue[head];
    for (let k = out.off[u]; k < out.off[u + 1]; k++) {
      const w = out.nbr[k];
      start[w] = Math.max(start[w], start[u] + tall[u]);
      if (--indeg[w] === 0) {
        queue.push(w);
      }
    }
  }
  return Int32Array.from(inner, (l, v) => start[unit[v]] + l);
}

/** 2. Edges that point up once layered (weak ones, cycles between groups) turned round. */
function pointDown(edges: OrientedEdges, layer: Int32Array): void {
  for (let e = 0; e < edges.count; e++) {
    const a = edges.a[e];
    const b = edges.b[e];
    if (layer[a] > layer[b]) {
      edges.a[e] = b;
      edges.b[e] = a;
      edges.rev[e] ^= 1;
    }
  }
}

/** 2. Each node's layer and the number of layers. */
function assignLayers(
  n: number,
  edges: OrientedEdges,
  groups?: Int32Array,
  weak?: Uint8Array
): { layer: Int32Array; layers: number } {
  const placing = weak ? someEdges(edges, e => !weak[e]) : edges;
  const layer = groups
    ? groupedLayers(n, placing, groups)
    : pathLayers(n, placing);
  isolatedOnTop(n, edges, layer);
  pointDown(edges, layer);
  let layers = 0;
  for (let v = 0; v < n; v++) {
    if (layer[v] + 1 > layers) {
      layers = layer[v] + 1;
    }
  }
  return { layer, layers };
}

/** 3. Which edges get dummy nodes: all if the budget allows, else shortest spans first. */
function chooseDummyEdges(
  span: Int32Array,
  maxDummies: number,
  maxSpan = Infinity
): Uint8Array {
  const m = span.length;
  let wanted = 0;
  let tooLong = false;
  for (let e = 0; e < m; e++) {
    wanted += Math.max(0, span[e] - 1);
    tooLong ||= span[e] > maxSpan;
  }
  const useDummies = new Uint8Array(m);
  if (wanted <= maxDummies && !tooLong) {
    useDummies.fill(1);
    return useDummies;
  }
  const order = Array.from({ length: m }, (_, e) => e).sort(
    (p, q) => span[p] - span[q]
  );
  let budget = maxDummies;
  for (const e of order) {
    const need = Math.max(0, span[e] - 1);
    if (need > budget || span[e] > maxSpan) {
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
    } else if (useDummies[e] && span[e] > 1) {
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

/**
 * 5. A row of nodes without edges (isolatedOnTop's) packed from the left edge of the rest:
 * nothing pulls it, and centred on the widest row of the first packing it can end up far
 * right of everything else.
 */
function packIsolatedRows(
  g: LayeredGraph,
  ord: LayerOrder,
  x: Float64Array,
  nodeSep: number
): void {
  const alone = (v: number): boolean =>
    g.down.off[v + 1] === g.down.off[v] && g.up.off[v + 1] === g.up.off[v];
  const isolated = (l: number): boolean => {
    for (let i = ord.layerOff[l]; i < ord.layerOff[l + 1]; i++) {
      if (!alone(ord.order[i])) {
        return false;
      }
    }
    return ord.layerOff[l + 1] > ord.layerOff[l];
  };
  for (let l = 0; l < g.layers; l++) {
    if (!isolated(l)) {
      continue;
    }
    // from the left edge of the next row that is not (the row it sits on)
    let next = l + 1;
    while (next < g.layers && isolated(next)) {
      next++;
    }
    const row = next < g.layers ? next : l - 1;
    if (row < 0) {
      continue;
    }
    let cx = Infinity;
    for (let i = ord.layerOff[row]; i < ord.layerOff[row + 1]; i++) {
      const v = ord.order[i];
      cx = Math.min(cx, x[v] - g.w[v] / 2);
    }
    for (let i = ord.layerOff[l]; i < ord.layerOff[l + 1]; i++) {
      const v = ord.order[i];
      x[v] = cx + g.w[v] / 2;
      cx += g.w[v] + nodeSep;
    }
  }
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

/**
 * The layout of `input`: pairs contracted to one box each (`pairedLayout`), laid out phase
 * by phase (see the top of this file), then wrapped into bands to fit the viewport.
 */
export function layeredLayout(
  input: LayoutInput,
  options: LayoutOptions = {}
): LayoutResult {
  const r =
    input.pairs && input.pairs.length >= 2
      ? pairedLayout(input, options)
      : coreLayout(input, options);
  return options.viewport
    ? wrapToViewport(r, input, options.viewport, options.rankSep ?? 36)
    : r;
}

/** The layout of `input`, phase by phase (see the top of this file). */
function coreLayout(
  input: LayoutInput,
  options: LayoutOptions = {}
): LayoutResult {
  const n0 = input.widths.length;
  const sweeps = options.sweeps ?? 6;
  const nodeSep = options.nodeSep ?? 24;
  const rankSep = options.rankSep ?? 36;
  const maxDummies = options.maxDummies ?? 4 * n0 + 64;
  const coordPasses = options.coordPasses ?? 6;

  const edges = orientEdges(
    n0,
    input.src,
    input.dst,
    input.weak,
    input.weights
  );
  const { layer, layers } = assignLayers(n0, edges, input.groups, input.weak);
  const span = new Int32Array(edges.count);
  for (let e = 0; e < edges.count; e++) {
    span[e] = layer[edges.b[e]] - layer[edges.a[e]];
  }
  const useDummies = chooseDummyEdges(span, maxDummies, options.maxSpan);
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
  packIsolatedRows(graph, ord, x, nodeSep);
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
    dummies,
    bands: 1
  };
}

/** The input with each pair contracted to one box (see `pairedLayout`). */
interface Contraction {
  /** the contracted input: one box per pair (as wide as both and a gap) or lone node */
  input: LayoutInput;
  /** node -> its contracted box; pair members share one */
  cid: Int32Array;
  /** node -> the left member of its pair (-1: it is no right member) */
  leftOf: Int32Array;
  /** contracted edge j is the input's edge outer[j] (edges inside a pair have none) */
  outer: number[];
}

/** Which nodes pair up: [left, right] of each valid, disjoint pair of `pairs`. */
function pairPartners(
  n0: number,
  pairs: Int32Array
): { rightOf: Int32Array; leftOf: Int32Array } {
  const rightOf = new Int32Array(n0).fill(-1);
  const leftOf = new Int32Array(n0).fill(-1);
  const free = (v: number): boolean =>
    v >= 0 && v < n0 && rightOf[v] < 0 && leftOf[v] < 0;
  for (let k = 0; k + 1 < pairs.length; k += 2) {
    const a = pairs[k];
    const b = pairs[k + 1];
    if (a !== b && free(a) && free(b)) {
      rightOf[a] = b;
      leftOf[b] = a;
    }
  }
  return { rightOf, leftOf };
}

/** Each pair contracted to one box; the edges between boxes, carried over with their flags. */
function contractPairs(input: LayoutInput, sep: number): Contraction {
  const n0 = input.widths.length;
  const { rightOf, leftOf } = pairPartners(n0, input.pairs as Int32Array);
  // contracted ids: every node that is no pair's right member
  const cid = new Int32Array(n0);
  const leftMember: number[] = [];
  for (let v = 0; v < n0; v++) {
    if (leftOf[v] < 0) {
      cid[v] = leftMember.length;
      leftMember.push(v);
    }
  }
  for (let v = 0; v < n0; v++) {
    if (leftOf[v] >= 0) {
      cid[v] = cid[leftOf[v]];
    }
  }
  const widths = Float64Array.from(leftMember, v => {
    const b = rightOf[v];
    return b >= 0 ? input.widths[v] + sep + input.widths[b] : input.widths[v];
  });
  const heights = Float64Array.from(leftMember, v => {
    const b = rightOf[v];
    return b >= 0
      ? Math.max(input.heights[v], input.heights[b])
      : input.heights[v];
  });
  const outer: number[] = [];
  for (let e = 0; e < input.src.length; e++) {
    if (cid[input.src[e]] !== cid[input.dst[e]]) {
      outer.push(e);
    }
  }
  const { groups, weak, weights } = input;
  return {
    input: {
      widths,
      heights,
      src: Int32Array.from(outer, e => cid[input.src[e]]),
      dst: Int32Array.from(outer, e => cid[input.dst[e]]),
      weak: weak ? Uint8Array.from(outer, e => weak[e]) : undefined,
      weights: weights ? Float64Array.from(outer, e => weights[e]) : undefined,
      groups: groups ? Int32Array.from(leftMember, v => groups[v]) : undefined
    },
    cid,
    leftOf,
    outer
  };
}

/**
 * The input's edges drawn on the split boxes: a contracted edge's polyline with its ends
 * moved to the edge's own boxes; an edge inside a pair straight across the gap.
 */
function pairPolylines(
  input: LayoutInput,
  c: Contraction,
  r: LayoutResult,
  x: Float64Array,
  y: Float64Array
): { edgeOffsets: Int32Array; edgePoints: Float64Array } {
  const m = input.src.length;
  const pts: number[][] = new Array(m);
  c.outer.forEach((e, j) => {
    const p = Array.from(
      r.edgePoints.subarray(2 * r.edgeOffsets[j], 2 * r.edgeOffsets[j + 1])
    );
    const end = (k: number, v: number): void => {
      const below = p[k + 1] > y[v];
      p[k] = x[v];
      p[k + 1] = y[v] + ((below ? 1 : -1) * input.heights[v]) / 2;
    };
    end(0, input.src[e]);
    end(p.length - 2, input.dst[e]);
    pts[e] = p;
  });
  for (let e = 0; e < m; e++) {
    if (pts[e]) {
      continue;
    }
    const s = input.src[e];
    const d = input.dst[e];
    const dir = x[d] >= x[s] ? 1 : -1;
    pts[e] = [
      x[s] + (dir * input.widths[s]) / 2,
      y[s],
      x[d] - (dir * input.widths[d]) / 2,
      y[d]
    ];
  }
  const edgeOffsets = new Int32Array(m + 1);
  for (let e = 0; e < m; e++) {
    edgeOffsets[e + 1] = edgeOffsets[e] + pts[e].length / 2;
  }
  const edgePoints = new Float64Array(2 * edgeOffsets[m]);
  for (let e = 0; e < m; e++) {
    edgePoints.set(pts[e], 2 * edgeOffsets[e]);
  }
  return { edgeOffsets, edgePoints };
}

/**
 * Pairs side by side: each pair is contracted to one box as wide as both (and a gap), the
 * contracted graph is laid out, then each pair's box is split back into its two, and each
 * edge's ends moved to its own box.  An edge inside a pair is drawn across the gap.
 */
function pairedLayout(
  input: LayoutInput,
  options: LayoutOptions
): LayoutResult {
  const n0 = input.widths.length;
  const c = contractPairs(input, options.nodeSep ?? 24);
  const r = coreLayout(c.input, options);
  const x = new Float64Array(n0);
  const y = new Float64Array(n0);
  const layer = new Int32Array(n0);
  for (let v = 0; v < n0; v++) {
    const k = c.cid[v];
    y[v] = r.y[k];
    layer[v] = r.layer[k];
    const left = r.x[k] - c.input.widths[k] / 2;
    x[v] =
      c.leftOf[v] >= 0
        ? left + c.input.widths[k] - input.widths[v] / 2
        : left + input.widths[v] / 2;
  }
  return { ...r, x, y, layer, ...pairPolylines(input, c, r, x, y) };
}

/** The scale a drawing of `w` x `h` is fitted at in the viewport (as the canvas fits: 16 px pad, at most 1). */
function fitScale(vp: LayoutViewport, w: number, h: number): number {
  return Math.min(
    1,
    (vp.width - 32) / Math.max(1, w),
    (vp.height - 32) / Math.max(1, h)
  );
}

/** Each layer's extent in a laid-out drawing: rows top to bottom, boxes and edge points across. */
interface LayerExtents {
  top: Float64Array;
  bot: Float64Array;
  x0: Float64Array;
  x1: Float64Array;
  /** the layer a y lies in (the gap above a layer is its own) */
  layerOfY: (py: number) => number;
}

function layerExtents(
  r: LayoutResult,
  input: LayoutInput,
  rankSep: number
): LayerExtents {
  const n = r.x.length;
  const L = r.layers;
  const top = new Float64Array(L).fill(Infinity);
  const bot = new Float64Array(L).fill(-Infinity);
  for (let v = 0; v < n; v++) {
    const l = r.layer[v];
    top[l] = Math.min(top[l], r.y[v] - input.heights[v] / 2);
    bot[l] = Math.max(bot[l], r.y[v] + input.heights[v] / 2);
  }
  for (let l = 0; l < L; l++) {
    if (top[l] === Infinity) {
      // a layer of dummies only: the middle of the gap between its neighbours
      top[l] = l > 0 ? bot[l - 1] + rankSep : 0;
      bot[l] = top[l];
    }
  }
  const layerOfY = (py: number): number => {
    let lo = 0;
    let hi = L - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (top[mid] - rankSep / 2 <= py) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  };
  const x0 = new Float64Array(L).fill(Infinity);
  const x1 = new Float64Array(L).fill(-Infinity);
  for (let v = 0; v < n; v++) {
    const l = r.layer[v];
    x0[l] = Math.min(x0[l], r.x[v] - input.widths[v] / 2);
    x1[l] = Math.max(x1[l], r.x[v] + input.widths[v] / 2);
  }
  for (let k = 0; k < r.edgePoints.length; k += 2) {
    const l = layerOfY(r.edgePoints[k + 1]);
    x0[l] = Math.min(x0[l], r.edgePoints[k]);
    x1[l] = Math.max(x1[l], r.edgePoints[k]);
  }
  return { top, bot, x0, x1, layerOfY };
}

/** The band of each layer: K runs of consecutive layers, about the same height each. */
function splitBands(ext: LayerExtents, height: number, K: number): Int32Array {
  const L = ext.top.length;
  const bandOf = new Int32Array(L);
  const target = height / K;
  let b = 0;
  let start = ext.top[0];
  for (let l = 0; l < L; l++) {
    if (
      b < K - 1 &&
      l > 0 &&
      ext.bot[l] - start > target &&
      L - l >= K - b - 1
    ) {
      b++;
      start = ext.top[l];
    }
    bandOf[l] = b;
  }
  return bandOf;
}

/** Where each band goes (bands side by side, `gap` apart) and the wrapped drawing's size. */
interface BandPlacement {
  /** what band b's points move by */
  dx: Float64Array;
  dy: Float64Array;
  /** band b's right and bottom edges once moved */
  right: Float64Array;
  bottom: Float64Array;
  w: number;
  h: number;
}

function placeBands(
  ext: LayerExtents,
  bandOf: Int32Array,
  gap: number,
  margin: number
): BandPlacement {
  const L = bandOf.length;
  const K = bandOf[L - 1] + 1;
  const x0 = new Float64Array(K).fill(Infinity);
  const x1 = new Float64Array(K).fill(-Infinity);
  const y0 = new Float64Array(K).fill(Infinity);
  const y1 = new Float64Array(K).fill(-Infinity);
  for (let l = 0; l < L; l++) {
    const b = bandOf[l];
    if (ext.x0[l] <= ext.x1[l]) {
      x0[b] = Math.min(x0[b], ext.x0[l]);
      x1[b] = Math.max(x1[b], ext.x1[l]);
    }
    y0[b] = Math.min(y0[b], ext.top[l]);
    y1[b] = Math.max(y1[b], ext.bot[l]);
  }
  const dx = new Float64Array(K);
  const dy = new Float64Array(K);
  const right = new Float64Array(K);
  const bottom = new Float64Array(K);
  let cx = 0;
  let h = 0;
  for (let b = 0; b < K; b++) {
    if (x0[b] > x1[b]) {
      x0[b] = x1[b] = 0;
    }
    dx[b] = cx - x0[b];
    dy[b] = margin - y0[b];
    cx += x1[b] - x0[b];
    right[b] = cx;
    bottom[b] = margin + y1[b] - y0[b];
    cx += gap;
    h = Math.max(h, bottom[b] + margin);
  }
  return { dx, dy, w: cx - gap, h, right, bottom };
}

/**
 * The edges moved with their bands; one from a band to a later one runs below its band,
 * up the gap to its right and in from the top (an upward one the other way round).
 */
function bandPolylines(
  r: LayoutResult,
  ext: LayerExtents,
  bandOf: Int32Array,
  pl: BandPlacement,
  gap: number,
  margin: number
): { edgeOffsets: Int32Array; edgePoints: Float64Array } {
  const { dx, dy, right, bottom } = pl;
  const m = r.edgeOffsets.length - 1;
  const pts: number[] = [];
  const edgeOffsets = new Int32Array(m + 1);
  for (let e = 0; e < m; e++) {
    let prevBand = -1;
    for (let k = r.edgeOffsets[e]; k < r.edgeOffsets[e + 1]; k++) {
      const px = r.edgePoints[2 * k];
      const py = r.edgePoints[2 * k + 1];
      const b = bandOf[ext.layerOfY(py)];
      const qx = px + dx[b];
      const qy = py + dy[b];
      if (prevBand >= 0 && b !== prevBand) {
        const lastX = pts[pts.length - 2];
        if (b > prevBand) {
          const under = bottom[prevBand] + margin / 2;
          const lane = right[prevBand] + gap / 2;
          pts.push(lastX, under, lane, under, lane, margin / 2, qx, margin / 2);
        } else {
          const lane = right[prevBand - 1] + gap / 2;
          const under = bottom[b] + margin / 2;
          pts.push(lastX, margin / 2, lane, margin / 2, lane, under, qx, under);
        }
      }
      pts.push(qx, qy);
      prevBand = b;
    }
    edgeOffsets[e + 1] = pts.length / 2;
  }
  return { edgeOffsets, edgePoints: Float64Array.from(pts) };
}

/**
 * A drawing much taller than the viewport (a chain of 24 blocks is 24 rows) wrapped into K
 * side-by-side bands of consecutive layers, like a newspaper's columns, K chosen for the
 * largest scale at which the whole drawing fits the viewport.  Kept unwrapped unless that
 * scale reaches `minScale` (the text reads): a drawing too big to read whole reads better
 * as one column scrolled down than as bands scrolled both ways.  An edge from one band to
 * another runs below its band, up the gap between the bands and in from the top.
 */
export function wrapToViewport(
  r: LayoutResult,
  input: LayoutInput,
  vp: LayoutViewport,
  rankSep: number
): LayoutResult {
  const n = r.x.length;
  const L = r.layers;
  const base = fitScale(vp, r.width, r.height);
  if (n === 0 || L < 2 || base >= vp.minScale) {
    return r;
  }
  const ext = layerExtents(r, input, rankSep);
  const gap = 2 * rankSep;
  const margin = rankSep / 2;
  let best: Int32Array | null = null;
  let bestScale = base;
  for (let K = 2; K <= Math.min(L, 16); K++) {
    const bandOf = splitBands(ext, r.height, K);
    const m = placeBands(ext, bandOf, gap, margin);
    const s = fitScale(vp, m.w, m.h);
    if (s > bestScale * 1.02) {
      best = bandOf;
      bestScale = s;
    }
  }
  if (!best || bestScale < vp.minScale) {
    return r;
  }
  const pl = placeBands(ext, best, gap, margin);
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let v = 0; v < n; v++) {
    const b = best[r.layer[v]];
    x[v] = r.x[v] + pl.dx[b];
    y[v] = r.y[v] + pl.dy[b];
  }
  return {
    ...r,
    x,
    y,
    width: pl.w,
    height: pl.h,
    ...bandPolylines(r, ext, best, pl, gap, margin),
    bands: best[L - 1] + 1
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

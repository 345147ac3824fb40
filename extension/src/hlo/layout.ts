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

export function layeredLayout(
  input: LayoutInput,
  options: LayoutOptions = {}
): LayoutResult {
  const n0 = input.widths.length;
  const m0 = input.src.length;
  const sweeps = options.sweeps ?? 6;
  const nodeSep = options.nodeSep ?? 24;
  const rankSep = options.rankSep ?? 36;
  const maxDummies = options.maxDummies ?? 4 * n0 + 64;
  const coordPasses = options.coordPasses ?? 6;

  // 1. acyclic orientation
  const rev = backEdges(n0, input.src, input.dst);
  const a = new Int32Array(m0);
  const b = new Int32Array(m0);
  for (let e = 0; e < m0; e++) {
    a[e] = rev[e] ? input.dst[e] : input.src[e];
    b[e] = rev[e] ? input.src[e] : input.dst[e];
  }

  // 2. longest-path layering in topological order (Kahn)
  const out = csr(n0, a, b, m0);
  const indeg = new Int32Array(n0);
  for (let e = 0; e < m0; e++) {
    indeg[b[e]]++;
  }
  const topo = new Int32Array(n0);
  let head = 0;
  let tail = 0;
  for (let v = 0; v < n0; v++) {
    if (indeg[v] === 0) {
      topo[tail++] = v;
    }
  }
  const layer = new Int32Array(n0);
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
  // sources sit just above their first user
  const hasIn = new Uint8Array(n0);
  for (let e = 0; e < m0; e++) {
    hasIn[b[e]] = 1;
  }
  for (let v = 0; v < n0; v++) {
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
  let L = 0;
  for (let v = 0; v < n0; v++) {
    if (layer[v] + 1 > L) {
      L = layer[v] + 1;
    }
  }

  // 3. dummy nodes for long edges, shortest spans first, within budget
  const span = new Int32Array(m0);
  let wanted = 0;
  for (let e = 0; e < m0; e++) {
    span[e] = layer[b[e]] - layer[a[e]];
    wanted += Math.max(0, span[e] - 1);
  }
  const useDummies = new Uint8Array(m0);
  if (wanted <= maxDummies) {
    for (let e = 0; e < m0; e++) {
      useDummies[e] = 1;
    }
  } else {
    const order = Array.from({ length: m0 }, (_, e) => e).sort(
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
  }
  let nd = 0;
  for (let e = 0; e < m0; e++) {
    if (useDummies[e] && span[e] > 1) {
      nd += span[e] - 1;
    }
  }
  const N = n0 + nd;
  const lay = new Int32Array(N);
  lay.set(layer);
  const w = new Float64Array(N);
  const h = new Float64Array(N);
  w.set(input.widths);
  h.set(input.heights);
  // segments between adjacent layers
  const segFrom: number[] = [];
  const segTo: number[] = [];
  const chainStart = new Int32Array(m0).fill(-1); // first dummy of edge e
  let next = n0;
  for (let e = 0; e < m0; e++) {
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
  const S = segFrom.length;
  const sf = Int32Array.from(segFrom);
  const st = Int32Array.from(segTo);
  const down = csr(N, sf, st, S);
  const up = csr(N, st, sf, S);

  // initial order: by layer, then input order (dummies after the nodes of their layer)
  const layerSize = new Int32Array(L + 1);
  for (let v = 0; v < N; v++) {
    layerSize[lay[v] + 1]++;
  }
  const layerOff = new Int32Array(L + 1);
  for (let l = 0; l < L; l++) {
    layerOff[l + 1] = layerOff[l] + layerSize[l + 1];
  }
  const order = new Int32Array(N); // nodes by layer then position
  const fill = layerOff.slice(0, L);
  for (let v = 0; v < N; v++) {
    order[fill[lay[v]]++] = v;
  }
  const pos = new Float64Array(N);
  for (let l = 0; l < L; l++) {
    for (let i = layerOff[l]; i < layerOff[l + 1]; i++) {
      pos[order[i]] = i - layerOff[l];
    }
  }

  // 4. barycenter sweeps
  const key = new Float64Array(N);
  const tmp: number[] = [];
  const sortLayer = (
    l: number,
    adj: { off: Int32Array; nbr: Int32Array }
  ): void => {
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
  for (let s = 0; s < sweeps; s++) {
    if (s % 2 === 0) {
      for (let l = 1; l < L; l++) {
        sortLayer(l, up);
      }
    } else {
      for (let l = L - 2; l >= 0; l--) {
        sortLayer(l, down);
      }
    }
  }

  // 5. coordinates
  const x = new Float64Array(N);
  let maxRow = 0;
  for (let l = 0; l < L; l++) {
    maxRow = Math.max(maxRow, layerOff[l + 1] - layerOff[l]);
  }
  const want = new Float64Array(maxRow);
  const gap = new Float64Array(maxRow);
  const placed = new Float64Array(maxRow);
  for (let l = 0; l < L; l++) {
    let cx = 0;
    for (let i = layerOff[l]; i < layerOff[l + 1]; i++) {
      const v = order[i];
      x[v] = cx + w[v] / 2;
      cx += w[v] + nodeSep;
    }
  }
  // centre every layer on the widest one to start
  let widest = 0;
  const rowWidth = new Float64Array(L);
  for (let l = 0; l < L; l++) {
    const s1 = layerOff[l + 1] - 1;
    rowWidth[l] = s1 >= layerOff[l] ? x[order[s1]] + w[order[s1]] / 2 : 0;
    widest = Math.max(widest, rowWidth[l]);
  }
  for (let l = 0; l < L; l++) {
    const shift = (widest - rowWidth[l]) / 2;
    for (let i = layerOff[l]; i < layerOff[l + 1]; i++) {
      x[order[i]] += shift;
    }
  }
  const pullRow = (
    l: number,
    adj: { off: Int32Array; nbr: Int32Array }
  ): void => {
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
        gap[i] = (w[v] + w[order[s0 + i + 1]]) / 2 + nodeSep;
      }
    }
    placeRow(want, gap, cnt, placed);
    for (let i = 0; i < cnt; i++) {
      x[order[s0 + i]] = placed[i];
    }
  };
  for (let p = 0; p < coordPasses; p++) {
    if (p % 2 === 0) {
      for (let l = 1; l < L; l++) {
        pullRow(l, up);
      }
    } else {
      for (let l = L - 2; l >= 0; l--) {
        pullRow(l, down);
      }
    }
  }
  let minX = Infinity;
  let maxX = -Infinity;
  for (let v = 0; v < N; v++) {
    minX = Math.min(minX, x[v] - w[v] / 2);
    maxX = Math.max(maxX, x[v] + w[v] / 2);
  }
  if (N === 0) {
    minX = 0;
    maxX = 0;
  }
  for (let v = 0; v < N; v++) {
    x[v] -= minX;
  }

  // y: layer by layer, each as tall as its tallest node
  const rowH = new Float64Array(L);
  for (let v = 0; v < N; v++) {
    if (h[v] > rowH[lay[v]]) {
      rowH[lay[v]] = h[v];
    }
  }
  const rowY = new Float64Array(L);
  let cy = 0;
  for (let l = 0; l < L; l++) {
    rowY[l] = cy + rowH[l] / 2;
    cy += rowH[l] + rankSep;
  }
  const y = new Float64Array(N);
  for (let v = 0; v < N; v++) {
    y[v] = rowY[lay[v]];
  }

  // edge polylines (in the input's direction)
  const edgeOffsets = new Int32Array(m0 + 1);
  for (let e = 0; e < m0; e++) {
    const pts = 2 + (chainStart[e] >= 0 ? span[e] - 1 : 0);
    edgeOffsets[e + 1] = edgeOffsets[e] + pts;
  }
  const edgePoints = new Float64Array(edgeOffsets[m0] * 2);
  for (let e = 0; e < m0; e++) {
    let k = edgeOffsets[e] * 2;
    const u = a[e];
    const t = b[e];
    const pts: number[] = [x[u], y[u] + h[u] / 2];
    if (chainStart[e] >= 0) {
      for (let s = 0; s < span[e] - 1; s++) {
        const d = chainStart[e] + s;
        pts.push(x[d], y[d]);
      }
    }
    pts.push(x[t], y[t] - h[t] / 2);
    if (rev[e]) {
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

  return {
    x: x.slice(0, n0),
    y: y.slice(0, n0),
    layer: layer.slice(0, n0),
    width: maxX - minX,
    height: Math.max(0, cy - rankSep),
    edgeOffsets,
    edgePoints,
    layers: L,
    dummies: nd
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

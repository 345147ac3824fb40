/**
 * The state of one drawn graph (entry computation or a while/cond/call body): clusters,
 * which are open, the boxes and edges that are visible, and the scene for a layout.
 * Pure (no DOM), so it is unit-tested.
 */

import {
  BOX_BUDGET,
  buildClusters,
  clusterPath,
  dirWord,
  initialExpansion,
  openWithin,
  type Cluster,
  type ClusterTree
} from './cluster';
import { indexGraph, moduleInstructions, type GraphIndex } from './graph';
import { formatBytes, heatScale, type HeatScale } from './heat';
import type { LayoutInput, LayoutResult } from './layout';
import type { Direction } from './scope';
import { edgeBoxes, TITLE_PX, type Frame, type Scene } from './scene';
import type { HloInstruction, HloNode, UnpackedHloPayload } from './types';
import { visibleGraph, type VisibleGraph } from './visible';

export const NODE_W = 200;
export const NODE_H = 40;
/**
 * A folded box: narrow enough that two dozen forward/backward pairs fit a notebook's
 * output at a scale where their titles read (FIT_READABLE); the title is the call's name
 * (`▸ block 12`), the direction and sizes go on the second line.
 */
export const CLUSTER_W = 140;
export const CLUSTER_H = 40;
/** the scale at which a title is drawn 9 px high on screen: what a reader reads */
export const FIT_READABLE = 9 / TITLE_PX;
/** edges spanning more rows than this are laid out straight (layout's maxSpan) and drawn faint */
export const LONG_EDGE = 12;
/** how many boxes "Open a level" may draw (a canvas draws thousands; a reader does not) */
export const LEVEL_BUDGET = 400;

export class GraphModel {
  readonly g: GraphIndex;
  readonly tree: ClusterTree;
  readonly heat: HeatScale;
  readonly instructions: Map<string, HloInstruction>;
  readonly initial: Set<number>;
  expanded: Set<number>;
  vg: VisibleGraph;
  private _framed: Framing | null = null;

  constructor(
    readonly payload: UnpackedHloPayload,
    readonly name: string,
    budget = BOX_BUDGET
  ) {
    this.instructions = moduleInstructions(payload, name);
    this.g = indexGraph(payload.graphs[name], this.instructions);
    this.tree = buildClusters(this.g);
    this.heat = heatScale(this.g.nodes.map(n => n.bytes_moved));
    this.initial = initialExpansion(this.tree, budget);
    this.expanded = new Set(this.initial);
    this.vg = visibleGraph(this.g, this.tree, this.expanded);
  }

  private _refresh(): void {
    this.vg = visibleGraph(this.g, this.tree, this.expanded);
  }

  toggle(cluster: number): void {
    if (this.expanded.has(cluster)) {
      // folding a cluster folds what is open inside it too
      for (const c of [...this.expanded]) {
        if (clusterPath(this.tree, c).includes(cluster)) {
          this.expanded.delete(c);
        }
      }
    } else {
      this.expanded.add(cluster);
    }
    this._refresh();
  }

  /** the folded clusters drawn now (groups excepted: they open by a click) */
  private _folded(): number[] {
    return this.vg.items
      .filter(
        it =>
          it.kind === 'cluster' && this.tree.clusters[it.ref].kind !== 'group'
      )
      .map(it => it.ref);
  }

  /**
   * Open the folded clusters drawn now one level: all of them when the drawing stays
   * within `budget` boxes, else the biggest that fit; false when none could open.
   */
  openLevel(budget = LEVEL_BUDGET): boolean {
    const opened = openWithin(
      this.tree,
      this._folded(),
      this.visibleCount,
      budget,
      1
    );
    if (opened.size === 0) {
      return false;
    }
    for (const c of opened) {
      this.expanded.add(c);
    }
    this._refresh();
    return true;
  }

  /** whether `openLevel` would open something */
  canOpenLevel(budget = LEVEL_BUDGET): boolean {
    const tree = this.tree;
    return this._folded().some(
      c =>
        this.visibleCount +
          tree.clusters[c].children.length +
          tree.clusters[c].members.length -
          1 <=
        budget
    );
  }

  expandAll(): void {
    this.expanded = new Set(this.tree.clusters.map((_, c) => c));
    this._refresh();
  }

  collapseAll(): void {
    this.expanded = new Set(this.initial);
    this._refresh();
  }

  get allExpanded(): boolean {
    return this.expanded.size === this.tree.clusters.length;
  }

  /** the clusters open are the ones open at first (collapseAll would change nothing) */
  get atInitial(): boolean {
    if (this.expanded.size !== this.initial.size) {
      return false;
    }
    for (const c of this.expanded) {
      if (!this.initial.has(c)) {
        return false;
      }
    }
    return true;
  }

  /** Open the clusters around node i; true when that changed the drawing. */
  reveal(i: number): boolean {
    const c = this.tree.nodeCluster[i];
    if (c < 0) {
      return false;
    }
    let changed = false;
    for (const k of clusterPath(this.tree, c)) {
      if (!this.expanded.has(k)) {
        this.expanded.add(k);
        changed = true;
      }
    }
    if (changed) {
      this._refresh();
    }
    return changed;
  }

  /** boxes drawn (clusters count one each) */
  get visibleCount(): number {
    return this.vg.items.length;
  }

  /**
   * Edges between two items of the backward half, laid out reversed: the backward then
   * mirrors the forward (the backward of block i beside the forward of block i, a ladder)
   * instead of continuing it in one column twice as long.  Drawn the data's way round.
   */
  private _mirrored(): Uint8Array {
    const m = this.vg.src.length;
    const out = new Uint8Array(m);
    if (this._pairs().length === 0) {
      // no forward call drawn beside its backward: nothing to mirror
      return out;
    }
    // the backward half (backward calls, and the boxes inside opened ones) is laid out
    // upwards, and so are its edges to what is neither forward nor backward (the loss
    // between the two halves, the gradients out of the last backward): the loss then sits
    // below the last block's pair, the gradients above the first's
    const sides = this._sides();
    for (let e = 0; e < m; e++) {
      const a = sides[this.vg.src[e]];
      const b = sides[this.vg.dst[e]];
      out[e] =
        (a === 'bwd' && b !== 'fwd') || (b === 'bwd' && a !== 'fwd') ? 1 : 0;
    }
    return out;
  }

  /** the half of a gradient each item is in (null: neither, e.g. the loss between) */
  private _sides(): Direction[] {
    return this.vg.items.map(it => {
      let c = it.kind === 'cluster' ? it.ref : this.tree.nodeCluster[it.ref];
      for (; c >= 0; c = this.tree.clusters[c].parent) {
        const d = this.tree.clusters[c].dir;
        if (d) {
          return d;
        }
      }
      return null;
    });
  }

  /**
   * What an edge weighs when the layout breaks a cycle (at its lightest edges): the bytes
   * it carries, and the forward's own edges above all others: their order is the ladder's.
   * The backward, mirrored, and the activations it reads (XLA fuses a layernorm's backward
   * with a value of the forward's next step) run against it here and there.
   */
  private _weights(): Float64Array {
    const sides = this._sides();
    const heaviest = this.vg.bytes.reduce((a, b) => Math.max(a, b), 0);
    return this.vg.bytes.map(
      (b, e) =>
        b +
        (sides[this.vg.src[e]] === 'fwd' && sides[this.vg.dst[e]] === 'fwd'
          ? heaviest + 1
          : 0)
    );
  }

  layoutInput(): LayoutInput {
    const n = this.vg.items.length;
    const widths = new Float64Array(n);
    const heights = new Float64Array(n);
    this.vg.items.forEach((it, k) => {
      widths[k] = it.kind === 'node' ? NODE_W : CLUSTER_W;
      heights[k] = it.kind === 'node' ? NODE_H : CLUSTER_H;
    });
    const mirror = this._mirrored();
    const src = this.vg.src.map((s, e) => (mirror[e] ? this.vg.dst[e] : s));
    const dst = this.vg.dst.map((d, e) => (mirror[e] ? this.vg.src[e] : d));
    return {
      widths,
      heights,
      src,
      dst,
      pairs: this._pairs(),
      groups: this._framing().groupOf,
      weak: this.vg.both,
      weights: this._weights()
    };
  }

  /**
   * The frames drawn around the innermost open clusters, the forward and backward of one
   * call in one frame when both are open (their boxes are laid out side by side, a frame
   * around one half would hold the other's), and the frame each item is laid out in: the
   * layout keeps a frame's boxes in rows of their own, so the frame holds only them.
   */
  private _framing(): Framing {
    if (this._framed?.vg === this.vg) {
      return this._framed;
    }
    const tree = this.tree;
    const inner = new Map<number, number>(); // innermost open cluster -> its vg frame
    this.vg.frames.forEach((f, j) => {
      if (!tree.clusters[f.cluster].children.some(c => this.expanded.has(c))) {
        inner.set(f.cluster, j);
      }
    });
    const byPair = new Map<string, number[]>();
    for (const c of inner.keys()) {
      const cl = tree.clusters[c];
      const key = cl.dir ? cl.pair : `#${c}`;
      byPair.set(key, [...(byPair.get(key) ?? []), c]);
    }
    const frames: FrameGroup[] = [];
    const frameOfCluster = new Map<number, number>();
    for (const cs of byPair.values()) {
      const halves = cs.length === 2 && cs.every(c => tree.clusters[c].dir);
      for (const part of halves ? [cs] : cs.map(c => [c])) {
        for (const c of part) {
          frameOfCluster.set(c, frames.length);
        }
        frames.push({
          clusters: part,
          items: part.flatMap(c => this.vg.frames[inner.get(c) as number].items)
        });
      }
    }
    const groupOf = Int32Array.from(this.vg.items, it => {
      const c =
        it.kind === 'cluster'
          ? tree.clusters[it.ref].parent
          : tree.nodeCluster[it.ref];
      return frameOfCluster.get(c) ?? -1;
    });
    this._framed = { vg: this.vg, groupOf, frames };
    return this._framed;
  }

  /**
   * Folded forward calls and their folded backward, as [forward item, backward item, ...]:
   * the layout puts each backward right beside its forward (one row per pair, a ladder).
   */
  private _pairs(): Int32Array {
    const fwd = new Map<string, number>();
    this.vg.items.forEach((it, k) => {
      const cl = it.kind === 'cluster' ? this.tree.clusters[it.ref] : null;
      if (cl && cl.dir === 'fwd') {
        fwd.set(cl.pair, k);
      }
    });
    const out: number[] = [];
    this.vg.items.forEach((it, k) => {
      const cl = it.kind === 'cluster' ? this.tree.clusters[it.ref] : null;
      const f = cl && cl.dir === 'bwd' ? fwd.get(cl.pair) : undefined;
      if (f !== undefined) {
        out.push(f, k);
      }
    });
    return Int32Array.from(out);
  }

  /** a parameter / constant (or their group): inputs whose edges are drawn faint */
  private _isInput(item: number): boolean {
    const it = this.vg.items[item];
    if (it.kind === 'cluster') {
      return this.tree.clusters[it.ref].kind === 'group';
    }
    const k = this.g.nodes[it.ref].kind;
    return k === 'parameter' || k === 'constant';
  }

  /**
   * The frames of the open clusters as drawn: one per innermost open cluster or pair of
   * them (`_framing`), then the outer open clusters (a block around its opened attention)
   * where the layout kept their boxes together.
   */
  private _frames(r: LayoutResult, w: Float64Array, h: Float64Array): Frame[] {
    const tree = this.tree;
    const { frames: inner } = this._framing();
    const framed = new Set(inner.flatMap(f => f.clusters));
    const all: FrameGroup[] = [
      ...inner,
      ...this.vg.frames
        .filter(f => !framed.has(f.cluster))
        .map(f => ({ clusters: [f.cluster], items: f.items }))
    ];
    const out: Frame[] = [];
    for (const f of all) {
      if (f.items.length === 0) {
        continue;
      }
      let x0 = Infinity,
        y0 = Infinity,
        x1 = -Infinity,
        y1 = -Infinity;
      for (const k of f.items) {
        x0 = Math.min(x0, r.x[k] - w[k] / 2);
        x1 = Math.max(x1, r.x[k] + w[k] / 2);
        y0 = Math.min(y0, r.y[k] - h[k] / 2);
        y1 = Math.max(y1, r.y[k] + h[k] / 2);
      }
      if (holdsOthers(f.items, x0, y0, x1, y1, r)) {
        // a frame that held boxes not inside its cluster would say they are: none then
        continue;
      }
      const [c, partner = -1] = f.clusters;
      out.push({
        x0: x0 - 8,
        y0: y0 - 8,
        x1: x1 + 8,
        y1: y1 + 8,
        label:
          partner >= 0 ? pairLabel(tree.clusters[c]) : tree.clusters[c].label,
        cluster: c,
        partner
      });
    }
    return out;
  }

  /** A node's box: its id, and what it runs (a loop's body by its user function) or moves. */
  private _nodeText(node: HloNode): [string, string] {
    const runs = node.called
      ?.map(c => this.payload.graphs[c]?.origin?.name)
      .find(o => !!o);
    return [
      node.id,
      runs
        ? `${node.opcode} of ${runs} · ${node.shape}`
        : node.bytes_moved > 0
          ? `${node.shape} · ${formatBytes(node.bytes_moved)} moved`
          : `${node.opcode} ${node.shape}`
    ];
  }

  /**
   * A folded cluster's box: the name as the title, short enough to be drawn large
   * (`▸ block 12`; the backward is the box right of the forward), the direction and sizes
   * on the second line.
   */
  private _clusterText(cl: Cluster, item: number): [string, string] {
    const word = dirWord(cl.dir);
    const suffix = word ? ` · ${word}` : '';
    const name =
      suffix && cl.label.endsWith(suffix)
        ? cl.label.slice(0, -suffix.length)
        : cl.label;
    if (cl.kind === 'group') {
      let bytes = 0;
      for (const i of cl.members) {
        bytes += this.g.nodes[i].bytes;
      }
      return [`▸ ${name}`, `${cl.size} · ${formatBytes(bytes)}`];
    }
    const lead = suffix && name !== cl.label ? `${word} · ` : '';
    const reads = this.vg.inputs[item];
    return [
      `▸ ${name}`,
      `${lead}${cl.size} ops · ${formatBytes(cl.bytesMoved)}` +
        (reads ? ` · ${reads} inputs` : ' moved')
    ];
  }

  /** Each item's box: size, title and second line, kind (0 node, 1 cluster, 2 group), heat. */
  private _boxes(): Pick<Scene, 'w' | 'h' | 'title' | 'sub' | 'kind' | 'heat'> {
    const items = this.vg.items;
    const n = items.length;
    const w = new Float64Array(n);
    const h = new Float64Array(n);
    const title: string[] = [];
    const sub: string[] = [];
    const kind = new Uint8Array(n);
    const heat = new Uint8Array(n);
    // a cluster's heat: its bytes moved among the clusters drawn (nodes: among all nodes)
    const clusterWeights: number[] = [];
    const clusterItems: number[] = [];
    items.forEach((it, k) => {
      const cl = it.kind === 'cluster' ? this.tree.clusters[it.ref] : null;
      const [t, s] = cl
        ? this._clusterText(cl, k)
        : this._nodeText(this.g.nodes[it.ref]);
      title.push(t);
      sub.push(s);
      w[k] = cl ? CLUSTER_W : NODE_W;
      h[k] = cl ? CLUSTER_H : NODE_H;
      kind[k] = !cl ? 0 : cl.kind === 'group' ? 2 : 1;
      if (!cl) {
        heat[k] = this.heat.bucket[it.ref];
      } else if (cl.kind !== 'group') {
        clusterWeights.push(cl.bytesMoved);
        clusterItems.push(k);
      }
    });
    const ch = heatScale(clusterWeights);
    clusterItems.forEach((k, j) => {
      heat[k] = ch.bucket[j];
    });
    return { w, h, title, sub, kind, heat };
  }

  /**
   * How each edge is drawn: 1 to 4 screen pixels by the square root of the bytes it
   * carries; faint out of inputs, into groups, and across more than LONG_EDGE rows (drawn
   * straight, no bends routed around the boxes between: drawn full it would cross every
   * box in its way).
   */
  private _edgeStyles(
    r: LayoutResult,
    kind: Uint8Array
  ): Pick<Scene, 'edgeWeight' | 'edgeWidth' | 'edgeBoth' | 'edgeFaint'> {
    const { src, dst } = this.vg;
    const m = src.length;
    const edgeWeight = Float64Array.from(this.vg.bytes);
    const edgeFaint = new Uint8Array(m);
    const edgeWidth = new Uint8Array(m);
    const heaviest = edgeWeight.reduce((a, b) => Math.max(a, b), 0) || 1;
    for (let e = 0; e < m; e++) {
      const span = Math.abs(r.layer[src[e]] - r.layer[dst[e]]);
      edgeFaint[e] =
        this._isInput(src[e]) || kind[dst[e]] === 2 || span > LONG_EDGE ? 1 : 0;
      edgeWidth[e] = 1 + Math.round(3 * Math.sqrt(edgeWeight[e] / heaviest));
    }
    return {
      edgeWeight,
      edgeWidth,
      edgeBoth: Uint8Array.from(this.vg.both),
      edgeFaint
    };
  }

  /** What the canvas draws for layout `r`: boxes, frames and edges (see paint.ts). */
  scene(r: LayoutResult, stripeOf: (item: number) => string | null): Scene {
    const n = this.vg.items.length;
    const boxes = this._boxes();
    const points = unmirror(r, this._mirrored());
    return {
      n,
      x: r.x,
      y: r.y,
      ...boxes,
      stripe: this.vg.items.map((_, k) => stripeOf(k)),
      flags: new Uint8Array(n),
      edgeOffsets: r.edgeOffsets,
      edgePoints: points,
      edgeBox: edgeBoxes(r.edgeOffsets, points),
      ...this._edgeStyles(r, boxes.kind),
      frames: this._frames(r, boxes.w, boxes.h),
      width: r.width,
      height: r.height
    };
  }
}

/** The layout's polylines with the mirrored edges' points turned back to the data's way. */
function unmirror(r: LayoutResult, mirror: Uint8Array): Float64Array {
  const pts = r.edgePoints.slice();
  for (let e = 0; e < mirror.length; e++) {
    if (!mirror[e]) {
      continue;
    }
    const k0 = r.edgeOffsets[e];
    const k1 = r.edgeOffsets[e + 1];
    for (let k = k0; k < k1; k++) {
      const j = k0 + k1 - 1 - k;
      pts[2 * k] = r.edgePoints[2 * j];
      pts[2 * k + 1] = r.edgePoints[2 * j + 1];
    }
  }
  return pts;
}

/** Whether a box not among `items` has its centre inside the rectangle. */
function holdsOthers(
  items: number[],
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  r: LayoutResult
): boolean {
  const own = new Set(items);
  for (let k = 0; k < r.x.length; k++) {
    if (
      !own.has(k) &&
      r.x[k] > x0 &&
      r.x[k] < x1 &&
      r.y[k] > y0 &&
      r.y[k] < y1
    ) {
      return true;
    }
  }
  return false;
}

/** A frame: the open clusters it stands for and the items drawn inside it. */
interface FrameGroup {
  clusters: number[];
  items: number[];
}

/** The frames of one visible graph and the frame each item is laid out in (-1: none). */
interface Framing {
  vg: VisibleGraph;
  groupOf: Int32Array;
  frames: FrameGroup[];
}

/** `block 5 · forward | backward`: the title of a frame around both halves of a call. */
function pairLabel(cl: { label: string; dir: Direction }): string {
  const suffix = ` · ${dirWord(cl.dir)}`;
  const name = cl.label.endsWith(suffix)
    ? cl.label.slice(0, -suffix.length)
    : cl.label;
  return `${name} · ${dirWord('fwd')} | ${dirWord('bwd')}`;
}

/**
 * The state of one drawn graph (entry computation or a while/cond/call body): clusters,
 * which are open, the boxes and edges that are visible, and the scene for a layout.
 * Pure (no DOM), so it is unit-tested.
 */

import {
  buildClusters,
  clusterPath,
  initialExpansion,
  type ClusterTree
} from './cluster';
import { indexGraph, moduleInstructions, type GraphIndex } from './graph';
import { formatBytes, heatScale, type HeatScale } from './heat';
import type { LayoutInput, LayoutResult } from './layout';
import { edgeBoxes, type Frame, type Scene } from './scene';
import type { HloInstruction, HloPayload } from './types';
import { visibleGraph, type VisibleGraph } from './visible';

export const NODE_W = 200;
export const NODE_H = 40;
export const CLUSTER_W = 230;
export const CLUSTER_H = 46;

export class GraphModel {
  readonly g: GraphIndex;
  readonly tree: ClusterTree;
  readonly heat: HeatScale;
  readonly instructions: Map<string, HloInstruction>;
  readonly initial: Set<number>;
  expanded: Set<number>;
  vg: VisibleGraph;

  constructor(
    payload: HloPayload,
    readonly name: string,
    target = 64
  ) {
    this.instructions = moduleInstructions(payload, name);
    this.g = indexGraph(payload.graphs[name], this.instructions);
    this.tree = buildClusters(this.g);
    this.heat = heatScale(this.g.nodes.map(n => n.bytes_moved));
    this.initial = initialExpansion(this.tree, target);
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

  layoutInput(): LayoutInput {
    const n = this.vg.items.length;
    const widths = new Float64Array(n);
    const heights = new Float64Array(n);
    this.vg.items.forEach((it, k) => {
      widths[k] = it.kind === 'node' ? NODE_W : CLUSTER_W;
      heights[k] = it.kind === 'node' ? NODE_H : CLUSTER_H;
    });
    return {
      widths,
      heights,
      src: this.vg.src.slice(),
      dst: this.vg.dst.slice()
    };
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

  scene(r: LayoutResult, stripeOf: (item: number) => string | null): Scene {
    const items = this.vg.items;
    const n = items.length;
    const w = new Float64Array(n);
    const h = new Float64Array(n);
    const title: string[] = [];
    const sub: string[] = [];
    const kind = new Uint8Array(n);
    const heat = new Uint8Array(n);
    const clusterWeights: number[] = [];
    const clusterItems: number[] = [];
    items.forEach((it, k) => {
      if (it.kind === 'node') {
        const node = this.g.nodes[it.ref];
        w[k] = NODE_W;
        h[k] = NODE_H;
        title.push(node.id);
        sub.push(
          node.bytes_moved > 0
            ? `${node.shape} · ${formatBytes(node.bytes_moved)} moved`
            : `${node.opcode} ${node.shape}`
        );
        heat[k] = this.heat.bucket[it.ref];
      } else {
        const cl = this.tree.clusters[it.ref];
        w[k] = CLUSTER_W;
        h[k] = CLUSTER_H;
        kind[k] = cl.kind === 'group' ? 2 : 1;
        title.push(`▸ ${cl.label}`);
        if (cl.kind === 'group') {
          let bytes = 0;
          for (const i of cl.members) {
            bytes += this.g.nodes[i].bytes;
          }
          sub.push(`${cl.size} · ${formatBytes(bytes)}`);
        } else {
          sub.push(`${cl.size} ops · ${formatBytes(cl.bytesMoved)} moved`);
          clusterWeights.push(cl.bytesMoved);
          clusterItems.push(k);
        }
      }
    });
    const ch = heatScale(clusterWeights);
    clusterItems.forEach((k, j) => {
      heat[k] = ch.bucket[j];
    });
    const frames: Frame[] = [];
    for (const f of this.vg.frames) {
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
      frames.push({
        x0: x0 - 8,
        y0: y0 - 8,
        x1: x1 + 8,
        y1: y1 + 8,
        label: this.tree.clusters[f.cluster].label,
        cluster: f.cluster
      });
    }
    const edgeWeight = new Float64Array(this.vg.src.length);
    const edgeFaint = new Uint8Array(this.vg.src.length);
    for (let e = 0; e < edgeWeight.length; e++) {
      edgeWeight[e] = this.vg.count[e];
      edgeFaint[e] =
        this._isInput(this.vg.src[e]) || kind[this.vg.dst[e]] === 2 ? 1 : 0;
    }
    return {
      n,
      x: r.x,
      y: r.y,
      w,
      h,
      title,
      sub,
      heat,
      kind,
      stripe: items.map((_, k) => stripeOf(k)),
      flags: new Uint8Array(n),
      edgeOffsets: r.edgeOffsets,
      edgePoints: r.edgePoints,
      edgeBox: edgeBoxes(r.edgeOffsets, r.edgePoints),
      edgeWeight,
      edgeFaint,
      frames,
      width: r.width,
      height: r.height
    };
  }
}

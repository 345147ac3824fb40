/** An HLO graph in index form (node ids -> 0..n-1, edges as typed arrays). */

import type { HloGraph, HloInstruction, HloNode, HloPayload } from './types';

export interface GraphIndex {
  name: string;
  nodes: HloNode[];
  index: Map<string, number>;
  src: Int32Array;
  dst: Int32Array;
  edgeBytes: Float64Array;
  /** op_name per node ('' = none): the node's own, else the module instruction's */
  opNames: string[];
}

/** The module's full (non-compact) instructions of a computation, by name. */
export function moduleInstructions(
  payload: HloPayload,
  computation: string
): Map<string, HloInstruction> {
  const out = new Map<string, HloInstruction>();
  const comp = payload.module?.computations.find(c => c.name === computation);
  if (!comp) {
    return out;
  }
  for (const ins of comp.instructions ?? []) {
    if (!Array.isArray(ins)) {
      out.set(ins.name, ins);
    }
  }
  return out;
}

export function indexGraph(
  graph: HloGraph,
  instructions?: Map<string, HloInstruction>
): GraphIndex {
  const index = new Map<string, number>();
  graph.nodes.forEach((n, i) => index.set(n.id, i));
  const kept: number[] = [];
  graph.edges.forEach((e, i) => {
    if (index.has(e.src) && index.has(e.dst) && e.src !== e.dst) {
      kept.push(i);
    }
  });
  const src = new Int32Array(kept.length);
  const dst = new Int32Array(kept.length);
  const edgeBytes = new Float64Array(kept.length);
  kept.forEach((ei, k) => {
    const e = graph.edges[ei];
    src[k] = index.get(e.src) as number;
    dst[k] = index.get(e.dst) as number;
    edgeBytes[k] = e.bytes;
  });
  const opNames = graph.nodes.map(
    n => n.op_name ?? instructions?.get(n.id)?.op_name ?? ''
  );
  return {
    name: graph.computation,
    nodes: graph.nodes,
    index,
    src,
    dst,
    edgeBytes,
    opNames
  };
}

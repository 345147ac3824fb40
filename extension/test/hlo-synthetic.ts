/**
 * Layout inputs for the layered-layout tests and benchmarks: a small graph from an edge
 * list, and an HLO-like random DAG of any size; a graph node with the fields every test fills.
 */
import type { LayoutInput } from '../src/hlo/layout';
import type { HloGraph, HloNode } from '../src/hlo/types';
import type { HloGraph, HloNode } from '../src/hlo/types';

export function graph(
  n: number,
  edges: Array<[number, number]>,
  w = 100,
  h = 30
): LayoutInput {
  return {
    widths: new Float64Array(n).fill(w),
    heights: new Float64Array(n).fill(h),
    src: Int32Array.from(edges.map(e => e[0])),
    dst: Int32Array.from(edges.map(e => e[1]))
  };
}

/** An HLO-like random DAG: each node reads 1-3 recent nodes, a few read far back. */
export function syntheticGraph(n: number, seed = 1): LayoutInput {
  let s = seed;
  const rnd = (): number => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const edges: Array<[number, number]> = [];
  for (let i = 1; i < n; i++) {
    const k = 1 + Math.floor(rnd() * 3);
    for (let j = 0; j < k; j++) {
      const far = rnd() < 0.03;
      const from = far
        ? Math.floor(rnd() * i)
        : Math.max(0, i - 1 - Math.floor(rnd() * 40));
      edges.push([from, i]);
    }
  }
  return graph(n, edges, 180, 40);
}

/** A fusion node of an HLO graph: 16 bytes of f32[4] that moves 32 bytes, unless `extra` says otherwise. */
export function hloNode(id: string, extra: Partial<HloNode> = {}): HloNode {
  return {
    id,
    kind: 'fusion',
    opcode: 'fusion',
    label: id,
    shape: 'f32[4]',
    bytes: 16,
    bytes_moved: 32,
    ...extra
  };
}

/** A graph of `nodes` in a chain: each reads the one before it (an f32[4] edge of 16 bytes). */
export function chainGraph(computation: string, nodes: HloNode[]): HloGraph {
  const edges = nodes.slice(1).map((n, i) => ({
    src: nodes[i].id,
    dst: n.id,
    shape: 'f32[4]',
    bytes: 16
  }));
  return { computation, nodes, edges };
}

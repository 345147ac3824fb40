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

/**
 * The op_names and data flow of a B-block transformer's gradient as the workbench's call
 * scopes name it (`jit(loss)/jvp(loss#0)/forward#0/block#k/attention#0/...`, the backward
 * under `transpose(jvp(loss#0))`): per block layernorm#0, attention#0 (with JAX's own
 * `jit(_where)` and an einsum scope, and a user `heads` scope), layernorm#1, mlp#0, two
 * parameters each; the forward of block k feeds its backward; the backward of block k
 * feeds every earlier block's backward a little (as XLA's fusions do).  `lossOps`: how
 * many ops the loss's last line makes.
 */
export function gradientGraph(
  blocks: number,
  opts: { lossOps?: number } = {}
): HloGraph {
  const nodes: HloNode[] = [];
  const edges: HloGraph['edges'] = [];
  const edge = (src: string, dst: string, bytes = 4096): void => {
    edges.push({ src, dst, shape: 'f32[1024]', bytes });
  };
  const op = (id: string, opName: string): string => {
    nodes.push(hloNode(id, { op_name: opName, bytes_moved: 8192 }));
    return id;
  };
  const parts = [
    'layernorm#0',
    'attention#0',
    'attention#0/jit(_where)',
    'attention#0/bthd,bshd->bhts',
    'attention#0/heads',
    'layernorm#1',
    'mlp#0'
  ];
  let prev = op('x', 'jit(loss)/jvp(loss#0)/forward#0/embed');
  const last: string[] = [];
  for (let k = 0; k < blocks; k++) {
    for (let p = 0; p < 2; p++) {
      nodes.push(
        hloNode(`p${k}_${p}`, {
          kind: 'parameter',
          opcode: 'parameter',
          bytes_moved: 0
        })
      );
    }
    const base = `jit(loss)/jvp(loss#0)/forward#0/block#${k}`;
    parts.forEach((part, j) => {
      const id = op(`f${k}_${j}`, `${base}/${part}/mul`);
      edge(prev, id, 1 << 20);
      if (j < 2) {
        edge(`p${k}_${j}`, id);
      }
      prev = id;
    });
    last.push(prev);
  }
  let g = prev;
  for (let j = 0; j < (opts.lossOps ?? 2); j++) {
    g = op(`loss${j}`, 'jit(loss)/jvp(loss#0)/mul');
    edge(prev, g, 1 << 20);
    prev = g;
  }
  const bwdFirst: string[] = [];
  for (let k = blocks - 1; k >= 0; k--) {
    const base = `jit(loss)/transpose(jvp(loss#0))/forward#0/block#${k}`;
    [...parts].reverse().forEach((part, j) => {
      const id = op(`b${k}_${j}`, `${base}/${part}/mul`);
      edge(prev, id, 1 << 20);
      if (j === 0) {
        bwdFirst[k] = id;
        edge(last[k], id, 1 << 22); // the forward's activations
      }
      prev = id;
    });
    for (let e = k - 1; e >= 0; e--) {
      // small values to every earlier block's backward: wired once those exist
      edges.push({ src: prev, dst: `@b${e}`, shape: 'f32[8]', bytes: 32 });
    }
  }
  for (const e of edges) {
    if (e.dst.startsWith('@b')) {
      e.dst = bwdFirst[Number(e.dst.slice(2))];
    }
  }
  return { computation: 'main.1', nodes, edges };
}
